"""Compiled (numba) steps of the two online-SGD learners of verify.probes.support.sgd, one chain at a time.

The learners' numpy code (``OnlineSGD.gradients``, ``AttentionSGD.gradients``) is the statement of the method and
is what the tests differentiate; these loops compute the same per-sample gradients in the same order of
operations over a block of pre-drawn samples, without numpy's per-call overhead on these small matrices (a
step of the ci probes costs a few hundred multiply-adds per sample). The probes ran about 90% of their time in
that overhead. tests/test_sgd_kernels.py checks every kernel against the numpy step it replaces.

Each kernel updates its chain's parameters in place and reads the samples of ``T`` steps: X of shape
(T, B, d, D) and the label noise of shape (T, B, M, N), drawn as the numpy learners draw them.
"""
from __future__ import annotations

import numba
import numpy as np



def _jit(fn):
    """numba's njit with its on-disk cache (beside this module, or numba's per-user folder); compiled in this
    process only where neither can be written (a read-only install: numba refuses ``cache=True`` at once there)."""
    try:
        return numba.njit(cache=True, fastmath=False, nogil=True)(fn)
    except RuntimeError:            # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, fastmath=False, nogil=True)(fn)


@_jit
def _mm(A, B, out):
    """out = A @ B."""
    n, k = A.shape
    m = B.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for l in range(k):
                s += A[i, l] * B[l, j]
            out[i, j] = s


@_jit
def _softmax_cols(L, S):
    """S = the column softmax of L (over axis 0), shifted by the column maximum as numpy's learners do."""
    D, N = L.shape
    for j in range(N):
        m = L[0, j]
        for i in range(1, D):
            if L[i, j] > m:
                m = L[i, j]
        tot = 0.0
        for i in range(D):
            e = np.exp(L[i, j] - m)
            S[i, j] = e
            tot += e
        for i in range(D):
            S[i, j] = S[i, j] / tot


@_jit
def _softmax_backward(S, gS, out):
    """out_j = s_j * (g_j - <s_j, g_j>) per column j: the gradient of the logits through the column softmax."""
    D, N = S.shape
    for j in range(N):
        c = 0.0
        for i in range(D):
            c += S[i, j] * gS[i, j]
        for i in range(D):
            out[i, j] = S[i, j] * (gS[i, j] - c)


@_jit
def online_steps(WX, WP, WKQ, X, eps, P, q, V, Sstar, eta_v, eta_kq, train_wp):
    """``len(X)`` steps of OnlineSGD for one chain (sgd.OnlineSGD.gradients and .step):
    S = colsoftmax((P^T W_KQ P)[:, q]), R_b = W_X X_b S + W_P P S - (V* X_b S* + eps_b),
    dW_X = mean_b R_b (X_b S)^T, dW_P = (mean_b R_b) (P S)^T, dS = mean_b (W_X X_b + W_P P)^T R_b,
    dW_KQ = P G P^T with G[:, q] = the logits' gradient."""
    T, B, d, D = X.shape
    M, N = eps.shape[2], eps.shape[3]
    Pq = np.empty((D, N))
    for j in range(N):
        for i in range(D):
            Pq[i, j] = P[i, q[j]]
    PT = P.T.copy()
    tmp, L, S, PS = np.empty((D, N)), np.empty((D, N)), np.empty((D, N)), np.empty((D, N))
    WPPS, WPP, XS, R = np.empty((M, N)), np.empty((M, D)), np.empty((d, N)), np.empty((M, N))
    VX, Y, U = np.empty((M, D)), np.empty((M, N)), np.empty((M, D))
    gWX, gWP, gS, Rsum = np.empty((M, d)), np.empty((M, D)), np.empty((D, N)), np.empty((M, N))
    gLog, G, PG, gKQ = np.empty((D, N)), np.empty((D, D)), np.empty((D, D)), np.empty((D, D))
    for t in range(T):
        _mm(WKQ, Pq, tmp)
        _mm(PT, tmp, L)
        _softmax_cols(L, S)
        _mm(P, S, PS)
        _mm(WP, PS, WPPS)
        _mm(WP, P, WPP)
        gWX[:, :] = 0.0
        gS[:, :] = 0.0
        Rsum[:, :] = 0.0
        for b in range(B):
            Xb = X[t, b]
            _mm(Xb, S, XS)
            _mm(V, Xb, VX)
            _mm(VX, Sstar, Y)
            _mm(WX, XS, R)
            for m in range(M):
                for j in range(N):
                    r = R[m, j] + WPPS[m, j] - (Y[m, j] + eps[t, b, m, j])
                    R[m, j] = r
                    Rsum[m, j] += r
            for m in range(M):                      # dW_X += R_b (X_b S)^T
                for a in range(d):
                    s = 0.0
                    for j in range(N):
                        s += R[m, j] * XS[a, j]
                    gWX[m, a] += s
            _mm(WX, Xb, U)                          # U = W_X X_b + W_P P
            for m in range(M):
                for i in range(D):
                    U[m, i] += WPP[m, i]
            for i in range(D):                      # dS += U^T R_b
                for j in range(N):
                    s = 0.0
                    for m in range(M):
                        s += U[m, i] * R[m, j]
                    gS[i, j] += s
        for m in range(M):
            for a in range(d):
                gWX[m, a] /= B
            for j in range(N):
                Rsum[m, j] /= B
        for i in range(D):
            for j in range(N):
                gS[i, j] /= B
        for m in range(M):                          # dW_P = (mean_b R_b) (P S)^T
            for i in range(D):
                s = 0.0
                for j in range(N):
                    s += Rsum[m, j] * PS[i, j]
                gWP[m, i] = s
        _softmax_backward(S, gS, gLog)
        G[:, :] = 0.0
        for j in range(N):
            for i in range(D):
                G[i, q[j]] = gLog[i, j]
        _mm(P, G, PG)
        _mm(PG, PT, gKQ)
        for m in range(M):
            for a in range(d):
                WX[m, a] -= eta_v * gWX[m, a]
            if train_wp:
                for i in range(D):
                    WP[m, i] -= eta_v * gWP[m, i]
        for i in range(D):
            for k in range(D):
                WKQ[i, k] -= eta_kq * gKQ[i, k]


@_jit
def attention_steps(WV, WKQ, X, eps, P, q, V, Sstar, c, eta_v, eta_kq, v_mask, kq_mask, input_dependent, xnorm):
    """``len(X)`` steps of AttentionSGD for one chain (sgd.AttentionSGD.gradients and .step), Z_b = [X_b; P]:
    S_b = colsoftmax(Z_b^T W_KQ Z_b[:, q]), R_b = W_V Z_b S_b - (V* X_b S* + eps_b), dW_V = c mean_b R_b (Z_b S_b)^T,
    dS_b = c Z_b^T W_V^T R_b, dW_KQ = mean_b Z_b (logits' gradient) Z_b[:, q]^T; then the masked steps.
    ``input_dependent`` False: W_KQ has zero X-rows and X-columns (kept so by ``kq_mask``), so S does not depend on
    X and is computed once per step. ``xnorm[t]``: ||W_KQ outside the P-P block||_F after step t."""
    T, B, d, D = X.shape
    M, N = eps.shape[2], eps.shape[3]
    n = d + D
    Z, Zq, TQ = np.empty((n, D)), np.empty((n, N)), np.empty((n, N))
    ZT = np.empty((D, n))
    L, S, ZS = np.empty((D, N)), np.empty((D, N)), np.empty((n, N))
    R, VX, Y = np.empty((M, N)), np.empty((M, D)), np.empty((M, N))
    WtR, gS, gLog, ZG = np.empty((n, N)), np.empty((D, N)), np.empty((D, N)), np.empty((n, N))
    gWV, gKQ = np.empty((M, n)), np.empty((n, n))
    for i in range(D):
        for k in range(D):
            Z[d + i, k] = P[i, k]
    for t in range(T):
        gWV[:, :] = 0.0
        gKQ[:, :] = 0.0
        for b in range(B):
            Xb = X[t, b]
            for a in range(d):
                for k in range(D):
                    Z[a, k] = Xb[a, k]
            for i in range(n):
                for j in range(N):
                    Zq[i, j] = Z[i, q[j]]
                for k in range(D):
                    ZT[k, i] = Z[i, k]
            if input_dependent or b == 0:
                _mm(WKQ, Zq, TQ)
                _mm(ZT, TQ, L)
                _softmax_cols(L, S)
            _mm(Z, S, ZS)
            _mm(WV, ZS, R)
            _mm(V, Xb, VX)
            _mm(VX, Sstar, Y)
            for m in range(M):
                for j in range(N):
                    R[m, j] -= Y[m, j] + eps[t, b, m, j]
            for m in range(M):                      # dW_V += c R_b (Z_b S_b)^T
                for i in range(n):
                    s = 0.0
                    for j in range(N):
                        s += R[m, j] * ZS[i, j]
                    gWV[m, i] += c * s
            for i in range(n):                      # W_V^T R_b
                for j in range(N):
                    s = 0.0
                    for m in range(M):
                        s += WV[m, i] * R[m, j]
                    WtR[i, j] = s
            _mm(ZT, WtR, gS)
            for k in range(D):
                for j in range(N):
                    gS[k, j] *= c
            _softmax_backward(S, gS, gLog)
            _mm(Z, gLog, ZG)                        # dW_KQ += (Z_b gLog_b) Z_b[:, q]^T
            for i in range(n):
                for k in range(n):
                    s = 0.0
                    for j in range(N):
                        s += ZG[i, j] * Zq[k, j]
                    gKQ[i, k] += s
        for m in range(M):
            for i in range(n):
                WV[m, i] -= eta_v * v_mask[m, i] * (gWV[m, i] / B)
        x2 = 0.0
        for i in range(n):
            for k in range(n):
                WKQ[i, k] -= eta_kq * kq_mask[i, k] * (gKQ[i, k] / B)
                if i < d or k < d:
                    x2 += WKQ[i, k] * WKQ[i, k]
        xnorm[t] = np.sqrt(x2)
