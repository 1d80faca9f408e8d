"""Lemma C.2 by the staircase set (verify.certify.positivity_stair: L_i <= alpha <= U_i on pieces of w = e^-delta),
the kind appended to the registry of set kinds for kappa -> oo, and its re-check (recheck.positivity, set "stair").

Compared against, never the code's own verdict: the band map's f, b and inc against the map stated by hand here
(recheck's form, p = 1/(1 + r w), q = (r w^2 + 1)/(r w + 1)^2); inc's range against brute-force sampling; a member
iterated from (0, 0) at 40 digits with the hand map stays in the certified set with alpha > 0 for 10^4 steps; the
pieces' ends by hand; at w = 0 the map is alpha' = (1 - x) alpha + x, so an upper end past x/(x - 1) maps below 0
and a result with one is refused, as is every other tampering, naming the step.
"""
from __future__ import annotations

import random
from fractions import Fraction as F

import mpmath
import pytest
import sympy as sp

from recheck import positivity as R
from test_positivity import assert_refused
from verify.certify import positivity as P
from verify.certify import positivity_sets as PS
from verify.certify import positivity_stair as PST
from verify.certify.arbfun import exact
from verify.derive.invariants import x as X
from verify.model.precision import arb_precision
from verify.model.symbols import alpha as ALPHA

# a cell of B-kappa-high (kappa in [4, 64]) at large kappa x that the band and the ratio set leave open (both let
# delta fall below 0: docs/atlas.md, the kappa -> oo bullet); it holds the member rho = 1/4, x = 1.9, kappa = 48
CELL = {"rho": (F(1, 4), F(9, 32)), "x": (F(9, 5), F(19, 10)), "kappa": (F(32), F(64))}
MEMBER = (F(1, 4), F(19, 10), F(48))


@pytest.fixture(scope="module")
def certified():
    return PS.decide_positivity(CELL)


def _hand(rho, w_):
    r = 1 / rho - 1
    return r, 1 / (1 + r * w_), (r * w_**2 + 1) / (r * w_ + 1) ** 2


def test_obligations_hold_and_the_map_is_the_hand_map():
    assert all(o.holds is True for o in PST.obligations()), [(o.key, o.detail) for o in PST.obligations()]
    assert [o.key for o in PST.obligations()] == ["inc-factor", "alpha-free-of-kappa"]
    bm = P.band_map()
    r, p, q = _hand(P.rho, P.w)
    y = P.kappa * X
    inc = y * (1 + r) * P.w * ALPHA * (ALPHA * (P.w - 1) + 1 + r * P.w) / (1 + r * P.w) ** 3
    assert sp.simplify(bm["f"] - (1 - X * q)) == 0 and sp.simplify(bm["b"] - X * p) == 0
    assert sp.simplify(bm["inc"] - inc) == 0
    assert not bm["f"].has(P.kappa) and not bm["b"].has(P.kappa)


def test_the_pieces_of_w_by_hand():
    b = PST.breaks()
    assert b[0] == 0 and b[1] == F(1, 2**24) and b[-1] == 1 and len(b) == 24 * 8 + 2
    assert b[-2] == F(15, 16) and b[-9] == F(1, 2) and all(u < v for u, v in zip(b, b[1:]))


def test_inc_range_holds_sampled_values():
    """inc/(kappa x) over a box, from its factored form, holds the hand formula at random points of the box."""
    rnd = random.Random(7)
    with arb_precision(128):
        for _ in range(40):
            wl = F(rnd.randint(1, 900), 1000)
            wh = wl + F(rnd.randint(1, 60), 1000)
            rl = F(rnd.randint(13, 80), 100)
            rh = rl + F(rnd.randint(1, 10), 100)
            al = F(rnd.randint(10, 180), 100)
            ah = al + F(rnd.randint(1, 40), 100)
            ball = PST.inc_range(wl, wh, rl, rh, al, ah)
            for _ in range(30):
                w_, rho, a = (lo + (hi - lo) * F(rnd.randint(0, 64), 64) for lo, hi in ((wl, wh), (rl, rh), (al, ah)))
                r, _, _ = _hand(rho, w_)
                h = (1 + r) * w_ * a * (a * (w_ - 1) + 1 + r * w_) / (1 + r * w_) ** 3
                assert ball.contains(exact(h)), (wl, wh, rl, rh, al, ah, w_, rho, a)


@pytest.mark.slow
def test_band_and_ratio_open_the_staircase_certifies_and_rechecks(certified):
    band = P.decide_positivity(CELL)
    assert band["status"] == "open" and band["failed"] == "delta-nonnegative"
    assert certified["status"] == "certified" and certified["set"] == "stair"
    assert R.recheck(certified)["steps"] == ["format", "hypotheses", "identities", "first-step", "cover", "invariance"]
    assert certified["w_pieces"] == len(certified["pieces"]) == len(PST.breaks()) - 1
    assert set(certified["obligations"]) >= {"inc-factor", "alpha-free-of-kappa", "inc-kappa-x", "alpha-affine"}


def _reached(d: dict) -> int:
    return next(i for i, p in enumerate(d["pieces"]) if p[2] is not None)


@pytest.mark.slow
@pytest.mark.parametrize("tamper, step", [
    (lambda d: d["leaves"].pop(5), "cover"),
    # the lowest reached piece's upper end past x/(x - 1) = 19/9: near w = 0 it maps to (1 - x) U + x < 0
    (lambda d: d["pieces"][_reached(d)].__setitem__(3, "5/2"), "invariance"),
    (lambda d: d["pieces"][-1].__setitem__(2, "1/2"), "first-step"),            # above x rho = 9/20 at the start
    (lambda d: d["pieces"][40].__setitem__(1, "1/3"), "cover"),                  # no longer a partition of [0, 1]
    (lambda d: d["pieces"][-3].__setitem__(2, "0"), "format"),                   # L = 0: no alpha > 0
    (lambda d: d["pieces"].__setitem__(-2, d["pieces"][-2][:2] + [None, None]), "cover"),
    (lambda d: d["cell"].__setitem__("kappa", ["32", "512"]), "invariance"),
    (lambda d: d.__setitem__("set", "staircase"), "format"),
])
def test_a_tampered_staircase_result_is_refused(certified, tamper, step):
    assert_refused(certified, tamper, step)


def _piece_of(pieces, w_):
    return [p for p in pieces if F(p[0]) <= w_ <= F(p[1])]


@pytest.mark.slow
def test_a_member_stays_in_the_certified_set_at_40_digits(certified):
    """rho = 1/4, x = 1.9, kappa = 48 from (0, 0), the map by hand at 40 digits, 10^4 steps: every state lies in a
    piece of the certified staircase whose ends hold its alpha, and alpha > 0."""
    pieces = [[F(v) if v is not None else None for v in p] for p in certified["pieces"]]
    rho, x_, kappa = MEMBER
    with mpmath.workdps(40):
        r = mpmath.mpf(rho.denominator) / rho.numerator - 1
        xx = mpmath.mpf(x_.numerator) / x_.denominator
        y = kappa.numerator * xx
        al, w_ = mpmath.mpf(0), mpmath.mpf(1)
        least = mpmath.inf
        for t in range(10_000):
            p, q = 1 / (1 + r * w_), (r * w_**2 + 1) / (r * w_ + 1) ** 2
            inc = y * (1 + r) * w_ * al * (al * (w_ - 1) + 1 + r * w_) / (1 + r * w_) ** 3
            al, w_ = al - xx * (al * q - p), w_ * mpmath.exp(-inc)
            assert 0 < w_ <= 1, (t, w_)
            wq, aq = (F(mpmath.nstr(v, 35, strip_zeros=False)) for v in (w_, al))    # 35 of the 40 digits
            hits = [pc for pc in _piece_of(pieces, wq) if pc[2] is not None and pc[2] <= aq <= pc[3]]
            assert hits, (t, al, w_)
            least = min(least, al)
    assert least > 0.3
