"""The run profiles of ``verify all`` (ci, dev, deep): time limits and the sizes every built-in part uses.

"part" is the time limit of one part in seconds and "total" the budget of all parts together (the ci
profile must finish within 10 minutes on 2 cores, report included); the other keys are sizes the
parts read (steps of the convergence run, full-matrix steps, the sigmas derived; fuzz budgets live in verify.fuzz.budget).
"""
from __future__ import annotations

from .errors import InvalidParameter

PROFILES = {
    "ci": {"part": 240, "total": 480, "steps": 100_000, "full_steps": 2_000,
           "sigmas": ["identity", "erf", "relu"]},
    "dev": {"part": 900, "total": 3_600, "steps": 300_000, "full_steps": 5_000,
            "sigmas": ["identity", "erf", "relu"]},
    "deep": {"part": 3_600, "total": 6 * 3_600, "steps": 1_000_000, "full_steps": 20_000,
             "sigmas": ["identity", "erf", "relu", "poly:0,1,0,1"]},
}


def check_profile(profile: str) -> str:
    """``profile`` if it names a profile, else InvalidParameter naming --profile."""
    if profile not in PROFILES:
        raise InvalidParameter("profile", profile, f"must be one of {', '.join(PROFILES)}")
    return profile


__all__ = ["PROFILES", "check_profile"]
