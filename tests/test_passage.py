"""The passage at rho = 0 (verify.certify.passage): its chart against the map stated by hand (test_far's, in
(beta, varpi, t) with t = xi/(beta^2 varpi^3)), members followed through it against its stated bounds, and a region
it must refuse."""
from __future__ import annotations

from fractions import Fraction as F

import mpmath as mp
import pytest

from test_far import CELL_K, CELL_X, hand_step
from verify.certify import far, passage
from verify.certify.arbfun import exact
from verify.model.precision import arb_precision

BETA_MAX, TAU = F(7, 64), F(1, 8)      # the example cell's far approach


def _mp(q):
    return mp.mpf(q.numerator) / q.denominator


def hand_xi_step(b, xi, w, x, k):
    """One step in (beta, xi, varpi) by the hand map in (beta, varpi, t), t = xi/(beta^2 varpi^3)."""
    b2, w2, t2 = hand_step(b, w, xi / (b**2 * w**3), x, k)
    return b2, t2 * b2**2 * w2**3, w2


def test_the_chart_is_the_map_stated_by_hand():
    """At three points the chart's gpi, bdec, incp - x beta^2 bdec (Arb, from the file's formulas) and xi' hold one
    60-digit step of the hand map, and the growths of Psi = k alpha^2 + log alpha^2 and of alpha^2 over log varpi's
    lie on the right sides of the chart's two bounds."""
    fh = passage.hd_functions()
    mp.mp.dps = 60
    for b, xi, w, x, k in ((F(1, 3), F(1, 20), F(1, 1000), F(1, 8), F(1, 4)), (F(1, 10), F(1, 100), F(1, 5),
                                                                                  F(1, 2), F(2)),
                           (F(27, 64), F(1, 16), F(5, 16), F(9, 64), F(9, 32))):
        B, XI, W, X, K = map(_mp, (b, xi, w, x, k))
        b2, xi2, w2 = hand_xi_step(B, XI, W, X, K)
        want_g = (w2 - W) / W**2
        want_bd = (B / b2 - 1) / (X * B**2 * W)
        # t' = t e^(-4 inc): inc = varpi incp
        want_ip = -mp.log((xi2 / (b2**2 * w2**3)) / (XI / (B**2 * W**3))) / 4 / W
        A, A2, lw = 1 / B**2, 1 / b2**2, mp.log(w2 / W)
        psi, q = (K * (A2 - A) + mp.log(A2 / A)) / lw, (A2 - A) / lw
        with arb_precision(200):
            g, bd, xd, pl, qh = passage.step_terms(fh, tuple(exact(z) for z in (b, xi, w, x, k)), exact(k))
        for ball, want in ((g, want_g), (bd, want_bd), (xd, want_ip - X * B**2 * want_bd)):
            assert abs(float(ball.mid()) - float(want)) <= 1e-12 * max(1.0, abs(float(want))), (b, xi, w, ball, want)
        assert float(pl.mid()) <= float(psi) and float(q) <= float(qh.mid()), (b, xi, w, pl, psi, q, qh)
        # xi' = xi ratio/E: ratio = beta/beta', E = e^(varpi incp)
        assert abs(float(xi2) - float(XI * (B / b2) * mp.exp(-W * want_ip))) <= 1e-12 * float(XI)


@pytest.fixture(scope="module")
def example():
    return passage.check_passage(CELL_X, CELL_K, beta_a=F(27, 64), beta_max=BETA_MAX, tau=TAU, s_hi=far.FAR_S_HI,
                                 psi_floor=F(7, 4))


@pytest.mark.slow
def test_the_example_cell_closes_and_members_follow_it(example):
    """The cell closes with psi_min >= 7/4 (Psi = k alpha^2 + log alpha^2, k = kappa_hi = 9/32; the corner's value is
    2 (1 - 1/16) = 15/8 at kappa = k, by hand); members at its (x, kappa) corners started at beta = 27/64, xi = 1/16
    and varpi0 = 1/1000 or 1/100 (the hand map, 30 digits) keep beta and xi non-increasing and varpi rising, pass
    varpi_e = 1/4 within the stated count at varpi <= pi_h, with Psi - Psi0 >= psi_min log(varpi/varpi0) and alpha^2 -
    alpha0^2 <= q_max log(varpi/varpi0) at every step."""
    pc = example
    assert pc.ok and pc.psi_min >= F(7, 4) and pc.k == F(9, 32) and pc.q_max < 20
    assert passage.corner_growth(F(1, 16)) == F(15, 8)
    mp.mp.dps = 30
    kk = _mp(pc.k)
    for x in CELL_X:
        for k in CELL_K:
            for w0 in (F(1, 1000), F(1, 100)):
                b, xi, w = _mp(pc.beta_a), _mp(pc.xi_a), _mp(w0)
                a0, X, K, n = 1 / b**2, _mp(x), _mp(k), 0
                while w < _mp(pc.varpi_e):
                    b2, xi2, w2 = hand_xi_step(b, xi, w, X, K)
                    assert b2 <= b and xi2 <= xi and w2 > w
                    b, xi, w, n = b2, xi2, w2, n + 1
                    grow, A = mp.log(w / _mp(w0)), 1 / b**2
                    assert kk * (A - a0) + mp.log(A / a0) >= float(pc.psi_min) * grow
                    assert A - a0 <= float(pc.q_max) * grow
                assert n <= pc.steps(w0) and w <= _mp(pc.pi_h), (x, k, w0, n, pc.steps(w0))


def test_a_region_reaching_xi_near_one_is_refused():
    """Negative control: with xi up to 1 the region holds states where 1 - varpi + nu - xi < 0, so alpha falls
    (beta' > beta by the hand map at beta = 1/4, xi = 15/16, varpi = 1/4): the same check refuses it."""
    pc = passage.check_passage(CELL_X, CELL_K, beta_a=F(1, 4), beta_max=BETA_MAX, tau=TAU, s_hi=far.FAR_S_HI,
                               xi_a=F(1), max_boxes=2000)
    assert not pc.ok and next(o for o in pc.obligations if not o.ok).name == "passage-boxes"
    mp.mp.dps = 30
    b2, _, _ = hand_xi_step(mp.mpf(1) / 4, mp.mpf(15) / 16, mp.mpf(1) / 4, _mp(CELL_X[0]), _mp(CELL_K[0]))
    assert b2 > mp.mpf(1) / 4


@pytest.mark.slow
def test_a_cell_of_large_kappa_closes_with_beta_a_capped():
    """At kappa in [2, 17/8], x in [19/1024, 81/4096] the rule beta_a^2 <= 3/4 kappa_lo gives beta_a = 39/32 > 1,
    where nu = beta varpi is large and xi can grow (incp - x beta^2 bdec < 0 near varpi ~ 0.28: refused), so the
    cell takes the second beta_a, 3/4, and closes there."""
    xr, kr = (F(19, 1024), F(81, 4096)), (F(2), F(17, 8))
    first = passage.check_passage(xr, kr, beta_a=F(39, 32), beta_max=BETA_MAX, tau=TAU, s_hi=far.FAR_S_HI,
                                  max_boxes=2000)
    assert not first.ok and "xi could grow" in next(o for o in first.obligations if not o.ok).detail

    class Far:
        beta_max, tau, s_hi, pi_h = BETA_MAX, TAU, far.FAR_S_HI, far.PI_H
    pc = passage.passage_for_cell((None, xr, kr), Far)
    assert pc.ok and pc.beta_a == passage.BETA_CAP == F(3, 4)
