"""verify.engines.mean_value, the one Arb mean-value step: its ball holds the exact image of every point of the box
(checked with fractions on a linear map's corners and a dense sample of a nonlinear map), its radius is the hand value
|A| r of a linear map, a first-order term never moves a midpoint; and the two states built on it (the reduced engine's
CertifiedState, the certificate's PrefixState and CappedState) step exactly as they did before it (literals recorded
from the code at c44b29c, where each state wrote its own step)."""
from __future__ import annotations

import hashlib
from fractions import Fraction

import pytest
from flint import arb, fmpq

import verify.engines.arb as arb_engine
from verify.certify.prefix import PrefixState
from verify.certify.prefix_monotone import CappedState
from verify.engines.arb import CertifiedState
from verify.engines.balls import to_fraction
from verify.engines.mean_value import box, image, mean_value_step, spread
from verify.model import make_setting
from verify.model.precision import arb_precision


def q(x) -> arb:
    """The ball of the exact rational x (rounded outward; exact when x is a short dyadic)."""
    x = Fraction(x)
    return arb(fmpq(x.numerator, x.denominator))


def contains(c, r, value: Fraction) -> bool:
    """Whether the box c + [-r, r] (exact balls) holds the exact ``value``."""
    return abs(value - to_fraction(c)) <= to_fraction(r)


class Refused(ArithmeticError):
    pass


def linear_step(A, b, c, r):
    """One mean-value step of z -> A z + b (2 x 2, exact rationals) from the box c +- r (short dyadics)."""
    def terms(B):
        # F(c) as one ball of the exact rational; J = A (constant: its enclosure over any box)
        return [[q(A[i][0] * c[0] + A[i][1] * c[1] + b[i]), (q(A[i][0]), 0), (q(A[i][1]), 1)] for i in range(2)]
    return mean_value_step([q(x) for x in c], [q(x) for x in r], terms, Refused)


@pytest.mark.parametrize("bits", [64, 128, 256])
def test_a_linear_maps_ball_holds_every_corners_image_and_its_radius_is_abs_A_times_r(bits):
    A = [[Fraction(1, 3), Fraction(-2, 5)], [Fraction(3, 7), Fraction(1, 2)]]
    b = [Fraction(1, 7), Fraction(-1, 9)]
    c, r = [Fraction(3, 8), Fraction(-5, 16)], [Fraction(1, 2**10), Fraction(3, 2**12)]
    with arb_precision(bits):
        c1, r1 = linear_step(A, b, c, r)
    for i in range(2):
        assert c1[i].rad() == 0 and r1[i].rad() == 0                 # re-centred: exact balls
        for s0 in (-1, 1):
            for s1 in (-1, 1):
                z = (c[0] + s0 * r[0], c[1] + s1 * r[1])
                assert contains(c1[i], r1[i], A[i][0] * z[0] + A[i][1] * z[1] + b[i])
        hand = abs(A[i][0]) * r[0] + abs(A[i][1]) * r[1]              # the exact image's half-width
        # Arb adds the rounding of F(c) and of the non-dyadic A (~2^-bits) and rounds radii up to 30 bits
        assert hand <= to_fraction(r1[i]) <= hand * (1 + Fraction(1, 2**26)) + Fraction(1, 2**(bits - 4))


def test_a_dyadic_linear_maps_centre_is_exact_and_its_radius_abs_A_times_r_to_the_radii_rounding():
    A = [[Fraction(3, 4), Fraction(-1, 8)], [Fraction(1, 2), Fraction(5, 4)]]
    b = [Fraction(1, 16), Fraction(-3, 2)]
    c, r = [Fraction(3, 8), Fraction(-5, 16)], [Fraction(1, 2**10), Fraction(3, 2**12)]
    with arb_precision(128):
        c1, r1 = linear_step(A, b, c, r)
    for i in range(2):
        assert to_fraction(c1[i]) == A[i][0] * c[0] + A[i][1] * c[1] + b[i]
        # F(c) and A are exact; a radius is a 30-bit mag_t rounded up (arb(0, r) already adds up to one ulp)
        hand = abs(A[i][0]) * r[0] + abs(A[i][1]) * r[1]
        assert hand <= to_fraction(r1[i]) <= hand * (1 + Fraction(1, 2**27))


@pytest.mark.parametrize("c, r", [(Fraction(3, 4), Fraction(1, 64)), (Fraction(-1, 8), Fraction(1, 4)),
                                  (Fraction(0), Fraction(1, 2**20))])
def test_the_square_maps_ball_holds_the_image_of_a_dense_sample_of_the_box(c, r):
    def terms(B):
        cc = q(c)
        return [[cc * cc, (2 * B[0], 0)]]                            # J(B) = 2B encloses d(z^2)/dz over B
    with arb_precision(64):
        (c1,), (r1,) = mean_value_step([q(c)], [q(r)], terms, Refused)
    n = 256
    for k in range(n + 1):
        z = c - r + 2 * r * Fraction(k, n)
        assert contains(c1, r1, z * z), z
    # the first-order form's width: 2 |c| r + 2 r^2 (J over the box times r), up to rounding
    assert to_fraction(r1) <= (2 * abs(c) * r + 2 * r * r) * (1 + Fraction(1, 2**20)) + Fraction(1, 2**60)


def test_a_first_order_term_never_moves_the_midpoint_and_the_order_only_touches_radii():
    with arb_precision(128):
        x, y = q(Fraction(1, 3)), q(Fraction(2, 7)) * q(Fraction(5, 11))
        J, e = q(Fraction(7, 3)), [spread(q(Fraction(3, 2**40)))]
        assert e[0].mid() == 0
        assert Fraction(3, 2**40) <= to_fraction(arb(e[0].rad())) <= Fraction(3, 2**40) * (1 + Fraction(1, 2**28))
        assert image([x, (J, 0)], e).mid() == x.mid()
        a, b = image([x, y, (J, 0)], e), image([x, (J, 0), y], e)
        assert a.mid() == b.mid() == (x + y).mid()
        assert abs(to_fraction(arb(a.rad())) - to_fraction(arb(b.rad()))) <= to_fraction(arb(a.rad())) / 2**28


def test_a_point_box_is_its_centre_and_spreads_are_exact_zero():
    seen = []

    def terms(B):
        seen.extend(B)
        return [[B[0] + 1]]
    with arb_precision(64):
        c1, r1 = mean_value_step([q(Fraction(5, 8))], [arb(0)], terms, Refused)
        assert spread(arb(0)).is_exact() and spread(arb(0)) == 0
        assert box(q(Fraction(5, 8)), arb(0)).is_exact()
    assert seen[0].is_exact() and to_fraction(seen[0]) == Fraction(5, 8)
    assert to_fraction(c1[0]) == Fraction(13, 8) and r1[0] == 0


def test_an_unbounded_image_raises_the_callers_error_and_returns_no_state():
    with arb_precision(64), pytest.raises(Refused):
        mean_value_step([arb(1), arb(2)], [arb(0), q(Fraction(1, 8))],
                        lambda B: [[B[0]], [B[1], (arb("nan"), 0)]], Refused)


def _me(b) -> tuple[int, int]:
    m, e = b.mid().man_exp()
    return int(m), int(e)


# Recorded from the code at c44b29c (CertifiedState.step with its own mean-value step) by
#   PYTHONPATH=<a checkout of c44b29c> python -c "<the loop of _engine_trajectory below, printed>"
# each: the final (mid of alpha_1..alpha_M, radii, mid of delta, radius of delta) as (mantissa, exponent) and the
# sha256 of the same list after every step.
ENGINE = {
    "sts D=8 K=2, 256 bits, 200 steps": (
        dict(D=8, K=2, preset="sts"), 256, 200,
        [(36269834621797082825773539221008321482189659390020158308804535605969065670039, -254), (686970533, -278),
         (108455705870864827756222422246361974648248939499114367416563021651999893648725, -256), (387956319, -277)],
        "7edcbe3b71c8a16f344369f612c8b2373a4a7a9ee5086c640eb26f4921137a7a"),
    "relu D=9 K=2 M=2 (the Jacobian's widening), 128 bits, 100 steps": (
        dict(D=9, K=2, preset="sts", eta="7/100", sigma="relu", M=2, d=2, wp_trainable=False), 128, 100,
        [(34506985854614680462664238719435892597, -126), (34506985854614680462664238719435892597, -126),
         (662187863, -152), (651639547, -152), (300012591394703989320256326071658490501, -133), (900068829, -155)],
        "ed797794485f9508d0ae68490233d86dfbb5cd18a4864c2bc8a1feb20d48e31f"),
}


@pytest.mark.parametrize("name", ENGINE)
def test_the_engines_trajectory_is_the_one_recorded_before_the_shared_step(name, monkeypatch):
    kw, bits, steps, final, digest = ENGINE[name]
    non_finite = []
    real = arb_engine.finite

    def counted(balls):
        ok = real(balls)
        non_finite.append(not ok)
        return ok
    monkeypatch.setattr(arb_engine, "finite", counted)
    st = CertifiedState(make_setting(**kw), bits)
    h = hashlib.sha256()
    with st.ar.context():
        for _ in range(steps):
            st.step()
            h.update(repr([_me(b) for b in (*st.alpha, *st.ralpha, st.delta, st.rdelta)]).encode())
    assert [_me(b) for b in (*st.alpha, *st.ralpha, st.delta, st.rdelta)] == final
    assert h.hexdigest() == digest
    if kw.get("sigma") == "relu":
        assert any(non_finite)          # the regime does reach the Jacobian's full-precision / widened evaluation


# A small box of the invariants (s, x, y) around the committed atlas's regime (1/15, 1/2, 1/512), 128 bits, 100
# steps, recorded at c44b29c as above: the final (alpha, r_alpha, delta, r_delta) (shared by the two states: the cap
# acts on S only) and the sha256 of those and of S (midpoints and radii) after every step.
BOX = ((Fraction(1, 15) - Fraction(1, 2**16), Fraction(1, 15) + Fraction(1, 2**16)),
       (Fraction(1, 2) - Fraction(1, 2**14), Fraction(1, 2) + Fraction(1, 2**14)),
       (Fraction(1, 512), Fraction(1, 512) + Fraction(1, 2**20)))
PREFIX_FINAL = [(163872242200358816968832734153871203717, -127), (611414493, -152),
                (5794627391322452273847140199864624575, -129), (533653383, -157)]
PREFIX_DIGEST = {PrefixState: "f5bc51bcb7671ca4009e32795f878f66ba0ff52cbc81b4be8e505b2724ede33d",
                 CappedState: "e1a4aa99711eaef2136a19cd6b7d9262fc64ef769832dd0d0135638abbdeee21"}


@pytest.mark.parametrize("cls", [PrefixState, CappedState], ids=lambda c: c.__name__)
def test_the_prefixs_trajectory_over_a_box_is_the_one_recorded_before_the_shared_step(cls):
    st = cls(BOX)
    h = hashlib.sha256()
    with arb_precision(128):
        for _ in range(100):
            st.step(*st.balls())
            h.update(repr([_me(b) for b in (st.a, st.ra, st.d, st.rd)]
                          + [(_me(x), _me(arb(x.rad()))) for row in st.S for x in row]).encode())
    assert [_me(b) for b in (st.a, st.ra, st.d, st.rd)] == PREFIX_FINAL
    assert h.hexdigest() == PREFIX_DIGEST[cls]
