"""A z3-style API over SymPy: the SMT obligations' formulas, built once more as SymPy objects.

Every SMT obligation of the toolkit is written as ``build(lib)`` with ``lib`` a solver's z3-style API
(verify.derive.obligations.smt_obligation). Passed this module instead, the same ``build`` returns the same
formula as SymPy relations and connectives, which the Coq printer (verify.coq.printer) writes as a theorem. A
thin :class:`Term` wraps each SymPy expression because Python's ``==`` on SymPy objects is structural equality,
while a formula's ``n == 0`` must stay a relation.
"""
from __future__ import annotations

import operator
import sys

import sympy as sp


def _e(v):
    return v.e if isinstance(v, (Term, Formula)) else sp.sympify(v)


class Formula:
    """A SymPy boolean (a relation or a connective of relations)."""

    def __init__(self, e):
        self.e = e

    def __bool__(self):
        raise TypeError("a formula has no truth value in Python; build it with And/Or/Not")


def _arith(op, swap=False):
    def f(self, other):
        a, b = (_e(other), self.e) if swap else (self.e, _e(other))
        return Term(op(a, b))
    return f


def _rel(cls):
    return lambda self, other: Formula(cls(self.e, _e(other), evaluate=False))


class Term:
    """A real-valued SymPy expression with z3's operators: arithmetic gives a Term, a comparison a Formula."""

    __hash__ = None

    def __init__(self, e):
        self.e = sp.sympify(e)

    __add__, __radd__ = _arith(operator.add), _arith(operator.add, True)
    __sub__, __rsub__ = _arith(operator.sub), _arith(operator.sub, True)
    __mul__, __rmul__ = _arith(operator.mul), _arith(operator.mul, True)
    __truediv__, __rtruediv__ = _arith(operator.truediv), _arith(operator.truediv, True)
    __pow__ = _arith(operator.pow)
    __lt__, __le__, __gt__, __ge__ = _rel(sp.StrictLessThan), _rel(sp.LessThan), _rel(sp.StrictGreaterThan), \
        _rel(sp.GreaterThan)
    __eq__, __ne__ = _rel(sp.Eq), _rel(sp.Ne)

    def __neg__(self):
        return Term(-self.e)


def Real(name: str) -> Term:
    return Term(sp.Symbol(name, real=True))


def Reals(names: str) -> list[Term]:
    return [Real(n) for n in names.split()]


def And(*fs) -> Formula:
    return Formula(sp.And(*[_e(f) for f in fs], evaluate=False))


def Or(*fs) -> Formula:
    return Formula(sp.Or(*[_e(f) for f in fs], evaluate=False))


def Not(f) -> Formula:
    return Formula(sp.Not(_e(f), evaluate=False))


def formula(build) -> tuple | None:
    """(hypotheses, conclusion) of ``build`` (a z3-style builder) as SymPy booleans; None when the builder uses a
    part of z3's API this stand-in lacks (the solvers still decide it; it only cannot be exported)."""
    try:
        hyp, concl = build(sys.modules[__name__])
        return tuple(_e(h) for h in hyp), _e(concl)
    except (AttributeError, TypeError):
        return None


__all__ = ["Term", "Formula", "Real", "Reals", "And", "Or", "Not", "formula"]
