"""The drift along the curve of fixed points at rho = 0 (issue 27): the band of verify.certify.drift in the chart
nu = 1/omega, t = s omega^4, h (the lag's deviation from the quasi-static one), regular at s = 0 and omega = infinity.

The states are converted by hand here (alpha*(u), the quasi-static lag L0 and the chart's definitions), and the map
is the invariant map lambdified from SymPy (tests/test_atlas_kappa), never the chart's generated Arb code."""
from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath as mp
import pytest

from verify.certify import drift
from verify.certify.arbfun import exact
from verify.model.precision import arb_precision

from test_atlas_kappa import _invariant_map, alpha_star

ZERO = {"rho": (F(0), F(1, 64)), "x": (F(1, 8), F(9, 64)), "kappa": (F(1, 4), F(9, 32))}
REGION_C = F(10)          # R~'s |e| <= C~ at u0 = 1/2 (the cell's R~ closes with C~ = 10.29)


def L0(v, kappa):
    """The quasi-static lag over s omega at s = 0, by hand: e0 u^2 (1 - u) with e0 = y/((1 - u)^3 (x (1 - u)^2 +
    y u^2)), u = 1/(1 + v)."""
    return kappa * (1 + v) ** 2 / (v**2 * (v**2 + kappa))


def state_of(v, t, h, kappa):
    """(alpha, delta, s) of the chart point (v, t, h): s = t v^4, u = 1/(1 + v), alpha = alpha*(u) + s omega
    (L0 + h - t), e^delta = r (1 - u)/u = r v."""
    s = t * v**4
    u = 1 / (1 + v)
    return alpha_star(u, 1 / s) + s / v * (L0(v, kappa) + h - t), mp.log(v / s) if isinstance(v, mp.mpf) else \
        math.log(v / s), s


def chart_of(a, d, s, kappa):
    """(v, t, h) of the state (alpha, delta) at s: v = e^delta s, t = s/v^4, h = (alpha - alpha*(u)) v/s - L0 + t."""
    v = (mp.exp(d) if isinstance(d, mp.mpf) else math.exp(d)) * s
    t = s / v**4
    return v, t, (a - alpha_star(1 / (1 + v), 1 / s)) * v / s - L0(v, kappa) + t


def test_the_chart_is_proved_and_contracts_at_omega_infinity():
    """Every SymPy obligation of the chart holds (the identities with the scaled chart and the alpha-map, the
    denominators at v = 0, and at v = 0: G = 1/kappa - h, h' = (1 - kappa x) h). Independently, one step of the
    invariant map (60 digits) from v = 1/1000 (omega = 1000, D/K ~ 10^13) moves h by (1 - kappa x) within 1%."""
    obs = drift.obligations()
    assert all(o.ok for o in obs), [o.name for o in obs if not o.ok]
    assert {"drift-Gamma", "drift-Delta", "drift-h-next", "drift-at-infinity", "drift-regular-dh"} <= \
        {o.name for o in obs}
    with mp.workdps(60):
        x, kappa, v, t, h = mp.mpf(1) / 4, mp.mpf(1) / 2, mp.mpf(1) / 1000, mp.mpf(1) / 16, mp.mpf(1) / 5
        a, d, s = state_of(v, t, h, kappa)
        a_next, inc = _invariant_map("mpmath")
        a1, d1 = a_next(a, d, 1 / s, x, kappa * x), d + inc(a, d, 1 / s, x, kappa * x)
        _, _, h1 = chart_of(a1, d1, s, kappa)
        assert abs(h1 - (1 - kappa * x) * h) < 0.01 * abs(h)


@pytest.mark.parametrize("v, t, h", [(F(1, 4), F(1, 16), F(1, 10)), (F(1, 16), F(1, 32), F(-1, 8)),
                                     (F(3, 4), F(1, 64), F(1, 5))])
def test_the_enclosure_holds_one_step_of_the_map_at_large_D(v, t, h):
    """The chart's Arb enclosure of (h', v', t') at a point holds one step of the invariant map (lambdified from
    SymPy, 60 digits), the state converted by hand both ways; D/K = 1/s from 200 to 2 * 10^6 here."""
    x, kappa = F(1, 8), F(1, 4)
    with mp.workdps(60):
        m = lambda q: mp.mpf(q.numerator) / q.denominator  # noqa: E731
        a, d, s = state_of(m(v), m(t), m(h), m(kappa))
        a_next, inc = _invariant_map("mpmath")
        a1, d1 = a_next(a, d, 1 / s, m(x), m(kappa * x)), d + inc(a, d, 1 / s, m(x), m(kappa * x))
        v1, t1, h1 = chart_of(a1, d1, s, m(kappa))
    with arb_precision(256):
        B = tuple(exact(q) for q in (v, t, h, x, kappa))
        G, _, hn, _, vn, tn = drift.evaluate(drift.arb_functions(), B, B)
        for ball_, val in ((hn, h1), (vn, v1), (tn, t1)):
            lo, hi = float(ball_.lower()), float(ball_.upper())
            assert lo - 1e-30 <= float(val) <= hi + 1e-30, (ball_, val)
            assert hi - lo < 1e-20


def _follow(member, start, band, steps):
    """Float64 iteration of the map from the chart point ``start`` for a member (s, x, kappa): the largest |h|/W
    and t/tau while omega >= 1/v_hi, and |e| at the first step past v_hi (None if it stays), e = lag/(s u^3)."""
    s, x, kappa = member
    a_next, inc = _invariant_map("math")
    a, d, _ = state_of(*start, kappa)
    worst, exit_e = 0.0, None
    for _ in range(steps):
        a, d = a_next(a, d, 1 / s, x, kappa * x), d + inc(a, d, 1 / s, x, kappa * x)
        v, t, h = chart_of(a, d, s, kappa)
        if v > band.v_hi:
            u = 1 / (1 + v)
            exit_e = (a - alpha_star(u, 1 / s)) / (s * u**3)
            break
        worst = max(worst, abs(h) / float(band.W), t / float(band.tau))
    return worst, exit_e


@pytest.fixture(scope="module")
def band():
    dc = drift.check_drift(ZERO["x"], ZERO["kappa"], F(1, 63), tau=F(1, 16), W=F(1, 4), region_C=REGION_C)
    assert dc.ok, [o.detail for o in dc.obligations if not o.ok]
    return dc


@pytest.mark.parametrize("x", ZERO["x"])
@pytest.mark.parametrize("kappa", ZERO["kappa"])
def test_members_started_on_the_band_edge_stay_until_R(band, x, kappa):
    """The band {omega >= 1, s omega^4 <= 1/16, |h| <= 1/4} closes for the cell rho in [0, 1/64], x in [1/8, 9/64],
    kappa in [1/4, 9/32], handing over to |e| <= 10; float64 members at its corners (D/K = 1000), started at the
    band's far end (t = tau) on both edges h = +-W, stay in it until they pass omega = 1, and then |e| <= 10. At
    D/K = 10^6 (far end omega = 15.9) they stay for 3000 steps."""
    for D_over_K, steps in ((1000, 60000), (10**6, 3000)):
        s = 1 / (D_over_K - 1)
        v0 = (s / float(band.tau)) ** 0.25 * 1.0001
        for h0 in (float(band.W), -float(band.W)):
            worst, exit_e = _follow((s, float(x), float(kappa)), (v0, s / v0**4, h0 * 0.999), band, steps)
            assert worst <= 1.0, (D_over_K, h0, worst)
            if D_over_K == 1000:
                assert exit_e is not None and abs(exit_e) <= float(REGION_C), exit_e


@pytest.mark.slow
def test_a_band_too_narrow_for_its_reach_is_refused_and_a_member_leaves_it():
    """Negative control: with tau = 16 W the quasi-static point (measured: h near -0.036 at t = 1/4, omega = 4,
    against W = 1/64) lies outside |h| <= W at the band's far end: the same check refuses the band, and a float64
    member started at h = 0 there leaves it."""
    W, tau = F(1, 64), F(1, 4)
    dc = drift.check_drift(ZERO["x"], ZERO["kappa"], F(1, 63), tau=tau, W=W, region_C=REGION_C, max_boxes=20000)
    assert not dc.ok and "drift-invariant" in {o.name for o in dc.obligations if not o.ok}
    s = 1 / 999
    v0 = (s / float(tau)) ** 0.25 * 1.0001
    shape = drift.DriftCheck(tau, W, F(1), F(1, 63))
    worst, _ = _follow((s, 1 / 8, 1 / 4), (v0, s / v0**4, 0.0), shape, 200)
    assert worst > 2.0


def test_a_bad_hand_over_is_refused():
    """v_hi below 1/u0 - 1 would hand over where u' > u0: refused, naming v_hi and the range."""
    from verify.errors import InvalidParameter
    with pytest.raises(InvalidParameter, match="v_hi"):
        drift.check_drift(ZERO["x"], ZERO["kappa"], F(1, 63), tau=F(1, 16), W=F(1, 4), v_hi=F(1, 2),
                          region_C=REGION_C, u0=F(1, 2))
