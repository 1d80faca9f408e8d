"""Probe ``full-attention``: the hand-derived gradients of both students (verify.probes.support.sgd) against
central finite differences of the sampled loss, the position-only student against the toolkit (exact
population gradient of verify.engines.full, and the ``finite-sample`` SGD trajectory). The probe's JSON (through
the command line, at the ci profile) is checked in test_probes.py::test_full_attention."""
from __future__ import annotations

import numpy as np
import pytest
from verify.errors import InvalidParameter
from verify.model import make_setting
from verify.probes.support.sgd import AttentionSGD, OnlineSGD


def random_point(st: AttentionSGD, seed: int, scale: float = 0.5):
    """Put the student at a random point (the X-block of W_KQ only where it is trained)."""
    rng = np.random.default_rng(seed)
    st.WV = scale * rng.standard_normal(st.WV.shape)
    st.WKQ = scale * rng.standard_normal(st.WKQ.shape) * st.kq_mask


def finite_difference(st: AttentionSGD, name: str, X, eps, h: float = 1e-5) -> np.ndarray:
    """Central differences of the sampled loss in every entry of st.<name>."""
    W = getattr(st, name)
    out = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        old = W[idx]
        W[idx] = old + h
        up = st.sample_loss(X, eps)
        W[idx] = old - h
        down = st.sample_loss(X, eps)
        W[idx] = old
        out[idx] = (up - down) / (2 * h)
    return out


@pytest.mark.parametrize("input_dependent", [False, True])
@pytest.mark.parametrize("opts", [dict(D=4, K=2, preset="cnn", M=2, d=3, vstar_norm="1", loss="mean"),
                                  dict(D=5, K=2, preset="sts", M=1, d=2, vstar_norm="2")])
def test_gradients_match_finite_differences(opts, input_dependent):
    s = make_setting(**opts, noise_sd="1/10")
    st = AttentionSGD(s, 7, input_dependent, 3)
    random_point(st, 4)
    st.WKQ = np.random.default_rng(5).standard_normal(st.WKQ.shape) * 0.5   # every block: the raw gradient
    rng = np.random.default_rng(6)
    X = s.law.sample(rng, (1, 7, s.d, s.D))                # one chain, a batch of 7
    eps = 0.1 * rng.standard_normal((1, 7, s.M, s.N))
    gWV, gKQ = st.gradients(X, eps)
    for name, g in (("WV", gWV), ("WKQ", gKQ)):
        fd = finite_difference(st, name, X, eps)
        assert np.max(np.abs(g - fd)) < 1e-7 * max(1.0, np.max(np.abs(fd))), name
    assert np.max(np.abs(gKQ[0, : s.d])) > 1e-3      # the X-rows do get gradient: the check is not vacuous


def test_position_only_mean_gradient_is_the_population_gradient():
    # (a)'s mini-batch gradient averaged over many fresh samples against the exact population gradient
    # of verify.engines.full, within 5 Monte Carlo standard errors (estimated from 20 independent chunks).
    s = make_setting(D=4, K=2, preset="cnn", d=2, eta="1/4", vstar_norm="1")
    st = AttentionSGD(s, 1, False, 8)
    random_point(st, 9)
    pop = st.population_state().gradients()
    rng = np.random.default_rng(10)
    chunks = []
    for _ in range(20):
        X = s.law.sample(rng, (1, 5000, s.d, s.D))
        gWV, gKQ = (g[0] for g in st.gradients(X, np.zeros((1, 5000, s.M, s.N))))
        chunks.append(np.concatenate([gWV[:, : s.d].ravel(), gWV[:, s.d:].ravel(), gKQ[s.d:, s.d:].ravel()]))
    chunks = np.array(chunks)
    mean, se = chunks.mean(0), chunks.std(0, ddof=1) / np.sqrt(len(chunks))
    exact = np.concatenate([np.asarray(g, dtype=float).ravel() for g in pop])
    assert np.all(np.abs(mean - exact) <= 5 * se + 1e-12)
    assert np.max(np.abs(exact)) > 0.05                   # a point where the gradient is not ~0


def test_position_only_follows_finite_sample_sgd_and_keeps_x_block_zero():
    # Same seed, same draws: student (a) is the toolkit's model, so it follows OnlineSGD step for step.
    s = make_setting(D=4, K=2, preset="sts", d=2, eta="1/4", vstar_norm="1", noise_sd="1/10")
    a, ref = AttentionSGD(s, 8, False, 3), OnlineSGD(s, 8, 3)
    for _ in range(200):
        a.step()
        ref.step()
    d = s.d
    assert a.x_block_norm()[0] == 0.0
    for mine, theirs in ((a.WV[0, :, :d], ref.WX[0]), (a.WV[0, :, d:], ref.WP[0]), (a.WKQ[0, d:, d:], ref.WKQ[0])):
        assert np.max(np.abs(mine - theirs)) < 1e-10 * max(1.0, np.max(np.abs(theirs)))
    assert np.max(np.abs(ref.WKQ[0])) > 0.1             # W_KQ has moved


def test_input_dependent_attention_depends_on_x():
    s = make_setting(D=4, K=2, preset="sts", d=2, eta="1/4", vstar_norm="1")
    b = AttentionSGD(s, 16, True, 3)
    Xh = s.law.sample(np.random.default_rng(1), (500, s.d, s.D))
    assert b.evaluate(Xh)["s_spread"][0] == 0.0            # zero init: S uniform for every X
    for _ in range(50):
        b.step()
    ev = b.evaluate(Xh)
    assert ev["kq_x_block"][0] > 0 and ev["s_spread"][0] > 1e-4


def test_chains_in_lockstep_are_the_single_seed_runs():
    s = make_setting(D=4, K=2, preset="cnn", d=2, eta="1/2", vstar_norm="1")
    Xh = s.law.sample(np.random.default_rng(1), (200, s.d, s.D))
    both, one = (AttentionSGD(s, 16, True, seeds).run([0, 5, 40], Xh) for seeds in ((3, 4), 4))
    assert both[4] == one[4] and both[3] != both[4]


def test_invalid_input():
    with pytest.raises(InvalidParameter, match="sigma"):
        AttentionSGD(make_setting(D=4, K=2, preset="sts", sigma="erf"), 4, True, 1)
    with pytest.raises(InvalidParameter, match="batch"):
        AttentionSGD(make_setting(D=4, K=2, preset="sts"), 0, True, 1)
    with pytest.raises(InvalidParameter, match="init"):
        AttentionSGD(make_setting(D=4, K=2, preset="sts", init="random", init_scale="1/10"), 4, False, 1)
    with pytest.raises(InvalidParameter, match="sigma"):
        OnlineSGD(make_setting(D=4, K=2, preset="sts", sigma="erf"), 4, 1)
