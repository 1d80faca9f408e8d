"""Fast float64 engine: the reduced recursion compiled with numba, a batch of regimes at once.

For long horizons (10^7 steps and more). The step and the observables are generated from the SymPy
expressions (verify.derive.reduced) as math-module source (verify.derive.codegen.python_source) and
compiled together with a small driver loop; nothing is retyped. Each regime of a batch is a row of
parameter arrays; regimes are grouped by (sigma, case of K, M), one compiled kernel per group.
Checkpoints (default log-spaced) of every recorded quantity can be saved to disk (.npz, atomic).

Float64 accuracy over a horizon is not assumed here: verify.engines.precision states what it can
carry and cross-checks against mpmath.
"""
from __future__ import annotations

import io
import json
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import sympy as sp

from ..run.atomic import write_bytes_atomic
from ..derive import codegen
from ..derive.reduced import case_of, reduced, reduced_step_exprs
from ..model.symbols import lam
from ..errors import InvalidParameter, NumericalTrouble
from ..model.setting import Setting
from ..model.sigmas import Sigma
from ..model.validation import check_int
from .reduced import ARGS, require_reducible
from .trajectory import Record, Trajectory, checkpoint_steps
from .guard import advice
from .precision import FLOAT64_DIGITS, carried_digits, require_horizon

_LAM = sp.Symbol("lam_", positive=True)          # 'lambda' is a Python keyword
_ARGS = tuple(_LAM if a is lam else a for a in ARGS)
_ARGNAMES = ", ".join(str(a) for a in _ARGS)
_CALL = "a, vn_m, d, P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8]"

# The driver: the batch loop (regimes x checkpoints x steps). Per step, as in ReducedState.step:
# alpha_m' = step(alpha_m, delta), delta' = delta + sum_m inc_m (all rows read the old delta).
# Per record, as in ReducedState.record (the observables are the generated row_loss, s_err2, p).
_DRIVER = f"""
def run_batch(alpha, delta, vn, P_all, noise, cps, loss, excess, s_err, w_err, cos, alpha_out, pmass):
    R, M = alpha.shape
    for r in range(R):
        P = P_all[r]
        d = delta[r]
        t = 0
        for ci in range(cps.shape[0]):
            while t < cps[ci]:
                inc = 0.0
                for m in range(M):
                    a = alpha[r, m]
                    vn_m = vn[r, m]
                    an, im = step_pair({_CALL})
                    alpha[r, m] = an
                    inc += im
                d = d + inc
                t += 1
            ex = 0.0
            w2 = 0.0
            num = 0.0
            den2 = 0.0
            vs = 0.0
            for m in range(M):
                a = alpha[r, m]
                vn_m = vn[r, m]
                ex += row_loss({_CALL})
                w2 += (a - 1.0) ** 2 * vn_m
                num += a * vn_m
                den2 += a * a * vn_m
                vs += vn_m
                alpha_out[r, ci, m] = a
            a = alpha[r, 0]
            vn_m = vn[r, 0]
            excess[r, ci] = ex
            loss[r, ci] = ex + noise[r]
            s_err[r, ci] = math.sqrt(P[2] * s_err2({_CALL}))
            w_err[r, ci] = math.sqrt(w2)
            den = math.sqrt(den2) * math.sqrt(vs)
            cos[r, ci] = num / den if den != 0.0 else 0.0
            pmass[r, ci] = p_mass({_CALL})
        delta[r] = d
"""


@lru_cache(maxsize=None)
def compiled_kernel(sigma: Sigma, case: str):
    """numba-compiled batch driver for one sigma and case of K (compiled once per process)."""
    import numba
    red = reduced(sigma, case)
    a_next, inc = reduced_step_exprs(sigma, case)
    sub = lambda e: sp.sympify(e).subs(lam, _LAM)  # noqa: E731
    srcs = [codegen.python_source("step_pair", _ARGS, sp.Tuple(sub(a_next), sub(inc))),
            codegen.python_source("row_loss", _ARGS, sub(red.r)),
            codegen.python_source("s_err2", _ARGS, sub(red.cols["s_err2"])),
            codegen.python_source("p_mass", _ARGS, sub(red.cols["p"]))]
    ns: dict = {"math": math}
    for src in srcs:
        exec(compile(src, f"<generated {sigma.spec()} {case}>", "exec"), ns)  # noqa: S102 - generated from SymPy
        name = src.split("(")[0].split()[-1]
        ns[name] = numba.njit(cache=False, fastmath=False)(ns[name])
    exec(compile(_DRIVER, "<fast driver>", "exec"), ns)  # noqa: S102
    return numba.njit(cache=False, fastmath=False)(ns["run_batch"])


FIELDS = ("loss", "excess_loss", "s_err", "w_err", "cos_wv", "support_mass")


@dataclass
class FastResult:
    """Checkpoints of a batch: ``data[name]`` has shape (regimes, checkpoints) (alpha: (.., .., M_max)).

    support_mass is the mass of one column: on the reduced set every column of S has the same mass.
    wp_norm and offspan are 0 identically on the reduced set (not stored).
    """

    steps: np.ndarray
    data: dict
    configs: list
    notes: list = field(default_factory=list)

    def trajectory(self, i: int) -> Trajectory:
        """Regime ``i`` as a Trajectory of float Records (same shape as verify.engines.iterate's)."""
        cfg = self.configs[i]
        M, N = cfg["M"], cfg["N"]
        tr = Trajectory("reduced", "float64-fast", None, notes=list(self.notes))
        g = lambda k, c: float(self.data[k][i, c])  # noqa: E731
        for c, t in enumerate(self.steps):
            tr.records.append(Record(int(t), g("loss", c), g("excess_loss", c), g("s_err", c), g("w_err", c), 0.0,
                                     g("cos_wv", c), [float(x) for x in self.data["alpha"][i, c, :M]], [0.0] * M,
                                     [g("support_mass", c)] * N))
        return tr

    def save(self, path: str) -> str:
        """Write every checkpoint to ``path`` (.npz) atomically (temporary file, then os.replace)."""
        buf = io.BytesIO()
        np.savez(buf, steps=self.steps, **self.data,
                 meta=np.array(json.dumps({"configs": self.configs, "notes": self.notes,
                                           "arithmetic": "float64", "engine": "reduced (numba)",
                                           "support_mass": "mass of each column (all equal)"})))
        write_bytes_atomic(path, buf.getvalue())
        return os.fspath(path)


def load(path: str) -> FastResult:
    """Read a file written by :meth:`FastResult.save`."""
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        data = {k: z[k] for k in z.files if k not in ("steps", "meta")}
        return FastResult(z["steps"], data, meta["configs"], meta["notes"])


def _params(s: Setting):
    f = float
    return [f(s.D), f(s.K), f(s.N), f(s.law.var), f(s.loss_scale), f(s.eta_v), f(s.eta_kq), f(s.p_lambda), f(s.beta)]


def _require_finite(settings, cps, named: dict) -> None:
    """NumericalTrouble at the first checkpoint where a regime's record is not finite: numba float64
    carries on with inf / nan silently, so the step lies between that checkpoint and the one before.
    ``named``: quantity -> array (regimes, checkpoints[, rows]) of one group of ``settings``."""
    first = None
    for k, arr in named.items():
        bad = ~np.isfinite(arr)
        if bad.ndim == 3:
            bad = bad.any(axis=2)
        for r, c in np.argwhere(bad):
            if first is None or c < first[1]:
                first = (int(r), int(c), k)
            break
    if first is None:
        return
    r, c, k = first
    after = int(cps[c - 1]) if c > 0 else 0
    raise NumericalTrouble(int(cps[c]), k, f"became inf or NaN in float64 (numba) after step {after}",
                           advice(settings[r]))


def iterate_fast(settings, steps: int, checkpoints=None, log_points: int = 40, digits: float | None = None) -> FastResult:
    """Run the reduced recursion in float64 (numba) for every setting in ``settings`` (one or a list).

    Checkpoints: ``checkpoints`` (steps) if given, else 0, ``steps`` and ``log_points`` log-spaced steps.
    ``digits``: the significant digits the caller needs; PrecisionError before running if float64
    cannot carry them over ``steps`` (verify.engines.precision.require_horizon).
    """
    if digits is not None:
        require_horizon("float64", steps, digits)
    if isinstance(settings, Setting):
        settings = [settings]
    settings = list(settings)
    if not settings:
        raise InvalidParameter("settings", settings, "give at least one regime")
    steps = check_int("steps", steps, 0, 10**13)
    for s in settings:
        require_reducible(s)
        if s.init != "zero":
            raise InvalidParameter("init", s.init, "the fast engine starts from init = zero")
    cps = np.array(sorted(set(checkpoints or checkpoint_steps(steps, log_points=log_points))), dtype=np.int64)
    if cps[0] < 0 or cps[-1] > steps:
        raise InvalidParameter("checkpoints", [int(cps[0]), int(cps[-1])], f"must lie in 0..{steps}")
    R, C, Mx = len(settings), len(cps), max(s.M for s in settings)
    data = {k: np.zeros((R, C)) for k in FIELDS}
    data["alpha"] = np.full((R, C, Mx), np.nan)
    groups: dict = {}
    for i, s in enumerate(settings):
        groups.setdefault((s.sigma, case_of(s.K, s.D), s.M), []).append(i)
    for (sigma, case, M), idx in groups.items():
        kern = compiled_kernel(sigma, case)
        G = len(idx)
        alpha = np.zeros((G, M))
        delta = np.zeros(G)
        vn = np.array([[float(x) for x in settings[i].row_norm2()] for i in idx])
        P = np.array([_params(settings[i]) for i in idx])
        noise = np.array([float(settings[i].loss_scale * M * settings[i].N * settings[i].noise_sd ** 2 / 2)
                          for i in idx])
        out = [np.zeros((G, C)) for _ in range(6)]
        a_out = np.zeros((G, C, M))
        kern(alpha, delta, vn, P, noise, cps, out[0], out[1], out[2], out[3], out[4], a_out, out[5])
        for k, arr in zip(("loss", "excess_loss", "s_err", "w_err", "cos_wv", "support_mass"), out):
            data[k][idx] = arr
        data["alpha"][idx, :, :M] = a_out
        _require_finite([settings[i] for i in idx], cps, dict(zip(FIELDS, out)) | {"alpha": a_out})
    return FastResult(cps, data, [s.config() for s in settings],
                      ["float64 (numba), reduced recursion generated from SymPy; zero initialisation",
                       f"precision policy: about {max(carried_digits(FLOAT64_DIGITS, steps), 0):.1f} significant digits "
                       f"carried at step {steps} (verify.engines.precision)"])
