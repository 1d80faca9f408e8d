"""Which reading of the conventions makes Theorem 3.1's D-exponents true? Exponents of D, kept symbolic.

Every named convention that enters the leading terms (verify.derive.asymptotics.leading_terms_general)
is written as a constant times a symbolic power of D:

    N = n D^a                               output columns (query positions); gcn has N = D (a = 1)
    g = eta_KQ lambda^2 beta^2 = eta g0 D^b  effective step of the attention logits (beta: logit
                                            temperature, P^T P = lambda I, eta_KQ: the W_KQ step)
    h = c_L v = h0 D^c                      loss normalisation (1 or 1/(M N)) times entry variance

Why these three and no others (checked symbolically by :func:`effective_terms`): eta_KQ, lambda and
beta enter the leading terms only through g, c_L and v only through h; eta_V does not enter at all
(alpha relaxes geometrically onto its quasi-static value for any stable eta_V); M and d do not enter
(sigma = identity: the rows add up to ||V*||_F^2). ||V*||_F is the teacher's and stays explicit; K is
held fixed (the claims state their K-dependence separately). eta_V enters only the stability of the
W_X block (:func:`stability_exponents`).

T* (the start of the 1/T phase). Along the slow manifold the off-support mass u obeys
Delta u = -c u^3, so u^-2(T) = u0^-2 + 2 c T with u0 = (D - K)/D (uniform S at T = 0). We define
T* := u0^-2 / (2 c), the time at which the growth term 2 c T equals the start u0^-2 (u(T*) = u0/sqrt 2);
for T >> T* every quantity follows its 1/T leading term. T* = K D / (2 g h ||V*||^2): in the
reference convention K D / (2 eta ||V*||^2), as verify.probes.tstar measures.

D-exponents are limits D -> infinity at fixed K of D d log(term)/dD, exact rationals linear in (a, b, c).
Example::

    >>> from verify.derive.exponents import exponent_table, a, b, c
    >>> exponent_table()["loss"]["D"]
    a - b
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..model.symbols import D, K, N, T, beta, c_loss, eta, eta_kq, eta_v, lam, var, vnorm

# The exponents of D (unknowns of the solver) and the constants in front of the powers.
a, b, c = sp.symbols("a b c", real=True)
n, g0, h0 = sp.symbols("n g_0 h_0", positive=True)
# The effective conventions themselves.
g, h = sp.symbols("g h", positive=True)
EXPONENTS = (a, b, c)
CONVENTION_NAMES = {a: "N", b: "g", c: "h"}     # how the exponents are keyed in every output
FAMILY = "N = n D^a, g = eta_KQ lambda^2 beta^2 = eta g0 D^b, h = c_L v = h0 D^c (K fixed)"

QUANTITIES = ("loss", "s_err", "w_err")
VARIABLES = {"D": D, "K": K, "vnorm": vnorm, "eta": eta, "T": T}
TSTAR_DEFINITION = ("T* = u0^-2 / (2 c): the time at which the growth term of u^-2(T) = u0^-2 + 2 c T equals its "
                    "start u0^-2 = (D / (D - K))^2 (u: off-support attention mass, Delta u = -c u^3 on the slow "
                    "manifold); for T >> T* the 1/T leading terms hold")
CLAIMED_TSTAR_D = sp.Integer(2)    # docs/paper.md: "These hold after a time T* that grows like D^2"


@dataclass(frozen=True)
class Check:
    """One symbolic fact the reduction to (g, h) rests on."""

    name: str
    holds: bool
    detail: str


@lru_cache(maxsize=None)
def effective_terms() -> dict:
    """Leading terms of loss, s_err, w_err, the cubic coefficient c and T*, in (N, g, h), with the checks.

    Returns {"terms": {name: expr}, "checks": [Check, ...]}; each term is
    verify.derive.asymptotics.leading_terms_general() with eta_KQ = g / (lambda^2 beta^2), c_L = h / v.
    """
    from .asymptotics import leading_terms_general
    gen = leading_terms_general()
    terms, checks = {}, []
    for name in (*QUANTITIES, "c"):
        e = gen[name]
        checks.append(Check(f"eta_V does not enter {name}", eta_v not in e.free_symbols,
                            "free symbols: " + ", ".join(sorted(map(str, e.free_symbols)))))
        e = sp.simplify(e.subs(eta_kq, g / (lam**2 * beta**2)))
        checks.append(Check(f"eta_KQ, lambda, beta enter {name} only through g",
                            not ({lam, beta, eta_kq} & e.free_symbols), f"{name} = {sp.sstr(e)}"))
        e = sp.simplify(e.subs(c_loss, h / var))
        checks.append(Check(f"c_L, v enter {name} only through h", not ({var, c_loss} & e.free_symbols),
                            f"{name} = {sp.sstr(e)}"))
        terms[name] = sp.factor(e)
    u0 = (D - K) / D
    terms["tstar"] = sp.factor(sp.simplify(u0**-2 / (2 * terms["c"])))
    return {"terms": terms, "checks": checks}


def family_subs() -> dict:
    """The substitution N -> n D^a, g -> eta g0 D^b, h -> h0 D^c."""
    return {N: n * D**a, g: eta * g0 * D**b, h: h0 * D**c}


@lru_cache(maxsize=None)
def family_terms() -> dict:
    """The leading terms (and T*) as functions of D, K, ||V*||, eta, T under the power-law conventions."""
    et = effective_terms()["terms"]
    return {k: sp.powsimp(sp.simplify(et[k].subs(family_subs())), force=True) for k in (*QUANTITIES, "tstar")}


def exponent(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """lim_{D -> oo} x d log(expr)/dx at fixed K: the exponent of x in ``expr`` for large D."""
    logd = sp.expand_log(sp.log(expr), force=True)
    return sp.nsimplify(sp.limit(sp.simplify(x * sp.diff(logd, x)), D, sp.oo))


@lru_cache(maxsize=None)
def exponent_table() -> dict:
    """{quantity: {variable: exponent}} of the leading terms and T*, linear in (a, b, c)."""
    ft = family_terms()
    return {q: {v: sp.expand(exponent(ft[q], x)) for v, x in VARIABLES.items()} for q in (*QUANTITIES, "tstar")}


@lru_cache(maxsize=None)
def finite_d_factor(q: str) -> sp.Expr:
    """term_q / (its D -> infinity power law C D^e): the finite-D factor of a leading term, e.g. (D - K)/D for
    the loss. The same for every (a, b, c) (checked); a fit of q / factor over a finite grid of D has no
    finite-D curvature left."""
    term = family_terms()[q]
    e = exponent_table()[q]["D"]
    C = sp.limit(sp.simplify(term * D**-e), D, sp.oo)
    f = sp.simplify(term / (C * D**e))
    if f.free_symbols - {D, K}:
        raise AssertionError(f"the finite-D factor of {q} depends on more than D and K: {f}")
    return readable(f)


@lru_cache(maxsize=None)
def claimed_exponents() -> dict:
    """Theorem 3.1's claimed exponents (from verify.derive.asymptotics.claimed_terms) and T* ~ D^2."""
    from .asymptotics import claimed_terms
    ct = claimed_terms()
    out = {q: {v: exponent(ct[q], x) for v, x in VARIABLES.items()} for q in QUANTITIES}
    out["tstar"] = {"D": CLAIMED_TSTAR_D}
    return out


def exponents_at(values: dict) -> dict:
    """The exponent table at given (a, b, c) (keys the symbols or "N", "g", "h")."""
    sub = {(s if not isinstance(s, str) else _symbol_of(s)): sp.Rational(str(v)) if not isinstance(v, sp.Basic) else v
           for s, v in values.items()}
    return {q: {v: sp.nsimplify(e.subs(sub)) for v, e in row.items()} for q, row in exponent_table().items()}


def _symbol_of(name: str) -> sp.Symbol:
    return {v: k for k, v in CONVENTION_NAMES.items()}[name]


@dataclass
class Solution:
    """The exponent vectors (a, b, c) that reproduce a set of claimed exponents.

    ``status`` is "empty", "unique" or "family"; ``vectors`` holds one dict {a: expr, b: expr, c: expr}
    (a family: expressions in ``parameters``, which are some of a, b, c left free).
    """

    status: str
    vectors: list
    parameters: tuple
    equations: list                       # (quantity, variable, derived exponent, claimed exponent)
    failed_identities: list = field(default_factory=list)   # claims that hold for no (a, b, c)

    def as_dict(self) -> dict:
        return {"status": self.status,
                "solutions": [{CONVENTION_NAMES[s]: sp.sstr(v[s]) for s in EXPONENTS} for v in self.vectors],
                "parameters": [CONVENTION_NAMES[p] + f" (= {p})" for p in self.parameters],
                "equations": [f"{q}, exponent of {v}: {sp.sstr(lhs)} = {sp.sstr(rhs)}" for q, v, lhs, rhs in self.equations],
                "failed_identities": [f"{q}, exponent of {v}: derived {sp.sstr(lhs)}, claimed {sp.sstr(rhs)}"
                                      for q, v, lhs, rhs in self.failed_identities]}


def solve_exponents(claims: dict, quantities=QUANTITIES) -> Solution:
    """Solve derived exponent = claimed exponent for (a, b, c) with SymPy's linsolve.

    ``claims``: {quantity: {variable: exponent}} (exponents as SymPy rationals); only the quantities in
    ``quantities`` are used (add "tstar" to solve the rates and T* together). Claims on K, ||V*||, eta, T do
    not involve (a, b, c): each holds identically or makes the set empty (listed in failed_identities).
    """
    table = exponent_table()
    eqs, failed = [], []
    for q in quantities:
        for v, claimed in claims.get(q, {}).items():
            lhs = table[q][v]
            eqs.append((q, v, lhs, claimed))
            if not (lhs.free_symbols & set(EXPONENTS)) and sp.simplify(lhs - claimed) != 0:
                failed.append((q, v, lhs, claimed))
    sol = sp.linsolve([lhs - rhs for _, _, lhs, rhs in eqs], list(EXPONENTS))
    if sol == sp.S.EmptySet or not sol:
        return Solution("empty", [], (), eqs, failed)
    (vec,) = tuple(sol)
    vectors = [dict(zip(EXPONENTS, (sp.nsimplify(x) for x in vec)))]
    params = tuple(sorted(set().union(*(x.free_symbols for x in vec)) & set(EXPONENTS), key=str))
    return Solution("family" if params else "unique", vectors, params, eqs, failed)


@lru_cache(maxsize=None)
def stability_bounds() -> dict:
    """The step-size thresholds of verify.derive.stability in (N, h) and as bounds on eta under the family.

    W_X block: eta_V < 2K / (c_L v N) = 2K / (h N). delta block (along the slow manifold): the W_KQ
    step obeys eta_KQ lambda^2 beta^2 = g < g_max = eta_delta lambda^2 (stability.py derives eta_delta at
    beta = 1; beta enters with lambda as (lambda beta)^2), i.e. eta < g_max / (g0 D^b).
    """
    from .stability import loss_thresholds
    th = loss_thresholds()
    eta_alpha = sp.simplify(th["eta_alpha"].subs(c_loss, h / var))
    g_max = sp.simplify((th["eta_delta"] * lam**2).subs(c_loss, h / var))
    if {var, lam} & (eta_alpha.free_symbols | g_max.free_symbols):
        raise AssertionError("the stability thresholds do not reduce to (N, h, g)")
    fam = family_subs()
    eta_v_max = sp.simplify(eta_alpha.subs(fam))
    eta_kq_max = sp.simplify((g_max / (g0 * D**b)).subs(fam))
    return {"eta_V_max": eta_alpha, "g_max": g_max,
            "eta_V_max_family": eta_v_max, "eta_max_delta_family": eta_kq_max,
            "eta_V_max_D_exponent": sp.expand(exponent(eta_v_max, D)),
            "eta_max_delta_D_exponent": sp.expand(exponent(eta_kq_max, D))}


def stability_note(vector: dict) -> dict:
    """Whether GD at a fixed step size eta (one step size, eta_V = eta) stays stable as D grows."""
    sb = stability_bounds()
    ex_a = sp.nsimplify(sb["eta_V_max_D_exponent"].subs(vector))
    ex_d = sp.nsimplify(sb["eta_max_delta_D_exponent"].subs(vector))
    decided = ex_a.is_number and ex_d.is_number
    stable = bool(decided and ex_a >= 0 and ex_d >= 0) if decided else None
    parts = [f"W_X block: eta_V < {sp.sstr(sb['eta_V_max'])} = {sp.sstr(sb['eta_V_max_family'].subs(vector))} "
             f"(D-exponent {sp.sstr(ex_a)})",
             f"delta block: eta < {sp.sstr(sp.simplify(sb['eta_max_delta_family'].subs(vector)))} "
             f"(D-exponent {sp.sstr(ex_d)}; eta g0 D^b < g_max = {sp.sstr(sb['g_max'])})"]
    if stable is False:
        which = "the W_X block" if ex_a < 0 else "the delta block"
        parts.append(f"at a fixed eta GD leaves its stable range as D grows ({which}); the claimed eta-dependence "
                     "holds only for eta below a threshold that shrinks with D"
                     + (" (eta_V does not enter the leading terms, so a separate eta_V ~ D^" + sp.sstr(ex_a)
                        + " keeps GD stable without changing the rates)" if ex_a < 0 <= ex_d else ""))
    return {"eta_V_max_D_exponent": sp.sstr(ex_a), "eta_max_delta_D_exponent": sp.sstr(ex_d),
            "stable_at_fixed_eta_as_D_grows": stable, "note": "; ".join(parts)}


def readable(expr: sp.Expr) -> sp.Expr:
    """``expr`` simplified for display under 0 < K < D (e.g. (D - K) sqrt(1/(D - K)) = sqrt(D - K)); the
    two are checked equal with D = K + E, E > 0."""
    E = sp.Symbol("E", positive=True)
    at = sp.factor(sp.simplify(sp.powsimp(expr.subs(D, K + E), force=True)))
    if sp.simplify(at - expr.subs(D, K + E)) != 0:
        return expr
    return at.subs(E, D - K)


def rational_str(x) -> str:
    """An exact rational (or a SymPy expression of a family) as a string such as "-3" or "1/2"."""
    x = sp.nsimplify(x)
    return sp.sstr(x)


def as_fraction(x) -> Fraction:
    """A SymPy rational as a Fraction (raises for an expression with free symbols)."""
    x = sp.nsimplify(x)
    if not x.is_Rational:
        raise ValueError(f"not a rational number: {x}")
    return Fraction(int(x.p), int(x.q))


__all__ = ["a", "b", "c", "n", "g0", "h0", "g", "h", "EXPONENTS", "CONVENTION_NAMES", "FAMILY", "QUANTITIES",
           "VARIABLES", "TSTAR_DEFINITION", "CLAIMED_TSTAR_D", "Check", "effective_terms", "family_subs",
           "family_terms", "exponent", "exponent_table", "finite_d_factor", "claimed_exponents", "exponents_at", "Solution",
           "solve_exponents", "stability_bounds", "stability_note", "readable", "rational_str", "as_fraction"]
