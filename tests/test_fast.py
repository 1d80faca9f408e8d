"""Fast float64 engine: agrees with mpmath within the horizon-derived tolerance; batches; files."""
import os
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings

from verify.engines import iterate
from verify.engines.fast import iterate_fast, load
from verify.engines.precision_checks import FLOAT64_DIGITS, rel_diff, tolerance
from verify.errors import InvalidParameter
from verify.model import make_setting


def regimes():
    from test_arb import regimes as reducible_regimes   # the same reducible regimes as the certified tests
    return reducible_regimes(max_D=32, max_M=3, fracs=(Fraction(1, 10), Fraction(7, 100), Fraction(1, 2),
                                                       Fraction(9, 10)))


def compare(s, steps, cps):
    f = iterate_fast(s, steps, checkpoints=cps).trajectory(0)
    m = iterate(s, steps, "reduced", "mpmath", 30, cps)
    assert cps[0] == 0
    with mpmath.workdps(40):
        for rf, rm in zip(f.records, m.records):
            tol = tolerance(FLOAT64_DIGITS, rf.step)
            for k in ("loss", "excess_loss", "s_err", "w_err", "cos_wv", "alpha", "support_mass"):
                xs, ys, y0s = getattr(rf, k), getattr(rm, k), getattr(m.records[0], k)
                for x, y, y0 in (zip(xs, ys, y0s) if isinstance(xs, list) else [(xs, ys, y0s)]):
                    assert rel_diff(mpmath.mpf(x), y, y0) <= tol, (k, rf.step, x, y, tol)


@pytest.mark.slow
@settings(max_examples=8)      # each new (sigma, case of K) compiles a numba kernel: most of the test's cost
@given(regimes())
def test_fast_matches_mpmath_within_horizon_tolerance(s):
    compare(s, 400, [0, 1, 3, 50, 400])


@pytest.mark.slow
def test_fast_matches_mpmath_long_run():
    s = make_setting(D=64, K=4, preset="gcn", eta="1/32")
    compare(s, 4000, [0, 4000])


@pytest.mark.slow
def test_batch_equals_single_runs_and_file_round_trip(tmp_path):
    a = make_setting(D=16, K=4, preset="gcn", eta="1/10")
    b = make_setting(D=8, K=2, preset="sts", eta="1/3", sigma="erf", M=2, d=2)
    c = a.with_(eta=Fraction(1, 20), eta_kq=Fraction(1, 20))
    batch = iterate_fast([a, b, c], 3000, log_points=12)
    assert len(batch.steps) > 10 and batch.steps[0] == 0 and batch.steps[-1] == 3000
    for i, s in enumerate([a, b, c]):
        one = iterate_fast(s, 3000, log_points=12)
        for k in one.data:
            np.testing.assert_array_equal(batch.data[k][i, :, :s.M] if k == "alpha" else batch.data[k][i],
                                          one.data[k][0])
    path = batch.save(str(tmp_path / "cp.npz"))
    assert os.listdir(tmp_path) == ["cp.npz"]            # atomic write leaves no temporary file
    back = load(path)
    np.testing.assert_array_equal(back.steps, batch.steps)
    assert back.configs[1]["sigma"] == "erf"
    assert back.trajectory(1).final.alpha == batch.trajectory(1).final.alpha


def test_fast_rejects_bad_input():
    with pytest.raises(InvalidParameter, match="settings"):
        iterate_fast([], 10)
    with pytest.raises(InvalidParameter, match="steps"):
        iterate_fast(make_setting(D=4, K=2, preset="gcn"), -1)
