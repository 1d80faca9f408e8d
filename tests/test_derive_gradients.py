"""Every gradient SymPy derives (verify.derive.gradients) against central differences of the model's
loss, at random points, several sigma, in mpmath at 90 digits.

The loss that is differenced is the full-matrix engine's (verify.engines.full: its own chain of numpy
operations, written independently of the formulas under test), so a formula that SymPy got wrong
(or returned as 0) cannot pass. Central differences with h = 1e-30 at 90 digits have error O(h^2):
every comparison asks for 25 matching digits.
"""
import mpmath
import numpy as np
import pytest
import sympy as sp

from verify.derive import codegen
from verify.derive.gradients import (a, b, explicit_model, evaluate, gradient_formulas, i, j, k, logit_step_factor, m,
                                     q, softmax_chain)
from verify.model.symbols import A, B, C, eta_kq, lam, mu_u, mu_z
from verify.engines.arith import Arith
from verify.engines.full import FullState
from verify.model import make_setting

TOL = mpmath.mpf(10) ** -25     # FD error ~ h^2 = 1e-60 plus rounding ~ 1e-90 / h = 1e-60: 25 digits is safe
# A general P (not orthogonal, not symmetric) and query positions (3, 1): the formulas hold for any P,
# and an index mix-up (P vs P^T, q(j) vs j) changes the numbers.
GENERAL_P = dict(p_matrix=[[1, 2, 0, 0], [0, 1, 3, 0], [1, 0, 1, 1], [0, -1, 0, 2]], p_kind="explicit",
                 p_structure="general")
PERM_P = dict(p_kind="permutation", p_lambda="4")
CASES = [("identity", dict(law_mean="0.3", law="exponential", **GENERAL_P)), ("erf", GENERAL_P),
         ("poly:0,1,0,1/10", PERM_P), ("relu", dict(wp_trainable=False, **PERM_P)),
         ("identity", dict(loss="mean", **PERM_P))]


def _state(spec, extra):
    s = make_setting(D=4, K=2, M=2, d=2, preset="cnn", vstar_norm="1.3", sigma=spec, init="random",
                     init_scale="0.4", seed=11, query=(3, 1), **extra)
    st = FullState(s, Arith("mpmath", 50, 90))
    if s.wp_trainable and s.sigma.kernel.with_means:
        st.WP = st.WP + mpmath.mpf("0.1")           # exercise the offset terms
    return s, st


def _logits(st):
    return (st.P.T @ st.WKQ @ st.P)[:, st.q]


def _softmax(lg):
    e = np.frompyfunc(mpmath.exp, 1, 1)(lg - lg.max(axis=0))
    return e / e.sum(axis=0)


def _env(s, st):
    """The numbers the indexed formulas name (LEGEND): matrices, Gram quantities, kernel partials."""
    S = st.attention()
    WX, V, WP, P, T = st.WX, st.V, st.WP, st.P, st.Sstar
    k_ = s.sigma.kernel
    args = (A, C, B, mu_u, mu_z)
    f = lambda e: codegen.lambdify(args, e, "mpmath")  # noqa: E731
    dA, dC = f(k_.partial(A)), f(k_.partial(C))
    dmu = f(sp.diff(k_.ell, mu_u)) if k_.with_means else f(k_.dmu_at_zero)
    g = st.moments(S)
    M_, N_ = s.M, s.N
    part = lambda fn: np.array([[fn(g["A"][x, y], g["C"][x, y], g["B"][x, y], g["mu_u"][x, y], g["mu_z"][x, y])  # noqa: E731
                                 for y in range(N_)] for x in range(M_)], dtype=object)
    env = {"W_X": WX, "V^*": V, "W_P": WP, "P": P, "S": S, "S^*": T, "W_KQ": st.WKQ,
           "q": np.array([x + 1 for x in st.q], dtype=object),
           "nW": g["sq_w"], "cW": g["c_wv"], "sW": WX.sum(1), "nV": g["sq_v"], "sV": V.sum(1),
           "nS": g["sq_s"], "cS": g["c_ss"], "sS": S.sum(0), "nT": g["sq_ss"], "sT": T.sum(0),
           "b": WP @ P @ S, "PS": P @ S, "WPP": WP @ P, "ell_A": part(dA), "ell_C": part(dC), "ell_mu": part(dmu),
           "v": st.var, "mu": st.mu, "c_L": st.c}
    dims = {"M": s.M, "d": s.d, "D": s.D, "N": s.N}
    return env, dims


def _num(expr):
    return mpmath.mpf(str(sp.N(expr, 80)))


def _formula_array(name, shape, idx_syms, env, dims):
    f = gradient_formulas()[name]
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = _num(evaluate(f, env, dims, dict(zip(idx_syms, [x + 1 for x in idx]))))
    return out


def _fd(loss, X, idx, h):
    orig = X[idx]
    X[idx] = orig + h
    lp = loss()
    X[idx] = orig - h
    lm = loss()
    X[idx] = orig
    return (lp - lm) / (2 * h)


def _worst(G, loss, X):
    h = mpmath.mpf(10) ** -30
    worst = mpmath.mpf(0)
    for idx in np.ndindex(X.shape):
        fd = _fd(loss, X, idx, h)
        worst = max(worst, abs(fd - G[idx]) / max(abs(G[idx]), mpmath.mpf(1)))
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("spec,extra", CASES)
def test_derived_gradients_match_central_differences(spec, extra):
    s, st = _state(spec, extra)
    with mpmath.workdps(90):
        env, dims = _env(s, st)
        gX = _formula_array("dL/dW_X[m,q]", st.WX.shape, (m, q), env, dims)
        gS = _formula_array("dL/dS[i,j]", (s.D, s.N), (i, j), env, dims)
        env["g"] = gS
        gL = _formula_array("dL/dLambda[i,j]", (s.D, s.N), (i, j), env, dims)
        env["G"] = gL
        gK = _formula_array("dL/dW_KQ[a,b]", st.WKQ.shape, (a, b), env, dims)
        assert max(abs(x) for x in gX.ravel()) > mpmath.mpf("1e-3")     # not the 0 a faulty derivative gives
        assert _worst(gX, st.excess_loss, st.WX) < TOL
        assert _worst(gK, st.excess_loss, st.WKQ) < TOL
        S = st.attention()
        assert _worst(gS, lambda: st.excess_loss(S), S) < TOL
        lg = _logits(st)
        assert _worst(gL, lambda: st.excess_loss(_softmax(lg)), lg) < TOL
        if s.wp_trainable and s.sigma.kernel.with_means:
            gP = _formula_array("dL/dW_P[m,k]", st.WP.shape, (m, k), env, dims)
            assert _worst(gP, st.excess_loss, st.WP) < TOL


@pytest.mark.slow
@pytest.mark.parametrize("spec,extra", [("identity", dict(law_mean="0.3", **GENERAL_P)), ("erf", PERM_P)])
def test_sympy_derivative_of_the_composed_model_matches_central_differences(spec, extra):
    """SymPy differentiates the whole model (logits from P and W_KQ, column softmax, kernel sum) at
    explicit dimensions; its W_X, W_P and W_KQ gradients agree with the engine's loss differenced."""
    s, st = _state(spec, extra)
    with mpmath.workdps(90):
        from verify.model.symbols import c_loss, var
        from verify.derive.gradients import mu
        em = explicit_model(s.sigma, s.p_exact(), s.sstar(), s.query, s.M, s.d)
        vals = {}
        for name, arr in (("W_X", st.WX), ("V", st.V), ("W_P", st.WP), ("W_KQ", st.WKQ)):
            vals.update({em[name][x, y]: arr[x, y] for x, y in np.ndindex(arr.shape)})
        vals.update({var: st.var, mu: st.mu, c_loss: st.c})
        syms = list(vals)
        for name in ("W_X", "W_P", "W_KQ"):
            if name == "W_P" and not s.sigma.kernel.with_means:
                continue
            fn = sp.lambdify(syms, em["grad_" + name], "mpmath", cse=True)
            G = np.array(fn(*[vals[x] for x in syms]).tolist(), dtype=object)
            assert _worst(G, st.excess_loss, getattr(st, name.replace("_", ""))) < TOL


@pytest.mark.slow
def test_identity_matrix_form_gradients_match_central_differences():
    """verify.derive.loss.matrix_form (MatrixSymbol calculus, where SymPy can silently return 0)."""
    from verify.derive.loss import matrix_form, mu
    from verify.model.symbols import var
    s, st = _state("identity", dict(law_mean="0.3"))
    with mpmath.workdps(90):
        mf = matrix_form(s.M, s.d, s.D, s.N)
        sy = mf.symbols
        S = st.attention()
        mats = {"W_X": st.WX, "V": st.V, "W_P": st.WP, "P": st.P, "S": S, "S_star": st.Sstar,
                "J": np.full((s.d, s.D), mpmath.mpf(1), dtype=object)}
        sub = {sy[n]: sp.Matrix(v.tolist()) for n, v in mats.items()}
        ev = lambda e: np.array(sp.Matrix(e.subs(sub).doit()).subs({mu: st.mu, var: st.var}).evalf(80).tolist(),  # noqa: E731
                                dtype=object).astype(object)
        to_mp = np.vectorize(lambda x: mpmath.mpf(str(x)), otypes=[object])
        # the matrix form is the summed loss (c_L = 1, reference convention)
        assert _worst(to_mp(ev(mf.grad_WX)), st.excess_loss, st.WX) < TOL
        assert _worst(to_mp(ev(mf.grad_WP)), st.excess_loss, st.WP) < TOL
        assert _worst(to_mp(ev(mf.grad_S)), lambda: st.excess_loss(S), S) < TOL


def test_softmax_chain_is_not_trivially_zero_and_matches_the_jacobian():
    # Independent hand value: D = 2, s = (e^x, e^y)/(e^x + e^y), dL/dx = s1 (g1 - s1 g1 - s2 g2).
    expr = softmax_chain()
    from verify.derive.gradients import D as Dsym, GRAM, S as Sb
    g_ = GRAM["g"]
    val = expr.subs({Dsym: 2, i: 1, j: 1}).doit().subs({Sb[1, 1]: sp.Rational(1, 3), Sb[2, 1]: sp.Rational(2, 3),
                                                       g_[1, 1]: 5, g_[2, 1]: -1})
    assert val == sp.Rational(1, 3) * (5 - (sp.Rational(5, 3) - sp.Rational(2, 3)))


def test_logit_step_factor_against_the_engine():
    """One full-engine GD step (P^T P = 4 I) changes the logits by -eta_KQ lambda^2 G (derived factor)."""
    s, st = _state("identity", dict(eta_kq="1/1000", eta="1/1000", **PERM_P))
    with mpmath.workdps(90):
        before = _logits(st)
        gX, gP, gK = st.gradients()
        G = (np.linalg.inv(np.array(st.P, dtype=float)) @ np.array(gK, dtype=float)
             @ np.linalg.inv(np.array(st.P.T, dtype=float)))[:, st.q]       # P G P^T -> G (float suffices here)
        st.step()
        change = np.array(_logits(st) - before, dtype=float)
        f = float(logit_step_factor().subs({eta_kq: sp.Rational(1, 1000), lam: 4}))
        assert f == pytest.approx(16 / 1000)
        assert np.allclose(change, -f * G, rtol=1e-10, atol=1e-14)
        assert np.abs(change).max() > 1e-6
