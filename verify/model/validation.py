"""Small argument checks, each raising :class:`InvalidParameter` that names the parameter and its range,
and :class:`Problems`, which gathers several such problems so that they are reported together."""
from __future__ import annotations

import contextlib
import sys
from decimal import Decimal
from fractions import Fraction

from ..errors import InvalidParameter

# Every real number the user gives is also read by float64 engines: it must be 0 or a normal float64
# magnitude (beyond 1.8e308 float(x) overflows; below 2.2e-308 it loses digits or becomes 0). Whether 0
# itself is allowed is the parameter's own rule, checked after this one, so these messages do not offer it.
FLOAT64_MAX = Fraction(sys.float_info.max)
FLOAT64_MIN = Fraction(sys.float_info.min)
FLOAT64_TOO_LARGE = "must have a magnitude of at most 1.8e308 (the largest float64; float64 engines read it)"
FLOAT64_TOO_SMALL = ("must have a magnitude of at least 2.2e-308 (the smallest normal float64; float64 engines read "
                     "it, and would lose its digits)")


def check_int(name: str, value, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an int within [lo, hi]: an int, or an exact integral Fraction (a JSON integer read exactly);
    a string ("8"), a float (8.0) or a boolean is refused, naming what was given."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, Fraction) and value.denominator == 1:
            value = int(value)
        else:
            what = (f"the string {value!r}" if isinstance(value, str) else "a decimal" if isinstance(value, (float, Decimal))
                    else type(value).__name__)
            raise InvalidParameter(name, value, f"must be an integer, not {what}" if not isinstance(value, Fraction)
                                   else "must be an integer")
    rng = f"must satisfy {lo if lo is not None else '-inf'} <= {name} <= {hi if hi is not None else 'inf'}"
    if lo is not None and value < lo:
        raise InvalidParameter(name, value, rng)
    if hi is not None and value > hi:
        raise InvalidParameter(name, value, rng)
    return value


def check_float64_range(name: str, value: Fraction, written=None) -> Fraction:
    """``value`` unchanged when it is 0 or within the float64 range; ``written`` is echoed otherwise."""
    if value != 0 and not FLOAT64_MIN <= abs(value) <= FLOAT64_MAX:
        raise InvalidParameter(name, value if written is None else written,
                               FLOAT64_TOO_SMALL if abs(value) < FLOAT64_MIN else FLOAT64_TOO_LARGE)
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
