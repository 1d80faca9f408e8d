"""Running one part on a worker: in a child process with a time limit (default), or in the worker itself.

Dask cannot stop a running task, so :func:`run_task` starts the part as a process of its own, in its own process
group, and watches it. The part process is forked from the worker's part starter (:class:`Starter`: a process the
worker starts once, which imports the toolkit, SymPy and numpy once, :data:`PRELOAD`), so a part does not pay the
interpreter's start and those imports again (about 2 CPU seconds a part); JAX, whose threads do not survive a
fork, is never imported by the starter. The worker watches the part process: when the CPU time of the
part's processes passes its CPU guard, or its wall time passes its wall guard (verify.model.profiles), it
kills the group by its pid: the part is recorded as a timeout, with the guard that tripped, and the worker
is free for the next task at once. Every record says the CPU seconds the part used (its own process and the
processes it waited for; the starter's imports, shared by the worker's parts, are not in any part's). The starter
exits when its worker dies (its stdin, a pipe from the worker, closes) and the part process when its starter does
(it watches its parent's pid), so a lost worker leaves no orphan running, and the part process removes its
scratch folder (``verify-part-*``) on the way. An interrupted run asks every worker to
:func:`stop_children` before the cluster closes. ``task["isolate"] = False`` runs the part in the worker
process itself (no guard; the tests use it with in-process workers).

The task (what the client sends) and the record (what comes back) are small JSON-ready dicts; the
client saves the record, atomically.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import psutil

from ..report import part_figures
from ..run.atomic import write_json_atomic
from ..run.execute import worker_address
from ..run.jsonable import jsonable
from ..run.parts import STATUS, discover, plugin_modules, source_root, spec
from ..run.version import code_version
# How the part starter starts: an import of this module and a call, not ``-m verify.pipeline.child`` (runpy would run
# this module a second time as __main__, beside the copy the package's own imports load).
# Its argument is the worker's temporary folder (where the parts' scratch folders go), so that folder is on its command
# line, and on its part processes' (forked, they keep it), for anyone looking for the processes of a run.
STARTER_ENTRY = "import sys; from verify.pipeline.child import serve; serve(sys.argv[1:])"
# What the starter imports once for all the parts it forks, besides every module that registers parts
# (verify.run.parts.part_modules): the libraries the parts import on first use. Never JAX (it starts threads, which
# a fork does not copy): a part that needs it imports it in its own process.
PRELOAD = ("numpy", "sympy", "mpmath", "numba", "scipy.special", "hypothesis", "verify.report.figures")
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
    """``obj`` as strict JSON reads it back (verify.run.jsonable: numpy booleans stay booleans, arrays become lists,
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
        # the part's figures, drawn here on the worker (the report takes them from the record)
        figures = part_figures({"part": task["name"], "kind": task["kind"], "arg": task["arg"], "status": "ok",
                                "result": result})
        rec = part_record(task, "ok", time.perf_counter() - t0, result=result, worker=worker,
                          cpu_seconds=cpu_now() - c0)
        if figures:
            rec["figures"] = figures
        if not sp.applies(task.get("convention")):
            rec["convention_note"] = sp.convention_note()
        return rec
    except Exception as exc:
        return part_record(task, "failed", time.perf_counter() - t0, worker=worker, cpu_seconds=cpu_now() - c0,
                           error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}")


def _kill_group(pid: int) -> None:
    """Kill the part process ``pid`` and its process group (its own, once it has called setsid), and wait until it
    is gone."""
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass
    try:
        psutil.Process(pid).wait(timeout=30)
    except (psutil.Error, OSError):
        pass


class Starter:
    """The worker's part starter: a process that imports PRELOAD and the part modules once, then forks one part
    process per request (one JSON line on its stdin: the task and record files, the scratch folder, the worker's
    environment) and answers with the new process's pid. It exits when its stdin closes (its worker is gone)."""

    def __init__(self, env: dict):
        self.proc = subprocess.Popen([sys.executable, "-c", STARTER_ENTRY, tempfile.gettempdir()], env=env,
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
                                     text=True)
        self.lock = threading.Lock()

    def start(self, msg: dict) -> int:
        """Fork a part process for ``msg``; its pid (OSError when the starter is gone)."""
        with self.lock:
            if self.proc.poll() is not None:
                raise OSError(f"the part starter exited with status {self.proc.returncode}")
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            raise OSError(f"the part starter answered {line!r}")
        return int(line)


STARTERS: dict[str, Starter] = {}     # environment's hash -> this worker's starter (one at a time)
_STARTERS_LOCK = threading.Lock()


def start_part(msg: dict, env: dict) -> int:
    """Fork a part process from this worker's starter for ``env``: the modules a starter loaded were found with its
    environment's PYTHONPATH, so another environment gets a new starter and the old one is let go (it exits once its
    part processes have finished); a starter that is gone is replaced once."""
    key = hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()
    for attempt in (1, 2):
        with _STARTERS_LOCK:
            for other in [k for k in STARTERS if k != key]:
                with contextlib.suppress(OSError):
                    STARTERS.pop(other).proc.stdin.close()
            st = STARTERS.get(key)
            if st is None or st.proc.poll() is not None:
                st = STARTERS[key] = Starter(env)
        try:
            return st.start(msg)
        except (OSError, ValueError):
            with _STARTERS_LOCK:
                STARTERS.pop(key, None)
            if attempt == 2:
                raise


def serve(argv: list[str]) -> None:
    """The part starter's loop (:data:`STARTER_ENTRY`, ``argv``: the worker's temporary folder): import PRELOAD and
    the part modules, then fork a part process for every request line on stdin and print its pid. When stdin closes,
    return at once if the worker is gone (its part processes see this starter go and stop), else (the worker let this
    starter go) once the part processes it started have finished."""
    tempfile.tempdir = argv[0] if argv else None
    parent = os.getppid()
    for mod in PRELOAD:
        try:
            importlib.import_module(mod)
        except Exception:   # noqa: BLE001 - a library that cannot be imported fails in the part that needs it, named
            pass
    discover()              # a module that fails to import fails again in its part, with its error
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)     # the part processes are reaped by the system, never waited for
    started = []
    for line in iter(sys.stdin.readline, ""):
        msg = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _part_process(msg)                         # never returns
        started.append(pid)
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()
    while os.getppid() == parent and any(_alive(p) for p in started):
        time.sleep(0.25)


def _part_process(msg: dict) -> None:
    """The forked part process: its own session (so its group can be stopped), the worker's environment, stdout to
    /dev/null and stderr to the scratch folder's file, fresh random seeds (as a new interpreter's), then :func:`main`."""
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.environ.clear()
        os.environ.update(msg["env"])
        null = os.open(os.devnull, os.O_RDWR)
        err = os.open(msg["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(err, 2)
        sys.stdin = open(os.devnull)
        sys.stdout = open(os.devnull, "w")
        sys.stderr = open(2, "w", closefd=False)
        random.seed()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        main([msg["task"], msg["record"]])
        code = 0
    except BaseException:    # noqa: BLE001 - the worker reads stderr's tail when there is no record
        traceback.print_exc()
    finally:
        try:
            sys.stderr.flush()
        finally:
            os._exit(code)


SCRATCH_PREFIX = "verify-part-"   # a part's scratch folder: verify-part-PID-START-* (its worker's pid and start)
POLL_SECONDS = 0.5     # how often a running part's CPU and wall time are compared with its guards


def run_in_child(task: dict, guard: dict, worker: str | None = None) -> dict:
    """Run the part in a process forked from this worker's starter (:func:`start_part`); kill its process group when
    its CPU time passes ``guard["cpu"]`` seconds (None: no CPU guard) or its wall time ``guard["wall"]``;
    ``guard["why"]`` says where the limits come from, for the record."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(source_root()), env.get("PYTHONPATH", "")) if p)
    t0 = time.perf_counter()
    remove_stale_scratch()
    # the folder's name says whose it is (pid and start time, read by remove_stale_scratch) from the moment it
    # exists: a worker killed between creating it and writing into it leaves nothing unattributed
    tmp = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{_owner_stamp(os.getpid())}-"))
    cpu = 0.0
    try:
        tfile, ofile, efile = tmp / "task.json", tmp / "record.json", tmp / "stderr.txt"
        tfile.write_text(json.dumps(task))
        efile.write_bytes(b"")
        pid = start_part({"task": str(tfile), "record": str(ofile), "stderr": str(efile), "env": env}, env)
        RUNNING[pid] = str(tmp)
        try:
            try:
                proc = psutil.Process(pid)
            except psutil.NoSuchProcess:
                proc = None
            tripped = None
            while tripped is None and proc is not None:
                try:
                    proc.wait(timeout=POLL_SECONDS)
                    break
                except psutil.TimeoutExpired:
                    pass
                except psutil.NoSuchProcess:
                    break
                cpu = tree_cpu_seconds(pid) or cpu
                wall = time.perf_counter() - t0
                if guard.get("cpu") is not None and cpu > guard["cpu"]:
                    tripped = f"its CPU time passed {guard['cpu']:.0f} s"
                elif wall > guard["wall"]:
                    tripped = f"its wall time passed {guard['wall']:.0f} s"
            if tripped is not None:
                _kill_group(pid)
                wall = time.perf_counter() - t0
                return part_record(task, "timeout", wall, worker=worker, cpu_seconds=cpu,
                                   error=f"stopped (process group {pid}) after {wall:.0f} s of wall time "
                                         f"and {cpu:.0f} s of CPU time: {tripped} ({guard['why']})")
        except BaseException:   # the worker is shutting down: take the part process with it
            _kill_group(pid)
            raise
        finally:
            RUNNING.pop(pid, None)
        try:
            rec = json.loads(ofile.read_text())
        except (OSError, ValueError):
            stderr = efile.read_bytes().decode(errors="replace")[-4000:]
            return part_record(task, "failed", time.perf_counter() - t0, worker=worker, cpu_seconds=cpu,
                               error=f"the part's process (pid {pid}) exited without a result: {stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rec["worker"] = worker
    return rec


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) used so far by the process ``pid`` and every process below it (None once it
    is gone)."""
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:        # another user's process: alive
        return True
    return True


def _owner_stamp(pid: int) -> str | None:
    """"PID-START": the process ``pid`` and its start time in milliseconds (a pid the system reused names another
    process, with another start time); None when no such process runs (a zombie, dead but not yet reaped by a
    parent that may never reap it, does not run)."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return f"{pid}-{int(proc.create_time() * 1000)}"
    except psutil.Error:
        return None


def owner_gone(folder: Path) -> bool | None:
    """Whether the worker a ``verify-part-PID-START-*`` folder's name gives is gone (None: a name of another form)."""
    parts = folder.name[len(SCRATCH_PREFIX):].split("-")
    if not folder.name.startswith(SCRATCH_PREFIX) or len(parts) < 3 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return _owner_stamp(int(parts[0])) != f"{parts[0]}-{parts[1]}"


def remove_stale_scratch() -> None:
    """Remove the ``verify-part-PID-START-*`` folders whose worker is gone (no process PID started at START): a
    worker killed outright (SIGKILL) after creating its folder, before it could remove it. A folder named
    otherwise is not judged."""
    for folder in Path(tempfile.gettempdir()).glob(SCRATCH_PREFIX + "*"):
        if owner_gone(folder):
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
    """Exit when the parent (the starter) or the worker the scratch folder's name gives is gone, removing the
    folder they can no longer remove, so a lost worker leaves neither a part running nor a ``verify-part-*`` folder
    behind. Returns the parent's pid. (The worker is watched by name too: a part forked as its starter was being
    killed starts orphaned, its parent already the reaper.)"""
    parent = os.getppid()

    def watch():
        while True:
            if os.getppid() != parent or owner_gone(scratch):
                shutil.rmtree(scratch, ignore_errors=True)
                os._exit(3)
            time.sleep(0.25)
    threading.Thread(target=watch, daemon=True).start()
    return parent


def main(argv: list[str]) -> None:
    """The part process's work (forked by :func:`serve`): run the part of TASK.json, write its record to
    RECORD.json."""
    scratch = Path(argv[1]).parent
    parent = _watch_parent(scratch)
    task = json.loads(Path(argv[0]).read_text())
    rec = run_here(task)
    if os.getppid() != parent:        # the worker died while the part ran: nobody will read the record
        shutil.rmtree(scratch, ignore_errors=True)
        return
    # never recreate a scratch folder that an interrupted run has already removed
    write_json_atomic(argv[1], rec, make_parents=False)


__all__ = ["run_task", "run_here", "run_in_child", "start_part", "serve", "Starter", "STARTERS", "PRELOAD",
           "tree_cpu_seconds", "cpu_now", "stop_children",
           "part_record", "json_ready", "STATUS", "RUNNING"]
