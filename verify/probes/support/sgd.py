"""Online SGD on fresh samples, for sigma = identity: the two learners of the stochastic probes.

:class:`OnlineSGD` trains the toolkit's student (position-only attention) on the full parameters (W_X, W_P,
W_KQ); each step draws B fresh inputs X_b (d x D, i.i.d. entries of the setting's law) and labels
y_b = V* X_b S* + eps_b, and takes a gradient step on (1/(2B)) sum_b ||W_X X_b S + W_P P S - y_b||_F^2.
The per-sample gradients, by the chain rule:
  R_b = W_X X_b S + W_P P S - y_b,  dW_X = mean_b R_b (X_b S)^T,  dW_P = mean_b R_b (P S)^T,
  dS = mean_b (W_X X_b + W_P P)^T R_b,  d logits_j = s_j * (g_j - <s_j, g_j>),  dW_KQ = P G P^T,
whose expectation is the population gradient of (3.3)-(3.4) (checked against verify.engines.full in the
tests). It records the population excess loss at the SGD iterates (closed form, full engine).

:class:`AttentionSGD` trains the same model written on tokens Z = [X; P] in R^{(d+D) x D}, with
logits_j = Z^T W_KQ z_{q(j)}, S(Z) the column softmax, f = W_V Z S(Z), W_V = [W_X, W_P] and
W_KQ in R^{(d+D) x (d+D)}:
(a) position-only: only the P-P block of W_KQ is trained (the X-rows and X-columns stay exactly 0), so
    logits_j = P^T W_PP p_{q(j)} and f = W_X X S + W_P P S: the toolkit's model (docs/setting.md "Student");
(b) input-dependent: every entry of W_KQ is trained, so S(Z) may depend on X.
Per-sample gradients of (c/2)||R||_F^2, R = W_V Z S - y (c = loss_scale; sampled versions of (3.3), (3.4)):
  dW_V = c R (Z S)^T,   dS = c Z^T W_V^T R,   d logits_j = s_j * (g_j - <s_j, g_j>)  (column softmax),
  dW_KQ = sum_j (d logits_j)_i z_i z_{q(j)}^T = Z (d logits) Z[:, q]^T
(averaged over the batch). X and the label noise are drawn in the same order by both classes, so student (a)
follows :class:`OnlineSGD`'s trajectory for the same seed.
"""
from __future__ import annotations

import numpy as np

from ...engines import Arith
from ...engines.full import FullState
from ...errors import InvalidParameter
from ...evidence import Scope, dims_of
from ...model.hypotheses import hypothesis

IDENTITY = hypothesis("identity")
UNIT_BETA = hypothesis("unit-beta")


def batch_sum_outer(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """sum over b and n of A[r, b, i, n] B[r, b, j, n], shape (R, I, J): the batch sums of the gradients, as one
    matrix product per chain (BLAS) rather than an einsum over small axes, about ten times slower here. The sum
    runs in another order than einsum's, so the last bits may differ."""
    R, Bn, I, N = A.shape
    return (np.swapaxes(A, 1, 2).reshape(R, I, Bn * N)
            @ np.swapaxes(B, 2, 3).reshape(R, Bn * N, B.shape[2]))


def sgd_scope(setting, batch: int, steps: int, what: str = "") -> Scope:
    """What a set of SGD runs covers: the setting's sizes and sigma, online SGD with batch size B (and ``what``:
    e.g. the student), t <= steps."""
    conv = f"online SGD, B = {batch}" + (f", noise {setting.noise_sd}" if setting.noise_sd else "")
    return Scope(dims=(dims_of(setting),), sigma=(setting.sigma.spec(),), conventions=(conv + (f", {what}" if what
                                                                                               else ""),),
                 horizon=int(steps))


# Largest number of pre-drawn samples (entries of X and of the label noise) held per chain at once by the compiled
# runs: 2^21 float64 numbers, 16 MB.
BLOCK_NUMBERS = 2**21


def fresh_block(s, rng, batch: int, noise: float, steps: int):
    """``steps`` steps' batches of one chain: X (steps, B, d, D) and the label noise (steps, B, M, N), the numbers
    ``steps`` successive :func:`fresh_batches` calls draw from ``rng`` (X, then the noise, step after step). A
    Gaussian law takes them in one call (numpy's Generator fills an array with the stream it would give call
    after call); another law draws step by step."""
    nx, ne = batch * s.d * s.D, batch * s.M * s.N
    if s.law.gaussian:
        z = rng.standard_normal((steps, nx + ne))
        X = float(s.law.mean) + np.sqrt(float(s.law.var)) * z[:, :nx]
        return X.reshape(steps, batch, s.d, s.D), (noise * z[:, nx:]).reshape(steps, batch, s.M, s.N)
    draws = [fresh_batches(s, (rng,), batch, noise) for _ in range(steps)]     # one step's draw, as the learners draw it
    return np.concatenate([X for X, _ in draws]), np.concatenate([e for _, e in draws])


def blocks(s, batch: int, steps: int):
    """Sizes of the blocks of pre-drawn steps (at most BLOCK_NUMBERS numbers each) that make up ``steps``."""
    per = max(1, BLOCK_NUMBERS // (batch * (s.d * s.D + s.M * s.N)))
    return [min(per, steps - k) for k in range(0, steps, per)]


def fresh_batches(s, rngs, batch: int, noise: float):
    """One batch per chain from its own stream (X first, then the label noise, so every learner draws the same
    samples for the same seed): X (R, B, d, D) and the label noise (R, B, M, N)."""
    X, eps = [], []
    for rng in rngs:
        X.append(s.law.sample(rng, (batch, s.d, s.D)))
        eps.append(noise * rng.standard_normal((batch, s.M, s.N)))
    return np.stack(X), np.stack(eps)


class OnlineSGD:
    """Online SGD for sigma = identity on the full parameters (W_X, W_P, W_KQ), one chain per seed, run in
    lockstep: chain r draws its samples (X, then the label noise) from ``default_rng(seeds[r])``, so every chain
    is the single-seed run of its seed, and the chains are independent. Parameters carry a leading chain axis:
    W_X (R, M, d), W_P (R, M, D), W_KQ (R, D, D)."""

    def __init__(self, setting, batch: int, seeds):
        if not IDENTITY.holds(setting):
            raise InvalidParameter("sigma", setting.sigma.spec(), "must be identity for online SGD")
        if not UNIT_BETA.holds(setting):
            raise InvalidParameter("beta", str(setting.beta), "must be 1 for online SGD (the gradient omits beta)")
        if int(batch) < 1:
            raise InvalidParameter("batch", batch, "must be an integer >= 1")
        self.s, self.B = setting, int(batch)
        self.seeds = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(x) for x in seeds)
        self.pop = FullState(setting, Arith.make("float64", None, 1))   # V*, S*, P and the population loss
        self.rngs = [np.random.default_rng(x) for x in self.seeds]
        R = len(self.seeds)
        self.WX, self.WP, self.WKQ = (np.repeat(np.asarray(w, dtype=float)[None], R, axis=0)
                                      for w in (self.pop.WX, self.pop.WP, self.pop.WKQ))
        self.eta_v, self.eta_kq = float(setting.eta_v), float(setting.eta_kq)
        self.noise = float(setting.noise_sd)
        self.step_count = 0

    def attention(self) -> np.ndarray:
        """S per chain, (R, D, N): column j = softmax over keys of P^T W_KQ p_{q(j)}."""
        P = self.pop.P
        logits = (P.T @ self.WKQ @ P)[:, :, self.pop.q]
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def gradients(self, X: np.ndarray, eps: np.ndarray):
        """Mini-batch gradients (dW_X, dW_P, dW_KQ) per chain; X is (R, B, d, D), eps (R, B, M, N)."""
        st, B = self.pop, X.shape[1]
        S = self.attention()
        PS = st.P @ S                                                   # (R, D, N)
        XS = X @ S[:, None]                                             # (R, B, d, N)
        R = self.WX[:, None] @ XS + (self.WP @ PS)[:, None] - (st.V @ X @ st.Sstar + eps)    # (R, B, M, N)
        gWX = batch_sum_outer(R, XS) / B                                # sum_b R_b (X_b S)^T
        gWP = R.mean(axis=1) @ np.swapaxes(PS, 1, 2)
        gS = batch_sum_outer(np.swapaxes(self.WX[:, None] @ X + (self.WP @ st.P)[:, None], 2, 3),
                             np.swapaxes(R, 2, 3)) / B                # sum_b (W_X X_b + W_P P)^T R_b
        gLog = S * (gS - (S * gS).sum(axis=1, keepdims=True))
        G = np.zeros(self.WKQ.shape)
        G[:, :, st.q] = gLog
        return gWX, gWP, st.P @ G @ st.P.T

    def draw(self):
        """This step's batches, one per chain (:func:`fresh_batches`)."""
        return fresh_batches(self.s, self.rngs, self.B, self.noise)

    def step(self):
        gWX, gWP, gKQ = self.gradients(*self.draw())
        self.WX = self.WX - self.eta_v * gWX
        if self.s.wp_trainable:
            self.WP = self.WP - self.eta_v * gWP
        self.WKQ = self.WKQ - self.eta_kq * gKQ
        self.step_count += 1

    def advance(self, steps: int) -> None:
        """``steps`` steps of every chain by the compiled kernel (verify.probes.support.sgd_kernels.online_steps:
        the same gradients as :meth:`gradients`, on the samples :meth:`draw` would draw)."""
        from . import sgd_kernels  # heavy: loads numba (compiled, or read from its cache, on first use)
        st = self.pop
        P, V, Sstar = (np.ascontiguousarray(np.asarray(a, dtype=float)) for a in (st.P, st.V, st.Sstar))
        q = np.asarray(st.q, dtype=np.int64)
        for n in blocks(self.s, self.B, steps):
            for r, rng in enumerate(self.rngs):
                X, eps = fresh_block(self.s, rng, self.B, self.noise, n)
                sgd_kernels.online_steps(self.WX[r], self.WP[r], self.WKQ[r], X, eps, P, q, V, Sstar, self.eta_v,
                                         self.eta_kq, bool(self.s.wp_trainable))
            self.step_count += n

    def population_record(self, r: int):
        """The full-matrix engine's record (exact population quantities) at chain ``r``'s parameters."""
        st = self.pop
        st.WX, st.WP, st.WKQ, st.step_count = self.WX[r], self.WP[r], self.WKQ[r], self.step_count
        return st.record()

    def run(self, checkpoints) -> dict:
        """{seed: the population excess loss, ||S - S*||_F and ||W_X - V*||_F at the SGD iterates at
        ``checkpoints``}."""
        keys = ("excess_loss", "s_err", "w_err")
        out = {x: {k: [] for k in ("step",) + keys} for x in self.seeds}
        for t in checkpoints:
            if self.step_count < t:
                self.advance(t - self.step_count)
            for r, x in enumerate(self.seeds):
                rec = self.population_record(r)
                out[x]["step"].append(int(rec.step))
                for k in keys:
                    out[x][k].append(float(getattr(rec, k)))
        return out


class AttentionSGD:
    """Mini-batch SGD on fresh samples of f = W_V Z S(Z) (see the module docstring), one chain per seed in
    lockstep, as :class:`OnlineSGD`: chain r draws X and the label noise, in that order, from
    ``default_rng(seeds[r])``. Parameters carry a leading chain axis: W_V (R, M, d + D), W_KQ (R, d + D, d + D).

    ``input_dependent=False`` trains only the P-P block of W_KQ (student (a), the toolkit's model);
    ``True`` trains all of W_KQ (student (b)). Student (a) follows :class:`OnlineSGD`'s trajectory for the same
    seed.
    """

    def __init__(self, setting, batch: int, input_dependent: bool, seeds):
        if not IDENTITY.holds(setting):
            raise InvalidParameter("sigma", setting.sigma.spec(), "must be identity for the full-attention students")
        if setting.init != "zero":
            raise InvalidParameter("init", setting.init, "must be zero for the full-attention students")
        if int(batch) < 1:
            raise InvalidParameter("batch", batch, "must be an integer >= 1")
        s = self.s = setting
        self.B, self.input_dependent = int(batch), bool(input_dependent)
        self.seeds = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(x) for x in seeds)
        self.rngs = [np.random.default_rng(x) for x in self.seeds]
        self.c, self.noise = float(s.loss_scale), float(s.noise_sd)
        self.eta_v, self.eta_kq = float(s.eta_v), float(s.eta_kq)
        self.P = s.p_numeric()
        self.V = np.array([[float(x) for x in r] for r in s.vstar_base]) * float(s.vstar_scale2) ** 0.5
        self.Sstar = np.array([[float(x) for x in r] for r in s.sstar()])
        self.q = list(s.query)
        n, R = s.d + s.D, len(self.seeds)
        self.WV = np.zeros((R, s.M, n))
        self.WKQ = np.zeros((R, n, n))
        # Which entries are trained: (a) only the P-P block of W_KQ; W_P only when trainable.
        self.kq_mask = np.ones((n, n)) if self.input_dependent else np.pad(np.ones((s.D, s.D)), ((s.d, 0), (s.d, 0)))
        self.v_mask = np.ones((s.M, n))
        if not s.wp_trainable:
            self.v_mask[:, s.d:] = 0.0
        self.step_count = 0

    # --- the model (X: (R, B, d, D), one batch per chain) -----------------------------------
    def tokens(self, X: np.ndarray) -> np.ndarray:
        """Z = [X; P], shape (R, B, d + D, D)."""
        return np.concatenate([X, np.broadcast_to(self.P, X.shape[:2] + self.P.shape)], axis=2)

    def attention(self, Z: np.ndarray) -> np.ndarray:
        """S(Z), shape (R, B, D, N): column j = softmax over keys i of z_i^T W_KQ z_{q(j)}."""
        logits = np.swapaxes(Z, 2, 3) @ self.WKQ[:, None] @ Z[..., self.q]
        e = np.exp(logits - logits.max(axis=2, keepdims=True))
        return e / e.sum(axis=2, keepdims=True)

    def residual(self, X, eps, Z=None, S=None):
        Z = self.tokens(X) if Z is None else Z
        S = self.attention(Z) if S is None else S
        return self.WV[:, None] @ Z @ S - (self.V @ X @ self.Sstar + eps)

    def sample_loss(self, X: np.ndarray, eps: np.ndarray) -> float:
        """sum over chains of (c / 2B) sum_b ||R_b||_F^2 on the batches (X, eps): the chains do not interact, so its
        gradient in chain r's parameters is chain r's mini-batch gradient."""
        R = self.residual(X, eps)
        return self.c * 0.5 * float((R * R).sum()) / X.shape[1]

    def gradients(self, X: np.ndarray, eps: np.ndarray):
        """(dW_V, dW_KQ) of :meth:`sample_loss` per chain, every entry (unmasked; the step applies the masks)."""
        Z = self.tokens(X)
        S = self.attention(Z)
        R = self.residual(X, eps, Z, S)
        B = X.shape[1]
        gWV = self.c * batch_sum_outer(R, Z @ S) / B                                          # sum_b R_b (Z_b S_b)^T
        gS = self.c * np.swapaxes(Z, 2, 3) @ (np.swapaxes(self.WV, 1, 2)[:, None] @ R)     # (R, B, D, N)
        gLog = S * (gS - (S * gS).sum(axis=2, keepdims=True))                                 # softmax backward
        gKQ = batch_sum_outer(Z @ gLog, Z[..., self.q]) / B
        return gWV, gKQ

    def draw(self):
        """This step's batches, one per chain (:func:`fresh_batches`)."""
        return fresh_batches(self.s, self.rngs, self.B, self.noise)

    def step(self):
        gWV, gKQ = self.gradients(*self.draw())
        self.WV = self.WV - self.eta_v * self.v_mask * gWV
        self.WKQ = self.WKQ - self.eta_kq * self.kq_mask * gKQ
        self.step_count += 1

    def advance(self, steps: int) -> np.ndarray:
        """``steps`` steps of every chain by the compiled kernel (verify.probes.support.sgd_kernels.attention_steps:
        the same gradients as :meth:`gradients`, on the samples :meth:`draw` would draw); returns
        :meth:`x_block_norm` after each step, shape (R, steps)."""
        from . import sgd_kernels  # heavy: loads numba (compiled, or read from its cache, on first use)
        P, V, Sstar = (np.ascontiguousarray(a, dtype=float) for a in (self.P, self.V, self.Sstar))
        q = np.asarray(self.q, dtype=np.int64)
        norms, done = np.empty((len(self.seeds), steps)), 0
        for n in blocks(self.s, self.B, steps):
            for r, rng in enumerate(self.rngs):
                X, eps = fresh_block(self.s, rng, self.B, self.noise, n)
                sgd_kernels.attention_steps(self.WV[r], self.WKQ[r], X, eps, P, q, V, Sstar, self.c, self.eta_v,
                                            self.eta_kq, self.v_mask, self.kq_mask, self.input_dependent,
                                            norms[r, done:done + n])
            done += n
            self.step_count += n
        return norms

    # --- what is recorded (per chain) --------------------------------------------------------
    def x_block_norm(self) -> np.ndarray:
        """||W_KQ outside the P-P block||_F per chain: the part of the logits that sees X."""
        out = self.WKQ.copy()
        out[:, self.s.d:, self.s.d:] = 0.0
        return np.sqrt((out * out).sum(axis=(1, 2)))

    def block_norms(self) -> dict:
        """Frobenius norms of the blocks of W_KQ per chain: XX (logit x_i^T W x_q), XP (x_i^T W p_q), PX, PP."""
        d, W = self.s.d, self.WKQ
        return {f"kq_{k}": np.sqrt((b * b).sum(axis=(1, 2)))
                for k, b in (("xx", W[:, :d, :d]), ("xp", W[:, :d, d:]), ("px", W[:, d:, :d]), ("p_block", W[:, d:, d:]))}

    def evaluate(self, Xh: np.ndarray) -> dict:
        """Held-out estimates per chain on the shared set Xh (H, d, D): excess_loss (L_opt = 0 without noise),
        s_err = sqrt(mean ||S(Z) - S*||_F^2), the input spread sqrt(mean ||S(Z) - mean S||_F^2),
        w_err = ||W_X - V*||_F and the W_KQ block norms."""
        H = len(Xh)
        X = np.broadcast_to(Xh, (len(self.seeds),) + Xh.shape)
        Z = self.tokens(X)
        S = self.attention(Z)
        R = self.residual(X, 0.0, Z, S)
        dS, spread = S - self.Sstar, S - S.mean(axis=1, keepdims=True)
        dW = self.WV[:, :, :self.s.d] - self.V
        return {"excess_loss": self.c * 0.5 * (R * R).sum(axis=(1, 2, 3)) / H,
                "s_err": np.sqrt((dS * dS).sum(axis=(1, 2, 3)) / H), "w_err": np.sqrt((dW * dW).sum(axis=(1, 2))),
                "s_spread": np.sqrt((spread * spread).sum(axis=(1, 2, 3)) / H),
                "kq_x_block": self.x_block_norm()} | self.block_norms()

    def population_state(self, r: int = 0) -> FullState:
        """The toolkit's full-matrix state at chain r's parameters of student (a) (X-block of W_KQ must be 0)."""
        if self.x_block_norm()[r] != 0.0:
            raise InvalidParameter("W_KQ", "X-block non-zero", "must be 0 for the position-only population state")
        st = FullState(self.s, Arith.make("float64", None, 1))
        d = self.s.d
        st.WX, st.WP, st.WKQ = self.WV[r, :, :d].copy(), self.WV[r, :, d:].copy(), self.WKQ[r, d:, d:].copy()
        return st

    def run(self, checkpoints, Xh: np.ndarray) -> dict:
        """{seed: :meth:`evaluate` on the held-out set ``Xh`` at ``checkpoints`` (and, for student (a), its exact
        population excess loss), as lists keyed by quantity}."""
        out = {x: {"step": []} for x in self.seeds}
        for t in checkpoints:
            if self.step_count < t:
                self.advance(t - self.step_count)
            ev = self.evaluate(Xh)
            for r, x in enumerate(self.seeds):
                out[x]["step"].append(int(t))
                for k, v in ev.items():
                    out[x].setdefault(k, []).append(float(v[r]))
                if not self.input_dependent:
                    out[x].setdefault("population_excess_loss", []).append(
                        float(self.population_state(r).excess_loss()))
        return out
