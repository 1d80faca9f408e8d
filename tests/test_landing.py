"""The landing on the curve of fixed points at rho = 0 (issue 27): verify.certify.landing, in the lag over omega
eta = s h, from within eps = 1/8 of the curve into the drift band, every scale of s at once.

Second opinions: the states are converted by hand (tests/test_drift's state_of, chart_of: alpha*(u), the
quasi-static lag and the chart's definitions) and stepped by the invariant map lambdified from SymPy
(tests/test_atlas_kappa), never by the chart's generated code; the hyper-dual arithmetic against mpmath's numerical
derivatives; the limit at omega = infinity by hand (p' = p e^{kappa x p (1 - p)}, p = 1 + eta)."""
from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath as mp
import pytest
from flint import arb

from recheck.hyperdual import HD, exprel, hd_power
from verify.certify import landing
from verify.certify.arbfun import exact
from verify.model.precision import arb_precision

from test_atlas_kappa import _invariant_map
from test_drift import ZERO, chart_of, state_of

S_HI = F(1, 63)
BAND = {"tau": F(1, 8), "W": F(1, 2), "v_hi": F(1, 2)}


def test_hyper_duals_give_the_mixed_second_derivative():
    """f(x, y) = exprel(x y^2)/(1 + x)^3 at (0.3, 0.7): value, both first derivatives and the mixed second
    derivative against mpmath's numerical derivatives; the second derivative in x alone at x = -0.2."""
    f = lambda x, y: exprel(x * hd_power(y, 2)) / hd_power(1 + x, 3)  # noqa: E731
    g = lambda x, y: (mp.expm1(x * y * y) / (x * y * y)) / (1 + x) ** 3  # noqa: E731
    with mp.workdps(30):
        r = f(HD(arb(3) / 10, 1, 0), HD(arb(7) / 10, 0, 1))
        x0, y0 = mp.mpf(3) / 10, mp.mpf(7) / 10
        want = (g(x0, y0), mp.diff(lambda z: g(z, y0), x0), mp.diff(lambda z: g(x0, z), y0),
                mp.diff(g, (x0, y0), (1, 1)))
        for part, w in zip((r.a, r.b, r.c, r.d), want):
            assert part.contains(arb(mp.nstr(w, 25))) or abs(float(part.mid()) - float(w)) < 1e-14, (part, w)
            assert float(part.rad()) < 1e-12
        r = f(HD(-arb(2) / 10, 1, 1), HD(arb(7) / 10))
        assert abs(float(r.d.mid()) - float(mp.diff(lambda z: g(z, y0), -mp.mpf(2) / 10, 2))) < 1e-12


def test_the_chart_is_proved_and_has_the_hand_limit_at_omega_infinity():
    """Every SymPy obligation holds (the identities with the band's chart, the limits at nu = 0, the denominators
    at nu = 0 and t = 0). Independently, one 60-digit step of the invariant map at omega = 10^4 (D/K ~ 10^18) from
    eta = -1/10 moves p = 1 + eta as p e^{kappa x p (1 - p)} does, to 10^-3."""
    obs = landing.obligations()
    assert all(o.ok for o in obs), [o.name for o in obs if not o.ok]
    assert {"landing-Ghat", "landing-Delta", "landing-eta-next", "landing-at-infinity", "landing-regular-deta"} <= \
        {o.name for o in obs}
    with mp.workdps(60):
        x, kappa, v, t, eta = mp.mpf(1) / 4, mp.mpf(1) / 2, mp.mpf(10) ** -4, mp.mpf(1) / 16, -mp.mpf(1) / 10
        s = t * v**4
        a, d, _ = state_of(v, t, eta / s, kappa)
        a_next, inc = _invariant_map("mpmath")
        a1, d1 = a_next(a, d, 1 / s, x, kappa * x), d + inc(a, d, 1 / s, x, kappa * x)
        _, _, h1 = chart_of(a1, d1, s, kappa)
        p = 1 + eta
        assert abs((1 + s * h1) - p * mp.exp(kappa * x * p * (1 - p))) < 1e-3 * abs(eta)


@pytest.mark.parametrize("v, t, eta", [(F(1, 4), F(1, 16), F(-1, 10)), (F(1, 16), F(1, 32), F(-1, 1000)),
                                       (F(1, 2), F(1, 64), F(-1, 8))])
def test_the_hyper_dual_step_holds_one_step_of_the_map_at_large_D(v, t, eta):
    """eta' from the chart (hyper-dual evaluation at a point, 256 bits) holds one 60-digit step of the invariant map
    (the state converted by hand both ways), at D/K = 1/s from 3 * 10^3 to 4 * 10^6, and its e1 part is the
    derivative of that step in eta (a centred difference of the map, 10^-20 apart)."""
    x, kappa = F(1, 8), F(1, 4)
    m = lambda q: mp.mpf(q.numerator) / q.denominator  # noqa: E731

    def step(e):
        with mp.workdps(60):
            s = m(t) * m(v) ** 4
            a, d, _ = state_of(m(v), m(t), e / s, m(kappa))
            a_next, inc = _invariant_map("mpmath")
            a1, d1 = a_next(a, d, 1 / s, m(x), m(kappa * x)), d + inc(a, d, 1 / s, m(x), m(kappa * x))
            return s * chart_of(a1, d1, s, m(kappa))[2]

    with arb_precision(256):
        e, _ = landing.eta_next(landing.hd_functions(), tuple(HD(exact(q), 1 if i == 2 else 0)
                                                              for i, q in enumerate((v, t, eta, x, kappa))))
    with mp.workdps(60):
        gap = mp.mpf(10) ** -20
        want, dwant = step(m(eta)), (step(m(eta) + gap) - step(m(eta) - gap)) / (2 * gap)
        for part, w in ((e.a, want), (e.b, dwant)):
            lo, hi = (mp.mpf(z.str(70, radius=False)) for z in (part.lower(), part.upper()))
            assert lo - mp.mpf(10) ** -30 <= w <= hi + mp.mpf(10) ** -30, (part, w)
    assert float(e.a.rad()) < 1e-30


@pytest.fixture(scope="module")
def land():
    lc = landing.check_landing(ZERO["x"], ZERO["kappa"], S_HI, **BAND)
    assert lc.ok, [o.detail for o in lc.obligations if not o.ok]
    return lc


def _land(member, eta0, lc, steps):
    """Float64 iteration from eta = eta0 at nu = nu_in(s) for the member (s, x, kappa): the step at which |h| <= W
    (in the band), the largest nu before it, and the largest eta'/eta over the steps with |h| > W."""
    s, x, kappa = member
    v0 = float(landing.nu_in(lc, F(s)))
    t0 = s / v0**4
    a_next, inc = _invariant_map("math")
    a, d, _ = state_of(v0, t0, eta0 / s, kappa)
    top, ratio, eta = v0, 0.0, eta0
    for n in range(1, steps + 1):
        a, d = a_next(a, d, 1 / s, x, kappa * x), d + inc(a, d, 1 / s, x, kappa * x)
        v, t, h = chart_of(a, d, s, kappa)
        if abs(h) <= float(lc.W):
            return n, top, ratio
        top, ratio, eta = max(top, v), max(ratio, s * h / eta), s * h
    return None, top, ratio


@pytest.mark.slow
@pytest.mark.parametrize("x", ZERO["x"])
@pytest.mark.parametrize("kappa", ZERO["kappa"])
def test_members_within_eps_of_the_curve_enter_the_band_within_T(land, x, kappa):
    """The landing closes for rho in [0, 1/64], x in [1/8, 9/64], kappa in [1/4, 9/32] into the band {nu <= 1/2
    (omega >= 2), t <= 1/8, |h| <= 1/2}; float64 members at its corners (D/K = 10^3, 10^5, 10^7) started at eta = -1/8
    with nu = nu_in(s) enter the band (|h| <= 1/2) within the stated T(s) steps, with nu <= 1/2 on the way, and every
    step contracts eta by no more than lambda_f = 1 - m x_lo/4 allows (m: landing.transverse_rate)."""
    for D_over_K in (10**3, 10**5, 10**7):
        s = 1 / (D_over_K - 1)
        n, top, ratio = _land((s, float(x), float(kappa)), -1 / 8, land, 5 * 10**4)
        T = landing.steps_to_band(land, F(1, D_over_K - 1))
        assert n is not None and n <= T, (D_over_K, n, T)
        assert top <= float(land.v_hi) and ratio <= float(land.lam_f), (D_over_K, top, ratio)


@pytest.mark.slow
def test_the_count_against_hand_values(land):
    """T(s) = j_f + ceil(log(eps1/(s w))/log(1/lambda_n)) with w = W - C/(1 - lambda_n), by hand in floats; nu_in
    = nu_hi e^-(K0 + K1 s T(s)) shrinks towards nu_hi e^-K0 as s -> 0."""
    c = landing.counts(land)
    w = float(land.W) - float(land.C) / (1 - float(land.lam_n))
    for s in (F(1, 1000), F(1, 10**9)):
        j_n = math.ceil(math.log(float(land.eps1) / (float(s) * w)) / math.log(1 / float(land.lam_n)))
        assert landing.steps_to_band(land, s) in (c["j_f"] + j_n, c["j_f"] + j_n + 1)
        want = float(land.v_hi) * math.exp(-(float(c["K0"]) + float(c["K1"]) * float(s) * (c["j_f"] + j_n)))
        assert abs(float(landing.nu_in(land, s)) - want) < 1e-6 * want
    # j_f: eps1 - C s_hi/(1 - lambda_f) reached from eps at the rate lambda_f
    far = float(land.eps1) - float(land.C) * float(S_HI) / (1 - float(land.lam_f))
    assert c["j_f"] == math.ceil(math.log(float(land.eps) / far) / math.log(1 / float(land.lam_f)))


@pytest.mark.slow
def test_a_contraction_claimed_too_strong_is_refused_and_a_member_contracts_more_slowly():
    """Negative control: lambda_f = 1 - kappa_lo x_lo (the multiplier at the curve itself, which is 1 at p = 1/2 and
    about 1 - (21/32) kappa x at eta = -1/8) is refused by the same boxes, and a float64 member started at eta =
    -1/8 contracts by more than that factor in its first step."""
    lam = 1 - ZERO["kappa"][0] * ZERO["x"][0]
    lc = landing.check_landing(ZERO["x"], ZERO["kappa"], S_HI, lam_f=lam, max_boxes=3000, **BAND)
    assert not lc.ok and "d eta'/d eta" in lc.obligations[-1].detail
    s, x, kappa = 1e-5, float(ZERO["x"][0]), float(ZERO["kappa"][0])
    a_next, inc = _invariant_map("math")
    v, t = 0.1, s / 0.1**4
    a, d, _ = state_of(v, t, -0.125 / s, kappa)
    a, d = a_next(a, d, 1 / s, x, kappa * x), d + inc(a, d, 1 / s, x, kappa * x)
    assert s * chart_of(a, d, s, kappa)[2] / -0.125 > float(lam)


@pytest.mark.slow
def test_members_from_a_quarter_of_the_way_reach_the_landing_within_N_a(land):
    """The approach {-3/4 <= eta <= -1/8} closes for the same cell into the landing's region; float64 members at its
    corners (D/K = 10^5, 10^7) started at eta = -3/4 (p = 1/4) with nu = nu_in(s) e^-K_a reach eta >= -1/8 within N_a
    steps, eta rising every step and nu staying <= nu_in(s); a region reaching p = 0 (eta = -1, where p' = p) is
    refused by the same boxes."""
    ac = landing.check_approach(ZERO["x"], ZERO["kappa"], S_HI, tau=land.tau, v_hi=land.v_hi, eps=land.eps)
    assert ac.ok, [o.detail for o in ac.obligations if not o.ok]
    a_next, inc = _invariant_map("math")
    for D_over_K in (10**5, 10**7):
        s = 1 / (D_over_K - 1)
        top = float(landing.nu_in(land, F(1, D_over_K - 1)))
        v0 = top * math.exp(-float(ac.log_growth()))
        for x in ZERO["x"]:
            for kappa in ZERO["kappa"]:
                x_, k_ = float(x), float(kappa)
                a, d, _ = state_of(v0, s / v0**4, -0.75 / s, k_)
                eta, n = -0.75, 0
                while eta < -float(land.eps):
                    a, d = a_next(a, d, 1 / s, x_, k_ * x_), d + inc(a, d, 1 / s, x_, k_ * x_)
                    v, t, h = chart_of(a, d, s, k_)
                    n += 1
                    assert s * h > eta and v <= top and n <= ac.steps(), (D_over_K, x, kappa, n, v, s * h)
                    eta = s * h
    bad = landing.check_approach(ZERO["x"], ZERO["kappa"], S_HI, tau=land.tau, v_hi=land.v_hi, eps=land.eps,
                                 eps_a=F(1), max_boxes=2000)
    assert not bad.ok
