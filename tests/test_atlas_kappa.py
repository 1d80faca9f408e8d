"""The trapping region R at large kappa (issue 27): where R's top u0 must come down to 1/8.

Second opinions: the invariant map (alpha, delta) as SymPy derives it (verify.derive.invariants, lambdified to
float64: not the slow coordinates' generated Arb code the region check evaluates) with alpha*(u) written out by
hand, at a point of the cell, decides whether a constant C can make R(u0, C) invariant; float64 members iterated
from (0, 0) must stay in the certified region; the independent re-checker accepts the certified cell and refuses a
narrowed region and a cover with a box removed.
"""
from __future__ import annotations

import functools
import json
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from conftest import one_cell_atlas
from recheck import atlas as RA
from verify.certify import atlas as A
from verify.certify.arbfun import widened
from verify.certify.family import C_MULTIPLES, CELL_KNOBS, _base_C, _region
from verify.certify.region import check_region

F = Fraction
# A cell at large kappa and rho near 1/2 (c/x = (1 + r) kappa/r^2 about 4.8): no constant C is invariant on
# u <= 1/4 or 1/2, so the atlas left it open for R before U0_CAPS held 1/8; R(1/8, 2 c/(1 - |rho(0)|)) is invariant
# and a split prefix of about 8 leaves enters it at T0 = 64 (measured: 3.8 s of CPU to build on a quiet machine).
KAPPA_BOX = {"rho": (F(7, 16), F(7, 16) + F(1, 256)), "x": (F(1, 5), F(1, 5) + F(1, 256)),
             "kappa": (F(7, 2), F(7, 2) + F(1, 256))}
# The grid cell 14.58.60 of Region A's 16 x 64 x 64 grid: R(1/8, 2 c/(1 - |rho(0)|)) is invariant but its split
# prefix needs more than 512 pieces; the widest invariant R of u0 = 1/8 admits 192 (measured: 12 s of CPU, then 4 s).
WIDE_BOX = {"rho": (F(7, 16), F(15, 32)), "x": (F(1859, 2048), F(3781, 4096)),
            "kappa": (F(15361, 4096), F(62467, 16384))}
FORCE_PREFIX = {"entry": "prefix"}      # the tube fails here after some 80 s of CPU; the prefix enters in a few
FOLLOW = 10_000                         # steps after T0 that float64 members are followed for


@functools.lru_cache(maxsize=None)
def _invariant_map(module: str):
    """verify.derive.invariants' alpha' and delta' - delta as float functions of (alpha, delta, r, x, y)."""
    import sympy as sp

    from verify.derive.invariants import invariant_map, r, x, y
    from verify.model.symbols import alpha, delta
    m = invariant_map()
    args = (alpha, delta, r, x, y)
    return sp.lambdify(args, m.a_next, module), sp.lambdify(args, m.inc, module)


def alpha_star(u, r):
    """The quasi-static multiple <s, s*>/||s||^2 at off-support mass u, by hand: (1 - u)/((1 - u)^2 + u^2/r)."""
    return (1 - u) / ((1 - u) ** 2 + u * u / r)


def u_of(delta, r):
    """The off-support attention mass at delta: u = r/(e^delta + r)."""
    return r / (np.exp(delta) + r)


def escapes(u0: float, C: float, point: tuple, n: int = 400) -> bool:
    """Whether, at one member (r, x, y) in float64, some (u, eps) of a grid of R(u0, C) = {u <= u0, |eps| <= C}
    with u >= u0/16 is mapped out of it: u' >= u (Q <= 0) or |eps'| > C (1 + 1e-6). Below u0/16 the decay
    u - u' ~ c u^3 nears float64's resolution of u, and there the region check's margins are widest anyway."""
    r, x, y = point
    a_next, inc = _invariant_map("numpy")
    U, E = np.meshgrid(np.linspace(u0 / 16, u0, n), np.linspace(-C, C, 201))
    al, de = alpha_star(U, r) + E * U**3, np.log(r * (1 - U) / U)
    a1, u1 = a_next(al, de, r, x, y), u_of(de + inc(al, de, r, x, y), r)
    e1 = (a1 - alpha_star(u1, r)) / u1**3
    return bool(np.any(u1 >= U) or np.any(np.abs(e1) > C * (1 + 1e-6)))


def _cell_P() -> tuple:
    return tuple(widened(lo, hi) for lo, hi in A.AtlasCell(tuple(KAPPA_BOX.values())).invariants())


@pytest.mark.slow
def test_at_large_kappa_no_constant_C_is_invariant_above_an_eighth_and_R_comes_down_to_it():
    """At the cell's lowest corner (float64, the invariant map) every C of the region builder's ladder lets a point of
    R(1/4, C) escape, and none of R(1/8, 2 c/(1 - |rho(0)|)): the Arb check agrees (every C fails at 1/4, the first
    passes at 1/8), and the builder now picks u0 = 1/8, where it picked none."""
    P = _cell_P()
    rho, x, k = (float(lo) for lo, _ in KAPPA_BOX.values())
    point = (1 / rho - 1, x, k * x)
    base = _base_C(P)
    for m in C_MULTIPLES:
        assert escapes(0.25, float(base * m), point), m
        rc = check_region(P, F(1, 4), base * m, shells=CELL_KNOBS["shells"], n_u=CELL_KNOBS["n_u"],
                          n_eps=CELL_KNOBS["n_eps"], max_depth=CELL_KNOBS["max_depth"], ratio=CELL_KNOBS["ratio"])
        assert not rc.ok, m
    assert not escapes(0.125, float(base * 2), point)
    u0, m, rc = _region(P, 0, CELL_KNOBS)
    assert rc.ok and (u0, m) == (F(1, 8), 2)


@pytest.fixture(scope="module")
def kappa_atlas(tmp_path_factory):
    return one_cell_atlas(KAPPA_BOX, FORCE_PREFIX, tmp_path_factory.mktemp("atlas") / "kappa.json")


def _evidence(path) -> dict:
    return json.loads(path.read_text())["cells"][0]["checks"]["trajectory"]["evidence"]


@pytest.mark.slow
def test_a_large_kappa_cell_is_certified_with_R_from_an_eighth_and_rechecks(kappa_atlas):
    """Certified with u0 = 1/8, and the independent re-checker (its own evaluation of R's boxes) accepts the file."""
    data = json.loads(kappa_atlas.read_text())
    assert data["counts"]["certified"] == 1, data["cells"][0]["reason"]
    assert F(_evidence(kappa_atlas)["region"]["u0"]) == F(1, 8)
    log = []
    RA.check_file(str(kappa_atlas), lambda step, detail: log.append((step, detail)))
    assert any(step == "cell-checks" for step, _ in log), log


@pytest.mark.slow
def test_where_the_first_R_is_not_entered_the_widest_is_and_rechecks(tmp_path):
    """The cell's first invariant R (C multiple 2) is not entered (its split prefix is refused); the atlas enters the
    widest invariant R of the same u0 (a larger C multiple), and the independent re-checker accepts the file."""
    P = tuple(widened(lo, hi) for lo, hi in A.AtlasCell(tuple(WIDE_BOX.values())).invariants())
    assert _region(P, 0, CELL_KNOBS)[:2] == (F(1, 8), 2)
    narrow = A.trajectory_run(A.AtlasCell(tuple(WIDE_BOX.values())), A.atlas_knobs(FORCE_PREFIX | {"widen": False}))
    assert narrow["status"] == "open" and "more than 512 pieces" in narrow["reason"], narrow["reason"]
    path = one_cell_atlas(WIDE_BOX, FORCE_PREFIX, tmp_path / "wide.json")
    data = json.loads(path.read_text())
    assert data["counts"]["certified"] == 1, data["cells"][0]["reason"]
    ev = _evidence(path)
    assert ev["C_multiple"] > 2 and F(ev["region"]["u0"]) == F(1, 8)
    RA.check_file(str(path))


@pytest.mark.slow
def test_float64_members_stay_in_R_for_ten_thousand_steps_after_T0(kappa_atlas):
    """Random members (exact points of the cell, iterated in float64 from (0, 0) by the lambdified invariant map)
    lie in R = {u <= u0, |eps| <= C(u)} at every step from T0 to T0 + 10^4, eps = (alpha - alpha*(u))/u^3 by hand."""
    ev = _evidence(kappa_atlas)
    prof = RA.R.Profile(ev["region"])
    u0, T0 = float(prof.u0), int(ev["T0"])
    a_next, inc = _invariant_map("math")
    rng = random.Random(27)
    for _ in range(4):
        rho, x, k = (float(lo + (hi - lo) * F(rng.randrange(1025), 1024)) for lo, hi in KAPPA_BOX.values())
        r, y = 1 / rho - 1, k * x
        a, d = 0.0, 0.0
        for t in range(T0 + FOLLOW + 1):
            if t >= T0:
                u = r / (math.exp(d) + r)
                e = (a - alpha_star(u, r)) / u**3
                C = float(prof.least(F(u)))
                assert 0 < u <= u0 and abs(e) <= C * (1 + 1e-9), (rho, x, k, t, u, e, C)
            a, d = a_next(a, d, r, x, y), d + inc(a, d, r, x, y)


@pytest.mark.slow
def test_a_narrowed_region_or_a_cover_without_one_box_is_refused(kappa_atlas, tmp_path):
    """The re-checker's region check refuses R with C(u) quartered (eps' leaves it) and the stated cover with one box
    removed (the sweep finds the hole); each tampered file (digest recomputed) is refused as a whole."""
    data = json.loads(kappa_atlas.read_text())
    cell = data["cells"][0]
    ev = cell["checks"]["trajectory"]["evidence"]
    F_ = RA.R.Formulas(data["map"])
    P = [tuple(F(v) for v in pair) for pair in ev["invariants"]]
    RA.R.check_region(F_, ev["region"], P)                  # control: the region as certified passes
    narrow = ev["region"] | {"C_runs": [[str(F(c) / 4), n] for c, n in ev["region"]["C_runs"]]}
    holed = dict(ev["region"])
    boxes = RA.R.expand_boxes(holed)
    del holed["splits"]
    holed["boxes"] = [[str(v) for v in b] for b in boxes[: len(boxes) // 2] + boxes[len(boxes) // 2 + 1:]]
    for region, step in ((narrow, "region-invariant"), (holed, "region-cover")):
        with pytest.raises(RA.R.CheckFailed) as exc:
            RA.R.check_region(F_, region, P)
        assert exc.value.step == step, exc.value
        ev["region"] = region
        cell["digest"] = A.cell_digest(cell)
        bad = tmp_path / f"{step}.json"
        bad.write_text(json.dumps(data))
        with pytest.raises(RA.R.CheckFailed):
            RA.check_file(str(bad))


def test_a_large_kappa_cell_past_x_two_stays_open():
    """The same rho and kappa with x from 2 to 65/32 (outside the stability hypothesis x < 2): the atlas leaves the
    cell open, its trajectory check naming x >= 2."""
    cell = A.AtlasCell((KAPPA_BOX["rho"], (F(2), F(65, 32)), KAPPA_BOX["kappa"]))
    res = A.run_cell(cell, A.atlas_knobs())
    assert res["status"] == "open", res
    assert "x reaches 65/32 >= 2" in res["checks"]["trajectory"]["reason"], res


def test_the_tube_reference_stops_when_eps_stalls(monkeypatch):
    # the rule reads (u, eps) through verify.certify.entry._u_eps: fed hand-made (u, eps) pairs here
    import importlib
    E = importlib.import_module("verify.certify.entry")
    seq = iter([(0.9, 5.0)] * 10 + [(0.3, 5.0)] * 1000)
    monkeypatch.setattr(E, "_u_eps", lambda s, a, d: next(seq))
    done = E.reference_stop(1.0, 0.5, 1.0, patience=4)
    # u <= 1/2 first at call 11; |eps| = 5 > 1 stays: the rule stops 4 x 11 calls later, at call 55
    assert next(i for i in range(1, 1000) if done(0.0, 0.0)) == 55
    seq = iter([(0.9, 5.0)] * 10 + [(0.3, 5.0)] * 5 + [(0.3, 0.5)] * 100)
    done = E.reference_stop(1.0, 0.5, 1.0, patience=4)
    assert next(i for i in range(1, 1000) if done(0.0, 0.0)) == 16     # |eps| <= 1 at call 16: stops there
