"""The fast float64 full-matrix engine (JAX, and its numpy fallback): autodiff against SymPy's derivatives
of the composed model, the logit coordinates against the direct formulation, agreement with the reduced
recursion on every reducible regime, an independent program's value, and float64 trouble named at its step."""
import sys

import mpmath
import numpy as np
import pytest
import sympy as sp

from verify.derive.gradients import explicit_model, mu
from verify.model.symbols import c_loss, var
from verify.engines import iterate
from verify.engines.arith import Arith
from verify.engines.full import JAX_MIN_STEPS, FullState, LogitState, iterate_full
from verify.engines.precision_checks import rel_diff
from verify.errors import NumericalTrouble
from verify.model import make_setting

from test_engines import REGIMES

jax = pytest.importorskip("jax")
from verify.engines import fulljax  # noqa: E402

SCALARS = ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv")
RESIDUALS = ("wp_norm", "offspan")      # 0 in exact arithmetic on reducible regimes: compared on an O(1) scale
GENERAL_P = dict(p_matrix=[[1, 2, 0], [0, 1, 3], [1, -1, 1]], p_kind="explicit", p_structure="general")
# Outside the reduction: each breaks it a different way (and several together).
NON_REDUCIBLE = {
    "random-sinusoidal-mean": dict(D=6, K=2, M=1, d=2, preset="cnn", vstar_norm="1", eta="0.05", p_kind="sinusoidal",
                                   p_structure="general", init="random", init_scale="0.2", law_mean="0.3"),
    "nonuniform": dict(D=6, K=2, M=1, d=2, preset="gcn", vstar_norm="1", eta="0.1", sstar_weights=[["1/3", "2/3"]] * 6),
    "random-poly-wp": dict(D=6, K=2, M=2, d=2, preset="cnn", vstar_norm="1", eta="0.1", init="random", init_scale="0.3",
                           sigma="poly:1/5,1,1/3"),
    "random-perm-erf": dict(D=6, K=2, M=2, d=2, preset="gcn", vstar_norm="1.5", eta="0.2", p_kind="permutation", seed=5,
                            p_lambda="4", init="random", init_scale="0.2", sigma="erf", beta="3/2", eta_kq="1/40"),
    "random-relu": dict(D=6, K=2, M=2, d=3, preset="gcn", vstar_norm="2", eta="0.2", sigma="relu", wp_trainable=False,
                        init="random", init_scale="0.3", loss="mean"),
}


def _grads_jax(st):
    """jax.grad of the engine's loss at a LogitState, mapped back to (W_X, W_P, W_KQ) by the linear maps
    Y = W_P P and logits = beta P^T W_KQ Q: dL/dW_P = (dL/dY) P^T, dL/dW_KQ = beta P G' P^T."""
    fx = st.fx
    gX, gY, gL = fulljax.gradients_at(st)
    G = np.zeros((st.s.D, st.s.D))
    G[:, fx.q] = gL
    return gX, gY @ fx.P.T, float(fx.beta) * fx.P @ G @ fx.P.T


@pytest.mark.slow
@pytest.mark.parametrize("spec,extra", [("identity", dict(law_mean="0.3", law="exponential", **GENERAL_P)),
                                        ("erf", dict(p_kind="permutation", p_lambda="4", beta="3/2")),
                                        # one row and a permutation P: SymPy's composed polynomial model is large
                                        ("poly:1/5,1,1/3", dict(loss="mean", M=1, p_kind="permutation", p_lambda="4",
                                                                seed=2))])
def test_autodiff_gradients_match_sympys_derivative_of_the_composed_model(spec, extra):
    """SymPy differentiates the whole model at explicit dimensions (logits from P and W_KQ, column softmax,
    Gram sums, sigma's kernel: verify.derive.gradients.explicit_model); jax.grad of the engine's loss, taken
    in the coordinates (W_X, Y, logits), gives the same W_X, W_P and W_KQ gradients at a random state."""
    s = make_setting(**(dict(D=3, M=2, d=2, supports=[[0, 1], [1, 2]], vstar_norm="1.3", sigma=spec, init="random",
                             init_scale="0.6", seed=4, query=(2, 0)) | extra))
    st = LogitState(s, Arith.make("float64", None, 1))
    if st.trains_y:
        st.Y = st.Y + 0.1                                   # exercise the offset terms
    gX, gP, gK = _grads_jax(st)
    WP = st.WP0 + (st.Y - st.Y0) @ np.linalg.inv(st.fx.P)   # the W_P of this Y (P is invertible here)
    em = explicit_model(s.sigma, s.p_exact(), s.sstar(), s.query, s.M, s.d, scale=sp.Rational(s.beta))
    vals = {em["W_X"][i, j]: st.WX[i, j] for i, j in np.ndindex(st.WX.shape)}
    vals |= {em["V"][i, j]: st.fx.V[i, j] for i, j in np.ndindex(st.fx.V.shape)}
    vals |= {em["W_P"][i, j]: WP[i, j] for i, j in np.ndindex(WP.shape)}
    vals |= {em["W_KQ"][i, j]: st.WKQ0[i, j] for i, j in np.ndindex(st.WKQ0.shape)}
    vals |= {var: float(s.law.var), mu: float(s.law.mean), c_loss: float(s.loss_scale)}
    syms = list(vals)
    for name, mine in (("W_X", gX), ("W_P", gP), ("W_KQ", gK)):
        if name == "W_P" and not st.trains_y:
            continue
        ref = np.array(sp.lambdify(syms, em["grad_" + name], "mpmath", cse=True)(*vals.values()).tolist(), dtype=float)
        assert np.abs(ref).max() > 1e-3, name                       # a gradient that is really there
        assert np.allclose(mine, ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max()), (name, mine, ref)


@pytest.mark.parametrize("name", list(NON_REDUCIBLE))
def test_logit_coordinates_match_the_direct_formulation(name):
    """LogitState iterates (W_X, W_P P, logits) with P^T P and forms W_P, W_KQ on demand; FullState steps
    W_P and W_KQ themselves and forms the logits beta P^T W_KQ P every step: 30 steps agree to 30 digits."""
    s = make_setting(**NON_REDUCIBLE[name])
    ar = Arith.make("mpmath", 40, 30)
    with ar.context():
        a, b = LogitState(s, ar), FullState(s, ar)
        for _ in range(30):
            a.step()
            b.step()
        ra, rb = a.record(), b.record()
        for x, y in [(a.WX, b.WX), (a.WP, b.WP), (a.WKQ, b.WKQ)]:
            scale = max(abs(v) for v in y.flat) or 1
            assert max(abs(u - v) for u, v in zip(x.flat, y.flat)) < mpmath.mpf(10) ** -30 * scale, name
        for q in SCALARS:
            assert abs(getattr(ra, q) - getattr(rb, q)) < mpmath.mpf(10) ** -30 * max(1, abs(getattr(rb, q))), q
        assert np.abs(np.array(b.WKQ, dtype=float)).max() > 1e-3      # W_KQ has moved


def _agree(run, ref, tol=1e-12):
    """Every recorded quantity of ``run`` within ``tol`` of ``ref``, relative to the quantity's scale (its
    largest size at the two ends; residuals on an O(1) scale)."""
    first = {q: float(getattr(ref.records[0], q)) for q in SCALARS}
    for r, f in zip(run.records, ref.records):
        assert r.step == f.step
        for q in SCALARS:
            floor = 1 if q in RESIDUALS else 0
            d = rel_diff(float(getattr(r, q)), float(getattr(f, q)), first[q], floor)
            assert d <= tol, (r.step, q, getattr(r, q), getattr(f, q))
        for q in ("alpha", "offspan", "support_mass"):
            for x, y in zip(getattr(r, q), getattr(f, q)):
                assert rel_diff(float(x), float(y), 0, 1 if q in RESIDUALS else 0) <= tol, (r.step, q, x, y)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REGIMES))
def test_fast_full_agrees_with_the_reduced_recursion_to_1e_12(name):
    """Both float64 full-matrix backends (JAX, numpy) against the reduced recursion (mpmath, 40 digits) on
    every reducible regime of test_engines, 200 steps: 1e-12 relative."""
    s = make_setting(**REGIMES[name])
    cps = [0, 1, 7, 50, 200]
    ref = iterate(s, 200, "reduced", "mpmath", 40, checkpoints=cps)
    ar = Arith.make("float64", None, 200)
    for backend in ("jax", "numpy"):
        tr = iterate_full(s, 200, ar, cps, backend=backend)
        assert tr.backend == backend
        _agree(tr, ref)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NON_REDUCIBLE))
def test_jax_and_numpy_backends_agree_outside_the_reduction(name):
    s = make_setting(**NON_REDUCIBLE[name])
    cps = [0, 1, 10, 100]
    ar = Arith.make("float64", None, 100)
    _agree(iterate_full(s, 100, ar, cps, backend="jax"), iterate(s, 100, "full", "mpmath", 30, checkpoints=cps), 1e-11)
    _agree(iterate_full(s, 100, ar, cps, backend="numpy"), iterate(s, 100, "full", "mpmath", 30, checkpoints=cps), 1e-11)


@pytest.mark.slow
def test_without_jax_the_engine_falls_back_to_numpy(monkeypatch):
    """With jax unimportable, engine=full float64 still runs (numpy), and gives the JAX run's numbers (a run long
    enough to take JAX by default)."""
    s = make_setting(**NON_REDUCIBLE["random-poly-wp"])
    n = JAX_MIN_STEPS
    with_jax = iterate(s, n, "full", "float64", checkpoints=[0, 50, n])
    monkeypatch.setitem(sys.modules, "jax", None)           # `import jax` now raises ImportError
    assert not fulljax.available()
    without = iterate(s, n, "full", "float64", checkpoints=[0, 50, n])
    assert with_jax.backend == "jax" and without.backend == "numpy"
    _agree(without, with_jax)


@pytest.mark.slow
def test_a_short_float64_run_takes_numpy_and_a_long_one_jax():
    """A float64 full-matrix run below JAX_MIN_STEPS steps runs on numpy (JAX would compile a program for its shapes
    first), from JAX_MIN_STEPS on JAX; a run over a data set's images takes JAX however short (only jax.grad
    differentiates that sum). The numbers agree either way (test above)."""
    s = make_setting(**NON_REDUCIBLE["nonuniform"])
    assert iterate(s, 60, "full", "float64", checkpoints=[0, 60]).backend == "numpy"
    assert iterate(s, JAX_MIN_STEPS - 1, "full", "float64", checkpoints=[JAX_MIN_STEPS - 1]).backend == "numpy"
    assert iterate(s, JAX_MIN_STEPS, "full", "float64", checkpoints=[JAX_MIN_STEPS]).backend == "jax"
    images = make_setting(D=8, d=8, K=2, M=2, preset="cnn", eta="1/10", data="digits", sigma="erf", init="random",
                          init_scale="3/10")
    assert images.data.route(images.sigma) == "images"
    assert iterate(images, 5, "full", "float64", checkpoints=[5]).backend == "jax"


@pytest.mark.slow
def test_the_independent_value_after_3000_steps_at_d_64():
    """gcn, D = N = 64, K = 4, eta = 1/32, M = d = 1, zero start: a minimal JAX script reached an excess loss
    of 6.670622037613683 after 3000 steps (an independent program); both backends agree to 1e-12."""
    s = make_setting(D=64, K=4, preset="gcn", eta="1/32")
    ar = Arith.make("float64", None, 3000)
    for backend in ("jax", "numpy"):
        got = float(iterate_full(s, 3000, ar, [3000], backend=backend).final.excess_loss)
        assert abs(got - 6.670622037613683) <= 1e-12 * 6.670622037613683, (backend, got)


@pytest.mark.slow
def test_float64_trouble_is_named_at_its_first_step():
    """A diverging run (sigma = x + x^3/10, eta = 3): JAX checks at checkpoints and bisects; it names the same
    step as numpy, which raises at the operation, and the 40-digit iteration's state (W_X, logits) is inside
    the float64 range one step before and outside it at that step."""
    s = make_setting(D=4, K=2, preset="sts", eta="3", sigma="poly:0,1,0,1/10", vstar_norm="3")
    ar = Arith.make("float64", None, 1000)
    steps = {}
    for backend in ("jax", "numpy"):
        with pytest.raises(NumericalTrouble) as info:
            iterate_full(s, 1000, ar, [0, 1000], backend=backend)
        steps[backend] = info.value.step
        assert any(q in str(info.value) for q in ("W_X", "W_P", "W_KQ"))
    assert steps["jax"] == steps["numpy"] > 1
    bad = steps["jax"]
    ar = Arith.make("mpmath", 40, bad)
    with ar.context():
        st = LogitState(s, ar)
        sizes = []
        for _ in range(bad):
            st.step()
            sizes.append(max(abs(x) for x in [*st.WX.flat, *st.logits.flat]))
    assert sizes[bad - 2] < 1.7e308 < sizes[bad - 1]


def test_verify_run_full_float64_prints_the_digits_a_full_step_carries():
    """A full-matrix step sums up to D N numbers (verify.engines.precision_checks): at D = N = 64, float64 prints
    log10(4096) = 3.6 digits fewer than the reduced run of the same regime, on JAX, and those digits agree
    with the reduced recursion at 40 digits."""
    import json
    from decimal import Decimal
    from click.testing import CliRunner
    from verify.cli import main
    base = ["run", "--D", "64", "--K", "4", "--preset", "gcn", "--eta", "1/32", "--steps", str(JAX_MIN_STEPS), "--arithmetic",
            "float64", "--json", "--quiet"]
    out = {e: json.loads(CliRunner().invoke(main, base + ["--engine", e]).stdout) for e in ("full", "reduced")}
    full, red = out["full"]["config"], out["reduced"]["config"]
    assert full["backend"] == "jax" and "backend" not in red
    assert full["dps"] == red["dps"] - 3 and full["precision_check"]["agree"]
    ref = iterate(make_setting(D=64, K=4, preset="gcn", eta="1/32"), JAX_MIN_STEPS, "reduced", "mpmath", 40).final
    printed = Decimal(out["full"]["final"]["excess_loss"])
    assert len(printed.as_tuple().digits) == full["dps"]
    assert abs(printed - Decimal(str(ref.excess_loss))) <= Decimal(10) ** (1 - full["dps"]) * printed
