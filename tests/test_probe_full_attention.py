"""Probe ``full-attention``: the hand-derived gradients of both students against central finite
differences of the sampled loss, the position-only student against the toolkit (exact population
gradient of verify.engines.full, and the ``finite-sample`` SGD trajectory), and the probe's JSON."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from verify.cli import main
from verify.errors import InvalidParameter
from verify.model import make_setting
from verify.probes.base import QUANTITIES
from verify.probes.finite_sample import OnlineSGD
from verify.probes.full_attention import AttentionSGD


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
    st = AttentionSGD(s, 7, input_dependent, seed=3)
    random_point(st, 4)
    st.WKQ = np.random.default_rng(5).standard_normal(st.WKQ.shape) * 0.5   # every block: the raw gradient
    rng = np.random.default_rng(6)
    X = s.law.sample(rng, (7, s.d, s.D))
    eps = 0.1 * rng.standard_normal((7, s.M, s.N))
    gWV, gKQ = st.gradients(X, eps)
    for name, g in (("WV", gWV), ("WKQ", gKQ)):
        fd = finite_difference(st, name, X, eps)
        assert np.max(np.abs(g - fd)) < 1e-7 * max(1.0, np.max(np.abs(fd))), name
    assert np.max(np.abs(gKQ[: s.d])) > 1e-3      # the X-rows do get gradient: the check is not vacuous


def test_position_only_mean_gradient_is_the_population_gradient():
    # (a)'s mini-batch gradient averaged over many fresh samples against the exact population gradient
    # of verify.engines.full, within 5 Monte Carlo standard errors (estimated from 20 independent chunks).
    s = make_setting(D=4, K=2, preset="cnn", d=2, eta="1/4", vstar_norm="1")
    st = AttentionSGD(s, 1, False, seed=8)
    random_point(st, 9)
    pop = st.population_state().gradients()
    rng = np.random.default_rng(10)
    chunks = []
    for _ in range(20):
        X = s.law.sample(rng, (5000, s.d, s.D))
        gWV, gKQ = st.gradients(X, np.zeros((5000, s.M, s.N)))
        chunks.append(np.concatenate([gWV[:, : s.d].ravel(), gWV[:, s.d:].ravel(), gKQ[s.d:, s.d:].ravel()]))
    chunks = np.array(chunks)
    mean, se = chunks.mean(0), chunks.std(0, ddof=1) / np.sqrt(len(chunks))
    exact = np.concatenate([np.asarray(g, dtype=float).ravel() for g in pop])
    assert np.all(np.abs(mean - exact) <= 5 * se + 1e-12)
    assert np.max(np.abs(exact)) > 0.05                   # a point where the gradient is not ~0


def test_position_only_follows_finite_sample_sgd_and_keeps_x_block_zero():
    # Same seed, same draws: student (a) is the toolkit's model, so it follows OnlineSGD step for step.
    s = make_setting(D=4, K=2, preset="sts", d=2, eta="1/4", vstar_norm="1", noise_sd="1/10")
    a, ref = AttentionSGD(s, 8, False, seed=3), OnlineSGD(s, 8, seed=3)
    for _ in range(200):
        a.step()
        ref.step()
    d = s.d
    assert a.x_block_norm() == 0.0
    for mine, theirs in ((a.WV[:, :d], ref.pop.WX), (a.WV[:, d:], ref.pop.WP), (a.WKQ[d:, d:], ref.pop.WKQ)):
        assert np.max(np.abs(mine - theirs)) < 1e-10 * max(1.0, np.max(np.abs(theirs)))
    assert np.max(np.abs(ref.pop.WKQ)) > 0.1             # W_KQ has moved


def test_input_dependent_attention_depends_on_x():
    s = make_setting(D=4, K=2, preset="sts", d=2, eta="1/4", vstar_norm="1")
    b = AttentionSGD(s, 16, True, seed=3)
    Xh = s.law.sample(np.random.default_rng(1), (500, s.d, s.D))
    assert b.evaluate(Xh)["s_spread"] == 0.0               # zero init: S uniform for every X
    for _ in range(50):
        b.step()
    ev = b.evaluate(Xh)
    assert ev["kq_x_block"] > 0 and ev["s_spread"] > 1e-4


def test_invalid_input():
    with pytest.raises(InvalidParameter, match="sigma"):
        AttentionSGD(make_setting(D=4, K=2, preset="sts", sigma="erf"), 4, True)
    with pytest.raises(InvalidParameter, match="batch"):
        AttentionSGD(make_setting(D=4, K=2, preset="sts"), 0, True)
    with pytest.raises(InvalidParameter, match="init"):
        AttentionSGD(make_setting(D=4, K=2, preset="sts", init="random", init_scale="1/10"), 4, False)


def test_probe_json():
    res = CliRunner().invoke(main, ["probe", "full-attention", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"probe", "question", "regimes", "classification", "verdict", "replay", "data"} <= set(out)
    assert out["question"].startswith("Q11: Position-only attention") and set(out["classification"]) == set(QUANTITIES)
    assert out["verdict"] == "inconclusive"
    for label, runs in out["data"].items():
        a, b = runs["position-only"], runs["input-dependent"]
        n = out["numbers"][label]
        assert max(a["kq_x_block"]) == 0 and max(a["s_spread"]) < 1e-12       # (a) never sees X
        # the held-out estimate of (a)'s loss tracks its exact population loss (2000 held-out samples)
        assert n["held_out_rel_error_vs_exact_population (a)"] < 0.1
        assert n["loss_ratio_b_over_a_at_T"] == pytest.approx(b["loss"][-1] / a["loss"][-1])
        assert a["step"] == b["step"] and a["step"][-1] == out["regimes"][0]["steps"]
        # both students approach the teacher: the held-out loss falls by more than 1000x
        assert a["loss"][-1] < 1e-3 * a["loss"][0] and b["loss"][-1] < 1e-3 * b["loss"][0]
        assert out["fits"][label]["position-only"]["loss"]["exponent"] == pytest.approx(-1, abs=0.1)
