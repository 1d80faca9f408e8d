"""The monotone enclosure and the capped Taylor prefix (verify.certify.prefix_monotone), the entry kind "monotone" and
its re-check (recheck.certificates.CappedPrefix), and the entry routes' registry (verify.certify.family).

Second opinions: float64 iterations of the invariant map as SymPy derives it (verify.derive.invariants, lambdified:
not the generated Arb code the boxes step) at random members and at the box's corners must lie in the enclosures;
the independent re-checker accepts a certified monotone cell and refuses copies whose T0, stated hull or entry kind
were changed (digest recomputed, so only the mathematics can tell).
"""
from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import pytest

from recheck import atlas as RA
from test_atlas_split import _entry, float_member, refused, saved_atlas, tampered_end
from verify.certify import atlas as A
from verify.certify.arbfun import hi_frac, lo_frac
from verify.certify.family import CELL_KNOBS, certify_box, entry_routes
from verify.certify.prefix import PrefixState
from verify.certify.prefix_monotone import CappedState, MonotoneBox
from verify.errors import InvalidParameter
from verify.model.precision import arb_precision

F = Fraction
# a box of invariants through the fast phase within 60 steps (x = 1/2): the partials change sign on the way
BOX = ((F(1, 7), F(1, 7) + F(1, 512)), (F(1, 2), F(1, 2) + F(1, 128)), (F(1, 2), F(1, 2) + F(1, 128)))
STEPS = (10, 25, 40, 60)
MONOTONE = {"entry": "monotone"}


def _inside(v: float, ball) -> bool:
    slack = 1e-12 * max(1.0, abs(v))
    return float(lo_frac(ball)) - slack <= v <= float(hi_frac(ball)) + slack


def _members(P, n: int, seed: int) -> list:
    rng = random.Random(seed)
    corners = [list(c) for c in itertools.product(*[(float(lo), float(hi)) for lo, hi in P])]
    return corners + [[float(lo + (hi - lo) * F(rng.random())) for lo, hi in P] for _ in range(n)]


def test_the_monotone_box_and_the_capped_prefix_hold_float64_members_and_are_no_wider_than_the_taylor_box():
    """At several steps through the fast phase, the box's corners and random members (float64, SymPy's map) lie in
    the monotone box and in the capped state's box of states; that box is no wider than the plain first-order
    prefix's (the same Taylor model with its Jacobians over a larger box), and the monotone box alone saw some
    partial change sign (its partials at step 0 and at the last step differ in sign: the indefinite terms were
    used)."""
    members = _members(BOX, 6, 27)
    compared = 0
    with arb_precision(128):
        mono, capped, plain = MonotoneBox.at_zero(BOX), CappedState(BOX), PrefixState(BOX)
        signs0 = _signs(mono)
        t = 0
        for T in STEPS:
            while t < T:
                mono = mono.stepped()
                capped.step(*capped.balls())
                if plain is not None:
                    try:
                        plain.step(*plain.balls())
                    except ArithmeticError:     # the plain prefix's enclosure is unbounded (measured: at step 52)
                        plain = None
                t += 1
            Ac, Dc = capped.member_box(capped.balls()[2])
            Am, Dm = mono.states()
            if plain is not None:
                Ap, Dp = plain.member_box(plain.balls()[2])
                assert Ac.rad() <= Ap.rad() and Dc.rad() <= Dp.rad(), T
                compared += 1
            for p in members:
                a, d = float_member(*p, T)
                for v, ball in ((a, Am), (d, Dm), (a, Ac), (d, Dc)):
                    assert _inside(v, ball), (T, p, v, ball)
        assert _signs(mono) != signs0 and compared >= 2 and plain is None


def _signs(mono: MonotoneBox) -> tuple:
    """The definite signs (+1, -1, 0 for none) of d(alpha', delta')/d(alpha, delta, s, x, y) over the box."""
    from verify.certify.prefix import _jacobian, prefix_functions
    fn = prefix_functions()
    A_, D_ = mono.states()
    pb = [a.union(b) for a, b in zip(mono.p_lo, mono.p_hi)]
    j, jp = _jacobian(fn.jac(A_, D_.exp(), *pb)), fn.jac_p(A_, D_.exp(), *pb)
    return tuple(1 if g > 0 else -1 if g < 0 else 0 for g in (*j, *jp))


def test_a_box_past_x_2_never_enters_the_region():
    """Members with x in (2, 2.02] diverge (alpha' - 1 = (1 - x)(alpha - 1) at the fixed point): their box of
    invariants, given to the family machinery directly (the atlas refuses x >= 2 before any check), is not certified
    with the monotone route on, and the atlas leaves a cell reaching x = 2 open."""
    P = ((F(1, 7), F(1, 7) + F(1, 512)), (F(2) + F(1, 256), F(2) + F(1, 50)), (F(1, 2), F(1, 2) + F(1, 128)))
    rec = certify_box(P, (F(1, 4), F(1, 4) + F(1, 64)), 0, A.atlas_knobs(MONOTONE))
    assert rec["status"] == "failed"
    cell = A.AtlasCell(((F(1, 8), F(9, 64)), (F(15, 8), F(2)), (F(1), F(2))))
    assert A.run_cell(cell, A.atlas_knobs(MONOTONE))["status"] == "open"


def test_the_entry_routes_are_tried_in_registry_order_and_a_bad_route_is_refused():
    names = lambda knobs: [r.name for r in entry_routes(CELL_KNOBS | knobs)]  # noqa: E731
    assert names({}) == ["tube", "taylor"]                        # a family: no split leaves
    assert names({"split_leaves": 8}) == ["tube", "taylor", "split"]
    assert names({"split_leaves": 8, "entry": "prefix"}) == ["taylor", "split"]
    assert names({"split_leaves": 8, "entry": "monotone"}) == ["monotone"]
    with pytest.raises(InvalidParameter, match="entry"):
        entry_routes(CELL_KNOBS | {"entry": "sideways"})


@pytest.fixture(scope="module")
def monotone_atlas(tmp_path_factory):
    return saved_atlas(MONOTONE, tmp_path_factory.mktemp("atlas") / "monotone.json")


@pytest.mark.slow
def test_a_monotone_cell_is_certified_and_rechecks(monotone_atlas):
    """The split-prefix cell of test_atlas_split, through the capped states: certified with fewer leaves than the plain
    split's 20 (measured: 8), and the independent re-checker accepts it, replaying the tree on its own capped
    prefix."""
    data = json.loads(monotone_atlas.read_text())
    assert data["counts"]["certified"] == 1
    ent = _entry(data)
    assert ent["kind"] == "monotone" and 1 <= ent["leaves"] < 20
    log = []
    RA.check_file(str(monotone_atlas), lambda step, detail: log.append((step, detail)))
    assert any("capped by the monotone box" in d for _, d in log), log


@pytest.mark.slow
@pytest.mark.parametrize("tamper, why", [
    ("early", "is not inside the stated"),      # T0 lowered: the leaves are not in the stated hull yet
    ("narrow-u", "is not inside the stated"),   # the stated hull of u at T0 narrowed
    ("uncapped", "became unbounded"),           # the same tree claimed as a plain split: without the cap it blows up
])
def test_a_tampered_monotone_cell_is_refused(monotone_atlas, tmp_path, tamper, why):
    """Each change (digest recomputed) is refused by the re-checker at its prefix step, for the reason it plants."""
    data = json.loads(monotone_atlas.read_text())
    if tamper == "uncapped":
        _entry(data)["kind"] = "split"
    else:
        tampered_end(data, tamper)
    exc = refused(data, tmp_path / f"{tamper}.json")
    assert exc.step == "prefix" and why in exc.detail, exc
