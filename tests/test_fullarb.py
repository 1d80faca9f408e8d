"""The certified full-matrix engine: its balls contain an independent 60-digit mpmath iteration outside the
reduction and the exact reduced recursion inside it; the ball helpers of the generated Arb code; the
documented limit (ReLU at rho = 1) is reported, not hidden; `verify run --engine full --arb`."""
import json

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner
from flint import arb

from verify.cli import main
from verify.derive import codegen
from verify.engines import iterate
from verify.engines.arb import to_fraction
from verify.engines.arith import Arith
from verify.engines.full import FullState
from verify.engines.fullarb import relative_radius
from verify.errors import NumericalTrouble
from verify.model import make_setting

from test_engines import REGIMES
from test_fulljax import NON_REDUCIBLE

QUANTITIES = ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv", "alpha", "offspan", "support_mass")
# The 60-digit reference is itself rounded (working digits 60 + guard digits): within ~1e-55 of the exact value.
MP_SLACK = mpmath.mpf(10) ** -55


def _inside(ball, value, slack=MP_SLACK) -> bool:
    """mpmath ``value`` in the Arb ``ball`` widened by ``slack`` (relative to max(1, |value|))."""
    with mpmath.workdps(120):
        lo, hi = (mpmath.mpf(to_fraction(x).numerator) / to_fraction(x).denominator
                  for x in (ball.lower(), ball.upper()))
        w = slack * max(1, abs(value))
        return lo - w <= value <= hi + w


def _pairs(rec):
    for q in QUANTITIES:
        v = getattr(rec, q)
        yield from ((f"{q}[{i}]", x) for i, x in enumerate(v)) if isinstance(v, list) else [(q, v)]


def _direct_mpmath(s, steps: int, cps):
    """The full recursion in the direct formulation (W_P, W_KQ stepped, logits beta P^T W_KQ P formed every
    step: verify.engines.full.FullState) at 60 digits: a route that shares no step code with LogitState."""
    ar = Arith.make("mpmath", 60, steps)
    out = {}
    with ar.context():
        st = FullState(s, ar)
        for t in range(steps + 1):
            if t in cps:
                out[t] = st.record()
            if t < steps:
                st.step()
    return out


@pytest.mark.parametrize("name", list(NON_REDUCIBLE))
def test_balls_contain_a_60_digit_mpmath_iteration_outside_the_reduction(name):
    """Random start, non-uniform S*, sinusoidal P (with a law mean), W_P trained under a non-odd sigma, ReLU
    with W_P frozen: every recorded quantity's ball at 256 bits contains the 60-digit direct iteration, and
    the balls are narrow (relative radius < 1e-30 after 40 steps)."""
    s = make_setting(**NON_REDUCIBLE[name])
    cps = [0, 1, 10, 40]
    cert = iterate(s, 40, "full", "arb", checkpoints=cps, bits=256)
    ref = _direct_mpmath(s, 40, cps)
    for rec in cert.records:
        for (q, ball), (_, v) in zip(_pairs(rec), _pairs(ref[rec.step])):
            assert _inside(ball, v), (name, rec.step, q, ball, v)
    assert relative_radius(cert.final) < 1e-30


# Horizons of the reducible regimes: where the logit step eta_KQ beta^2 lambda^2 is large (12.8 and 14.7 in
# mean-loss-lambda and beta-temperature) the radii grow by the entrywise |I - eta H| each step (the wrapping
# effect; verify.engines.fullarb) and 256 bits certify about 50 steps, so those run 30.
HORIZON = {"mean-loss-lambda": 30, "beta-temperature": 30}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cnn", "erf-cnn", "relu-gcn", "poly-sts", "k-zero", "mean-loss-lambda",
                                  "beta-temperature", "D13-M2-d4"])
def test_the_exact_reduced_recursion_lies_inside_the_full_balls(name):
    """On reducible regimes the reduced recursion (80 digits, an independent derivation) is inside the
    certified full-matrix balls, which overlap the certified reduced balls."""
    s = make_setting(**REGIMES[name])
    T = HORIZON.get(name, 120)
    cps = [0, 1, T // 4, T]
    full = iterate(s, T, "full", "arb", checkpoints=cps, bits=256)
    red = iterate(s, T, "reduced", "mpmath", 80, checkpoints=cps)
    red_balls = iterate(s, T, "reduced", "arb", checkpoints=cps, bits=256)
    for f, r, b in zip(full.records, red.records, red_balls.records):
        for q in ("loss", "excess_loss", "s_err", "w_err", "cos_wv", "alpha", "support_mass"):
            fs, rs, bs = getattr(f, q), getattr(r, q), getattr(b, q)
            for x, v, y in zip(*(z if isinstance(z, list) else [z] for z in (fs, rs, bs))):
                assert _inside(x, v, mpmath.mpf(10) ** -70), (name, f.step, q, x, v)
                assert x.overlaps(y), (name, f.step, q, x, y)


def test_relu_at_rho_one_is_reported_as_an_unbounded_enclosure():
    """ReLU with K = D: the exact trajectory sits at rho = 1, where sqrt(AB - C^2) is not Lipschitz, so radii
    grow like r -> sqrt(r): the engine says so (NumericalTrouble) instead of returning useless balls, and
    the reduced engine (exact there) still certifies the regime."""
    s = make_setting(D=5, K=5, M=2, d=2, preset="sts", vstar_norm="2", eta="0.3", sigma="relu", wp_trainable=False)
    with pytest.raises(NumericalTrouble, match="unbounded with 256 bits"):
        iterate(s, 200, "full", "arb", bits=256)
    assert iterate(s, 200, "reduced", "arb", bits=256).final.loss.rad() < 1e-60


def test_ball_guards_of_the_generated_code_contain_the_clipped_values():
    """sqrt(Max(x, 0)), acos(Max(-1, Min(1, x))) and x**2 on balls that reach past the domain (or contain 0):
    finite enclosures of the values at the points the exact argument can take (checked with mpmath)."""
    import sympy as sp
    x = sp.Symbol("x", real=True)
    sq = codegen.lambdify((x,), sp.sqrt(sp.Max(x, 0)), "arb")
    ac = codegen.lambdify((x,), sp.acos(sp.Max(-1, sp.Min(1, x))), "arb")
    p2 = codegen.lambdify((x,), (x - 1) ** 2 + x ** sp.Rational(3, 2), "arb", products=True)
    eps = mpmath.mpf(10) ** -40
    b0, b1 = arb(0, float(eps)), arb(1, float(eps))
    for f, ball, points in ((sq, b0, [0, eps]), (ac, b1, [1 - eps, 1]), (p2, b1, [1 - eps, 1, 1 + eps])):
        out = f(ball)
        assert out.is_finite()
        for pt in points:
            with mpmath.workdps(60):
                want = {sq: lambda t: mpmath.sqrt(max(t, 0)), ac: lambda t: mpmath.acos(min(t, 1)),
                        p2: lambda t: (t - 1) ** 2 + t ** mpmath.mpf(1.5)}[f](pt)
            assert _inside(out, want, mpmath.mpf(0)), (out, pt, want)


def test_centred_form_is_an_enclosure_and_tighter_than_naive():
    """erf's partial dA evaluated on a ball: the centred form contains the values at sampled points of the
    ball (mpmath at 60 digits) and is narrower than the naive evaluation."""
    from verify.engines.fullkernel import centred, kernel_functions
    from verify.model.sigmas import parse_sigma
    kf = kernel_functions(parse_sigma("erf"), "arb")
    f, slopes = kf.dA, kf.slopes["dA"]
    A, C, B = arb("0.7", 1e-20), arb("0.3", 1e-20), arb("0.9")
    z = arb(0)
    c, n = centred(f, slopes, A, C, B, z, z), f(A, C, B, z, z)
    assert c.rad() < n.rad()
    import sympy as sp
    from verify.engines.fullkernel import ARGS, entry_terms
    g = sp.lambdify(ARGS, entry_terms(parse_sigma("erf"), False)[1], "mpmath")
    rng = np.random.default_rng(1)
    with mpmath.workdps(60):
        for _ in range(20):
            a = mpmath.mpf("0.7") + mpmath.mpf(rng.uniform(-1, 1)) * mpmath.mpf(10) ** -20
            cc = mpmath.mpf("0.3") + mpmath.mpf(rng.uniform(-1, 1)) * mpmath.mpf(10) ** -20
            assert _inside(c, g(a, cc, mpmath.mpf("0.9"), 0, 0), mpmath.mpf(0))


def test_verify_run_full_arb_prints_certified_digits_containing_the_mpmath_value():
    """`verify run --engine full --arb 256` on a regime outside the reduction: the balls are the result, the
    mpmath cross-check agrees, and the printed midpoint +- radius contains the 60-digit direct iteration."""
    args = ["run", "--D", "6", "--K", "2", "--preset", "cnn", "--d", "2", "--eta", "0.05", "--init", "random",
            "--init-scale", "0.2", "--steps", "40", "--arb", "256", "--engine", "full", "--json", "--quiet"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    cfg, f = out["config"], out["final"]
    assert cfg["arithmetic"] == "arb256" and "full-matrix" in cfg["result"] and cfg["precision_check"]["agree"]
    s = make_setting(D=6, K=2, preset="cnn", d=2, eta="1/20", init="random", init_scale="1/5")
    ref = _direct_mpmath(s, 40, [40])[40]
    with mpmath.workdps(80):
        for q in ("loss", "s_err", "w_err"):
            assert abs(mpmath.mpf(f[q]) - getattr(ref, q)) <= mpmath.mpf(f[q + "_rad"]) + MP_SLACK, q
            assert len(f[q].replace("-", "").replace(".", "").lstrip("0")) > 40         # every certified digit


def test_arb_arithmetic_needs_bits_only_there():
    s = make_setting(D=4, K=2, preset="gcn")
    from verify.errors import InvalidParameter
    with pytest.raises(InvalidParameter, match="bits"):
        iterate(s, 5, "full", "float64", bits=128)
    with pytest.raises(InvalidParameter, match="arithmetic"):
        iterate(s, 5, "full", "float32")
    assert isinstance(iterate(s, 5, "full", "arb", bits=128).final.loss, arb)
