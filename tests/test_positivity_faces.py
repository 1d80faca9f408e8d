"""Lemma C.2 towards the faces of its large-step range: the regions B-x-edge (x -> 2), B-rho-top (rho -> 1),
B-kappa-low (kappa -> 0) and B-kappa-high (kappa -> oo) of verify.certify.positivity.REGIONS, and the band chosen
under delta_cap where kappa x is large.

What the tests compare against, never the code's own verdict: for one cell of each region, the independent
re-checker (recheck.positivity) accepts the stored band and refuses it with its upper end lowered or a leaf removed;
a member of the region at its face, iterated from (0, 0) at 40 digits by the generated map (verify.derive.invariants
in mpmath) for 10^4 steps, stays inside the certified band with delta >= 0; the cap delta_cap is tight against the
generated map's increment (delta stays >= 0 from just below it, not from just above); the regions' cell counts and
volumes by hand; a cell reaching past x = 2 is refused.
"""
from __future__ import annotations

import copy
import json
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
import sympy as sp

from recheck import positivity as R
from verify.certify import positivity as P
from verify.certify import positivity_sets as PS
from verify.certify import region_b as RB

# (region, a cell inside it, a member at the face: rho, x, kappa)
FACES = [
    ("B-x-edge", {"rho": (F(13, 16), F(7, 8)), "x": (F(39, 20), F(99, 50)), "kappa": (F(1, 256), F(4))},
     ("0.85", "1.97", "2")),
    ("B-rho-top", {"rho": (F(15, 16), F(99, 100)), "x": (F(1), F(11, 10)), "kappa": (F(1, 256), F(4))},
     ("0.98", "1.05", "1")),
    ("B-kappa-low", {"rho": (F(13, 16), F(7, 8)), "x": (F(39, 20), F(99, 50)), "kappa": (F(1, 65536), F(1, 256))},
     ("0.85", "1.97", "0.001")),
    ("B-kappa-high", {"rho": (F(7, 16), F(1, 2)), "x": (F(1), F(11, 10)), "kappa": (F(4), F(64))},
     ("0.47", "1.05", "8")),
]


@pytest.fixture(scope="module")
def decided() -> dict:
    """Each face's cell decided once, in its stored (JSON) form."""
    return {name: json.loads(json.dumps(PS.decide_positivity(cell))) for name, cell, _ in FACES}


def _generated_step():
    """The generated invariant map (verify.derive.invariants) in mpmath: (alpha, delta; r, x, y) -> (alpha', inc)."""
    from verify.derive.invariants import invariant_map, r, x, y
    from verify.model.symbols import alpha, delta
    m = invariant_map()
    return sp.lambdify((alpha, delta, r, x, y), (m.a_next, m.inc), "mpmath")


def test_the_regions_are_data_and_their_cells_tile_them():
    # cell counts by hand: B-x-edge 12 rho slices x 2 x-cells; B-rho-top 4 slices of width 23/800 with x from the
    # eighth-or-finer break below r = 1/rho_hi - 1 to 1.98 (r = 0.106, 0.072, 0.040, 0.0101: 19, 20, 20, 21 cells)
    assert len(RB.initial_cells(region="B-x-edge")) == 24
    assert len(RB.initial_cells(region="B-rho-top")) == 19 + 20 + 20 + 21
    # volumes in (rho, x, log2 kappa): B-x-edge 3/4 x 0.08 x 10; B-rho-top int (1.98 - 1/rho + 1) drho x 10
    vol = lambda n: sum(P.region_b_volume(c, P.REGIONS[n]) for c in RB.initial_cells(region=n))  # noqa: E731
    assert vol("B-x-edge") == pytest.approx(0.75 * 0.08 * 10, rel=1e-9)
    by_hand = 10 * (2.98 * (0.99 - 0.875) - float(mpmath.log(mpmath.mpf("0.99") / mpmath.mpf("0.875"))))
    assert vol("B-rho-top") == pytest.approx(by_hand, rel=1e-3)
    # Region B itself is unchanged (the atlas issue's box): 139 cells, x up to 1.9
    assert len(RB.initial_cells()) == 139 and P.REGIONS["B"]["x"][1] == F(19, 10)


@pytest.mark.parametrize("name, cell, member", FACES, ids=[f[0] for f in FACES])
def test_a_face_cell_is_certified_rechecked_and_refused_when_tampered(decided, name, cell, member):
    res = decided[name]
    assert res["status"] == "certified" and res["set"] == "band", res["reason"]
    reg = P.REGIONS[name]
    assert all(reg[n][0] <= cell[n][0] and cell[n][1] <= reg[n][1] for n in ("rho", "kappa"))
    assert cell["x"][1] <= reg["x"][1] and P.region_b_volume(cell, reg) > 0
    assert R.recheck(res)["steps"][-1] == "invariance"
    # at w = 0 (delta -> oo) the map is alpha' = (1 - x) alpha + x (p = q = 1): for x > 1 the image of alpha = L is
    # x - (x - 1) L, so an invariant band needs A >= x_hi - (x_hi - 1) L; a band lowered below that is refused
    # (at the invariance step, or at the first step when x rho no longer fits)
    L, x_hi = F(res["band"]["L"]), cell["x"][1]
    assert x_hi > 1 and F(res["band"]["A"]) >= x_hi - (x_hi - 1) * L
    lowered = copy.deepcopy(res)
    lowered["band"]["A"] = str(x_hi - (x_hi - 1) * L - F(1, 1000))
    with pytest.raises(R.CheckFailed) as exc:
        R.recheck(lowered)
    assert exc.value.step in ("first-step", "invariance")
    cut = copy.deepcopy(res)
    cut["leaves"].pop()
    with pytest.raises(R.CheckFailed) as exc:
        R.recheck(cut)
    assert exc.value.step == "cover"


@pytest.mark.parametrize("name, cell, member", FACES, ids=[f[0] for f in FACES])
def test_a_member_at_the_face_stays_in_the_band_for_ten_thousand_steps(decided, name, cell, member):
    step = _generated_step()
    L, A = F(decided[name]["band"]["L"]), F(decided[name]["band"]["A"])
    with mpmath.workdps(40):
        rho, x, kappa = (mpmath.mpf(v) for v in member)
        assert all(float(cell[n][0]) <= float(v) <= float(cell[n][1]) for n, v in zip(("rho", "x", "kappa"), member))
        r, y = 1 / rho - 1, kappa * x
        a, d = mpmath.mpf(0), mpmath.mpf(0)
        lo, hi, dmin = mpmath.inf, -mpmath.inf, mpmath.inf
        for _ in range(10_000):
            an, inc = step(a, d, r, x, y)
            a, d = an, d + inc
            lo, hi, dmin = min(lo, a), max(hi, a), min(dmin, d)
    assert float(L) <= lo and hi <= float(A) and dmin >= 0 and lo > 0


def test_delta_cap_is_tight_against_the_generated_increment():
    """From alpha just below the cap, one step of the generated map keeps delta >= 0 at every sampled (w, rho) at
    the largest kappa x; from just above it, delta falls below 0 somewhere (the cap is the least root)."""
    from verify.derive.invariants import invariant_map, r, x, y
    from verify.model.symbols import alpha, delta
    inc = sp.lambdify((alpha, delta, r, x, y), invariant_map().inc, "numpy")
    box = {"rho": (F(7, 16), F(1, 2)), "x": (F(1), F(11, 10)), "kappa": (F(4), F(64))}
    cap = P.delta_cap(box)
    ws = np.linspace(1 / 256, 1 - 1 / 256, 256)
    d = -np.log(ws)
    after = lambda a: min(float(np.min(d + inc(a, d, 1 / rh - 1, 1.1, 64 * 1.1)))  # noqa: E731
                          for rh in np.linspace(7 / 16, 1 / 2, 4))
    assert after(0.999 * cap) >= 0 > after(1.001 * cap)
    # at a smaller kappa x the cap is higher (inc is proportional to y = kappa x)
    assert P.delta_cap(box | {"kappa": (F(4), F(8))}) > cap


def test_the_capped_band_closes_a_cell_the_plain_band_leaves_open():
    """kappa in [4, 64]: the plain band's A lets delta fall below 0 at small w (check delta-nonnegative); the band
    chosen under delta_cap certifies the same cell, and its A lies below the cap."""
    box = FACES[3][1]
    (L, A), _ = P.choose_band(box)
    assert float(A) > P.delta_cap(box)
    res = P.decide_positivity(box)
    assert res["status"] == "certified" and float(F(res["band"]["A"])) <= P.delta_cap(box)


@pytest.mark.parametrize("name", ["B-x-edge", "B-kappa-low"])
def test_a_cell_past_x_two_is_not_certified(decided, name):
    cell = dict(FACES[[f[0] for f in FACES].index(name)][1])
    with pytest.raises(ValueError, match="x = eta_V"):
        PS.decide_positivity(cell | {"x": (F(99, 50), F(201, 100))})
    moved = copy.deepcopy(decided[name])
    moved["cell"]["x"] = ["99/50", "201/100"]
    with pytest.raises(R.CheckFailed) as exc:
        R.recheck(moved)
    assert exc.value.step == "hypotheses"
