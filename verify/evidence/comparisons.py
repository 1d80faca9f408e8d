"""Numeric comparisons every numeric ``holds`` goes through: a NaN or an overflow never counts as holding."""
from __future__ import annotations

import numpy as np


def finite(*values) -> bool:
    """Whether every value (numbers or arrays of them) is a finite real number."""
    for v in values:
        a = np.asarray(v, dtype=float)
        if not np.all(np.isfinite(a)):
            return False
    return True


def compare(x, op: str, bound) -> bool | None:
    """``x op bound`` as True / False, or None when either side is NaN or infinite.

    Every numeric 'holds' goes through here (or :func:`finite`), so a NaN or an overflow never
    counts as the property holding: ``worst > x`` style loops silently skip NaN, this does not.
    """
    if not finite(x, bound):
        return None
    x, bound = np.asarray(x, dtype=float), np.asarray(bound, dtype=float)
    res = {"<": x < bound, "<=": x <= bound, ">": x > bound, ">=": x >= bound}[op]
    return bool(np.all(res))



__all__ = ["finite", "compare"]
