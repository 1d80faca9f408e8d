"""Step-size conditions derived from the loss: positivity of alpha (Lemma C.2) and loss monotonicity.

sigma = identity, centred entries (mu = 0), W_P = 0. From the closed form of verify.derive.loss,
dL/dW_X = c_L v (||S||_F^2 W_X - <S, S*> V*) for *any* attention S, so from W_X(0) = 0 the W_X block
stays on the line through V* (every row a multiple alpha of the same row of V*) and

    alpha(t+1) = (1 - eta_V c_L v ||S(t)||_F^2) alpha(t) + eta_V c_L v <S(t), S*>.          (*)

Each column of S is a probability vector, so ||S||_F^2 <= N, and <S, S*> > 0 when K >= 1 (softmax
entries are positive). Hence, by induction on t, eta_V c_L v N <= 1 gives alpha(t) >= eta_V c_L v
<S(t-1), S*> > 0 for every t >= 1: the toolkit's sufficient condition for Lemma C.2 (identity).

Loss monotonicity: two curvatures bound the admissible step along the trajectory.
- W_X block: d^2 L / d alpha^2 / ||V*||^2 = c_L v ||S||^2 -> c_L v N / K as S -> S*; GD on this
  block diverges (the loss eventually increases) when eta_V > eta_alpha = 2 K / (c_L v N).
- delta block (the on/off logit gap), along the slow manifold alpha = alpha*(delta) (the alpha
  block is fast): the effective curvature is the Schur complement
  H(delta) = lambda^2 D / (N K (D - K)) (r_dd - r_ad^2 / r_aa); with x = K e^{2 delta} / (D - K) it
  equals 2 D c_L lambda^2 v ||V*||^2 / (K^2 (D - K)) * x (x - 1) / (1 + x)^3, whose maximum over
  x > 0 is at x = 2 + sqrt(3) with value sqrt(3)/18. So eta_delta = 6 sqrt(3) K^2 (D - K) /
  (D c_L lambda^2 v ||V*||^2).
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..model.sigma import Sigma
from .reduced import reduced, reduced_step_exprs
from .symbols import D, K, N, alpha, c_loss, delta, eta_v, lam, var, vn, vnorm

E = sp.Symbol("E", positive=True)       # e^delta
x = sp.Symbol("x", positive=True)       # K e^{2 delta} / (D - K)


@lru_cache(maxsize=None)
def alpha_recursion_identity() -> tuple[bool, str]:
    """(*) in the reduced coordinates: alpha' - [(1 - eta c_L v N ||s||^2) alpha + eta c_L v N <s,s*>] == 0."""
    a_next, _ = reduced_step_exprs(Sigma("identity"), "interior")
    cols = reduced(Sigma("identity"), "interior").cols
    rhs = (1 - eta_v * c_loss * var * N * cols["sq_s"]) * alpha + eta_v * c_loss * var * N * cols["c_ss"]
    ok = sp.simplify(a_next - rhs) == 0
    return ok, "alpha' = (1 - eta_V c_L v ||S||^2) alpha + eta_V c_L v <S,S*>  (||S||^2 = N ||s||^2, <S,S*> = N <s,s*>)"


@lru_cache(maxsize=None)
def wx_gradient_identity(M: int = 2, d: int = 3, Dn: int = 4, Nn: int = 2) -> tuple[bool, str]:
    """dL/dW_X = v (||S||^2 W_X - <S,S*> V*) at mu = 0 for an arbitrary S, from the closed form of
    verify.derive.loss (entry by entry at explicit dimensions: an exact polynomial identity)."""
    from .loss import matrix_form, mu
    sym = lambda name, r, c: sp.Matrix(r, c, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))  # noqa: E731
    WX, V, WP, P, S, Ss = sym("w", M, d), sym("v", M, d), sym("p", M, Dn), sym("P", Dn, Dn), sym("s", Dn, Nn), \
        sym("t", Dn, Nn)
    mf = matrix_form(M, d, Dn, Nn)
    sy = mf.symbols
    subs = {sy["W_X"]: WX, sy["V"]: V, sy["W_P"]: WP, sy["P"]: P, sy["S"]: S, sy["S_star"]: Ss,
            sy["J"]: sp.ones(d, Dn)}
    L = mf.loss.subs(subs).doit().subs(mu, 0)
    grad = sp.Matrix(M, d, lambda i, j: sp.diff(L, WX[i, j]))
    sq_s = sum(z**2 for z in S)
    c_ss = sum(a * b for a, b in zip(S, Ss))
    target = var * (sq_s * WX - c_ss * V)
    ok = all(sp.expand(g) == 0 for g in grad - target)
    return ok, (f"dL/dW_X - v(||S||^2 W_X - <S,S*> V*) expands to 0 entry by entry (M={M}, d={d}, D={Dn}, N={Nn}, "
                "mu = 0, any W_P, P, S)")


def positivity_condition() -> sp.Expr:
    """eta_V c_L v N <= 1: the sufficient condition for alpha(t) > 0 for all t >= 1 (identity)."""
    return sp.Le(eta_v * c_loss * var * N, 1)


@lru_cache(maxsize=None)
def delta_curvature() -> dict:
    """The slow-manifold curvature of the delta block, its closed form in x and its maximum."""
    red = reduced(Sigma("identity"), "interior")
    r = red.r.subs(vn, vnorm**2)
    raa, rad, rdd = sp.diff(r, alpha, 2), sp.diff(r, alpha, delta), sp.diff(r, delta, 2)
    a_star = red.cols["c_ss"] / red.cols["sq_s"]
    H = lam**2 * D / (N * K * (D - K)) * (rdd - rad**2 / raa)
    H_E = sp.factor(sp.simplify(H.subs(alpha, a_star).subs(delta, sp.log(E))))
    pref = 2 * D * c_loss * lam**2 * var * vnorm**2 / (K**2 * (D - K))
    h = x * (x - 1) / (1 + x) ** 3
    closed_ok = sp.simplify(H_E - (pref * h).subs(x, K * E**2 / (D - K))) == 0
    crit = sp.solve(sp.diff(h, x), x)
    hmax = sp.nsimplify(sp.simplify(h.subs(x, 2 + sp.sqrt(3))))
    # the maximum is global on x > 0: h is smooth there, h(0+) = h(+inf) = 0, and its only critical
    # points are 2 - sqrt(3) (where h < 0) and 2 + sqrt(3) (where h = sqrt(3)/18 > 0)
    xmax = (set(crit) == {2 - sp.sqrt(3), 2 + sp.sqrt(3)} and sp.limit(h, x, 0, "+") == 0
            and sp.limit(h, x, sp.oo) == 0 and h.subs(x, 2 - sp.sqrt(3)).is_negative and hmax.is_positive)
    return {"H_E": H_E, "closed_form_ok": closed_ok, "x_max": 2 + sp.sqrt(3), "x_max_ok": bool(xmax),
            "critical_points": crit, "h_max": hmax, "H_max": sp.simplify(pref * hmax)}


@lru_cache(maxsize=None)
def loss_thresholds() -> dict:
    """eta_alpha (W_X block, asymptotic divergence) and eta_delta (delta block) and their minimum."""
    eta_alpha = 2 * K / (c_loss * var * N)
    eta_delta = sp.simplify(2 / delta_curvature()["H_max"])
    return {"eta_alpha": eta_alpha, "eta_delta": eta_delta, "eta_c": sp.Min(eta_alpha, eta_delta)}


def thresholds_at(setting) -> dict:
    """The thresholds at one setting's exact parameters (SymPy numbers; eta_delta is irrational)."""
    th = loss_thresholds()
    vals = {D: setting.D, K: setting.K, N: setting.N, c_loss: sp.Rational(setting.loss_scale),
            var: sp.Rational(setting.law.var),
            # lambda and beta enter the delta block only as (lambda beta)^2 (verify.derive.reduced)
            lam: sp.Rational(setting.p_lambda) * sp.Rational(setting.beta),
            vnorm: sp.sqrt(sp.Rational(setting.vstar_norm2()))}
    a = sp.nsimplify(th["eta_alpha"].subs(vals))
    dl = sp.simplify(th["eta_delta"].subs(vals))
    return {"eta_alpha": a, "eta_delta": dl, "eta_c": sp.Min(a, dl)}


__all__ = ["alpha_recursion_identity", "wx_gradient_identity", "positivity_condition", "delta_curvature",
           "loss_thresholds", "thresholds_at"]
