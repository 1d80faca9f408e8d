"""Full-matrix GD on (W_X, W_P, W_KQ): the updates (3.3) and (3.4) without any symmetry assumption.

Two formulations of the same recursion, with one chain rule (verify.engines.fullgrad):
- :class:`LogitState`, the engine: it iterates W_X, Y = W_P P and the logits Lambda = beta P^T W_KQ Q with
  the Gram matrix P^T P, so a step costs O(D N) when P^T P = lambda I and never forms W_KQ (formed on
  demand). Its arithmetic is float64 (numpy), mpmath or Arb balls (verify.engines.fullarb); the float64
  runs use JAX when it is installed (verify.engines.fulljax).
- :class:`FullState`, the direct formulation: it holds W_P and W_KQ and forms the logits beta P^T W_KQ P
  every step (O(D^3)); the second route in the tests, and a state whose weights callers may set.
"""
from __future__ import annotations

import numpy as np

from . import fulljax
from ..errors import InvalidParameter
from ..model.setting import Setting
from .arith import Arith
from .fullgrad import (attention as softmax_columns, excess_loss as entry_loss, fixed, gradients as chain_rule,
                       initial_weights, moments as entry_moments, p_times, record_of, times_p, wp_stays_zero)
from .guard import float64_boundary
from .trajectory import Record, Trajectory, checkpoint_steps, throttled

class FullState:
    """W_X (M x d), W_P (M x D), W_KQ (D x D) and the fixed V*, S*, P of one setting (the direct formulation)."""

    def __init__(self, s: Setting, ar: Arith):
        self.s, self.ar = s, ar
        self.fx = fixed(s, ar)
        self.V, self.Sstar, self.P, self.q = self.fx.V, self.fx.Sstar, self.fx.P, self.fx.q
        self.var, self.mu, self.c, self.zero = self.fx.var, self.fx.mu, self.fx.c, self.fx.zero
        self.noise_loss = self.fx.noise_loss
        self.WX, self.WP, self.WKQ = initial_weights(self.fx)
        self.step_count = 0

    def logits(self) -> np.ndarray:
        return self.fx.beta * (self.P.T @ self.WKQ @ self.P)[:, self.q]

    def attention(self) -> np.ndarray:
        """S: column j = softmax over keys of the logits beta P^T W_KQ p_{q(j)} (beta: logit temperature)."""
        return softmax_columns(self.fx, self.logits())

    def moments(self, S) -> dict:
        g = entry_moments(self.fx, self.WX, self.WP @ self.P, S)
        return g | {"sq_v": self.fx.sq_v, "sq_ss": self.fx.sq_ss}

    def excess_loss(self, S=None):
        S = self.attention() if S is None else S
        return entry_loss(self.fx, self.WX, self.WP @ self.P, S)

    def gradients(self):
        """(dL/dW_X, dL/dW_P, dL/dW_KQ) at the current state: dL/dW_P = (dL/dY) P^T, dL/dW_KQ = beta P G' P^T
        with G' the D x D matrix whose query columns are dL/dLambda (the logits are linear in W_KQ)."""
        gr = chain_rule(self.fx, self.WX, self.WP @ self.P, self.attention(), offsets=True)
        gWP = gr.Y @ self.P.T if self.s.wp_trainable else np.full_like(self.WP, self.zero)
        G = np.full((self.s.D, self.s.D), self.zero, dtype=self.fx.dtype)
        G[:, self.q] = gr.logits
        return gr.wx(self.fx, self.WX), gWP, self.fx.beta * (self.P @ G @ self.P.T)

    def step(self):
        gWX, gWP, gWKQ = self.gradients()
        self.WX = self.WX - self.fx.eta_v * gWX
        self.WP = self.WP - self.fx.eta_v * gWP
        self.WKQ = self.WKQ - self.fx.eta_kq * gWKQ
        self.step_count += 1

    def record(self) -> Record:
        S = self.attention()
        return record_of(self.fx, self.step_count, self.WX, self.WP, S, self.excess_loss(S))


class LogitState:
    """GD in the coordinates (W_X, Y = W_P P, Lambda = beta P^T W_KQ Q). One step (3.3)-(3.4) reads

        W_X <- W_X - eta_V dL/dW_X,   Y <- Y - eta_V (dL/dY) P^T P,
        Lambda <- Lambda - eta_KQ beta^2 P^T P (dL/dLambda) Q^T Q,

    since dL/dW_P = (dL/dY) P^T and dL/dW_KQ = beta P (dL/dLambda) Q^T; with P^T P = lambda I (distinct query
    positions: Q^T Q = lambda I_N) the factors are lambda and lambda^2 (verify.derive.gradients.
    logit_step_obligation). W_P and W_KQ are formed on demand: W_P = W_P(0) + (Y - Y(0)) P^T / lambda and
    W_KQ = W_KQ(0) + P (Lambda - Lambda(0)) Q^T / (beta lambda^2), or, for a general P, from the summed
    gradients. A W_P that provably stays 0 (zero start, centred data, verify.engines.fullgrad.wp_stays_zero) is
    not iterated."""

    def __init__(self, s: Setting, ar, route: str | None = None):
        self.s, self.ar = s, ar
        fx = self.fx = fixed(s, ar, route)
        self.WX, self.WP0, self.WKQ0 = initial_weights(fx)
        zero_wp = all(x == 0 for x in self.WP0.flat)
        self.Y0 = np.full((s.M, s.D), fx.zero, dtype=fx.dtype) if zero_wp else times_p(fx, self.WP0)
        self.L0 = (np.full((s.D, s.N), fx.zero, dtype=fx.dtype) if s.init == "zero"
                   else fx.beta * times_p(fx, p_times(fx, self.WKQ0, transpose=True))[:, fx.q])
        self.trains_y = s.wp_trainable and not (zero_wp and wp_stays_zero(fx))
        self.Y, self.logits = self.Y0.copy(), self.L0.copy()
        self.y_zero = zero_wp and not self.trains_y
        self.general = fx.gram is not None
        lam2 = fx.one if self.general else fx.lam * fx.lam
        self.kq_step = fx.eta_kq * fx.beta * fx.beta * lam2
        self.y_step = fx.eta_v * (fx.one if self.general else fx.lam)
        self.sumG = np.full((s.D, s.N), fx.zero, dtype=fx.dtype) if self.general else None
        self.sumgY = np.full((s.M, s.D), fx.zero, dtype=fx.dtype) if self.general and self.trains_y else None
        self.step_count = 0

    @property
    def offsets(self):
        """Y = W_P P, or None where it is 0 for good (the gradients then skip every offset term)."""
        return None if self.y_zero else self.Y

    def attention(self) -> np.ndarray:
        return softmax_columns(self.fx, self.logits)

    def step(self) -> None:
        fx = self.fx
        # dL/dLambda comes scaled by the logit step (general P: the Gram products are linear, so it is unscaled)
        gr = chain_rule(fx, self.WX, self.offsets, self.attention(), offsets=self.trains_y,
                        scale=None if self.general else self.kq_step)
        if gr.full is not None:
            self.WX = self.WX - fx.eta_v * gr.full
        else:
            shift = gr.b[:, None] * fx.V if gr.e is None else gr.b[:, None] * fx.V + gr.e[:, None]
            self.WX = self.WX * (fx.one - fx.eta_v * gr.a)[:, None] - fx.eta_v * shift
        if self.trains_y:
            self.Y = self.Y - self.y_step * (gr.Y @ fx.gram if self.general else gr.Y)
        self.logits = self.logits - (self.kq_step * (fx.gram @ gr.logits @ fx.gram_q) if self.general else gr.logits)
        if self.general:
            self.sumG = self.sumG + gr.logits
            if self.trains_y:
                self.sumgY = self.sumgY + gr.Y
        self.step_count += 1

    @property
    def WP(self) -> np.ndarray:
        fx = self.fx
        if not self.trains_y:
            return self.WP0
        if self.general:
            return self.WP0 - fx.eta_v * times_p(fx, self.sumgY, transpose=True)
        return self.WP0 + times_p(fx, self.Y - self.Y0, transpose=True) / fx.lam

    @property
    def WKQ(self) -> np.ndarray:
        """W_KQ(0) + P Z Q^T, Z the change of the logits over beta lambda^2 (or -eta_KQ beta times the summed
        logit gradients); Z Q^T = Z' P^T with Z' the D x D matrix whose query columns are Z."""
        fx = self.fx
        if self.general:
            Z, k = self.sumG, -fx.eta_kq * fx.beta
        else:
            Z, k = self.logits - self.L0, fx.one / (fx.beta * fx.lam * fx.lam)
        Zf = np.full((self.s.D, self.s.D), fx.zero, dtype=fx.dtype)
        Zf[:, fx.q] = Z
        return self.WKQ0 + k * times_p(fx, p_times(fx, Zf), transpose=True)

    def record(self) -> Record:
        S = self.attention()
        return record_of(self.fx, self.step_count, self.WX, self.WP, S, entry_loss(self.fx, self.WX, self.offsets, S))


def require_route(s: Setting, arithmetic: str, jax: bool = True, route: str | None = None) -> None:
    """Refuse an arithmetic that cannot compute this setting's loss: the finite sum over a data set's images
    (a nonlinear sigma on an empirical data model, or asked for by ``route``) is differentiated by jax.grad, in
    float64 only."""
    if (route or s.data.route(s.sigma)) != "images" or (arithmetic == "float64" and jax):
        return
    raise InvalidParameter("arithmetic", arithmetic, f"must be float64 on JAX with data = {s.data.spec()} and sigma = "
                           f"{s.sigma.spec()}: the finite sum over the images is differentiated by jax.grad (JAX, a "
                           "dependency of verify, could not be imported); a linear sigma takes the second-moment route in every arithmetic, Arb "
                           "included, so a certified run is available for sigma linear only", also=("data", "sigma"))


# Below this many steps a float64 run takes the numpy backend: JAX compiles a program for every new set of shapes
# (about 1.5 s of CPU time, several programs a run), which numpy's step (well under a millisecond at the sizes the
# checks use) repays only after thousands of steps; the fuzzers and the claims' checks run many short regimes of
# different shapes. Both backends compute the same recursion (tests/test_fulljax.py: they agree to 1e-12).
JAX_MIN_STEPS = 1000


def default_backend(s: Setting, steps: int, route: str | None = None) -> str:
    """The float64 backend of a run of ``steps`` steps when none is asked for: "jax" for the finite sum over a data
    set's images (only jax.grad differentiates it) and for runs of at least JAX_MIN_STEPS steps, when JAX can be
    imported; else "numpy"."""
    wants = (route or s.data.route(s.sigma)) == "images" or steps >= JAX_MIN_STEPS
    return "jax" if wants and fulljax.available() else "numpy"


def iterate_full(s: Setting, steps: int, ar: Arith, checkpoints=None, progress=None, backend: str | None = None,
                 route: str | None = None) -> Trajectory:
    """Run ``steps`` full-matrix GD steps (:class:`LogitState`), recording at ``checkpoints``; ``route``: another
    exact way of computing the loss than the engines' choice (verify.engines.fullgrad.fixed).

    float64 runs on JAX when it is installed and the run is long (:func:`default_backend`; ``backend`` forces
    "jax" or "numpy"); overflow / NaN raise NumericalTrouble naming the step (verify.engines.guard).
    ``progress(step)`` follows the run.
    """
    cps = sorted(set(checkpoints or checkpoint_steps(steps)))
    f64 = ar.name == "float64"
    on_jax = f64 and (backend or default_backend(s, max(cps), route)) == "jax"
    require_route(s, ar.name, on_jax, route)
    if on_jax:
        return fulljax.iterate_full_jax(LogitState(s, Arith.make("float64", None, max(cps)), route), cps, progress)
    traj = Trajectory("full", ar.name, ar.dps if ar.name == "mpmath" else None, backend="numpy" if f64 else None)
    traj.notes.append("full-matrix engine: logits iterated with P^T P")
    st, tick = None, throttled(progress)
    describe = lambda: {"W_X": st.WX, "W_KQ": st.WKQ}  # noqa: E731
    with ar.context(), float64_boundary(s, "full", f64, describe) as b:
        st = LogitState(s, ar, route)
        for target in cps:
            while st.step_count < target:
                b.at(st.step_count + 1, "the GD update (3.3)-(3.4) of (W_X, W_P, W_KQ)")
                st.step()
                if f64:
                    b.finite(st.step_count, W_X=st.WX, W_P=st.Y, W_KQ=st.logits)
                if tick is not None:
                    tick(st.step_count)
            b.at(st.step_count, "the recorded quantities (loss, s_err, w_err, ...)")
            rec = st.record()
            if f64:
                b.finite(st.step_count, excess_loss=float(rec.excess_loss), s_err=float(rec.s_err),
                         w_err=float(rec.w_err), alpha=[float(a) for a in rec.alpha])
            traj.records.append(rec)
            if tick is not None:
                tick(st.step_count, force=True)
    return traj
