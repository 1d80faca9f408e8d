"""The exact reduced recursion on (alpha_1, ..., alpha_M, delta).

On the set {W_X = diag(alpha) V*, W_P = 0, every column of S two-valued on/off its support}
(invariant under GD: verify.derive.reduction_proof proves it), each column of S is
s_on = e^delta / Z, s_off = 1 / Z, Z = K e^delta + D - K, and the loss is a sum over rows of
r_m(alpha_m, delta) = c_L * (N / 2) * ell(v alpha^2 vn_m ||s||^2, v alpha vn_m <s, s*>, v vn_m ||s*||^2, 0, 0).
GD in the full parameters then reads (with lambda from P^T P = lambda I, beta the logit temperature):
  alpha_m <- alpha_m - eta_V * (d r_m / d alpha_m) / vn_m                       (from (3.3))
  delta   <- delta - eta_KQ * lambda^2 * beta^2 * D / (N K (D - K)) * sum_m d r_m / d delta   (from (3.4))
because grad_{w_m} L = (d r_m/d alpha)/vn_m * v*_m, and the logit gradient of a two-valued column has
on/off values g_on, g_off with K g_on + (D - K) g_off = 0 and d L/d delta_j = K g_on. The logits
beta P^T W_KQ P are linear in W_KQ with factor beta (P^T P = lambda I): the gap moves by beta^2 lambda^2
eta_KQ times the logit gradient, so eta_KQ, lambda and beta enter only through g = eta_KQ lambda^2 beta^2.
For K = 0 and K = D the logit gradient vanishes identically (S stays uniform) and delta is frozen.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..model.sigmas import Sigma
from ..model.symbols import A, B, C, D, K, N, alpha, beta, c_loss, delta, eta_kq, eta_v, lam, mu_u, mu_z, var, vn

CASES = ("interior", "k-zero", "k-equals-d")


def case_of(K_: int, D_: int) -> str:
    return "k-zero" if K_ == 0 else ("k-equals-d" if K_ == D_ else "interior")


def column_quantities(case: str) -> dict:
    """||s||^2, <s, s*>, ||s*||^2 and the support mass p of one two-valued column, in delta."""
    if case == "interior":
        E = sp.exp(delta)
        Z = K * E + D - K
        return {"sq_s": (K * E**2 + D - K) / Z**2, "c_ss": E / Z, "sq_ss": 1 / K, "p": K * E / Z,
                "s_err2": (D - K) ** 2 / Z**2 * D / (K * (D - K))}
    if case == "k-zero":   # S* = 0: no support; S stays uniform (1/D)
        return {"sq_s": 1 / D, "c_ss": sp.Integer(0), "sq_ss": sp.Integer(0), "p": sp.Integer(0), "s_err2": 1 / D}
    # K = D: S* is uniform pooling = S(0); S stays there
    return {"sq_s": 1 / D, "c_ss": 1 / D, "sq_ss": 1 / D, "p": sp.Integer(1), "s_err2": sp.Integer(0)}


@dataclass(frozen=True)
class Reduced:
    """Symbolic reduced objects for one sigma and one case of K."""

    sigma: Sigma
    case: str
    r: sp.Expr            # per-row loss r_m (excess over L_opt)
    dr_dalpha: sp.Expr
    dr_ddelta: sp.Expr
    delta_factor: sp.Expr  # D / (N K (D - K)); 0 when delta is frozen
    cols: dict


@lru_cache(maxsize=None)
def reduced(sigma: Sigma, case: str) -> Reduced:
    """The reduced per-row loss and its partial derivatives (cached)."""
    cols = column_quantities(case)
    # K = 0: the teacher output is sigma(0) = 0 (reducible sigma vanish at 0), so ell = E[sigma(u)^2].
    ell = sigma.kernel.second_moment if case == "k-zero" else sigma.kernel.ell
    a_, b_, c_ = sp.symbols("a_ b_ c_", positive=True)
    e = ell.subs({A: alpha**2 * a_, C: alpha * c_, B: b_, mu_u: 0, mu_z: 0}, simultaneous=True)
    # Factor alpha out of square roots: sqrt(alpha^2 (...)) = alpha sqrt(...) since alpha > 0. For
    # ReLU this is the 'radial' convention at alpha = 0 (the one-sided derivative along v*_m).
    e = e.replace(lambda x: isinstance(x, sp.Pow) and x.exp == sp.Rational(1, 2),
                  lambda x: sp.sqrt(sp.factor(x.base)))
    e = e.subs({a_: var * vn * cols["sq_s"], c_: var * vn * cols["c_ss"], b_: var * vn * cols["sq_ss"]},
               simultaneous=True)
    # Cancel inside roots and write acos(x) as atan2(sqrt(1 - x^2), x): both avoid the loss of
    # half the digits that sqrt(y - x) and acos near 1 suffer at large delta (ReLU's kernel).
    root = lambda x: sp.sqrt(sp.factor(sp.cancel(sp.expand(x))))  # noqa: E731
    e = e.replace(lambda x: isinstance(x, sp.Pow) and x.exp == sp.Rational(1, 2), lambda x: root(x.base))
    e = e.replace(lambda x: isinstance(x, sp.acos), lambda x: sp.atan2(root(1 - x.args[0] ** 2), x.args[0]))
    r = c_loss * N / 2 * e
    dra = sp.diff(r, alpha)
    drd = sp.diff(r, delta) if case == "interior" else sp.Integer(0)
    factor = D / (N * K * (D - K)) if case == "interior" else sp.Integer(0)
    return Reduced(sigma, case, r, dra, drd, factor, cols)


def reduced_step_exprs(sigma: Sigma, case: str):
    """(alpha_next, per-row delta increment) as expressions; the delta update sums the increment over rows.

    alpha_next = alpha - eta_V * dr/dalpha / vn
    delta_next = delta + sum_m inc_m,  inc_m = -eta_KQ * lambda^2 * beta^2 * delta_factor * dr_m/ddelta
    """
    red = reduced(sigma, case)
    a_next = alpha - eta_v * red.dr_dalpha / vn
    inc = -eta_kq * lam**2 * beta**2 * red.delta_factor * red.dr_ddelta
    return a_next, inc
