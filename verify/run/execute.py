"""Where the work runs: one dask.distributed client per run, on a LocalCluster or an existing scheduler.

Default (no set-up): a LocalCluster of worker processes on this machine, one thread each (the parts and
sweep rows are CPU-bound Python), no more than the machine holds (:func:`local_workers`). An existing
cluster: ``--scheduler tcp://HOST:PORT`` or the environment variable VERIFY_SCHEDULER (clusters on Slurm,
PBS or Kubernetes are started with dask-jobqueue or dask-kubernetes and pointed at the same way). The
cluster is configuration, not code: the same tasks run on both.

Tasks are submitted with ``pure=False`` and ``retries``; the scheduler also re-runs the tasks of a worker
that is lost (up to ``distributed.scheduler.allowed-failures`` times). Results are streamed back with
``as_completed``, so the caller writes each one (atomically) as it arrives.

Ctrl-C: the local workers are started with SIGINT ignored (a disposition their processes inherit), so the
terminal's interrupt reaches only this process; on the way out the client cancels what has not run, asks
every worker to stop the part processes it started (``on_interrupt``), and closes the cluster, with
SIGINT ignored meanwhile so that a second Ctrl-C cannot cut the clean-up short.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import uuid
from typing import Callable, Iterable, Iterator

import psutil

from ..errors import InvalidParameter

ENV_SCHEDULER = "VERIFY_SCHEDULER"
RETRIES = 2          # re-runs of a task that raised (a lost worker's tasks are re-run by the scheduler)
CONNECT_TIMEOUT = "10s"
# Memory one local worker may need: an idle worker holds about 110 MB and its part starter (verify.pipeline.child, the
# toolkit imported) about 170 MB; the part it runs (a process forked from the starter, computing) up to about 1 GB.
# Workers beyond available / this are refused.
WORKER_MEMORY = 1 << 30


def scheduler_address(flag: str | None) -> str | None:
    """The scheduler to use: ``--scheduler``, else $VERIFY_SCHEDULER, else None (a LocalCluster). The address
    must use one of Dask's transports (tcp://, tls://, ...): the dashboard's http:// address is not one."""
    addr = flag if flag else os.environ.get(ENV_SCHEDULER) or None
    if addr is None:
        return None
    if "://" not in addr and ":" not in addr:
        raise InvalidParameter("scheduler", addr, "must be a Dask scheduler address such as tcp://HOST:8786")
    if "://" in addr:
        from distributed.comm.registry import backends  # heavy: distributed
        scheme = addr.split("://", 1)[0]
        if scheme not in backends:
            hint = (" (http:// is the dashboard's address; the scheduler's is printed by `dask scheduler` as "
                    "tcp://HOST:8786)" if scheme in ("http", "https") else "")
            raise InvalidParameter("scheduler", addr, f"must use a Dask transport ({', '.join(f'{b}://' for b in backends)})"
                                   f", such as tcp://HOST:8786{hint}")
    return addr


def worker_address() -> str:
    """The address of the Dask worker running the calling task ("local" outside a worker)."""
    try:
        from distributed import get_worker  # heavy: distributed
        return get_worker().address
    except (ImportError, ValueError):
        return "local"


def report_progress(topic: str, message) -> None:
    """Send ``message`` to the client that subscribed to ``topic`` (:meth:`Executor.subscribe`) from the Dask task
    running now (an event through the scheduler); nothing outside a worker."""
    try:
        from distributed import get_worker  # heavy: distributed
        get_worker().log_event(topic, message)
    except (ImportError, ValueError):
        pass


def check_cluster(scheduler: str | None, workers: int | None) -> str | None:
    """The scheduler address to use (see :func:`scheduler_address`); --workers only sizes a local cluster."""
    addr = scheduler_address(scheduler)
    if addr is not None and workers is not None:
        raise InvalidParameter("workers", workers, "sets the size of the local cluster only; the cluster at "
                               f"--scheduler {addr} has its own workers")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InvalidParameter("workers", workers, "must be an integer >= 1")
    return addr


def check_tmpdir() -> None:
    """Refuse, before a local cluster starts, a $TMPDIR that is not a writable folder: Dask's workers and the parts'
    processes keep their scratch files there (a missing one ends in a worker's traceback, not in one line)."""
    where = os.environ.get("TMPDIR")
    if not where:
        return
    if not os.path.isdir(where) or not os.access(where, os.W_OK | os.X_OK):
        why = "does not exist" if not os.path.exists(where) else "is not a folder" if not os.path.isdir(where) else \
            "cannot be written"
        raise InvalidParameter("TMPDIR", where, f"must be a folder that can be written (it {why}): create it, or "
                               "unset TMPDIR to use the system's temporary folder")


def machine_capacity() -> tuple[int, int, int]:
    """(cores, available memory in bytes, local workers that memory holds at WORKER_MEMORY each)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    avail = psutil.virtual_memory().available
    return cores, avail, max(1, avail // WORKER_MEMORY)


def local_workers(requested: int | None, tasks: int) -> tuple[int, str]:
    """(workers of the LocalCluster, a note when ``requested`` was cut): no more than the cores, than what the
    available memory holds at WORKER_MEMORY each, and than the tasks to run; by default one per core."""
    cores, avail, by_memory = machine_capacity()
    cap = min(cores, by_memory)
    n = max(1, min(requested or cores, cap, tasks))
    if not requested or requested <= cap:
        return n, ""
    return n, (f"--workers {requested}: capped at {cap}, what this machine holds ({cores} cores; "
               f"{avail / 2**30:.1f} GB of available memory holds {by_memory} workers of "
               f"{WORKER_MEMORY / 2**30:.0f} GB)")


@contextlib.contextmanager
def sigint_ignored():
    """SIGINT ignored for the duration (main thread only; elsewhere a no-op). Processes started meanwhile
    inherit the ignored disposition (it survives exec), so a Ctrl-C at the terminal does not reach them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old if old is not None else signal.default_int_handler)


def quiet_distributed_logs() -> None:
    """Raise Dask's loggers to CRITICAL in this process (run on the workers too when a run is interrupted)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


class Executor:
    """One Dask client for one run (a context manager).

    ``scheduler``: an address, or None for a LocalCluster of ``workers`` processes (default: the number
    of cores). ``processes=False`` runs the LocalCluster's workers as threads of this process (tests).
    ``on_interrupt``: a function run on every worker when the run is interrupted (stopping the part processes
    the worker started), before the cluster is closed.
    """

    def __init__(self, scheduler: str | None = None, workers: int | None = None, processes: bool = True,
                 on_interrupt: Callable | None = None):
        self.address = check_cluster(scheduler, workers)
        if self.address is None:
            check_tmpdir()
        self.workers = workers or os.cpu_count() or 1
        self.processes = processes
        self.on_interrupt = on_interrupt
        self.client = self.cluster = None
        self.run_id = uuid.uuid4().hex[:8]
        self.pending: dict = {}

    def __enter__(self) -> "Executor":
        from distributed import Client, LocalCluster  # heavy: distributed
        if self.address is not None:
            try:
                self.client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InvalidParameter("scheduler", self.address, "must be the address of a running Dask scheduler "
                                       f"(start one with `dask scheduler`); connecting failed: {exc}") from None
        else:
            # No dashboard, and the scheduler's HTTP endpoints (/health, /metrics) on a free port: the default
            # 8787 is taken as soon as two clusters run on one machine.
            with sigint_ignored():
                self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=self.processes,
                                            dashboard_address=None, silence_logs=logging.ERROR,
                                            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"})
            self.client = Client(self.cluster, set_as_default=False)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        interrupted = exc_type is not None and issubclass(exc_type, KeyboardInterrupt)
        with sigint_ignored() if interrupted else contextlib.nullcontext():
            if interrupted:
                # the shutdown of an interrupted run logs cancelled tasks and closed comms: not news to the user
                quiet_distributed_logs()
            self._close(interrupted)

    def _close(self, interrupted: bool) -> None:
        if self.client is not None:
            if self.pending:
                with contextlib.suppress(Exception):
                    self.client.cancel(list(self.pending), force=True)
            if interrupted:
                # the workers' own loggers too: a heartbeat that meets the closing scheduler logs an ERROR with a
                # traceback from the worker process (seen under load), which is shutdown noise, not news
                for nanny in (False, True):
                    with contextlib.suppress(Exception):
                        self.client.run(quiet_distributed_logs, nanny=nanny)
            if interrupted and self.on_interrupt is not None:
                with contextlib.suppress(Exception):
                    self.client.run(self.on_interrupt)
            with contextlib.suppress(Exception) if interrupted else contextlib.nullcontext():
                self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception) if interrupted else contextlib.nullcontext():
                self.cluster.close()
        self.client = self.cluster = None
        self.pending = {}

    def subscribe(self, topic: str, handler: Callable) -> None:
        """Call ``handler(message)`` (on the client's event thread) for every message a task of this run sends with
        :func:`report_progress` under ``topic``."""
        self.client.subscribe_topic(topic, lambda event: handler(event[1]))

    def describe(self) -> dict:
        """What ran the work: the kind of cluster, its scheduler and its workers now."""
        info = self.client.scheduler_info() if self.client is not None else {"workers": {}}
        return {"cluster": "scheduler" if self.address else ("local-processes" if self.processes else "local-threads"),
                "scheduler": self.address or (self.client.scheduler.address if self.client else None),
                "workers": sorted(info.get("workers", {}))}

    def stream(self, fn: Callable, tasks: Iterable[tuple[str, tuple]], retries: int = RETRIES
               ) -> Iterator[tuple[str, object]]:
        """Run ``fn(*args)`` for every ``(name, args)``; yield ``(name, result)`` as each finishes.

        A task that still raises after its retries (or whose workers kept dying) yields the exception as
        its result instead of stopping the stream. Stopping early (an exception in the caller, Ctrl-C)
        cancels what has not run (here, or when the executor closes).
        """
        from distributed import as_completed  # heavy: distributed
        futures = self.pending
        for i, (name, args) in enumerate(tasks):
            fut = self.client.submit(fn, *args, key=f"verify-{self.run_id}-{i}-{name}", pure=False,
                                     retries=retries, priority=-i)
            futures[fut] = name
        try:
            for fut in as_completed(list(futures), loop=self.client.loop):
                try:
                    res = fut.result()
                except Exception as exc:  # the task's own error (after retries) or KilledWorker: a result
                    res = exc
                yield futures.pop(fut), res
        finally:
            if futures:
                with contextlib.suppress(Exception):
                    self.client.cancel(list(futures), force=True)


__all__ = ["Executor", "ENV_SCHEDULER", "RETRIES", "WORKER_MEMORY", "check_cluster", "check_tmpdir",
           "scheduler_address", "worker_address", "report_progress", "local_workers", "machine_capacity", "sigint_ignored"]
