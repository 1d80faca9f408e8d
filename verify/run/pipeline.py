"""``verify all``: plan the parts, run them on the Dask executor, save each record, then build the report.

The parts themselves live with what they compute and register with :func:`verify.run.parts.part`; this
module only plans and executes. Each finished part is saved by the client, atomically, as
OUT/_work/parts/<part>.json, together with the options it ran with and the code version (a hash of
the sources, :mod:`verify.run.version`). An interrupted or repeated run resumes: a part whose record
finished "ok" with the same options and the same code version is not run again; editing a source file
makes every part run again. A part that raises, times out, or is cut by the profile's time budget is
recorded with that status and its error; it never stops the run. The report folder is then built
beside OUT and swapped into place (verify.run.atomic), so a report is complete or absent. A lock
on OUT (verify.run.lock) turns a second concurrent run on the same OUT into a clear error.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidParameter
from ..model.profiles import PROFILES, check_profile
from .atomic import WORK, write_json_atomic
from .child import part_record, run_task
from .execute import RETRIES, Executor, check_cluster
from .lock import folder_lock
from .parts import REGISTRY, discover
from .version import code_version

DEFAULT_OUT = "reports/latest"     # gitignored; the committed example lives in reports/example


@dataclass(frozen=True)
class Part:
    """One unit of ``verify all``: a registered ``kind`` and its argument (claim id, probe name, or "")."""

    kind: str
    arg: str = ""

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.arg}" if self.arg else self.kind

    @property
    def filename(self) -> str:
        safe = "".join(c if (c.isalnum() or c in "-_.") else "_" for c in self.name.replace(":", "--"))
        return f"{safe}.json"


def plan(profile: str, only: list[str] | None = None) -> tuple[list[Part], list[tuple[Part, str]]]:
    """The parts of one run in order (long-running kinds first), and the discovery failures
    (a part "discovery:<module or kind>" and why)."""
    check_profile(profile)
    problems = [(Part("discovery", mod), f"could not import {mod}: {err}") for mod, err in discover()]
    broken_modules = {p.arg for p, _ in problems}   # reported even with --only: what they register is unknown
    parts = []
    for sp in sorted(REGISTRY.values(), key=lambda s: (s.order, s.kind)):
        try:
            parts += [Part(sp.kind, a) for a in sp.arguments()]
        except Exception as exc:  # a package not there yet, or broken: say so in the report
            problems.append((Part("discovery", f"{sp.kind}s"), f"could not list the {sp.kind} parts: "
                                                               f"{type(exc).__name__}: {exc}"))
    if only:
        known = {p.name for p in parts} | {p.kind for p in parts} | {p.arg[:-1] for p, _ in problems}
        for x in only:
            if x not in known:
                why = "; ".join(w for _, w in problems)
                raise InvalidParameter("only", x, f"must be a part or kind of this run: {', '.join(sorted(known))}"
                                       + (f" (not available: {why})" if why else ""))
        keep = set(only)
        parts = [p for p in parts if p.name in keep or p.kind in keep]
        problems = [p for p in problems if p[0].arg[:-1] in keep or p[0].arg in broken_modules]
    return parts, problems


def part_options(part: Part, profile: str) -> dict:
    """What a part's result depends on besides the code version; a saved result is reused only when equal."""
    sp = REGISTRY.get(part.kind)
    extra = sp.extra_options(part.arg, profile) if sp is not None else {}
    return json.loads(json.dumps({"part": part.name, "profile": profile} | extra, default=str))


def parts_dir(out) -> Path:
    return Path(out) / WORK / "parts"


def load_saved(path, options: dict, version: str) -> dict | None:
    """The saved record at ``path`` if it finished ok with these options under this code version, else None."""
    try:
        rec = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    if rec.get("status") == "ok" and rec.get("options") == options and rec.get("code_version") == version:
        return rec
    return None


def _version_of(path) -> str | None:
    try:
        return json.loads(Path(path).read_text()).get("code_version")
    except (OSError, ValueError, AttributeError):
        return None


@dataclass
class RunState:
    done: list = field(default_factory=list)        # records, in plan order at the end
    reused: list = field(default_factory=list)      # names of parts reused from an earlier run
    executor: dict = field(default_factory=dict)    # what ran the parts (verify.run.execute.Executor.describe)
    code_version: str = ""


def run_parts(out, profile: str = "ci", *, fresh: bool = False, scheduler: str | None = None,
              workers: int | None = None, processes: bool = True, isolate: bool = True,
              only: list[str] | None = None, part_timeout: float | None = None, progress=None) -> RunState:
    """Run (or reuse) every planned part on the executor; ``progress(name, status, seconds, worker)`` is
    called as each finishes (status "reused" for a saved one).

    ``scheduler``/``workers``/``processes``: see verify.run.execute.Executor. ``isolate``: each part in a child
    process with a time limit (``part_timeout``, default the profile's), else in the worker itself.
    """
    check_profile(profile)
    lim = PROFILES[profile]
    address = check_cluster(scheduler, workers)
    pdir = parts_dir(out)
    pdir.mkdir(parents=True, exist_ok=True)
    parts, problems = plan(profile, only)
    state = RunState(code_version=code_version())
    todo = []
    for p in parts:
        opts = part_options(p, profile)
        rec = None if fresh else load_saved(pdir / p.filename, opts, state.code_version)
        if rec is not None:
            state.done.append(rec)
            state.reused.append(p.name)
            if progress:
                progress(p.name, "reused", rec["seconds"], rec.get("worker"))
        else:
            todo.append((p, opts))
    for p, why in problems:
        rec = part_record({"name": p.name, "kind": p.kind, "arg": p.arg, "options": part_options(p, profile),
                           "code_version": state.code_version}, "failed", 0.0, error=why)
        write_json_atomic(pdir / p.filename, rec)
        state.done.append(rec)
    # Saved parts of other code versions can never be reused and would put results of other code into
    # this report; without --only, so would saved parts this run does not plan (a claim since removed, a
    # discovery failure since fixed). Remove them.
    keep = {p.filename for p in parts} | {p.filename for p, _ in problems}
    for f in pdir.glob("*.json"):
        if not only and f.name not in keep:
            f.unlink()
        elif f.name not in keep and _version_of(f) != state.code_version:
            f.unlink()
    if todo:
        timeout = float(part_timeout if part_timeout is not None else lim["part"])
        deadline = time.time() + lim["total"]
        tasks = {p.name: {"name": p.name, "kind": p.kind, "arg": p.arg, "module": REGISTRY[p.kind].module,
                          "profile": profile, "options": opts, "code_version": state.code_version,
                          "timeout": timeout, "deadline": deadline, "budget": lim["total"], "isolate": isolate}
                 for p, opts in todo}
        files = {p.name: p.filename for p, _ in todo}
        # A local cluster no larger than the work; an existing cluster brings its own workers.
        local = None if address else (workers or min(os.cpu_count() or 1, len(todo)))
        with Executor(scheduler, local, processes) as ex:
            state.executor = ex.describe()
            for name, rec in ex.stream(run_task, [(k, (t,)) for k, t in tasks.items()]):
                if isinstance(rec, BaseException):
                    rec = part_record(tasks[name], "failed", 0.0, error=f"{type(rec).__name__}: {rec} (the task "
                                      f"failed on the cluster after {RETRIES} retries, or its workers kept dying)")
                write_json_atomic(pdir / files[name], rec)
                state.done.append(rec)
                if progress:
                    progress(name, rec["status"], rec["seconds"], rec.get("worker"))
    order = {p.name: i for i, p in enumerate(parts)}
    state.done.sort(key=lambda r: order.get(r["part"], len(order)))
    return state


def verify_all(out=DEFAULT_OUT, profile: str = "ci", *, progress=None, on_report=None, **kw) -> dict:
    """Lock OUT, run the parts into OUT/_work/parts, then write the report folder OUT atomically.

    Keyword arguments go to :func:`run_parts`; ``on_report(state)`` is called before the report is
    written. Returns the results dict (also OUT/results.json)."""
    from ..report import write_report
    check_profile(profile)
    t0 = time.perf_counter()
    with folder_lock(out, "out"):
        state = run_parts(out, profile, progress=progress, **kw)
        if on_report:
            on_report(state)
        res = write_report(out, parts_dir(out), profile=profile, wall_seconds=time.perf_counter() - t0,
                           reused=state.reused)
    return res


__all__ = ["Part", "plan", "part_options", "parts_dir", "load_saved", "RunState", "run_parts", "verify_all",
           "DEFAULT_OUT"]
