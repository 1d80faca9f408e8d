"""Lemma C.2's large steps towards D -> oo: the omega = e^-delta/rho chart (verify.certify.positivity_chart) and the
Arb probe of the set S_gamma = {0 <= alpha <= gamma alpha*} (verify.certify.positivity_probe).

What the tests compare against, never the code's own output: the chart's parts at a rational point against values
worked out by hand here, and against recheck.positivity's independent form of the map (r = 1/rho - 1, w = rho
omega, y = kappa x); members at D = 10^8 iterated in float64 against a 40-digit mpmath iteration of that hand form;
the corner (v, rho) = (0, 0), where alpha* = 0/0, can pass no Arb box; the set's margin at the start omega = 1/rho
is x rho (gamma - 1) alpha* by hand, so it vanishes as rho -> 0; gamma != 2 fails near rho omega^2 = 1.
"""
from __future__ import annotations

from fractions import Fraction as F

import mpmath
import numpy as np
import sympy as sp

from verify.certify import positivity_chart as PC
from verify.certify import positivity_probe as PP
from verify.derive.invariants import x
from verify.model.symbols import alpha


def test_every_chart_obligation_holds():
    obs = PC.obligations()
    assert {o.key for o in obs} == {"omega-chart", "a-at-most-1", "limit-rho-0", "start", "fixed-alpha", "inc-sign",
                                   "fixed-below-threshold", "multiplier-rho-0"}
    assert all(o.holds is True for o in obs), [(o.key, o.detail) for o in obs if o.holds is not True]


def _hand_inc(al, rho, om, x_, k_):
    """recheck.positivity's form: inc = y (1 + r) w alpha (alpha (w - 1) + 1 + r w)/(1 + r w)^3, r = 1/rho - 1."""
    r, w, y = 1 / rho - 1, rho * om, k_ * x_
    return y * (1 + r) * w * al * (al * (w - 1) + 1 + r * w) / (1 + r * w) ** 3


def test_chart_at_a_rational_point_against_hand_values():
    # rho = 1/4, omega = 2 (w = 1/2), x = 3/2, kappa = 1/2, alpha = 3/4: 1 + (1 - rho) omega = 5/2;
    # a = (1 + 3/16 * 4)/(25/4) = 7/25; b = (3/2)/(5/2) = 3/5; inc = (9/8)(5/2 - 3/8)/(125/8) = 153/1000
    c = PC.chart()
    pt = {PC.rho: sp.Rational(1, 4), PC.omega: 2, x: sp.Rational(3, 2), PC.kappa: sp.Rational(1, 2),
          alpha: sp.Rational(3, 4)}
    assert sp.nsimplify(c["a"].subs(pt)) == sp.Rational(7, 25)
    assert sp.nsimplify(c["b"].subs(pt)) == sp.Rational(3, 5)
    assert sp.nsimplify(c["inc"].subs(pt)) == sp.Rational(153, 1000)
    assert _hand_inc(F(3, 4), F(1, 4), F(2), F(3, 2), F(1, 2)) == F(153, 1000)
    # alpha* at rho = 0 is 1 + omega; at the start omega = 1/rho it is 1
    assert sp.simplify(PC.ASTAR.subs({PC.rho: sp.Rational(1, 8), PC.omega: 8})) == 1


def _mp_orbit(rho, x_, k_, steps):
    """The map by hand at 40 digits (recheck's form): alpha' = alpha - x (alpha q - p), omega' = omega e^-inc."""
    with mpmath.workdps(40):
        rho, x_, k_ = (mpmath.mpf(v) for v in (rho, x_, k_))
        r = 1 / rho - 1
        al, om = x_ * rho, 1 / rho
        for _ in range(steps - 1):
            w = rho * om
            p, q = 1 / (1 + r * w), (r * w**2 + 1) / (r * w + 1) ** 2
            inc = _hand_inc(al, rho, om, x_, k_)
            al, om = al - x_ * (al * q - p), om * mpmath.exp(-inc)
        return al, om


def test_members_at_D_1e8_stay_in_the_set_and_agree_with_40_digits():
    # D = 10^8 with K = 1 and K = 3; x at the ends of [1, 1.9], kappa across [1/256, 4]
    rho = np.array([1e-8, 3e-8, 1e-8, 3e-8])
    x_ = np.array([1.0, 1.9, 1.9, 1.0])
    k_ = np.array([1 / 256, 4.0, 1 / 4, 1.0])
    o = PC.orbits(rho, x_, k_, 100_000)
    assert o["in_set"].all() and (o["min_alpha"] > 0).all() and (o["max_rho_omega"] <= 1 + 1e-12).all()
    # early on alpha(t) = 1 - (1 - x rho)^t to leading order (a = rho, b = x rho at omega = 1/rho): t = 10^5
    assert np.allclose(o["peak_alpha"], 1 - (1 - x_ * rho) ** 100_000, rtol=1e-3)
    few = PC.orbits(rho[:2], x_[:2], k_[:2], 3000)
    for i in range(2):
        al, om = _mp_orbit(rho[i], x_[i], k_[i], 3000)
        ref = PC.orbits(rho[i:i + 1], x_[i:i + 1], k_[i:i + 1], 3000)
        assert abs(float(al) - ref["peak_alpha"][0]) <= 1e-9 * float(al)
        assert abs(float(om) - ref["final_omega"][0]) <= 1e-9 * float(om)
        assert few["peak_alpha"][i] == ref["peak_alpha"][0]


def test_start_margin_vanishes_as_rho_goes_to_0():
    # at omega = 1/rho: alpha* = 1, a = rho, so alpha = gamma maps to gamma - x rho (gamma - 1) while inc =
    # gamma kappa x rho > 0 lowers omega and raises alpha*: the margin is about x rho (gamma - 1) -> 0
    for rho in (1e-2, 1e-4, 1e-6):
        al1, om1, inc = PC.step_float(2.0, 1 / rho, rho, 1.5, 0.25)
        assert abs(al1 - (2 - 1.5 * rho)) <= 1e-12 and abs(inc - 2 * 0.25 * 1.5 * rho) <= 1e-12 * 4
        slack = 2 * PC.astar_float(om1, rho) - al1
        assert 0 < slack < 10 * rho


def test_sampled_set_gamma_2_holds_and_gamma_off_2_fails_near_rho_omega_squared_1():
    good = PC.sample_set(2.0, 0.25, n=200_000)
    assert all(v["fails"] == 0 for v in good.values()), good
    for g in (1.95, 2.05):
        bad = PC.sample_set(g, 0.25, n=1_000_000)
        assert bad["upper"]["fails"] > 0
        at = bad["upper"]["at"]
        assert 0.5 < at["rho"] * at["omega"] ** 2 < 2, at     # theta = v/(v + rho omega) near 1/2: the corner


def test_probe_fails_at_the_corner_and_passes_a_regular_small_box():
    corner = {"s": (F(1, 2), F(1)), "v": (F(0), F(1, 1024)), "rho": (F(0), F(1, 1024)), "x": (F(3, 2), F(3, 2)),
              "kappa": (F(1, 8), F(1, 8))}
    from verify.model.precision import arb_precision
    with arb_precision(PP.PREC):
        assert PP.check_box(F(2), corner) is not None
        # a box where the float margin is about 0.88 (alpha' = 2.57 against gamma alpha*(omega') = 3.45)
        regular = {"s": (F(15, 16), F(1)), "v": (F(133, 256), F(134, 256)), "rho": (F(25, 256), F(26, 256)),
                   "x": (F(389, 256), F(390, 256)), "kappa": (F(1, 32), F(1, 16))}
        assert PP.check_box(F(2), regular) is None
        # past the stability edge the danger zone at omega -> 0 breaks positivity: x = 5/2, alpha = 2 alpha*(0) = 2
        # maps to (1 - 5/2) 2 + 5/2 = -1/2 < 0
        edge = regular | {"v": (F(255, 256), F(1)), "rho": (F(1, 16), F(1, 16)), "x": (F(5, 2), F(5, 2))}
        assert PP.check_box(F(2), edge) == "positive"
