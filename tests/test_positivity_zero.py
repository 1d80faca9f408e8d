"""Lemma C.2 on the first cell containing rho = 0: the threshold set S(2, A) (verify.certify.positivity_threshold),
the kind "threshold" of positivity_sets.SETS and the region B-zero = rho in [0, 1/32] of positivity.REGIONS.

What the tests compare against, never the code's own verdict: the chart (v, w, p) against the generated map
(verify.derive.invariants in mpmath at 40 digits, also at D = 10^8) through closed forms written here; A(rho) against
a dense float maximum of alpha* and 3/2 at rho = 1/4 by hand; the independent re-checker (recheck.positivity) on a
certified cell and on tampered copies (gamma raised to 5/2, A lowered 1%, a leaf removed); members at D = 10^6 and
10^8 iterated from (0, 0) at 40 digits by a loop of the closed forms in (alpha, delta) written here, staying in the
set with alpha > 0; a state of the set whose image leaves it when kappa x > 2 (kappa = 3), and a cell reaching
kappa = 3 left open.
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
from verify.certify import positivity_threshold as PT
from verify.certify import region_b as RB

CELL = {"rho": (F(0), F(1, 32)), "x": (F(39, 20), F(99, 50)), "kappa": (F(1, 256), F(1))}


@pytest.fixture(scope="module")
def certified() -> dict:
    """A cell of B-zero (x next to 2) decided once, in its stored (JSON) form."""
    return json.loads(json.dumps(PS.decide_positivity(CELL)))


def _generated_step():
    from verify.derive.invariants import invariant_map, r, x, y
    from verify.model.symbols import alpha, delta
    m = invariant_map()
    return sp.lambdify((alpha, delta, r, x, y), (m.a_next, m.inc), "mpmath")


def _step(a, d, rho, x, kappa):
    """One step of the map in (alpha, delta), written here from the closed forms (recheck.positivity's docstring):
    q = (r w^2 + 1)/(r w + 1)^2, mass = 1/(1 + r w), inc = y (1 + r) w alpha (alpha (w - 1) + 1 + r w)/(1 + r w)^3."""
    r, y, w = 1 / rho - 1, kappa * x, mpmath.exp(-d)
    den = 1 + r * w
    inc = y * (1 + r) * w * a * (a * (w - 1) + den) / den**3
    return a - x * (a * (r * w * w + 1) / den**2 - 1 / den), d + inc


def _in_set(a, d, rho, gamma=2):
    """alpha > 0, delta >= 0, alpha <= A(rho) = (1 + sqrt(rho))/(2 sqrt(rho)) and alpha <= gamma T, T = (1 + r w)/(1 - w)
    (written as alpha (1 - w) <= gamma (1 + r w))."""
    r, w = 1 / rho - 1, mpmath.exp(-d)
    return a > 0 and d >= 0 and a <= (1 + mpmath.sqrt(rho)) / (2 * mpmath.sqrt(rho)) and a * (1 - w) <= gamma * (1 + r * w)


@pytest.mark.parametrize("rho", ["1/32", "1e-4", "1e-8"])
def test_the_chart_v_w_p_is_the_generated_map(rho):
    """(v, w, p) = (rho/(rho + w), e^-delta, alpha v) after one step of the generated map equals the chart's forms
    v' = v/(v + (1 - v) E), w' = w E, p' = P v'/v with E = e^-inc, P = (1 - x a) p + x v^2/(1 - v w) and
    inc = kappa x p (1 - v)((1 - v w) - p (1 - w))/(1 - v w)^3, a = v (v + w (1 - v) - w^2 v)/(1 - v w)^2."""
    step = _generated_step()
    with mpmath.workdps(40):
        rh = mpmath.mpf(F(rho).numerator) / F(rho).denominator
        for al, d, x, k in [("0.3", "0", "1.9", "1"), ("2.5", "3", "1.5", "0.25"), ("1.2", "9", "1.98", "0.004")]:
            al, d, x, k = (mpmath.mpf(s) for s in (al, d, x, k))
            a1, inc = step(al, d, 1 / rh - 1, x, k * x)
            w = mpmath.exp(-d)
            v = rh / (rh + w)
            p = al * v
            den = 1 - v * w
            a = v * (v + w * (1 - v) - w * w * v) / den**2
            inc_h = k * x * p * (1 - v) * (den - p * (1 - w)) / den**3
            E = mpmath.exp(-inc_h)
            Pv = (1 - x * a) * p + x * v * v / den
            w1 = w * E
            v1 = v / (v + (1 - v) * E)
            assert abs(inc - inc_h) <= mpmath.mpf(10) ** -30 * (1 + abs(inc))
            assert abs(rh / (rh + w1) - v1) <= mpmath.mpf(10) ** -30
            assert abs(a1 * v1 - Pv * v1 / v) <= mpmath.mpf(10) ** -30 * (1 + abs(a1))


def test_A_is_the_maximum_of_alpha_star():
    """A(rho) = (1 + sqrt(rho))/(2 sqrt(rho)) against a dense float maximum of alpha*(omega) = (1 + (1 - rho) omega)/
    (1 + rho (1 - rho) omega^2), and A(1/4) = 3/2 by hand (alpha* at omega = 4/3: (1 + 1)/(1 + 1/3))."""
    A = sp.lambdify(sp.Symbol("rho", positive=True), PT.A_RHO.subs(PT.rho, sp.Symbol("rho", positive=True)))
    for rho in (1 / 4, 1 / 32, 1e-3, 1e-6):
        om = np.geomspace(1e-3, 1e7, 2_000_001)
        best = np.max((1 + (1 - rho) * om) / (1 + rho * (1 - rho) * om**2))
        assert best <= A(rho) * (1 + 1e-12) and best >= A(rho) * (1 - 1e-9)
    assert A(0.25) == pytest.approx(1.5, abs=1e-15)
    assert all(o.holds is True for o in PT.obligations())


def test_a_cell_holding_rho_0_is_certified_and_rechecked(certified):
    assert certified["status"] == "certified" and certified["set"] == "threshold"
    assert certified["cell"]["rho"] == ["0", "1/32"] and "every D >= 32 K" in certified["reason"]
    assert R.recheck(certified)["steps"][-1] == "invariance"


@pytest.mark.parametrize("tamper, step", [
    (lambda r: r.update(gamma="5/2"), "invariance"),             # a larger set: not invariant next to x = 2
    (lambda r: r.update(a_factor="99/100"), "identities"),       # A below alpha*'s maximum
    (lambda r: r["leaves"].pop(5), "cover"),
])
def test_a_tampered_cell_is_refused(certified, tamper, step):
    bad = copy.deepcopy(certified)
    tamper(bad)
    with pytest.raises(R.CheckFailed) as e:
        R.recheck(bad)
    assert e.value.step == step


def test_rho_0_is_a_cell_end_only_for_the_threshold_set(certified):
    """The band and the ratio set need r = 1/rho - 1 finite: from rho = 0 the registry skips them, and the re-checker
    refuses a band stored with rho from 0; a cell from rho = 0 is inside the hypotheses (members 0 < rho)."""
    assert P.in_hypotheses({"rho": (F(0), F(1, 32)), "x": (F(1), F(2, 1) - F(1, 50)), "kappa": (F(1), F(1))}) is None
    assert P.in_hypotheses({"rho": (F(0), F(0)), "x": (F(1), F(1)), "kappa": (F(1), F(1))}) is not None
    open_ = PS.decide_positivity(CELL | {"kappa": (F(1, 256), F(3))})
    assert open_["status"] == "open" and "band: rho-zero" in open_["failed"] and "threshold: " in open_["failed"]
    band = json.loads(json.dumps(PS.decide_positivity({"rho": (F(1, 8), F(3, 16)), "x": (F(1), F(11, 10)),
                                                       "kappa": (F(1, 256), F(4))})))
    assert band["set"] == "band"
    band["cell"]["rho"] = ["0", "3/16"]
    with pytest.raises(R.CheckFailed) as e:
        R.recheck(band)
    assert e.value.step == "hypotheses"


def test_kappa_x_past_2_leaves_the_set_and_is_not_certified():
    """At S(2, A)'s face alpha = 2 T at rho = 10^-4, omega = 10 (delta = -log(rho omega)), one step with x = 1.9 at
    40 digits keeps delta >= 0 for kappa = 1 and drives it below 0 for kappa = 3 (kappa x = 5.7 > 2); S(2, A) leaves a
    cell reaching kappa = 3 open (at x near 1 S(3/2, A) closes it: tests/test_positivity_gaps.py)."""
    with mpmath.workdps(40):
        rho, om, x = mpmath.mpf("1e-4"), mpmath.mpf(10), mpmath.mpf("1.9")
        w = rho * om
        a = 2 * (1 + (1 / rho - 1) * w) / (1 - w) * (1 - mpmath.mpf(10) ** -30)     # on the face, inside
        assert _in_set(a, -mpmath.log(w), rho)
        assert _in_set(*_step(a, -mpmath.log(w), rho, x, mpmath.mpf(1)), rho)
        a1, d1 = _step(a, -mpmath.log(w), rho, x, mpmath.mpf(3))
        assert d1 < 0 and not _in_set(a1, d1, rho)
    res = PT._decide_gamma(CELL | {"x": (F(1), F(11, 10)), "kappa": (F(1, 256), F(3))}, F(2), PT.MAX_BOXES)
    assert res["status"] == "open" and res["failed"] == "delta"


def test_the_region_B_zero_is_data():
    """11 cells: rho in [0, 1/32] once, x at 1, 1.1, ..., 1.9, 1.95, 1.98; volume 1/32 x 0.98 x 8 in (rho, x,
    log2 kappa)."""
    cells = RB.initial_cells(region="B-zero")
    assert len(cells) == 11 and all(c["rho"] == (F(0), F(1, 32)) for c in cells)
    assert sum(P.region_b_volume(c, P.REGIONS["B-zero"]) for c in cells) == pytest.approx(0.98 * 8 / 32, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("rho, kappa", [("3e-6", "1"), ("3e-6", "1/256"), ("3e-8", "1")])
def test_members_at_large_D_stay_in_the_set(rho, kappa):
    """D = 10^6 and 10^8 (K = 3), x = 1.9: 10^5 steps from (0, 0) at 40 digits stay in S(2, A) with alpha > 0."""
    with mpmath.workdps(40):
        rho, x = mpmath.mpf(rho), mpmath.mpf("1.9")
        kappa = mpmath.mpf(F(kappa).numerator) / F(kappa).denominator
        a, d = mpmath.mpf(0), mpmath.mpf(0)
        for t in range(1, 100_001):
            a, d = _step(a, d, rho, x, kappa)
            assert _in_set(a, d, rho), (t, a, d)


def test_the_atlas_positivity_check_certifies_a_cell_from_rho_0(certified):
    """The atlas's cell check "positivity" applies to a cell from rho = 0 in the large-step range and certifies it by
    the threshold set; the atlas re-checker's "positivity" step accepts the stored result and refuses it with gamma
    raised to 5/2 (a hand-checked failure of invariance next to x = 2, above)."""
    from recheck import atlas as recheck_atlas
    from recheck.certificates import CheckFailed
    from verify.certify import atlas
    check = atlas.checks()["positivity"]
    assert check.applies(CELL)
    box = {n: [str(lo), str(hi)] for n, (lo, hi) in CELL.items()}
    lines = []
    recheck_atlas.recheck_positivity(None, {"path": "0", "box": box}, {"evidence": certified},
                                     None, lambda step, detail: lines.append(step))
    assert lines == ["positivity"]
    with pytest.raises(CheckFailed):
        recheck_atlas.recheck_positivity(None, {"path": "0", "box": box}, {"evidence": certified | {"gamma": "5/2"}},
                                         None, lambda *a: None)
