"""The widened scaling family: every convention a paper might scale with D, each a power of D, by name.

A member scales one convention of the setting (docs/setting.md) as a D-free constant times D^x:

    N         N ∝ D^x            output columns (query positions); 1 <= N <= D
    vstar2    ‖V*‖_F² ∝ D^x      the teacher's size
    v         v ∝ D^x            entry variance of the data (1, 1/d, 1/D, ...)
    beta      β ∝ D^x            logit temperature (1, 1/√D, 1/D, ...)
    p_norm    λ ∝ D^x            P^T P = λ I: the squared column norm of P
    loss_avg  c_L ∝ D^x          loss normalisation (a sum, or an average over M, N or D)
    eta_v     η_V ∝ η D^x        the W_V step, relative to the step size η the claims name
    eta_kq    η_KQ ∝ η D^x       the W_KQ step, likewise

K, η, M and d are held fixed: the claims state their K- and η-dependence, and M, d do not enter
(verify.reconcile.combinations). The D-exponent of a term is lim_{D -> oo} D d log(term)/dD; under the
family it is an affine function of the members' exponents (checked, not assumed, by :func:`d_exponent`).

The terms are the slow-manifold leading terms of verify.derive.asymptotics.leading_terms_general, a
formal asymptotic expansion (it assumes alpha tracks its quasi-static value alpha*(u)).

Example::

    >>> from verify.reconcile.scaling_family import exponent_table, x
    >>> exponent_table()["excess_loss"]["D"] == x("N") - x("eta_kq") - 2 * x("p_norm") - 2 * x("beta")
    True
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..derive.asymptotics import leading_terms_general
from ..model.quantities import KEYS, QUANTITIES as Q
from ..model.symbols import D, K, N, T, beta, c_loss, eta, eta_kq, eta_v, lam, var, vnorm
from ..derive.tidy import tidy

QUANTITIES = KEYS                                 # Theorem 3.1's three quantities (verify.model.quantities)
TERMS = (*QUANTITIES, "tstar")
TEXT = {q: Q[q].label for q in QUANTITIES} | {"tstar": "T*"}
# The variables whose exponents a claim may state besides D (K and η held fixed as D grows; vnorm is
# ‖V*‖_F at fixed D, so its exponent is the claim's ‖V*‖-dependence).
VARIABLES = ("D", "K", "vnorm", "eta", "T")
NU = sp.Symbol("nu", positive=True)          # the D-free constant of ‖V*‖_F = nu D^(x/2)
TSTAR_DEFINITION = ("T* = u0^-2 / (2 c): the time at which the growth term of u^-2(T) = u0^-2 + 2 c T equals its "
                    "start u0^-2 = (D / (D - K))^2 (u: off-support attention mass, Delta u = -c u^3 on the slow "
                    "manifold); for T >> T* the 1/T leading terms hold")


@dataclass(frozen=True)
class Member:
    """One convention scaled as a power of D: ``symbol**power ∝ base D^x``.

    ``reads`` is how the scaled quantity prints ("‖V*‖_F²"); ``weight`` is the power of D one unit of x
    puts on the recursion's combinations (beta and lambda enter squared, as eta_KQ lambda^2 beta^2), used
    to measure how far a solution lies from the reference convention."""

    name: str
    symbol: sp.Symbol
    reads: str
    what: str
    power: int = 1
    relative_to_eta: bool = False
    weight: int = 1

    @property
    def x(self) -> sp.Symbol:
        """The exponent of D (an unknown of the solver)."""
        return sp.Symbol(f"x_{self.name}", real=True)

    def scaled(self) -> sp.Expr:
        """The convention under the family: a D-free constant times D^(x / power) (times eta if relative)."""
        const = NU if self.symbol is vnorm else sp.Symbol(f"{self.name}_0", positive=True)
        return (eta if self.relative_to_eta else 1) * const * D ** (self.x / self.power)

    def text(self, exponent) -> str:
        """"N ∝ D^1", "η_KQ ∝ η D^-3": the member at an exponent (never "N = 1", which reads as N itself)."""
        return f"{self.reads} ∝ {'η ' if self.relative_to_eta else ''}{d_power(exponent)}"


MEMBERS = (
    Member("N", N, "N", "output columns (query positions), 1 <= N <= D"),
    Member("vstar2", vnorm, "‖V*‖_F²", "the teacher's squared Frobenius norm", power=2),
    Member("v", var, "v", "entry variance of the data (1, 1/d, 1/D, ...)"),
    Member("beta", beta, "β", "logit temperature (logits beta P^T W_KQ p_q)", weight=2),
    Member("p_norm", lam, "λ", "P^T P = lambda I: the squared column norm of P", weight=2),
    Member("loss_avg", c_loss, "c_L", "loss normalisation: 1 (sum), 1/(M N), 1/N, 1/D (averages)"),
    Member("eta_v", eta_v, "η_V", "the W_V step, relative to the step size eta the claims name", relative_to_eta=True),
    Member("eta_kq", eta_kq, "η_KQ", "the W_KQ step, relative to eta", relative_to_eta=True),
)
BY_NAME = {m.name: m for m in MEMBERS}


@dataclass(frozen=True)
class Combination:
    """A product of conventions through which they enter GD (verify.reconcile.combinations proves which)."""

    reads: str
    expr: sp.Expr
    relative_to_eta: bool = False

    @property
    def form(self) -> sp.Expr:
        return d_exponent(self.expr)

    def text(self, exponent) -> str:
        return f"{self.reads} ∝ {'η ' if self.relative_to_eta else ''}{d_power(exponent)}"


# g: the effective step of the attention logits; h: the loss scale of the data.
COMBINATIONS = (Combination("η_KQ λ² β²", eta_kq * lam**2 * beta**2, True), Combination("c_L v", c_loss * var))
# Which member carries a combination first: the solver solves for the earliest (so eta_KQ carries
# eta_KQ lambda^2 beta^2 and c_L carries c_L v), and the representative moves the earliest first.
CARRIERS = ("N", "vstar2", "eta_kq", "loss_avg", "eta_v", "v", "beta", "p_norm")
HELD_FIXED = "K, η, M and d fixed; σ = identity"


def x(name: str) -> sp.Symbol:
    """The exponent symbol of the member ``name``."""
    return BY_NAME[name].x


def d_power(exponent) -> str:
    """"D^2", "D^-3", "D^(1/2)", "D^(t_v - 3)": a power of D as printed everywhere."""
    s = exponent if isinstance(exponent, str) else sp.sstr(sp.sympify(exponent))
    simple = s.isidentifier() or s.lstrip("-").isdigit()      # a name ("t_v", "vstar2") or an integer
    return f"D^{s}" if simple else f"D^({s})"


# How every scope and statement of the reconciliation names the family it speaks of.
FAMILY_LABEL = ("over the family {" + ", ".join(m.text(m.name) for m in MEMBERS) + "} (" + HELD_FIXED + ")")


def substitution() -> dict:
    """Every scaled convention: {symbol: its power law in D}."""
    return {m.symbol: m.scaled() for m in MEMBERS}


def exponent_in(expr: sp.Expr, variable: sp.Symbol) -> sp.Expr:
    """lim_{D -> oo} variable d log(expr)/d variable: the exponent of ``variable`` in ``expr`` for large D."""
    logd = sp.expand_log(sp.log(expr), force=True)
    return sp.expand(sp.limit(sp.simplify(variable * sp.diff(logd, variable)), D, sp.oo))


def d_exponent(expr: sp.Expr) -> sp.Expr:
    """The D-exponent of ``expr`` under the family: affine in the members' exponents (else AssertionError)."""
    form = exponent_in(sp.sympify(expr).subs(substitution(), simultaneous=True), D)
    xs = [m.x for m in MEMBERS]
    if any(not sp.diff(form, xi).is_Rational for xi in xs) or not form.subs({xi: 0 for xi in xs}).is_Rational:
        raise AssertionError(f"the D-exponent of {expr} is not affine in the family's exponents: {form}")
    return form


def coefficients(form: sp.Expr) -> tuple[dict, sp.Rational]:
    """({member name: coefficient}, constant) of an affine form in the members' exponents."""
    return ({m.name: sp.Rational(sp.diff(form, m.x)) for m in MEMBERS},
            sp.Rational(form.subs({m.x: 0 for m in MEMBERS})))


@lru_cache(maxsize=None)
def leading_terms() -> dict:
    """The slow-manifold leading terms of L − L_opt, ‖S − S*‖_F, ‖W_X − V*‖_F and T*, every convention
    symbolic (verify.derive.asymptotics.leading_terms_general; T* = u0^-2 / (2 c), u0 = (D - K)/D)."""
    gen = leading_terms_general()
    u0 = (D - K) / D
    return {q: gen[q] for q in QUANTITIES} | {"tstar": sp.factor(sp.simplify(u0**-2 / (2 * gen["c"])))}


def variable_symbol(name: str) -> sp.Symbol:
    """The symbol of a claim variable (``vnorm`` is ‖V*‖_F at fixed D: the family's constant nu)."""
    return {"D": D, "K": K, "vnorm": NU, "eta": eta, "T": T}[name]


@lru_cache(maxsize=None)
def exponent_table() -> dict:
    """{term: {"D": affine form, "K" | "vnorm" | "eta" | "T": rational}} of the leading terms and T*.

    The D-entry is affine in the members' exponents; the others hold for every member (checked)."""
    out = {}
    for q, term in leading_terms().items():
        scaled = term.subs(substitution(), simultaneous=True)
        row = {"D": d_exponent(term)}
        for v in VARIABLES[1:]:
            e = exponent_in(scaled, variable_symbol(v))
            if e.free_symbols:
                raise AssertionError(f"the {v}-exponent of {q} depends on the family: {e}")
            row[v] = e
        out[q] = row
    return out


@lru_cache(maxsize=None)
def finite_d_factor(q: str) -> sp.Expr:
    """term_q / (its D -> oo power law C D^e): the finite-D factor of a leading term, e.g. (D - K)/D for
    L − L_opt. The same for every member of the family (checked), so a fit of q / factor over a finite D grid
    is free of that curvature."""
    term = leading_terms()[q].subs(substitution(), simultaneous=True)
    e = exponent_table()[q]["D"]
    C = sp.limit(sp.simplify(term * D**-e), D, sp.oo)
    f = sp.simplify(term / (C * D**e))
    if f.free_symbols - {D, K}:
        raise AssertionError(f"the finite-D factor of {q} depends on more than D and K: {f}")
    return tidy(f)


__all__ = ["QUANTITIES", "TERMS", "TEXT", "VARIABLES", "NU", "TSTAR_DEFINITION", "Member", "MEMBERS", "BY_NAME",
           "Combination", "COMBINATIONS", "CARRIERS", "HELD_FIXED", "FAMILY_LABEL", "x", "d_power", "substitution", "exponent_in", "d_exponent",
           "coefficients", "leading_terms", "variable_symbol", "exponent_table", "finite_d_factor"]
