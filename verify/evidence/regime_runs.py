"""Runs of the engines as the claims and probes read them: replay commands, the fixed regimes, a float64 loop of the
exact reduced recursion, and the run-level descent hypothesis."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..derive.reduced_map import case_of
from ..engines import iterate
from ..engines.guard import advice
from ..engines.reduced_iteration import reduced_functions, require_reducible
from ..errors import NumericalTrouble
from ..model.convention import setting
from ..model.flags import setting_command
from ..model.hypotheses import hypothesis

def replay_run(setting, steps: int, engine: str = "reduced", arithmetic: str = "float64", json_out=True) -> str:
    """A ``verify run`` command line that rebuilds ``setting`` and runs ``steps`` steps
    (verify.model.flags: presets as ``--preset P --K K``, other supports and V* through mktemp JSON files)."""
    return setting_command("run", setting, "--steps", str(steps), "--engine", engine, "--arithmetic", arithmetic,
                           *(["--json"] if json_out else []))


def regime(preset: str, D: int, K: int, **kw):
    """A validated Setting from a preset (the claims' fixed regimes), in the active convention
    (verify.model.convention: the regime's explicit keywords win)."""
    return setting(D=D, K=K, preset=preset, **kw)


def regime_label(s) -> str:
    c = s.config()
    lab = f"{c['preset'] or 'supports'} D={s.D} K={s.K} N={s.N} M={s.M} d={s.d} sigma={s.sigma.spec()} eta={c['eta_v']}"
    return lab + f" ||V*||^2={c['vstar_norm2']}" + ("" if s.wp_trainable else " W_P frozen")


def convention(s) -> dict:
    """The options every regime of a claim shares (the first regime's config, minus dimensions)."""
    c = s.config()
    return {k: c[k] for k in ("sigma", "law", "law_mean", "law_var", "noise_sd", "loss", "p_kind", "p_structure",
                              "p_lambda", "init", "relu_at_zero")} | {"eta_kq": "eta_v" if c["eta_kq"] == c["eta_v"]
                                                                           else c["eta_kq"]}


@dataclass
class Series:
    """Float64 observables of the reduced recursion at chosen steps (arrays indexed like ``steps``)."""

    steps: np.ndarray
    alpha: np.ndarray        # (len(steps), M)
    delta: np.ndarray
    excess: np.ndarray
    s_err: np.ndarray
    w_err: np.ndarray
    mass: np.ndarray


def reduced_float64(s, steps: int, checkpoints=None) -> Series:
    """Iterate the exact reduced recursion (verify.derive.reduced_map) in float64 with the generated
    math-module step functions (about 1 microsecond per step and row), recording at ``checkpoints``
    (default: every step). The same step as verify.engines.reduced_iteration.ReducedState.step."""
    require_reducible(s)
    fn = reduced_functions(s.sigma, case_of(s.K, s.D), "math")
    P = tuple(float(x) for x in (s.D, s.K, s.N, s.law.var, s.loss_scale, s.eta_v, s.eta_kq, s.p_lambda, s.beta))
    vns = [float(x) for x in s.row_norm2()]
    fa, fi, fl, fs, fp = fn.step_alpha, fn.step_delta_inc, fn.row_loss, fn.s_err2, fn.p
    cps = np.arange(steps + 1) if checkpoints is None else np.array(sorted(set(int(c) for c in checkpoints)))
    n = len(cps)
    out_a, out_d = np.zeros((n, s.M)), np.zeros(n)
    out_l, out_s, out_w, out_p = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    _loop(cps, s, fa, fi, fl, fs, fp, P, vns, out_a, out_d, out_l, out_s, out_w, out_p)
    return Series(cps, out_a, out_d, out_l, out_s, out_w, out_p)


def _loop(cps, s, fa, fi, fl, fs, fp, P, vns, out_a, out_d, out_l, out_s, out_w, out_p):
    """The float64 loop; leaving the float range raises NumericalTrouble (a PrecisionError) naming the step."""
    a, d, t = [0.0] * s.M, 0.0, 0
    N = P[2]
    recording = False
    try:
        for i, target in enumerate(cps):
            recording = False
            if s.M == 1:
                a0, v0 = a[0], vns[0]
                while t < target:
                    a0, d = fa(a0, v0, d, *P), d + fi(a0, v0, d, *P)
                    t += 1
                a = [a0]
            else:
                while t < target:
                    inc = sum(fi(x, v, d, *P) for x, v in zip(a, vns))
                    a = [fa(x, v, d, *P) for x, v in zip(a, vns)]
                    d += inc
                    t += 1
            recording = True
            out_a[i], out_d[i] = a, d
            out_l[i] = sum(fl(x, v, d, *P) for x, v in zip(a, vns))
            out_s[i] = math.sqrt(N * fs(a[0], vns[0], d, *P))
            out_w[i] = math.sqrt(sum((x - 1) ** 2 * v for x, v in zip(a, vns)))
            out_p[i] = fp(a[0], vns[0], d, *P)
            if not math.isfinite(out_l[i]):
                raise OverflowError(f"loss {out_l[i]}")
    except (OverflowError, ZeroDivisionError, ValueError) as exc:
        what = "the recorded quantities (loss, s_err, w_err)" if recording else "the GD update of (alpha, delta)"
        raise NumericalTrouble(t if recording else t + 1, what, f"left the float64 range ({exc})",
                               advice(s)) from None


def fmt(x, digits: int = 6) -> str:
    return f"{float(x):.{digits}g}"


def observe(s, steps: int, checkpoints=None) -> Series:
    """reduced_float64 when the reduced recursion is exact for ``s``, else the full-matrix engine
    (float64) mapped onto the same Series (alpha per row, excess loss, s_err, w_err, mass of column 0)."""
    if s.reducible()[0]:
        return reduced_float64(s, steps, checkpoints)
    cps = list(range(steps + 1)) if checkpoints is None else sorted(set(int(c) for c in checkpoints))
    tr = iterate(s, steps, "full", "float64", checkpoints=cps)
    f = lambda name: np.array([float(x) for x in tr.series(name)])  # noqa: E731
    return Series(np.array(tr.steps()), np.array([[float(a) for a in r.alpha] for r in tr.records]),
                  np.full(len(cps), np.nan), f("excess_loss"), f("s_err"), f("w_err"),
                  np.array([float(r.support_mass[0]) for r in tr.records]))


def first_increase_in(L) -> int | None:
    """First t with L(t) > L(t-1) beyond float64 rounding, or None (L indexed by step from 0).

    Rounding allowance: 1e-12 relative to L(t-1) plus 1e-13 L(0) absolute (float64 sums of O(L(0))
    terms lose about 1e-16 L(0) each; near L = 0 only the absolute part matters)."""
    L = np.asarray(L, float)
    with np.errstate(over="ignore", invalid="ignore"):
        tol = 1e-12 * L[:-1] + 1e-13 * L[0]
        # a loss that leaves the float range (inf / nan) after a finite one counts as an increase
        up = (L[1:] > L[:-1] + tol) | (~np.isfinite(L[1:]) & np.isfinite(L[:-1]))
    bad = np.nonzero(up)[0]
    return int(bad[0]) + 1 if len(bad) else None


DESCENT = hypothesis("descent")


def descent_precondition(setting, L) -> tuple[bool, str, int | None]:
    """The run-level hypothesis ``DESCENT`` of lemma-C.2 and early-alignment for a loss series L(0..T).

    For sigma = identity the step-size hypothesis is a proof condition (verify.derive.stability) and
    nothing is checked here. For any other sigma no step-size condition is derived: the W_X block's
    curvature grows with alpha^2 ||v*||^2 (cubic sigma), so eta_V c_L v N <= 1 does not keep GD stable
    (fuzzing found sigma = x + x^3/10, D = K = 1, ||V*|| = 3, eta = 1/20 diverging with alpha(5) < 0).
    The hypothesis is then that the run itself is a descent run; (ok, why-not, first increase)."""
    if setting.sigma.is_identity:
        return True, "", None
    bad = first_increase_in(L)
    if bad is None:
        return True, "", None
    return False, (f"the run leaves the descent regime (sigma = {setting.sigma.spec()}): "
                   f"L({bad}) = {float(L[bad]):.6g} > L({bad - 1}) = {float(L[bad - 1]):.6g}"), bad
