"""Lemma C.2 between the certified regions (issue 27): the holes of positivity.FACES_BOX (region_b.holes), the regions
that close them (B-low-x-edge, B-zero-kappa-low, B-zero-kappa-mid, B-rho-top-kappa-low, B-low-kappa-high,
B-rho-top-kappa-high of positivity.REGIONS) and
the set kinds a region names (its "sets": the threshold set first where the band and the ratio set are slow).

What the tests compare against, never the code's own verdict: the holes' boxes and volume shares by hand (the
minus-1% box's volume is 22 (0.49 + 2.98 x 0.49 - ln(0.99/0.5)) in (rho, x, log2 kappa)); for one cell of each new
region, the independent re-checker (recheck.positivity) accepts the stored result and refuses it with a leaf removed
or the cell widened to kappa = 64 (a threshold set: kappa x far past its reach; a band: A lowered below what alpha' = x
- (x - 1) L at w = 0 needs; a staircase: kappa widened down to 1 (an image then meets a piece left empty), or its
lowest reached piece's upper end past x/(x - 1), from where alpha' = (1 - x) U + x < 0 near w = 0); a member of each
new region iterated from (0, 0) at 40 digits by a loop of the closed forms in (alpha, delta) written in
tests/test_positivity_zero.py stays positive (and in the certified set) for 10^4 steps.
"""
from __future__ import annotations

import copy
import json
import math
from fractions import Fraction as F

import mpmath
import pytest

from recheck import positivity as R
from test_positivity import assert_refused
from test_positivity_zero import _in_set, _step
from verify.certify import positivity as P
from verify.certify import positivity_sets as PS
from verify.certify import positivity_threshold as PT
from verify.certify import region_b as RB

NEW = ("B-low-x-edge", "B-zero-kappa-low", "B-zero-kappa-mid", "B-rho-top-kappa-low", "B-low-kappa-high",
       "B-rho-top-kappa-high")
# (region, a cell inside it, the kind that certifies it, a member of the region: rho, x, kappa)
CELLS = [
    ("B-low-x-edge", {"rho": (F(1, 32), F(1, 16)), "x": (F(39, 20), F(99, 50)), "kappa": (F(1, 256), F(1))},
     "threshold", ("0.04", "1.97", "1")),
    ("B-zero-kappa-low", {"rho": (F(1, 16), F(3, 32)), "x": (F(1), F(11, 10)), "kappa": (F(1, 65536), F(1, 256))},
     "threshold", ("0.07", "1.05", "0.0001")),
    ("B-zero-kappa-mid", {"rho": (F(1, 32), F(1, 16)), "x": (F(1), F(11, 10)), "kappa": (F(1), F(2))},
     "threshold", ("0.05", "1.05", "2")),
    ("B-rho-top-kappa-low", {"rho": (F(15, 16), F(99, 100)), "x": (F(39, 20), F(99, 50)),
                             "kappa": (F(1, 65536), F(1, 256))}, "band", ("0.98", "1.97", "0.0001")),
    ("B-low-kappa-high", {"rho": (F(7, 64), F(1, 8)), "x": (F(1), F(11, 10)), "kappa": (F(4), F(8))}, "band",
     ("0.12", "1.05", "6")),
    ("B-rho-top-kappa-high", {"rho": (F(769, 800), F(99, 100)), "x": (F(6, 5), F(13, 10)), "kappa": (F(4), F(64))},
     "stair", ("0.98", "1.25", "32")),
]
WHOLE = 22 * (0.49 + 2.98 * 0.49 - math.log(0.99 / 0.5))     # FACES_BOX's volume, by hand


@pytest.fixture(scope="module")
def decided() -> dict:
    """Each new region's cell decided once by the kinds its region names, in its stored (JSON) form."""
    return {name: json.loads(json.dumps(PS.decide_positivity(cell, P.REGIONS[name].get("sets"))))
            for name, cell, _, _ in CELLS}


def test_the_holes_before_and_after_by_hand():
    """Before (the seven regions up to B-zero): seven boxes; after: none (the last, kappa in [4, 64] below rho = 1/32,
    is B-zero-kappa-high's box, whose cells stay open). Shares by hand: a box [rho_lo, rho_hi] below 1/2 with x from
    1 to x_hi has volume (rho_hi - rho_lo)(x_hi - 1) log2(kappa_hi/kappa_lo); above 7/8 it is int (1.98 - 1/rho + 1) drho log2(...)."""
    before = RB.holes({n: P.REGIONS[n] for n in list(P.REGIONS)[:7]})
    low = lambda r0, r1, x1, k0, k1: (r1 - r0) * (x1 - 1) * math.log2(k1 / k0) / WHOLE  # noqa: E731
    top = (2.98 * (0.99 - 0.875) - math.log(0.99 / 0.875)) / WHOLE  # noqa: E731  (per unit of log2 kappa)
    hand = [((0, F(1, 32)), (1, F(99, 50)), (F(1, 65536), F(1, 256)), low(0, 1 / 32, 1.98, 2**-16, 2**-8)),
            ((0, F(1, 32)), (1, F(99, 50)), (1, 64), low(0, 1 / 32, 1.98, 1, 64)),
            ((F(1, 32), F(1, 8)), (0, F(19, 10)), (F(1, 65536), F(1, 256)), low(1 / 32, 1 / 8, 1.9, 2**-16, 2**-8)),
            ((F(1, 32), F(1, 8)), (0, F(19, 10)), (1, 64), low(1 / 32, 1 / 8, 1.9, 1, 64)),
            ((F(1, 32), F(1, 8)), (F(19, 10), F(99, 50)), (F(1, 65536), 64), 3 / 32 * 0.08 * 22 / WHOLE),
            ((F(7, 8), F(99, 100)), (0, F(99, 50)), (F(1, 65536), F(1, 256)), 8 * top),
            ((F(7, 8), F(99, 100)), (0, F(99, 50)), (4, 64), 4 * top)]
    assert [(h["rho"], h["x"], h["kappa"]) for h in before] == [h[:3] for h in hand]
    for h, (_, _, _, share) in zip(before, hand):
        assert h["share"] == pytest.approx(share, rel=2e-3)
    after = RB.holes()
    assert after == []
    last = RB.holes({n: P.REGIONS[n] for n in P.REGIONS if n != "B-zero-kappa-high"})
    assert [(h["rho"], h["x"], h["kappa"]) for h in last] == [((0, F(1, 32)), (1, F(99, 50)), (4, 64))]
    assert last[0]["share"] == pytest.approx(low(0, 1 / 32, 1.98, 4, 64), rel=1e-3)
    # the last hole of the seven regions' (above rho = 7/8, kappa in [4, 64]) is B-rho-top-kappa-high's box
    top_high = P.REGIONS["B-rho-top-kappa-high"]
    assert (top_high["rho"], top_high["kappa"], top_high["x"][1]) == (hand[6][0], hand[6][2], F(99, 50))
    assert RB.holes({n: P.REGIONS[n] for n in P.REGIONS if n != "B-rho-top-kappa-high"})[-1]["share"] == \
        pytest.approx(4 * top, rel=1e-3)  # (rel 1e-3: the code integrates over rho by a 64-point midpoint rule)


def test_a_region_names_only_known_set_kinds():
    known = {k.name for k in PS.SETS}
    for name, reg in P.REGIONS.items():
        assert set(reg.get("sets", known)) <= known, name
    assert [k.name for k in PS.kinds_named(("threshold", "band"))] == ["threshold", "band"]
    with pytest.raises(ValueError, match="sets \\['cube'\\]: each must be one of band, ratio, threshold"):
        PS.kinds_named(("cube",))


@pytest.mark.parametrize("name, cell, kind, member", CELLS, ids=[c[0] for c in CELLS])
def test_a_new_region_cell_is_certified_rechecked_and_refused_when_tampered(decided, name, cell, kind, member):
    res = decided[name]
    assert res["status"] == "certified" and res["set"] == kind, res["reason"]
    reg = P.REGIONS[name]
    assert all(reg[n][0] <= cell[n][0] and cell[n][1] <= reg[n][1] for n in ("rho", "kappa"))
    assert cell["x"][1] <= reg["x"][1] and P.region_b_volume(cell, reg) > 0
    assert R.recheck(res)["steps"][-1] == "invariance"
    assert_refused(res, lambda r: r["leaves"].pop(), "cover")
    if kind == "threshold":
        # kappa x up to 64 x 1.98: the threshold set's delta check fails far past kappa x ~ 2.4
        assert_refused(res, lambda r: r["cell"].update(kappa=["1/256", "64"]), "invariance")
        assert_refused(res, lambda r: r.update(a_factor="99/100"), "identities")
    elif kind == "stair":
        # kappa from 1: at kappa < 4 members reach pieces of w the sweep at kappa >= 4 left empty
        assert_refused(res, lambda r: r["cell"].update(kappa=["1", "64"]), "invariance")
        low = next(i for i, p in enumerate(res["pieces"]) if p[2] is not None)
        assert_refused(res, lambda r: r["pieces"][low].__setitem__(3, "14/3"), "invariance")   # x/(x - 1) = 13/3
    else:
        # at w = 0, alpha' = x - (x - 1) L: a band needs A >= x_hi - (x_hi - 1) L
        L, x_hi = F(res["band"]["L"]), cell["x"][1]
        lowered = copy.deepcopy(res)
        lowered["band"]["A"] = str(x_hi - (x_hi - 1) * L - F(1, 1000))
        with pytest.raises(R.CheckFailed) as exc:
            R.recheck(lowered)
        assert exc.value.step in ("first-step", "invariance")    # where x rho no longer fits, the first step


@pytest.mark.parametrize("name, cell, kind, member", CELLS, ids=[c[0] for c in CELLS])
def test_a_member_of_a_new_region_stays_positive_for_ten_thousand_steps(decided, name, cell, kind, member):
    """From (0, 0), 10^4 steps at 40 digits (the closed forms in (alpha, delta), not the certificate's code): alpha > 0
    and delta >= 0 throughout; in the threshold set S(2, A) for a threshold cell, in [L, A] for a band."""
    reg = P.REGIONS[name]
    assert all(float(reg[n][0]) <= float(member[i]) <= float(reg[n][1]) for i, n in ((0, "rho"), (2, "kappa")))
    assert 1 <= float(member[1]) <= float(reg["x"][1])
    res = decided[name]
    assert all(float(cell[n][0]) <= float(v) <= float(cell[n][1]) for n, v in zip(P.NAMES, member))
    with mpmath.workdps(40):
        rho, x, kappa = (mpmath.mpf(v) for v in member)
        if kind == "band":
            L, A = (mpmath.mpf(F(res["band"][e]).numerator) / F(res["band"][e]).denominator for e in ("L", "A"))
        a, d = mpmath.mpf(0), mpmath.mpf(0)
        for t in range(1, 10_001):
            a, d = _step(a, d, rho, x, kappa)
            assert a > 0 and d >= 0, (t, a, d)
            if kind == "threshold":
                assert _in_set(a, d, rho), (t, a, d)
            elif kind == "stair":      # in a piece of w = e^-delta whose alpha range holds alpha
                w_ = mpmath.exp(-d)
                mp = lambda v: mpmath.mpf(F(v).numerator) / F(v).denominator  # noqa: E731
                assert any(mp(p[0]) <= w_ <= mp(p[1]) and p[2] is not None and mp(p[2]) <= a <= mp(p[3])
                           for p in res["pieces"]), (t, a, d)
            else:
                assert L <= a <= A, (t, a, d)


@pytest.mark.slow
def test_gamma_three_halves_closes_past_the_flip_where_gamma_two_does_not():
    """rho in [0, 1/32], x in [1, 1.1], kappa in [5/2, 3] (kappa x up to 3.3, past the corner map's flip at 2):
    S(2, A) fails delta' >= 0 on its 2T face, S(3/2, A) closes (the corner needs gamma >= max_p p e^(3.3 p (1 - p)),
    about 1.40 by hand: p = 0.7 gives 0.7 e^0.693 = 1.40); the re-checker accepts it and refuses it with gamma set to
    2. Next to x = 2 (x in [1.9, 1.95], kappa in [3/2, 2]) neither gamma closes: near the start alpha' reaches about
    x alpha*, so gamma >= about x, and gamma = 2 fails delta (a member's loop: below)."""
    cell = {"rho": (F(0), F(1, 32)), "x": (F(1), F(11, 10)), "kappa": (F(5, 2), F(3))}
    corner = max(p * math.exp(3.3 * p * (1 - p)) for p in (i / 1000 for i in range(2001)))
    assert corner == pytest.approx(1.40, abs=0.01)
    assert PT._decide_gamma(cell, F(2), PT.MAX_BOXES)["failed"] == "delta"
    res = json.loads(json.dumps(PS.decide_positivity(cell, ("threshold",))))
    assert res["status"] == "certified" and res["gamma"] == "3/2"
    assert R.recheck(res)["steps"][-1] == "invariance"
    assert_refused(res, lambda r: r.update(gamma="2"), "invariance")
    edge = PT.decide({"rho": (F(0), F(1, 32)), "x": (F(19, 10), F(39, 20)), "kappa": (F(3, 2), F(2))})
    assert edge["status"] == "open" and "min(2 T, A)" in edge["reason"] and "min(3/2 T, A)" in edge["reason"]


def test_a_member_past_the_flip_stays_in_the_three_halves_set():
    """rho = 1/100 (D = 100 K) and 10^-4, x = 1.05, kappa = 3 (kappa x = 3.15): 10^4 steps from (0, 0) at 40 digits
    stay in S(3/2, A) (the closed forms written in tests/test_positivity_zero.py)."""
    with mpmath.workdps(40):
        for rho in (mpmath.mpf(1) / 100, mpmath.mpf("1e-4")):
            a, d = mpmath.mpf(0), mpmath.mpf(0)
            for t in range(1, 10_001):
                a, d = _step(a, d, rho, mpmath.mpf("1.05"), mpmath.mpf(3))
                assert _in_set(a, d, rho, gamma=mpmath.mpf(3) / 2), (t, a, d)


def test_the_lemma_says_every_D_only_for_a_region_from_rho_0_without_open_cells():
    """B-zero-kappa-mid's certified cells do not reach rho = 0 (its open ones do): Lemma C.2's reason must not say
    "every D >= 8 K" for it; a region from rho = 0 with every cell certified says it (D >= K/rho_hi = 8 K)."""
    from lemmas.lemma_C_2 import _from_rho_zero
    box = {"region": {"rho": ["0", "1/8"]}, "certified": 55}
    assert _from_rho_zero(box | {"open": 111}) == ""
    assert _from_rho_zero(box | {"open": 0}) == "; from rho = 0: every D >= 8 K"


def test_a_cell_from_rho_0_past_the_flip_stays_open_at_the_corner_and_its_member_stays_positive():
    """B-zero-kappa-high (rho in [0, 1/32], kappa in [4, 64]) is a region so that its cells are named and searched, not
    because they close: at the corner v = w = 0 the map is p' = p e^(kappa x p (1 - p)), and an invariant set needs
    gamma >= max_p p e^(kappa x p (1 - p)) there (about 4.09 at kappa x = 8, by hand below), beyond gamma = 2 and 3/2:
    the cell rho in [0, 1/128], x in [1, 11/10], kappa in [4, 64] stays open at v = 0, w = 0 for both. A member of it
    (rho = 1/200, x = 1.05, kappa = 16) iterated from (0, 0) at 40 digits stays positive for 10^4 steps."""
    corner = max(p * math.exp(8 * p * (1 - p)) for p in (i / 1000 for i in range(2001)))
    assert corner == pytest.approx(4.09, abs=0.01)
    cell = {"rho": (F(0), F(1, 128)), "x": (F(1), F(11, 10)), "kappa": (F(4), F(64))}
    res = PS.decide_positivity(cell, P.REGIONS["B-zero-kappa-high"]["sets"])
    assert res["status"] == "open"
    assert "min(2 T, A): check threshold fails on v in [0," in res["reason"]
    assert "min(3/2 T, A): check threshold fails on v in [0," in res["reason"] and "], w in [0, " in res["reason"]
    with mpmath.workdps(40):
        a, d = mpmath.mpf(0), mpmath.mpf(0)
        for t in range(1, 10_001):
            a, d = _step(a, d, mpmath.mpf(1) / 200, mpmath.mpf("1.05"), mpmath.mpf(16))
            assert a > 0 and d >= 0, (t, a, d)
