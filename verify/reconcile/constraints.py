"""The conditions a member of the family must meet besides the claims, as linear inequalities on exponents.

Each condition is "a ratio stays bounded as D -> oo": its D-exponent is <= 0 (an exponent 0 holds with
the D-free constants chosen small enough; a positive one fails at large D whatever the constants):

* W_X block stable:  eta_V c_L v N < 2K (verify.derive.stability: the alpha block diverges beyond it);
* delta block stable: eta_KQ lambda^2 beta^2 below the slow-manifold threshold g_max = eta_delta lambda^2
  (verify.derive.stability derives eta_delta at beta = 1; beta enters with lambda as (lambda beta)^2);
* the W_X block relaxes within T*: the alpha relaxation time at the uniform start,
  1 / (eta_V c_L v ||S(0)||_F^2) = D / (eta_V c_L v N), is at most T* (otherwise T* is not the start of
  the 1/T phase and the rates cannot hold from T* on);
* 1 <= N <= D (N distinct query positions).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..derive.reduced_map import column_quantities
from ..derive.stability import loss_thresholds
from ..model.symbols import D, N, beta, c_loss, delta, eta_kq, eta_v, lam, var
from .scaling_family import coefficients, d_exponent, leading_terms


@dataclass(frozen=True)
class Constraint:
    """``form <= 0``: the D-exponent of ``ratio`` (an affine form in the members' exponents)."""

    id: str
    text: str
    ratio: sp.Expr
    form: sp.Expr

    def as_dict(self) -> dict:
        coef, const = coefficients(self.form)
        return {"id": self.id, "text": self.text, "ratio": sp.sstr(self.ratio),
                "inequality": f"{sp.sstr(self.form)} <= 0",
                "coefficients": {k: sp.sstr(v) for k, v in coef.items() if v != 0}, "constant": sp.sstr(const)}


def wx_relaxation_time() -> sp.Expr:
    """1 / (eta_V c_L v ||S(0)||_F^2): the alpha block's relaxation time at the uniform start (delta = 0)."""
    sq_S0 = N * column_quantities("interior")["sq_s"].subs(delta, 0)
    return sp.simplify(1 / (eta_v * c_loss * var * sq_S0))


@lru_cache(maxsize=None)
def delta_threshold() -> sp.Expr:
    """g_max: the largest eta_KQ lambda^2 beta^2 for which the delta block is stable along the slow manifold."""
    return sp.simplify(loss_thresholds()["eta_delta"] * lam**2)


@lru_cache(maxsize=None)
def constraints() -> tuple[Constraint, ...]:
    """The conditions of the module docstring."""
    th = loss_thresholds()
    rows = [
        ("wx-stable", "W_X block stable: η_V c_L v N < 2K (verify.derive.stability)", eta_v / th["eta_alpha"]),
        ("delta-stable", "δ block stable: η_KQ λ² β² < g_max = 6√3 K² (D − K)/(D c_L v ‖V*‖_F²) "
                         "(verify.derive.stability)", eta_kq * lam**2 * beta**2 / delta_threshold()),
        ("wx-within-tstar", "the W_X block relaxes within T*: D/(η_V c_L v N) <= T*",
         wx_relaxation_time() / leading_terms()["tstar"]),
        ("n-at-least-1", "N >= 1", 1 / N),
        ("n-at-most-d", "N <= D (distinct query positions)", N / D),
    ]
    return tuple(Constraint(i, text, sp.simplify(ratio), d_exponent(ratio)) for i, text, ratio in rows)


__all__ = ["Constraint", "wx_relaxation_time", "delta_threshold", "constraints"]
