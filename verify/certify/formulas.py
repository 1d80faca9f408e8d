"""The formulas of a certificate, in one place: SymPy expressions compiled to Arb for verify and printed for
the independent re-checker (recheck.certificates), so that both evaluate the same expressions.

Groups (the variables each may use):

  invariants, prefactors     s = K/(D - K) = 1/r, x, y (verify.derive.invariants) and pre_L, pre_S^2, pre_W^2,
                             in the parameters D, K, N, v, c_L, eta_V, eta_KQ, lambda, beta, V2
  reduced_map_parameters     the reduced map (alpha', delta' - delta) and the observables (L - L_opt,
                             ||S - S*||_F^2) in alpha, E = e^delta and the parameters (verify.derive.reduced_map)
  reduced_map                the same in (s, x, y) as increments alpha' - alpha, delta' - delta; the observables
                             divided by the prefactors
  jacobian                   the increments' derivatives in (alpha, delta) and (s, x, y) (d(alpha', delta')/d(alpha,
                             delta) is the identity plus these), in alpha, E, s, x, y (d/d delta = E d/dE)
  state                      u and eps as functions of the state (alpha, E), with their gradients
  coordinates                the slow-manifold coordinates of verify.certify.coordinates, with the partial
                             derivatives the mean-value forms use

Every formula is rational in its variables (exp only through E = e^delta, computed once per step), so the
re-checker can check the identities between them exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..derive.invariants import DEFINITIONS, PREFACTORS, V2, invariant_map, observables, r, step_map, x, y
from ..model.symbols import alpha, delta, vn
from ..run.cache import by_code_version
from .coordinates import eps, slow_coordinates, u
from recheck.certificates import compile_arb, parse

E = sp.Symbol("E", positive=True)       # e^delta
s = sp.Symbol("s", positive=True)       # K/(D - K) = 1/r
PARAMS = (s, x, y)                      # the invariants the certificate's formulas are written in


def _in_E(e):
    return sp.sympify(e).subs(delta, sp.log(E))


def _d_delta(e):
    """d/d delta of an expression in E = e^delta."""
    return E * sp.diff(e, E)


def _grouped(poly):
    """A polynomial as sum_k s^k (its factored coefficient of s^k)."""
    e = sp.expand(poly)
    if not e.has(s):
        return sp.factor(e)
    return sp.Add(*[s**k * sp.factor(co) for k, co in enumerate(reversed(sp.Poly(e, s).all_coeffs())) if co != 0])


def in_s(expr):
    """``expr`` with r = 1/s, keeping its structure: every factor that is a polynomial P of degree d in r becomes
    s^-d P~(s) with P~(s) = s^d P(1/s) written as sum_k s^k (factored coefficient); the powers of s collect.

    Why s: a family of regimes covers a range of r = (D - K)/K up to hundreds, and a factor such as
    (r u^2 - 2 r u + r + u^2) evaluated on an interval of r, divided by another, loses a factor r_hi/r_lo to
    the dependency effect; in s = K/(D - K) the same factors are (u - 1)^2 + s u^2: 1 + O(s) corrections, with
    s small where r is large (and a point where the family has one D)."""
    return _absorb(_in_s(sp.sympify(expr)))


def _in_s(e):
    if not e.has(r):
        return e
    if e == r:
        return 1 / s
    if e.is_Add and e.is_polynomial(r):
        d = sp.degree(e, r)
        return s**-d * _grouped(sp.expand(s**d * e.subs(r, 1 / s)))
    return e.func(*[_in_s(a) for a in e.args])


def _absorb(e):
    """Divide a product's s^-k into the sums that are O(s) at u = 0, term by term, (s A + B) s^-1 = A + B/s: s/s
    on an interval of s is not 1 (the dependency effect), while B/s has s once and B vanishes at u = 0."""
    if e.is_Add or e.is_Pow or e.is_Function:
        return e.func(*[_absorb(a) for a in e.args])
    if not e.is_Mul:
        return e
    args = [_absorb(a) for a in e.args]
    k = sum(-int(a.exp) for a in args if a.is_Pow and a.base == s and a.exp.is_Integer and a.exp < 0)
    if k <= 0:
        return sp.Mul(*args)
    rest = [a for a in args if not (a.is_Pow and a.base == s and a.exp.is_Integer and a.exp < 0)]
    for i, a in enumerate(rest):
        # the sum that is O(s) at u = 0 (its s-free part vanishes there): there s A / s = A is the cancellation
        while k > 0 and a.is_Add and a.has(s) and sp.expand(a.subs(s, 0)).subs(u, 0) == 0:
            a = sp.Add(*[sp.expand(t / s) if t.has(s) else t / s for t in a.args])
            k -= 1
        rest[i] = a
    return sp.Mul(*rest) * s**-k


@lru_cache(maxsize=None)
@by_code_version("certificate-formulas")
def certificate_formulas() -> dict:
    """{group: {name: SymPy expression}} (module docstring), in (s, x, y)."""
    inv, sc = invariant_map(), slow_coordinates()
    # The map as increments, alpha' = alpha + a_inc, delta' = delta + inc: each small (O(x), O(y)), and so is
    # each entry of the Jacobian minus the identity; written so, an enclosure over a box stays that small.
    a_inc, inc = sp.factor(sp.cancel(in_s(_in_E(inv.a_next)) - alpha)), in_s(_in_E(inv.inc))
    a_par, inc_par = (_in_E(e).subs(vn, V2) for e in step_map())     # alpha' does not depend on vn (proved)
    obs = observables()
    jac = {"da_alpha": sp.diff(a_inc, alpha), "da_delta": _d_delta(a_inc),
           "dd_alpha": sp.diff(inc, alpha), "dd_delta": _d_delta(inc)}
    jac |= {f"da_{p}": sp.diff(a_inc, p) for p in PARAMS} | {f"dd_{p}": sp.diff(inc, p) for p in PARAMS}
    jac = {k: sp.factor(v) for k, v in jac.items()}
    u_E = in_s(_in_E(sc.u_of_delta))
    a_star = in_s(sc.alpha_star)
    eps_E = in_s((alpha - a_star.subs(u, u_E)) / u_E**3)
    state = {"u": u_E, "eps": eps_E}
    for name, e in (("u", u_E), ("eps", eps_E)):
        state |= {f"{name}_alpha": sp.diff(e, alpha), f"{name}_delta": _d_delta(e)}
        state |= {f"{name}_{p}": sp.diff(e, p) for p in PARAMS}
    co = {"E_of_u": (1 - u) / (s * u), "u_of_E": u_E, "alpha_star": a_star, "rho": in_s(sc.rho), "c": in_s(sc.c),
          "G": in_s(sc.G), "R": in_s(sc.R), "Q": in_s(sc.Q), "eps_next": in_s(sc.eps_next),
          "loss0": in_s(sc.loss0), "loss_ratio": in_s(sc.loss_ratio), "W": in_s(sc.w_over_u),
          "s_over_u2": in_s(sc.s_over_u**2)}
    for name in ("G", "loss_ratio", "W"):
        co |= {f"{name}_u": sp.diff(co[name], u), f"{name}_epsilon": sp.diff(co[name], eps)}
    derived = {g: {k: in_s(v) for k, v in d.items()} for g, d in (("jacobian", jac), ("state", state))}
    co = {k: (in_s(v) if k.endswith(("_u", "_epsilon")) else v) for k, v in co.items()}
    return {"invariants": {"s": 1 / DEFINITIONS[r], "x": DEFINITIONS[x], "y": DEFINITIONS[y]},
            "prefactors": {"excess_loss": PREFACTORS["excess_loss"], "s_err2": PREFACTORS["s_err"] ** 2,
                           "w_err2": PREFACTORS["w_err"] ** 2},
            "reduced_map_parameters": {"alpha_next": a_par, "delta_increment": inc_par,
                                       "loss": _in_E(obs["excess_loss"]), "s_err2": _in_E(obs["s_err"])},
            "reduced_map": {"alpha_increment": a_inc, "delta_increment": inc, "loss": in_s(_in_E(inv.excess_loss)),
                            "s_err2": in_s(_in_E(inv.s_err2))},
            "jacobian": derived["jacobian"], "state": derived["state"], "coordinates": co}


def formula_text(expr) -> str:
    """A formula as the re-checker reads it: SymPy's string form with ^ for powers (integer exponents only)."""
    e = sp.sympify(expr)
    bad = [p for p in e.atoms(sp.Pow) if not p.exp.is_Integer]
    if bad or e.atoms(sp.Float):
        raise ValueError(f"a certificate formula must be rational in its variables: {sp.sstr(bad or e)[:120]}")
    return sp.sstr(e).replace("**", "^")


@lru_cache(maxsize=None)
@by_code_version("certificate-file-map")
def file_map() -> dict:
    """The "map" section of a certificate file: every formula as text (kept on disk by code version: printing
    them costs a query on a family file more than the rest of its work)."""
    return {group: {name: formula_text(e) for name, e in items.items()}
            for group, items in certificate_formulas().items()}


VARIABLES = {"alpha": "row multiple (W_X = alpha V*)", "E": "e^delta, delta the on/off-support logit gap",
             "u": "off-support attention mass of a column", "epsilon": "eps = (alpha - alpha*(u))/u^3",
             "w": "u' (the next u)", "G": "a ball of G(u, eps)", "X": "a ball of exprel(c u^2 G)",
             "Q": "a ball of (u - u')/(c u^3)", "R": "a ball of u/u'", "c": "the cubic coefficient s (1 + s) y",
             "s": "K/(D - K)", "x": "eta_V c_L v N/K", "y": "eta_KQ c_L v lambda^2 beta^2 ||V*||^2/K^2"}

def compile_formulas(texts, args, power=None):
    """A Python function of ``args`` returning the tuple of the formulas ``texts`` over Arb balls, evaluated
    exactly as the re-checker evaluates them: by the re-checker's own compiler (recheck.certificates.compile_arb:
    its parser, its tree, its integer powers, the same operation order, each shared subtree once), so both get the
    same balls. ``power``: the integer power for another number type (recheck.hyperdual.hd_power)."""
    return compile_arb([parse(t) for t in texts], list(args), power)


def chart_texts(formulas: dict) -> dict:
    """A chart's SymPy formulas as text (the group an atlas file's map carries for it)."""
    return {n: formula_text(e) for n, e in formulas.items()}


def hyperdual_functions(texts: dict, args) -> dict:
    """Each formula text compiled for hyper-dual numbers (recheck.hyperdual), a function of ``args`` returning a
    1-tuple: the mean-value forms' values and gradients in one evaluation."""
    from recheck.hyperdual import hd_power  # heavy: flint
    return {n: compile_formulas([t], tuple(map(str, args)), power=hd_power) for n, t in texts.items()}


@dataclass(frozen=True)
class ArbFunctions:
    """The slow-manifold coordinates compiled to Arb (:func:`compile_formulas`); every function takes
    (..., s, x, y) and returns a tuple."""

    G: object             # (u, eps) -> (G, dG/du, dG/deps)  (the mean-value form needs the partials)
    G0: object            # (u, eps) -> (G,) (at the box centre)
    RQ: object            # (u, G, X, c) -> (R, Q)
    eps_next: object      # (u, eps, w, Q, R, c) -> (eps',)
    loss_ratio: object    # (u, eps) -> (Lt, dLt/du, dLt/deps)
    w_over_u: object      # (u, eps) -> (W, dW/du, dW/deps)
    loss_ratio0: object   # (u, eps) -> (Lt,)
    w_over_u0: object     # (u, eps) -> (W,)
    s_over_u2: object     # () -> ((1 + r)/r,)
    loss0: object         # () -> (L2(0),)
    c: object             # () -> (c,)


@lru_cache(maxsize=None)
def arb_functions() -> ArbFunctions:
    """The (u, eps) chart's formulas (the file map's "coordinates"), compiled."""
    return chart_functions(file_map()["coordinates"])


def chart_functions(co: dict) -> ArbFunctions:
    """:class:`ArbFunctions` compiled from a chart's formula texts by name (the "coordinates" group's names; a chart
    that rewrites some of them, verify.certify.scaled, passes that group with its own in their place)."""
    P = tuple(map(str, PARAMS))
    f = lambda args, *names: compile_formulas([co[n] for n in names], tuple(args) + P)  # noqa: E731
    ue = ("u", "epsilon")
    return ArbFunctions(
        G=f(ue, "G", "G_u", "G_epsilon"), G0=f(ue, "G"), RQ=f(("u", "G", "X", "c"), "R", "Q"),
        eps_next=f(("u", "epsilon", "w", "Q", "R", "c"), "eps_next"),
        loss_ratio=f(ue, "loss_ratio", "loss_ratio_u", "loss_ratio_epsilon"), w_over_u=f(ue, "W", "W_u", "W_epsilon"),
        loss_ratio0=f(ue, "loss_ratio"), w_over_u0=f(ue, "W"), s_over_u2=f((), "s_over_u2"), loss0=f((), "loss0"),
        c=f((), "c"))


__all__ = ["E", "VARIABLES", "ArbFunctions", "arb_functions", "certificate_formulas", "chart_functions",
           "compile_formulas", "file_map",
           "formula_text"]
