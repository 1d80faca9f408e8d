"""Shared by the probes of the interior case 0 < K < D: the run, its fits, and the leading terms.

verify.derive.asymptotics.leading_terms() gives the exact leading behaviour (sigma = identity, reference
convention): L - L_opt ~ K N (D-K) / (4 D eta T), ||S - S*||_F ~ sqrt(N (D-K) / (2 eta T)) / ||V*||_F,
||W_X - V*||_F ~ (D-K) sqrt(K / (2 D eta T)): exponents -1, -1/2, -1/2 and known constants. A probe
compares the fitted exponents with these and the ratio q(T) / leading(T) with 1.
"""
from __future__ import annotations


from ..model import symbols as sy
from ..derive.asymptotics import leading_terms
from .base import QUANTITIES, classify_series, fits_json, run_series

PREDICTED_EXPONENT = {"loss": -1.0, "s_err": -0.5, "w_err": -0.5}


def leading_value(setting, quantity: str, T: int) -> float:
    """The exact leading term of ``quantity`` at step T (requires the reference convention)."""
    if not reference_convention(setting):
        raise ValueError("leading terms are derived for sigma = identity, var 1, lambda 1, summed loss, eta_V = eta_KQ")
    e = leading_terms()["excess_loss" if quantity == "loss" else quantity]
    return float(e.subs(sy.values_at(setting) | {sy.T: T}))


def reference_convention(s) -> bool:
    return (s.sigma.is_identity and s.law.var == 1 and s.p_lambda == 1 and s.beta == 1 and s.loss == "sum"
            and s.eta_v == s.eta_kq and 0 < s.K < s.D)


def interior_run(setting, steps: int, engine: str = "reduced") -> tuple[dict, dict, dict]:
    """(series, fits, numbers): the run, its classification, and the comparison with the leading terms."""
    ser = run_series(setting, steps, engine=engine)
    fits = classify_series(ser)
    nums = {}
    for q in QUANTITIES:
        f = fits[q]
        nums[q] = {"fitted_exponent": f.exponent, "stderr": f.exponent_se, "local_exponent": f.local_exponent,
                   "predicted_exponent": PREDICTED_EXPONENT[q]}
        if reference_convention(setting):
            nums[q]["ratio_to_leading_term_at_T"] = ser[q][-1] / leading_value(setting, q, ser["step"][-1])
    return ser, fits, {"per_quantity": nums, "fits": fits_json(fits)}


def leading_curves(setting, steps) -> dict:
    """The leading terms on the recorded steps t >= 1 (for the figure)."""
    return {q + "_leading": [leading_value(setting, q, t) if t >= 1 else None for t in steps] for q in QUANTITIES}
