"""Stochastic probes judged over seeds: the spread of one measured number (e.g. a fitted tail exponent) over
independent seeds, and the decision a probe takes from the ensemble, never from one seed.

The decision ("the number is ``target``") holds when the ensemble mean lies within
``max(3 standard errors of the mean, floor)`` of the target and every seed's value lies within ``band`` of it:
the first bounds the statistical error of the mean (``floor`` covers a deterministic bias the mean shares
with the noise-free run, e.g. finite-T corrections), the second rejects an ensemble whose mean is right only
because seeds scatter both ways. A NaN among the values decides nothing.

Example::

    >>> e = ensemble([0, 1, 2, 3], [-1.02, -0.98, -1.0, -1.01])
    >>> round(e["mean"], 4), e["min"], e["max"]
    (-1.0025, -1.02, -0.98)
    >>> ensemble_holds(e, -1, band=0.2, floor=0.02)
    True
"""
from __future__ import annotations

import math

import numpy as np

from ...evidence import compare


def ensemble(seeds, values) -> dict:
    """{"seeds", "values", "n", "min", "max", "mean", "sd", "se"} of one number measured once per seed (sd with
    n - 1 degrees of freedom, se = sd / sqrt(n)); non-finite values make the statistics NaN."""
    v = np.asarray([np.nan if x is None else float(x) for x in values], dtype=float)
    if len(v) != len(seeds) or len(v) < 2:
        raise ValueError(f"an ensemble needs one value per seed and at least two seeds, not {len(v)} values for "
                         f"seeds {list(seeds)}")
    ok = bool(np.all(np.isfinite(v)))
    sd = float(np.std(v, ddof=1)) if ok else math.nan
    return {"seeds": [int(s) for s in seeds], "values": [float(x) for x in v], "n": len(v),
            "min": float(np.min(v)) if ok else math.nan, "max": float(np.max(v)) if ok else math.nan,
            "mean": float(np.mean(v)) if ok else math.nan, "sd": sd, "se": sd / math.sqrt(len(v))}


def ensemble_holds(e: dict, target: float, *, band: float, floor: float) -> bool | None:
    """Whether the ensemble ``e`` says the number is ``target`` (module docstring); None when a value is NaN."""
    mean_ok = compare(abs(e["mean"] - target), "<=", max(3 * e["se"], floor))
    spread_ok = compare([abs(x - target) for x in e["values"]], "<=", band)
    if mean_ok is None or spread_ok is None:
        return None
    return mean_ok and spread_ok


def ensemble_text(e: dict, digits: int = 3) -> str:
    """"mean -1.003 +- 0.012 (sd 0.027, min -1.04, max -0.97, 5 seeds 0..4)"."""
    f = f".{digits}f"
    seeds = e["seeds"]
    span = f"{seeds[0]}..{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds))
    return (f"mean {e['mean']:{f}} +- {e['se']:{f}} (sd {e['sd']:{f}}, min {e['min']:{f}}, max {e['max']:{f}}, "
            f"{e['n']} seeds {span})")


def seeds_text(seeds) -> str:
    """How a replay names its seeds: "seeds 0..4" or "seeds 1, 5, 9"."""
    seeds = [int(s) for s in seeds]
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}..{seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))


__all__ = ["ensemble", "ensemble_holds", "ensemble_text", "seeds_text"]
