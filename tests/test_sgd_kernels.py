"""The compiled SGD steps (verify.probes.support.sgd_kernels) against the numpy steps they replace
(OnlineSGD.step, AttentionSGD.step: the learners' stated gradients, which test_probe_full_attention.py checks
against finite differences): same seeds, same samples, the same parameters after several steps, for both
students, with label noise, a non-Gaussian law (drawn step by step) and an untrained W_P."""
from __future__ import annotations

import numpy as np
import pytest
from verify.model import make_setting
from verify.probes.support import sgd
from verify.probes.support.sgd import AttentionSGD, OnlineSGD, blocks, fresh_batches, fresh_block

STEPS = 25
SETTINGS = [dict(D=4, K=2, preset="cnn", M=2, d=3, vstar_norm="1", loss="mean", noise_sd="1/10"),
            dict(D=5, K=2, preset="sts", M=1, d=2, vstar_norm="2", eta="1/2"),
            dict(D=4, K=1, preset="sts", d=2, law="uniform", eta="1/3", noise_sd="1/5"),
            dict(D=4, K=2, preset="cnn", d=2, wp_trainable=False, p_kind="sinusoidal", p_structure="general",
                 law_mean="1/5")]


def close(a, b) -> None:
    assert np.max(np.abs(np.asarray(a) - np.asarray(b))) <= 1e-12 * max(1.0, np.max(np.abs(b)))


@pytest.mark.parametrize("opts", SETTINGS)
def test_fresh_block_draws_what_fresh_batches_draws(opts):
    s = make_setting(**opts)
    X, eps = fresh_block(s, np.random.default_rng(4), 3, 0.25, 5)
    rng = np.random.default_rng(4)
    for t in range(5):
        Xt, et = fresh_batches(s, [rng], 3, 0.25)
        assert np.array_equal(X[t], Xt[0]) and np.array_equal(eps[t], et[0])


@pytest.mark.parametrize("opts", SETTINGS)
def test_online_kernel_follows_the_numpy_step(opts):
    s = make_setting(**opts)
    ref, fast = OnlineSGD(s, 5, (3, 4)), OnlineSGD(s, 5, (3, 4))
    for _ in range(STEPS):
        ref.step()
    fast.advance(STEPS)
    assert fast.step_count == ref.step_count == STEPS
    assert np.max(np.abs(ref.WKQ)) > 1e-3              # W_KQ moved: the comparison is not vacuous
    for a, b in ((fast.WX, ref.WX), (fast.WP, ref.WP), (fast.WKQ, ref.WKQ)):
        close(a, b)


@pytest.mark.parametrize("input_dependent", [False, True])
@pytest.mark.parametrize("opts", SETTINGS)
def test_attention_kernel_follows_the_numpy_step(opts, input_dependent):
    s = make_setting(**opts)
    ref, fast = AttentionSGD(s, 6, input_dependent, (3, 4)), AttentionSGD(s, 6, input_dependent, (3, 4))
    norms = []
    for _ in range(STEPS):
        ref.step()
        norms.append(ref.x_block_norm())
    got = fast.advance(STEPS)
    assert np.max(np.abs(ref.WKQ)) > 1e-3
    close(fast.WV, ref.WV)
    close(fast.WKQ, ref.WKQ)
    close(got, np.array(norms).T)
    if input_dependent:
        assert np.min(got[:, -1]) > 1e-6               # the X-block moved
    else:
        assert np.max(got) == 0.0                      # (a) keeps it exactly 0


def test_blocks_cover_the_steps_in_bounded_pieces(monkeypatch):
    monkeypatch.setattr(sgd, "BLOCK_NUMBERS", 1000)
    s = make_setting(D=4, K=2, preset="sts", d=2, M=2)      # N = 1: 4 * (2*4 + 2*1) = 40 numbers a step at B = 4
    assert (s.N, s.M, s.d, s.D) == (1, 2, 2, 4)
    assert blocks(s, 4, 110) == [25] * 4 + [10]              # 1000 // 40 = 25 steps a block
    # blocks of pre-drawn steps give the same run as one block (the stream is drawn in order)
    a, b = OnlineSGD(s, 4, 7), OnlineSGD(s, 4, 7)
    a.advance(110)
    monkeypatch.setattr(sgd, "BLOCK_NUMBERS", 2**21)
    b.advance(110)
    close(a.WKQ, b.WKQ)


def test_a_kernel_compiles_without_numbas_cache_where_it_cannot_be_written(monkeypatch):
    """numba refuses cache=True at decoration where no cache folder can be written (a read-only install): the
    kernel is then compiled in the process only, and computes the same."""
    import numba

    from verify.probes.support import sgd_kernels

    asked = []

    def njit(**kw):
        asked.append(kw["cache"])
        if kw["cache"]:
            raise RuntimeError("cannot cache function 'f': no locator available for file 'sgd_kernels.py'")
        return numba.njit(**kw)

    monkeypatch.setattr(sgd_kernels, "numba", type("N", (), {"njit": staticmethod(njit)}))
    f = sgd_kernels._jit(lambda a, b: a * b + 1.0)
    assert asked == [True, False]
    assert f(3.0, 4.0) == 13.0
