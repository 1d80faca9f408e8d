"""``verify bench``: steps per second of every engine, their ratios, and Monte Carlo GD for comparison.

All rates are medians over repeats, measured in one process in one run (so ratios compare like with
like on the same machine load). Compilation (numba) and code generation are excluded by a warm-up.
The Monte Carlo comparison answers: how long does a user who samples X and averages the gradient
(numpy) need to get the gradient of the population loss to a given relative accuracy eps, versus
the reduced engine, which evaluates it exactly (to float64 rounding)? MC error ~ c / sqrt(n): c is
measured at n0 samples and n(eps) = n0 (err0 / eps)^2 samples are needed.
"""
from __future__ import annotations

import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

import mpmath
import numpy as np

from ..certify import atlas as A
from ..certify import region_b as RB
from ..certify.atlas import AtlasCell
from ..certify.family import FamilyIncomplete, FamilySpec, cell_bounds, certify_family
from ..certify.obligations import CertificateFailed
from ..cli.atlas import parse_member
from ..coq.kernel import kernel_bench, trapping_bench
from ..engines import iterate
from ..engines.mean_value import mean_value_step
from ..model import make_setting
from ..model.precision import arb_precision, mpmath_precision
from ..model.regimes import BENCHMARK_REGIME
from ..run import part
from ..run.atomic import write_bytes_atomic, write_json_atomic
from ..run.execute import Executor
from ..run.version import code_version
from .examples import documented_examples, examples_markdown, time_examples

REGIME = BENCHMARK_REGIME   # gcn, D = N = 64, K = 4, eta = 1/32 (verify.model.regimes: the certify part's too)
# The targets of the full-matrix engines, each a ratio to a baseline measured in the same run.
FULL_FLOAT64_TARGET = 0.5       # full float64 steps/s over the minimal JAX baseline's (D = N = 64 and 256)
FULL_ARB_TARGET = 5.0           # certified full (256 bits) over a plain mpmath loop at 30 digits (D = N = 16, 64)
FULL_ARB_RADIUS_TARGET = 1e-50  # relative radius of the certified full run after 1000 steps at D = N = 64
# verify certify's targets: (regime, the largest time allowed as a multiple of the baseline's)
CERTIFY_MAIN = "gcn D=N=64 K=4 eta=1/32"
CERTIFY_REGIMES = {CERTIFY_MAIN: (REGIME, 2.5), "gcn D=N=64 K=4 eta=1/200": (REGIME | {"eta": "1/200"}, 10)}
BASELINE_STEPS = 10**5     # steps of the plain Arb iteration the certificate's time is compared with


def rate(run, min_time: float, repeats: int, start: int = 1, max_n: int = 10**9) -> dict:
    """Median steps/s of ``run(n)`` (n steps): n doubles until one run takes >= min_time."""
    n = start
    while True:
        t = time.perf_counter()
        run(n)
        dt = time.perf_counter() - t
        if dt >= min_time or n >= max_n:
            break
        n = min(max_n, n * 2 if dt < min_time / 10 else math.ceil(n * min_time / max(dt, 1e-9) * 1.1))
    rates = [n / dt]
    for _ in range(repeats - 1):
        t = time.perf_counter()
        run(n)
        rates.append(n / (time.perf_counter() - t))
    return {"steps_per_s": statistics.median(rates), "steps": n, "repeats": repeats}


def jax_baseline(D: int, K: int = 4, eta: float = 1 / 32):
    """The minimal JAX script a user would write instead (the baseline of the full float64 engine): float64,
    jax.jit and jax.grad of the closed-form population loss for sigma = identity, gcn S*, M = d = 1, V* = 1,
    P = I (so the logits are W_KQ), column softmax, plain GD in lax.fori_loop from zero.
    Returns ``run(n)``: the excess loss after n steps."""
    import jax  # heavy: jax
    import jax.numpy as jnp  # heavy: jax
    jax.config.update("jax_enable_x64", True)
    sstar = jnp.asarray([[1 / K if (i - j) % D < K else 0.0 for j in range(D)] for i in range(D)])

    def loss(p):
        wx, wp, wkq = p
        S = jax.nn.softmax(wkq, axis=0)
        # E||W_X X S - V* X S*||^2 = ||W_X||^2 ||S||^2 - 2 <W_X, V*> <S, S*> + ||V*||^2 ||S*||^2 (X i.i.d. N(0, 1))
        fit = jnp.sum(wx**2) * jnp.sum(S**2) - 2 * jnp.sum(wx) * jnp.sum(S * sstar) + jnp.sum(sstar**2)
        return (fit + jnp.sum((wp @ S) ** 2)) / 2

    grad = jax.grad(loss)
    run = jax.jit(lambda p, n: jax.lax.fori_loop(0, n, lambda i, q: jax.tree.map(lambda x, g: x - eta * g, q, grad(q)),
                                                 p))
    p0 = (jnp.zeros((1, 1)), jnp.zeros((1, D)), jnp.zeros((D, D)))
    return lambda n: float(loss(run(p0, n)))


def mpmath_loop(D: int, K: int = 4, steps: int = 1, dps: int = 30):
    """The plain mpmath loop of the same full recursion (the baseline of the certified full engine): gcn S*,
    M = d = 1, V* = 1, P = I, zero start, every entry of W_X, W_P and W_KQ updated by hand-written loops.
    Returns the excess loss after ``steps`` steps."""
    mpf, exp = mpmath.mpf, mpmath.exp
    with mpmath_precision(dps):
        eta = mpf(1) / 32
        star = [[mpf(1) / K if (i - j) % D < K else mpf(0) for j in range(D)] for i in range(D)]
        wx, wp, W = mpf(0), [mpf(0)] * D, [[mpf(0)] * D for _ in range(D)]

        def state():
            S = [[mpf(0)] * D for _ in range(D)]
            for j in range(D):
                e = [exp(W[i][j]) for i in range(D)]
                z = sum(e)
                for i in range(D):
                    S[i][j] = e[i] / z
            nS = sum(S[i][j] * S[i][j] for i in range(D) for j in range(D))
            cS = sum(S[i][j] * star[i][j] for i in range(D) for j in range(D))
            return S, nS, cS, [sum(wp[i] * S[i][j] for i in range(D)) for j in range(D)]
        for _ in range(steps):
            S, nS, cS, b = state()
            gwp = [sum(b[j] * S[i][j] for j in range(D)) for i in range(D)]
            for j in range(D):
                g = [wx * wx * S[i][j] - wx * star[i][j] + b[j] * wp[i] for i in range(D)]
                m = sum(S[i][j] * g[i] for i in range(D))
                for i in range(D):
                    W[i][j] -= eta * S[i][j] * (g[i] - m)
            wx, wp = wx - eta * (wx * nS - cS), [wp[i] - eta * gwp[i] for i in range(D)]
        S, nS, cS, b = state()
        return (wx * wx * nS - 2 * wx * cS + sum(x * x for r in star for x in r) + sum(x * x for x in b)) / 2


def engine_sizes(quick: bool) -> dict:
    """What engine_rates measures besides the two reduced float64 engines and full float64 at D = N = 16: the
    reduced mpmath digits, the Arb bits and the full-matrix mpmath sizes D = N (one measurement each)."""
    return {"dps": (30, 100) if quick else (30, 100, 300), "bits": (128, 256, 512),
            "full_D": (16, 64) if quick else (16, 64, 256)}


# the measurements of run_bench after the engines and the full-matrix targets, one tick each: the certified radius,
# the certified full radius, the all-time certificate, the family, the atlas, the atlas query, Region B, Monte Carlo
TARGET_TICKS = 8


def measurement_count(quick: bool, dask: bool | None = None) -> int:
    """How many measurements run_bench makes (engine rates, the full-matrix baselines and targets, the targets
    after them, the kernel and the examples unless quick, and the two Dask targets unless turned off): a progress
    total, which run_bench's "measurements" (its ticks counted) must equal."""
    with_dask = dask if dask is not None else not quick
    sizes, eng = full_sizes(quick), engine_sizes(quick)
    return (3 + len(eng["dps"]) + len(eng["bits"]) + len(eng["full_D"]) + len(sizes["float64"]) + len(sizes["arb"])
            + TARGET_TICKS + (2 if with_dask else 0) + (0 if quick else 2 + len(documented_examples())))


def engine_rates(quick: bool, tick=None) -> dict:
    """Steps/s of every engine on the benchmark regime (full-matrix also at D = N = 16 and 256);
    ``tick(name)`` is called after each measurement."""
    from ..engines.arb import iterate_certified  # heavy: loads flint,sympy
    from ..engines.fast import iterate_fast  # heavy: loads flint,sympy
    s = make_setting(**REGIME)
    mt, rep = (0.15, 3) if quick else (1.0, 5)
    out = {}

    def put(key, value):
        out[key] = value
        if tick is not None:
            tick(key)
    iterate_fast(s, 10)                                    # compile once
    put("reduced-float64-numba", rate(lambda n: iterate_fast(s, n, checkpoints=[n]), mt, rep, start=10**5))
    put("reduced-float64-python", rate(lambda n: iterate(s, n, "reduced", "float64", None, [n]), mt, rep, 100))
    sizes = engine_sizes(quick)
    for dps in sizes["dps"]:
        put(f"reduced-mpmath-dps{dps}", rate(lambda n, d=dps: iterate(s, n, "reduced", "mpmath", d, [n]), mt, rep,
                                             100))
    for bits in sizes["bits"]:
        iterate_certified(s, 2, bits, [2])
        put(f"certified-arb{bits}", rate(lambda n, b=bits: iterate_certified(s, n, b, [n]), mt, rep, 100))
    for D in sizes["full_D"]:
        sd = make_setting(**(REGIME | {"D": D}))
        if D == 16:        # (D = N = 64 and 256: beside their baseline, in full_targets)
            iterate(sd, 2, "full", "float64", None, [2])          # JAX compiles once
            put(f"full-float64-D{D}", rate(lambda n, x=sd: iterate(x, n, "full", "float64", None, [n]), mt, rep, 1))
        # a full-matrix mpmath step is O(D N) mpmath operations, about a second at D = N = 256: there one
        # repeat of the smallest n
        slow = D >= 256
        iterate(sd, 1, "full", "mpmath", 30, [1])                 # code generation once
        put(f"full-mpmath-D{D}", rate(lambda n, x=sd: iterate(x, n, "full", "mpmath", 30, [n]),
                                      0.0 if slow else mt, 1 if slow else rep, 1, max_n=1 if slow else 10**9))
    return out


def full_sizes(quick: bool) -> dict:
    """The sizes D = N of the full-matrix targets: {"float64": [...], "arb": [...]}."""
    return {"float64": [64] if quick else [64, 256], "arb": [16] if quick else [16, 64]}


def full_targets(quick: bool, tick=None) -> dict:
    """Full float64 against the minimal JAX baseline, certified full (256 bits) against the plain mpmath loop
    (30 digits), each pair on the same regime in this run; the ratios are "not measured" without JAX.
    Also the value both reach (a check that they run the same recursion)."""
    from ..engines import fulljax, iterate  # heavy: loads flint,sympy
    mt, rep = (0.15, 3) if quick else (1.0, 5)
    tick = tick or (lambda name: None)
    out = {"engines": {}, "ratios": {}, "same_value": {}}
    for D in full_sizes(quick)["float64"]:
        s = make_setting(**(REGIME | {"D": D}))
        iterate(s, 2, "full", "float64", None, [2])                # compile once
        out["engines"][f"full-float64-D{D}"] = rate(lambda n: iterate(s, n, "full", "float64", None, [n]), mt, rep, 1)
        key = f"full float64 / JAX baseline (D=N={D})"
        if fulljax.available():
            base = jax_baseline(D)
            base(2)
            out["engines"][f"jax-baseline-D{D}"] = rate(base, mt, rep, 1)
            out["ratios"][key] = (out["engines"][f"full-float64-D{D}"]["steps_per_s"]
                                  / out["engines"][f"jax-baseline-D{D}"]["steps_per_s"])
            out["same_value"][f"D={D}, 300 steps"] = {"engine": float(iterate(s, 300, "full", "float64", None,
                                                                            [300]).final.excess_loss),
                                                      "baseline": base(300)}
        else:
            out["ratios"][key] = "not measured: JAX is not installed (pip install jax)"
        tick(key)
    for D in full_sizes(quick)["arb"]:
        s = make_setting(**(REGIME | {"D": D}))
        iterate(s, 2, "full", "arb", checkpoints=[2], bits=256)
        fast = rate(lambda n: iterate(s, n, "full", "arb", checkpoints=[n], bits=256), mt, rep, 1)
        slow = rate(lambda n: mpmath_loop(D, steps=n), mt, 1 if D >= 64 else rep, 1)
        out["engines"] |= {f"full-arb256-D{D}": fast, f"mpmath-loop-dps30-D{D}": slow}
        key = f"certified full arb256 / mpmath loop dps30 (D=N={D})"
        out["ratios"][key] = fast["steps_per_s"] / slow["steps_per_s"]
        with mpmath_precision(40):
            out["same_value"][f"D={D}, 3 steps"] = {
                "certified": iterate(s, 3, "full", "arb", checkpoints=[3], bits=256).final.excess_loss.str(30),
                "mpmath_loop": mpmath.nstr(mpmath_loop(D, steps=3), 25)}
        tick(key)
    out["targets"] = {"full_float64_over_jax": FULL_FLOAT64_TARGET, "full_arb_over_mpmath_loop": FULL_ARB_TARGET}
    out["met"] = {k: (v >= (FULL_FLOAT64_TARGET if "float64" in k else FULL_ARB_TARGET)) if not isinstance(v, str)
                  else None for k, v in out["ratios"].items()}
    return out


def certified_full_radius(quick: bool) -> dict:
    """The largest relative radius of the recorded quantities (and of the state) after 1000 certified full
    steps at 256 bits on the benchmark regime (quick: 100 steps at D = N = 16)."""
    from ..engines.fullarb import iterate_certified_full, relative_radius  # heavy: loads flint,sympy
    D, steps = (16, 100) if quick else (64, 1000)
    t = time.perf_counter()
    tr = iterate_certified_full(make_setting(**(REGIME | {"D": D})), steps, 256, [steps])
    rel = relative_radius(tr.final)
    return {"D": D, "steps": steps, "bits": 256, "max_relative_radius": rel, "max_state_radius": tr.state_radii[-1],
            "seconds": time.perf_counter() - t, "target": FULL_ARB_RADIUS_TARGET, "met": rel <= FULL_ARB_RADIUS_TARGET}


def ratios(r: dict) -> dict:
    g = lambda k: r[k]["steps_per_s"] if k in r else None  # noqa: E731
    pairs = {"reduced/full float64 (D=N=64)": ("reduced-float64-python", "full-float64-D64"),
             "reduced/full mpmath dps30 (D=N=64)": ("reduced-mpmath-dps30", "full-mpmath-D64"),
             "reduced numba/full float64 (D=N=64)": ("reduced-float64-numba", "full-float64-D64"),
             "numba/python reduced float64": ("reduced-float64-numba", "reduced-float64-python"),
             "reduced mpmath dps30 / certified arb256": ("reduced-mpmath-dps30", "certified-arb256"),
             "numba float64 / certified arb256": ("reduced-float64-numba", "certified-arb256")}
    return {k: g(a) / g(b) for k, (a, b) in pairs.items() if g(a) and g(b)}


def certified_radius(steps: int) -> dict:
    """Largest state radius after ``steps`` certified steps at 256 bits, and the wall time."""
    from ..engines.arb import iterate_certified  # heavy: loads flint,sympy
    t = time.perf_counter()
    tr = iterate_certified(make_setting(**REGIME), steps, 256, [steps])
    return {"steps": steps, "bits": 256, "max_state_radius": tr.state_radii[-1],
            "seconds": time.perf_counter() - t}


def arb_baseline_seconds(regime: dict, steps: int = BASELINE_STEPS, bits: int = 128) -> float:
    """Seconds for a plain ``steps``-step Arb mean-value iteration of the reduced map (alpha, delta) of
    ``regime`` (one row, as every row shares alpha): B' = F(c) + J(B) [-r, r], re-centred every step. The
    step and its Jacobian are the generated ones (verify.engines.arb.step_functions), stepped by the one
    mean-value step (verify.engines.mean_value) without the certificate's machinery (no sensitivities, no
    region), as the yardstick of :func:`certificate_targets`."""
    from flint import arb  # heavy: flint
    from ..derive.reduced_map import case_of  # heavy: loads flint,sympy
    from ..engines.arb import ArbArith, step_functions  # heavy: loads flint,sympy
    s = make_setting(**regime)
    fn, ar = step_functions(s.sigma, case_of(s.K, s.D)), ArbArith(bits)

    def terms(B):
        a1, inc = fn.centre(c[0], vn, c[1], *P)
        jaa, jad, jia, jid = fn.jac(B[0], vn, B[1], *P)
        return [[a1, (jaa, 0), (jad, 1)], [c[1], inc, (jia, 0), (1 + jid, 1)]]

    def lost():
        return ValueError("the baseline iteration lost its enclosure")
    t = time.perf_counter()
    with arb_precision(bits):
        P = [ar.num(x) for x in (s.D, s.K, s.N, s.law.var, s.loss_scale, s.eta_v, s.eta_kq, s.p_lambda, s.beta)]
        vn = ar.num(s.vstar_norm2())
        c, r = [arb(0), arb(0)], [arb(0), arb(0)]
        for _ in range(steps):
            c, r = mean_value_step(c, r, terms, lost)
    return time.perf_counter() - t


def certificate_targets(regimes: dict | None = None, baselines: int = 2) -> dict:
    """The all-time certificate (verify certify) of each regime of ``regimes`` (default CERTIFY_REGIMES), timed
    beside a plain BASELINE_STEPS-step Arb mean-value iteration of the same map (:func:`arb_baseline_seconds`,
    measured in this run, the fastest of ``baselines`` runs): the ratio and its target, the phases, and the
    relative widths (hi - lo)/lo of the three quantities at T = 10^6, 10^9, 10^12 (shrinking as T grows), and
    the time of one evaluation at T = 10^12 and 10^99 (no step loop: it does not grow with T). The SymPy
    derivations are loaded first (they are cached by code version, verify.run.cache), as a warm-up like the
    baseline's code generation."""
    from ..certify.formulas import arb_functions  # heavy: loads flint,sympy
    regimes = regimes or CERTIFY_REGIMES
    arb_functions()
    out = {}
    for label, (regime, target) in regimes.items():
        base = min(arb_baseline_seconds(regime) for _ in range(baselines))     # the faster (machine load)
        out[label] = _timed_certificate(regime) | {"baseline_seconds": base, "baseline_steps": BASELINE_STEPS}
        out[label]["ratio"] = out[label]["seconds"] / base
        out[label]["target_ratio"] = target
        out[label]["met"] = bool(out[label]["ratio"] <= target and out[label]["met"])
    return out


def _timed_certificate(regime: dict) -> dict:

    from ..certify import certify  # heavy: loads flint,sympy
    s = make_setting(**regime)
    t = time.perf_counter()
    cert = certify(s)
    seconds = time.perf_counter() - t
    widths = {}
    for T in (10**6, 10**9, 10**12):
        b = cert.bounds_json(T)
        widths[f"{T:.0e}"] = {q: float((Fraction(b[q][1]) - Fraction(b[q][0])) / Fraction(b[q][0]))
                              for q in ("excess_loss", "s_err", "w_err")}
    evals = {}
    for T in (10**12, 10**99):
        t = time.perf_counter()
        cert.bounds_json(T)
        evals[f"{T:.0e}"] = time.perf_counter() - t
    w12 = widths["1e+12"]
    return {"regime": regime, "seconds": seconds, "phases": {k: round(v, 3) for k, v in cert.seconds.items()},
            "T0": cert.T0, "u0": cert.knobs["u0"], "C": cert.knobs["C"], "relative_width": widths,
            "eval_seconds": evals, "constants": cert.constants,
            "targets": {"relative_width_at_1e12_max": 0.05},
            "met": bool(max(w12.values()) <= 0.05 and all(widths["1e+09"][q] > w12[q] for q in w12))}


FAMILY_TARGETS = {"seconds_max": 600, "relative_width_at_1e12_max": 0.10, "query_seconds_max": 1.0}


def timed_recheck(save, filename: str, module: str, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    """A result saved by ``save(path)`` as ``filename`` in a temporary folder and given to the independent re-checker
    ``python -m MODULE PATH ARGS``: the re-check's wall seconds and its completed process (output captured)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, filename)
        save(path)
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", module, path, *args], capture_output=True, text=True)
        return time.perf_counter() - t, done


def recheck_timing(fc, workers: int = 2) -> dict:
    """The independent re-check of a family certificate's saved file beside its certification: ``python -m
    recheck.certificates FILE --workers N`` in a fresh interpreter (its cells on N Dask processes), timed; met
    when it verifies the file and takes no longer than the certification took (issue 29: a re-check must not be
    slower than the certification it checks)."""

    from ..certify.files import family_file, save  # heavy: loads flint,sympy
    seconds, r = timed_recheck(lambda path: save(family_file(fc, [10**12], []), path), "family.json", "recheck",
                               "--workers", str(workers))
    verified = r.returncode == 0 and "certificate verified" in r.stdout
    return {"cells": len(fc.cells), "workers": workers, "certify_seconds": round(fc.seconds, 2),
            "recheck_seconds": round(seconds, 2), "verified": verified,
            "failure": "" if verified else (r.stdout.strip().splitlines() or [r.stderr.strip()])[-1],
            "met": verified and seconds <= fc.seconds}


def family_targets(quick: bool) -> dict:
    """verify certify for families: (1) the benchmark family (sts, K = 4, D = 8..512, eta in [1/16, 1/8],
    ||V*|| = 1) on a 2-worker LocalCluster, stopped at the time target (600 s) and reported as met or with the
    cells done by then (not run when ``quick``: the bench part of ``verify all`` runs inside a worker); a completed
    one is saved to verify.certify.certificate_records.bench_family_path(), where the claims read it once it re-checks; (2) on the
    ci family (verify.certify.certificate_records.FAMILIES, cached), the time of
    one member query (in this process from the certificate and from its saved file, and as a ``verify certify
    --family ... --query`` command), the saved file's bytes (and per cell: the file less its part shared by every
    cell, over the cell count) and the members' relative widths (hi - lo)/lo at T = 10^12."""

    from ..certify.files import family_file, load_family, save  # heavy: loads flint,sympy
    from ..certify.certificate_records import FAMILY_OPTIONS, TARGET_FAMILY, bench_family_path, profile_family  # heavy: loads flint,sympy
    spec = FamilySpec.of(FAMILY_OPTIONS, TARGET_FAMILY)
    t = time.perf_counter()
    if quick:
        target = {"completed": False, "seconds": 0.0, "cells_done": 0, "cells_pending": None, "run": False}
    else:
        try:
            fc = certify_family(spec, workers=2, deadline=FAMILY_TARGETS["seconds_max"])
            target = {"completed": True, "seconds": time.perf_counter() - t, "cells": len(fc.cells), "run": True,
                      "entries": fc.entries(), "relative_width_at_1e12": _widest_at_1e12(fc, [
                          {"D": d, "eta": e} for d in (8, 100, 512) for e in (Fraction(1, 16), Fraction(3, 32),
                                                                              Fraction(1, 8))]),
                      "recheck": recheck_timing(fc, 2)}
            # the completed family, saved where the claims look for it (verify.certify.certificate_records.chosen_family: read
            # when the independent re-checker verifies it)
            save(family_file(fc, [10**12], []), bench_family_path())
            target["saved"] = str(bench_family_path())
        except FamilyIncomplete as exc:
            target = {"completed": False, "seconds": exc.seconds, "cells_done": exc.done,
                      "cells_pending": exc.pending, "run": True, "complete_through_D": exc.complete_through}
        except CertificateFailed as exc:
            target = {"completed": False, "seconds": time.perf_counter() - t, "cells_done": None,
                      "cells_pending": None, "run": True, "failed": str(exc)}
    small = profile_family("ci")
    rng = small.spec.range_of
    members = [{"D": d, "eta": e} for d in sorted(set(rng["D"])) for e in sorted(set(rng["eta"]))]
    members.append({"D": rng["D"][0], "eta": (rng["eta"][0] + rng["eta"][1]) / 2})
    secs = []
    for m in members:
        t = time.perf_counter()
        small.bounds(m, [10**12])
        secs.append(time.perf_counter() - t)
    widths = [_widest_at_1e12(small, members)] + ([target["relative_width_at_1e12"]] if target.get("completed")
                                                  else [])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "family.json")
        data = family_file(small, [10**12], [])
        save(data, path)
        save(data | {"cells": []}, path + ".shared")
        size = {"file_bytes": os.path.getsize(path), "file_bytes_per_cell": (os.path.getsize(path) - os.path.getsize(
            path + ".shared")) / len(small.cells)}      # the cells' part: what grows with the family
        m = members[-1]
        t = time.perf_counter()
        load_family(path).bounds(m, [10**6, 10**12])
        from_file = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from verify.cli import main; main()", "certify", "--family", path, "--query",
                        f"D={m['D']},eta={m['eta']}", "--at", "1e6,1e12", "--json"], capture_output=True, check=True)
        cli = time.perf_counter() - t
    return {"target_family": {"spec": spec.as_dict(), **target}, "query_family": small.spec.as_dict(),
            "query_seconds": max(secs), "query_file_seconds": from_file, "query_command_seconds": cli, **size,
            "cells": len(small.cells), "relative_width_at_1e12": max(widths),
            "targets": FAMILY_TARGETS,
            "met": {"seconds": target["completed"], "relative_width": max(widths) <= FAMILY_TARGETS[
                "relative_width_at_1e12_max"], "query": max(secs) <= FAMILY_TARGETS["query_seconds_max"]}}


# Region A of the atlas (issue 27): every D >= 2K and D -> infinity, x in [1/64, 1], kappa in [1/256, 4]
ATLAS_REGION_A = {"rho": ("0", "1/2"), "x": ("1/64", "1"), "kappa": ("1/256", "4")}
ATLAS_TARGETS = {"seconds_max": 3600, "certified_fraction_min": 1.0, "relative_width_at_1e12_max": 0.01}
# a small box that closes as one cell (the bench family's kappa and x at D = 16 K): atlas_targets(False, ATLAS_SMALL)
ATLAS_SMALL = {"rho": ("1/16", "1/16"), "x": ("1/64", "1/32"), "kappa": ("1/4", "1/4")}


def atlas_targets(quick: bool, box: dict | None = None, depth: int = 2, workers: int = 2) -> dict:
    """verify atlas on region A (ATLAS_REGION_A, stopped at its time target) or on ``box``, on a LocalCluster:
    seconds, cells, the certified fraction (of the cells and of the box's volume, rho's extent counted as is), the
    largest relative width (hi - lo)/lo at T = 10^12 of the certified cells' centre members, and the independent
    re-check's seconds on the saved atlas (python -m recheck.atlas). Not run when ``quick`` without
    a box (the bench part of verify all runs inside a Dask worker)."""
    if quick and box is None:
        return {"run": False, "box": ATLAS_REGION_A, "targets": ATLAS_TARGETS}

    spec = box or ATLAS_REGION_A
    rng = {n: (Fraction(lo), Fraction(hi)) for n, (lo, hi) in spec.items()}
    t = time.perf_counter()
    cells = A.run_atlas(A.seed_cells(rng), depth=depth, workers=workers,
                        deadline=None if box else ATLAS_TARGETS["seconds_max"])
    seconds = time.perf_counter() - t
    data = A.atlas_file(rng, cells, knobs=A.atlas_knobs(), depth=depth, seconds=seconds)
    vol = lambda b: math.prod(max(Fraction(hi) - Fraction(lo), Fraction(0)) for lo, hi in b.values())  # noqa: E731
    whole = vol({n: spec[n] for n in spec})
    certified = [c for c in data["cells"] if c["status"] == "certified"]
    frac_volume = (float(sum(vol(c["box"]) for c in certified) / whole) if whole else
                   float(len(certified) == len(cells)))
    width = max((_atlas_width(c, data) for c in certified), default=None)
    recheck, rc = timed_recheck(lambda path: A.save_atlas(data, path), "atlas.json", "recheck.atlas")
    return {"box": {n: list(v) for n, v in spec.items()}, "depth": depth, "workers": workers,
            "seconds": seconds, "cells": len(cells), "counts": data["counts"],
            "certified_fraction": len(certified) / len(cells), "certified_volume_fraction": frac_volume,
            "relative_width_at_1e12": width, "recheck_seconds": recheck, "recheck_passed": rc.returncode == 0,
            "recheck_output": rc.stdout.strip().splitlines()[-1:] if rc.stdout else [],
            "targets": ATLAS_TARGETS, "region_a": box is None, "run": True}


# Region B of the atlas issue (Lemma C.2's large steps: rho in [1/8, 7/8], x from min(1, r) to 1.9, kappa in [1/256, 4]):
# alpha(t) > 0 decided in at least 90% of its volume, every open cell named with its reason
REGION_B_TARGETS = {"decided_fraction_min": 0.9}


def region_b_targets(quick: bool, workers: int = 2) -> dict:
    """Region B decided (verify.certify.region_b at its default depth; on a LocalCluster of ``workers``, in this
    process when ``quick``: the bench part of verify all runs inside a Dask worker): seconds, the decided volume
    fraction against its target, the open cells with their reasons, and the independent re-check's seconds on the
    saved result (python -m recheck.positivity), which must pass for the target to be met."""
    t = time.perf_counter()
    out = (RB.run_cells_here(RB.initial_cells(region="B"), depth=RB.DEPTH) if quick
           else RB.run_region_b(workers=workers))
    seconds = time.perf_counter() - t
    recheck, rc = timed_recheck(lambda path: write_json_atomic(path, out), "region-b.json", "recheck.positivity")
    frac = out["decided_fraction"]
    return {"region": out["region"], "depth": out["depth"], "workers": None if quick else workers,
            "seconds": seconds, "counts": out["counts"], "decided_fraction": frac, "measure": out["measure"],
            "open": [{"path": c["path"], "cell": c["cell"], "reason": c["reason"]} for c in out["open"]],
            "recheck_seconds": recheck, "recheck_passed": rc.returncode == 0,
            "recheck_output": (rc.stdout or rc.stderr).strip().splitlines()[-1:],
            "targets": REGION_B_TARGETS,
            "met": bool(rc.returncode == 0 and frac >= REGION_B_TARGETS["decided_fraction_min"])}


def region_b_markdown(rb: dict) -> list[str]:
    """The Region B target's lines of bench.md."""
    c = rb["counts"]
    where = "in this process" if rb["workers"] is None else f"{rb['workers']} Dask workers"
    opened = "; ".join(f"{o['path']} ({o['reason'][:80]})" for o in rb["open"][:3])
    return [f"Region B of Lemma C.2 ({', '.join(f'{n} {lo}..{hi}' for n, (lo, hi) in rb['region'].items())}; "
            f"depth {rb['depth']}, {where}): {c['certified']} cells certified, {c['open']} open, {c['refuted']} "
            f"refuted in {rb['seconds']:.1f} s; alpha > 0 decided in {rb['decided_fraction']:.1%} of the {rb['measure']}"
            f" (target >= {rb['targets']['decided_fraction_min']:.0%}: {'met' if rb['met'] else 'NOT met'}); the "
            f"independent re-check {'passed' if rb['recheck_passed'] else 'FAILED'} in {rb['recheck_seconds']:.1f} s"
            + (f"; open: {opened}" + (" ..." if len(rb["open"]) > 3 else "") if rb["open"] else "") + ".", ""]


# the query as a command, in CPU seconds, against what a user would otherwise run for the same member: the compiled
# float64 reduced recursion to T = 1e6 as a command (verify.engines.fast; the query also answers T = 1e12)
ATLAS_QUERY_TARGETS = {"cpu_ratio_to_float64_run_max": 1.0}
ATLAS_QUERY_BASELINE = ("import sys; from verify.cli.atlas import parse_member; from verify.engines.fast import "
                        "iterate_fast; iterate_fast(parse_member(sys.argv[1]), 10**6, checkpoints=[10**6])")
# members of ATLAS_SMALL's cell (sts: x = eta N/K = eta/4 at D = 16 K, kappa = ||V*||^2/(K N) = 1/4 with N = K = 4)
ATLAS_QUERY_MEMBERS = ("D=64,K=4,eta=3/32,vstar-norm=1,preset=sts", "D=48,K=3,eta=1/20,eta-kq=3/80,vstar-norm=1,"
                       "preset=sts")


def atlas_query_targets(quick: bool, path: str | None = None) -> dict:
    """A member query of a saved atlas (issue 27: about a second as a command): ``verify atlas --query MEMBER --atlas
    FILE --at 1e6,1e12 --json`` as a subprocess, its wall and CPU seconds (the child's user + system time: the
    machine may be shared), the baseline a user would run instead (ATLAS_QUERY_BASELINE: the compiled float64
    recursion of the same member to T = 1e6, as a command) and their CPU ratio (the target), and the same query in
    this process (load, re-check, bounds). The atlas is ``path`` or ATLAS_SMALL (one cell) certified here first, in
    this process. Not run when ``quick`` without ``path``."""
    if quick and path is None:
        return {"run": False, "members": list(ATLAS_QUERY_MEMBERS), "targets": ATLAS_QUERY_TARGETS}

    from ..certify import atlas_query as AQ  # heavy: loads flint

    def child_cpu(argv) -> tuple:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        rc = subprocess.run(argv, capture_output=True, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return rc.returncode, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with tempfile.TemporaryDirectory() as tmp:
        built = None
        if path is None:
            rng = {n: (Fraction(lo), Fraction(hi)) for n, (lo, hi) in ATLAS_SMALL.items()}
            t = time.perf_counter()
            cells = A.run_atlas(A.seed_cells(rng), depth=0, dask=False)
            built = time.perf_counter() - t
            path = os.path.join(tmp, "atlas.json")
            A.save_atlas(A.atlas_file(rng, cells, knobs=A.atlas_knobs(), depth=0, seconds=built), path)
        rows = []
        for m in ATLAS_QUERY_MEMBERS:
            rc, wall, cpu = child_cpu([sys.executable, "-c", "from verify.cli import main; main()", "atlas", "--query",
                                       m, "--atlas", path, "--at", "1e6,1e12", "--json"])
            brc, bwall, bcpu = child_cpu([sys.executable, "-c", ATLAS_QUERY_BASELINE, m])
            t = time.perf_counter()
            AQ.query(AQ.read_atlas(path) | {"source": path}, parse_member(m), [10**6, 10**12])
            rows.append({"member": m, "exit": rc, "command_wall_seconds": wall, "command_cpu_seconds": cpu,
                         "baseline_exit": brc, "baseline_cpu_seconds": bcpu, "cpu_ratio": cpu / bcpu if bcpu else None,
                         "in_process_seconds": time.perf_counter() - t})
    worst = max((r["cpu_ratio"] for r in rows if r["cpu_ratio"] is not None), default=None)
    return {"run": True, "atlas": "ATLAS_SMALL, certified in this run" if built is not None else path,
            "atlas_seconds": built, "rows": rows, "load_average": os.getloadavg(), "targets": ATLAS_QUERY_TARGETS,
            "baseline": "the compiled float64 reduced recursion of the member to T = 1e6, as a command",
            "met": all(r["exit"] == 0 and r["baseline_exit"] == 0 for r in rows) and worst is not None
            and worst <= ATLAS_QUERY_TARGETS["cpu_ratio_to_float64_run_max"]}


def _atlas_width(cell: dict, data: dict) -> float:
    """The largest relative width at T = 10^12 of the cell's centre member (representative regime: prefactors 1)."""

    c = AtlasCell.of_record(cell)
    rho, x, kap = ((lo + hi) / 2 for lo, hi in c.box)
    P = (rho / (1 - rho), x, kap * x)
    pre = {"excess_loss": Fraction(1), "s_err2": Fraction(1), "w_err2": Fraction(1)}
    ev = cell["checks"]["trajectory"]["evidence"] | {"path": cell["path"]}
    b = cell_bounds(ev, P, pre, [10**12], int(data["bits"]), "the atlas")[0]
    return max(float((Fraction(b[q][1]) - Fraction(b[q][0])) / Fraction(b[q][0])) for q in ("excess_loss", "s_err",
                                                                                            "w_err"))


def _widest_at_1e12(fc, members: list) -> float:
    """The largest relative width (hi - lo)/lo at T = 10^12 over the members' three quantities."""
    out = 0.0
    for m in members:
        b = fc.bounds(m, [10**12])[0]
        out = max(out, *(float((Fraction(b[q][1]) - Fraction(b[q][0])) / Fraction(b[q][0]))
                         for q in ("excess_loss", "s_err", "w_err")))
    return out


def monte_carlo(quick: bool, seed: int = 0) -> dict:
    """Time to the gradient of the population loss w.r.t. W_X at relative accuracy eps: MC vs reduced.

    State: W_X = alpha V* (alpha = 1/2), two-valued S with logit gap delta = 1, W_P = 0, on the
    benchmark regime with d = 4 (identity sigma, Gaussian X, loss 'sum'). Exact gradient from the
    reduced formula grad_{w_m} L = (dr_m/dalpha)/vn_m v*_m (verify.derive.reduced_map).
    """
    from ..derive import codegen  # heavy: loads flint,sympy
    from ..derive.reduced_map import case_of, reduced  # heavy: loads flint,sympy
    from ..engines.reduced_iteration import ARGS  # heavy: loads flint,sympy
    s = make_setting(**(REGIME | {"d": 4}))
    a0, d0 = 0.5, 1.0
    V = np.array([[float(x) for x in r] for r in s.vstar_base]) * math.sqrt(float(s.vstar_scale2))
    Sst = np.array([[float(x) for x in r] for r in s.sstar()])
    on = np.array([[1.0 if (i in g) else 0.0 for g in s.supports] for i in range(s.D)])
    Z = s.K * math.exp(d0) + s.D - s.K
    S = np.where(on > 0, math.exp(d0) / Z, 1 / Z)
    W = a0 * V
    grad_f = codegen.lambdify(ARGS, reduced(s.sigma, case_of(s.K, s.D)).dr_dalpha, "numpy")
    vn = [float(x) for x in s.row_norm2()]
    P = (s.D, s.K, s.N, float(s.law.var), float(s.loss_scale), float(s.eta_v), float(s.eta_kq), float(s.p_lambda),
         float(s.beta))
    exact = lambda: np.array([grad_f(a0, v, d0, *P) / v for v in vn])[:, None] * V  # noqa: E731
    g = exact()
    t_exact = rate(lambda n: [exact() for _ in range(n)], 0.1, 3, 10)["steps_per_s"]
    rng = np.random.default_rng(seed)

    def mc(n):
        X = rng.standard_normal((n, s.d, s.D))
        XS, XSs = X @ S, X @ Sst
        R = W @ XS - V @ XSs
        return np.einsum("kmj,kij->mi", R, XS) / n

    n0, reps = (2000, 6) if quick else (20000, 10)
    errs, times, ests = [], [], []
    for _ in range(reps):
        t = time.perf_counter()
        gm = mc(n0)
        times.append(time.perf_counter() - t)
        ests.append(gm)
        errs.append(np.linalg.norm(gm - g) / np.linalg.norm(g))
    err0 = math.sqrt(statistics.mean(e * e for e in errs))     # rms relative error at n0 samples
    # The MC estimator is unbiased, so the mean of all reps (reps * n0 samples) must be within a few
    # standard errors err0 / sqrt(reps) of the exact gradient: a cross-check of the reduced formula.
    err_all = float(np.linalg.norm(np.mean(ests, axis=0) - g) / np.linalg.norm(g))
    per_sample = statistics.median(times) / n0
    rows = []
    for eps in (1e-2, 1e-3, 1e-4, 1e-6):
        n = n0 * (err0 / eps) ** 2
        rows.append({"eps": eps, "mc_samples": n, "mc_seconds": n * per_sample, "reduced_seconds": 1 / t_exact,
                     "speedup": n * per_sample * t_exact})
    return {"state": {"alpha": a0, "delta": d0, "d": s.d, **REGIME},
            "mc_rms_rel_error_at_n0": err0, "n0": n0, "mc_seconds_per_sample": per_sample,
            "mc_rel_error_of_mean_of_reps": err_all, "reps": reps,
            "mc_consistent_with_exact": bool(err_all <= 4 * err0 / math.sqrt(reps)),
            "reduced_gradient_seconds": 1 / t_exact, "rows": rows}


# ---------------------------------------------------------------------------------------------
# Dask: sweep throughput on 1 and 2 workers (target: >= 1.8x), Dask's per-task overhead (target: < 5%)
# ---------------------------------------------------------------------------------------------
SCALING_GRID = {"D": [16, 32], "K": [2, 4], "eta": ["1/10", "1/20"], "M": [1, 2]}   # 16 certified rows
SCALING_TARGET = 1.8        # rows/s with 2 workers over rows/s with 1 worker, on 2 cores
SCALING_REPEATS = 2         # runs per cluster size; the fastest counts
OVERHEAD_TARGET = 0.05      # Dask's per-task overhead over the mean task time of the default sweep


def _warm_worker(measures: list[str]) -> str:
    """Import and generate once per worker what the rows need (flint, numba, the claims, SymPy codegen),
    so that timed rows measure the steady state."""
    from ..sweep.measures import MEASURES  # heavy: loads flint,sympy
    s = make_setting(D=8, K=2, preset="cnn", eta="1/10")
    for m in measures:
        MEASURES[m].func(s, 20, {"claim_steps": 10, "arb_bits": 128})
    return "warm"


def _noop() -> None:
    """A task that does nothing: what Dask alone costs per task."""
    return None


def _timed_rows(ex, tasks: list[dict]) -> tuple[float, list[dict]]:
    from ..sweep.run import compute_row, longest_first  # heavy: loads flint,sympy
    t = time.perf_counter()
    rows = [r for _, r in ex.stream(compute_row, [(x["key"], (x,)) for x in longest_first(tasks)])]
    return time.perf_counter() - t, rows


def sweep_scaling(quick: bool, processes: bool | None = None) -> dict:
    """Rows/s of a CPU-bound certified sweep (Arb enclosures of every row at 128 bits) on a LocalCluster of
    1 and of 2 worker processes, after a warm-up of each worker; the ratio's target is >= 1.8 on 2 cores.

    Each cluster runs the sweep ``SCALING_REPEATS`` times and the fastest run counts (as timeit does: the
    slower runs measure whatever else the machine was doing); every run's time is recorded.
    ``quick``: a two-row smoke run on worker threads of this process (``processes`` default: not quick)."""
    from ..sweep.run import plan_rows  # heavy: loads flint,sympy
    grid = {"D": [8], "K": [2], "eta": ["1/10", "1/20"]} if quick else SCALING_GRID
    steps = 200 if quick else 50_000
    tasks = [t for t in plan_rows(grid, steps, ["certified"], {"arb_bits": 128}, code_version())
             if t["invalid"] is None]
    out = {"grid": grid, "steps": steps, "measures": ["certified"], "rows": len(tasks), "target_ratio": SCALING_TARGET}
    for n in (1, 2):
        runs = []
        with Executor(workers=n, processes=not quick if processes is None else processes) as ex:
            ex.client.run(_warm_worker, ["certified"])
            for _ in range(1 if quick else SCALING_REPEATS):
                runs.append(_timed_rows(ex, tasks))
        wall, rows = min(runs, key=lambda r: r[0])
        bad = [r for r in rows if not isinstance(r, dict) or r.get("status") != "ok"]
        out[f"workers_{n}"] = {"seconds": wall, "rows_per_s": len(tasks) / wall, "failed_rows": len(bad),
                               "task_seconds": sum(r["seconds"] for r in rows if isinstance(r, dict)),
                               "all_runs_seconds": [w for w, _ in runs]}
    out["ratio"] = out["workers_2"]["rows_per_s"] / out["workers_1"]["rows_per_s"]
    out["meets_target"] = out["ratio"] >= SCALING_TARGET
    return out


def dask_overhead(quick: bool, noop_tasks: int = 400, processes: bool | None = None) -> dict:
    """Dask's per-task overhead as a fraction of the mean task time of the default sweep (target < 5%).

    Per-task overhead: the wall time of ``noop_tasks`` empty tasks through the same 2-worker LocalCluster,
    times the workers, per task (what a worker spends on Dask's side of one task). Also reported: the
    whole sweep's wall time x workers against the sum of its tasks' own times (overhead plus idle time).
    ``quick``: a smoke run (two trajectory rows, worker threads of this process unless ``processes``)."""
    from ..sweep.grid import DEFAULT_GRID  # heavy: loads flint,sympy
    from ..sweep.measures import CLAIM_STEPS, check_measures  # heavy: loads flint,sympy
    from ..sweep.run import DEFAULT_STEPS, plan_rows  # heavy: loads flint,sympy
    grid = {"D": [8], "K": [2], "eta": ["1/10", "1/20"]} if quick else DEFAULT_GRID
    steps, claim_steps = (2_000, 200) if quick else (DEFAULT_STEPS, CLAIM_STEPS)
    measures = ["trajectory"] if quick else check_measures(None)
    tasks = [t for t in plan_rows(grid, steps, measures, {"claim_steps": claim_steps}, code_version())
             if t["invalid"] is None]
    workers = 2
    with Executor(workers=workers, processes=not quick if processes is None else processes) as ex:
        ex.client.run(_warm_worker, measures)
        wall, rows = _timed_rows(ex, tasks)
        n = 40 if quick else noop_tasks
        t = time.perf_counter()
        list(ex.stream(_noop, [(f"noop-{i}", ()) for i in range(n)], retries=0))
        noop_wall = time.perf_counter() - t
    secs = [r["seconds"] for r in rows if isinstance(r, dict) and r.get("seconds")]
    mean_task = statistics.mean(secs)
    per_task = noop_wall * workers / n
    return {"grid": grid, "steps": steps, "measures": measures, "claim_steps": claim_steps, "rows": len(tasks),
            "workers": workers, "mean_task_seconds": mean_task, "noop_tasks": n,
            "per_task_overhead_seconds": per_task, "overhead_fraction": per_task / mean_task,
            "target_fraction": OVERHEAD_TARGET, "meets_target": per_task / mean_task < OVERHEAD_TARGET,
            "sweep_wall_seconds": wall,
            "sweep_overhead_and_idle_fraction": (wall * workers - sum(secs)) / sum(secs)}


def run_bench(quick: bool = False, out_dir: str = "reports/bench", dask: bool | None = None, tick=None) -> dict:
    """Measure everything, write bench.json and bench.md to ``out_dir`` atomically, return the dict.

    ``dask``: also the Dask targets (sweep scaling and per-task overhead; default: on unless ``quick``).
    ``tick(name)`` is called after each of the measurement_count(quick, dask) measurements."""
    t0 = time.perf_counter()
    ticks, given = [0], tick or (lambda name: None)

    def tick(name):
        ticks[0] += 1
        given(name)
    rates = engine_rates(quick, tick)
    full = full_targets(quick, tick)
    res = {"quick": quick, "regime": REGIME | {"N": 64}, "machine": {"python": platform.python_version(),
           "cpus": os.cpu_count(), "platform": platform.platform()},
           "convention": "steps/s are medians over repeats; ratios are between engines measured in this run",
           "engines": rates | full["engines"], "ratios": ratios(rates | full["engines"]) | full["ratios"],
           "full_matrix": {k: full[k] for k in ("targets", "met", "same_value")},
           "certified_radius": certified_radius(10**4 if quick else 10**6)}
    tick("certified radius")
    res["certified_full_radius"] = certified_full_radius(quick)
    tick("certified full radius")
    # quick (the bench part of ``verify all``, a smoke run): the main regime only, its baseline once; the
    # eta = 1/200 regime's certificate (a prefix six times longer) and the repeats are the full bench's
    targets = certificate_targets({CERTIFY_MAIN: CERTIFY_REGIMES[CERTIFY_MAIN]}, 1) if quick else certificate_targets()
    res["certificate"] = targets[CERTIFY_MAIN]
    res["certificate_ratios"] = {k: {x: v[x] for x in ("regime", "seconds", "baseline_seconds", "baseline_steps", "ratio",
                                                       "target_ratio", "met", "T0")} for k, v in targets.items()}
    tick("all-time certificate")
    res["family"] = family_targets(quick)
    tick("family certificate")
    res["atlas"] = atlas_targets(quick)
    tick("atlas")
    res["atlas_query"] = atlas_query_targets(quick)
    tick("atlas query")
    res["region_b"] = region_b_targets(quick)
    tick("Region B (Lemma C.2)")
    res["monte_carlo"] = monte_carlo(quick)
    tick("Monte Carlo")
    if not quick:
        res["kernel"] = kernel_bench()          # verify export/prove --coq: every group (needs coqc)
        tick("kernel route (Coq)")
        res["kernel_boxes"] = trapping_bench()  # the bench certificate's every box as a CoqInterval goal
        tick("trapping region's boxes (Coq)")
    if not quick:                                # every documented example against its 60 s (verify.bench.examples)
        res["examples"] = time_examples(tick=lambda line: tick(f"example {line}"))
    if dask if dask is not None else not quick:
        res["dask"] = {"sweep_scaling": sweep_scaling(quick)}
        tick("Dask sweep scaling")
        res["dask"]["overhead"] = dask_overhead(quick)
        tick("Dask overhead")
    res["seconds"] = time.perf_counter() - t0
    res["measurements"] = ticks[0]             # measurement_count(quick, dask) is the progress total
    write_bytes_atomic(os.path.join(out_dir, "bench.json"), json.dumps(res, indent=1).encode())
    write_bytes_atomic(os.path.join(out_dir, "bench.md"), to_markdown(res).encode())
    return res


# The targets ``verify bench --only NAME`` runs alone: name -> (what it measures, its runner(tick), its Markdown,
# the number of ticks it makes or None when not known ahead).
ONLY = {"examples": ("every example command of README.md and docs/*.md against 60 s (verify.bench.examples)",
                     lambda tick: time_examples(tick=tick), examples_markdown, lambda: len(documented_examples())),
        "kernel_boxes": ("every box of the bench certificate's trapping region as a CoqInterval theorem, checked by "
                         "Coq's kernel (verify.coq.kernel.trapping_bench; its route is saved for the claim's record)",
                         lambda tick: _kernel_boxes(tick), lambda res: kernel_boxes_markdown(res), lambda: None),
        "region_b": ("Region B of Lemma C.2 decided on a 2-worker LocalCluster and re-checked by recheck.positivity, "
                     "against its target (alpha > 0 decided in >= 90% of the volume)",
                     lambda tick: _region_b(tick), region_b_markdown, lambda: 1)}


def _region_b(tick) -> dict:
    res = region_b_targets(quick=False)
    tick("Region B (Lemma C.2)")
    return res


def _kernel_boxes(tick) -> dict:
    return trapping_bench(tick=tick)


def run_only(name: str, out_dir: str, tick=None) -> tuple[dict, str]:
    """One target of ONLY alone: its result and Markdown, written to OUT/NAME.json and OUT/NAME.md atomically."""
    _, runner, markdown, _ = ONLY[name]
    res = runner(tick or (lambda what: None))
    md = "\n".join([f"# verify bench --only {name}", ""] + markdown(res))
    write_bytes_atomic(os.path.join(out_dir, f"{name}.json"), json.dumps(res, indent=1).encode())
    write_bytes_atomic(os.path.join(out_dir, f"{name}.md"), md.encode())
    return res, md


def to_markdown(res: dict) -> str:
    regime = ", ".join(f"{k} = {v}" for k, v in res["regime"].items())
    lines = ["# verify bench", "", f"Regime: {regime} ({'quick' if res['quick'] else 'full'} run, "
             f"{res['machine']['cpus']} CPUs). {res['convention']}.", "",
             "| engine | steps/s (median) | steps per run | repeats |", "|---|---:|---:|---:|"]
    for k, v in res["engines"].items():
        lines.append(f"| {k} | {v['steps_per_s']:.4g} | {v['steps']} | {v['repeats']} |")
    lines += ["", "| ratio | value |", "|---|---:|"] + [f"| {k} | {v if isinstance(v, str) else f'{v:.4g}'} |"
                                                         for k, v in res["ratios"].items()]
    c = res["certified_radius"]
    lines += ["", f"Certified (Arb {c['bits']} bits): max state radius {c['max_state_radius']:.3e} after "
              f"{c['steps']} steps ({c['seconds']:.1f} s).", ""]
    fm, cf = res.get("full_matrix"), res.get("certified_full_radius")
    if fm:
        t = fm["targets"]
        lines += [f"Full-matrix targets: float64 >= {t['full_float64_over_jax']}x the JAX baseline, certified >= "
                  f"{t['full_arb_over_mpmath_loop']}x the plain mpmath loop: "
                  + "; ".join(f"{k}: {'not measured' if v is None else ('met' if v else 'NOT met')}"
                              for k, v in fm["met"].items()) + ".", ""]
    if cf:
        lines += [f"Certified full-matrix (Arb {cf['bits']} bits, D = N = {cf['D']}): largest relative radius "
                  f"{cf['max_relative_radius']:.3e} after {cf['steps']} steps (target <= {cf['target']:g}: "
                  f"{'met' if cf['met'] else 'NOT met'}).", ""]
    ce = res.get("certificate")
    if ce:
        w = ce["relative_width"]
        lines += [f"All-time certificate (verify certify, {ce['regime']}): {ce['seconds']:.1f} s for the whole "
                  f"certificate (phases {ce['phases']}), T0 = {ce['T0']}; relative width (hi - lo)/lo at T = 1e6 / 1e9 / "
                  "1e12: " + "; ".join(f"{q} {w['1e+06'][q]:.2g} / {w['1e+09'][q]:.2g} / {w['1e+12'][q]:.2g}"
                                       for q in w["1e+12"])
                  + f"; one evaluation at 1e12 / 1e99: {ce['eval_seconds']['1e+12'] * 1e3:.2f} / "
                  f"{ce['eval_seconds']['1e+99'] * 1e3:.2f} ms (<= 5% at 1e12 and shrinking: "
                  f"{'met' if ce['met'] else 'NOT met'}).", "",
                  "| certificate | seconds | plain Arb iteration (seconds, steps) | ratio | target | |",
                  "|---|---:|---:|---:|---:|---|"]
        for k, v in res.get("certificate_ratios", {}).items():
            lines.append(f"| {k} | {v['seconds']:.3g} | {v['baseline_seconds']:.3g} ({v['baseline_steps']:.0e}) | "
                         f"{v['ratio']:.3g} | <= {v['target_ratio']} | {'met' if v['met'] else 'NOT met'} |")
        lines.append("")
    fa = res.get("family")
    if fa:
        tf = fa["target_family"]
        done = (f"certified in {tf['seconds']:.0f} s ({tf['cells']} cells, {tf.get('entries', {}).get('tube', 0)} "
                f"entered through the tube; relative width at T = 1e12 at most {tf['relative_width_at_1e12']:.2g} "
                "over D in {8, 100, 512} x eta in {1/16, 3/32, 1/8})" if tf["completed"] else
                "not run (quick)" if not tf.get("run") else f"failed: {tf['failed']}" if tf.get("failed") else
                f"not finished within {tf['seconds']:.0f} s: {tf['cells_done']} cells certified, {tf['cells_pending']} "
                "pending" + (f"; every length D <= {tf['complete_through_D']} closed" if tf.get("complete_through_D")
                             else ""))
        rk = tf.get("recheck")
        if rk:
            done += (f"; its file re-checked by the independent checker in {rk['recheck_seconds']:.0f} s on "
                     f"{rk['workers']} workers against {rk['certify_seconds']:.0f} s to certify "
                     f"({'verified' if rk['verified'] else 'NOT verified: ' + rk['failure']}; no slower than the "
                     f"certification: {'met' if rk['met'] else 'NOT met'})")
        lines += [f"Family certificate (target {tf['spec']['ranges']}, sts K = 4, ||V*|| = 1, 2 workers): {done} "
                  f"(target <= {fa['targets']['seconds_max']} s: {'met' if fa['met']['seconds'] else 'NOT met'}). "
                  f"On {fa['query_family']['ranges']}: a member query {fa['query_seconds'] * 1e3:.0f} ms in process, "
                  + (f"{fa['query_file_seconds'] * 1e3:.0f} ms from its file ({fa['file_bytes_per_cell'] / 1e3:.0f} kB "
                     f"a cell, {fa['file_bytes'] / 1e3:.0f} kB for {fa['cells']} cells), "
                     if "file_bytes" in fa else "")
                  + f"{fa['query_command_seconds']:.2f} s as a command (target < 1 s); largest relative width at "
                  f"T = 1e12 {fa['relative_width_at_1e12']:.2g} (target <= 10%: "
                  f"{'met' if fa['met']['relative_width'] else 'NOT met'}).", ""]
    at = res.get("atlas")
    if at and not at.get("run"):
        lines += [f"Atlas of region A {at['box']}: not run (quick).", ""]
    elif at:
        w = at["relative_width_at_1e12"]
        lines += [f"Atlas ({'region A' if at['region_a'] else 'a small box'} {at['box']}, depth {at['depth']}, "
                  f"{at['workers']} workers): {at['cells']} cells in {at['seconds']:.0f} s, {at['counts']}; certified "
                  f"{at['certified_fraction']:.0%} of the cells, {at['certified_volume_fraction']:.0%} of the volume; "
                  f"largest relative width at T = 1e12 {'-' if w is None else f'{w:.2g}'} (target <= "
                  f"{at['targets']['relative_width_at_1e12_max']:.0%}); the independent re-check "
                  f"{'passed' if at['recheck_passed'] else 'FAILED'} in {at['recheck_seconds']:.1f} s "
                  f"(target for region A: every cell certified in <= {at['targets']['seconds_max']} s).", ""]
    aq = res.get("atlas_query")
    if aq and aq.get("run"):
        lines += ["Atlas member query (" + aq["atlas"] + "; load average " + ", ".join(f"{v:.1f}" for v in
                  aq["load_average"]) + "): " + "; ".join(f"{r['member']}: {r['command_cpu_seconds']:.2f} s CPU, "
                  f"{r['command_wall_seconds']:.2f} s wall as a command, {r['in_process_seconds'] * 1e3:.0f} ms in "
                  f"process, against {r['baseline_cpu_seconds']:.2f} s CPU for {aq['baseline']} (ratio "
                  f"{r['cpu_ratio']:.2f})" for r in aq["rows"]) + " (target: ratio <= "
                  f"{aq['targets']['cpu_ratio_to_float64_run_max']:g}: {'met' if aq['met'] else 'NOT met'}).", ""]
    if res.get("region_b"):
        lines += region_b_markdown(res["region_b"])
    m = res["monte_carlo"]
    lines += [f"Monte Carlo gradient (numpy, d = {m['state']['d']}): rms relative error {m['mc_rms_rel_error_at_n0']:.3g}"
              f" at n0 = {m['n0']} samples; reduced (exact) gradient {m['reduced_gradient_seconds']:.3g} s.", "",
              "| accuracy eps | MC samples | MC seconds | reduced seconds | speedup |", "|---:|---:|---:|---:|---:|"]
    for r in m["rows"]:
        lines.append(f"| {r['eps']:g} | {r['mc_samples']:.3g} | {r['mc_seconds']:.3g} | {r['reduced_seconds']:.3g} | "
                     f"{r['speedup']:.3g} |")
    if "dask" in res:
        sc, ov = res["dask"]["sweep_scaling"], res["dask"]["overhead"]
        lines += ["", f"Dask, certified sweep ({sc['rows']} rows, {sc['steps']} steps, Arb 128 bits, LocalCluster): "
                  f"{sc['workers_1']['rows_per_s']:.3g} rows/s with 1 worker, "
                  f"{sc['workers_2']['rows_per_s']:.3g} with 2; "
                  f"ratio {sc['ratio']:.2f} (target >= {sc['target_ratio']}).",
                  f"Dask per-task overhead: {ov['per_task_overhead_seconds'] * 1e3:.3g} ms against a mean task time of "
                  f"{ov['mean_task_seconds']:.3g} s in the default sweep ({ov['rows']} rows): "
                  f"{100 * ov['overhead_fraction']:.3g}% (target < {100 * ov['target_fraction']:g}%); "
                  "wall x workers over task time: "
                  f"{100 * ov['sweep_overhead_and_idle_fraction']:.3g}% overhead and idle."]
    if res.get("examples"):
        lines += [""] + examples_markdown(res["examples"])
    k = res.get("kernel")
    if k:
        lines += ["", (f"Kernel route (`verify export --coq`, `verify prove --coq`, Coq {k['versions']['coq']}): "
                       f"{k['theorems']} theorems in {k['files']} files, export {k['export_seconds']:.3g} s, prove "
                       f"{k['prove_wall_seconds']:.3g} s wall, coqc {k['coqc_cpu_seconds']:.3g} s CPU "
                       f"({k['cpu_seconds_per_theorem']:.3g} s a theorem); "
                       f"{'as expected' if k['as_expected'] else 'NOT as expected'}.") if k["available"]
                  else f"Kernel route: not measured ({k['why']})."]
    if res.get("kernel_boxes"):
        lines += [""] + kernel_boxes_markdown(res["kernel_boxes"])
    return "\n".join(lines) + "\n"


def kernel_boxes_markdown(kb: dict) -> list[str]:
    """The kernel_boxes target (verify.coq.kernel.trapping_bench) as Markdown lines."""
    if not kb["available"]:
        return [f"Trapping region's boxes in Coq: not measured ({kb['why']})."]
    return [(f"Trapping region's boxes in Coq (`verify export --coq DIR --group trapping-region`, the bench "
             f"certificate): {kb['boxes']} of {kb['of']} boxes in {kb['files']} files, export "
             f"{kb['export_seconds']:.3g} s, prove {kb['prove_wall_seconds']:.4g} s wall, coqc "
             f"{kb['coqc_cpu_seconds']:.4g} s CPU ({kb['wall_seconds_per_box']:.3g} s wall and "
             f"{kb['cpu_seconds_per_box']:.3g} s CPU a box); {kb['why']}.")]


@part("bench", order=90, convention_why="it times the engines in fixed regimes; a convention does not change "
      "what is timed")
def bench_part(profile: str) -> dict:
    """verify.bench in quick mode; its files go to a temporary folder (the result is saved as a part, so
    ``verify all`` writes nothing outside its own folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        return run_bench(quick=True, out_dir=tmp)
