"""Arithmetics the engines run in: float64 and mpmath at a chosen decimal precision.

Inputs are exact rationals (verify.model.numbers); ``num`` rounds them once, correctly, into the
working arithmetic. mpmath work runs inside ``context()`` so the global precision is restored.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from ..errors import InvalidParameter
from ..model.precision import mpmath_precision

# Guard digits carried beyond the requested ones. The recursion is contracting in alpha and
# neutral in delta, so rounding errors add up at most linearly in the number of steps (log10 of
# the horizon digits) and the excess loss, a difference of O(1) terms that is O(1/T), loses
# another log10(T) digits to cancellation; 10 more cover constants. See guard_digits().
BASE_GUARD = 10


def guard_digits(steps: int) -> int:
    return BASE_GUARD + 2 * max(1, math.ceil(math.log10(steps + 1)))


@dataclass(frozen=True)
class Arith:
    name: str            # "float64" or "mpmath"
    dps: int = 15        # requested significant digits of the output
    work_dps: int = 15   # digits carried while iterating

    @staticmethod
    def make(name: str, dps: int | None, steps: int) -> "Arith":
        if name == "float64":
            if dps is not None and dps > 15:
                raise InvalidParameter("dps", dps, "float64 carries at most 15 significant digits; use "
                                       "`arithmetic=mpmath` for more", also=("arithmetic",))
            return Arith("float64", dps or 15, 16)
        if name != "mpmath":
            raise InvalidParameter("arithmetic", name, "must be float64 or mpmath")
        dps = 30 if dps is None else dps
        if not isinstance(dps, int) or dps < 5 or dps > 100000:
            raise InvalidParameter("dps", dps, "must be an integer with 5 <= dps <= 100000")
        return Arith("mpmath", dps, dps + guard_digits(steps))

    def context(self):
        return mpmath_precision(self.work_dps) if self.name == "mpmath" else contextlib.nullcontext()

    def num(self, x) -> object:
        if self.name == "float64":
            return float(x)
        if isinstance(x, Fraction):
            return mpmath.mpf(x.numerator) / x.denominator
        return mpmath.mpf(x)

    def sqrt(self, x):
        return math.sqrt(x) if self.name == "float64" else mpmath.sqrt(x)

    @property
    def backend(self) -> str:
        return "numpy" if self.name == "float64" else "mpmath"

    def fmt(self, x) -> str:
        """A decimal string with the requested significant digits."""
        if self.name == "float64":
            return repr(float(x)) if self.dps >= 15 else f"{float(x):.{self.dps}g}"
        with mpmath_precision(self.work_dps):
            return mpmath.nstr(mpmath.mpf(x), self.dps, strip_zeros=False)
