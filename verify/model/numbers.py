"""Exact reading of user numbers: every decimal the user writes is the rational it spells."""
from __future__ import annotations

import json
import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

from ..errors import InvalidParameter


def exact(value, name: str = "value") -> Fraction:
    """The exact rational of a decimal string, int, Fraction or Decimal (``"0.07"`` is 7/100).

    Binary floats are accepted only when finite, and are taken at their exact binary value.
    """
    if isinstance(value, bool):
        raise InvalidParameter(name, value, "must be a number, not a boolean")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidParameter(name, value, "must be a finite number")
        return Fraction(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidParameter(name, str(value), "must be a finite number")
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            if "/" in text:
                return Fraction(text)
            dec = Decimal(text)
        except (InvalidOperation, ValueError, ZeroDivisionError):
            raise InvalidParameter(name, value, "must be a decimal number such as 0.07 or a ratio such as 7/100") from None
        if not dec.is_finite():
            raise InvalidParameter(name, value, "must be a finite number (NaN and infinity are not)")
        return Fraction(dec)
    raise InvalidParameter(name, value, "must be a decimal number")


def load_json_exact(path: str | Path, name: str):
    """Parse a JSON file with every number read as an exact rational (never through a float)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameter(name, str(path), "must be an existing JSON file")
    try:
        return json.loads(p.read_text(), parse_float=lambda s: exact(s, name),
                          parse_int=lambda s: Fraction(int(s)),
                          parse_constant=lambda s: exact(s, name))
    except json.JSONDecodeError as exc:
        raise InvalidParameter(name, str(path), f"must be valid JSON ({exc.msg} at line {exc.lineno})") from None


def frac_str(x: Fraction) -> str:
    """A rational as ``p/q`` (or ``p``), the form the toolkit records in configs."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
