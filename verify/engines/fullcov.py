"""The second-moment route of the full-matrix engines: the quadratic forms of a second-moment tensor.

For data with second-moment tensor T[a, b, c, e] = E[X_ab X_ce] and mean 0 (verify.model.data), the output
entries u_mj = (W_X X S)_mj and z_mj = (V* X S*)_mj have

    Var u_mj = s_j^T G_m s_j,   Cov(u_mj, z_mj) = s_j^T H_m s*_j,   Var z_mj = s*_j^T G*_m s*_j,

with the token Gram matrices G_m[b, e] = sum_{a,c} w_ma w_mc T[a, b, c, e] (H_m: w_m and v*_m; G*_m: v*_m
twice). Equivalently Var u_mj = w_m^T P_j w_m with the feature Gram matrix P_j[a, c] = sum_{b,e} s_jb s_je
T[a, b, c, e], which is what the W_X gradient needs: d Var u_mj / d w_m = 2 P_j w_m (T is symmetric under
(a, b) <-> (c, e)), d Cov / d w_m = Q_j v*_m with Q_j from s_j and s*_j, and d Var u_mj / d s_j = 2 G_m s_j,
d Cov / d s_j = H_m s*_j. For i.i.d. entries T = v I (x) I and these are v ||w_m||^2 ||s_j||^2 and the other
Gram quantities of verify.derive.loss. The arrays may hold float64, mpmath numbers or Arb balls (numpy
dispatches + and * to them); T enters as two matrices of its entries, one per contraction order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tensor:
    """T[a, b, c, e] as two matrices: ``by_features`` ((a, c) x (b, e)) and ``by_tokens`` ((b, e) x (a, c))."""

    by_features: np.ndarray
    by_tokens: np.ndarray
    d: int
    D: int

    @classmethod
    def of(cls, T: np.ndarray) -> "Tensor":
        d, D = T.shape[:2]
        return cls(T.transpose(0, 2, 1, 3).reshape(d * d, D * D).copy(),
                   T.transpose(1, 3, 0, 2).reshape(D * D, d * d).copy(), d, D)

    def dense(self) -> np.ndarray:
        """T[a, b, c, e] again (a copy)."""
        return self.by_features.reshape(self.d, self.d, self.D, self.D).transpose(0, 2, 1, 3).copy()


def token_gram(T: Tensor, W: np.ndarray, U: np.ndarray) -> np.ndarray:
    """(M, D, D): G_m[b, e] = sum_{a,c} W_ma U_mc T[a, b, c, e]."""
    M = W.shape[0]
    pairs = (W[:, :, None] * U[:, None, :]).reshape(M, T.d * T.d)
    return (pairs @ T.by_features).reshape(M, T.D, T.D)


def feature_gram(T: Tensor, S: np.ndarray, R: np.ndarray) -> np.ndarray:
    """(N, d, d): P_j[a, c] = sum_{b,e} S_bj R_ej T[a, b, c, e]."""
    N = S.shape[1]
    pairs = (S[:, None, :] * R[None, :, :]).reshape(T.D * T.D, N).T
    return (pairs @ T.by_tokens).reshape(N, T.d, T.d)


def forms(G: np.ndarray, S: np.ndarray, R: np.ndarray) -> np.ndarray:
    """(M, N): s_j^T G_m r_j for token Gram matrices G (M, D, D) and columns s_j of S, r_j of R."""
    return (np.matmul(G, R) * S[None, :, :]).sum(1)


def weighted_rows(weights: np.ndarray, grams: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(M, d): row m is (sum_j weights_mj P_j) rows_m, for feature Gram matrices P (N, d, d)."""
    M, N = weights.shape
    d = grams.shape[1]
    summed = (weights @ grams.reshape(N, d * d)).reshape(M, d, d)
    return (summed * rows[:, None, :]).sum(2)


def weighted_columns(weights: np.ndarray, grams: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(D, N): column j is sum_m weights_mj G_m cols_j, for token Gram matrices G (M, D, D)."""
    return (np.matmul(grams, cols) * weights[:, None, :]).sum(0)


__all__ = ["Tensor", "token_gram", "feature_gram", "forms", "weighted_rows", "weighted_columns"]
