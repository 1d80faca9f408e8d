"""Monte Carlo estimate of the population loss at given parameters, for any entry law and sigma.

L = (1/2) E || sigma(W_X X S + W_P P S) - sigma(V* X S*) ||_F^2  (noise-free, summed convention),
estimated from ``samples`` independent draws of X (d x D, i.i.d. entries of the setting's law or
another). Returns (estimate, standard error). An independent route to the closed forms of
verify.derive.loss and of each sigma's kernel (verify.model.sigmas), and the only route for sigma != identity under non-Gaussian laws.
"""
from __future__ import annotations

import math

import numpy as np


def mc_loss(setting, WX, WP, S, law=None, samples: int = 20000, seed: int = 1, batch: int = 5000):
    """(mean, standard error) of the per-sample loss (1/2)||f(Z) - y||_F^2 (see module docstring)."""
    law = setting.law if law is None else law
    rng = np.random.default_rng(seed)
    WX, WP, S = (np.asarray(a, dtype=float) for a in (WX, WP, S))
    V = np.array([[float(x) for x in r] for r in setting.vstar_base]) * math.sqrt(float(setting.vstar_scale2))
    Ss = np.array([[float(x) for x in r] for r in setting.sstar()], dtype=float)
    bias = WP @ setting.p_numeric() @ S
    vals = []
    done = 0
    while done < samples:
        n = min(batch, samples - done)
        X = law.sample(rng, (n, setting.d, setting.D))
        f = setting.sigma.numpy(WX @ X @ S + bias)
        y = setting.sigma.numpy(V @ X @ Ss)
        vals.append(0.5 * ((f - y) ** 2).sum(axis=(1, 2)) * float(setting.loss_scale))
        done += n
    v = np.concatenate(vals)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v)))
