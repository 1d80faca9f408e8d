"""Lemma C.2's large steps towards D -> oo: the chart omega = e^-delta/rho of the band map, regular at rho = 0.

The band certificate (verify.certify.positivity) works in w = e^-delta in [0, 1]; as rho = K/D -> 0 its peak of
alpha grows like sqrt(log(1/rho)/kappa) (docs/atlas.md, "D -> oo"), so no band constant in the state holds there.
In omega = w/rho in (0, 1/rho] (delta >= 0 is rho omega <= 1; omega -> 0 is delta -> oo) the same map reads

    alpha' = (1 - x a) alpha + b,     omega' = omega e^-inc,
    a   = (1 + rho (1 - rho) omega^2)/(1 + (1 - rho) omega)^2,     b = x/(1 + (1 - rho) omega),
    inc = alpha kappa x omega (1 + (1 - rho) omega - alpha (1 - rho omega))/(1 + (1 - rho) omega)^3,

every part regular at rho = 0 (:data:`CLOSED`; the obligation "omega-chart" proves them equal to the generated map
of verify.derive.invariants through positivity.band_map). What the chart shows (each an obligation below):

- a <= 1 wherever delta >= 0 ("a-at-most-1"), so where x a <= 1 an alpha >= 0 maps to alpha' >= b > 0 with no upper
  bound on alpha; only the danger zone x a > 1 (at rho = 0: omega < sqrt(x) - 1 < 0.38) needs one.
- alpha' = alpha exactly on alpha = alpha*(omega) = (1 + (1 - rho) omega)/(1 + rho (1 - rho) omega^2) ("fixed-alpha"),
  1 at the start omega = 1/rho and 1 + omega at rho = 0: there the limit map has a whole curve of fixed points,
  with transverse multiplier 1 - x (1 + kappa omega^2)/(1 + omega)^2 ("multiplier-rho-0", below -1 for large
  kappa x omega: oscillation).
- inc > 0 exactly below alpha = T = (1 + (1 - rho) omega)/(1 - rho omega) ("inc-sign"), and alpha* <= T
  ("fixed-below-threshold"): near its fixed curve alpha drives delta up.

The candidate set S_gamma = {0 <= alpha <= gamma alpha*(omega, rho), 0 < rho omega <= 1} is measured here in
float64 (:func:`sample_set`: random states of the set, :func:`orbits`: members from (0, 0)) and probed in Arb on
boxes (verify.certify.positivity_probe); what those measurements found is in docs/atlas.md ("D -> oo: the omega
chart and the ratio set"). Nothing here certifies: the measurements are design, not evidence.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..derive.invariants import x
from ..model.symbols import alpha
from .positivity import band_map, identity_obligation, kappa, rho, w

omega = sp.Symbol("omega", positive=True)           # e^-delta/rho: delta >= 0 is rho omega <= 1
_d = 1 + (1 - rho) * omega
CLOSED = {"a": (1 + rho * (1 - rho) * omega**2) / _d**2, "b": x / _d,
          "inc": alpha * kappa * x * omega * (_d - alpha * (1 - rho * omega)) / _d**3}
ASTAR = _d / (1 + rho * (1 - rho) * omega**2)       # alpha' = alpha there (at rho = 0: 1 + omega)
THRESHOLD = _d / (1 - rho * omega)                  # inc > 0 exactly below it (rho omega < 1)


@lru_cache(maxsize=None)
def chart() -> dict:
    """The generated map's parts a = (1 - d alpha'/d alpha)/x, b, inc written in omega (w = rho omega)."""
    bm = band_map()
    sub = lambda e: sp.factor(sp.cancel(sp.together(e.subs(w, rho * omega))))  # noqa: E731
    return {"a": sub((1 - bm["f"]) / x), "b": sub(bm["b"]), "inc": sub(bm["inc"])}


@lru_cache(maxsize=None)
def obligations() -> tuple:
    """The chart's facts as SymPy identities on the generated map (module docstring)."""
    c = chart()
    out = []

    def ob(key, name, expr_zero):
        out.append(identity_obligation(key, name, expr_zero))
    ob("omega-chart", "in omega = e^-delta/rho the generated map's a, b and inc are the closed forms CLOSED",
       sum((c[k] - CLOSED[k]) ** 2 for k in CLOSED))
    # 1 - a = (1 - rho) omega (2 + (1 - 2 rho) omega)/(1 + (1 - rho) omega)^2, and 2 + (1 - 2 rho) omega >= 0 when
    # rho omega <= 1 (it is >= omega when rho > 1/2, >= 2 otherwise): a <= 1 wherever delta >= 0
    ob("a-at-most-1", "1 - a = (1 - rho) omega (2 + (1 - 2 rho) omega)/(1 + (1 - rho) omega)^2 (>= 0 for rho omega "
       "<= 1)", (1 - c["a"]) - (1 - rho) * omega * (2 + (1 - 2 * rho) * omega) / _d**2)
    ob("limit-rho-0", "at rho = 0: a = 1/(1 + omega)^2, b = x/(1 + omega), inc = alpha kappa x omega (1 + omega - "
       "alpha)/(1 + omega)^3", (c["a"].subs(rho, 0) - 1 / (1 + omega) ** 2) ** 2
       + (c["b"].subs(rho, 0) - x / (1 + omega)) ** 2
       + (c["inc"].subs(rho, 0) - alpha * kappa * x * omega * (1 + omega - alpha) / (1 + omega) ** 3) ** 2)
    ob("start", "at the start omega = 1/rho (delta = 0): a = rho, b = x rho, inc = alpha kappa x rho",
       (c["a"].subs(omega, 1 / rho) - rho) ** 2 + (c["b"].subs(omega, 1 / rho) - x * rho) ** 2
       + (c["inc"].subs(omega, 1 / rho) - alpha * kappa * x * rho) ** 2)
    ob("fixed-alpha", "alpha' = alpha at alpha* = (1 + (1 - rho) omega)/(1 + rho (1 - rho) omega^2) (1 + omega at "
       "rho = 0)", ((1 - x * c["a"]) * ASTAR + c["b"] - ASTAR) ** 2 + (ASTAR.subs(rho, 0) - 1 - omega) ** 2)
    ob("inc-sign", "inc = alpha kappa x omega (1 - rho omega) (T - alpha)/(1 + (1 - rho) omega)^3 with "
       "T = (1 + (1 - rho) omega)/(1 - rho omega)",
       c["inc"] - alpha * kappa * x * omega * (1 - rho * omega) * (THRESHOLD - alpha) / _d**3)
    ob("fixed-below-threshold", "T - alpha* = rho omega (1 + (1 - rho) omega)^2/((1 - rho omega)(1 + rho (1 - rho) "
       "omega^2)) (>= 0 for rho omega < 1)",
       THRESHOLD - ASTAR - rho * omega * _d**2 / ((1 - rho * omega) * (1 + rho * (1 - rho) * omega**2)))
    a1 = (1 - x * c["a"]) * alpha + c["b"]
    o1 = omega * sp.exp(-c["inc"])
    J = sp.Matrix([[sp.diff(a1, alpha), sp.diff(a1, omega)], [sp.diff(o1, alpha), sp.diff(o1, omega)]])
    J0 = J.subs(rho, 0).subs(alpha, 1 + omega)
    mult = 1 - x * (1 + kappa * omega**2) / (1 + omega) ** 2
    ob("multiplier-rho-0", "at rho = 0 on alpha = 1 + omega the Jacobian has eigenvalues 1 (along the curve) and "
       "1 - x (1 + kappa omega^2)/(1 + omega)^2", (J0.trace() - 1 - mult) ** 2 + (J0.det() - mult) ** 2)
    return tuple(out)


def step_float(al, om, rho_, x_, kappa_):
    """One step of the closed forms in float64 (numpy arrays or floats): (alpha', omega', inc)."""
    import numpy as np  # heavy: numpy
    d = 1 + (1 - rho_) * om
    a = (1 + rho_ * (1 - rho_) * om**2) / d**2
    inc = al * kappa_ * x_ * om * (d - al * (1 - rho_ * om)) / d**3
    return (1 - x_ * a) * al + x_ / d, om * np.exp(-inc), inc


def astar_float(om, rho_):
    return (1 + (1 - rho_) * om) / (1 + rho_ * (1 - rho_) * om**2)


def orbits(rho_, x_, kappa_, steps: int, gamma: float = 2.0) -> dict:
    """Members (arrays of equal length, rho > 0) iterated from (alpha, delta) = (0, 0), i.e. alpha(1) = x rho at
    omega = 1/rho, for ``steps`` steps in float64: per member the peak alpha, the peak and least of alpha/alpha*,
    the least alpha, the largest rho omega (delta >= 0 is <= 1), the final omega, and whether every state lay in
    S_gamma."""
    import numpy as np  # heavy: numpy
    rho_, x_, kappa_ = (np.asarray(v, dtype=float) for v in (rho_, x_, kappa_))
    al, om = x_ * rho_, 1 / rho_
    peak, lo, hi_ratio, lo_ratio, w_max = al.copy(), al.copy(), al / astar_float(om, rho_), al / astar_float(om, rho_), rho_ * om
    for _ in range(steps - 1):
        al, om, _inc = step_float(al, om, rho_, x_, kappa_)
        ratio = al / astar_float(om, rho_)
        peak, lo = np.maximum(peak, al), np.minimum(lo, al)
        hi_ratio, lo_ratio, w_max = np.maximum(hi_ratio, ratio), np.minimum(lo_ratio, ratio), np.maximum(w_max, rho_ * om)
    return {"peak_alpha": peak, "min_alpha": lo, "peak_ratio": hi_ratio, "min_ratio": lo_ratio, "max_rho_omega": w_max,
            "final_omega": om, "in_set": (lo > 0) & (hi_ratio <= gamma) & (w_max <= 1 + 1e-12)}


def sample_set(gamma: float, kappa_hi: float, x_lo: float = 1.0, x_hi: float = 1.9, n: int = 200_000,
               rho_hi: float = 0.125, rho_lo: float = 0.0, seed: int = 1) -> dict:
    """Random states of S_gamma (alpha = s gamma alpha*, s in [0, 1] with s = 1 three times in ten; omega
    log-uniform up to 1/rho and = 1/rho one time in twenty; rho = 0 three times in ten when rho_lo = 0, else
    log-uniform) and members (x uniform, kappa log-uniform from 1/256): how many images leave S_gamma by each
    condition, and the worst case of each."""
    import numpy as np  # heavy: numpy
    g = np.random.default_rng(seed)
    lo_exp = -8 if rho_lo == 0 else np.log10(rho_lo)
    r_ = 10 ** g.uniform(lo_exp, np.log10(rho_hi), n)
    if rho_lo == 0:
        r_ = np.where(g.random(n) < 0.3, 0.0, r_)
    om_max = np.where(r_ > 0, 1 / np.maximum(r_, 1e-300), 1e9)
    om = np.exp(g.uniform(np.log(1e-4), np.log(om_max)))
    om = np.where(g.random(n) < 0.05, om_max, om)
    x_ = g.uniform(x_lo, x_hi, n)
    k_ = np.exp(g.uniform(np.log(1 / 256), np.log(kappa_hi), n))
    s = np.where(g.random(n) < 0.3, 1.0, g.random(n))
    al = s * gamma * astar_float(om, r_)
    al2, om2, inc = step_float(al, om, r_, x_, k_)
    slack = {"upper": 1 - al2 / (gamma * astar_float(om2, r_)), "positive": al2, "delta": 1 - r_ * om2}
    out = {}
    for name, v in slack.items():
        i = int(np.argmin(v))
        out[name] = {"fails": int((v <= 0).sum()), "worst": float(v[i]),
                     "at": {"rho": float(r_[i]), "omega": float(om[i]), "x": float(x_[i]), "kappa": float(k_[i]),
                            "s": float(s[i])}}
    return out


__all__ = ["ASTAR", "CLOSED", "THRESHOLD", "astar_float", "chart", "obligations", "omega", "orbits", "sample_set",
           "step_float"]
