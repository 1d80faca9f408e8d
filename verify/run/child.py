"""Running one part on a worker: in a child process with a time limit (default), or in the worker itself.

Dask cannot stop a running task, so :func:`run_task` starts the part as a child process
(:data:`CHILD_ENTRY` with TASK OUT) in its own process group and watches it: when the CPU time of the
part's processes passes its CPU guard, or its wall time passes its wall guard (verify.model.profiles), it
kills the group by its pid: the part is recorded as a timeout, with the guard that tripped, and the worker
is free for the next task at once. Every record says the CPU seconds the part used. The child also exits
when its worker dies (it watches its parent's pid), so a lost worker leaves no orphan running, and removes
its scratch folder (``verify-part-*``) on the way. An interrupted run asks every worker to
:func:`stop_children` before the cluster closes. ``task["isolate"] = False`` runs the part in the worker
process itself (no guard; the tests use it with in-process workers).

The task (what the client sends) and the record (what comes back) are small JSON-ready dicts; the
client saves the record, atomically.
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from ..jsonable import jsonable
from .execute import worker_address
from .parts import plugin_modules, source_root, spec
from .version import code_version

STATUS = ("ok", "failed", "timeout", "skipped")
# How a part process starts: an import of this module and a call, not ``-m verify.run.child`` (runpy would run
# this module a second time as __main__, beside the copy the package's own imports load).
CHILD_ENTRY = "import sys; from verify.run.child import main; main(sys.argv[1:])"
# The part processes this worker process runs now: process group -> scratch folder (see stop_children).
RUNNING: dict[int, str] = {}


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def part_record(task: dict, status: str, seconds: float, result=None, error=None, worker=None,
                cpu_seconds: float | None = None) -> dict:
    """The saved form of one part's outcome (OUT/_work/parts/<part>.json; verify.report reads it): ``seconds``
    of wall time and ``cpu_seconds`` of CPU time (user + system, the part's child processes included)."""
    if status not in STATUS:
        raise ValueError(f"status must be one of {STATUS}, not {status!r}")
    return {"part": task["name"], "kind": task["kind"], "arg": task["arg"], "options": task["options"],
            "code_version": task["code_version"], "status": status, "seconds": round(seconds, 3),
            "cpu_seconds": None if cpu_seconds is None else round(cpu_seconds, 3),
            "finished": now_utc(), "worker": worker, "error": error, "result": result}


def cpu_now() -> float:
    """CPU seconds (user + system) of this process and of its children that have been waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def json_ready(obj):
    """``obj`` as strict JSON reads it back (verify.jsonable: numpy booleans stay booleans, arrays become lists,
    non-finite floats the strings "nan", "inf", "-inf"), after a JSON round trip, so what is saved is exactly
    what the report reads."""
    return json.loads(json.dumps(jsonable(obj), allow_nan=False))


def run_here(task: dict, worker: str | None = None) -> dict:
    """Run the part in this process; a part that raises is a "failed" record with its traceback."""
    t0, c0 = time.perf_counter(), cpu_now()
    try:
        if task.get("module"):
            importlib.import_module(task["module"])
        for mod in plugin_modules():          # after the part's module: a plug-in may wrap its part
            importlib.import_module(mod)
        sp = spec(task["kind"])
        result = json_ready(sp.run(task["arg"], task["profile"], task.get("convention")))
        rec = part_record(task, "ok", time.perf_counter() - t0, result=result, worker=worker,
                          cpu_seconds=cpu_now() - c0)
        if not sp.applies(task.get("convention")):
            rec["convention_note"] = sp.convention_note()
        return rec
    except Exception as exc:
        return part_record(task, "failed", time.perf_counter() - t0, worker=worker, cpu_seconds=cpu_now() - c0,
                           error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def waited_children_cpu() -> float:
    """CPU seconds (user + system) of the child processes of this process that have been waited for."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) used so far by the process ``pid`` and every process below it (None once it
    is gone)."""
    import psutil
    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return None
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + (t.children_user + t.children_system if p is root else 0.0)
    return total


POLL_SECONDS = 0.5     # how often a running part's CPU and wall time are compared with its guards


def run_in_child(task: dict, guard: dict, worker: str | None = None) -> dict:
    """Run the part in a child process; kill its process group when its CPU time passes ``guard["cpu"]``
    seconds (None: no CPU guard) or its wall time ``guard["wall"]``; ``guard["why"]`` says where the limits
    come from, for the record."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(source_root()), env.get("PYTHONPATH", "")) if p)
    t0, c0 = time.perf_counter(), waited_children_cpu()
    remove_stale_scratch()
    tmp = Path(tempfile.mkdtemp(prefix="verify-part-"))
    cpu = 0.0
    try:
        (tmp / "worker.pid").write_text(str(os.getpid()))
        tfile, ofile = tmp / "task.json", tmp / "record.json"
        tfile.write_text(json.dumps(task))
        with open(tmp / "stderr.txt", "w+b") as err:
            proc = subprocess.Popen([sys.executable, "-c", CHILD_ENTRY, str(tfile), str(ofile)], env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True)
            RUNNING[proc.pid] = str(tmp)
            try:
                tripped = None
                while tripped is None:
                    try:
                        proc.wait(timeout=POLL_SECONDS)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    cpu = tree_cpu_seconds(proc.pid) or cpu
                    wall = time.perf_counter() - t0
                    if guard.get("cpu") is not None and cpu > guard["cpu"]:
                        tripped = f"its CPU time passed {guard['cpu']:.0f} s"
                    elif wall > guard["wall"]:
                        tripped = f"its wall time passed {guard['wall']:.0f} s"
                if tripped is not None:
                    _kill_group(proc)
                    cpu = max(cpu, waited_children_cpu() - c0)
                    wall = time.perf_counter() - t0
                    return part_record(task, "timeout", wall, worker=worker, cpu_seconds=cpu,
                                       error=f"stopped (process group {proc.pid}) after {wall:.0f} s of wall time "
                                             f"and {cpu:.0f} s of CPU time: {tripped} ({guard['why']})")
            except BaseException:   # the worker is shutting down: take the child with it
                _kill_group(proc)
                raise
            finally:
                RUNNING.pop(proc.pid, None)
            err.seek(0)
            stderr = err.read().decode(errors="replace")[-4000:]
        try:
            rec = json.loads(ofile.read_text())
        except (OSError, ValueError):
            return part_record(task, "failed", time.perf_counter() - t0, worker=worker,
                               cpu_seconds=waited_children_cpu() - c0,
                               error=f"the part's process exited with status {proc.returncode} without a result: "
                                     f"{stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rec["worker"] = worker
    # the whole part process, its start-up and imports included (a worker runs one part at a time, so the CPU
    # time of the children it has waited for grew by this part's alone)
    rec["cpu_seconds"] = round(waited_children_cpu() - c0, 3)
    return rec


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:        # another user's process: alive
        return True
    return True


def remove_stale_scratch() -> None:
    """Remove the ``verify-part-*`` folders whose worker is gone: a worker killed outright (SIGKILL) after its part
    process wrote the record but before the worker could remove the folder. Folders without a ``worker.pid``
    are not judged."""
    for folder in Path(tempfile.gettempdir()).glob("verify-part-*"):
        try:
            pid = int((folder / "worker.pid").read_text())
        except (OSError, ValueError):
            continue
        if not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)


def stop_children() -> int:
    """Kill every part process this worker runs (their process groups) and remove their scratch folders: what
    an interrupted run asks of each worker before the cluster closes. Returns how many were stopped."""
    n = 0
    for pgid, folder in list(RUNNING.items()):
        try:
            os.killpg(pgid, signal.SIGKILL)
            n += 1
        except ProcessLookupError:
            pass
        shutil.rmtree(folder, ignore_errors=True)
    return n


def run_task(task: dict) -> dict:
    """The Dask task of one part: check the code version, then run it under its guard.

    ``task``: name, kind, arg, module, profile, options, code_version, guard ({"cpu": seconds or None, "wall":
    seconds, "why": text}: see :func:`run_in_child`), isolate.
    """
    worker = worker_address()
    mine = code_version()
    if mine != task["code_version"]:
        return part_record(task, "failed", 0.0, worker=worker,
                           error=f"worker {worker} runs other code (version {mine}) than the client "
                                 f"({task['code_version']}): install the same verify on every worker")
    if not task.get("isolate", True):
        return run_here(task, worker)
    return run_in_child(task, task["guard"], worker)


def _watch_parent(scratch: Path) -> int:
    """Exit when the parent (the worker) is gone, removing the scratch folder it can no longer remove, so a
    lost worker leaves neither a part running nor a ``verify-part-*`` folder behind. Returns the parent's pid."""
    parent = os.getppid()

    def watch():
        while True:
            if os.getppid() != parent:
                shutil.rmtree(scratch, ignore_errors=True)
                os._exit(3)
            time.sleep(0.25)
    threading.Thread(target=watch, daemon=True).start()
    return parent


def main(argv: list[str]) -> None:
    """Child entry point (:data:`CHILD_ENTRY`): run the part of TASK.json, write its record to RECORD.json."""
    from .atomic import write_json_atomic
    scratch = Path(argv[1]).parent
    parent = _watch_parent(scratch)
    task = json.loads(Path(argv[0]).read_text())
    rec = run_here(task)
    if os.getppid() != parent:        # the worker died while the part ran: nobody will read the record
        shutil.rmtree(scratch, ignore_errors=True)
        return
    # never recreate a scratch folder that an interrupted run has already removed
    write_json_atomic(argv[1], rec, make_parents=False)


__all__ = ["run_task", "run_here", "run_in_child", "tree_cpu_seconds", "waited_children_cpu", "cpu_now", "stop_children",
           "part_record", "json_ready", "STATUS", "RUNNING"]
