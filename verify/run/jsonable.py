"""JSON-ready values: what every command's ``--json`` and every saved result is made of.

Claims (lemmas/), probes (verify.probes) and the report share this one conversion, so a numpy
boolean never turns into the string "True" (``json.dumps(default=str)`` would do that) and a
non-finite float never becomes an invalid JSON token.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def jsonable(obj):
    """``obj`` with numpy scalars and arrays as Python numbers and lists, booleans as booleans,
    Fractions as exact strings ("1/10"), mpmath numbers as floats, and non-finite floats as the
    strings "nan", "inf", "-inf" (strict JSON has no NaN). Anything else unknown becomes ``str``.

    >>> jsonable({"holds": np.bool_(True), "x": np.float64("nan"), "q": Fraction(1, 10)})
    {'holds': True, 'x': 'nan', 'q': '1/10'}
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else str(x)
    if getattr(obj, "is_Number", False):          # a SymPy number: exact rationals as strings
        return str(obj) if getattr(obj, "is_Rational", False) else jsonable(float(obj))
    try:
        import mpmath  # heavy: mpmath
        if isinstance(obj, mpmath.mpf):
            return jsonable(float(obj) if mpmath.isfinite(obj) else (math.inf if obj > 0 else -math.inf)
                            if not mpmath.isnan(obj) else math.nan)
    except ImportError:  # pragma: no cover - mpmath is a dependency
        pass
    return str(obj)


__all__ = ["jsonable"]
