"""The cost of building a regime, estimated before it is built.

A Setting holds V* exactly (one rational per entry, M d of them), so a large one takes long to build and
much memory: about 110 microseconds and 130 bytes an entry, measured on one core (a 4096 x 4096 V* is 17
million entries: half an hour and several GB). Before a large V* is built, one of 64 x 64 entries is built and
timed, the time is scaled to the requested size and said on stderr; above an hour the command needs
``--yes``, and a size the available memory cannot hold is refused, naming --M and --d.
"""
from __future__ import annotations

import time

import click
import psutil

from ..errors import InvalidParameter
from ..model.spec import BY_NAME
from .group import CliError
from .progress import ANNOUNCE_SECONDS, CONFIRM_SECONDS, duration, note

LARGE_ENTRIES = 1 << 14       # V* entries built without an estimate (about two seconds at most)
CALIBRATION_SIDE = 64         # the calibration builds a V* of at most 64 x 64 entries
# Peak memory of one entry while a setting is built and recorded: the exact rational it keeps (about 130 bytes,
# measured) and the rational and decimal string its record makes meanwhile.
PEAK_BYTES_PER_ENTRY = 400


def entries(args: dict) -> int | None:
    """M d, the entries of V*, when both are valid sizes (else None: make_setting reports them)."""
    M, d = args.get("M", 1), args.get("d", 1)
    if any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in (M, d)):
        return None
    return M * d


def build_seconds(args: dict) -> float | None:
    """Seconds ``make_setting(**args)`` (and the setting's record) is estimated to take, from a timed build of a
    V* of at most CALIBRATION_SIDE x CALIBRATION_SIDE entries scaled by the entries; None for a small V*. Options
    the calibration finds invalid are invalid at the full size too (no rule but V*'s shape depends on M and d,
    and an explicit V* is replaced by a random one here): their InvalidParameter is raised at once, before the
    full V* is built."""
    from ..model import make_setting  # heavy: loads numpy
    n = entries(args)
    if n is None or n <= LARGE_ENTRIES:
        return None
    small = dict(args, M=min(args.get("M", 1), CALIBRATION_SIDE), d=min(args.get("d", 1), CALIBRATION_SIDE))
    if small.get("vstar") is not None:        # an explicit V* has the full shape: time a random one instead
        small["vstar"], small["vstar_norm"] = None, "1"
    t0 = time.perf_counter()
    make_setting(**small).config()
    return (time.perf_counter() - t0) * n / (small["M"] * small["d"])


def check_build(args: dict, *, yes: bool = False, quiet: bool = False, command: str = "verify") -> float | None:
    """Estimate the build of a large V* before it starts: say the estimate on stderr, refuse a V* the available
    memory cannot hold (InvalidParameter naming M and d), and one estimated above an hour without ``--yes``.
    Returns the estimated seconds (None for a small V*)."""

    n = entries(args)
    if n is None or n <= LARGE_ENTRIES:
        return None
    need, avail = n * PEAK_BYTES_PER_ENTRY, psutil.virtual_memory().available
    if need > avail:
        raise InvalidParameter("M", args.get("M"), f"must give a V* that fits in memory: M x d = {n:,} exact entries "
                               f"need about {need / 2**30:.1f} GB to build, {avail / 2**30:.1f} GB is available",
                               also=("d",))
    seconds = build_seconds(args)
    if seconds is None:
        return None
    text = (f"building the regime (V* with M x d = {n:,} exact entries, about {need / 2**30:.1f} GB) is estimated "
            f"at {duration(seconds)}")
    ctx = click.get_current_context(silent=True)
    if seconds > CONFIRM_SECONDS and not yes:
        has_yes = ctx is not None and any(p.name == "yes" for p in ctx.command.params)
        M, d = BY_NAME["M"].flag, BY_NAME["d"].flag
        raise CliError(f"{M} {args.get('M')} {d} {args.get('d')}: {text}; "
                       + ("pass --yes to build it anyway, or " if has_yes else "") + f"choose smaller {M} or {d}")
    if seconds > ANNOUNCE_SECONDS:
        note(f"{command}: {text}", quiet)
    return seconds


__all__ = ["check_build", "build_seconds", "entries", "LARGE_ENTRIES", "PEAK_BYTES_PER_ENTRY"]
