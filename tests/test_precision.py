"""Precision policy: horizons the arithmetic cannot carry are refused; disagreements are never silent."""
import mpmath
import pytest

from verify.engines import iterate
from verify.engines.fast import iterate_fast
from verify.engines.precision_checks import (FLOAT64_DIGITS, PrecisionWarning, carried_digits, cross_check, max_steps,
                                      require_horizon, tolerance)
from verify.errors import InvalidParameter, PrecisionError
from verify.model import make_setting

S = make_setting(D=16, K=4, preset="gcn", eta="7/100")


def test_too_long_for_float64_is_flagged():
    # 10^7 steps at 6 digits: float64 (15.95 digits) loses 2 log10(T) + 1 = 15 digits -> refused.
    with pytest.raises(PrecisionError, match="steps=10000000"):
        require_horizon("float64", 10**7, 6)
    n = max_steps(FLOAT64_DIGITS, 6)
    assert require_horizon("float64", n, 6) >= 6
    with pytest.raises(PrecisionError, match="float64"):
        require_horizon("float64", n + 1, 6)


def test_mpmath_dps_too_low_is_flagged():
    with pytest.raises(PrecisionError, match="dps=30"):
        require_horizon("mpmath", 10**6, 30, dps=30, work=30)
    # mpmath via Arith carries guard digits chosen for the horizon: accepted.
    assert require_horizon("mpmath", 10**6, 30, dps=30) >= 30
    with pytest.raises(InvalidParameter, match="digits"):
        require_horizon("float64", 10, 0)


def test_tolerance_grows_with_horizon_and_shrinks_with_digits():
    assert tolerance(FLOAT64_DIGITS, 10) < tolerance(FLOAT64_DIGITS, 10**4) < 1
    assert tolerance(50, 10**4) < tolerance(FLOAT64_DIGITS, 10**4)
    assert carried_digits(FLOAT64_DIGITS, 0) == pytest.approx(FLOAT64_DIGITS - 1)


@pytest.mark.parametrize("reference", ["mpmath", "arb"])
def test_float64_results_cross_check(reference):
    tr = iterate_fast(S, 2000, log_points=10).trajectory(0)
    rep = cross_check(S, tr, reference=reference)
    assert rep.agree and len(rep.rows) > 20
    assert "cross-checked" in tr.notes[-1]


def test_disagreement_raises_or_is_recorded():
    tr = iterate(S, 300, "reduced", "mpmath", 20)
    tr.records[-1].s_err *= 1 + 1e-12          # a perturbation far above mpmath's tolerance
    with pytest.raises(PrecisionError, match="s_err"):
        cross_check(S, tr)
    with pytest.warns(PrecisionWarning, match="s_err"):
        rep = cross_check(S, tr, on_disagreement="warn")
    assert not rep.agree and rep.as_dict()["disagreements"][0]["quantity"] == "s_err"
    assert tr.notes[-1].startswith("PRECISION WARNING")


def test_float64_engine_error_below_one_ulp_is_not_flagged():
    tr = iterate(S, 300, "reduced", "float64")
    assert cross_check(S, tr).agree
    with pytest.raises(InvalidParameter, match="on_disagreement"):
        cross_check(S, tr, on_disagreement="ignore")


def test_fast_engine_refuses_a_horizon_too_long_for_float64():
    with pytest.raises(PrecisionError, match="steps=100000000"):
        iterate_fast(S, 10**8, digits=6)          # refused before running
    res = iterate_fast(S, 1000, digits=6)
    assert "significant digits carried" in res.notes[-1]


def test_monte_carlo_gradient_is_unbiased_around_the_reduced_gradient():
    # Sampling X and averaging the gradient (the bench's comparison) is an independent estimate of
    # the population gradient; the reduced formula's must lie within 4 standard errors of its mean.
    from verify.bench.timings import monte_carlo
    m = monte_carlo(quick=True, seed=1)
    assert m["mc_consistent_with_exact"], m
    assert 0 < m["mc_rms_rel_error_at_n0"] < 0.2


def test_reference_is_strictly_more_precise_than_any_run():
    from verify.engines.precision_checks import REFERENCE_EXTRA_DIGITS, reference_bits, work_digits
    import math
    for dps, steps in ((30, 10), (60, 1000), (100, 10**4), (1000, 50), (5000, 10)):
        w = work_digits("mpmath", dps, steps)
        bits = reference_bits(w, steps)
        # after its own horizon loss the reference still carries REFERENCE_EXTRA_DIGITS more digits than the run
        assert carried_digits(bits * math.log10(2), steps) >= w + REFERENCE_EXTRA_DIGITS
        assert bits >= 256


@pytest.mark.parametrize("dps", [60, 100])
def test_high_dps_runs_cross_check_against_arb(dps):
    # Failed before: a fixed 256-bit reference has radii ~1e-70, above a 60-digit run's tolerance.
    tr = iterate(S, 300, "reduced", "mpmath", dps)
    rep = cross_check(S, tr, reference="arb")
    assert rep.agree and int(rep.reference[3:]) > 3.32 * (dps + 10)
    tr.records[-1].loss *= 1 + mpmath.mpf(10) ** (10 - dps)   # far above the run's tolerance: caught
    with pytest.raises(PrecisionError, match="loss"):
        cross_check(S, tr, reference="arb")


def test_comparison_is_within_the_certified_ball():
    from verify.engines.precision_checks import rel_diff
    assert rel_diff(mpmath.mpf("1.0000001"), mpmath.mpf(1), 1, rad=mpmath.mpf("1e-6")) == 0
    assert rel_diff(mpmath.mpf("1.000002"), mpmath.mpf(1), 1, rad=mpmath.mpf("1e-6")) == pytest.approx(1e-6)


def test_tolerance_is_representable_at_any_precision():
    from verify.engines.precision_checks import tolerance_mp
    assert tolerance(1000, 10) == 0.0 < tolerance_mp(1000, 10) < mpmath.mpf(10) ** -990


def test_certified_enclosure_of_a_diverging_run_reports_the_step():
    from verify.engines.arb import iterate_certified
    from verify.errors import NumericalTrouble
    s = make_setting(D=4, K=2, preset="sts", eta="3", sigma="poly:0,1,0,1/10", vstar_norm="3")
    with pytest.raises(NumericalTrouble, match="GD diverges") as info:
        iterate_certified(s, 1000, 128)
    assert 1 < info.value.step < 100 and "enclosure" in info.value.quantity


def test_float64_engines_report_trouble_at_the_same_step():
    from verify.engines.fast import iterate_fast
    from verify.errors import NumericalTrouble
    from verify.evidence.regime_runs import reduced_float64
    s = make_setting(D=4, K=2, preset="sts", eta="30")          # eta far above 2K/N = 4: GD diverges
    with pytest.raises(NumericalTrouble) as py:
        iterate(s, 1000, "reduced", "float64", checkpoints=list(range(1001)))
    with pytest.raises(NumericalTrouble) as fast:
        iterate_fast(s, 1000, checkpoints=list(range(1001)))    # every step a checkpoint
    with pytest.raises(NumericalTrouble) as loop:
        reduced_float64(s, 1000)
    # the same recursion in three codes: the first step whose state or record leaves float64 (+-1:
    # numba and Python may overflow in the record of step t or in the update to t + 1)
    assert py.value.step == loop.value.step and abs(fast.value.step - py.value.step) <= 1
    assert "2K/(c_L v N) = 4" in str(py.value) and "arithmetic=mpmath" in str(py.value)
