"""The slow coordinates with the lag in units of s = K/(D - K): eps = s e, a chart regular at s = 0 (D -> infinity).

In (u, eps) (verify.certify.coordinates) two things have no limit as D -> infinity: the delta-increment's G holds
eps r = eps/s (at large D the gap drifts by O(s) a step, so a lag of alpha behind alpha*(u) of order s u^3 already
changes that drift by O(1)), and R's width C is a multiple of c = s(1 + s)y. With eps = s e and e' = eps'/s every
formula the region check evaluates is a rational function whose denominators at s = 0 are powers of 1 - u and
1 - w (proved below):

    G~(u, e) = G(u, s e)          (G~ = (1 - e u^2 (1 - u)^3)/(1 - u)^2 at s = 0)
    e'       = (rho(u) e + DD(u, u') (1 + s) y Q) R^3         (c/s = (1 + s) y; R, Q as in the (u, eps) chart)
    Lt~(u, e) = Lt(u, s e),       W~(u, e) = h(u) + s e u^2

R and Q keep their (u, G, X, c) form: c = s(1 + s)y is then a ball that holds 0 on a cell with rho = 0, where R = 1
and u' = u (the curve of fixed points of the D -> infinity limit). So R~(u0, C~) = {0 < u <= u0,
|alpha - alpha*(u)| <= C~ s u^3} is checked by the boxes of verify.certify.region with s an interval [0, s_hi]: once,
for every D >= K/rho_hi. Every formula is printed as the re-checker's parser reads it and compiled by its compiler
(verify.certify.formulas.compile_formulas), like the (u, eps) chart's.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..derive.factoring import seeded_sympy
from ..derive.invariants import r, x, y
from ..run.cache import by_code_version
from .coordinates import Qs, Rs, cs, eps, slow_coordinates, u, w
from .formulas import ArbFunctions, _grouped, chart_functions, file_map, formula_text, in_s, s
from .obligations import Obligation, identity


def _grouped_factors(e):
    """A rational function, factored, with each factor that is a polynomial in s written as sum_k s^k (factored
    coefficient): 1 + O(s) corrections stay separate from the s = 0 part, so an interval of s near 0 widens little."""
    e = sp.factor(sp.cancel(sp.together(e)))
    if e.is_Mul:
        return sp.Mul(*[_grouped_factors(a) for a in e.args])
    if e.is_Pow and e.exp.is_Integer:
        return _grouped_factors(e.base) ** e.exp
    return _grouped(e) if e.is_polynomial(s) and e.has(s) else e


def _plain(expr):
    """A (u, eps) chart expression in r, at eps = s e (e written ``epsilon``), r = 1/s."""
    return sp.sympify(expr).subs(eps, eps / r).subs(r, 1 / s)


def _regular(name: str, expr, allowed=(u - 1, w - 1)) -> Obligation:
    """The denominator of ``expr`` at s = 0 is a product of powers of ``allowed`` (1 - u, 1 - w: nonzero on R,
    where u' < u <= u0 < 1), so every formula has a finite limit as D -> infinity."""
    den = sp.fraction(sp.cancel(sp.together(expr)))[1]
    at0 = sp.factor(den.subs(s, 0))
    _, factors = sp.factor_list(at0)
    bad = [f for f, _ in factors if not any(sp.expand(f - a) == 0 or sp.expand(f + a) == 0 for a in allowed)]
    ok = at0 != 0 and not bad
    return Obligation(f"scaled-regular-{name}", f"the denominator of {name} at s = 0 (D -> infinity) is a product of "
                      "powers of 1 - u and 1 - w, nonzero on R (u' < u <= u0 < 1)", "sympy", ok,
                      f"at s = 0 it is {sp.sstr(at0)[:120]}" + ("" if ok else f"; other factors {bad}"))


@lru_cache(maxsize=None)
@by_code_version("scaled-coordinates")
@seeded_sympy()
def scaled_coordinates() -> tuple:
    """({name: SymPy expression in (u, epsilon = e, w, G, X, Q, R, c; s, x, y)}, obligations): the module
    docstring's formulas and the partials the mean-value forms use, each proved equal to the (u, eps) chart's at
    eps = s e, and regular at s = 0."""
    sc = slow_coordinates()
    ob = []
    DD, h = (_grouped_factors(in_s(e)) for e in (sc.DD, sc.h))
    # rho = 1 - x K||s||^2 with x once (an interval of x then widens it by no dependency)
    rho = 1 - x * _grouped_factors(in_s((1 - sc.rho) / x))
    ob.append(identity("scaled-rho", "rho(u) = 1 - x ((1 - u)^2 + s u^2)", rho, in_s(sc.rho)))
    G = _grouped_factors(_plain(sc.G))
    # e' = eps'/s: eps' = (rho eps + DD c Q) R^3 with eps = s e and c = s k, k = c/s = (1 + s) y
    k = _grouped_factors(in_s(sc.c) / s)
    e_next = (rho * eps + DD * k * Qs) * Rs**3
    lt = _grouped_factors(_plain(sc.loss_ratio))
    W = h + s * eps * u**2
    ob.append(identity("scaled-G", "G~(u, e) = G(u, s e)", G, _plain(sc.G)))
    ob.append(identity("scaled-c", "c/s = (1 + s) y", k, (1 + s) * y))
    ob.append(identity("scaled-eps-next", "e' = eps'/s at eps = s e, c = s (1 + s) y",
                       s * e_next, _plain(sc.eps_next.subs(cs, sc.c))))
    ob.append(identity("scaled-loss-ratio", "Lt~(u, e) = Lt(u, s e)", lt, _plain(sc.loss_ratio)))
    ob.append(identity("scaled-W", "W~(u, e) = h(u) + s e u^2 = W(u, s e)", W, _plain(sc.w_over_u)))
    out = {"G": G, "eps_next": e_next, "loss_ratio": lt, "W": W}
    for name in ("G", "loss_ratio", "W"):
        out |= {f"{name}_u": _grouped_factors(sp.diff(out[name], u)),
                f"{name}_epsilon": _grouped_factors(sp.diff(out[name], eps))}
    ob += [_regular(n, e) for n, e in out.items()]
    return out, tuple(ob)


def obligations() -> tuple:
    """The chart's SymPy obligations (identities with the (u, eps) chart and regularity at s = 0)."""
    return scaled_coordinates()[1]


@lru_cache(maxsize=None)
@by_code_version("scaled-formula-text")
def file_group() -> dict:
    """The chart's formulas as text, the "scaled_coordinates" group of an atlas file's map (the re-checker checks
    them against the (u, eps) chart's and the model's map, exactly, and evaluates them as printed)."""
    return {n: formula_text(e) for n, e in scaled_coordinates()[0].items()}


@lru_cache(maxsize=None)
def arb_functions() -> ArbFunctions:
    """verify.certify.formulas.ArbFunctions with the scaled formulas in place of G, eps', Lt, W and their partials
    (same signatures: eps' takes the ball c and does not use it, reading c/s = (1 + s) y from the invariants)."""
    return chart_functions(file_map()["coordinates"] | file_group())


__all__ = ["arb_functions", "file_group", "obligations", "scaled_coordinates"]
