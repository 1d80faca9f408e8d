"""The derivation: closed forms proved from the model, kernels against two independent routes,
gradients against central finite differences, and the symbolic reduction."""
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

from verify.derive.loss import kernel_sum_equals_matrix_form, matrix_form, prove_identity_closed_form
from verify.derive.reduction_proof import parity_obligation, prove_reduction, prove_reduction_generic
from verify.model.symbols import A, B, C, mu_u, mu_z
from verify.engines.arith import Arith
from verify.engines.full import FullState
from verify.model import make_setting, parse_sigma


@pytest.mark.slow
def test_identity_closed_form_is_the_expectation_of_the_model():
    holds, _ = prove_identity_closed_form(M=2, d=2, D=3, N=2)
    assert holds


@pytest.mark.slow
def test_kernel_sum_equals_matrix_form():
    holds, _ = kernel_sum_equals_matrix_form()
    assert holds


def test_matrix_gradients_are_the_textbook_ones():
    # Independent hand derivation: d/dW_X of v(||W||^2 ||S||^2 - 2<W,V><S,S*>)/2 at mu = 0, W_P = 0.
    mf = matrix_form(2, 2, 3, 2)
    s = mf.symbols
    rng = np.random.default_rng(1)
    vals = {k: sp.Matrix(rng.integers(-3, 4, size=v.shape).tolist()) for k, v in s.items()}
    sub = {s[k]: vals[k] for k in s}
    g = mf.grad_WX.subs(sub).subs({sp.Symbol("mu", real=True): 0}).doit()
    W, V, S, Ss, WP, P = (vals[k] for k in ("W_X", "V", "S", "S_star", "W_P", "P"))
    v = sp.Symbol("v", positive=True)
    expected = v * sum(S.multiply_elementwise(S)) * W - v * sum(S.multiply_elementwise(Ss)) * V
    assert sp.simplify(sp.Matrix(g) - expected) == sp.zeros(2, 2)


# ---- kernels: closed form vs Gauss-Hermite quadrature vs Monte Carlo -----------------------------
SIGMAS = {"identity": lambda x: x, "erf": lambda x: np.vectorize(mpmath.erf)(x).astype(float),
          "relu": lambda x: np.maximum(x, 0), "poly:0,1,0,1/10": lambda x: x + 0.1 * x**3,
          "poly:1/2,0,1": lambda x: 0.5 + x**2}


def _quadrature(sig, Av, Cv, Bv, mu=(0.0, 0.0), n=120):
    """E[(sig(u) - sig(z))^2] by tensor Gauss-Hermite quadrature on the Cholesky factor."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / w.sum()
    L = np.linalg.cholesky(np.array([[Av, Cv], [Cv, Bv]], dtype=float))
    X1, X2 = np.meshgrid(x, x, indexing="ij")
    W = np.outer(w, w)
    u = mu[0] + L[0, 0] * X1
    z = mu[1] + L[1, 0] * X1 + L[1, 1] * X2
    return float((W * (sig(u) - sig(z)) ** 2).sum())


@pytest.mark.slow
@pytest.mark.parametrize("spec", list(SIGMAS))
@pytest.mark.parametrize("point", [(0.7, 0.3, 1.1), (2.0, -0.9, 0.8), (0.2, 0.05, 0.3)])
def test_kernel_matches_quadrature(spec, point):
    k = parse_sigma(spec).kernel
    Av, Cv, Bv = point
    closed = float(k.ell.subs({A: Av, C: Cv, B: Bv, mu_u: 0, mu_z: 0}))
    quad = _quadrature(SIGMAS[spec], Av, Cv, Bv)
    tol = 2e-3 if spec == "relu" else 1e-9   # relu's kink limits Gauss-Hermite to ~1e-4
    assert abs(closed - quad) <= tol * max(1.0, abs(closed))


@pytest.mark.parametrize("spec", ["identity", "poly:0,1,0,1/10", "poly:1/2,0,1"])
def test_kernel_with_means_matches_quadrature(spec):
    k = parse_sigma(spec).kernel
    closed = float(k.ell.subs({A: 0.6, C: 0.2, B: 0.9, mu_u: 0.3, mu_z: -0.4}))
    assert abs(closed - _quadrature(SIGMAS[spec], 0.6, 0.2, 0.9, (0.3, -0.4))) < 1e-9


def test_relu_offset_derivative_matches_quadrature():
    # d ell / d mu_u at 0 for ReLU is 2 E[(relu(u) - relu(z)) 1{u > 0}] (differentiating under the
    # integral); its closed form is not 0, which is why W_P leaves 0 under sigma = relu.
    k = parse_sigma("relu").kernel
    Av, Cv, Bv = 0.8, 0.3, 0.5
    closed = float(k.dmu_at_zero.subs({A: Av, C: Cv, B: Bv}))
    x, w = np.polynomial.hermite_e.hermegauss(150)
    w = w / w.sum()
    L = np.linalg.cholesky(np.array([[Av, Cv], [Cv, Bv]]))
    X1, X2 = np.meshgrid(x, x, indexing="ij")
    u, z = L[0, 0] * X1, L[1, 0] * X1 + L[1, 1] * X2
    quad = float((np.outer(w, w) * 2 * (np.maximum(u, 0) - np.maximum(z, 0)) * (u > 0)).sum())
    assert abs(closed) > 0.1 and abs(closed - quad) < 5e-3


@pytest.mark.slow
@pytest.mark.parametrize("spec,law", [("identity", "gaussian"), ("identity", "exponential"), ("identity", "student-t:5"),
                                      ("identity", "rademacher"), ("erf", "gaussian"), ("relu", "gaussian"),
                                      ("poly:0,1,0,1/10", "gaussian")])
def test_population_loss_matches_monte_carlo(spec, law):
    """The closed-form loss at a generic parameter point lies within 5 standard errors of Monte Carlo."""
    s = make_setting(D=4, K=2, M=2, d=3, preset="cnn", vstar_norm="1.5", sigma=spec, law=law, init="random",
                     init_scale="0.5", seed=3, wp_trainable=spec != "relu", law_mean="0.3" if spec == "identity" else "0",
                     noise_sd="0.2")
    st = FullState(s, Arith.make("float64", None, 1))
    closed = float(st.excess_loss()) + float(st.noise_loss)
    rng = np.random.default_rng(7)
    n = 40000
    X = s.law.sample(rng, (n, s.d, s.D))
    S = st.attention()
    sig = SIGMAS[spec]
    f = sig(np.einsum("md,ndk,kj->nmj", st.WX, X, S) + (st.WP @ st.P @ S)[None])
    y = sig(np.einsum("md,ndk,kj->nmj", st.V, X, st.Sstar)) + float(s.noise_sd) * rng.standard_normal((n, s.M, s.N))
    per = 0.5 * ((f - y) ** 2).sum(axis=(1, 2))
    assert abs(per.mean() - closed) < 5 * per.std() / np.sqrt(n)


# ---- gradients: generated code vs central finite differences, 50 digits ------------------------
@pytest.mark.slow
@pytest.mark.parametrize("spec,extra", [("identity", dict(law_mean="0.3", law="exponential")), ("erf", {}),
                                        ("poly:0,1,0,1/10", {}), ("relu", dict(wp_trainable=False)),
                                        ("identity", dict(loss="mean", p_lambda="4"))])
def test_gradients_match_central_differences_to_25_digits(spec, extra):
    s = make_setting(D=4, K=2, M=2, d=2, preset="gcn", vstar_norm="1.3", sigma=spec, init="random",
                     init_scale="0.4", seed=11, **extra)
    ar = Arith("mpmath", 50, 90)
    with ar.context():
        st = FullState(s, ar)
        if s.wp_trainable and s.sigma.kernel.with_means:
            st.WP = st.WP + mpmath.mpf("0.1")        # exercise the W_P / offset terms
        gX, gP, gK = st.gradients()
        h = mpmath.mpf(10) ** -30
        worst = mpmath.mpf(0)
        for name, G in (("WX", gX), ("WP", gP), ("WKQ", gK)):
            if name == "WP" and not s.wp_trainable:
                continue
            M = getattr(st, name)
            for idx in np.ndindex(M.shape):
                orig = M[idx]
                M[idx] = orig + h
                lp = st.excess_loss()
                M[idx] = orig - h
                lm = st.excess_loss()
                M[idx] = orig
                fd = (lp - lm) / (2 * h)
                worst = max(worst, abs(fd - G[idx]) / max(abs(G[idx]), mpmath.mpf(1)))
        assert worst < mpmath.mpf(10) ** -25, mpmath.nstr(worst, 5)


# ---- symmetry reduction --------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("supports", [((0, 1), (1, 2)), ((0,), (2,)), ((0, 1, 2), (0, 1, 2)), ((), ())])
def test_reduction_is_exact_for_any_kernel(supports):
    rep = prove_reduction_generic(M=2, d=2, D=3, supports=supports)
    assert rep.proved, rep.as_dict()


@pytest.mark.parametrize("spec,odd", [("identity", True), ("erf", True), ("poly:0,1,0,1/10", True),
                                      ("relu", False), ("poly:0,1,1", False)])
def test_parity_lemma_decides_wp_invariance(spec, odd):
    ob = parity_obligation(parse_sigma(spec))
    assert ob.holds is odd
    if not odd:
        assert "not odd" in ob.detail


def test_reduction_report_for_relu_names_the_failure():
    rep = prove_reduction(parse_sigma("relu"), M=1, d=1, D=3, supports=((0, 1),))
    failed = [o for o in rep.obligations if o.holds is not True]
    assert not rep.proved and [o.name for o in failed] == ["W_P gradient vanishes at W_P = 0 (parity: d ell/d mu (A, C, "
                                                           "B, 0) = 0)"] and failed[0].holds is False


def test_reduction_fails_when_it_should():
    # A negative control for the prover: the W_X coefficient is wrong if the kernel's C-slot is
    # dropped from the reduced loss, so the same machinery must not "prove" it.
    from verify.derive.reduction_proof import _is_zero
    x = sp.Symbol("x", positive=True)
    assert _is_zero((x + 1) ** 2 - x**2 - 2 * x - 1) is True
    assert _is_zero((x + 1) ** 2 - x**2 - 2 * x) is None


def test_relu_radial_convention_is_the_limit_along_v():
    """At W_X = 0 the ReLU gradient is the one-sided derivative along v*: compare the full engine's
    gradient at exactly 0 with its gradient at W_X = t V* for tiny t (it converges linearly in t)."""
    s = make_setting(D=4, K=2, M=1, d=2, preset="sts", vstar=[[1, 2]], sigma="relu", wp_trainable=False)
    ar = Arith("mpmath", 30, 50)
    with ar.context():
        st = FullState(s, ar)
        g0 = st.gradients()[0]
        st.WX = st.V * mpmath.mpf(10) ** -20
        gt = st.gradients()[0]
        assert max(abs(a - b) for a, b in zip(g0.ravel(), gt.ravel())) < mpmath.mpf(10) ** -18
        assert g0[0, 0] < 0   # descent moves W_X towards V*


def test_relu_at_zero_error_convention():
    from verify.errors import InvalidParameter
    with pytest.raises(InvalidParameter, match="not differentiable"):
        make_setting(D=4, K=2, preset="sts", sigma="relu", wp_trainable=False, relu_at_zero="error")
    make_setting(D=4, K=2, preset="sts", sigma="relu", wp_trainable=False, relu_at_zero="error",
                 init="random", init_scale=Fraction(1, 10))


@pytest.mark.parametrize("spec", ["relu", "erf", "identity"])
def test_stable_partials_equal_raw_derivatives(spec):
    k = parse_sigma(spec).kernel
    for x in (A, C):
        raw, stable = sp.diff(k.ell, x), k.sigma.stable_partial(x)
        for pt in ({A: 0.7, C: 0.3, B: 1.1}, {A: 2.0, C: -0.9, B: 0.8}, {A: 0.5, C: 0.49, B: 0.5}):
            pt = {**pt, mu_u: 0, mu_z: 0}
            assert abs(float(raw.subs(pt)) - float(stable.subs(pt))) < 1e-12


@pytest.mark.slow
def test_relu_full_engine_is_finite_at_k_equals_d():
    """K = D makes rho = 1 exactly; the stable partials keep the full engine finite and equal to reduced."""
    from verify.engines import iterate
    s = make_setting(D=3, K=3, M=1, d=2, preset="sts", vstar_norm="2", eta="0.2", sigma="relu", wp_trainable=False)
    a = iterate(s, 30, "full", "float64").final
    b = iterate(s, 30, "reduced", "float64").final
    # sqrt(AB - C^2) of a rounding error costs float64 half its digits here (sqrt(1e-17) ~ 3e-9)
    assert np.isfinite(a.excess_loss) and abs(a.alpha[0] - b.alpha[0]) < 1e-7
    a = iterate(s, 30, "full", "mpmath", 30).final
    b = iterate(s, 30, "reduced", "mpmath", 30).final
    assert abs(a.alpha[0] - b.alpha[0]) < 1e-14


def test_identity_reduction_holds_in_every_dimension():
    from verify.derive.reduction_proof import _vanishes, prove_identity_general
    rep = prove_identity_general()
    assert rep.proved, rep.as_dict()
    # the zero test must not pass a non-zero matrix expression
    X = sp.MatrixSymbol("X", 2, 2)
    assert not _vanishes(X + 0 * X) and _vanishes(0 * X)


def test_general_convention_asymptotics_reduce_to_the_reference_ones():
    from verify.derive.asymptotics import leading_terms, leading_terms_general
    from verify.model.symbols import beta, c_loss, eta, eta_kq, lam, var
    ref, gen = leading_terms(), leading_terms_general()
    for k in ("excess_loss", "s_err", "w_err"):
        assert sp.simplify(gen[k].subs({c_loss: 1, var: 1, lam: 1, beta: 1, eta_kq: eta}) - ref[k]) == 0


@pytest.mark.slow
def test_leading_loss_term_matches_iteration_under_the_mean_convention():
    """An independent route: iterate (mean loss, lambda = 2, eta_KQ != eta_V) and compare with the
    general leading term at T = 2e5 (corrections are O(T^-1/2): within 5%)."""
    from verify.derive.asymptotics import leading_terms_general
    from verify.model.symbols import D, K, N, T, beta, c_loss, eta_kq, lam, var, vnorm
    from verify.engines import iterate
    s = make_setting(D=8, K=2, M=2, d=2, preset="cnn", vstar_norm="1", eta="1/10", eta_kq="1/5", loss="mean",
                     p_lambda="4")
    Tn = 200000
    r = iterate(s, Tn, "reduced", "float64", checkpoints=[Tn]).final
    sub = {D: 8, K: 2, N: 4, T: Tn, c_loss: sp.Rational(1, 8), eta_kq: sp.Rational(1, 5), lam: 4, var: 1, vnorm: 1,
           beta: 1}
    gen = leading_terms_general()
    assert abs(r.excess_loss / float(gen["excess_loss"].subs(sub)) - 1) < 0.05
    assert abs(r.s_err / float(gen["s_err"].subs(sub)) - 1) < 0.05
