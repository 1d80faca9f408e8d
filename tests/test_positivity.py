"""Lemma C.2 over cells of (rho, x, kappa): the invariant band (verify.certify.positivity), its independent
re-checker (recheck.positivity) and the Region B driver (verify.certify.region_b; the atlas's cell check and the
command, with the counterexample search: verify.fuzz.region_b).

What the tests compare against, never the code's own verdict: members of a certified cell iterated at 40 digits
(the generated invariant map in mpmath, and the toolkit's reduced engine on a concrete regime) stay inside the
stated band for 10^4 steps; the band's functions against forms derived by hand in this file; a cell past the
stability edge x = 2 has no band, by the fixed-point algebra at delta -> oo (worked out below), and at x = 5/2 a
member changes sign; a tampered stored result is refused, naming the step.
"""
from __future__ import annotations

import ast
import copy
import json
import random
import subprocess
import sys
from fractions import Fraction as F
from pathlib import Path

import mpmath
import pytest
import sympy as sp

from verify.certify import positivity as P
from recheck import positivity as R
from verify.certify import region_b as RB
from verify.fuzz import region_b as FRB
from verify.model.precision import arb_precision

ROOT = Path(__file__).resolve().parents[1]
CELL = {"rho": (F(1, 2), F(9, 16)), "x": (F(17, 10), F(19, 10)), "kappa": (F(1, 256), F(4))}


@pytest.fixture(scope="module")
def certified() -> dict:
    res = json.loads(json.dumps(P.decide_positivity(CELL)))     # stored form: strings only
    assert res["status"] == "certified", res["reason"]
    return res


def test_band_functions_equal_hand_derived_forms():
    # by hand: alpha' = alpha - x (alpha q - p), p = 1/(1 + r w), q = (r w^2 + 1)/(r w + 1)^2, r = 1/rho - 1, and
    # inc = y (1 + r) w alpha (alpha (w - 1) + 1 + r w)/(1 + r w)^3 with y = kappa x (recheck_positivity's docstring)
    w, rho, x, kappa, a = P.w, P.rho, P.x, P.kappa, P.alpha
    r = 1 / rho - 1
    p, q = 1 / (1 + r * w), (r * w**2 + 1) / (r * w + 1) ** 2
    bm = P.band_map()
    assert sp.simplify(bm["f"] - (1 - x * q)) == 0
    assert sp.simplify(bm["b"] - x * p) == 0
    assert sp.simplify(bm["inc"] - kappa * x * (1 + r) * w * a * (a * (w - 1) + 1 + r * w) / (1 + r * w) ** 3) == 0


def test_obligations_hold_and_signs_match_hand_derivatives():
    obs = {o.key: o for o in P.obligations()}
    assert all(o.holds is True for o in obs.values()), [k for k, o in obs.items() if o.holds is not True]
    # by hand: dq/dw = 2 r (w - 1)/(r w + 1)^3 <= 0 and q increases with rho (r decreases), p = 1/(1 + r w)
    # decreases in w and increases in rho; f = 1 - x q, b = x p
    hand = {("f", "w"): 1, ("f", "rho"): -1, ("f", "x"): -1, ("b", "w"): -1, ("b", "rho"): 1, ("b", "x"): 1}
    assert {(g, str(v)): s for g, v, s in P.monotonicity()} == hand
    assert {"alpha-affine", "alpha-linear-in-x", "b-positive", "first-step", "inc-at-start", "inc-kappa-x",
            "inc-concave"} <= set(obs)


def _generated_map():
    """The generated invariant map (verify.derive.invariants) in mpmath: (alpha, delta; r, x, y)."""
    from verify.derive.invariants import invariant_map, r, x, y
    from verify.model.symbols import alpha, delta
    m = invariant_map()
    return sp.lambdify((alpha, delta, r, x, y), (m.a_next, m.inc), "mpmath")


def _member(rng: random.Random, cell: dict) -> tuple:
    draw = lambda n: cell[n][0] + (cell[n][1] - cell[n][0]) * F(rng.randint(0, 1000), 1000)  # noqa: E731
    return draw("rho"), draw("x"), draw("kappa")


def _alphas(step, rho, x, kappa, T: int) -> list:
    with mpmath.workdps(40):
        r, xx, y = mpmath.mpf(1) / rho - 1, mpmath.mpf(x.numerator) / x.denominator, None
        y = mpmath.mpf(kappa.numerator) / kappa.denominator * xx
        a, d, out = mpmath.mpf(0), mpmath.mpf(0), []
        for _ in range(T):
            a, d = (lambda an, inc: (an, d + inc))(*step(a, d, r, xx, y))
            out.append(a)
        return out


@pytest.mark.parametrize("seed, members, steps", [
    (7, 3, 300), pytest.param(11, 4, 10_000, marks=pytest.mark.slow)], ids=["300-steps", "10k-steps"])
def test_members_stay_in_the_band(certified, seed, members, steps):
    """Random members of the certified cell iterated at 40 digits: every alpha(t), t >= 1, in [L, A], and above 0."""
    step = _generated_map()
    L, A = F(certified["band"]["L"]), F(certified["band"]["A"])
    rng = random.Random(seed)
    for _ in range(members):
        rho, x, kappa = _member(rng, CELL)
        al = _alphas(step, mpmath.mpf(rho.numerator) / rho.denominator, x, kappa, steps)
        assert float(L) <= min(al) and max(al) <= float(A)
        assert min(al) > 0


@pytest.mark.slow
def test_a_concrete_regime_with_the_reduced_engine():
    """sts, D = 16, K = 8 (rho = 1/2), eta = 27/4 (x = eta c_L v N/K = 27/16 = 1.6875), ||V*|| = 1: the toolkit's
    reduced engine at 40 digits for 10^4 steps stays inside the band of the cell holding its point."""
    from verify.evidence.regime_runs import regime
    from verify.derive.invariants import invariants_of
    from verify.engines import iterate
    s = regime("sts", 16, 8, M=1, d=1, eta="27/4", vstar_norm="1")
    r, x, y = invariants_of(s)
    rho, kappa = 1 / (1 + r), y / x
    cell = {"rho": (rho, rho + F(1, 32)), "x": (x - F(1, 32), x + F(1, 32)), "kappa": (kappa / 2, kappa * 2)}
    res = P.decide_positivity(cell)
    assert res["status"] == "certified", res["reason"]
    T = 10_000
    tr = iterate(s, T, "reduced", "mpmath", dps=40, checkpoints=range(1, T + 1))
    al = [r_.alpha[0] for r_ in tr.records]
    assert min(al) >= mpmath.mpf(F(res["band"]["L"]).numerator) / F(res["band"]["L"]).denominator
    assert max(al) <= mpmath.mpf(F(res["band"]["A"]).numerator) / F(res["band"]["A"]).denominator


def test_past_the_stability_edge_no_band_and_alpha_changes_sign():
    # At delta -> oo (w = 0): alpha' = (1 - x) alpha + x. A band [L, A] needs fA + b >= L and fL + b <= A with
    # f = 1 - x < -1 for x > 2: L + (x - 1) A <= x <= A + (x - 1) L, so (x - 2)(A - L) <= 0: A = L = 1, no slack.
    out = {"rho": (F(1, 2), F(9, 16)), "x": (F(201, 100), F(203, 100)), "kappa": (F(1, 256), F(4))}
    band, _ = P.choose_band(out)
    assert band is None
    with pytest.raises(ValueError, match="x = eta_V c_L v N/K must lie in \\(0, 2\\)"):
        P.decide_positivity(out)
    # further out the members do change sign: at x = 5/2, rho = 1/2, kappa = 4 the generated map gives alpha(10) < 0
    # (just past 2, at x = 2.02, they need not: delta falls back where alpha > 1 and the run settles)
    al = _alphas(_generated_map(), mpmath.mpf(1) / 2, F(5, 2), F(4), 40)
    assert min(al) < 0


def test_a_modified_map_is_not_certified(certified, monkeypatch):
    # b scaled by 1/10: the fixed point alpha* = b/(1 - f) drops to ~1/10, below the stored band's L, so the
    # stored band is no longer invariant under the modified map (alpha-lower fails on some box)
    L, A = F(certified["band"]["L"]), F(certified["band"]["A"])
    f_, b_, inc_ = P._arb_parts()
    monkeypatch.setattr(P, "_arb_parts", lambda: (f_, lambda *a: b_(*a) / 10, inc_))
    with arb_precision(P.PREC):
        bad = P._check_box(F(0), F(1, 16), CELL, L, A)
    assert bad == "alpha-lower"


def test_recheck_accepts_the_stored_result(certified):
    assert R.recheck(certified)["steps"] == ["format", "hypotheses", "identities", "first-step", "cover", "invariance"]


@pytest.mark.parametrize("change, step", [
    (lambda d: d.update(version=99), "format"),
    (lambda d: d["cell"].update(x=["19/10", "41/20"]), "hypotheses"),
    (lambda d: d["band"].update(L="1"), "first-step"),
    (lambda d: d["leaves"].pop(0), "cover"),
    (lambda d: d["leaves"].append(d["leaves"][0] + "w"), "cover"),
    (lambda d: d["band"].update(A="7/4"), "invariance"),
    (lambda d: d["cell"].update(kappa=["1/256", "4096"]), "invariance"),
])
def test_recheck_refuses_a_tampered_result(certified, change, step):
    assert_refused(certified, change, step)


def assert_refused(result: dict, change, step: str) -> None:
    """recheck.positivity refuses a copy of ``result`` changed by ``change`` at the step ``step``."""
    bad = copy.deepcopy(result)
    change(bad)
    with pytest.raises(R.CheckFailed) as exc:
        R.recheck(bad)
    assert exc.value.step == step


def test_recheck_imports_nothing_of_verify(tmp_path, certified):
    """Its import statements name only the standard library and flint, and a fresh interpreter running it loads no
    verify or lemmas module at all, and no SymPy, NumPy or mpmath."""
    tree = ast.parse((ROOT / "recheck" / "positivity.py").read_text())
    roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    roots |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert not any(isinstance(n, ast.ImportFrom) and n.level > 0 for n in ast.walk(tree))
    assert roots <= set(sys.stdlib_module_names) | {"flint", "__future__"}, roots
    path = tmp_path / "cells.json"
    path.write_text(json.dumps({"cells": [certified]}))
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "recheck.positivity", str(path)],
                       capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and r.stdout.startswith("passed: 1 certified"), r.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert not {m for m in loaded if m.split(".")[0] in ("verify", "lemmas")}
    assert not {m for m in loaded if m.split(".")[0] in ("sympy", "numpy", "mpmath")}


def test_region_b_cells_cover_region_b():
    cells = RB.initial_cells()
    total = sum(P.region_b_volume(c) for c in cells)
    # Region B's volume in (rho, x, log2 kappa): log2 kappa spans 10; x from min(1, r) to 1.9 integrated over rho:
    # int_{1/8}^{1/2} 0.9 drho + int_{1/2}^{7/8} (1.9 - 1/rho + 1) drho
    by_hand = 10 * (0.9 * (0.5 - 0.125) + 2.9 * 0.375 - mpmath.log(7 / 4))
    assert abs(total - float(by_hand)) < 1e-3
    a, b = RB.halves(CELL)
    assert a["rho"] == CELL["rho"] and a["x"] == CELL["x"] and a["kappa"][1] == b["kappa"][0] == F(1, 8)


def test_atlas_check_shape(certified):
    chk = FRB.POSITIVITY_CHECK
    assert chk.name == "positivity" and chk.applies(CELL)
    small = {"rho": (F(1, 8), F(3, 16)), "x": (F(1, 8), F(1, 4)), "kappa": (F(1, 256), F(4))}
    assert not chk.applies(small)          # x <= min(1, r) = 1 for every member: the small-step part
    chk.recheck(CELL, {"status": "certified", "evidence": certified})
    wider = CELL | {"x": (F(17, 10), F(39, 20))}
    with pytest.raises(ValueError, match="does not hold the atlas cell"):
        chk.recheck(wider, {"status": "certified", "evidence": certified})


def test_counterexample_search_finds_and_replays_outside_and_nothing_in_a_certified_cell():
    from verify.fuzz.positivity import search
    out = search({"rho": (F(1, 2), F(9, 16)), "x": (F(5, 2), F(3)), "kappa": (F(3), F(4))}, examples=3, horizon=40)
    assert out["counterexamples"], out
    ce = out["counterexamples"][0]
    # x >= 5/2 lies outside 0 < x < 2; the 40-digit replay at 10x the horizon fails at the same step
    assert ce["inside_hypotheses"] is False and ce["replay"]["same_step"] and ce["replay"]["horizon"] == 400
    assert ce["alpha"] < 0 and ce["replay"]["alpha"] < 0
    assert search(CELL, examples=5, horizon=200)["counterexamples"] == []


def test_delta_is_not_monotone_inside_region_b():
    """Why the band keeps only delta >= 0: delta' - delta < 0 where alpha > 1 + (1 + r)/(e^delta - 1). A member of
    Region B (rho = 0.85, x = 1.88, kappa = 3.9) has steps where delta falls, while alpha stays > 0."""
    step = _generated_map()
    with mpmath.workdps(20):
        rho, x, kappa = mpmath.mpf("0.85"), mpmath.mpf("1.88"), mpmath.mpf("3.9")
        a, d, falls, low = mpmath.mpf(0), mpmath.mpf(0), 0, mpmath.inf
        for _ in range(2000):
            an, inc = step(a, d, 1 / rho - 1, x, kappa * x)
            falls += inc < 0
            # the sign of inc from the formula by hand: alpha (1 - alpha) E + alpha (alpha + r), E = e^delta
            E, r = mpmath.e ** d, 1 / rho - 1
            assert (inc < 0) == (a * ((1 - a) * E + a + r) < 0)
            a, d = an, d + inc
            low = min(low, a)
    assert falls > 0 and low > 0


@pytest.mark.parametrize("args, flag", [(["--depth", "9"], "--depth 9"), (["--fuzz", "-1"], "--fuzz -1"),
                                        (["--deadline", "0"], "--deadline 0.0"), (["--workers", "0"], "--workers 0"),
                                        ([], "--save /nonexistent-dir/x.json")])
def test_region_b_command_refuses_bad_input_in_one_line(args, flag, capsys):
    with pytest.raises(SystemExit) as exc:
        FRB.main(args + ["--save", "/nonexistent-dir/x.json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and flag in err[0]


def _empty_runs(tmp_path) -> dict:
    """Saved runs holding no cell for the regions beside B that a claim run decides when none is saved (B-x-edge),
    so that a test reading Region B's file sees only its cells."""
    out = {}
    for name, reg in P.REGIONS.items():
        if name != "B" and not reg.get("saved_only"):
            out[name] = tmp_path / f"empty-{name}.json"
            out[name].write_text(json.dumps(RB.summary([], 0.0, 0.0, True, 0, name)))
    return out


def _saved_run(tmp_path, monkeypatch, change=None, decide_others=False):
    """A saved Region B run in a temporary cache holding one certified cell around sts D = 3, K = 2, eta = 7/2
    (rho = 2/3, x = 7/4, kappa = 1/2), optionally tampered with; the other regions a claim run decides are saved
    empty unless ``decide_others``."""
    cell = {"rho": (F(5, 8), F(11, 16)), "x": (F(17, 10), F(9, 5)), "kappa": (F(1, 256), F(4))}
    res = json.loads(json.dumps(P.decide_positivity(cell))) | {"path": "c0:"}
    if change:
        change(res)
    path = tmp_path / "region-b.json"
    path.write_text(json.dumps(RB.summary([res], 8.65, 1.0, True, 0)))
    paths = {"B": path} | ({} if decide_others else _empty_runs(tmp_path))
    monkeypatch.setattr(RB, "cache_file", lambda region="B": paths.get(region, tmp_path / "absent.json"))


def test_lemma_reads_a_saved_region_b_run(tmp_path, monkeypatch):
    from lemmas.lemma_C_2 import region_b_records
    from verify.evidence.regime_runs import regime
    _saved_run(tmp_path, monkeypatch)
    inside, outside = regime("sts", 3, 2, M=1, d=2, eta="7/2", vstar_norm="1"), regime("sts", 8, 2, M=1, d=1, eta="3")
    recs, cover = region_b_records([inside, outside])
    assert len(recs) == 1 and recs[0]["kind"] == "arb" and recs[0]["holds"] is True
    # the scope is the certified cell's box of (rho, x, kappa) (every D at its points), by hand from _saved_run
    assert recs[0]["scope"]["horizon"] == "all" and [d["label"] for d in recs[0]["scope"]["dims"]] == [
        "kappa in [1/256, 4], rho in [5/8, 11/16], x in [17/10, 9/5]"]
    assert "1 of this claim's regimes lie in them" in recs[0]["result"]
    assert cover["certified"] == 1 and cover["cells"] == 1 and "re-checked" in cover["source"]


def test_lemma_refuses_a_tampered_saved_run(tmp_path, monkeypatch):
    from lemmas.lemma_C_2 import region_b_records
    from verify.evidence.regime_runs import regime
    _saved_run(tmp_path, monkeypatch, lambda d: d["band"].update(L="2"), decide_others=True)
    recs, cover = region_b_records([regime("sts", 3, 2, M=1, d=2, eta="7/2", vstar_norm="1")])
    assert "refused" in cover["source"] and "first-step" in cover["source"]
    # the refused file is replaced by Region B decided again in this run: all 139 initial cells (the count
    # python -m verify.fuzz.region_b reports), each certified; B-x-edge, with no saved run, is decided in the run
    # too: 12 rho slices x 2 x-cells ([1.9, 1.95], [1.95, 1.98]) = 24, each certified; and B-zero (rho in [0, 1/32]:
    # one slice x 11 x-cells from 1 to 1.98), each certified by the threshold set; the saved_only regions, with no
    # saved run, are left out
    assert cover["cells"] == cover["certified"] == 139 and recs[0]["holds"] is True
    edge = cover["other_regions"]["B-x-edge"]
    assert edge["cells"] == edge["certified"] == 24 and edge["source"] == "every cell decided in this run"
    zero = cover["other_regions"]["B-zero"]
    assert zero["cells"] == zero["certified"] == 11 and zero["source"] == "every cell decided in this run"
    assert set(cover["other_regions"]) == {"B-x-edge", "B-zero"}


def test_the_atlas_runs_and_its_rechecker_rechecks_the_positivity_check(certified):
    """The check is in the atlas's registry (imported through CHECK_MODULES, as a Dask worker does), applies to a
    Region B cell and not to a small-step one; the atlas re-checker's "positivity" step accepts the stored band and
    refuses it with its upper end lowered (alpha' could leave the band: hand-checked failure of invariance)."""
    from recheck import atlas as recheck_atlas
    from verify.certify import atlas
    from recheck.certificates import CheckFailed
    check = atlas.checks()["positivity"]
    assert check.applies(CELL) and not check.applies({"rho": (F(1, 4), F(1, 2)), "x": (F(1, 64), F(1, 32)),
                                                      "kappa": (F(1, 4), F(1, 2))})
    box = {n: [str(lo), str(hi)] for n, (lo, hi) in CELL.items()}
    lines = []
    recheck_atlas.recheck_positivity(None, {"path": "0", "box": box}, {"evidence": certified},
                                     None, lambda step, detail: lines.append(step))
    assert lines == ["positivity"]
    bad = json.loads(json.dumps(certified))
    lo, hi = F(bad["band"]["L"]), F(bad["band"]["A"])
    bad["band"]["A"] = str(lo + (hi - lo) / 8)
    with pytest.raises(CheckFailed):
        recheck_atlas.recheck_positivity(None, {"path": "0", "box": box}, {"evidence": bad}, None, lambda *a: None)
