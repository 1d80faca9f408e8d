"""The reduced map of sigma = identity in coordinates with a regular limit as D -> infinity (rho = K/D -> 0).

In the invariants (verify.derive.invariants) r = (D - K)/K = (1 - rho)/rho blows up as rho -> 0, so the map
has no limit there as written. Two charts do have one (``charts``), each proved an exact rewriting of the
invariant map by SymPy (``large_d_obligations``):

  the start chart, (alpha, delta), E = e^delta:
      alpha' - alpha = rho x A(alpha, E; rho),      delta' - delta = rho y B(alpha, E; rho),
      A(alpha, E; 0) = E - alpha,                   B(alpha, E; 0) = alpha E.
    Both increments are rho times functions regular at rho = 0 (their denominators are (1 - rho + rho E)^k, 1 at
    rho = 0): the start is an Euler step of size rho of the ODE d alpha/d tau = x (E - alpha), d delta/d tau =
    y alpha E in the slow time tau = rho t. So the clock delta advances by rho y B per step, and a tube check of
    B > 0 (the advance divided by rho) on a slab of width w bounds the steps spent there by w/(rho y min B) =
    (w/(y min B)) D/K: the sufficient time T* = O(D) of Theorem 3.1.

  the manifold chart, (alpha, zeta), w = e^zeta = e^delta s (zeta = delta + log s, s = K/(D - K)):
      alpha' - alpha = x A_w(alpha, w; rho),        zeta' - zeta = y B_w(alpha, w; rho),
      A_w(alpha, w; 0) = w (1 + w - alpha w)/(1 + w)^2,   B_w(alpha, w; 0) = alpha w (1 + w (1 - alpha))/(1 + w)^3,
    regular at rho = 0 (denominators (1 + w)^k (1 - rho)^j). Here u = 1/(1 + w) whatever D.

At rho = 0 the manifold chart's limit field has two exact properties (``limit_field_obligations``): the whole
curve alpha = 1 + 1/w is fixed (both A_w and B_w carry the factor 1 + w - alpha w), and

      H = alpha^2 - (2/kappa) (w + log w),     kappa = y/x,

is a first integral: 2 alpha x A_w - (2/kappa)(1 + w) y B_w = 0 identically (dH along the field; d(w + log w)/d zeta
= w + 1). So to first order in the steps the passage from the start to that curve keeps H (measured: docs/atlas.md,
"D -> infinity"), and the landing point on the curve is fixed by H's value, which grows like (2/kappa) log(1/rho).

What is not settled here (docs/atlas.md): the start chart holds while E stays bounded as rho -> 0, but the
trajectory leaves it (E grows to order rho^(-1/2), alpha with it) through a layer where neither chart's
increments are uniformly of one order; certifying cells that contain rho = 0 needs that layer's own scaling. In
the start chart's limit E blows up in finite slow time while d alpha/dE ~ x/(y alpha E), so alpha^2 gains about
2 (x/y) per unit of log E until rho E^2 ~ 1: the peak of alpha grows like sqrt(log(D/K)/kappa) (measured:
docs/atlas.md), and that layer needs alpha rescaled by sqrt(log(1/rho)).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..evidence import Scope
from .invariants import invariant_map, r, x, y
from .obligations import Obligation, stopwatch
from ..model.symbols import alpha, delta

rho = sp.Symbol("rho", nonnegative=True)
E = sp.Symbol("E", positive=True)           # e^delta
w = sp.Symbol("w", positive=True)           # e^zeta = e^delta s
S_OF_RHO = rho / (1 - rho)                  # s = K/(D - K)
R_OF_RHO = (1 - rho) / rho                  # r = (D - K)/K
SCOPE = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all")


@dataclass(frozen=True)
class Chart:
    """One chart's increments: clock and other coordinate, each = factor * (a function regular at rho = 0)."""

    name: str
    A: sp.Expr              # alpha' - alpha = a_factor * A
    B: sp.Expr              # clock' - clock = b_factor * B (clock: delta or zeta)
    a_factor: sp.Expr
    b_factor: sp.Expr
    var: sp.Symbol          # E (start chart) or w (manifold chart)
    A0: sp.Expr             # A at rho = 0
    B0: sp.Expr             # B at rho = 0


def _increments():
    m = invariant_map()
    return sp.together(m.a_next - alpha), sp.together(m.inc)


@lru_cache(maxsize=None)
def charts() -> tuple:
    """The start and manifold charts (module docstring), derived from the invariant map."""
    da, dd = _increments()
    start = {r: R_OF_RHO, sp.exp(delta): E}
    A = sp.factor(sp.cancel(da.subs(start) / (rho * x)))
    B = sp.factor(sp.cancel(dd.subs(start) / (rho * y)))
    # manifold chart: E = w/s = w (1 - rho)/rho
    man = {r: R_OF_RHO, sp.exp(delta): w / S_OF_RHO}
    Aw = sp.factor(sp.cancel(da.subs(man) / x))
    Bw = sp.factor(sp.cancel(dd.subs(man) / y))
    return (Chart("start", A, B, rho * x, rho * y, E, sp.factor(A.subs(rho, 0)), sp.factor(B.subs(rho, 0))),
            Chart("manifold", Aw, Bw, x, y, w, sp.factor(Aw.subs(rho, 0)), sp.factor(Bw.subs(rho, 0))))


def _regular_at_zero(f: sp.Expr, var: sp.Symbol) -> tuple:
    """(ok, detail): f's denominator at rho = 0 is a nonzero constant times a power of (1 + var) or a constant,
    so f has a finite limit at rho = 0 for every alpha and every var > 0."""
    _, den = sp.fraction(sp.cancel(f))
    d0 = sp.factor(den.subs(rho, 0))
    coeff, factors = sp.factor_list(d0)
    ok = coeff != 0 and all(sp.Poly(b, var).as_expr() in (var + 1,) or b.free_symbols == set()
                            for b, _ in factors)
    return ok, f"denominator at rho = 0: {sp.sstr(d0)}"


@lru_cache(maxsize=None)
def large_d_obligations() -> tuple:
    """The charts as exact rewritings of the invariant map, their regularity at rho = 0 and their limits."""
    da, dd = _increments()
    out = []
    start, man = charts()
    for ch, sub in ((start, {E: sp.exp(delta)}), (man, {w: sp.exp(delta) / r})):
        for name, inc, f, fac in (("alpha", da, ch.A, ch.a_factor), ("clock", dd, ch.B, ch.b_factor)):
            with stopwatch() as t:
                back = (fac * f).subs(sub).subs(rho, 1 / (1 + r))
                diff = sp.simplify(sp.cancel(sp.together(back - inc)))
            out.append(Obligation(
                f"{ch.name} chart: the {name} increment is {sp.sstr(fac)} * ({sp.sstr(f)[:160]}), with rho = K/D "
                f"= 1/(1 + r) and {'E = e^delta' if ch.var == E else 'w = e^delta s = e^delta/r'}",
                diff == 0, "difference simplifies to 0" if diff == 0 else f"difference {sp.sstr(diff)[:200]}",
                "sympy identity", SCOPE, seconds=t(), key=f"large-d-{ch.name}-{name}"))
            ok, detail = _regular_at_zero(f, ch.var)
            out.append(Obligation(f"{ch.name} chart: the {name} increment's factor is regular at rho = 0 (D -> "
                                  "infinity)", ok, detail, "sympy identity", SCOPE, key=f"large-d-{ch.name}-{name}-"
                                  "regular"))
    lim = {"start": (E - alpha, alpha * E),
           "manifold": (w * (1 + w - alpha * w) / (1 + w) ** 2, alpha * w * (1 + w * (1 - alpha)) / (1 + w) ** 3)}
    for ch in (start, man):
        a0, b0 = lim[ch.name]
        ok = sp.simplify(ch.A0 - a0) == 0 and sp.simplify(ch.B0 - b0) == 0
        out.append(Obligation(f"{ch.name} chart at rho = 0: A = {sp.sstr(a0)}, B = {sp.sstr(b0)}", ok,
                              f"A(rho = 0) = {sp.sstr(ch.A0)}, B(rho = 0) = {sp.sstr(ch.B0)}", "sympy identity",
                              SCOPE, key=f"large-d-{ch.name}-limit"))
    return tuple(out) + limit_field_obligations()


@lru_cache(maxsize=None)
def limit_field_obligations() -> tuple:
    """The manifold chart's rho = 0 field (module docstring): its curve of fixed points and the first integral H."""
    _, man = charts()
    kap = sp.Symbol("kappa", positive=True)
    on_curve = {alpha: 1 + 1 / w}
    with stopwatch() as t:
        fixed = [sp.simplify(f.subs(on_curve)) for f in (man.A0, man.B0)]
    out = [Obligation("manifold chart at rho = 0: every point of the curve alpha = 1 + 1/w is fixed (A_w = B_w = 0)",
                      fixed == [0, 0], f"A_w, B_w on the curve: {sp.sstr(fixed[0])}, {sp.sstr(fixed[1])}",
                      "sympy identity", SCOPE, seconds=t(), key="large-d-limit-fixed-curve")]
    H = alpha**2 - 2 / kap * (w + sp.log(w))
    # zeta = log w: dH/dzeta = w dH/dw; the field is (x A_w, y B_w) in (alpha, zeta), y = kappa x
    with stopwatch() as t:
        dH = sp.simplify(sp.diff(H, alpha) * x * man.A0 + w * sp.diff(H, w) * kap * x * man.B0)
    out.append(Obligation("manifold chart at rho = 0: H = alpha^2 - (2/kappa)(w + log w) is a first integral of the "
                          "limit field (x A_w dH/d alpha + y B_w dH/d zeta = 0, y = kappa x)", dH == 0,
                          "simplifies to 0" if dH == 0 else f"residue {sp.sstr(dH)[:200]}", "sympy identity", SCOPE,
                          seconds=t(), key="large-d-limit-first-integral"))
    return tuple(out)


__all__ = ["Chart", "E", "charts", "large_d_obligations", "limit_field_obligations", "rho", "w"]
