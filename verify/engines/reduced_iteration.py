"""Iteration of the exact reduced recursion on (alpha_1..alpha_M, delta) (verify.derive.reduced_map).

The step functions are generated from the SymPy expressions; nothing here restates a formula.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..derive import codegen
from ..derive.reduced_map import case_of, reduced, reduced_step_exprs
from ..model.symbols import D, K, N, alpha, beta, c_loss, delta, eta_kq, eta_v, lam, var, vn
from ..errors import InvalidParameter
from ..model.setting import Setting
from ..model.sigmas import Sigma
from .arith import Arith
from .guard import float64_boundary
from .trajectory import Record, Trajectory, checkpoint_steps

ARGS = (alpha, vn, delta, D, K, N, var, c_loss, eta_v, eta_kq, lam, beta)
PROGRESS_EVERY = 1000     # steps between progress callbacks (a callback costs far less than 1000 steps)


@dataclass(frozen=True)
class ReducedFunctions:
    """Compiled step and observables for one sigma, case of K, and backend."""

    step_alpha: object
    step_delta_inc: object
    row_loss: object
    p: object
    s_err2: object


@lru_cache(maxsize=None)
def reduced_functions(sigma: Sigma, case: str, backend: str) -> ReducedFunctions:
    red = reduced(sigma, case)
    a_next, inc = reduced_step_exprs(sigma, case)
    f = lambda e: codegen.lambdify(ARGS, e, backend)  # noqa: E731
    return ReducedFunctions(f(a_next), f(inc), f(red.r), f(red.cols["p"]), f(red.cols["s_err2"]))


def require_reducible(s: Setting) -> None:
    ok, why = s.reducible()
    if not ok:
        raise InvalidParameter("engine", "reduced",
                               f"the reduced recursion is not exact here: {why}; use `engine=full`")


class ReducedState:
    """alpha (one per row) and delta, with the parameters of one setting in one arithmetic."""

    def __init__(self, s: Setting, ar: Arith, alpha0=None, delta0=0):
        require_reducible(s)
        self.s, self.ar = s, ar
        self.fn = reduced_functions(s.sigma, case_of(s.K, s.D), ar.backend)
        n = ar.num
        self.vn = [n(x) for x in s.row_norm2()]
        self.params = (n(s.D), n(s.K), n(s.N), n(s.law.var), n(s.loss_scale), n(s.eta_v), n(s.eta_kq), n(s.p_lambda),
                       n(s.beta))
        self.alpha = [n(0)] * s.M if alpha0 is None else [n(a) for a in alpha0]
        self.delta = n(delta0)
        self.step_count = 0
        self.noise_loss = n(s.loss_scale * s.M * s.N * s.noise_sd**2 / 2)

    def step(self) -> None:
        fa, fi, P = self.fn.step_alpha, self.fn.step_delta_inc, self.params
        d = self.delta
        inc = sum(fi(a, v, d, *P) for a, v in zip(self.alpha, self.vn))
        self.alpha = [fa(a, v, d, *P) for a, v in zip(self.alpha, self.vn)]
        self.delta = d + inc
        self.step_count += 1

    def record(self) -> Record:
        ar, P, d = self.ar, self.params, self.delta
        excess = sum(self.fn.row_loss(a, v, d, *P) for a, v in zip(self.alpha, self.vn))
        s_err = ar.sqrt(self.params[2] * self.fn.s_err2(self.alpha[0], self.vn[0], d, *P))
        # (a - 1) * (a - 1), not ** 2: Arb's power of a ball containing 0 is nan (alpha -> 1 exactly,
        # K = D), its product is not; in float64 and mpmath both are the same correctly rounded square.
        w_err = ar.sqrt(sum((a - 1) * (a - 1) * v for a, v in zip(self.alpha, self.vn)))
        num = sum(a * v for a, v in zip(self.alpha, self.vn))
        den = ar.sqrt(sum(a * a * v for a, v in zip(self.alpha, self.vn))) * ar.sqrt(sum(self.vn))
        cos = num / den if den != 0 else ar.num(0)
        p = self.fn.p(self.alpha[0], self.vn[0], d, *P)
        zero = ar.num(0)
        return Record(self.step_count, excess + self.noise_loss, excess, s_err, w_err, zero, cos,
                      list(self.alpha), [zero] * self.s.M, [p] * self.s.N)


def iterate_reduced(s: Setting, steps: int, ar: Arith, checkpoints=None, alpha0=None, delta0=0,
                    progress=None) -> Trajectory:
    """Run ``steps`` GD steps of the reduced recursion, recording at ``checkpoints``.

    In float64, overflow / NaN raise NumericalTrouble naming the step (verify.engines.guard).
    ``progress(step)``, if given, is called every PROGRESS_EVERY steps and at every checkpoint.
    """
    cps = sorted(set(checkpoints or checkpoint_steps(steps)))
    traj = Trajectory("reduced", ar.name, ar.dps if ar.name == "mpmath" else None)
    f64 = ar.name == "float64"
    st = None
    describe = lambda: {"alpha": st.alpha, "delta": st.delta}  # noqa: E731
    with ar.context(), float64_boundary(s, "reduced", f64, describe) as b:
        st = ReducedState(s, ar, alpha0, delta0)
        for target in cps:
            while st.step_count < target:
                b.at(st.step_count + 1, "the GD update of (alpha, delta)")
                st.step()
                if f64:
                    b.finite(st.step_count, alpha=st.alpha, delta=st.delta)
                if progress is not None and st.step_count % PROGRESS_EVERY == 0:
                    progress(st.step_count)
            b.at(st.step_count, "the recorded quantities (loss, s_err, w_err, ...)")
            rec = st.record()
            if f64:
                b.finite(st.step_count, excess_loss=float(rec.excess_loss), s_err=float(rec.s_err),
                         support_mass=float(rec.support_mass[0]), alpha=rec.alpha, delta=st.delta)
            traj.records.append(rec)
            if progress is not None:
                progress(st.step_count)
    return traj
