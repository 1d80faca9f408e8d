"""Decimal strings that keep an enclosure rigorous: lower ends rounded down, upper ends rounded up.

Arb's ``mid_rad_10exp`` gives integers (m, r, e) with the ball inside [m - r, m + r] 10^e, so
(m - r) 10^e is a decimal <= every point of the ball, at any exponent (rho^(2T) at T = 10^12 is
about 10^-10^10: no float or Fraction could hold it).
"""
from __future__ import annotations

import math


def _sci(v: int, e: int) -> str:
    """The decimal v * 10^e in scientific notation (exact)."""
    if v == 0:
        return "0"
    sgn, s = ("-" if v < 0 else ""), str(abs(v))
    s = s.rstrip("0") or "0"
    e += len(str(abs(v))) - len(s)
    exp = e + len(s) - 1
    mant = s[0] + ("." + s[1:] if len(s) > 1 else "")
    return f"{sgn}{mant}e{exp}"


def _round(v: int, e: int, digits: int, up: bool) -> tuple[int, int]:
    """v 10^e rounded to ``digits`` significant digits, towards +inf (up) or -inf."""
    n = len(str(abs(v)))
    if n <= digits:
        return v, e
    k = 10 ** (n - digits)
    q = -((-v) // k) if up else v // k
    return q, e + n - digits


def down(x, digits: int) -> str:
    """A decimal <= every point of Arb ball ``x``."""
    m, r, e = x.mid_rad_10exp(digits + 5)
    return _sci(*_round(int(m) - int(r), int(e), digits, up=False))


def up(x, digits: int) -> str:
    """A decimal >= every point of Arb ball ``x``."""
    m, r, e = x.mid_rad_10exp(digits + 5)
    return _sci(*_round(int(m) + int(r), int(e), digits, up=True))


def digits_for(lo, hi, least: int = 6, most: int = 60) -> int:
    """Significant digits that resolve the interval [lo, hi] (Arb points): width / size, plus 3."""
    from flint import arb  # heavy: flint
    width = (hi - lo).abs_upper()
    size = arb(hi).abs_upper()
    if width.is_zero() or size.is_zero():
        return least
    ratio = (size / width).log() / arb(10).log()
    try:
        d = int(math.ceil(float(ratio.mid()))) + 3
    except (OverflowError, ValueError):
        return most
    return max(least, min(most, d))


def interval(lo, hi, digits: int | None = None) -> list[str]:
    """[lower decimal, upper decimal] of the interval between Arb balls ``lo`` and ``hi``."""
    d = digits or digits_for(lo.lower(), hi.upper())
    return [down(lo, d), up(hi, d)]
