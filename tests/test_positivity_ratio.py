"""Lemma C.2 by the ratio set S = {0 <= alpha <= 2 alpha*(w, rho), delta >= 0} (verify.certify.positivity_ratio),
the registry of set kinds (verify.certify.positivity_sets) and its re-check (recheck.positivity, set "ratio").

Compared against, never the code's own verdict: members of a certified cell iterated at 40 digits with the map
stated by hand here (recheck's form in r = 1/rho - 1, w = e^-delta) stay in S with alpha > 0 for 10^4 steps, and in
float64 to 10^5; alpha* = (1 + r w)/(1 + r w^2) against its fixed-point property by hand; past x = 2 the set
fails, by hand at delta -> oo: alpha = 2 alpha*(0) = 2 maps to (1 - x) 2 + x = 2 - x < 0; a tampered result is
refused, naming the step.
"""
from __future__ import annotations

from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

from recheck import positivity as R
from test_positivity import assert_refused
from verify.certify import positivity as P
from verify.certify import positivity_ratio as PR
from verify.certify import positivity_sets as PS

# rho in [1/32, 1/16] at x near 3/2: no constant band exists there (docs/commands.md, Region B)
CELL = {"rho": (F(1, 32), F(1, 16)), "x": (F(3, 2), F(8, 5)), "kappa": (F(1, 256), F(1))}


@pytest.fixture(scope="module")
def certified():
    return PS.decide_positivity(CELL)


def test_ratio_obligations_hold():
    assert all(o.holds is True for o in PR.obligations()), [(o.key, o.detail) for o in PR.obligations()]


def test_astar_is_the_fixed_point_by_hand():
    # alpha' = alpha - x (alpha q - p), p = 1/(1 + r w), q = (r w^2 + 1)/(r w + 1)^2: alpha q = p at alpha* = p/q
    for rho, w in ((F(1, 4), F(1, 2)), (F(1, 32), F(1, 10)), (F(7, 8), F(1))):
        r = 1 / rho - 1
        a_star = (1 + r * w) / (1 + r * w * w)
        p, q = 1 / (1 + r * w), (r * w * w + 1) / (r * w + 1) ** 2
        assert a_star * q == p
        assert PR.astar().subs({P.rho: rho, P.w: w}) == a_star


@pytest.mark.slow
def test_no_band_but_the_ratio_set_certifies_and_rechecks(certified):
    band = P.decide_positivity(CELL)
    assert band["status"] == "open" and band["failed"] == "band"
    assert certified["status"] == "certified" and certified["set"] == "ratio" and certified["gamma"] == "2"
    assert R.recheck(certified)["steps"][-1] == "invariance"


@pytest.mark.slow
@pytest.mark.parametrize("tamper, step", [
    (lambda d: d["leaves"].pop(7), "cover"),
    (lambda d: d.__setitem__("gamma", "3/2"), "invariance"),
    (lambda d: d.__setitem__("set", "cone"), "format"),
    (lambda d: d["cell"].__setitem__("x", ["3/2", "21/10"]), "hypotheses"),
    (lambda d: d["cell"].__setitem__("kappa", ["1/256", "4"]), "invariance"),
])
def test_a_tampered_ratio_result_is_refused(certified, tamper, step):
    assert_refused(certified, tamper, step)


def _orbit_mp(rho, x, kappa, steps):
    """(alpha, w) from (0, 0) at 40 digits with the hand map; yields each state from t = 1."""
    with mpmath.workdps(40):
        rho, x, kappa = (mpmath.mpf(v.numerator) / v.denominator for v in (rho, x, kappa))
        r, y = 1 / rho - 1, kappa * x
        al, w = mpmath.mpf(0), mpmath.mpf(1)
        for _ in range(steps):
            p, q = 1 / (1 + r * w), (r * w**2 + 1) / (r * w + 1) ** 2
            inc = y * (1 + r) * w * al * (al * (w - 1) + 1 + r * w) / (1 + r * w) ** 3
            al, w = al - x * (al * q - p), w * mpmath.exp(-inc)
            yield al, w, (1 + r * w) / (1 + r * w**2)


@pytest.mark.slow
def test_members_stay_in_the_set_at_40_digits_and_in_float64():
    members = [(F(1, 32), F(3, 2), F(1, 256)), (F(1, 16), F(8, 5), F(1)), (F(3, 64), F(31, 20), F(1, 8))]
    for m in members:
        worst = max(float(al / (2 * a_star)) for al, w, a_star in _orbit_mp(*m, 10_000))
        assert worst <= 1
        assert all(al > 0 and w <= 1 for al, w, _ in _orbit_mp(*m, 2000))
    from verify.certify.positivity_chart import orbits
    o = orbits(np.array([float(m[0]) for m in members]), np.array([float(m[1]) for m in members]),
               np.array([float(m[2]) for m in members]), 100_000)
    assert o["in_set"].all()


def test_past_x_2_the_ratio_set_fails():
    # at w = 0 (delta -> oo) alpha* = 1, f = 1 - x, b = x: alpha = 2 maps to 2 - x < 0 for x > 2
    past = {"rho": (F(1, 32), F(1, 16)), "x": (F(41, 20), F(21, 10)), "kappa": (F(1, 256), F(1))}
    assert PR.decide(past, max_boxes=3000)["status"] == "open"
    from verify.model.precision import arb_precision
    with arb_precision(PR.PREC):
        near = (F(0), F(1, 2**12), F(1, 32), F(1, 16), F(1 - F(1, 2**12)), F(1))
        assert PR.check_box(near, past, F(2)) == "positive"
    with pytest.raises(ValueError, match="x = eta_V"):
        PS.decide_positivity({"rho": (F(1, 32), F(1, 16)), "x": (F(3, 2), F(21, 10)), "kappa": (F(1, 256), F(1))})


def test_one_registry_of_set_kinds_on_both_sides():
    assert [k.name for k in PS.SETS] == list(R.SETS)


def test_region_b_low_is_data_its_cells_tile_it_and_region_b_is_unchanged():
    from verify.certify import region_b as RB
    low = RB.initial_cells(region="B-low")
    # rho in [1/32, 1/8] (x from min(1, r) = 1 to 1.9 there), log2 kappa over [1/256, 1]: 3/32 * 0.9 * 8 by hand
    assert len(low) == 3 * 9
    assert sum(P.region_b_volume(c, P.REGIONS["B-low"]) for c in low) == pytest.approx(3 / 32 * 0.9 * 8, rel=1e-12)
    assert all(c["kappa"] == (F(1, 256), F(1)) for c in low)
    assert len(RB.initial_cells()) == 139 and RB.cache_file().name == "region-b.json"
    assert RB.cache_file("B-low").name == "region-b-low.json"


def test_the_region_command_refuses_an_unknown_region(capsys):
    from verify.fuzz import region_b as FRB
    with pytest.raises(SystemExit) as exc:
        FRB.main(["--region", "C"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--region C" in err[0] and "B, B-low" in err[0]


@pytest.mark.slow
def test_lemma_reads_a_saved_region_b_low_run_beside_region_b(tmp_path, monkeypatch, certified):
    """A saved "B-low" run holding the ratio cell CELL: Lemma C.2's record scopes it beside Region B's cells (a
    regime at rho = 1/24, x = 31/20 inside it), names the region, and relies on the ratio set's obligations too; a
    tampered B-low file is refused and its cells left out."""
    import json
    from lemmas.lemma_C_2 import region_b_records
    from verify.certify import region_b as RB
    from verify.evidence.regime_runs import regime
    b = {"rho": (F(5, 8), F(11, 16)), "x": (F(17, 10), F(9, 5)), "kappa": (F(1, 256), F(4))}
    from test_positivity import _empty_runs
    paths = {"B": tmp_path / "region-b.json", "B-low": tmp_path / "region-b-low.json"} | _empty_runs(tmp_path)
    paths["B"].write_text(json.dumps(RB.summary([P.decide_positivity(b) | {"path": "c0:"}], 8.65, 1.0, True, 0)))
    low = json.loads(json.dumps(certified)) | {"path": "c0:"}
    paths["B-low"].write_text(json.dumps(RB.summary([low], 1.0, 1.0, True, 0, "B-low")))
    monkeypatch.setattr(RB, "cache_file", lambda region="B": paths.get(region, tmp_path / "absent.json"))
    # sts D = 24, K = 1, eta = 31/20 (d = M = 1): rho = 1/24, x = 31/20, kappa = 1, inside CELL
    from verify.derive.invariants import invariants_of
    inside = regime("sts", 24, 1, M=1, d=1, eta="31/20")
    r_, x_, y_ = invariants_of(inside)
    assert (1 / (1 + r_), x_, y_ / x_) == (F(1, 24), F(31, 20), F(1))
    recs, cover = region_b_records([inside])
    labels = [d["label"] for d in recs[0]["scope"]["dims"]]
    assert "kappa in [1/256, 1], rho in [1/32, 1/16], x in [3/2, 8/5]" in labels and len(labels) == 2
    assert "Region B-low: 1 of 1 cells certified" in recs[0]["result"]
    assert cover["other_regions"]["B-low"]["certified"] == 1
    steps = [r["step"] for r in recs[0]["relies_on"]]
    assert any(t.startswith("alpha* = b/(1 - f) is fixed") for t in steps) and len(steps) == len(
        P.obligations()) + len(PR.obligations())
    assert "1 of this claim's regimes lie in them" in recs[0]["result"] and "0 < alpha(t) <= 2 alpha*" in \
        recs[0]["result"]
    low["gamma"] = "3/2"
    paths["B-low"].write_text(json.dumps(RB.summary([low], 1.0, 1.0, True, 0, "B-low")))
    recs, cover = region_b_records([inside])
    assert "refused" in cover["other_regions"]["B-low"]["source"] and len(recs[0]["scope"]["dims"]) == 1
