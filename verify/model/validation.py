"""Small argument checks, each raising :class:`InvalidParameter` that names the parameter and its range,
and :class:`Problems`, which gathers several such problems so that they are reported together."""
from __future__ import annotations

import contextlib
import sys
from fractions import Fraction

from ..errors import InvalidParameter

# Every real number the user gives is also read by float64 engines: it must be 0 or a normal float64
# magnitude (beyond 1.8e308 float(x) overflows; below 2.2e-308 it loses digits or becomes 0).
FLOAT64_MAX = Fraction(sys.float_info.max)
FLOAT64_MIN = Fraction(sys.float_info.min)
FLOAT64_RANGE = ("must be 0 or have a magnitude between 2.2e-308 and 1.8e308 (the float64 range; float64 "
                 "engines read it)")


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


def check_float64_range(name: str, value: Fraction, written=None) -> Fraction:
    """``value`` unchanged when it is 0 or within the float64 range; ``written`` is echoed otherwise."""
    if value != 0 and not FLOAT64_MIN <= abs(value) <= FLOAT64_MAX:
        raise InvalidParameter(name, value if written is None else written, FLOAT64_RANGE)
    return value


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise InvalidParameter(name, value, f"must be one of {', '.join(map(str, choices))}")
    return value


class Problems:
    """Every invalid input found, so that one message reports them all.

    >>> p = Problems()
    >>> with p.check():
    ...     check_int("D", 0, 1)
    >>> p.add("eta", "0", "must be > 0")
    >>> len(p.items)
    2
    """

    def __init__(self):
        self.items: list[InvalidParameter] = []

    @contextlib.contextmanager
    def check(self):
        """Run a check; an InvalidParameter it raises is recorded instead of propagated."""
        try:
            yield
        except InvalidParameter as exc:
            self.items.extend(exc.problems)

    def add(self, name: str, value, valid: str, hint: str = "", also: tuple = ()) -> None:
        self.items.append(InvalidParameter(name, value, valid, hint, also))

    def failed(self, *names: str) -> bool:
        """Whether a problem was recorded for one of ``names``."""
        return any(p.name in names for p in self.items)

    def raise_all(self) -> None:
        """Raise one InvalidParameter reporting every recorded problem (nothing when there is none)."""
        if self.items:
            raise InvalidParameter.combine(self.items)
