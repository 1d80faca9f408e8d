"""Exact reading of user numbers: every decimal the user writes is the rational it spells."""
from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

from ..errors import InvalidParameter
from ..inputs import read_json
from .validation import FLOAT64_TOO_LARGE, FLOAT64_TOO_SMALL, check_float64_range


def exact(value, name: str = "value") -> Fraction:
    """The exact rational of a decimal string, int, Fraction or Decimal (``"0.07"`` is 7/100).

    Binary floats are accepted only when finite, and are taken at their exact binary value. A user's
    number (anything but a Fraction, which is the toolkit's own) must lie in the float64 range, since
    float64 engines read it too; an error echoes it as written.
    """
    if isinstance(value, Fraction):
        return value
    return check_float64_range(name, _exact(value, name), value.strip() if isinstance(value, str) else value)


def _exact(value, name: str) -> Fraction:
    if isinstance(value, bool):
        raise InvalidParameter(name, value, "must be a number, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidParameter(name, value, "must be a finite number")
        return Fraction(value)
    if isinstance(value, Decimal):
        value = str(value)
    if isinstance(value, str):
        text = value.strip()
        if "_" in text:           # Decimal("1_0") and Fraction("1_0") are 10: a typo, not a number
            raise InvalidParameter(name, value, "must be a decimal number written without '_' separators (such as "
                                   "0.07 or 7/100)")
        try:
            if "/" in text:
                return Fraction(text)
            dec = Decimal(text)
        except (InvalidOperation, ValueError, ZeroDivisionError):
            raise InvalidParameter(name, value,
                                   "must be a decimal number such as 0.07 or a ratio such as 7/100") from None
        if not dec.is_finite():
            raise InvalidParameter(name, value, "must be a finite number (NaN and infinity are not)")
        if dec and not -330 <= dec.adjusted() <= 330:
            # far outside the float64 range: refused before 10**exponent is ever built
            raise InvalidParameter(name, text, FLOAT64_TOO_SMALL if dec.adjusted() < 0 else FLOAT64_TOO_LARGE)
        return Fraction(dec)
    raise InvalidParameter(name, value, "must be a decimal number")


def load_json_exact(path: str | Path, name: str, integers: bool = False):
    """Parse a JSON file with every number read as an exact rational (never through a float); with
    ``integers``, a number written with a decimal point or an exponent (``1.0``, ``1e0``) is refused."""
    def decimal(s):
        if integers:
            raise InvalidParameter(f"{name} entry", s, f"must be an integer in {path}, not a decimal")
        return exact(s, f"{name} entry")
    return read_json(path, name, parse_float=decimal, parse_int=lambda s: exact(s, f"{name} entry"),
                     parse_constant=lambda s: exact(s, f"{name} entry"))


def frac_str(x: Fraction) -> str:
    """A rational as ``p/q`` (or ``p``), the form the toolkit records in configs."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
