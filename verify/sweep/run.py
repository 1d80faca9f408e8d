"""Running a sweep: one Dask task per regime of the grid, rows saved as they arrive, then the table.

Each row is keyed by a hash of its regime, the steps, the measurements, their options and the code
version (verify.run.version). Rows are saved by the client, atomically, as OUT/_work/rows/<key>.json
the moment they arrive, so an interrupted sweep resumes: a row saved "ok" under the same key is reused,
and editing the code changes every key. Then OUT/sweep.parquet, OUT/sweep.csv, OUT/sweep.json and
OUT/figures/exponents-vs-<axis>.png are written (each atomically). A lock on OUT (verify.run.lock)
turns a second concurrent sweep into the same OUT into a clear error.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from ..errors import Interrupted, InvalidParameter, OutputError
from ..inputs import read_json
from ..model import make_setting
from ..run.atomic import WORK, json_bytes, keep_elsewhere, write_bytes_atomic, write_json_atomic
from ..run.execute import RETRIES, Executor, check_cluster, local_workers, report_progress, worker_address
from ..run.lock import folder_lock
from ..run.version import code_version
from .figures import sweep_figures
from .grid import BASE, Point, points, setting_kwargs
from .measures import ARB_BITS, CLAIM_STEPS, MEASURES, check_measures, progress_to
from .table import write_table

DEFAULT_OUT = "reports/sweep"        # gitignored
DEFAULT_STEPS = 100_000
MAX_STEPS = 10**9
# Columns copied from each regime's Setting.config(), whatever was swept.
REGIME_COLUMNS = ("preset", "D", "K", "N", "M", "d", "eta_v", "eta_kq", "sigma", "law", "loss", "p_lambda",
                  "vstar_norm2")


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def check_steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or not 10 <= steps <= MAX_STEPS:
        raise InvalidParameter("steps", steps, f"must be an integer in 10..{MAX_STEPS} (tails are fitted over "
                               "the last decade)")
    return steps


def row_key(point: Point, steps: int, measures: list[str], options: dict, version: str) -> str:
    """16 hex digits naming one row: its regime, steps, measurements, their options and the code version."""
    blob = json.dumps({"point": point.as_dict, "steps": steps, "measures": sorted(measures), "options": options,
                       "code_version": version}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _regime_columns(point: Point, config: dict | None) -> dict:
    cols = dict(point.values)
    for k in REGIME_COLUMNS:
        if k not in cols:
            cols[k] = config.get(k) if config else None
    return cols


def invalid_row(task: dict) -> dict:
    """The row of a grid point that is not a valid regime (made by the client; nothing runs)."""
    pt = Point(tuple(map(tuple, task["point"])), task["invalid"])
    return {"key": task["key"], "status": "invalid", "error": pt.invalid, "invalid_kind": task.get("invalid_kind"),
            **_regime_columns(pt, None),
            "steps": task["steps"], "worker": None, "seconds": 0.0, "code_version": task["code_version"],
            "finished": now_utc(), "config": None}


# The topic under which a row's task tells the client how far it is (verify.run.execute.report_progress): a
# message [row key, fraction of the row done]; at most one a PROGRESS_INTERVAL seconds from a row.
PROGRESS_TOPIC = "verify-sweep-progress"
PROGRESS_INTERVAL = 0.5


def row_progress(key: str, i: int, n: int):
    """``report(fraction)`` for measurement ``i`` of a row's ``n``: sends the fraction of the whole row done (each
    measurement an equal share) to the client, throttled to PROGRESS_INTERVAL unless ``force``."""
    last = [0.0]

    def report(fraction: float, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - last[0] >= PROGRESS_INTERVAL:
            last[0] = now
            report_progress(PROGRESS_TOPIC, [key, (i + fraction) / n])
    return report


def compute_row(task: dict) -> dict:
    """The Dask task of one regime: build its Setting and run every measurement; a measurement that raises
    makes the row "failed" with its error (the other columns are kept).

    ``task``: key, point ([[axis, value], ...]), steps, measures, options, code_version.
    """
    t0 = time.perf_counter()
    worker = worker_address()
    pt = Point(tuple(map(tuple, task["point"])))
    mine = code_version()
    row = {"key": task["key"], "status": "ok", "error": None}
    if mine != task["code_version"]:
        return row | {"status": "failed", "error": f"worker {worker} runs other code (version {mine}) than the client "
                      f"({task['code_version']}): install the same verify on every worker",
                      **_regime_columns(pt, None), "steps": task["steps"], "worker": worker, "seconds": 0.0,
                      "code_version": mine, "finished": now_utc(), "config": None}
    s = make_setting(**setting_kwargs(pt.as_dict))
    config = s.config()
    row |= _regime_columns(pt, config) | {"steps": task["steps"]}
    errors = []
    n = len(task["measures"])
    for i, name in enumerate(task["measures"]):
        report = row_progress(task["key"], i, n)
        try:
            with progress_to(report):
                row |= MEASURES[name].func(s, task["steps"], task["options"])
        except Exception as exc:   # one measurement failing costs its columns, not the row
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
        report(1.0, force=True)
    if errors:
        row["status"], row["error"] = "failed", "; ".join(errors)
    return row | {"worker": worker, "seconds": round(time.perf_counter() - t0, 4), "code_version": mine,
                  "finished": now_utc(), "config": json.dumps(config)}


def rows_dir(out) -> Path:
    return Path(out) / WORK / "rows"


def plan_rows(grid: dict, steps: int, measures: list[str], options: dict, version: str) -> list[dict]:
    """One task per grid point, in grid order."""
    return [{"key": row_key(p, steps, measures, options, version), "point": [list(kv) for kv in p.values],
             "invalid": p.invalid, "invalid_kind": p.invalid_kind, "steps": steps, "measures": measures,
             "options": options, "code_version": version}
            for p in points(grid)]


def longest_first(tasks: list[dict]) -> list[dict]:
    """The tasks in the order to submit them: the most expensive first (a row costs about steps x M, the
    rows of W_X the reduced recursion iterates, and grows with D on the full-matrix engine), so that the
    last tasks to finish are short ones and the workers end together (longest-processing-time first)."""
    def cost(t):
        p = dict(map(tuple, t["point"]))
        return (int(p.get("M", 1)), int(p.get("D", 0)))
    return sorted(tasks, key=cost, reverse=True)


def load_row(path) -> dict | None:
    try:
        row = read_json(path, "out", what="saved row")      # bounded: a foreign file is a row to compute again
    except InvalidParameter:
        return None
    return row if isinstance(row, dict) and row.get("status") == "ok" else None


def sweep_options(measures: list[str], claim_steps: int, arb_bits: int) -> dict:
    """What the measurements depend on besides the regime and the steps (part of every row's key)."""
    if not isinstance(claim_steps, int) or claim_steps < 1:
        raise InvalidParameter("claim_steps", claim_steps, "must be an integer >= 1")
    options = {"claim_steps": claim_steps} if "claims" in measures else {}
    if "certified" in measures:
        options["arb_bits"] = arb_bits
    return options


def sort_rows(tasks: list[dict], rdir: Path, fresh: bool) -> tuple[dict, list, int]:
    """(rows known before any work: invalid points and saved rows, by key; the tasks to compute; how many reused)."""
    got, todo, reused = {}, [], 0
    for t in tasks:
        saved = None if fresh else load_row(rdir / f"{t['key']}.json")
        if t["invalid"] is not None:
            got[t["key"]] = invalid_row(t)
        elif saved is not None:
            got[t["key"]] = saved
            reused += 1
        else:
            todo.append(t)
    return got, todo, reused


def save_row(path: Path, row: dict) -> None:
    """Write one row atomically; when that fails (a full disk), keep it elsewhere and stop with an OutputError."""
    try:
        write_json_atomic(path, row)
    except OSError as exc:
        kept = keep_elsewhere({path.name: json_bytes(row)}, "sweep")
        where = f"the row just computed was kept in {kept / path.name}" if kept else "the row could not be kept anywhere"
        saved = len(list(path.parent.glob("*.json")))
        raise OutputError(path, exc.strerror or str(exc), f"{where}; the {saved} rows finished before it are saved "
                          f"in {path.parent}: free some space and run the same command again to resume") from None


def compute_rows(todo: list[dict], rdir: Path, got: dict, labels: dict, *, scheduler, workers, processes,
                 progress, notes: list, on_fraction=None) -> dict:
    """Run the rows of ``todo`` on the executor, saving each as it arrives; returns what ran them.
    ``on_fraction(label, fraction)``: how far a running row is, as its measurements tell (row_progress)."""
    local = None
    if scheduler is None:
        local, note = local_workers(workers, len(todo))
        notes += [note] if note else []
    with Executor(scheduler, local, processes) as ex:
        executor = ex.describe()
        if on_fraction is not None:
            ex.subscribe(PROGRESS_TOPIC, lambda msg: on_fraction(labels.get(msg[0], msg[0]), float(msg[1])))
        for key, row in ex.stream(compute_row, [(t["key"], (t,)) for t in longest_first(todo)]):
            if isinstance(row, BaseException):
                t = next(x for x in todo if x["key"] == key)
                row = invalid_row(t | {"invalid": None}) | {
                    "status": "failed", "error": f"{type(row).__name__}: {row} (the task failed on the "
                    f"cluster after {RETRIES} retries, or its workers kept dying)"}
            save_row(rdir / f"{key}.json", row)
            got[key] = row
            if progress:
                progress(labels[key], row["status"], row.get("seconds") or 0.0, row.get("worker"))
    return executor


def write_outputs(out, rows: list[dict], grid: dict, steps: int, meta: dict) -> dict:
    """The figures and the table (each file atomically); when a write fails, the rows (already saved under
    OUT/_work/rows) are the computed work, and the OutputError says how to write the table elsewhere."""
    try:
        figs = sweep_figures(rows, grid, steps)
        for fname, png, _ in figs:
            write_bytes_atomic(Path(out) / fname, png)
        meta["figures"] = [{"file": f, "caption": c} for f, _, c in figs]
        return write_table(out, rows, meta)
    except OSError as exc:
        raise OutputError(getattr(exc, "filename", None) or out, exc.strerror or str(exc),
                          f"the {len(rows)} rows are saved in {rows_dir(out)}: free some space and run the same "
                          "command again (every row is reused)") from None


def run_sweep(grid: dict, steps: int = DEFAULT_STEPS, out=DEFAULT_OUT, *, measures=None, claim_steps: int = CLAIM_STEPS,
              arb_bits: int = ARB_BITS, scheduler: str | None = None, workers: int | None = None,
              processes: bool = True, fresh: bool = False, progress=None, on_start=None, on_fraction=None) -> dict:
    """Run every regime of ``grid`` (verify.sweep.grid.parse_grid) on the executor and write the table.

    ``progress(label, status, seconds, worker)`` is called per row as it arrives ("reused" for a saved
    one); ``on_start(total, todo)`` once the plan is known; ``on_fraction(label, fraction)`` while a row runs, with
    the fraction of it done (its measurements' steps, claims, ...: so a long row is not silent). Returns {"rows", "meta", "files", "reused",
    "notes"} (notes: e.g. --workers capped at what the machine holds). Ctrl-C raises
    :class:`verify.errors.Interrupted` once the sweep has stopped, with every finished row saved.
    """
    steps = check_steps(steps)
    measures = check_measures(measures)
    address = check_cluster(scheduler, workers)
    options = sweep_options(measures, claim_steps, arb_bits)
    t0 = time.perf_counter()
    with folder_lock(out, "out"):
        version = code_version()
        tasks = plan_rows(grid, steps, measures, options, version)
        if not any(t["invalid"] is None for t in tasks):
            raise InvalidParameter("grid", " ".join(f"{k}={','.join(map(str, v))}" for k, v in grid.items()),
                                   f"has no valid regime; e.g. {tasks[0]['invalid']}")
        rdir = rows_dir(out)
        rdir.mkdir(parents=True, exist_ok=True)
        got, todo, reused = sort_rows(tasks, rdir, fresh)
        if on_start:
            on_start(len(tasks), len(todo))
        labels = {t["key"]: Point(tuple(map(tuple, t["point"]))).label() for t in tasks}
        if progress:
            for t in tasks:
                if t["key"] in got:
                    r = got[t["key"]]
                    progress(labels[t["key"]], "reused" if r["status"] == "ok" else r["status"], 0.0, r.get("worker"))
        executor, notes = {}, []
        if todo:
            try:
                executor = compute_rows(todo, rdir, got, labels, scheduler=address, workers=workers,
                                        processes=processes, progress=progress, notes=notes,
                                        on_fraction=on_fraction)
            except KeyboardInterrupt:
                raise Interrupted(f"interrupted: {len(list(rdir.glob('*.json')))} finished rows are saved in {rdir}; "
                                  "run the same command again to resume") from None
        rows = [got[t["key"]] for t in tasks]
        meta = {"grid": grid, "base": BASE, "steps": steps, "measures": measures, "options": options,
                "code_version": version, "executor": executor, "reused_rows": reused,
                "wall_seconds": round(time.perf_counter() - t0, 3), "written": now_utc(),
                "measure_summaries": {m: MEASURES[m].summary for m in measures}}
        files = write_outputs(out, rows, grid, steps, meta)
    return {"rows": rows, "meta": meta, "files": files, "reused": reused, "notes": notes}


__all__ = ["run_sweep", "compute_row", "plan_rows", "row_key", "rows_dir", "check_steps", "DEFAULT_OUT",
           "DEFAULT_STEPS", "REGIME_COLUMNS"]
