"""The run profiles (ci, dev, deep): their names and the time limit of one part, defined once.

"part" is the guard of one part of ``verify all`` against a hang, in CPU seconds on the reference machine (the
one the README's figures come from): a part is stopped when its CPU time passes this limit times the measured
slowness of the machine it runs on (:mod:`verify.run.speed`), or when its wall time passes
``WALL_PER_CPU`` times that (a part waiting on something, computing nothing). A busy machine slows a part's
wall time, not its CPU time, so load alone never cuts a part; there is no budget for all parts together: a run
ends when every part has finished or been stopped by its guard. The ci profile takes a few minutes on 2 cores
(README). Each claim, probe and part keeps its own sizes per profile as a dict keyed by these names, checked by
:func:`per_profile`.
"""
from __future__ import annotations

from ..errors import InvalidParameter

PROFILES = {
    "ci": {"part": 240},
    "dev": {"part": 900},
    "deep": {"part": 3_600},
}
NAMES = tuple(PROFILES)
# A part's wall-time guard is this many times its CPU-time guard: room for a machine shared with other work
# (a part that gets a quarter of a core still finishes), while a part that hangs without computing is stopped.
WALL_PER_CPU = 8


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


__all__ = ["PROFILES", "NAMES", "WALL_PER_CPU", "check_profile", "per_profile"]
