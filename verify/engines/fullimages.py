"""The finite-sum route of the full-matrix engines: the population loss over a finite set of images.

For an empirical data model (verify.model.data.ImageSet: the population is the uniform distribution on n
images X_1..X_n) the loss is an exact finite sum, for every sigma:

    L - L_opt = (c_L / 2) (1/n) sum_i ||sigma(W_X X_i S + W_P P S) - sigma(V* X_i S*)||_F^2,

computed here for all images at once (no loop over them) in any arithmetic numpy dispatches to: float64, or
mpmath numbers in object arrays (the references of the tests). GD on it is full-batch GD on the data set;
its gradients are jax.grad's (verify.engines.fulljax), where the same sum is written in jax.numpy.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..derive import codegen
from ..model.sigmas import Sigma, X as x_symbol


@lru_cache(maxsize=None)
def sigma_function(sigma: Sigma, backend: str):
    """sigma entrywise for ``backend`` ("numpy", "mpmath" or "jax"), generated from its SymPy form."""
    if backend == "numpy":
        return sigma.numpy
    return codegen.lambdify((x_symbol,), sigma.expr(x_symbol), backend)


def outputs(W: np.ndarray, images: np.ndarray, S: np.ndarray) -> np.ndarray:
    """(n, M, N): W X_i S for every image X_i (images of shape (n, d, D)), as two contractions."""
    XS = np.einsum("iab,bj->iaj", images, S)
    return np.einsum("ma,iaj->imj", W, XS)


def excess_loss(fx, WX, Y, S):
    """(c_L / 2) (1/n) sum_i ||sigma(W_X X_i S + Y S) - sigma(V* X_i S*)||^2 at the state (``Y`` None: W_P P = 0);
    ``fx`` is a verify.engines.fullgrad.Fixed whose ``images`` and ``targets`` hold X_i and sigma(V* X_i S*)."""
    U = outputs(WX, fx.images, S)
    if Y is not None:
        U = U + (Y @ S)[None, :, :]
    r = fx.apply_sigma(U) - fx.targets
    return fx.c * (r * r).sum() / (2 * len(fx.images))


__all__ = ["sigma_function", "outputs", "excess_loss"]
