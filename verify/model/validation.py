"""Small argument checks, each raising :class:`InvalidParameter` that names the parameter and its range."""
from __future__ import annotations

from fractions import Fraction

from ..errors import InvalidParameter


def check_int(name: str, value, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            if isinstance(value, Fraction) and value.denominator == 1:
                value = int(value)
            elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            else:
                raise TypeError
        except TypeError:
            raise InvalidParameter(name, value, "must be an integer") from None
    rng = f"must satisfy {lo if lo is not None else '-inf'} <= {name} <= {hi if hi is not None else 'inf'}"
    if lo is not None and value < lo:
        raise InvalidParameter(name, value, rng)
    if hi is not None and value > hi:
        raise InvalidParameter(name, value, rng)
    return value


def check_positive(name: str, value: Fraction) -> Fraction:
    if value <= 0:
        raise InvalidParameter(name, str(value), "must be > 0")
    return value


def check_nonnegative(name: str, value: Fraction) -> Fraction:
    if value < 0:
        raise InvalidParameter(name, str(value), "must be >= 0")
    return value


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise InvalidParameter(name, value, f"must be one of {', '.join(map(str, choices))}")
    return value
