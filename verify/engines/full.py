"""Full-matrix GD on (W_X, W_P, W_KQ): the updates (3.3) and (3.4) without any symmetry assumption.

The per-entry kernel ell and its partial derivatives are generated from sigma's kernel
(verify.model.sigmas); this
module only applies the chain rule through the Gram quantities listed in verify.derive.loss
(||w_m||^2, <w_m, v*_m>, ||s_j||^2, <s_j, s*_j>, row and column sums) and through the column softmax
(d L / d logits_j = s_j * (g_j - <s_j, g_j>)). Works on float64 arrays or object arrays of mpmath
numbers (numpy dispatches + and * to mpmath).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np

from ..derive import codegen
from ..model.symbols import A, B, C, mu_u, mu_z
from ..model.setting import Setting
from ..model.sigmas import Sigma
from .arith import Arith
from .guard import float64_boundary
from .trajectory import Record, Trajectory, checkpoint_steps

import sympy as sp


@dataclass(frozen=True)
class KernelFunctions:
    ell: object
    dA: object
    dC: object
    dmu: object
    radial: object | None
    second: object   # E[sigma(z)^2] as a function of Var z: ell at a zero student row (sigma(0) = 0)


@lru_cache(maxsize=None)
def kernel_functions(sigma: Sigma, backend: str, teacher_zero: bool = False) -> KernelFunctions:
    """ell and its partials, compiled. ``teacher_zero`` (K = 0, S* = 0): the teacher output is
    sigma(0) = 0, so ell = E[sigma(u)^2] (the ReLU kernel's C / sqrt(AB) is 0/0 there)."""
    k = sigma.kernel
    args = (A, C, B, mu_u, mu_z)
    zero_teacher = teacher_zero and not k.with_means
    ell = k.second_moment if zero_teacher else k.ell
    dA = sp.diff(ell, A) if zero_teacher else k.partial(A)
    dC = sp.diff(ell, C) if zero_teacher else k.partial(C)
    dmu = sp.diff(k.ell, mu_u) if k.with_means else k.dmu_at_zero
    f = lambda e: codegen.lambdify(args, sigma.guard(e), backend)  # noqa: E731
    rad = None
    if sigma.kink_at_zero:
        a_, b_, c_ = sp.symbols("a_ b_ c_", positive=True)
        rad = codegen.lambdify((a_, b_, c_), sigma.radial_slope(), backend)
    second = codegen.lambdify((A,), k.second_moment.subs(mu_u, 0), backend)
    return KernelFunctions(f(ell), f(dA), f(dC), f(dmu), rad, second)


class FullState:
    """W_X (M x d), W_P (M x D), W_KQ (D x D) and the fixed V*, S*, P of one setting."""

    def __init__(self, s: Setting, ar: Arith):
        self.s, self.ar = s, ar
        n = ar.num
        obj = ar.name == "mpmath"
        self.dtype = object if obj else float
        arr = lambda rows: np.array([[n(x) for x in r] for r in rows], dtype=self.dtype)  # noqa: E731
        scale = mpmath.sqrt(n(s.vstar_scale2)) if obj else float(s.vstar_scale2) ** 0.5
        self.V = arr(s.vstar_base) * scale
        self.Sstar = arr(s.sstar())
        self.P = arr(s.p_exact())
        self.zero, self.one = n(0), n(1)
        self.var, self.mu, self.c = n(s.law.var), n(s.law.mean), n(s.loss_scale)
        self.eta_v, self.eta_kq = n(s.eta_v), n(s.eta_kq)
        self.beta = n(s.beta)
        self.kf = kernel_functions(s.sigma, ar.backend, s.K == 0)
        self.vec = (lambda f, k: np.frompyfunc(f, k, 1)) if obj else (lambda f, k: f)
        self.WX = np.full((s.M, s.d), self.zero, dtype=self.dtype)
        self.WP = np.full((s.M, s.D), self.zero, dtype=self.dtype)
        self.WKQ = np.full((s.D, s.D), self.zero, dtype=self.dtype)
        if s.init == "random":
            # A stream of its own (seed, 1): the seeded random V* uses default_rng(seed), and sharing it
            # would make W_X(0) exactly proportional to V*.
            rng = np.random.default_rng([s.seed, 1])
            sc = n(s.init_scale)
            self.WX = np.array(rng.standard_normal((s.M, s.d)), dtype=float).astype(self.dtype) * sc
            self.WKQ = np.array(rng.standard_normal((s.D, s.D)), dtype=float).astype(self.dtype) * sc
            if obj:
                self.WX = np.vectorize(mpmath.mpf, otypes=[object])(self.WX)
                self.WKQ = np.vectorize(mpmath.mpf, otypes=[object])(self.WKQ)
            # W_P stays 0 unless the kernel is exact at non-zero offsets (identity, polynomials).
            if s.sigma.kernel.with_means and s.wp_trainable:
                self.WP = np.array(rng.standard_normal((s.M, s.D)), dtype=float).astype(self.dtype) * sc
        self.q = list(s.query)
        self.step_count = 0
        self.noise_loss = n(s.loss_scale * s.M * s.N * s.noise_sd**2 / 2)

    # --- pieces ---------------------------------------------------------------------------
    def attention(self) -> np.ndarray:
        """S: column j = softmax over keys of the logits beta P^T W_KQ p_{q(j)} (beta: logit temperature)."""
        logits = self.beta * (self.P.T @ self.WKQ @ self.P)[:, self.q]
        m = logits.max(axis=0)
        z = logits - m
        e = np.exp(z) if self.dtype is float else np.frompyfunc(mpmath.exp, 1, 1)(z)
        return e / e.sum(axis=0)

    def _ap(self, f, *xs):
        out = self.vec(f, len(xs))(*xs)
        return np.broadcast_to(np.asarray(out, dtype=self.dtype), xs[0].shape).copy() if np.ndim(out) < 2 else out

    def moments(self, S):
        WX, V, Ss, var, mu = self.WX, self.V, self.Sstar, self.var, self.mu
        sq_w, c_wv, sq_v = (WX * WX).sum(1), (WX * V).sum(1), (V * V).sum(1)
        sq_s, c_ss, sq_ss = (S * S).sum(0), (S * Ss).sum(0), (Ss * Ss).sum(0)
        b = self.WP @ self.P @ S
        Am = var * np.outer(sq_w, sq_s)
        Cm = var * np.outer(c_wv, c_ss)
        Bm = var * np.outer(sq_v, sq_ss)
        mu_u_ = mu * np.outer(WX.sum(1), S.sum(0)) + b
        mu_z_ = mu * np.outer(V.sum(1), Ss.sum(0))
        return dict(sq_w=sq_w, c_wv=c_wv, sq_v=sq_v, sq_s=sq_s, c_ss=c_ss, sq_ss=sq_ss,
                    A=Am, C=Cm, B=Bm, mu_u=mu_u_, mu_z=mu_z_)

    def excess_loss(self, S=None):
        S = self.attention() if S is None else S
        g = self.moments(S)
        zero_rows = np.array([x == 0 for x in g["sq_w"]])
        if self.s.sigma.kink_at_zero and zero_rows.any():
            Asafe = g["A"].copy()
            Asafe[zero_rows, :] = self.one
            ell = self._ap(self.kf.ell, Asafe, g["C"], g["B"], g["mu_u"], g["mu_z"])
            ell[zero_rows, :] = self._ap(self.kf.second, g["B"][zero_rows, :])
        else:
            ell = self._ap(self.kf.ell, g["A"], g["C"], g["B"], g["mu_u"], g["mu_z"])
        return self.c * ell.sum() / 2

    def gradients(self):
        """(dL/dW_X, dL/dW_P, dL/dW_KQ) at the current state; see the module docstring."""
        s, c, var, mu = self.s, self.c, self.var, self.mu
        S = self.attention()
        g = self.moments(S)
        zero_rows = np.array([x == 0 for x in g["sq_w"]])
        Asafe = g["A"].copy()
        kink = s.sigma.kink_at_zero and zero_rows.any()   # rows at W_X = 0, where ell is not differentiable
        if kink:
            Asafe[zero_rows, :] = self.one   # any positive value: these rows are replaced below
        lA = self._ap(self.kf.dA, Asafe, g["C"], g["B"], g["mu_u"], g["mu_z"])
        lC = self._ap(self.kf.dC, Asafe, g["C"], g["B"], g["mu_u"], g["mu_z"])
        if not s.sigma.wp_gradient_closed_form:
            # W_P is frozen at 0 and the law is centred (validated), so mu_u = 0 and no W_P gradient
            # is taken: the offset derivative is not needed (its value at 0 is in sigma.kernel).
            lmu = np.full_like(lA, self.zero)
        else:
            lmu = self._ap(self.kf.dmu, Asafe, g["C"], g["B"], g["mu_u"], g["mu_z"])
        if kink:
            lA[zero_rows, :] = self.zero
            lC[zero_rows, :] = self.zero
        half = c / 2
        gWX = (c * var * (lA @ g["sq_s"]))[:, None] * self.WX + (half * var * (lC @ g["c_ss"]))[:, None] * self.V \
            + (half * mu * (lmu @ S.sum(0)))[:, None] * np.full((1, s.d), self.one, dtype=self.dtype)
        if kink and s.K > 0:
            # (K = 0: ell = E sigma(u)^2 (A/2 for ReLU) is smooth, the gradient at a zero row is 0 as computed.)
            # 'radial' convention: the one-sided derivative along v*_m (Sigma.radial_slope)
            for m in np.nonzero(zero_rows)[0]:
                slope = sum(self.kf.radial(var * g["sq_v"][m] * g["sq_s"][j], var * g["sq_v"][m] * g["sq_ss"][j],
                                           var * g["sq_v"][m] * g["c_ss"][j]) for j in range(s.N))
                gWX[m, :] = half * slope / g["sq_v"][m] * self.V[m, :]
        gWP = half * lmu @ (self.P @ S).T if s.wp_trainable else np.full_like(self.WP, self.zero)
        gS = c * var * S * (g["sq_w"] @ lA)[None, :] + half * var * self.Sstar * (g["c_wv"] @ lC)[None, :] \
            + half * mu * np.full((s.D, 1), self.one, dtype=self.dtype) * (self.WX.sum(1) @ lmu)[None, :] \
            + half * (self.WP @ self.P).T @ lmu
        gLog = S * (gS - (S * gS).sum(0)[None, :])
        G = np.full((s.D, s.D), self.zero, dtype=self.dtype)
        G[:, self.q] = gLog
        # logits = beta P^T W_KQ P is linear in W_KQ: d L / d W_KQ = beta P (d L / d logits) P^T
        gWKQ = self.beta * (self.P @ G @ self.P.T)
        return gWX, gWP, gWKQ

    def step(self):
        gWX, gWP, gWKQ = self.gradients()
        self.WX = self.WX - self.eta_v * gWX
        self.WP = self.WP - self.eta_v * gWP
        self.WKQ = self.WKQ - self.eta_kq * gWKQ
        self.step_count += 1

    def record(self) -> Record:
        ar, s = self.ar, self.s
        S = self.attention()
        excess = self.excess_loss(S)
        diffS = S - self.Sstar
        s_err = ar.sqrt((diffS * diffS).sum())
        dW = self.WX - self.V
        w_err = ar.sqrt((dW * dW).sum())
        wp = ar.sqrt((self.WP * self.WP).sum())
        sq_v = (self.V * self.V).sum(1)
        alphas = list((self.WX * self.V).sum(1) / sq_v)
        offspan = [ar.sqrt(max(self.zero, ((self.WX[m] - alphas[m] * self.V[m]) ** 2).sum())) for m in range(s.M)]
        nw = ar.sqrt((self.WX * self.WX).sum())
        cos = (self.WX * self.V).sum() / (nw * ar.sqrt(sq_v.sum())) if nw != 0 else self.zero
        mass = [sum(S[i, j] for i in g) for j, g in enumerate(s.supports)]
        return Record(self.step_count, excess + self.noise_loss, excess, s_err, w_err, wp, cos, alphas, offspan, mass)


def iterate_full(s: Setting, steps: int, ar: Arith, checkpoints=None, progress=None) -> Trajectory:
    """Run ``steps`` full-matrix GD steps, recording at ``checkpoints``.

    In float64, overflow / NaN raise NumericalTrouble naming the step (verify.engines.guard).
    ``progress(step)``, if given, is called after every step (a full step is costly) and checkpoint.
    """
    cps = sorted(set(checkpoints or checkpoint_steps(steps)))
    traj = Trajectory("full", ar.name, ar.dps if ar.name == "mpmath" else None)
    f64 = ar.name == "float64"
    st = None
    describe = lambda: {"W_X": st.WX, "W_KQ": st.WKQ}  # noqa: E731
    with ar.context(), float64_boundary(s, "full", f64, describe) as b:
        st = FullState(s, ar)
        for target in cps:
            while st.step_count < target:
                b.at(st.step_count + 1, "the GD update (3.3)-(3.4) of (W_X, W_P, W_KQ)")
                st.step()
                if f64:
                    b.finite(st.step_count, W_X=st.WX, W_P=st.WP, W_KQ=st.WKQ)
                if progress is not None:
                    progress(st.step_count)
            b.at(st.step_count, "the recorded quantities (loss, s_err, w_err, ...)")
            rec = st.record()
            if f64:
                b.finite(st.step_count, excess_loss=float(rec.excess_loss), s_err=float(rec.s_err),
                         w_err=float(rec.w_err), alpha=[float(a) for a in rec.alpha])
            traj.records.append(rec)
    return traj
