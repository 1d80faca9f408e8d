"""Exact leading asymptotics of Theorem 3.1's three quantities, derived from the reduced recursion.

sigma = identity, reference convention (summed loss, v = 1, lambda = 1, eta_V = eta_KQ = eta).
Let u = 1 - p be the attention mass off the support. The W_X block relaxes geometrically (rate
eta ||S||^2 per step), so alpha follows its quasi-static value alpha*(u) = <s, s*>/||s||^2; along
that slow manifold one GD step changes u by Delta u = -c u^3 + O(u^4). Hence u(T) ~ (2 c T)^(-1/2)
and every quantity is a power series in u(T):
  ||S - S*||_F = sqrt(N D / (K (D - K))) u,  ||W_X - V*||_F = |alpha* - 1| ||V*||_F,  L - L_opt = sum_m r_m.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..model.sigmas.identity import Identity
from ..model.symbols import D, K, N, T, alpha, beta, c_loss, delta, eta, eta_kq, eta_v, lam, var, vn, vnorm
from .reduced_map import reduced, reduced_step_exprs
from .tidy import tidy

u = sp.Symbol("u", positive=True)


@lru_cache(maxsize=None)
def slow_manifold() -> dict:
    """alpha*(u), the cubic coefficient c of Delta u, and the leading coefficients in u."""
    red = reduced(Identity(), "interior")
    ref = {var: 1, c_loss: 1, lam: 1, beta: 1, eta_kq: eta, eta_v: eta}
    # identity: r_m is proportional to vn_m, so summing rows replaces vn by ||V*||_F^2.
    r_tot = red.r.subs(ref).subs(vn, vnorm**2)
    E_u = (D - K) * (1 - u) / (K * u)             # e^delta as a function of u
    a_star = sp.solve(sp.diff(r_tot, alpha), alpha)[0]
    a_star_u = sp.simplify(a_star.subs(delta, sp.log(E_u)))
    _, inc = reduced_step_exprs(Identity(), "interior")
    inc_tot = inc.subs(ref).subs(vn, vnorm**2)
    du = sp.simplify((-u * (1 - u) * inc_tot).subs(alpha, a_star).subs(delta, sp.log(E_u)))
    du_series = sp.series(du, u, 0, 4).removeO()
    coeffs = [sp.simplify(du_series.coeff(u, k)) for k in range(4)]
    if any(cf != 0 for cf in coeffs[:3]):
        raise AssertionError(f"Delta u does not start at u^3: {coeffs}")
    c = sp.factor(-coeffs[3])
    a1 = sp.simplify(sp.series(a_star_u, u, 0, 2).removeO().coeff(u, 1))
    loss_u = sp.simplify(r_tot.subs(alpha, a_star).subs(delta, sp.log(E_u)))
    b2 = sp.simplify(sp.series(loss_u, u, 0, 3).removeO().coeff(u, 2))
    return {"alpha_star": a_star_u, "c": c, "a1": a1, "b2": b2}


@lru_cache(maxsize=None)
def leading_terms() -> dict:
    """Leading terms as T -> infinity of excess_loss (L - L_opt), s_err and w_err (SymPy expressions), keyed as
    verify.model.quantities spells them; "u" the off-support mass."""
    sm = slow_manifold()
    uT = 1 / sp.sqrt(2 * sm["c"] * T)
    return {
        "excess_loss": tidy(sp.factor(sp.simplify(sm["b2"] * uT**2))),
        "s_err": tidy(sp.simplify(sp.sqrt(N * D / (K * (D - K))) * uT).replace(sp.Abs, lambda x: x)),
        "w_err": tidy(sp.simplify(sp.Abs(sm["a1"]) * vnorm * uT).replace(sp.Abs, lambda x: x)),
        "u": tidy(sp.simplify(uT).replace(sp.Abs, lambda x: x)),
    }


@lru_cache(maxsize=None)
def leading_terms_general() -> dict:
    """The same leading terms with every named convention left symbolic: c_L (1 for the summed loss,
    1/(M N) for the mean), v (entry variance), lambda (P^T P = lambda I) and eta_KQ (the W_KQ step;
    eta_V does not enter the leading order because alpha relaxes geometrically for any stable eta_V).
    """
    red = reduced(Identity(), "interior")
    r_tot = red.r.subs(vn, vnorm**2)
    E_u = (D - K) * (1 - u) / (K * u)
    a_star = sp.solve(sp.diff(r_tot, alpha), alpha)[0]
    _, inc = reduced_step_exprs(Identity(), "interior")
    du = sp.simplify((-u * (1 - u) * inc.subs(vn, vnorm**2)).subs(alpha, a_star).subs(delta, sp.log(E_u)))
    ser = sp.series(du, u, 0, 4).removeO()
    if any(sp.simplify(ser.coeff(u, k)) != 0 for k in range(3)):
        raise AssertionError("Delta u does not start at u^3")
    c = sp.factor(-ser.coeff(u, 3))
    loss_u = sp.simplify(r_tot.subs(alpha, a_star).subs(delta, sp.log(E_u)))
    b2 = sp.simplify(sp.series(loss_u, u, 0, 3).removeO().coeff(u, 2))
    a1 = sp.simplify(sp.series(sp.simplify(a_star.subs(delta, sp.log(E_u))), u, 0, 2).removeO().coeff(u, 1))
    uT = 1 / sp.sqrt(2 * c * T)
    pos = lambda e: sp.simplify(e).replace(sp.Abs, lambda x: x)  # noqa: E731  (D > K)
    return {"excess_loss": tidy(sp.factor(b2 * uT**2)), "s_err": tidy(pos(sp.sqrt(N * D / (K * (D - K))) * uT)),
            "w_err": tidy(pos(sp.Abs(a1) * vnorm * uT)), "c": tidy(c)}
