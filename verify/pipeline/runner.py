"""``verify all``: plan the parts, run them on the Dask executor, save each record, then build the report.

The parts themselves live with what they compute and register with :func:`verify.run.parts.part`; this
module only plans and executes. Each finished part is saved by the client, atomically, as
OUT/_work/parts/<part>.json, together with the options it ran with and the code version (a hash of
the sources, :mod:`verify.run.version`). An interrupted or repeated run resumes: a part whose record
finished "ok" with the same options and the same code version is not run again; editing a source file
makes every part run again. A part that raises, or that its guard stops (:func:`part_guard`: a CPU-time
limit scaled by the machine's measured slowness, and a wall-time limit well above it; there is no budget for
all parts together, so a slow or busy machine finishes every part, only later), is recorded with that status
and its error; it never stops the run, and :func:`unfinished` names it for the command to report. The report
folder is then built beside OUT and swapped into place (verify.run.atomic), so a report is complete or absent.
A lock on OUT (verify.run.lock) turns a second concurrent run on the same OUT into a clear error.

Nothing computed is lost: a record that cannot be written into OUT (a full disk) is kept in a
``verify-unsaved-*`` folder and the run stops with :class:`verify.errors.OutputError` saying where; Ctrl-C
stops the run (:class:`verify.errors.Interrupted`) after the workers have stopped their part processes,
with every finished part saved, so the same command resumes.

A convention (a dict of make_setting keywords, e.g. ``{"loss": "mean"}``) can be given to a run: it is
recorded in every part's options (so it keys the saved results, as the profile does) and handed to every
part function that takes a ``convention`` keyword (verify.run.parts); a part that does not take one runs
as always and its record says that the convention did not apply to it.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Interrupted, InvalidParameter, OutputError, suggest
from ..model.profiles import PROFILES, WALL_PER_CPU, check_profile
from ..report import write_report
from ..run.atomic import WORK, json_bytes, keep_elsewhere, recover_folder, write_json_atomic
from ..run.execute import RETRIES, Executor, check_cluster, local_workers
from ..run.lock import folder_lock
from ..run.parts import REGISTRY, Part, discover
from ..run.speed import slowness
from ..run.version import code_version
from .child import part_record, run_task, stop_children

DEFAULT_OUT = "reports/latest"     # gitignored; the committed example lives in reports/example


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
                                       + suggest(x, sorted(known)) + (f" (not available: {why})" if why else ""))
        keep = set(only)
        parts = [p for p in parts if p.name in keep or p.kind in keep]
        problems = [p for p in problems if p[0].arg[:-1] in keep or p[0].arg in broken_modules]
    return parts, problems


def part_options(part: Part, profile: str, convention: dict | None = None) -> dict:
    """What a part's result depends on besides the code version; a saved result is reused only when equal.
    A non-empty ``convention`` is one of them (the reference convention adds nothing, so its saved parts stay
    valid)."""
    sp = REGISTRY.get(part.kind)
    extra = sp.extra_options(part.arg, profile) if sp is not None else {}
    conv = {"convention": dict(convention)} if convention else {}
    return json.loads(json.dumps({"part": part.name, "profile": profile} | conv | extra, default=str))


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
    notes: list = field(default_factory=list)       # what the user should know (e.g. --workers capped)
    guard: dict = field(default_factory=dict)       # the parts' guard of this run (part_guard)


def save_record(path: Path, rec: dict, saved: int) -> None:
    """Write one part's record atomically; when that fails (a full disk), keep it elsewhere and stop the run
    with an OutputError saying where (``saved``: how many parts of this run are already in the folder)."""
    try:
        write_json_atomic(path, rec)
    except OSError as exc:
        kept = keep_elsewhere({path.name: json_bytes(rec)}, "parts")
        where = (f"the part {rec['part']} just computed was kept in {kept / path.name} (copy it into {path.parent} "
                 "to reuse it)" if kept else f"the part {rec['part']} just computed could not be kept anywhere")
        raise OutputError(path, exc.strerror or str(exc), f"{where}; the {saved} parts finished before it are saved "
                          f"in {path.parent}: free some space and run the same command again to resume") from None


def reuse_saved(parts: list, pdir: Path, profile: str, convention, fresh: bool, state: RunState,
                progress) -> list:
    """The planned parts to run, (part, options) each; the others are reused from their saved records."""
    todo = []
    for p in parts:
        opts = part_options(p, profile, convention)
        rec = None if fresh else load_saved(pdir / p.filename, opts, state.code_version)
        if rec is not None:
            state.done.append(rec)
            state.reused.append(p.name)
            if progress:
                progress(p.name, "reused", rec["seconds"], rec.get("worker"))
        else:
            todo.append((p, opts))
    return todo


def prune_saved(pdir: Path, keep: set, only, version: str) -> None:
    """Remove saved parts that can never be reused and would put results of other code into this report:
    those of other code versions and, without --only, those this run does not plan (a claim since removed, a
    discovery failure since fixed)."""
    for f in pdir.glob("*.json"):
        if f.name not in keep and (not only or _version_of(f) != version):
            f.unlink()


def part_guard(profile: str, part_timeout: float | None = None, factor: float | None = None) -> dict:
    """The guard of every part of a run: ``{"cpu": seconds or None, "wall": seconds, "why": text, "slowness":
    factor}``. By default the profile's CPU-time limit times this machine's slowness (verify.run.speed, measured
    unless ``factor`` is given), and WALL_PER_CPU times that as the wall-time limit; with ``part_timeout``
    (--timeout) that many seconds of wall time, as the user asked, and no CPU limit."""
    if part_timeout is not None:
        return {"cpu": None, "wall": float(part_timeout), "slowness": None,
                "why": f"the part's time limit of {part_timeout:g} s of wall time (--timeout)"}
    f = slowness() if factor is None else factor
    cpu = PROFILES[profile]["part"] * f
    return {"cpu": cpu, "wall": cpu * WALL_PER_CPU, "slowness": round(f, 2),
            "why": f"the {profile} profile's guard against a hang: {PROFILES[profile]['part']} CPU seconds x "
                   f"{f:.2f} (this machine's measured slowness), {WALL_PER_CPU}x that of wall time"}


def execute(todo: list, pdir: Path, profile: str, state: RunState, *, scheduler, workers, processes: bool,
            isolate: bool, part_timeout, convention, progress) -> None:
    """Run the parts of ``todo`` on the executor, saving each record as it arrives (:func:`save_record`)."""
    state.guard = guard = part_guard(profile, part_timeout)
    tasks = {p.name: {"name": p.name, "kind": p.kind, "arg": p.arg, "module": REGISTRY[p.kind].module,
                      "profile": profile, "options": opts, "code_version": state.code_version,
                      "guard": guard, "isolate": isolate}
                      | ({"convention": dict(convention)} if convention else {})
             for p, opts in todo}
    files = {p.name: p.filename for p, _ in todo}
    local = None
    if scheduler is None:
        local, note = local_workers(workers, len(todo))
        state.notes += [note] if note else []
    with Executor(scheduler, local, processes, on_interrupt=stop_children if isolate else None) as ex:
        state.executor = ex.describe()
        for name, rec in ex.stream(run_task, [(k, (t,)) for k, t in tasks.items()]):
            if isinstance(rec, BaseException):
                rec = part_record(tasks[name], "failed", 0.0, error=f"{type(rec).__name__}: {rec} (the task "
                                  f"failed on the cluster after {RETRIES} retries, or its workers kept dying)")
            save_record(pdir / files[name], rec, len(list(pdir.glob("*.json"))))
            state.done.append(rec)
            if progress:
                progress(name, rec["status"], rec["seconds"], rec.get("worker"))


def run_parts(out, profile: str = "ci", *, fresh: bool = False, scheduler: str | None = None,
              workers: int | None = None, processes: bool = True, isolate: bool = True,
              only: list[str] | None = None, part_timeout: float | None = None, progress=None,
              convention: dict | None = None) -> RunState:
    """Run (or reuse) every planned part on the executor; ``progress(name, status, seconds, worker)`` is
    called as each finishes (status "reused" for a saved one).

    ``scheduler``/``workers``/``processes``: see verify.run.execute.Executor (``workers`` is capped at what the
    machine holds; ``RunState.notes`` says so). ``isolate``: each part in a child process under its guard
    (:func:`part_guard`; ``part_timeout`` a wall-time limit instead), else in the worker itself. ``convention``:
    see the module docstring. Ctrl-C raises :class:`verify.errors.Interrupted` once the run has stopped cleanly.
    """
    check_profile(profile)
    address = check_cluster(scheduler, workers)
    pdir = parts_dir(out)
    pdir.mkdir(parents=True, exist_ok=True)
    parts, problems = plan(profile, only)
    state = RunState(code_version=code_version())
    todo = reuse_saved(parts, pdir, profile, convention, fresh, state, progress)
    for p, why in problems:
        rec = part_record({"name": p.name, "kind": p.kind, "arg": p.arg, "options": part_options(p, profile, convention),
                           "code_version": state.code_version}, "failed", 0.0, error=why)
        save_record(pdir / p.filename, rec, len(state.done))
        state.done.append(rec)
    prune_saved(pdir, {p.filename for p in parts} | {p.filename for p, _ in problems}, only, state.code_version)
    if todo:
        try:
            execute(todo, pdir, profile, state, scheduler=address, workers=workers, processes=processes,
                    isolate=isolate, part_timeout=part_timeout, convention=convention, progress=progress)
        except KeyboardInterrupt:
            n = len(list(pdir.glob("*.json")))
            raise Interrupted(f"interrupted: {n} finished parts are saved in {pdir}; run the same command again "
                              "to resume") from None
    order = {p.name: i for i, p in enumerate(parts)}
    state.done.sort(key=lambda r: order.get(r["part"], len(order)))
    return state


def unfinished(records: list) -> list[tuple[str, str, str]]:
    """(part, status, why) of every record that did not finish "ok", in the records' order: what a run must
    report as not done, and what running it again recomputes."""
    out = []
    for r in records:
        if r.get("status") != "ok":
            why = (r.get("error") or "").strip().splitlines()
            out.append((r["part"], r.get("status") or "unknown", why[0] if why else ""))
    return out


def verify_all(out=DEFAULT_OUT, profile: str = "ci", *, progress=None, on_report=None, **kw) -> dict:
    """Lock OUT, run the parts into OUT/_work/parts, then write the report folder OUT atomically.

    Keyword arguments go to :func:`run_parts`; ``on_report(state)`` is called before the report is
    written. Returns the results dict (also OUT/results.json), with ``"unfinished"`` (:func:`unfinished`) and
    ``"guard"`` (:func:`part_guard`, empty when every part was reused) added."""
    check_profile(profile)
    t0 = time.perf_counter()
    with folder_lock(out, "out"):
        state = run_parts(out, profile, progress=progress, **kw)
        if on_report:
            on_report(state)
        try:
            res = write_report(out, parts_dir(out), profile=profile, wall_seconds=time.perf_counter() - t0,
                               reused=state.reused)
        except OSError as exc:
            recover_folder(out)              # remove the half-built report beside OUT; OUT stays as it was
            raise OutputError(out, exc.strerror or str(exc), f"the {len(state.done)} parts are saved in "
                              f"{parts_dir(out)}: `verify report --from {out} --out ELSEWHERE` writes the report "
                              "elsewhere, or free some space and run the same command again") from None
    return res | {"unfinished": unfinished(state.done), "guard": state.guard}


__all__ = ["Part", "plan", "part_options", "parts_dir", "load_saved", "RunState", "run_parts", "verify_all",
           "part_guard", "unfinished",
           "DEFAULT_OUT"]
