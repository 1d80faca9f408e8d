"""The reduced GD map of sigma = identity in slow-manifold coordinates (u, eps), derived with SymPy.

Coordinates. With E = e^delta, the off-support attention mass of a column is
u = (D - K) / (K E + D - K) (-> 0), and the row multiple alpha is written as
alpha = alpha*(u) + eps u^3, where alpha*(u) = <s, s*> / ||s||^2 is the quasi-static multiple
(the fixed point of the alpha-map at fixed u). Every division by a power of u is done here,
symbolically, so that the Arb code never divides by a ball containing 0:

  delta-increment   Delta(alpha, delta) = u^2 G(u, eps)                  (G analytic at u = 0)
  u-update          u' = u / R,  R = 1 + (1 - u) u^2 G X,  X = exprel(u^2 G) = (e^Delta - 1)/Delta
  cubic decay       (u - u') / u^3 = Q(u, eps, X) = (1 - u) G X / R,  Q(0, eps, 1) = c
  alpha-map         alpha' = alpha*(u) + rho(u) (alpha - alpha*(u)),  rho = 1 - eta_V c_L v N ||s||^2
  eps-update        eps' = (rho(u) eps + DD(u, u') Q) R^3,  DD = divided difference of alpha*
  observables       ||S - S*||_F = sqrt(N D / (K (D - K))) u,  ||W_X - V*||_F = u |h(u) + eps u^2| ||V*||_F,
                    L - L_opt = u^2 L2(u, eps)

Every line above is an :class:`~verify.certify.obligations.Obligation` checked by SymPy against the
generated reduced recursion (verify.derive.reduced), with every named convention left symbolic:
c_L (loss sum / mean), v (entry variance), lambda (P^T P = lambda I), eta_V and eta_KQ.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..cache import by_code_version
from ..derive.reduced import column_quantities, reduced, reduced_step_exprs
from ..derive.symbols import D, K, N, alpha, beta, c_loss, delta, eta_kq, eta_v, lam, var, vn, vnorm
from ..model.sigma import Sigma
from .obligations import Obligation, identity, sign

u = sp.Symbol("u", positive=True)
eps = sp.Symbol("epsilon", real=True)
w = sp.Symbol("w", positive=True)          # u' (the next off-support mass)
X = sp.Symbol("X", positive=True)          # exprel(Delta) = (e^Delta - 1) / Delta
Qs, Rs = sp.symbols("Q R", positive=True)  # (u - u')/u^3 and u/u' as given balls in the eps-update
Gs = sp.Symbol("G", real=True)             # G(u, eps) as a given ball in R and Q
V2 = sp.Symbol("V2", positive=True)        # ||V*||_F^2
PARAMS = (D, K, N, var, c_loss, eta_v, eta_kq, lam, beta, V2)
K_EXP = 3                                  # e = alpha - alpha*(u) = eps u^k with k = 3


@dataclass(frozen=True)
class SlowCoordinates:
    """The expressions of the module docstring and the obligations that tie them to the recursion."""

    alpha_star: sp.Expr
    rho: sp.Expr
    h: sp.Expr
    G: sp.Expr
    R: sp.Expr
    Q: sp.Expr
    DD: sp.Expr
    eps_next: sp.Expr       # in (u, eps, w, Q, R)
    s_over_u: sp.Expr
    w_over_u: sp.Expr       # h(u) + eps u^2 (w_err = u |w_over_u| ||V*||_F)
    loss_over_u2: sp.Expr
    u_of_delta: sp.Expr
    eps_of_state: sp.Expr   # in (alpha, u)
    c: sp.Expr
    obligations: tuple


def _no_pole_at_zero(name: str, expr) -> Obligation:
    """The denominator of ``expr`` (a rational function of u) does not vanish at u = 0 (0 < K < D)."""
    dk = sp.Symbol("dk", positive=True)
    den = sp.fraction(sp.cancel(sp.together(expr)))[1]
    return sign(name, f"the denominator of {name.split(':')[0]} is nonzero at u = 0 (0 < K < D)",
                den.subs(u, 0).subs(D, K + dk), "nonzero")


@lru_cache(maxsize=None)
@by_code_version("slow-coordinates")
def slow_coordinates() -> SlowCoordinates:
    """Derive the (u, eps) map and its observables from the reduced recursion (~7 s; cached on disk by code
    version, verify.cache)."""
    ob = []
    a_next, inc = reduced_step_exprs(Sigma("identity"), "interior")
    red = reduced(Sigma("identity"), "interior")
    cols = column_quantities("interior")
    # 1. The M-row recursion is two-dimensional for sigma = identity from zero initialisation.
    ob.append(identity("rows-share-alpha", "d alpha_m'/d vn_m = 0: the alpha-map does not depend on ||v*_m||^2, "
                       "so from alpha_m(0) = 0 every row has the same alpha_m(t) (induction on t)",
                       sp.diff(a_next, vn)))
    ob.append(identity("increment-linear-in-vn", "inc_m = vn_m d inc_m/d vn_m: with equal alpha_m, "
                       "delta' - delta = sum_m inc_m = inc(vn = ||V*||_F^2)", inc - vn * sp.diff(inc, vn)))
    ob.append(identity("loss-linear-in-vn", "r_m = vn_m d r_m/d vn_m: L - L_opt = sum_m r_m = r(vn = ||V*||_F^2)",
                       red.r - vn * sp.diff(red.r, vn)))
    to_total = {vn: V2}
    # 2. Column quantities in u.
    E_u = (D - K) * (1 - u) / (K * u)                 # e^delta at off-support mass u
    d_u = sp.log(E_u)
    ss = (1 - u) ** 2 / K + u**2 / (D - K)            # ||s||^2
    cs = (1 - u) / K                                  # <s, s*>
    u_of_delta = sp.simplify(1 - cols["p"])
    ob.append(identity("u-of-delta", "u(delta) = 1 - p(delta) = (D - K)/(K e^delta + D - K) inverts delta(u)",
                       u_of_delta.subs(delta, d_u), u))
    ob.append(identity("norm-s-in-u", "||s||^2 = (1 - u)^2/K + u^2/(D - K)", cols["sq_s"].subs(delta, d_u), ss))
    ob.append(identity("inner-s-in-u", "<s, s*> = (1 - u)/K", cols["c_ss"].subs(delta, d_u), cs))
    a_star = cs / ss
    rho = 1 - eta_v * c_loss * var * N * ss
    # 3. The alpha-map is affine in alpha with fixed point alpha*(u).
    ob.append(identity("alpha-map-affine", "alpha' = alpha*(u) + rho(u) (alpha - alpha*(u)), "
                       "rho = 1 - eta_V c_L v N ||s||^2", a_next.subs(delta, d_u), a_star + rho * (alpha - a_star)))
    # 4. The delta-increment is u^2 G(u, eps), G analytic at u = 0.
    al = a_star + eps * u**K_EXP
    Delta = inc.subs(to_total).subs(delta, d_u).subs(alpha, al)
    G = sp.factor(sp.cancel(sp.together(Delta / u**2)))
    ob.append(identity("increment-over-u2", "Delta(alpha*(u) + eps u^3, delta(u)) = u^2 G(u, eps)", Delta, u**2 * G))
    ob.append(_no_pole_at_zero("G: pole", G))
    # 5. u' from delta' = delta + Delta, and the cubic decay with X = exprel(Delta).
    Dl = sp.Symbol("Delta", real=True)
    ob.append(identity("u-update", "u(delta + Delta) = u / ((1 - u) e^Delta + u)",
                       u_of_delta.subs(delta, d_u + Dl), u / ((1 - u) * sp.exp(Dl) + u)))
    # R and Q are written in a symbol G (they hold for any value of it; the Arb code passes the ball
    # of G(u, eps) computed once): identities in G are identities at G = G(u, eps).
    R = 1 + (1 - u) * u**2 * Gs * X
    Q = (1 - u) * Gs * X / R
    u_next = u / ((1 - u) * (1 + u**2 * Gs * X) + u)    # e^Delta = 1 + Delta X, Delta = u^2 G
    ob.append(identity("u-next-is-u-over-R", "u' = u / R with e^Delta = 1 + Delta exprel(Delta)", u_next, u / R))
    ob.append(identity("cubic-decay", "(u - u')/u^3 = Q(u, G, X) = (1 - u) G X / R", (u - u_next) / u**3, Q))
    c_exact = G.subs(u, 0)
    from ..derive.asymptotics import leading_terms_general
    c_asym = leading_terms_general()["c"].subs(vnorm, sp.sqrt(V2))
    ob.append(identity("cubic-coefficient", "Q at u = 0, X = exprel(0) = 1 is G(0, eps) = c, the cubic coefficient "
                       "of verify.derive.asymptotics (a second derivation)", Q.subs({u: 0, X: 1, Gs: G}), c_asym))
    # 6. The eps-update through the divided difference of alpha*.
    DD = sp.factor(sp.cancel(sp.together((a_star - a_star.subs(u, w)) / (u - w))))
    ob.append(identity("divided-difference", "DD(u, w) (u - w) = alpha*(u) - alpha*(w) (DD is a polynomial ratio)",
                       DD * (u - w), a_star - a_star.subs(u, w)))
    eps_next = (rho * eps + DD * Qs) * Rs**3
    e_next = rho * eps * u**K_EXP + a_star - a_star.subs(u, w)     # alpha' - alpha*(u') at u' = w
    ob.append(identity("eps-update", "eps' = (alpha' - alpha*(u'))/u'^3 = (rho eps + DD(u, u') Q) R^3 with "
                       "Q = (u - u')/u^3, R = u/u'", eps_next.subs({Qs: (u - w) / u**3, Rs: u / w}), e_next / w**3))
    ob.append(_no_pole_at_zero("DD: pole", DD.subs(w, u)))
    # 7. Observables.
    s_over_u = sp.sqrt(N * D / (K * (D - K)))
    ob.append(identity("s-err-in-u", "||S - S*||_F^2 = N D/(K (D - K)) u^2", N * cols["s_err2"].subs(delta, d_u),
                       s_over_u**2 * u**2))
    h = sp.factor(sp.cancel(sp.together((a_star - 1) / u)))
    w_over_u = h + eps * u**2
    ob.append(identity("w-err-in-u", "alpha - 1 = u (h(u) + eps u^2), so ||W_X - V*||_F = u |h + eps u^2| ||V*||_F",
                       al - 1, u * w_over_u))
    ob.append(identity("h-at-zero", "h(0) = 1 (alpha*(u) = 1 + u + O(u^2))", h.subs(u, 0), 1))
    r_tot = red.r.subs(to_total).subs(delta, d_u).subs(alpha, al)
    L2 = sp.factor(sp.cancel(sp.together(r_tot / u**2)))
    ob.append(identity("loss-over-u2", "L - L_opt = u^2 L2(u, eps)", r_tot, u**2 * L2))
    ob.append(_no_pole_at_zero("L2: pole", L2))
    eps_of_state = (alpha - a_star) / u**K_EXP
    return SlowCoordinates(a_star, rho, h, G, R, Q, DD, eps_next, s_over_u, w_over_u, L2, u_of_delta,
                           eps_of_state, sp.factor(c_exact), tuple(ob))


@dataclass(frozen=True)
class ArbFunctions:
    """The expressions of :class:`SlowCoordinates` compiled to Arb (generated code, verify.derive.codegen,
    integer powers by verify.certify.arbfun.ipow)."""

    G: object            # (u, eps, *P) -> (G, dG/du, dG/deps)  (the mean-value form needs the partials)
    G0: object           # (u, eps, *P) -> G alone (at the box centre)
    RQ: object           # (u, G, X, *P) -> (R, Q)
    eps_next: object     # (u, eps, w, Q, R, *P)
    loss_over_u2: object  # (u, eps, *P) -> (L2, dL2/du, dL2/deps)
    w_over_u: object     # (u, eps, *P) -> (W, dW/du, dW/deps)
    loss_over_u2_0: object  # (u, eps, *P) -> L2 alone
    w_over_u_0: object   # (u, eps, *P) -> W alone
    s_over_u: object     # (*P)
    u_of_delta: object   # (delta, *P)
    eps_of_state: object  # (alpha, u, *P)
    c: object            # (*P)
    rho: object          # (u, *P)


@lru_cache(maxsize=None)
def arb_functions() -> ArbFunctions:
    sc = slow_coordinates()
    from .arbfun import lambdify_arb
    f = lambda args, e: lambdify_arb(tuple(args) + PARAMS, e)  # noqa: E731
    with_partials = lambda e: (e, sp.diff(e, u), sp.diff(e, eps))  # noqa: E731
    return ArbFunctions(
        G=f((u, eps), with_partials(sc.G)), G0=f((u, eps), sc.G), RQ=f((u, Gs, X), (sc.R, sc.Q)), eps_next=f((u, eps, w, Qs, Rs), sc.eps_next),
        loss_over_u2=f((u, eps), with_partials(sc.loss_over_u2)), w_over_u=f((u, eps), with_partials(sc.w_over_u)),
        loss_over_u2_0=f((u, eps), sc.loss_over_u2), w_over_u_0=f((u, eps), sc.w_over_u),
        s_over_u=f((), sc.s_over_u),
        u_of_delta=f((delta,), sc.u_of_delta), eps_of_state=f((alpha, u), sc.eps_of_state), c=f((), sc.c),
        rho=f((u,), sc.rho))


def param_values(s) -> tuple:
    """The setting's exact parameters in PARAMS order (Fractions), with V2 = ||V*||_F^2."""
    from fractions import Fraction
    return (Fraction(s.D), Fraction(s.K), Fraction(s.N), s.law.var, s.loss_scale, s.eta_v, s.eta_kq, s.p_lambda,
            s.beta, s.vstar_norm2())
