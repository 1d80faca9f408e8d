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
import statistics
import time

import numpy as np

from .run.atomic import write_bytes_atomic
from .model import make_setting
from .run import part

REGIME = dict(D=64, K=4, preset="gcn", eta="1/32")   # the regime: D = N = 64, K = 4, eta = 1/32


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


def measurement_count(quick: bool, dask: bool | None = None) -> int:
    """How many measurements run_bench makes (engine rates, certified radius, Monte Carlo, and the two Dask
    targets unless turned off): a progress total."""
    with_dask = dask if dask is not None else not quick
    return 2 + (2 if quick else 3) + 3 + (4 if quick else 6) + 3 + (2 if with_dask else 0)


def engine_rates(quick: bool, tick=None) -> dict:
    """Steps/s of every engine on the issue's regime (full-matrix also at D = N = 16 and 256);
    ``tick(name)`` is called after each measurement."""
    from .engines import iterate
    from .engines.arb import iterate_certified
    from .engines.fast import iterate_fast
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
    for dps in ((30, 100) if quick else (30, 100, 300)):
        put(f"reduced-mpmath-dps{dps}", rate(lambda n, d=dps: iterate(s, n, "reduced", "mpmath", d, [n]), mt, rep,
                                             100))
    for bits in (128, 256, 512):
        iterate_certified(s, 2, bits, [2])
        put(f"certified-arb{bits}", rate(lambda n, b=bits: iterate_certified(s, n, b, [n]), mt, rep, 100))
    for D in ((16, 64) if quick else (16, 64, 256)):
        sd = make_setting(**(REGIME | {"D": D}))
        put(f"full-float64-D{D}", rate(lambda n, x=sd: iterate(x, n, "full", "float64", None, [n]), mt, rep, 1))
        if D <= 64 or not quick:
            # mpmath full-matrix steps are O(D^3) mpmath operations: one repeat of the smallest n.
            slow = D >= 256
            put(f"full-mpmath-D{D}", rate(lambda n, x=sd: iterate(x, n, "full", "mpmath", 30, [n]),
                                          0.0 if slow else mt, 1 if slow else rep, 1, max_n=1 if slow else 10**9))
    return out


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
    from .engines.arb import iterate_certified
    t = time.perf_counter()
    tr = iterate_certified(make_setting(**REGIME), steps, 256, [steps])
    return {"steps": steps, "bits": 256, "max_state_radius": tr.state_radii[-1],
            "seconds": time.perf_counter() - t}


def certificate_targets(regime: dict | None = None) -> dict:
    """The all-time certificate (verify certify) on the issue's regime: wall time of the whole certificate,
    SymPy derivation included (target <= 60 s on one core), relative widths (hi - lo)/lo of the three
    quantities at T = 10^6, 10^9, 10^12 (target <= 5% at 10^12, shrinking as T grows), and the time of one
    evaluation at T = 10^12 and 10^99 (no step loop: it does not grow with T)."""
    from fractions import Fraction

    from .certify import certify
    regime = regime or REGIME
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
            "targets": {"seconds_max": 60, "relative_width_at_1e12_max": 0.05},
            "met": bool(seconds <= 60 and max(w12.values()) <= 0.05
                        and all(widths["1e+09"][q] > w12[q] for q in w12))}


def monte_carlo(quick: bool, seed: int = 0) -> dict:
    """Time to the gradient of the population loss w.r.t. W_X at relative accuracy eps: MC vs reduced.

    State: W_X = alpha V* (alpha = 1/2), two-valued S with logit gap delta = 1, W_P = 0, on the
    issue's regime with d = 4 (identity sigma, Gaussian X, loss 'sum'). Exact gradient from the
    reduced formula grad_{w_m} L = (dr_m/dalpha)/vn_m v*_m (verify.derive.reduced).
    """
    from .derive import codegen
    from .derive.reduced import case_of, reduced
    from .engines.reduced import ARGS
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
# Dask: sweep throughput on 1 and 2 workers, and Dask's per-task overhead (issue 12's targets)
# ---------------------------------------------------------------------------------------------
SCALING_GRID = {"D": [16, 32], "K": [2, 4], "eta": ["1/10", "1/20"], "M": [1, 2]}   # 16 certified rows
SCALING_TARGET = 1.8        # rows/s with 2 workers over rows/s with 1 worker, on 2 cores
SCALING_REPEATS = 2         # runs per cluster size; the fastest counts
OVERHEAD_TARGET = 0.05      # Dask's per-task overhead over the mean task time of the default sweep


def _warm_worker(measures: list[str]) -> str:
    """Import and generate once per worker what the rows need (flint, numba, the claims, SymPy codegen),
    so that timed rows measure the steady state."""
    from .model import make_setting
    from .sweep.measures import MEASURES
    s = make_setting(D=8, K=2, preset="cnn", eta="1/10")
    for m in measures:
        MEASURES[m].func(s, 20, {"claim_steps": 10, "arb_bits": 128})
    return "warm"


def _noop() -> None:
    """A task that does nothing: what Dask alone costs per task."""
    return None


def _timed_rows(ex, tasks: list[dict]) -> tuple[float, list[dict]]:
    from .sweep.run import compute_row, longest_first
    t = time.perf_counter()
    rows = [r for _, r in ex.stream(compute_row, [(x["key"], (x,)) for x in longest_first(tasks)])]
    return time.perf_counter() - t, rows


def sweep_scaling(quick: bool, processes: bool | None = None) -> dict:
    """Rows/s of a CPU-bound certified sweep (Arb enclosures of every row at 128 bits) on a LocalCluster of
    1 and of 2 worker processes, after a warm-up of each worker; the ratio's target is >= 1.8 on 2 cores.

    Each cluster runs the sweep ``SCALING_REPEATS`` times and the fastest run counts (as timeit does: the
    slower runs measure whatever else the machine was doing); every run's time is recorded.
    ``quick``: a two-row smoke run on worker threads of this process (``processes`` default: not quick)."""
    from .run.version import code_version
    from .run.execute import Executor
    from .sweep.run import plan_rows
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
    import statistics

    from .run.version import code_version
    from .run.execute import Executor
    from .sweep.grid import DEFAULT_GRID
    from .sweep.measures import CLAIM_STEPS, check_measures
    from .sweep.run import DEFAULT_STEPS, plan_rows
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
    tick = tick or (lambda name: None)
    rates = engine_rates(quick, tick)
    res = {"quick": quick, "regime": REGIME | {"N": 64}, "machine": {"python": platform.python_version(),
           "cpus": os.cpu_count(), "platform": platform.platform()},
           "convention": "steps/s are medians over repeats; ratios are between engines measured in this run",
           "engines": rates, "ratios": ratios(rates),
           "certified_radius": certified_radius(10**4 if quick else 10**6)}
    tick("certified radius")
    res["certificate"] = certificate_targets()
    tick("all-time certificate")
    res["monte_carlo"] = monte_carlo(quick)
    tick("Monte Carlo")
    if dask if dask is not None else not quick:
        res["dask"] = {"sweep_scaling": sweep_scaling(quick)}
        tick("Dask sweep scaling")
        res["dask"]["overhead"] = dask_overhead(quick)
        tick("Dask overhead")
    res["seconds"] = time.perf_counter() - t0
    write_bytes_atomic(os.path.join(out_dir, "bench.json"), json.dumps(res, indent=1).encode())
    write_bytes_atomic(os.path.join(out_dir, "bench.md"), to_markdown(res).encode())
    return res


def to_markdown(res: dict) -> str:
    regime = ", ".join(f"{k} = {v}" for k, v in res["regime"].items())
    lines = ["# verify bench", "", f"Regime: {regime} ({'quick' if res['quick'] else 'full'} run, "
             f"{res['machine']['cpus']} CPUs). {res['convention']}.", "",
             "| engine | steps/s (median) | steps per run | repeats |", "|---|---:|---:|---:|"]
    for k, v in res["engines"].items():
        lines.append(f"| {k} | {v['steps_per_s']:.4g} | {v['steps']} | {v['repeats']} |")
    lines += ["", "| ratio | value |", "|---|---:|"] + [f"| {k} | {v:.4g} |" for k, v in res["ratios"].items()]
    c = res["certified_radius"]
    lines += ["", f"Certified (Arb {c['bits']} bits): max state radius {c['max_state_radius']:.3e} after "
              f"{c['steps']} steps ({c['seconds']:.1f} s).", ""]
    ce = res.get("certificate")
    if ce:
        w = ce["relative_width"]
        lines += [f"All-time certificate (verify certify, {ce['regime']}): {ce['seconds']:.1f} s for the whole "
                  f"certificate (phases {ce['phases']}), T0 = {ce['T0']}; relative width (hi - lo)/lo at T = 1e6 / 1e9 / "
                  "1e12: " + "; ".join(f"{q} {w['1e+06'][q]:.2g} / {w['1e+09'][q]:.2g} / {w['1e+12'][q]:.2g}"
                                       for q in w["1e+12"])
                  + f"; one evaluation at 1e12 / 1e99: {ce['eval_seconds']['1e+12'] * 1e3:.2f} / "
                  f"{ce['eval_seconds']['1e+99'] * 1e3:.2f} ms (targets <= 60 s, <= 5% at 1e12: "
                  f"{'met' if ce['met'] else 'NOT met'}).", ""]
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
    return "\n".join(lines) + "\n"


@part("bench", order=90)
def bench_part(profile: str) -> dict:
    """verify.bench in quick mode; its files go to a temporary folder (the result is saved as a part, so
    ``verify all`` writes nothing outside its own folder)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        return run_bench(quick=True, out_dir=tmp)
