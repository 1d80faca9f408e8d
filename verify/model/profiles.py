"""The run profiles (ci, dev, deep): their names and time budgets, defined once.

"part" is the time limit of one part of ``verify all`` in seconds and "total" the budget of all parts together
(the ci profile must finish within 10 minutes on 2 cores, report included). Each claim, probe and part keeps its
own sizes per profile as a dict keyed by these names, checked by :func:`per_profile`.
"""
from __future__ import annotations

from ..errors import InvalidParameter

PROFILES = {
    "ci": {"part": 240, "total": 480},
    "dev": {"part": 900, "total": 3_600},
    "deep": {"part": 3_600, "total": 6 * 3_600},
}
NAMES = tuple(PROFILES)


def check_profile(profile: str) -> str:
    """``profile`` if it names a profile, else InvalidParameter naming --profile."""
    if profile not in PROFILES:
        raise InvalidParameter("profile", profile, f"must be one of {', '.join(PROFILES)}")
    return profile


def per_profile(sizes: dict) -> dict:
    """``sizes`` (profile name -> a size or a dict of sizes), checked to name exactly the profiles."""
    if set(sizes) != set(PROFILES):
        raise AssertionError(f"per-profile sizes must be given for {sorted(PROFILES)}, not {sorted(sizes)}")
    return sizes


__all__ = ["PROFILES", "NAMES", "check_profile", "per_profile"]
