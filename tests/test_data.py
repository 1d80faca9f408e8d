"""Data models (verify.model.data) through the full-matrix engines: sklearn's 8 x 8 handwritten digits (the real
bundled data set, not a mock; a stand-in for MNIST) and Gaussian models with their second moments.

Second opinions: sklearn's own float images and numpy's covariance; central differences at 40 digits of the
finite sum over the 1,797 images; the per-image sum against the second-moment tensor (two routes to one loss,
at 30 digits and in float64); today's i.i.d. trajectories (the kernel of the Gram quantities, the reduced
recursion) against synthetic data whose second-moment tensor is I (x) I; and Lemma C.2's own per-regime check,
which must hold on isotropic data and fail on the digits.
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from verify.engines import iterate
from verify.engines.arith import Arith
from verify.engines.full import LogitState, iterate_full
from verify.engines.fullgrad import attention, excess_loss, fixed, gradients
from verify.model import make_setting
from verify.model.data import Data, ImageSet, Moments, parse_data
from verify.model.setting import conventions_of

jax = pytest.importorskip("jax")
from verify.engines import fulljax  # noqa: E402

DIGITS = dict(D=8, d=8, data="digits")
SCALARS = ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv")


class Isotropic(Data):
    """X Gaussian with second-moment tensor I (x) I at (d, D): i.i.d. standard Gaussian entries, but reached
    through the data path (the second-moment route), not through the i.i.d. kernel."""

    gaussian = True

    def __init__(self, d: int, D: int):
        self.name, self._dims = f"test-isotropic-{d}x{D}", (d, D)

    @property
    def dims(self):
        return self._dims

    def moments(self) -> Moments:
        d, D = self._dims
        T = np.zeros((d, D, d, D), dtype=object)
        for a in range(d):
            for b in range(D):
                T[a, b, a, b] = 1
        return Moments(T, 1)

    def note(self) -> str:
        return "test: N(0, I (x) I)"


def signed_basis(d: int, D: int) -> ImageSet:
    """The 2 d D images +-e_k (one entry +-1): mean 0, second-moment tensor I (x) I after the global scaling
    (each entry's mean square is 1/(d D), so the factor is sqrt(d D)); not Gaussian."""
    def load():
        eye = np.eye(d * D, dtype=np.int64).reshape(d * D, d, D)
        return np.concatenate([eye, -eye])
    return ImageSet(f"test-signed-basis-{d}x{D}", load, "test: +-e_k", (d, D))


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def records_close(t0, t1, tol: float) -> None:
    for r0, r1 in zip(t0.records, t1.records):
        for q in SCALARS + ("alpha", "offspan"):
            x0, x1 = np.asarray(getattr(r0, q), dtype=float), np.asarray(getattr(r1, q), dtype=float)
            # residuals that are 0 in exact arithmetic are compared on an O(1) scale
            scale = 1.0 if q in ("wp_norm", "offspan") else np.max(np.abs(x0))
            assert np.max(np.abs(x0 - x1)) <= tol * max(scale, 1e-300), (q, r0.step, x0, x1)


# ----- the data and their preprocessing --------------------------------------------------------------------------
@pytest.mark.slow
def test_the_digits_are_sklearns_images_centred_and_scaled_as_stated():
    from sklearn.datasets import load_digits
    ref = load_digits()                     # fetched again, independently of verify.model.data
    data = parse_data("digits")
    raw = data.raw()
    assert raw.shape == (1797, 8, 8) and raw.min() == 0 and raw.max() == 16
    assert np.array_equal(raw, ref.images) and np.array_equal(raw.reshape(1797, 64), ref.data)
    X = data.images().floats()
    assert np.max(np.abs(X.mean(axis=0))) < 1e-13                      # each pixel centred over the data set
    im = data.images()
    # exactly: the mean squared entry of the scaled images is 1
    sq = sum(Fraction(int(v) * int(v)) for v in im.numerators.flat)
    assert sq * im.scale2 / im.n**2 == im.n * 64
    # the exact second-moment tensor against numpy's covariance of sklearn's floats, scaled to mean square 1
    C = np.cov(ref.data.T, bias=True)
    C *= 64 / np.trace(C)
    T = data.moments()
    assert np.max(np.abs(T.floats().reshape(64, 64) - C)) < 1e-13
    assert sum(T.fractions().reshape(64, 64).diagonal()) == 64          # exact trace: mean square 1
    s = make_setting(D=8, d=8, K=2, preset="cnn", data="digits")
    note = s.config()["data_note"]
    assert s.config()["data"] == "digits" and "stand-in for MNIST: sklearn's 8×8 digits" in note
    assert "centred by its mean over the 1,797 images" in note and "mean squared entry is 1" in note


def test_the_isotropic_parts_are_the_averaged_blocks():
    """Sigma_pix (x) I and I (x) Sigma_tok of the full tensor T[a, b, c, e], by hand from numpy's covariance."""
    from sklearn.datasets import load_digits
    C = np.cov(load_digits().data.T, bias=True)
    T = (C * 64 / np.trace(C)).reshape(8, 8, 8, 8)
    pix = np.mean([T[:, b, :, b] for b in range(8)], axis=0)
    tok = np.mean([T[a, :, a, :] for a in range(8)], axis=0)
    P = parse_data("gaussian:digits-pixels").moments().floats()
    Q = parse_data("gaussian:digits-tokens").moments().floats()
    assert np.max(np.abs(P - np.einsum("ac,be->abce", pix, np.eye(8)))) < 1e-13
    assert np.max(np.abs(Q - np.einsum("ac,be->abce", np.eye(8), tok))) < 1e-13
    for spec in ("gaussian:digits-pixels", "gaussian:digits-tokens"):
        assert sum(parse_data(spec).moments().fractions().reshape(64, 64).diagonal()) == 64


@pytest.mark.slow
def test_the_digits_are_recorded_as_a_convention_and_leave_the_reduction():
    s = make_setting(K=2, preset="cnn", M=2, **DIGITS)
    ok, why = s.reducible()
    assert not ok and "data = digits" in why
    assert conventions_of(s) == "data=digits"
    from verify.model.flags import setting_command
    cmd = setting_command("run", s, "--steps", "5")
    assert "--data digits" in cmd and "--d 8" in cmd
    from verify.model.convention import Convention, setting, using
    with using(Convention.from_options({"data": "digits"})):
        assert setting(D=8, d=8, K=4, preset="sts").data.spec() == "digits"


# ----- the exact finite sum and its gradients ----------------------------------------------------------------------
def _finite_sum(fx, WX, Y, L):
    return excess_loss(fx, WX, Y, attention(fx, L))


def _central(fx, WX, Y, L, which: str, idx, h):
    """(L(x + h e) - L(x - h e)) / 2h for the entry ``idx`` of W_X, Y or the logits (mpmath, fx's precision)."""
    def at(sign):
        arrays = {"W_X": WX.copy(), "Y": Y.copy(), "logits": L.copy()}
        arrays[which][idx] = arrays[which][idx] + sign * h
        return _finite_sum(fx, arrays["W_X"], arrays["Y"], arrays["logits"])
    return (at(1) - at(-1)) / (2 * h)


ENTRIES = [("W_X", (0, 0)), ("W_X", (0, 5)), ("Y", (0, 1)), ("Y", (0, 6)), ("logits", (0, 0)), ("logits", (3, 0))]


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["identity", "erf"])
def test_finite_sum_gradients_match_central_differences_on_the_digits(spec):
    """The loss over the 1,797 images at 40 digits, differentiated by central differences (h = 1e-15: error
    ~h^2 + 10^-40/h, below 1e-24), against jax.grad of the same sum in float64 and, for sigma = identity, the
    second-moment route's chain rule at 40 digits."""
    s = make_setting(K=2, preset="sts", M=1, sigma=spec, init="random", init_scale="1/5", eta="1/10", **DIGITS)
    ar = Arith.make("mpmath", 40, 1)
    with ar.context():
        st = LogitState(s, ar, "images")
        fx = st.fx
        # a random offset Y = W_P P too (exact binary numbers: the same point in both arithmetics)
        Y0 = np.random.default_rng(3).standard_normal((1, 8)) / 8
        st.Y = fx.array(Y0.tolist())
        WX, Y, L = st.WX, st.Y, st.logits
        fd = {(w, i): _central(fx, WX, Y, L, w, i, mpmath.mpf("1e-15")) for w, i in ENTRIES}
        exact = None
        if spec == "identity":
            g = gradients(fixed(s, ar, "moments"), WX, Y, attention(fx, L), offsets=True)
            exact = {"W_X": g.full, "Y": g.Y, "logits": g.logits}
    f64 = LogitState(s, Arith.make("float64", None, 1), "images")
    f64.Y = Y0
    assert f64.trains_y                                    # W_P is trained: the sum depends on Y
    gX, gY, gL = fulljax.gradients_at(f64)
    jx = {"W_X": gX, "Y": gY, "logits": gL}
    for (w, i), v in fd.items():
        assert abs(jx[w][i] - float(v)) <= 1e-9 * max(abs(float(v)), 1e-3), (w, i, jx[w][i], v)
        if exact is not None:
            assert abs(exact[w][i] - v) <= mpmath.mpf("1e-22") * max(abs(v), 1), (w, i, exact[w][i], v)


@pytest.mark.slow
def test_the_second_moment_route_equals_the_per_image_sum():
    """sigma = identity on the digits: E||W_X X S + Y S - V* X S*||^2 from E[vec X vec X^T] (no loop over images)
    and as the mean over the images agree to 25 digits at 30-digit precision, and to 1e-12 in float64, in the loss,
    the gradients and a 300-step trajectory."""
    small = make_setting(K=2, preset="sts", M=1, init="random", init_scale="3/10", eta="1/10", **DIGITS)
    ar = Arith.make("mpmath", 30, 1)
    with ar.context():
        st = LogitState(small, ar, "images")
        S = attention(st.fx, st.logits)
        by_images = excess_loss(st.fx, st.WX, st.Y, S)
        by_moments = excess_loss(fixed(small, ar, "moments"), st.WX, st.Y, S)
        assert abs(by_images - by_moments) <= mpmath.mpf("1e-25") * by_images
    s = small.with_(preset="cnn", M=2)
    f64 = Arith.make("float64", None, 300)
    g_im = fulljax.gradients_at(LogitState(s, f64, "images"))
    g_mo = fulljax.gradients_at(LogitState(s, f64, "moments"))
    st = LogitState(s, f64, "moments")
    g_np = gradients(st.fx, st.WX, st.Y, st.attention(), offsets=True)      # the numpy chain rule
    for a, b, c in zip(g_im, g_mo, (g_np.full, g_np.Y, g_np.logits)):
        assert rel(a, b) < 1e-12 and rel(c, b) < 1e-12
    cps = [0, 10, 100, 300]
    records_close(iterate_full(s, 300, f64, cps, route="images"), iterate_full(s, 300, f64, cps, route="moments"),
                  1e-12)


@pytest.mark.slow
def test_a_gaussian_with_the_digits_moments_has_the_digits_loss_for_sigma_linear_only():
    """For sigma linear the loss sees the second moments only: Gaussian X with the digits' E[vec X vec X^T] has
    exactly the digits' loss (30 digits), and so the same GD trajectory; for sigma = erf it does not."""
    base = dict(K=2, preset="cnn", M=2, init="random", init_scale="3/10", eta="1/10", D=8, d=8)
    ar = Arith.make("mpmath", 30, 1)
    with ar.context():
        dig = LogitState(make_setting(data="digits", **base), ar, "images")
        S = attention(dig.fx, dig.logits)
        gauss = fixed(make_setting(data="gaussian:digits", **base), ar)
        a, b = excess_loss(dig.fx, dig.WX, dig.Y, S), excess_loss(gauss, dig.WX, dig.Y, S)
        assert abs(a - b) <= mpmath.mpf("1e-25") * a
    f64 = Arith.make("float64", None, 200)
    records_close(iterate_full(make_setting(data="digits", **base), 200, f64, [0, 50, 200]),
                  iterate_full(make_setting(data="gaussian:digits", **base), 200, f64, [0, 50, 200]), 1e-12)
    erf = dict(base, sigma="erf")
    e_dig = iterate_full(make_setting(data="digits", **erf), 1, f64, [0]).final.excess_loss
    e_gau = iterate_full(make_setting(data="gaussian:digits", **erf), 1, f64, [0]).final.excess_loss
    assert abs(e_dig - e_gau) > 1e-3 * e_gau


# ----- through the data path, isotropic data are today's -------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("spec", ["identity", "erf"])
def test_isotropic_gaussian_data_through_the_data_path_reproduce_todays_trajectory(spec):
    """N(0, I (x) I) given as a data model (second-moment route, full engine) against data = gaussian (the i.i.d.
    kernel, full engine) and the reduced recursion at 40 digits, from zero initialisation."""
    kw = dict(D=6, d=3, K=2, preset="cnn", M=2, eta="1/10", sigma=spec)
    today, ours = make_setting(**kw), make_setting(**kw, data=Isotropic(3, 6))
    assert today.reducible()[0] and not ours.reducible()[0]
    f64, cps = Arith.make("float64", None, 500), [0, 1, 10, 100, 500]
    mine = iterate_full(ours, 500, f64, cps)
    records_close(iterate_full(today, 500, f64, cps), mine, 1e-12)
    records_close(iterate(today, 500, "reduced", "mpmath", 40, checkpoints=cps), mine, 1e-11)
    ar = Arith.make("mpmath", 30, 5)
    a, b = iterate_full(today, 5, ar, [5]).final, iterate_full(ours, 5, ar, [5]).final
    assert abs(a.excess_loss - b.excess_loss) <= mpmath.mpf("1e-25") * a.excess_loss


@pytest.mark.slow
def test_images_with_identity_moments_reproduce_todays_trajectory_for_sigma_linear():
    """The 2 d D images +-e_k have second-moment tensor I (x) I (exactly): GD on their finite sum (the per-image
    route, jax.grad) is today's i.i.d. GD for sigma = identity. For sigma = erf it is not: those data are not
    Gaussian, and a nonlinear sigma sees more than two moments."""
    d, D = 3, 6
    data = signed_basis(d, D)
    T = data.moments().fractions()
    eye = np.einsum("ac,be->abce", np.eye(d, dtype=int), np.eye(D, dtype=int))
    assert all(x == y for x, y in zip(T.flat, eye.flat))
    kw = dict(D=D, d=d, K=2, preset="cnn", M=2, eta="1/10", init="random", init_scale="3/10")
    f64, cps = Arith.make("float64", None, 300), [0, 10, 100, 300]
    records_close(iterate_full(make_setting(**kw), 300, f64, cps),
                  iterate_full(make_setting(**kw, data=data), 300, f64, cps, route="images"), 1e-12)
    today = iterate_full(make_setting(**kw, sigma="erf"), 1, f64, [0]).final.excess_loss
    ours = iterate_full(make_setting(**kw, sigma="erf", data=data), 1, f64, [0]).final.excess_loss
    assert abs(ours - today) > 1e-3 * today


# ----- a claim that holds on isotropic data fails on the digits -------------------------------------------------------
@pytest.mark.slow
def test_lemma_c2_holds_on_isotropic_data_and_fails_on_the_digits():
    """Lemma C.2 (rows of W_X stay on the lines of V*'s rows, alpha > 0): its own per-regime check holds on i.i.d.
    Gaussian data (reduced recursion) and on N(0, I (x) I) through the data path (full engine, off-span residual
    at rounding level), and fails on the digits (off-span residual of order 0.1, outside the claim's hypotheses).
    The isotropic parts say why: pixel isotropy (I (x) Sigma_tok) keeps the rows on their lines exactly, the
    pixel covariance (Sigma_pix (x) I) moves them off."""
    from lemmas import CLAIMS
    claim = CLAIMS["lemma-C.2"]
    kw = dict(D=8, d=8, K=2, preset="cnn", M=2, eta="1/10")
    gauss = claim.check(make_setting(**kw), 200)
    iso = claim.check(make_setting(**kw, data=Isotropic(8, 8)), 200)
    digits = claim.check(make_setting(**kw, data="digits"), 200)
    assert gauss.holds is True and iso.holds is True
    assert digits.holds is False and "off-span" in digits.detail
    assert claim.regime_check(make_setting(**kw, data="digits"), 50).data["in_hypotheses"] is False

    def offspan(spec):
        r = iterate(make_setting(**kw, data=spec), 200, "full", "float64", checkpoints=[200]).final
        return max(float(x) for x in r.offspan)
    assert offspan(Isotropic(8, 8)) < 1e-12 and offspan("gaussian:digits-tokens") < 1e-12
    assert offspan("digits") > 1e-2 and offspan("gaussian:digits-pixels") > 1e-2


@pytest.mark.slow
def test_on_the_digits_w_p_leaves_zero_for_an_odd_sigma():
    """The digits are not symmetric under X -> -X: at W = 0, dL/dY = -c sigma'(0) mean_i sigma(V* X_i S*) S^T,
    which is not 0 for sigma = erf (the mean is computed here from sklearn's floats), so W_P moves; under the
    Gaussian with the same moments it stays 0 (parity)."""
    from math import erf
    from sklearn.datasets import load_digits
    kw = dict(K=2, preset="sts", M=1, sigma="erf", eta="1/10", D=8, d=8)
    s = make_setting(data="digits", **kw)
    X = load_digits().data.reshape(-1, 8, 8).astype(float)
    X = X - X.mean(axis=0)
    X /= np.sqrt((X**2).mean())
    V = np.array(s.vstar_base, dtype=float) * np.sqrt(float(s.vstar_scale2))
    z = np.einsum("ma,iab,b->i", V, X, np.array([0.5, 0.5] + [0] * 6))
    assert abs(np.mean([erf(t) for t in z])) > 1e-3
    f64 = Arith.make("float64", None, 20)
    assert iterate_full(s, 20, f64, [20]).final.wp_norm > 1e-4
    assert iterate_full(make_setting(data="gaussian:digits", **kw), 20, f64, [20]).final.wp_norm == 0


@pytest.mark.slow
def test_a_certified_run_on_the_digits_contains_the_mpmath_run():
    """sigma = identity: the second-moment route in exact rationals, Arb balls at 128 bits, against mpmath at 50
    digits (20 steps)."""
    s = make_setting(K=2, preset="sts", M=1, eta="1/10", **DIGITS)
    balls = iterate(s, 20, "full", "arb", bits=128, checkpoints=[20]).final
    ref = iterate(s, 20, "full", "mpmath", dps=50, checkpoints=[20]).final
    from verify.engines.arb import to_fraction
    with mpmath.workdps(80):
        for q in SCALARS:
            lo, hi = (to_fraction(getattr(balls, q).lower()), to_fraction(getattr(balls, q).upper()))
            v = getattr(ref, q)
            # the 50-digit reference is within ~1e-45 of the exact value
            assert mpmath.mpf(lo.numerator) / lo.denominator - 1e-45 <= v <= mpmath.mpf(hi.numerator) / hi.denominator \
                + 1e-45, q
    assert float(balls.excess_loss.rad()) < 1e-30


@pytest.mark.slow
@pytest.mark.parametrize("spec,extra", [("relu", dict(wp_trainable=False)), ("poly:0,1,1/2", {}), ("erf", {})])
def test_a_gaussian_with_the_digits_moments_under_nonlinear_sigma_two_chain_rules(spec, extra):
    """The second-moment route for a nonlinear sigma (the Gaussian kernel at the tensor's quadratic forms): jax.grad
    against the numpy chain rule of verify.engines.fullgrad at a random state and along 200 steps from zero (ReLU:
    the radial slope at the zero rows, from the tensor's forms), and the numpy chain rule against 40-digit central
    differences of the same loss."""
    kw = dict(D=8, d=8, K=2, preset="cnn", M=2, eta="1/10", data="gaussian:digits", sigma=spec, **extra)
    f64 = Arith.make("float64", None, 200)
    cps = [0, 1, 20, 200]
    records_close(iterate_full(make_setting(**kw), 200, f64, cps, backend="jax"),
                  iterate_full(make_setting(**kw), 200, f64, cps, backend="numpy"), 1e-12)
    s = make_setting(**kw, init="random", init_scale="3/10")
    st = LogitState(s, f64)
    g = gradients(st.fx, st.WX, st.offsets, st.attention(), offsets=st.trains_y)
    jx = fulljax.gradients_at(st)
    assert rel(jx[0], g.full) < 1e-12 and rel(jx[2], g.logits) < 1e-12
    ar = Arith.make("mpmath", 40, 1)
    with ar.context():
        mp = LogitState(s, ar)
        h = mpmath.mpf("1e-15")
        for i in [(0, 0), (1, 5)]:
            up, dn = mp.WX.copy(), mp.WX.copy()
            up[i], dn[i] = up[i] + h, dn[i] - h
            S = attention(mp.fx, mp.logits)
            fd = (excess_loss(mp.fx, up, mp.offsets, S) - excess_loss(mp.fx, dn, mp.offsets, S)) / (2 * h)
            assert abs(float(fd) - g.full[i]) <= 1e-9 * max(abs(float(fd)), 1e-3), (i, fd, g.full[i])
