"""The independent re-checker on a family cell that enters R through the tube (verify.certify.tube, .entry).

One tube cell (sts K = 4, D = 64, eta in [1/16, 1/8]) is built by the toolkit and saved as a family file; the
re-checker (python -m recheck) must accept it, and reject it naming the obligation when one stated
number is tightened: a fence value, a quadtree, T0, z(T0), kappa, the start, the last slab, the parameters' ties
to the ranged names (the spec's "parameters", added here when the saved file lacks them: the checker derives its
own from the family's options and refuses ties that differ). Its own numbers are
compared with the construction's (the leaf count, T0 = the time bound exactly) and with hand values (y/x = 1/4 for
every member, 1/8 and 1/2 at the corners of the parameter box that forgets eta_V = eta_KQ); its enclosure of the
fence gaps is compared with the gaps of single members stepped by the map at a point.
"""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from flint import ctx

from conftest import rechecked
from recheck import certificates as rc
from verify.certify.family import CELL_KNOBS, FamilyCertificate, FamilySpec
from verify.certify.files import family_file, save
from verify.model.precision import arb_precision

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = {"preset": "sts", "K": 4, "vstar_norm": "1"}
RANGES = {"D": (64, 64), "eta": (Fraction(1, 16), Fraction(1, 8))}
# the sts preset's parameters in the ranged names (one learning rate: eta_V = eta_KQ = eta)
TIES = {"D": "D", "K": "4", "N": "1", "v": "1", "c_L": "1", "eta_V": "eta", "eta_KQ": "eta", "lambda": "1",
        "beta": "1", "V2": "1"}


@pytest.fixture(scope="module")
def cell(tube_cell) -> dict:
    """The cell of OPTIONS and RANGES (conftest.py builds it once for this module and tests/test_tube.py)."""
    assert tube_cell["box"] == {k: [str(v) for v in r] for k, r in RANGES.items()}, tube_cell["box"]
    return tube_cell


@pytest.fixture(scope="module")
def saved(cell, tmp_path_factory) -> Path:
    spec = FamilySpec.of(OPTIONS, RANGES)
    data = family_file(FamilyCertificate(spec, [cell], {"bits": CELL_KNOBS["bits"]}), [10**6],
                       [{"D": 64, "eta": Fraction(1, 16)}])
    data["spec"].setdefault("parameters", TIES)
    path = tmp_path_factory.mktemp("tube") / "family.json"
    save(data, path)
    return path


@pytest.fixture(scope="module")
def time_check(saved) -> dict:
    """The arguments of the re-checker's tube-time step, caught during one whole re-check of the saved file in this
    process (which passes): the least advances over the slabs are verified once and shared by the tampered T0 and
    z(T0) cases, which change nothing those advances depend on."""
    seen = {}
    real = rc.check_time

    def spy(F, cell, graphs, least, P, Q_max, u_most):
        seen.update(F=F, graphs=graphs, least=least, P=P, Q_max=Q_max, u_most=u_most)
        return real(F, cell, graphs, least, P, Q_max, u_most)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rc, "check_time", spy)
        code, out = rechecked(saved)
    assert code == 0 and "certificate verified" in out and set(seen) == {"F", "graphs", "least", "P", "Q_max", "u_most"}, out
    return seen




def tampered(saved: Path, tmp_path: Path, change) -> Path:
    data = json.loads(saved.read_text())
    change(data["cells"][0], data)
    out = tmp_path / "tampered.json"
    out.write_text(json.dumps(data))
    return out


@pytest.mark.slow
def test_the_tube_cell_rechecks_in_a_fresh_interpreter(saved, cell):
    r = subprocess.run([sys.executable, "-m", "recheck", str(saved)], capture_output=True, text=True,
                       cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok  tube-linearity" in r.stdout
    # the checker walked exactly the leaves the construction certified
    assert f"(tube of {cell['entry_boxes']} boxes)" in r.stdout, r.stdout


def _frac(v) -> str:
    return str(Fraction(v))


def _upper_down(c, d):
    """The alpha graph's upper fence lowered by a quarter of the tube's width at its middle knot."""
    g = c["entry"]["graphs"][0]
    k = len(g["knots"]) // 2
    g["upper"][k] = _frac(Fraction(g["upper"][k]) - (Fraction(g["upper"][k]) - Fraction(g["lower"][k])) / 4)


def _leaf_dropped(c, d):
    trees = c["entry"]["graphs"][0]["trees"]
    k = next(i for i, t in enumerate(trees) if len(t) > 1)
    trees[k] = trees[k][:-1]


def _start_off(c, d):
    """The alpha graph's first knot moved up to the middle of its first slab, above every member's first step
    (alpha_1 = s x/(1 + s) = x/16 <= 1/512 at D = 64)."""
    g = c["entry"]["graphs"][0]
    g["knots"][0] = _frac((Fraction(g["knots"][0]) + Fraction(g["knots"][1])) / 2)


def _last_slab_wide(c, d):
    """The delta graph's upper fence raised by 1/2 at its last knot: only its last slab widens (slab m - 2 keeps
    its fences and a steeper continuation only helps its crossing check), and alpha there is far off the manifold."""
    g = c["entry"]["graphs"][1]
    g["upper"][-1] = _frac(Fraction(g["upper"][-1]) + Fraction(1, 2))


def _z_hi_down(c, d):
    lo, hi = (Fraction(v) for v in c["z_at_T0"])
    c["z_at_T0"][1] = _frac(lo + (hi - lo) * Fraction(999, 1000))


def _z_lo_up(c, d):
    """z(T0)'s lower end raised by 2^-40 of itself (it is 1/u^2 at the largest u of the last slab, rounded down to
    96 bits): above what the checker's own largest u there gives."""
    c["z_at_T0"][0] = _frac(Fraction(c["z_at_T0"][0]) * (1 + Fraction(1, 2**40)))


def _kappa_lo_up(c, d):
    c["entry"]["kappa"][0] = _frac(Fraction(1, 4) + Fraction(1, 2**60))


def _kappa_hi_down(c, d):
    c["entry"]["kappa"][1] = _frac(Fraction(1, 4) - Fraction(1, 2**60))


@pytest.mark.slow
@pytest.mark.parametrize("change, step", [
    (_upper_down, "tube-invariance"), (_leaf_dropped, "tube-invariance"), (_start_off, "tube-start"),
    (_last_slab_wide, "tube-handover"), (_kappa_lo_up, "tube-kappa"),
    (_kappa_hi_down, "tube-kappa"),
    (lambda c, d: c["entry"].update(kind="spline"), "format"),
    (lambda c, d: d["spec"]["parameters"].update(eta_KQ="2*eta"), "parameters"),
], ids=["fence", "leaf", "start", "last-slab", "kappa-lo", "kappa-hi", "kind", "tie-outside-box"])
def test_a_tightened_tube_is_rejected_naming_the_step(saved, tmp_path, change, step):
    code, out = rechecked(tampered(saved, tmp_path, change))
    assert code == 1 and f"FAILED {step}:" in out, out
    # a cell's number names the cell; the family's ties are refused before any cell
    assert ("the spec's eta_KQ" in out) if step == "parameters" else ("cell root" in out), out


@pytest.mark.slow
@pytest.mark.parametrize("change", [lambda c, d: c.update(T0=c["T0"] - 1), _z_hi_down, _z_lo_up],
                         ids=["T0", "z-hi", "z-lo"])
def test_a_tightened_time_or_z_is_rejected_by_the_time_step(saved, time_check, tmp_path, change):
    """The tube-time step on the tampered cell, with the least advances the whole re-check verified (time_check)."""
    cell = json.loads(tampered(saved, tmp_path, change).read_text())["cells"][0]
    prec = ctx.prec
    try:
        with pytest.raises(rc.CheckFailed) as e:
            rc.check_time(time_check["F"], cell, time_check["graphs"], time_check["least"], time_check["P"],
                          time_check["Q_max"], time_check["u_most"])
    finally:
        ctx.prec = prec
    assert e.value.step == "tube-time" and "cell root" in str(e.value), str(e.value)


@pytest.mark.slow
def test_kappa_is_one_quarter_for_every_member_and_wider_on_the_parameter_box(saved):
    """y/x = eta_KQ lambda^2 beta^2 ||V*||^2/(K eta_V N) = 1/4 at K = 4 with one eta (by hand); on the parameter box,
    which lets eta_V and eta_KQ range apart over [1/16, 1/8], y/x spans [1/8, 1/2]."""
    data = json.loads(saved.read_text())
    F, c = rc.Formulas(data["map"]), data["cells"][0]
    # the checker's own ties from the family's options (the model's rules) are the hand-written ones, on the family
    del data["spec"]["parameters"]
    rc.check_ties(rc.family_ties(data["spec"]), TIES | {"D": "64"}, data["spec"]["ranges"])
    for ties, hand in ((TIES, (Fraction(1, 4), Fraction(1, 4))), (None, (Fraction(1, 8), Fraction(1, 2)))):
        rc.check_kappa(F, c, hand, ties)
        for narrower in ((hand[0] + Fraction(1, 2**70), hand[1]), (hand[0], hand[1] - Fraction(1, 2**70))):
            with pytest.raises(rc.CheckFailed) as e:
                rc.check_kappa(F, c, narrower, ties)
            assert e.value.step == "tube-kappa"


@pytest.mark.slow
def test_linearity_holds_for_the_map_and_fails_for_a_quadratic_step(saved):
    rc.check_linearity(rc.Formulas(json.loads(saved.read_text())["map"]))
    for a_inc, d_inc in (("x*alpha + x^2*E", "y*E"), ("x*alpha", "y*E + x*y")):
        with pytest.raises(rc.CheckFailed) as e:
            rc.check_linearity(rc.Formulas({"reduced_map": {"alpha_increment": a_inc, "delta_increment": d_inc}}))
        assert e.value.step == "tube-linearity"


def _point_gap(F, g, k, cl, theta, s, x, kap):
    """tr' - e(cl') for the lower and upper fences continued linearly from slab k, one member stepped from one
    point by the map (balls of the exact point values)."""
    dc = cl - g.knots[k]
    lo = g.lower[k] + g.slope(k, g.lower) * dc
    tr = lo + theta * (g.upper[k] + g.slope(k, g.upper) * dc - lo)
    # the point's state by hand: zeta = delta + log s on the second graph
    al, E = (rc.ball(cl), rc.ball(tr).exp()) if g.clock == "alpha" else (rc.ball(tr), rc.ball(cl).exp() / rc.ball(s))
    env = {"alpha": al, "E": E, "s": rc.ball(s), "x": rc.ball(x), "y": rc.ball(kap * x)}
    a, d = (F("reduced_map", f"{q}_increment", env, rc.Arb) for q in ("alpha", "delta"))
    cl1, tr1 = (rc.ball(cl) + a, rc.ball(tr) + d) if g.clock == "alpha" else (rc.ball(cl) + d, rc.ball(tr) + a)
    fence = lambda v: rc.ball(v[k]) + rc.ball(g.slope(k, v)) * (cl1 - rc.ball(g.knots[k]))  # noqa: E731
    return tr1 - fence(g.lower), tr1 - fence(g.upper)


@pytest.mark.slow
def test_the_gap_enclosure_holds_single_members_over_a_range_of_s(saved):
    """fence_gaps over boxes of both graphs, with s over [s(66), s(62)] (the mean-value form in s about its
    centre), contains the gaps of members at the boxes' corners and centres and at the range's ends; and with one s
    it is no wider than over the range."""
    data = json.loads(saved.read_text())
    F, ent = rc.Formulas(data["map"]), data["cells"][0]["entry"]
    graphs = [rc.TubeGraph(ent["graphs"][0], "alpha", "t"), rc.TubeGraph(ent["graphs"][1], "zeta", "t")]
    s_lo, s_hi = Fraction(4, 62), Fraction(4, 58)
    xs, kap = (Fraction(1, 64), Fraction(1, 32)), Fraction(1, 4)
    with arb_precision(128):
        for g in graphs:
            for k in (0, g.slabs // 3, g.slabs - 2):
                c0, c1 = g.knots[k], g.knots[k + 1]
                box = (c0, (c0 + c1) / 2, Fraction(1, 4), Fraction(3, 4))
                S, X, K = rc.interval(s_lo, s_hi), rc.interval(*xs), rc.interval(kap, kap)
                pL, pU, inc = rc.fence_gaps(F, g, k, box, (S, X, K), (s_lo + s_hi) / 2)
                one = rc.fence_gaps(F, g, k, box, (rc.ball(s_lo), X, K), None)
                assert one[1].rad() <= pU.rad() and pL.is_finite() and inc.is_finite()
                for cl in (box[0], (box[0] + box[1]) / 2, box[1]):
                    for th in (box[2], Fraction(1, 2), box[3]):
                        for s in (s_lo, s_hi):
                            for x in xs:
                                gl, gu = _point_gap(F, g, k, cl, th, s, x, kap)
                                assert pL.contains(gl) and pU.contains(gu), (g.clock, k, cl, th, s, x)


def test_a_leafless_or_garbled_quadtree_is_refused():
    root = (Fraction(0), Fraction(1), Fraction(0), Fraction(1))
    assert len(list(rc.tree_leaves("10000", root, "t"))) == 4
    # the leaves in the stated order: (c_lo..cm, t_lo..tm), (c_lo..cm, tm..t_hi), (cm..c_hi, t_lo..tm), ...
    h = Fraction(1, 2)
    assert list(rc.tree_leaves("10000", root, "t")) == [(0, h, 0, h), (0, h, h, 1), (h, 1, 0, h), (h, 1, h, 1)]
    for bad in ("1000", "100000", "10020", ""):
        with pytest.raises(rc.CheckFailed) as e:
            list(rc.tree_leaves(bad, root, "t"))
        assert e.value.step == "tube-invariance"


def test_the_builder_keeps_a_margin_at_a_leaf_the_checker_may_refuse():
    """The audit's leaf at D = 109: the re-checker enclosed phi_lower = tr' - lower(cl') in [-4.969e-12, 0.022] and
    refused it, while the builder's own enclosure (other rounding, other second-order terms) lay ~5e-12 higher and
    passed its zero-margin test. A leaf whose phi_lower starts within 1e-11 above 0 must now be refused by the
    builder (so the quadtree splits it further, or the attempt fails), one clear of the margin (2^-24 of the tube's
    width 0.02, ~1.2e-9) accepted; the re-checker refuses the audit's enclosure."""
    from flint import arb

    from verify.certify.tube import FENCE_MARGIN, Graph, Slab, gap_failure
    w = Fraction(1, 50)
    g = Graph("alpha", (Fraction(0), Fraction(1), Fraction(2), Fraction(3)), (Fraction(0),) * 4, (w,) * 4)
    sl = Slab.of(g, 0)
    box = tuple(rc.ball(v) for v in (0, Fraction(1, 2), 0, 1))
    pU, inc = arb(-0.011, 0.0105), arb(0.15, 0.05)                 # clear of the upper fence; no crossing
    # phi_lower in [5e-12, 2e-6] (a narrow ball: Arb's 30-bit radius rounds its ends by ~1e-15 only)
    near = rc.interval(Fraction(5, 10**12), Fraction(2, 10**6))
    assert 0 < near.lower() < 1e-11                                 # the zero-margin test accepted this
    assert "lower fence" in gap_failure(sl, box, near, pU, inc)
    clear = rc.interval(2 * FENCE_MARGIN * w, Fraction(2, 10**6))
    assert gap_failure(sl, box, clear, pU, inc) == ""
    # the re-checker's verdict on the audit's enclosure of the same kind of leaf: refused at tube-invariance's test
    tg = rc.TubeGraph({"clock": "alpha", "knots": ["0", "1", "2", "3"], "lower": ["0"] * 4, "upper": ["1/50"] * 4,
                       "trees": ["0", "0"]}, "alpha", "t")
    audit = rc.interval(Fraction(-4969, 10**15), Fraction(2, 10**6))
    why = rc.leaf_failure(tg, 0, (Fraction(0), Fraction(1, 2), Fraction(0), Fraction(1)), (audit, pU, inc))
    assert "lower fence" in why
