"""The far approach at rho = 0 (verify.certify.far): its chart against the map stated by hand, its check on the
example cell, members followed through it, and a region it must refuse."""
from __future__ import annotations

from fractions import Fraction as F

import mpmath as mp
import pytest

from verify.certify import far
from verify.certify.arbfun import exact
from verify.model.precision import arb_precision

CELL_X, CELL_K = (F(1, 8), F(9, 64)), (F(1, 4), F(9, 32))
TAU = F(1, 8)


def hand_step(b, w, t, x, k):
    """One step of the reduced map in (beta, varpi, t), stated by hand (recheck.positivity's form: r = 1/s, w_ =
    e^-delta = s/nu, p = 1/(1 + r w_), q = (r w_^2 + 1)/(r w_ + 1)^2, alpha' = alpha - x (alpha q - p), inc = kappa
    x (1 + r) w_ alpha (alpha (w_ - 1) + 1 + r w_)/(1 + r w_)^3), in mpmath at the working precision."""
    al, nu = 1 / b, b * w
    s = t * nu**4
    r, e = 1 / s, s / nu
    p, q = 1 / (1 + r * e), (r * e**2 + 1) / (r * e + 1) ** 2
    al2 = al - x * (al * q - p)
    inc = k * x * (1 + r) * e * al * (al * (e - 1) + 1 + r * e) / (1 + r * e) ** 3
    nu2 = nu * mp.exp(inc)
    return 1 / al2, al2 * nu2, s / nu2**4


def hand_eta(b, w, t, k):
    """The landing's eta = (alpha - alpha*(u)) nu - s (L0 - t), by hand: alpha* nu = nu^2 (1 + nu)/(nu^2 + s), L0 =
    kappa (1 + nu)^2/(nu^2 (nu^2 + kappa))."""
    al, nu = 1 / b, b * w
    s = t * nu**4
    return (al - nu * (1 + nu) / (nu**2 + s)) * nu - s * (k * (1 + nu) ** 2 / (nu**2 * (nu**2 + k)) - t)


def test_the_chart_is_the_map_stated_by_hand():
    """Its obligations hold, and at three points its (varpi' - varpi)/varpi^2, bdec, incp and eta (Arb, the file's
    formulas) hold one 60-digit step of the map stated by hand."""
    out, ob = far.far_chart()
    assert ob and all(o.ok for o in ob), [o.name for o in ob if not o.ok]
    fh = far.hd_functions()
    mp.mp.dps = 60
    for b, w, t, x, k in ((F(1, 10), F(1, 100), F(1, 9), F(1, 8), F(1, 4)), (F(1, 3), F(1, 5), F(1, 50), F(1, 2), 2),
                          (F(1, 30), F(3, 10), F(1, 1000), F(1, 30), F(1, 100))):
        B, W, T, X, K = (mp.mpf(z.numerator) / z.denominator for z in (b, w, t, F(x), F(k)))
        b2, w2, t2 = hand_step(B, W, T, X, K)
        with arb_precision(200):
            g, bd, ip = far.step_terms(fh, tuple(exact(F(z)) for z in (b, t, w, x, k)))
            e = fh["eta"](*(exact(F(z)) for z in (b, t, w, x, k)))[0]
        for ball, want in ((g, (w2 - W) / W**2), (bd, (B / b2 - 1) / (X * B**2 * W)), (ip, mp.log(T / t2) / 4 / W),
                           (e, hand_eta(B, W, T, K))):
            assert abs(float(ball.mid()) - float(want)) <= 1e-12 * max(1.0, abs(float(want))), (b, w, t, ball, want)


ROOM, C_APPR = F(3, 16), F(1, 2)     # about the example cell's nu_in_min (0.186) and its approach's c


def hand_quotient(b, w, t, k):
    """The approach's entry quotient nu e^(c |eta|)/(1 + eta), nu = beta varpi, with the hand eta."""
    e = hand_eta(b, w, t, k)
    return b * w * mp.exp(-mp.mpf(C_APPR.numerator) / C_APPR.denominator * e) / (1 + e)


@pytest.fixture(scope="module")
def example():
    return far.check_far(CELL_X, CELL_K, far.FAR_S_HI, tau=TAU, eps_a=F(3, 4), eps=F(1, 8), nu_room=ROOM, c=C_APPR)


@pytest.mark.slow
def test_the_example_cell_closes_and_members_follow_it(example):
    """The cell closes under a room of 3/16 with c = 1/2, and its beta_max is the largest multiple of 1/64 that can:
    one more and a member on the layer's edge (varpi = 5/16, the hand map) is outside the approach's entry set.
    Members at its (x, kappa) corners started at beta = beta_max, t = tau and varpi0 = 1/100 or 1/1000 leave varpi
    <= pi_h within the stated count, alpha and omega monotone, and land on the layer with eta in [-3/4, -1/8] and
    nu e^(c |eta|)/(1 + eta) <= the room."""
    fc = example
    assert fc.ok and fc.d > 0
    mp.mp.dps = 30
    over = fc.beta_max + F(1, far.BETA_DENOMINATOR)
    worst = max(hand_quotient(mp.mpf(over.numerator) / over.denominator, mp.mpf(5) / 16, t, mp.mpf(k.numerator) /
                              k.denominator) for t in (mp.mpf(0), mp.mpf(TAU.numerator) / TAU.denominator) for k in CELL_K)
    assert worst > float(ROOM), (fc.beta_max, worst)
    for x in CELL_X:
        for k in CELL_K:
            for w0 in (F(1, 100), F(1, 1000)):
                b, w, t = (mp.mpf(z.numerator) / z.denominator for z in (fc.beta_max, w0, TAU))
                X, K = mp.mpf(x.numerator) / x.denominator, mp.mpf(k.numerator) / k.denominator
                n = 0
                while w <= mp.mpf(5) / 16:
                    b2, w2, t2 = hand_step(b, w, t, X, K)
                    assert b2 <= b and t2 <= t and w2 > w
                    b, w, t, n = b2, w2, t2, n + 1
                assert n <= fc.steps(w0), (x, k, w0, n, fc.steps(w0))
                assert b < float(fc.beta_max)        # alpha grew on the way
                assert w <= float(fc.pi_x) and -0.75 <= hand_eta(b, w, t, K) <= -0.125
                assert hand_quotient(b, w, t, K) <= float(fc.nu_room)


def test_a_layer_outside_the_approach_is_refused():
    """Negative control: with the approach said to end at eta = -3/4 (eps = 3/4: its region empty above p ~ 1/4), the
    layer pi_h <= varpi <= 3/8 (p ~ 0.31 to 0.37) lies above it: the same check refuses it, and a member there has
    eta > -3/4 indeed."""
    fc = far.check_far(CELL_X, CELL_K, far.FAR_S_HI, tau=TAU, eps_a=F(3, 4), eps=F(3, 4), nu_room=ROOM, c=C_APPR)
    assert not fc.ok and next(o for o in fc.obligations if not o.ok).name == "far-layer"
    mp.mp.dps = 30
    assert hand_eta(mp.mpf(1) / 16, mp.mpf(5) / 16, mp.mpf(1) / 8, mp.mpf(1) / 4) > -0.75
