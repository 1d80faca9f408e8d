"""The baselines `verify bench` measures the full-matrix engines against run the same recursion (their values,
never their speed), a missing JAX is said, not hidden, and time estimates count a call's fixed cost once."""
import mpmath
import pytest

from verify.bench import timings as bench
from verify.certify import region_b
from verify.certify.region_b import run_cells_here as RUN_CELLS_HERE     # the module's own, never a test's wrapper
from verify.engines import estimate, fulljax, iterate
from verify.model import make_setting


@pytest.mark.slow
def test_the_jax_baseline_reaches_the_independent_value():
    """The shipped minimal JAX script: excess loss 6.670622037613683 after 3000 steps at D = 64 (an
    independent run of the same script, outside this toolkit), to 1e-12."""
    pytest.importorskip("jax")
    assert bench.jax_baseline(64)(3000) == pytest.approx(6.670622037613683, rel=1e-12)


def test_the_plain_mpmath_loop_is_the_full_recursion():
    """The hand-written mpmath loop and the engine's mpmath full recursion agree to 25 digits after 6 steps
    (gcn, D = N = 16, the bench's regime; its V* = 1 and the engine's V* = +-1 give the same loss)."""
    s = make_setting(**(bench.REGIME | {"D": 16}))
    with mpmath.workdps(40):
        mine = iterate(s, 6, "full", "mpmath", 40, checkpoints=[6]).final.excess_loss
        loop = bench.mpmath_loop(16, steps=6, dps=40)
        assert abs(mine - loop) < mpmath.mpf(10) ** -25 * abs(loop) and loop > 1


def test_without_jax_the_bench_says_the_ratio_was_not_measured(monkeypatch):
    monkeypatch.setattr(fulljax, "available", lambda: False)
    monkeypatch.setattr(bench, "full_sizes", lambda quick: {"float64": [16], "arb": [8]})
    out = bench.full_targets(quick=True)
    key = "full float64 / JAX baseline (D=N=16)"
    assert out["ratios"][key].startswith("not measured") and out["met"][key] is None
    assert "jax-baseline-D16" not in out["engines"] and "full-float64-D16" in out["engines"]
    ratio = out["ratios"]["certified full arb256 / mpmath loop dps30 (D=N=8)"]
    assert isinstance(ratio, float) and ratio > 0
    # both routes reach the same value: the ball's midpoint and the loop's 25 printed digits
    v = out["same_value"]["D=8, 3 steps"]
    with mpmath.workdps(40):
        mid = mpmath.mpf(v["certified"].strip("[]").split("+/-")[0])
        assert abs(mid - mpmath.mpf(v["mpmath_loop"])) < mpmath.mpf(10) ** -22


def test_calibration_counts_the_fixed_cost_of_a_call_once(monkeypatch):
    """A run costing 0.3 s per call plus 0.01 s per step (on a fake clock): 100 steps/s and 0.3 s fixed,
    where timing one call of one step would have said 3.2 steps/s."""
    clock = [0.0]
    monkeypatch.setattr(estimate.time, "perf_counter", lambda: clock[0])

    def run(n):
        clock[0] += 0.3 + 0.01 * n
    rate, fixed = estimate.calibrate(run, 10**6, seconds=0.5)
    assert rate == pytest.approx(100) and fixed == pytest.approx(0.3)


FIRST_TWO = region_b.initial_cells(region="B")[:2]


def _two_cells_of_region_b(monkeypatch, change=None):
    """region_b_targets (quick) on Region B's first two cells, equal boxes (rho in [1/8, 3/16], kappa in [1/256, 4],
    x in [1, 11/10] and [11/10, 6/5]); ``change(result)`` edits the run's result before it is saved and re-checked."""
    monkeypatch.setattr(region_b, "initial_cells", lambda *a, **k: FIRST_TWO)
    monkeypatch.setattr(region_b, "run_cells_here",
                        lambda *a, **k: (change or (lambda r: r))(RUN_CELLS_HERE(*a, **k)))
    return bench.region_b_targets(quick=True)


def test_the_region_b_target_is_met_only_with_the_fraction_and_a_passing_recheck(monkeypatch):
    """Both cells certified: decided fraction 1 and the re-check passes. One cell open (its result said open):
    half the volume by hand (the boxes are equal), under the 90% target. A certified cell whose band's upper end is
    changed from its own: the independent re-checker refuses the file, so the target is not met at fraction 1."""
    from fractions import Fraction
    ok = _two_cells_of_region_b(monkeypatch)
    assert ok["counts"] == {"certified": 2, "refuted": 0, "open": 0}
    assert ok["decided_fraction"] == 1.0 and ok["recheck_passed"] and ok["met"]

    def reopen(r):
        cells = r["cells"][:1] + [r["cells"][1] | {"status": "open", "failed": "test", "reason": "opened by the test"}]
        return region_b.summary(cells, r["volume"], r["seconds"], True, r["depth"])
    half = _two_cells_of_region_b(monkeypatch, reopen)
    assert half["decided_fraction"] == pytest.approx(0.5, abs=1e-12) and not half["met"]
    assert [o["reason"] for o in half["open"]] == ["opened by the test"]
    assert "opened by the test" in bench.region_b_markdown(half)[0] and "NOT met" in bench.region_b_markdown(half)[0]

    def tamper(r):
        band = r["cells"][0]["band"]
        band["A"] = str(Fraction(band["A"]) * 4)      # an upper end the cell's boxes were not checked at
        return r
    bad = _two_cells_of_region_b(monkeypatch, tamper)
    assert bad["decided_fraction"] == 1.0 and not bad["recheck_passed"] and not bad["met"]


def test_the_progress_total_is_the_number_of_measurements_a_quick_bench_made():
    """The committed example report's bench part (verify bench in quick mode, run by verify all from this code:
    test_readme checks the example is) counted its ticks as it made them; measurement_count, the progress bar's
    total, is computed from the lists of what is measured. Before this test the total said 24 for 20."""
    import json
    from pathlib import Path
    part = json.loads((Path(__file__).parents[1] / "reports" / "example" / "parts" / "bench.json").read_text())
    assert part["result"]["measurements"] == bench.measurement_count(quick=True) == 20
