"""Probe k-zero's statement for every sigma: at K = 0 and zero initialisation GD never moves, with no parity of sigma
used (verify.probes.k_zero.stationary_start_step). Checked here against the full-matrix engine (an independent path:
numerical gradients of the explicit model, W_P trainable) for a sigma that is not odd, and the symbolic step against
its negative control, a teacher that is not 0 (K > 0), where the gradient in W_X does not vanish."""
from __future__ import annotations

import pytest
import sympy as sp

from verify.engines import iterate
from verify.model.setting import make_setting
from verify.model.sigmas import parse_sigma
from verify.probes.k_zero import SIGMAS, start_residual_and_gradients, stationary_start_step


def test_every_registered_sigma_is_in_the_statement():
    # the hypotheses of k-zero put no condition on sigma, so every registered family's representative is claimed
    assert {"identity", "erf", "relu", "poly:0,1,1/2"} <= set(SIGMAS)


@pytest.mark.parametrize("spec", ["relu", "poly:0,1,1/2", "erf"])
def test_the_symbolic_step_is_proved_for_every_sigma(spec):
    assert stationary_start_step(parse_sigma(spec))["holds"] is True


@pytest.mark.parametrize("spec", ["relu", "poly:0,1,1/2", "identity"])
def test_with_a_teacher_the_w_x_gradient_does_not_vanish(spec):
    # the negative control: z = h (S* != 0) leaves a residual sigma(0) - sigma(h) and a W_X gradient
    # -2 (sigma(h) - sigma(0)) sigma'(0) g w(l), not identically 0 in (g, h, l)
    loss, d_a, d_m, d_l = start_residual_and_gradients(parse_sigma(spec), teacher=1)
    g, h, l = sp.symbols("g h l", real=True)
    at = {g: 1, h: 2, l: 0}          # by hand for identity: loss = 4, d/da = 2 (0 - 2) x 1 x 1/2 = -2
    assert loss.subs(at) != 0 and d_a.subs(at) != 0
    if spec == "identity":
        assert loss.subs(at) == 4 and d_a.subs(at) == -2


def test_full_engine_keeps_the_zero_start_for_a_sigma_that_is_not_odd():
    # sigma = x + x^2/2 is not odd, so the reduction's parity lemma does not hold; W_P trainable all the same
    s = make_setting(D=5, K=0, M=2, d=2, preset="sts", vstar_norm="3/2", eta="1/2", sigma="poly:0,1,1/2")
    assert s.wp_trainable
    r = iterate(s, 20, "full", "float64").final
    assert r.excess_loss == 0 and all(a == 0 for a in r.alpha) and float(r.wp_norm) == 0
    assert abs(float(r.s_err) - (1 / 5) ** 0.5) < 1e-15     # S uniform: ||S - 0||_F = sqrt(N/D), N = 1
