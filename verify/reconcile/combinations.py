"""Through which combinations the conventions enter GD, proved with SymPy (σ = identity, reduced set).

The reduced recursion (verify.derive.reduced_map) is written in every convention separately; these rules
say which combinations it actually depends on, so that the family's exponents enter the leading terms
only through them:

* the logit step of (3.4) is -eta_KQ lambda^2 beta^2 G (verify.derive.gradients, matrix calculus), and
  the delta increment depends on eta_KQ, lambda, beta only through g = eta_KQ lambda^2 beta^2;
* the per-row loss, the alpha step and the delta increment depend on c_L and v only through h = c_L v
  (the identity kernel is linear in the second moments, each a multiple of v);
* the per-row loss and delta increment are proportional to the row's ||v*_m||^2 and the alpha step does
  not depend on it, so from zero initialisation every row has the same alpha and the rows of V* enter
  only through their sum ||V*||_F^2;
* eta_V enters only the alpha step, and M, d enter nowhere (M only as the number of rows summed above).

A further fact is derived from the leading terms, not assumed: eta_V does not enter them at all (the
W_X block relaxes geometrically for any stable eta_V; verify.derive.asymptotics). That one rests on
the slow-manifold expansion and is recorded as formal.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..derive.gradients import logit_step_obligation
from ..derive.obligations import Obligation, sympy_obligation
from ..derive.reduced_map import reduced, reduced_step_exprs
from ..model.symbols import M, beta, c_loss, eta_kq, eta_v, lam, var, vn
from ..evidence import Scope
from ..model.sigmas.identity import Identity
from .scaling_family import leading_terms

IDENTITY = Scope("all", ("identity",), "all", "all")
d_sym = sp.Symbol("d", positive=True, integer=True)     # feature dimension (not a symbol of the recursion)


@lru_cache(maxsize=None)
def recursion() -> dict:
    """The reduced recursion for σ = identity, interior case: per-row loss r, alpha step, delta increment."""
    a_next, inc = reduced_step_exprs(Identity(), "interior")
    return {"r": reduced(Identity(), "interior").r, "alpha_next": a_next, "delta_increment": inc}


def _only_through(name: str, exprs: dict, merged: dict, detail: str) -> Obligation:
    """Each expression minus itself with ``merged`` substituted (the combination moved onto one symbol,
    the others set to 1) is identically 0."""
    diffs = [e - e.subs(merged, simultaneous=True) for e in exprs.values()]
    return sympy_obligation(name, diffs, IDENTITY, detail)


@lru_cache(maxsize=None)
def combination_obligations() -> tuple[Obligation, ...]:
    """The combination rules of the module docstring, each an exact SymPy obligation."""
    rec = recursion()
    inc, r, a_next = rec["delta_increment"], rec["r"], rec["alpha_next"]
    one = sp.Integer(1)
    g_rule = _only_through("eta_KQ, lambda and beta enter the delta increment only through eta_KQ lambda^2 beta^2",
                           {"inc": inc}, {eta_kq: eta_kq * lam**2 * beta**2, lam: one, beta: one},
                           "inc - inc(eta_KQ -> eta_KQ lambda^2 beta^2, lambda -> 1, beta -> 1) = 0")
    h_rule = _only_through("c_L and v enter the loss, the alpha step and the delta increment only through c_L v",
                           rec, {c_loss: c_loss * var, var: one},
                           "each of r, alpha', inc minus itself at (c_L -> c_L v, v -> 1) = 0")
    homogeneous = sympy_obligation(
        "the per-row loss and delta increment are proportional to ||v*_m||^2 and the alpha step does not depend on "
        "it: from zero initialisation every row has the same alpha, and the rows enter only through ||V*||_F^2",
        [r - vn * r.subs(vn, one), inc - vn * inc.subs(vn, one), a_next - a_next.subs(vn, one)], IDENTITY,
        "r - vn r(vn = 1) = 0, inc - vn inc(vn = 1) = 0, alpha' - alpha'(vn = 1) = 0; alpha(0) = 0 for every row")
    free = set().union(r.free_symbols, inc.free_symbols)
    eta_v_rule = Obligation("eta_V enters only the alpha step (not the loss, not the delta increment)",
                            True if eta_v not in free and eta_v in a_next.free_symbols else None,
                            "free symbols of r and inc: " + ", ".join(sorted(map(str, free))), "sympy identity",
                            IDENTITY)
    md_free = set().union(free, a_next.free_symbols)
    md_rule = Obligation("M and d do not enter the reduced recursion (M is the number of rows summed)",
                         True if not ({M, d_sym} & md_free) else None,
                         "free symbols of r, alpha', inc: " + ", ".join(sorted(map(str, md_free))),
                         "sympy identity", IDENTITY)
    return (logit_step_obligation(), g_rule, h_rule, homogeneous, eta_v_rule, md_rule)


@lru_cache(maxsize=None)
def not_entering() -> dict:
    """{symbol name: True} for eta_V, M and d: absent from every leading term (a fact of the formal expansion)."""
    free = set().union(*(t.free_symbols for t in leading_terms().values()))
    return {str(s): s not in free for s in (eta_v, M, d_sym)}


__all__ = ["IDENTITY", "recursion", "combination_obligations", "not_entering"]
