"""The entry tube (verify.certify.tube, verify.certify.entry): one cell holds a whole range of step sizes.

Second opinions: a 30-digit mpmath iteration of the generated reduced recursion (verify.engines) of members of
the cell, which must be inside the region R at the tube's T0, with z = 1/u^2 in its stated range; and a tube
whose fence is moved across the members' curve, which the same checks must refuse (a negative control).
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from verify.certify.family import FamilySpec
from verify.certify.region import Profile
from verify.certify.tube import Graph, check_graph, linearity_obligation
from verify.engines import iterate
from verify.model.precision import arb_precision

ETA = (Fraction(1, 16), Fraction(1, 8))
SPEC = FamilySpec.of({"preset": "sts", "K": 4, "vstar_norm": "1"}, {"D": (64, 64), "eta": ETA})


@pytest.fixture(scope="module")
def cell(tube_cell):
    """D = 64 and every eta in [1/16, 1/8] as one cell, entered through the tube alone (conftest.py: SPEC's cell)."""
    assert tube_cell["box"] == {k: [str(v) for v in r] for k, r in SPEC.ranges}, tube_cell["box"]
    return tube_cell


def test_the_increments_are_linear_in_x_and_y():
    ob = linearity_obligation()
    assert ob.ok and ob.method == "sympy"


@pytest.mark.slow
def test_one_cell_holds_the_whole_eta_range_through_the_tube(cell):
    assert cell["entry"]["kind"] == "tube" and cell["box"]["eta"] == ["1/16", "1/8"]
    assert [g["clock"] for g in cell["entry"]["graphs"]] == ["alpha", "zeta"]
    assert all(len(g["trees"]) == len(g["knots"]) - 2 for g in cell["entry"]["graphs"])


@pytest.mark.slow
@pytest.mark.parametrize("eta", [ETA[0], Fraction(3, 32), ETA[1]])
def test_members_are_in_R_at_T0_by_a_30_digit_iteration(cell, eta):
    """At the tube's T0 the member's own iteration has u <= u0 and |eps| <= C(u), eps = (alpha - alpha*(u))/u^3
    with alpha*(u) = (1 - u)/((1 - u)^2 + s u^2) (docs/setting.md, by hand), and z = 1/u^2 in z_at_T0."""
    T0 = int(cell["T0"])
    s_reg = SPEC.setting({"D": 64, "eta": eta})
    rec = iterate(s_reg, T0, "reduced", "mpmath", 30, checkpoints=[T0]).records[-1]
    u = 1 - mpmath.mpf(rec.support_mass[0])
    s = mpmath.mpf(4) / 60
    a_star = (1 - u) / ((1 - u) ** 2 + s * u**2)
    eps = (mpmath.mpf(rec.alpha[0]) - a_star) / u**3
    reg = cell["region"]
    prof = Profile.of_runs(reg["u0"], reg["ratio"], int(reg["shells"]), reg["C_runs"])
    u_q = Fraction(mpmath.nstr(u, 25))
    assert u_q <= Fraction(reg["u0"]) and abs(Fraction(mpmath.nstr(eps, 25))) <= prof.least(u_q, u_q)
    z_lo, z_hi = (Fraction(v) for v in cell["z_at_T0"])
    assert z_lo <= 1 / u_q**2 <= z_hi


@pytest.mark.slow
def test_a_fence_moved_across_the_curve_is_refused(cell):
    """Negative control: lower the alpha graph's upper fence, from the middle on, below its lower fence's
    midline; the members' images then leave the tube and the same box checks refuse it."""
    from verify.certify.arbfun import ball
    g = cell["entry"]["graphs"][0]
    knots, lower, upper = ([Fraction(v) for v in g[k]] for k in ("knots", "lower", "upper"))
    mid = len(knots) // 2
    upper = upper[:mid] + [lo + (up - lo) / 8 for lo, up in zip(lower[mid:], upper[mid:])]
    bad = Graph("alpha", tuple(knots), tuple(lower), tuple(upper))
    box = cell["invariants"]
    kappa = [Fraction(v) for v in cell["entry"]["kappa"]]
    with arb_precision(128):
        X = ball(*(Fraction(v) for v in box[1]))
        res = check_graph(bad, tuple(Fraction(v) for v in box[0]), X, ball(*kappa), max_depth=4)
    assert not res.ok and "fence" in res.failure
