"""Reduced vs full recursions: two independent routes to the same trajectory (>= 25 digits)."""
from fractions import Fraction

import mpmath
import pytest

from verify.engines import iterate
from verify.model import make_setting

REGIMES = {
    "D13-M2-d4": dict(D=13, M=2, d=4, eta="0.07", vstar=[[1, 2, 0, "0.5"], [0, 1, 1, -1]],
                      supports=[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 0, 1]]),
    "cnn": dict(D=12, K=3, M=2, d=3, preset="cnn", vstar_norm="2", eta="0.1"),
    "gcn": dict(D=8, K=3, M=2, d=2, preset="gcn", vstar_norm="1.5", eta="0.05"),
    "sts": dict(D=10, K=4, M=3, d=2, preset="sts", vstar_norm="3", eta="0.2"),
    "gslp": dict(D=9, K=1, M=1, d=5, preset="gslp", vstar_norm="1", eta="0.3"),
    "erf-cnn": dict(D=8, K=2, M=2, d=2, preset="cnn", vstar_norm="2", eta="0.3", sigma="erf"),
    "relu-gcn": dict(D=6, K=2, M=2, d=3, preset="gcn", vstar_norm="2", eta="0.2", sigma="relu", wp_trainable=False),
    "poly-sts": dict(D=6, K=2, M=2, d=2, preset="sts", vstar_norm="1", eta="0.1", sigma="poly:0,1,0,1/10"),
    "k-equals-d": dict(D=5, K=5, M=2, d=2, preset="sts", vstar_norm="2", eta="0.3"),
    "k-zero": dict(D=5, K=0, M=2, d=2, preset="sts", vstar_norm="2", eta="0.3"),
    "mean-loss-lambda": dict(D=6, K=3, M=2, d=2, preset="cnn", vstar_norm="2", eta="0.5", eta_kq="0.8", loss="mean",
                             p_lambda="4", noise_sd="0.1", law_var="2"),
    # logit temperature beta != 1 (with lambda != 1 and eta_KQ != eta_V): the reduced delta step's beta^2 against
    # the full engine's logits beta P^T W_KQ P
    "beta-temperature": dict(D=6, K=2, M=2, d=2, preset="gcn", vstar_norm="1.5", eta="0.2", eta_kq="0.3",
                             p_lambda="4", beta="7/4"),
}


def _close(a, b, digits=25):
    with mpmath.workdps(80):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        scale = max(abs(a), abs(b))
        return abs(a - b) <= mpmath.mpf(10) ** -digits * (scale if scale > 1e-30 else 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REGIMES))
def test_reduced_equals_full_for_200_steps_at_40_digits(name):
    s = make_setting(**REGIMES[name])
    cps = [1, 7, 50, 200]
    red = iterate(s, 200, "reduced", "mpmath", 40, checkpoints=cps)
    full = iterate(s, 200, "full", "mpmath", 40, checkpoints=cps)
    for r, f in zip(red.records, full.records):
        assert r.step == f.step
        for q in ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv"):
            assert _close(getattr(r, q), getattr(f, q)), (name, r.step, q, getattr(r, q), getattr(f, q))
        for a, b in zip(r.alpha + r.support_mass + r.offspan, f.alpha + f.support_mass + f.offspan):
            assert _close(a, b), (name, r.step, a, b)


def test_float64_and_mpmath_agree_to_float_accuracy():
    s = make_setting(**REGIMES["cnn"])
    a = iterate(s, 300, "reduced", "float64").final
    b = iterate(s, 300, "reduced", "mpmath", 30).final
    assert abs(a.excess_loss - float(b.excess_loss)) < 1e-12 * float(b.excess_loss)


def test_k_equals_d_closed_form():
    """K = D: S = S* from the start, and alpha_t = 1 - (1 - eta N / D)^t exactly (a linear recursion)."""
    s = make_setting(**REGIMES["k-equals-d"])
    tr = iterate(s, 40, "reduced", "mpmath", 40, checkpoints=[0, 1, 5, 40])
    eta, N, D = Fraction(3, 10), 1, 5
    for r in tr.records:
        expected = 1 - (1 - eta * N / D) ** r.step
        with mpmath.workdps(80):
            assert _close(r.alpha[0], mpmath.mpf(expected.numerator) / expected.denominator, 35)
        assert r.s_err == 0


def test_k_zero_nothing_moves():
    s = make_setting(**REGIMES["k-zero"])
    r = iterate(s, 50, "full", "mpmath", 30).final
    assert r.excess_loss == 0 and all(a == 0 for a in r.alpha)
    with mpmath.workdps(80):
        assert _close(r.s_err, mpmath.sqrt(mpmath.mpf(1) / 5))    # S stays uniform: ||S - 0|| = sqrt(N/D)


def test_first_step_alpha_is_eta_times_overlap():
    """By hand: W_X(1) = eta <S0, S*> / ... for identity, alpha(1) = eta_V * v * <S0, S*> = eta * N / D."""
    s = make_setting(**REGIMES["cnn"])
    r = iterate(s, 1, "reduced", "mpmath", 30).final
    with mpmath.workdps(80):
        assert _close(r.alpha[0], mpmath.mpf(1) / 10 * 4 / 12, 28)


def test_dynamics_depend_on_p_only_through_ptp():
    """Any orthogonal P gives the same trajectory as P = I (the logits P^T W_KQ P absorb it)."""
    base = dict(D=6, K=2, M=2, d=2, preset="gcn", vstar_norm="1.5", eta="0.2")
    a = iterate(make_setting(**base), 40, "full", "mpmath", 30).final
    b = iterate(make_setting(**base, p_kind="permutation", seed=5), 40, "full", "mpmath", 30).final
    assert _close(a.excess_loss, b.excess_loss, 25) and _close(a.s_err, b.s_err, 25)


def test_float64_full_engine_runs_non_orthogonal_p():
    s = make_setting(D=6, K=2, M=1, d=2, preset="cnn", vstar_norm="1", eta="0.05", p_kind="sinusoidal",
                     p_structure="general")
    tr = iterate(s, 200, "full", "float64")
    assert tr.final.excess_loss < tr.records[0].excess_loss
