"""Arb ball helpers with no symbolic machinery: exact rational midpoints (the working precision is
verify.model.precision's).

Kept apart from verify.engines.arb (which generates its step code from SymPy) so that a path that only evaluates
balls, such as an atlas member query (verify.certify.atlas_query), imports neither SymPy nor the generated code.
"""
from __future__ import annotations

from fractions import Fraction


def _frac_parts(x):
    m, e = x.mid().man_exp()
    return (int(m) * 2 ** int(e), 1) if e >= 0 else (int(m), 2 ** int(-e))


def to_fraction(x) -> Fraction:
    """The midpoint of ball ``x`` as an exact rational."""
    return Fraction(*_frac_parts(x))


__all__ = ["to_fraction"]
