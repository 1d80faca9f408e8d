"""Simplification for display, under the assumptions every formula here carries.

``tidy`` rewrites D = K + g with g > 0 (the interior case D > K), so that SymPy's automatic
evaluation turns (D - K) sqrt(1/(D - K)) into sqrt(D - K); then it keeps the shortest of a few cheap
rewritings (full ``simplify`` only on small expressions: on the erf recursion it takes minutes).
The result is equal to the input wherever D > K (tested at random points).
"""
from __future__ import annotations

import sympy as sp

from ..model.symbols import D, K

_gap = sp.Symbol("g_DK", positive=True)   # D - K > 0
SIMPLIFY_BUDGET = 120                      # count_ops above which sp.simplify is not tried (cost grows fast)


def _shortest(cands):
    return min(cands, key=lambda e: (sp.count_ops(e), len(str(e))))


def tidy(expr, interior: bool = True):
    """A shorter form of ``expr`` (a SymPy expression, matrix expression or equation); equal where D > K."""
    if isinstance(expr, sp.Eq):
        return sp.Eq(expr.lhs, tidy(expr.rhs, interior), evaluate=False)
    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.MatrixExpr) or expr.has(sp.Sum):
        return expr
    x = expr.subs(D, K + _gap) if interior and expr.has(D) and expr.has(K) else expr
    cands = [x, sp.factor_terms(x), sp.cancel(x) if not x.has(sp.Function) else x]
    if sp.count_ops(x) <= SIMPLIFY_BUDGET:
        cands.append(sp.simplify(x))
    best = _shortest(cands)
    return best.subs(_gap, D - K)


__all__ = ["tidy"]
