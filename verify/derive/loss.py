"""The population loss from the model definition, and the GD updates (3.3) and (3.4).

For sigma = identity the closed form is derived at the matrix level from the moment rule
E[X_ab X_cd] = v 1{a=c, b=d} + mu^2, and proved equal to the explicit expectation of the model at
small dimensions (:func:`prove_identity_closed_form`). For every sigma, the loss is
L = c_L * (1/2) * sum_{m,j} ell(A_mj, C_mj, B_mj, mu_u_mj, mu_z_mj) + c_L * M N sigma_eps^2 / 2,
with A_mj = v ||w_m||^2 ||s_j||^2, C_mj = v <w_m, v*_m> <s_j, s*_j>, B_mj = v ||v*_m||^2 ||s*_j||^2,
mu_u = mu (w_m . 1)(1 . s_j) + (W_P P S)_mj and mu_z = mu (v*_m . 1)(1 . s*_j).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import sympy as sp

from ..model.sigmas.identity import Identity
from ..model.symbols import A, B, C, mu_u, mu_z, var

mu = sp.Symbol("mu", real=True)


@dataclass(frozen=True)
class MatrixForm:
    """The identity-sigma loss and its gradients as SymPy matrix expressions."""

    loss: sp.Expr
    grad_WX: sp.Expr     # (3.3), W_X block: W_X <- W_X - eta_V * grad_WX
    grad_WP: sp.Expr     # (3.3), W_P block
    grad_S: sp.Expr      # dL/dS, fed through the column softmax into (3.4)
    symbols: dict


def matrix_form(M=None, d=None, D=None, N=None) -> MatrixForm:
    """Closed-form L(W_X, W_P, S) for sigma = identity under any law with mean mu and variance v.

    E||W_X X S + W_P P S - V X S*||_F^2 = v(||W_X||^2||S||^2 - 2<W_X,V><S,S*> + ||V||^2||S*||^2)
    + ||W_P P S + mu (W_X J S - V J S*)||^2 with J = 1_d 1_D^T; noise adds M N sigma_eps^2.
    """
    M = M or sp.Symbol("M", integer=True, positive=True)
    d = d or sp.Symbol("d", integer=True, positive=True)
    D = D or sp.Symbol("D", integer=True, positive=True)
    N = N or sp.Symbol("N", integer=True, positive=True)
    WX, V = sp.MatrixSymbol("W_X", M, d), sp.MatrixSymbol("V", M, d)
    WP, P = sp.MatrixSymbol("W_P", M, D), sp.MatrixSymbol("P", D, D)
    S, Ss = sp.MatrixSymbol("S", D, N), sp.MatrixSymbol("S_star", D, N)
    J = sp.MatrixSymbol("J", d, D)
    tr = sp.Trace
    mean_part = WP * P * S + mu * (WX * J * S - V * J * Ss)
    L = sp.Rational(1, 2) * (var * (tr(WX.T * WX) * tr(S.T * S) - 2 * tr(WX.T * V) * tr(S.T * Ss)
                                    + tr(V.T * V) * tr(Ss.T * Ss)) + tr(mean_part.T * mean_part))
    terms = sp.Add.make_args(sp.expand(L))
    # SymPy 1.14 differentiates a sum of trace products wrongly as a whole; term by term is exact.
    grad = lambda X: sp.Add(*[t.diff(X) for t in terms])  # noqa: E731
    syms = dict(W_X=WX, V=V, W_P=WP, P=P, S=S, S_star=Ss, J=J)
    return MatrixForm(L, grad(WX), grad(WP), grad(S), syms)


def prove_identity_closed_form(M=2, d=2, D=3, N=2) -> tuple[bool, str]:
    """Expand E||W_X X S + W_P P S - V X S*||^2 entry by entry with the i.i.d. moment rule and
    check it equals the matrix closed form exactly (sigma = identity, any law: mean mu, var v).

    Returns (holds, description). The expectation uses only E[x] = mu and E[x^2] = v + mu^2 and
    independence, i.e. it holds for every entry law with these two moments.
    """
    sym = lambda name, r, c: sp.Matrix(r, c, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))  # noqa: E731
    WX, V, WP, P = sym("w", M, d), sym("v", M, d), sym("p", M, D), sym("P", D, D)
    S, Ss, X = sym("s", D, N), sym("t", D, N), sym("x", d, D)
    R = WX * X * S + WP * P * S - V * X * Ss
    sq = sp.expand(sum(r**2 for r in R))
    xs = list(X)
    poly = sp.Poly(sq, *xs)
    m1, m2 = mu, var + mu**2
    expectation = 0
    for powers, coef in poly.terms():
        term = coef
        for k in powers:
            term *= {0: 1, 1: m1, 2: m2}[k]
        expectation += term
    form = matrix_form(M, d, D, N)
    s = form.symbols
    closed = form.loss.subs({s["W_X"]: WX, s["V"]: V, s["W_P"]: WP, s["P"]: P, s["S"]: S,
                             s["S_star"]: Ss, s["J"]: sp.ones(d, D)}).doit()
    diff = sp.expand(2 * closed - expectation)
    return diff == 0, f"E||.||^2 expanded over {d}x{D} entries equals the matrix closed form (M={M}, N={N})"


def kernel_sum_equals_matrix_form(M=2, d=2, D=3, N=2) -> tuple[bool, str]:
    """The per-entry kernel sum (identity kernel) equals the matrix closed form, exactly."""
    sym = lambda name, r, c: sp.Matrix(r, c, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))  # noqa: E731
    WX, V, WP, P, S, Ss = sym("w", M, d), sym("v", M, d), sym("p", M, D), sym("P", D, D), sym("s", D, N), sym("t", D, N)
    ell = Identity().kernel.ell
    b = WP * P * S
    total = 0
    for m, j in itertools.product(range(M), range(N)):
        w, v = WX[m, :], V[m, :]
        s, t = S[:, j], Ss[:, j]
        total += ell.subs({A: var * (w.dot(w)) * s.dot(s), C: var * w.dot(v) * s.dot(t), B: var * v.dot(v) * t.dot(t),
                           mu_u: mu * sum(w) * sum(s) + b[m, j], mu_z: mu * sum(v) * sum(t)}, simultaneous=True)
    form = matrix_form(M, d, D, N)
    sy = form.symbols
    closed = form.loss.subs({sy["W_X"]: WX, sy["V"]: V, sy["W_P"]: WP, sy["P"]: P, sy["S"]: S,
                             sy["S_star"]: Ss, sy["J"]: sp.ones(d, D)}).doit()
    return sp.expand(total - 2 * closed) == 0, "sum of identity kernels over entries equals the matrix form"
