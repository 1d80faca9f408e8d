"""The reduced GD map of sigma = identity in slow-manifold coordinates (u, eps), derived with SymPy.

Everything is written in the invariants (r, x, y) of verify.derive.invariants (r = (D - K)/K,
x = eta_V c_L v N/K, y = eta_KQ c_L v lambda^2 beta^2 ||V*||^2/K^2), which fix the trajectory; the
observables carry exact per-regime prefactors. With E = e^delta the off-support attention mass of a
column is u = r/(E + r) (-> 0), and the row multiple is alpha = alpha*(u) + eps u^3, where
alpha*(u) = <s, s*>/||s||^2 is the quasi-static multiple (the fixed point of the alpha-map at fixed u).
Every division by a power of u is done here, symbolically, so the Arb code never divides by a ball
containing 0:

  delta-increment   Delta(alpha, delta) = c u^2 G(u, eps),  c = (1 + r) y / r^2,  G(0, eps) = 1
  u-update          u' = u / R,  R = 1 + (1 - u) c u^2 G X,  X = exprel(c u^2 G) = (e^Delta - 1)/Delta
  cubic decay       (u - u') / u^3 = c Q(u, eps, X),  Q = (1 - u) G X / R,  Q(0, eps, 1) = 1
  alpha-map         alpha' = alpha*(u) + rho(u) (alpha - alpha*(u)),  rho = 1 - x ((1 - u)^2 + u^2/r)
  eps-update        eps' = (rho(u) eps + DD(u, u') c Q) R^3,  DD = divided difference of alpha*
  observables       L - L_opt = pre_L u^2 L2(0) Lt(u, eps),  ||S - S*||_F = pre_S sqrt((1 + r)/r) u,
                    ||W_X - V*||_F = pre_W u |h(u) + eps u^2|,  Lt(0, eps) = h(0) = 1

(pre_L = c_L v N ||V*||^2/K, pre_S = sqrt(N/K), pre_W = ||V*||_F). Q, Lt and h are normalised to 1 at
u = 0, so their enclosures on deep shells are uniform over a family of regimes. Every line is an
:class:`~verify.certify.obligations.Obligation` checked by SymPy against the invariant form of the
generated reduced recursion (verify.derive.invariants, itself checked against verify.derive.reduced_map).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.asymptotics import leading_terms_general
from ..derive.factoring import seeded_sympy
from ..derive.invariants import DEFINITIONS, INVARIANTS, PREFACTORS, V2, invariant_map, invariants_of, r, x, y
from ..model.symbols import D, K, T, alpha, delta, vnorm
from ..run.cache import by_code_version
from .obligations import Obligation, cited, identity, sign

u = sp.Symbol("u", positive=True)
eps = sp.Symbol("epsilon", real=True)
w = sp.Symbol("w", positive=True)          # u' (the next off-support mass)
X = sp.Symbol("X", positive=True)          # exprel(Delta) = (e^Delta - 1) / Delta
Qs, Rs = sp.symbols("Q R", positive=True)  # Q = (u - u')/(c u^3) and R = u/u' as given balls in the eps-update
Gs = sp.Symbol("G", real=True)             # G(u, eps) as a given ball in R and Q
cs = sp.Symbol("c", positive=True)         # the cubic coefficient as a given ball
PARAMS = INVARIANTS                        # (r, x, y): every Arb function takes them last
K_EXP = 3                                  # e = alpha - alpha*(u) = eps u^k with k = 3


@dataclass(frozen=True)
class SlowCoordinates:
    """The expressions of the module docstring and the obligations that tie them to the recursion."""

    alpha_star: sp.Expr
    rho: sp.Expr
    h: sp.Expr
    c: sp.Expr
    G: sp.Expr
    R: sp.Expr             # in (u, G, X, c)
    Q: sp.Expr             # in (u, G, X, c)
    DD: sp.Expr
    eps_next: sp.Expr      # in (u, eps, w, Q, R, c)
    s_over_u: sp.Expr      # ||S - S*||_F / (pre_S u)
    w_over_u: sp.Expr      # h(u) + eps u^2 (w_err = pre_W u |w_over_u|)
    loss0: sp.Expr         # L2(0): (L - L_opt)/(pre_L u^2) at u = 0
    loss_ratio: sp.Expr    # Lt = L2(u, eps)/L2(0)
    u_of_delta: sp.Expr
    eps_of_state: sp.Expr  # in (alpha, u)
    loss_state: sp.Expr    # (L - L_opt)/pre_L in (alpha, delta), for the prefix
    s_state: sp.Expr       # ||S - S*||_F / pre_S in delta, for the prefix
    obligations: tuple


def _no_pole_at_zero(name: str, expr) -> Obligation:
    """The denominator of ``expr`` (a rational function of u) does not vanish at u = 0 (r > 0)."""
    den = sp.fraction(sp.cancel(sp.together(expr)))[1]
    return sign(name, f"the denominator of {name.split(':')[0]} is nonzero at u = 0 (r = (D - K)/K > 0)",
                den.subs(u, 0), "nonzero")


def _column(ob: list):
    """Column quantities in u, with their obligations: delta(u), ||s||^2 K, <s, s*> K, u(delta)."""
    inv = invariant_map()
    E_u = r * (1 - u) / u                             # e^delta at off-support mass u
    u_of_delta = r / (sp.exp(delta) + r)
    ob.append(identity("u-of-delta", "u(delta) = r/(e^delta + r) = (D - K)/(K e^delta + D - K) inverts delta(u)",
                       u_of_delta.subs(delta, sp.log(E_u)), u))
    s_err2 = inv.s_err2.subs(delta, sp.log(E_u))
    s_over_u = sp.sqrt((1 + r) / r)
    ob.append(identity("s-err-in-u", "||S - S*||_F^2 K/N = (1 + r) u^2/r", s_err2, s_over_u**2 * u**2))
    return E_u, u_of_delta, s_over_u


def _alpha_map(ob: list, E_u):
    """alpha*(u), rho(u) from the alpha-map (affine in alpha), with their obligations."""
    inv = invariant_map()
    a_u = inv.a_next.subs(delta, sp.log(E_u))
    ss = (1 - u) ** 2 + u**2 / r                      # K ||s||^2
    a_star = (1 - u) / ss                             # <s, s*>/||s||^2 = (1 - u)/(K ||s||^2)
    rho = 1 - x * ss
    ob.append(identity("alpha-map-affine", "alpha' = alpha*(u) + rho(u) (alpha - alpha*(u)) with "
                       "alpha* = (1 - u)/((1 - u)^2 + u^2/r) and rho = 1 - x ((1 - u)^2 + u^2/r) = 1 - eta_V c_L v N "
                       "||s||^2", a_u, a_star + rho * (alpha - a_star)))
    return a_star, rho


def _increment(ob: list, E_u, a_star):
    """c and G from the delta-increment at alpha = alpha* + eps u^3, with their obligations."""
    inv = invariant_map()
    al = a_star + eps * u**K_EXP
    Delta = inv.inc.subs(delta, sp.log(E_u)).subs(alpha, al)
    G2 = sp.factor(sp.cancel(sp.together(Delta / u**2)))
    c = sp.factor(G2.subs(u, 0))
    G = sp.factor(sp.cancel(sp.together(G2 / c)))
    ob.append(identity("increment-over-u2", "Delta(alpha*(u) + eps u^3, delta(u)) = c u^2 G(u, eps)", Delta,
                       c * u**2 * G))
    ob.append(identity("cubic-coefficient-in-invariants", "c = (1 + r) y / r^2", c, (1 + r) * y / r**2))
    ob.append(identity("G-at-zero", "G(0, eps) = 1", G.subs(u, 0), 1))
    ob.append(_no_pole_at_zero("G: pole", G))
    c_asym = leading_terms_general()["c"].subs(vnorm, sp.sqrt(V2))
    ob.append(identity("cubic-coefficient", "c, written back in the parameters, is the cubic coefficient of "
                       "verify.derive.asymptotics (a second derivation)", c.subs(DEFINITIONS), c_asym))
    return al, c, G


def _decay(ob: list, E_u, u_of_delta):
    """R and Q in a symbol G (they hold for any value of it, so at G = G(u, eps)): the u-update and the decay."""
    Dl = sp.Symbol("Delta", real=True)
    ob.append(identity("u-update", "u(delta + Delta) = u / ((1 - u) e^Delta + u)",
                       u_of_delta.subs(delta, sp.log(E_u) + Dl), u / ((1 - u) * sp.exp(Dl) + u)))
    R = 1 + (1 - u) * cs * u**2 * Gs * X
    Q = (1 - u) * Gs * X / R
    u_next = u / ((1 - u) * (1 + cs * u**2 * Gs * X) + u)      # e^Delta = 1 + Delta X, Delta = c u^2 G
    ob.append(identity("u-next-is-u-over-R", "u' = u / R with e^Delta = 1 + Delta exprel(Delta)", u_next, u / R))
    ob.append(identity("cubic-decay", "(u - u')/u^3 = c Q(u, G, X),  Q = (1 - u) G X / R", (u - u_next) / u**3, cs * Q))
    return R, Q


def _eps_update(ob: list, a_star, rho):
    DD = sp.factor(sp.cancel(sp.together((a_star - a_star.subs(u, w)) / (u - w))))
    ob.append(identity("divided-difference", "DD(u, w) (u - w) = alpha*(u) - alpha*(w) (DD is a polynomial ratio)",
                       DD * (u - w), a_star - a_star.subs(u, w)))
    eps_next = (rho * eps + DD * cs * Qs) * Rs**3
    e_next = rho * eps * u**K_EXP + a_star - a_star.subs(u, w)     # alpha' - alpha*(u') at u' = w
    ob.append(identity("eps-update", "eps' = (alpha' - alpha*(u'))/u'^3 = (rho eps + DD(u, u') c Q) R^3 with "
                       "c Q = (u - u')/u^3, R = u/u'", eps_next.subs({Qs: (u - w) / (cs * u**3), Rs: u / w}),
                       e_next / w**3))
    ob.append(_no_pole_at_zero("DD: pole", DD.subs(w, u)))
    return DD, eps_next


def _observables(ob: list, E_u, a_star, al):
    inv = invariant_map()
    h = sp.factor(sp.cancel(sp.together((a_star - 1) / u)))
    w_over_u = h + eps * u**2
    ob.append(identity("w-err-in-u", "alpha - 1 = u (h(u) + eps u^2), so ||W_X - V*||_F = ||V*||_F u |h + eps u^2|",
                       al - 1, u * w_over_u))
    ob.append(identity("h-at-zero", "h(0) = 1 (alpha*(u) = 1 + u + O(u^2))", h.subs(u, 0), 1))
    r_tot = inv.excess_loss.subs(delta, sp.log(E_u)).subs(alpha, al)
    L2 = sp.factor(sp.cancel(sp.together(r_tot / u**2)))
    loss0 = sp.factor(L2.subs(u, 0))
    ratio = sp.factor(sp.cancel(sp.together(L2 / loss0)))
    ob.append(identity("loss-over-u2", "(L - L_opt)/pre_L = u^2 L2(0) Lt(u, eps)", r_tot, u**2 * loss0 * ratio))
    ob.append(identity("loss-ratio-at-zero", "Lt(0, eps) = 1", ratio.subs(u, 0), 1))
    ob.append(_no_pole_at_zero("Lt: pole", ratio))
    return h, w_over_u, loss0, ratio


def _limits(ob: list, sc_loss0, s_over_u, h) -> None:
    """The leading terms of verify.derive.asymptotics (a second derivation) are these coordinates' limits: with
    u(T)^2 ~ 1/(2 c T), L - L_opt ~ pre_L L2(0)/(2 c T), ||S - S*||_F ~ pre_S sqrt((1 + r)/r)/sqrt(2 c T) and
    ||W_X - V*||_F ~ pre_W h(0)/sqrt(2 c T); so q(T)/leading_q(T) -> Lt/Q, 1/sqrt(Q), |W|/sqrt(Q) on the
    deepest shell (the normalised limit constants)."""
    lt = {k: e.subs(vnorm, sp.sqrt(V2)) for k, e in leading_terms_general().items()}
    uT = 1 / sp.sqrt(2 * lt["c"] * T)
    mine = {"excess_loss": PREFACTORS["excess_loss"] * sc_loss0 * uT**2, "s_err": PREFACTORS["s_err"] * s_over_u * uT,
            "w_err": PREFACTORS["w_err"] * h.subs(u, 0) * uT}
    dk = sp.Symbol("dk", positive=True)                       # D = K + dk: 0 < K < D
    for q, e in mine.items():
        ob.append(identity(f"limit-{q}", f"the leading term of {q} is pre_q times the coordinates' value at u = 0 "
                           "over (2 c T)^p (verify.derive.asymptotics)", e.subs(DEFINITIONS).subs(D, K + dk),
                           lt[q].subs(D, K + dk)))


@lru_cache(maxsize=None)
@by_code_version("slow-coordinates")
@seeded_sympy()
def slow_coordinates() -> SlowCoordinates:
    """Derive the (u, eps) map and its observables from the invariant form of the reduced recursion (a few
    seconds; cached on disk by code version, verify.run.cache)."""
    ob = [cited(o) for o in invariant_map().obligations]
    E_u, u_of_delta, s_over_u = _column(ob)
    a_star, rho = _alpha_map(ob, E_u)
    al, c, G = _increment(ob, E_u, a_star)
    R, Q = _decay(ob, E_u, u_of_delta)
    DD, eps_next = _eps_update(ob, a_star, rho)
    h, w_over_u, loss0, ratio = _observables(ob, E_u, a_star, al)
    _limits(ob, loss0, s_over_u, h)
    inv = invariant_map()
    return SlowCoordinates(a_star, rho, h, c, G, R, Q, DD, eps_next, s_over_u, w_over_u, loss0, ratio, u_of_delta,
                           (alpha - a_star) / u**K_EXP, inv.excess_loss, sp.sqrt(inv.s_err2), tuple(ob))


PARAM_NAMES = ("s", "x", "y")   # the certificate's invariants: s = K/(D - K) = 1/r, x, y (verify.certify.formulas)


def param_values(setting) -> tuple:
    """The setting's (s, x, y) as exact Fractions (verify.derive.invariants gives (r, x, y); s = 1/r)."""
    r_, x_, y_ = invariants_of(setting)
    return (1 / r_, x_, y_)


@lru_cache(maxsize=None)
@by_code_version("cubic-coefficient")
@seeded_sympy()
def cubic_coefficient():
    """slow_coordinates().c, kept on disk alone: a family member's query needs c only, and loading every
    coordinate costs it more than the rest of its work."""
    return slow_coordinates().c


def c_exact(P: tuple) -> Fraction:
    """The cubic coefficient c = (1 + r) y / r^2 = s (1 + s) y at exact invariants P = (s, x, y)."""
    val = cubic_coefficient().subs({r: 1 / sp.Rational(P[0].numerator, P[0].denominator),
                                     y: sp.Rational(P[2].numerator, P[2].denominator)})
    return Fraction(int(sp.numer(val)), int(sp.denom(val)))
