"""The interior case 0 < K < D as the probes read it: a run, its tail fits, and the comparison with the exact
leading terms of verify.derive.asymptotics (through verify.evidence.leading_terms) and with Theorem 3.1's claimed
T-exponents (verify.model.paper).

The leading terms are derived for sigma = identity in the reference convention (summed loss, v = 1,
lambda = 1, beta = 1, eta_V = eta_KQ): L - L_opt ~ K N (D-K) / (4 D eta T), ||S - S*||_F ~
sqrt(N (D-K) / (2 eta T)) / ||V*||_F, ||W_X - V*||_F ~ (D-K) sqrt(K / (2 D eta T)); their T-exponents are the
claimed -1, -1/2, -1/2.
"""
from __future__ import annotations

from functools import lru_cache

from ...evidence.leading_terms import leading

from ...errors import InvalidParameter
from ...model.hypotheses import within
from ...model.paper import claimed_exponent
from ...model.quantities import KEYS
from .convention import Needs
from .runs import classify_series, fits_json, run_series

# What the leading terms of verify.derive.asymptotics assume (its module docstring).
LEADING_TERMS_ASSUME = ("identity", "0<K<D", "sum-loss", "unit-variance", "unit-lambda", "unit-beta", "one-eta")
# What a regime compared with the leading terms needs: the reduced recursion and their hypotheses (a convention
# keyword breaking one is left at the reference, named on every finding: verify.probes.support.convention).
LEADING = Needs(True, LEADING_TERMS_ASSUME, "the leading terms of verify.derive.asymptotics, derived in the reference "
                                           "convention")


@lru_cache(maxsize=None)
def claimed_t_exponents() -> dict:
    """Theorem 3.1's T-exponent of each quantity, from its claimed order (SymPy): {q: -1.0, -0.5, -0.5}."""
    return {q: float(claimed_exponent(q, "T")) for q in KEYS}


def leading_value(setting, q: str, T) -> float:
    """The exact leading term of ``q`` at step T (InvalidParameter outside :data:`LEADING_TERMS_ASSUME`)."""
    ok, why = within(setting, LEADING_TERMS_ASSUME)
    if not ok:
        raise InvalidParameter("setting", setting.config()["preset"], f"must satisfy the leading terms' hypotheses "
                               f"(unmet: {why})")
    return float(leading(setting, q)(float(T)))


def interior_run(setting, steps: int) -> tuple[dict, dict, dict]:
    """(series, classifications, numbers): one run of the compiled reduced recursion, its tail fits, and per
    quantity the fitted and claimed exponents and q(T) / leading(T)."""
    ser = run_series(setting, steps, fast=True)
    fits = classify_series(ser)
    T = ser["step"][-1]
    nums = {q: {"fitted_exponent": fits[q].exponent, "stderr": fits[q].exponent_se,
                "local_exponent": fits[q].local_exponent, "claimed_exponent": claimed_t_exponents()[q],
                "ratio_to_leading_term_at_T": ser[q][-1] / leading_value(setting, q, T)} for q in KEYS}
    return ser, fits, {"per_quantity": nums, "fits": fits_json(fits)}


def leading_curves(setting, steps) -> dict:
    """The leading terms on the recorded steps t >= 1 ("<q>_leading", None at t = 0), for a figure."""
    return {f"{q}_leading": [leading_value(setting, q, t) if t >= 1 else None for t in steps] for q in KEYS}


def exponent_deviation(nums: dict) -> float:
    """Largest |fitted - claimed| T-exponent over the quantities of one run (NaN when a fit is missing)."""
    if any(v["fitted_exponent"] is None for v in nums.values()):
        return float("nan")
    return max(abs(v["fitted_exponent"] - v["claimed_exponent"]) for v in nums.values())


__all__ = ["LEADING", "LEADING_TERMS_ASSUME", "claimed_t_exponents", "leading_value", "interior_run", "leading_curves",
           "exponent_deviation"]

