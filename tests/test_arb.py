"""Certified engine: enclosures contain the 100-digit mpmath trajectory, radii stay below a bound."""
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, strategies as st

from verify.cli.run import run_json
from verify.engines import iterate
from verify.certify.coordinates import param_values
from verify.certify.prefix import PrefixState
from verify.engines.arb import ball_str, cover_radius, iterate_certified, round_up, to_fraction
from verify.errors import InvalidParameter
from verify.model import make_setting
from verify.model.precision import arb_precision
from verify.model.sigmas.poly import PolynomialSigma

# mpmath's 100-digit reference is itself rounded: it is within ~1e-90 (relative) of the exact value,
# so containment is checked for the ball widened by that much (radii are ~1e-70 at 256 bits).
MP_SLACK = Fraction(1, 10**90)


def rad_bound(bits: int, steps: int) -> Fraction:
    """Stated bound on every radius (relative to max(1, |value|)): 2^-bits * 10^4 * (steps + 1).

    Why: the mean-value form re-centres each step, J is contracting in alpha and neutral in delta, so
    the radius grows by the per-step rounding (a few ulps of the state) times the horizon; the
    observables are O(10) evaluations of the state; 10^4 covers both constants with margin.
    """
    return Fraction(1, 2**bits) * 10**4 * (steps + 1)


def exact_mpf(x) -> Fraction:
    with mpmath.workdps(200):
        m, e = mpmath.mpf(x).man_exp
        return Fraction(int(m)) * Fraction(2) ** int(e)


def flat(rec):
    for k in ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv"):
        yield k, getattr(rec, k)
    for k in ("alpha", "offspan", "support_mass"):
        for i, x in enumerate(getattr(rec, k)):
            yield f"{k}[{i}]", x


def check_contains(ball, value: Fraction, what: str):
    mid, rad = to_fraction(ball), to_fraction(ball.rad() if False else type(ball)(ball.rad()))
    assert abs(value - mid) <= rad + MP_SLACK * max(1, abs(value)), f"{what}: {value} not in {ball}"


@st.composite
def regimes(draw, max_D=24, max_M=2, fracs=(Fraction(1, 10), Fraction(7, 100), Fraction(1, 3), Fraction(9, 10))):
    """Reducible regimes (also used by test_fast): sts or gcn supports, K from 0 (sts) to D, four sigma."""
    D = draw(st.integers(2, max_D))
    preset = draw(st.sampled_from(["sts", "gcn"]))
    K = draw(st.integers(0 if preset == "sts" else 1, D))
    N = 1 if preset == "sts" else D
    sigma = draw(st.sampled_from(["identity", "erf", "relu", "poly:0,1,0,1/3"]))
    M = draw(st.integers(1, max_M))
    # eta_V below the stability threshold 2K/N (HELPERS_BRIEF: W_X block), any for K = 0. The cubic's
    # curvature grows with alpha, and GD diverges at these steps: it gets 1/10 and 1/30 of K/N
    # (checked not to diverge for D <= 13, every K, both presets).
    frac = draw(st.sampled_from(fracs if not sigma.startswith("poly") else (Fraction(1, 10), Fraction(1, 30))))
    eta = frac * max(K, 1) / N
    return make_setting(D=D, K=K, preset=preset, sigma=sigma, M=M, d=M, eta=eta, seed=draw(st.integers(0, 3)),
                        wp_trainable=sigma != "relu")   # ReLU is reducible with W_P frozen only


@pytest.mark.slow
@given(regimes(), st.sampled_from([128, 256]))
def test_enclosures_contain_100_digit_trajectory(s, bits):
    steps, cps = 120, [0, 1, 5, 37, 120]
    cert = iterate_certified(s, steps, bits, cps)
    ref = iterate(s, steps, "reduced", "mpmath", 100, cps)
    # The stated bound assumes a non-expanding map (identity, erf, ReLU below the W_X stability
    # threshold). The cubic's transient can expand (|J| > 1 for a while): radii then grow with the
    # true sensitivity of the exact recursion, and only containment and finiteness are claimed.
    bound = rad_bound(bits, steps) if not isinstance(s.sigma, PolynomialSigma) else None
    for rb, rm in zip(cert.records, ref.records):
        assert rb.step == rm.step
        for (name, ball), (_, val) in zip(flat(rb), flat(rm)):
            v = exact_mpf(val)
            check_contains(ball, v, f"step {rb.step} {name} {s.config()['sigma']} D={s.D} K={s.K}")
            assert ball.is_finite()
            if bound is not None:
                assert to_fraction(type(ball)(ball.rad())) <= bound * max(1, abs(v)), (name, ball)


@pytest.mark.slow
def test_radius_stays_small_at_long_horizon():
    # The benchmark regime (D = N = 64, K = 4, eta = 1/32) where naive ball iteration reaches +-inf.
    s = make_setting(D=64, K=4, preset="gcn", eta="1/32")
    cert = iterate_certified(s, 20000, 256, [20000])
    assert max(cert.state_radii) < float(rad_bound(256, 20000))
    assert max(cert.state_radii) < 1e-65


def test_round_up_and_cover_radius_are_upper_bounds():
    from flint import arb
    for q in (Fraction(155, 10**33), Fraction(1, 3), Fraction(999999, 1000), Fraction(7)):
        assert Fraction(round_up(q)) >= q
        assert Fraction(round_up(q)) <= q * Fraction(101, 100)
    with arb_precision(256):
        x = arb(1) / 3
        for printed in ("0.333", "0.3333333333333333333333333333333333", "0.4"):
            r = Fraction(cover_radius(x, printed))
            lo, hi = to_fraction(x) - to_fraction(arb(x.rad())), to_fraction(x) + to_fraction(arb(x.rad()))
            assert Fraction(printed) - r <= lo and hi <= Fraction(printed) + r
        mid, rad = ball_str(x)
        assert abs(Fraction(mid) - Fraction(1, 3)) <= Fraction(rad)


@pytest.mark.slow
def test_run_json_radii_cover_exact_value():
    s = make_setting(D=12, K=3, preset="gcn", eta="7/100", sigma="erf", M=2, d=2)
    out = run_json(s, 200, "reduced", "mpmath", 20, arb_bits=256)
    assert out["config"]["arb_bits"] == 256
    ref = iterate(s, 200, "reduced", "mpmath", 100).final
    f = out["final"]
    for name, val in flat(ref):
        key, idx = (name.split("[")[0], int(name.split("[")[1][:-1])) if "[" in name else (name, None)
        printed = f[key] if idx is None else f[key][idx]
        rad = f[f"{key}_rad"] if idx is None else f[f"{key}_rad"][idx]
        assert abs(Fraction(printed) - exact_mpf(val)) <= Fraction(rad) + MP_SLACK, name
        # 20 printed digits: the radius is dominated by the printing, not the enclosure.
        assert Fraction(rad) < Fraction(1, 10**17) * max(1, abs(exact_mpf(val)))


def test_run_json_arb_reduced_engine_needs_a_reducible_regime():
    s = make_setting(D=4, K=2, preset="gcn", init="random", init_scale="1/10")
    with pytest.raises(InvalidParameter, match="engine"):
        run_json(s, 5, "reduced", "mpmath", 20, arb_bits=256)
    with pytest.raises(InvalidParameter, match="arb bits"):
        iterate_certified(s, 5, 10)


def test_the_engine_and_the_certificates_prefix_enclose_the_same_trajectory():
    """Two mean-value enclosures of the reduced recursion whose maps are written apart (both stepped by
    verify.engines.mean_value): the engine's (verify.engines.arb: SymPy code in the setting's parameters, M rows,
    Jacobian at JAC_BITS) and the certificate's prefix (verify.certify.prefix: the invariant (s, x, y) formulas
    compiled by the re-checker's compiler, one row). They are not the same computation (their radii differ), so
    they are kept apart; both contain the exact state, so their balls must intersect at every step, and each is
    narrow (radii ~1e-37 at 128 bits) so a slip in either map would separate them."""
    s = make_setting(D=4, K=2, preset="cnn", eta="1/4", vstar_norm="2")
    T, bits = 40, 128
    engine = iterate_certified(s, T, bits=bits, checkpoints=list(range(T + 1))).records
    with arb_precision(bits):
        st = PrefixState(param_values(s))
        pc, pb, dp = st.balls()
        for t in range(1, T + 1):
            st.step(pc, pb, dp)
            mine, theirs = st.centre_box()[0], engine[t].alpha[0]
            assert mine.overlaps(theirs), (t, mine, theirs)
            assert float(mine.rad()) < 1e-30 and float(theirs.rad()) < 1e-30
