"""Probe ``finite-sample`` (reviewer Q10): online SGD on fresh samples versus population GD.

Each step draws B fresh inputs X_b (d x D, i.i.d. entries of the setting's law) and labels
y_b = V* X_b S* + eps_b, and takes a gradient step on (1/(2B)) sum_b ||W_X X_b S + W_P P S - y_b||_F^2
(sigma = identity). The per-sample gradients, by the chain rule:
  R_b = W_X X_b S + W_P P S - y_b,  dW_X = mean_b R_b (X_b S)^T,  dW_P = mean_b R_b (P S)^T,
  dS = mean_b (W_X X_b + W_P P)^T R_b,  d logits_j = s_j * (g_j - <s_j, g_j>),  dW_KQ = P G P^T,
whose expectation is the population gradient of (3.3)-(3.4) (checked against verify.engines.full in the
tests). The probe records the population excess loss at the SGD iterates (closed form, full engine).
Without label noise the model is realisable and every R_b vanishes at the optimum, so the gradient
noise dies out; with noise it persists (constant-step SGD has a floor of order eta sigma_eps^2 / B).
"""
from __future__ import annotations

import numpy as np

from ..engines import Arith
from ..engines.full import FullState
from ..evidence import Scope, compare, record
from ..model import make_setting
from .base import (ProbeResult, Statement, classify_series, dense_checkpoints, fits_json, labels, probe, question_text,
                   regime, run_series, scope_of)

STEPS = 20_000
BATCHES = (1, 8, 64)
SEED = 11
EXP_TOL = 0.05
EXP_THRESHOLD = {"value": EXP_TOL,
                 "why": "|fitted loss exponent + 1| over the last decade of T = 20000: population GD's own tail carries "
                        "O(T^-1/2) corrections of ~1e-2 there; SGD adds noise of the same order in one seed; 0.05 "
                        "separates 1/T from any other power"}


class OnlineSGD:
    """Online SGD for sigma = identity on the full parameters (W_X, W_P, W_KQ)."""

    def __init__(self, setting, batch: int, seed: int = SEED):
        if not setting.sigma.is_identity:
            raise ValueError("online SGD is implemented for sigma = identity")
        self.s, self.B = setting, batch
        self.pop = FullState(setting, Arith.make("float64", None, 1))   # V*, S*, P and the population loss
        self.rng = np.random.default_rng(seed)
        self.eta_v, self.eta_kq = float(setting.eta_v), float(setting.eta_kq)
        self.noise = float(setting.noise_sd)

    def gradients(self, X: np.ndarray, eps: np.ndarray):
        """Mini-batch gradients at the current state; X is (B, d, D), eps (B, M, N)."""
        st = self.pop
        S = st.attention()
        PS = st.P @ S
        Y = st.V @ X @ st.Sstar + eps
        R = st.WX @ X @ S + (st.WP @ PS)[None] - Y                    # (B, M, N)
        gWX = np.einsum("bmn,bdn->md", R, X @ S) / self.B
        gWP = R.mean(0) @ PS.T
        gS = np.einsum("bmD,bmn->Dn", st.WX @ X + (st.WP @ st.P)[None], R) / self.B
        gLog = S * (gS - (S * gS).sum(0)[None, :])
        G = np.zeros((self.s.D, self.s.D))
        G[:, st.q] = gLog
        return gWX, gWP, st.P @ G @ st.P.T

    def step(self):
        s = self.s
        X = s.law.sample(self.rng, (self.B, s.d, s.D))
        eps = self.noise * self.rng.standard_normal((self.B, s.M, s.N))
        gWX, gWP, gKQ = self.gradients(X, eps)
        self.pop.WX = self.pop.WX - self.eta_v * gWX
        if s.wp_trainable:
            self.pop.WP = self.pop.WP - self.eta_v * gWP
        self.pop.WKQ = self.pop.WKQ - self.eta_kq * gKQ
        self.pop.step_count += 1

    def run(self, steps: int, checkpoints) -> dict:
        out = {k: [] for k in ("step", "loss", "s_err", "w_err")}
        for t in checkpoints:
            while self.pop.step_count < t:
                self.step()
            r = self.pop.record()
            for k, v in (("step", r.step), ("loss", r.excess_loss), ("s_err", r.s_err), ("w_err", r.w_err)):
                out[k].append(float(v))
        out["step"] = [int(t) for t in out["step"]]
        return out


@probe("finite-sample", (10,), "online SGD on fresh samples: realisable case keeps the 1/T tails; label noise gives a floor")
def run() -> ProbeResult:
    base = dict(D=4, K=2, preset="sts", d=2, eta="1/4", vstar_norm="1")
    s = make_setting(**base)
    s_noise = make_setting(**base, noise_sd="1/10")
    cps = dense_checkpoints(STEPS, points=80)
    gd = run_series(s, STEPS, checkpoints=cps)
    runs = {f"SGD B={B}": OnlineSGD(s, B).run(STEPS, cps) for B in BATCHES}
    runs["SGD B=8, noise 1/10"] = OnlineSGD(s_noise, 8).run(STEPS, cps)
    fits = {k: classify_series(v) for k, v in runs.items()}
    f_gd = classify_series(gd)
    ratio = {k: v["loss"][-1] / gd["loss"][-1] for k, v in runs.items()}
    main = fits[f"SGD B={BATCHES[-1]}"]
    regimes = [regime(s, STEPS, "reduced", label="population GD")] + \
              [regime(s, STEPS, "online-sgd", label=f"SGD B={B}, seed {SEED}") for B in BATCHES] + \
              [regime(s_noise, STEPS, "online-sgd", label=f"SGD B=8, noise 1/10, seed {SEED}")]
    noisy = runs["SGD B=8, noise 1/10"]
    ev = []
    for B in BATCHES:
        k = f"SGD B={B}"
        p = fits[k]["loss"].exponent
        ev.append(record(f"online SGD, B = {B}, seed {SEED}: loss tail over the last decade of T = {STEPS}", "float64",
                         scope_of((s, STEPS)), f"{fits[k]['loss'].label} (population GD {f_gd['loss'].label})",
                         compare(abs(p + 1), "<=", EXP_TOL) if p is not None and fits[k]["loss"].kind == "power"
                         else (False if fits[k]["loss"].kind in ("exponential", "none") else None),
                         threshold=EXP_THRESHOLD, replay="verify probe finite-sample --json", seed=SEED))
    ev.append(record(f"online SGD, B = 8, label noise 1/10, seed {SEED}", "float64", scope_of((s_noise, STEPS)),
                     f"loss tail {fits['SGD B=8, noise 1/10']['loss'].label}, {ratio['SGD B=8, noise 1/10']:.3g}x the GD "
                     "value at T: gradient noise persists at the optimum", None, role="outside",
                     outside="label noise: the statement is about the realisable (noise-free) teacher"))
    statement = Statement(
        "Without label noise, online SGD on fresh samples keeps Theorem 3.1's 1/T rate of the excess population loss "
        "(a finite-sample analogue; the paper states none)",
        Scope(dims="all", sigma=("identity",), conventions=("online SGD",), horizon="all"), ev)
    return ProbeResult(
        probe="finite-sample", question=question_text(10), regimes=regimes,
        findings=[
            f"Population GD: {f_gd['loss'].label}. Online SGD (fresh samples each step, T = {STEPS}, i.e. "
            + ", ".join(f"{B * STEPS} samples for B = {B}" for B in BATCHES) + "): loss tails "
            + ", ".join(f"{k} {fits[k]['loss'].label}" for k in runs) + ".",
            "Excess population loss at T relative to population GD: "
            + ", ".join(f"{k} {v:.3g}" for k, v in ratio.items())
            + ". Without label noise the teacher is realisable, every per-sample residual vanishes at the optimum, "
              "so the gradient noise dies out with the loss and SGD keeps the 1/T-type decay (a sample complexity of "
              "order 1/epsilon samples, times B).",
            f"With label noise sigma_eps = 1/10 (B = 8) the excess loss decays more slowly "
            f"({fits['SGD B=8, noise 1/10']['loss'].label}) and is {ratio['SGD B=8, noise 1/10']:.3g}x the GD value at "
            "T: the per-sample residuals no longer vanish at the optimum, so the gradient noise persists (constant-step "
            "SGD has a stationary floor of order eta sigma_eps^2 / B); a finite-sample version needs a decaying step "
            "or a growing batch.",
        ],
        classification=labels(main), statements=[statement],
        data={"population_GD": gd} | runs, fits={k: fits_json(v) for k, v in fits.items()} | {"population_GD": fits_json(f_gd)},
        numbers={"loss_ratio_to_GD_at_T": ratio, "noisy_final_excess_loss": noisy["loss"][-1]})
