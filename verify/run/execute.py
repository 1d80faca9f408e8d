"""Where the work runs: one dask.distributed client per run, on a LocalCluster or an existing scheduler.

Default (no set-up): a LocalCluster of worker processes on this machine, one thread each (the parts and
sweep rows are CPU-bound Python). An existing cluster: ``--scheduler tcp://HOST:PORT`` or the
environment variable VERIFY_SCHEDULER (clusters on Slurm, PBS or Kubernetes are started with
dask-jobqueue or dask-kubernetes and pointed at the same way). The cluster is configuration, not code:
the same tasks run on both.

Tasks are submitted with ``pure=False`` and ``retries``; the scheduler also re-runs the tasks of a worker
that is lost (up to ``distributed.scheduler.allowed-failures`` times). Results are streamed back with
``as_completed``, so the caller writes each one (atomically) as it arrives.
"""
from __future__ import annotations

import logging
import os
import uuid
from typing import Callable, Iterable, Iterator

from ..errors import InvalidParameter

ENV_SCHEDULER = "VERIFY_SCHEDULER"
RETRIES = 2          # re-runs of a task that raised (a lost worker's tasks are re-run by the scheduler)
CONNECT_TIMEOUT = "10s"


def scheduler_address(flag: str | None) -> str | None:
    """The scheduler to use: ``--scheduler``, else $VERIFY_SCHEDULER, else None (a LocalCluster)."""
    addr = flag if flag else os.environ.get(ENV_SCHEDULER) or None
    if addr is not None and "://" not in addr and ":" not in addr:
        raise InvalidParameter("scheduler", addr, "must be a Dask scheduler address such as tcp://HOST:8786")
    return addr


def worker_address() -> str:
    """The address of the Dask worker running the calling task ("local" outside a worker)."""
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return "local"


def check_cluster(scheduler: str | None, workers: int | None) -> str | None:
    """The scheduler address to use (see :func:`scheduler_address`); --workers only sizes a local cluster."""
    addr = scheduler_address(scheduler)
    if addr is not None and workers is not None:
        raise InvalidParameter("workers", workers, "sets the size of the local cluster only; the cluster at "
                               f"--scheduler {addr} has its own workers")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InvalidParameter("workers", workers, "must be an integer >= 1")
    return addr


class Executor:
    """One Dask client for one run (a context manager).

    ``scheduler``: an address, or None for a LocalCluster of ``workers`` processes (default: the number
    of cores). ``processes=False`` runs the LocalCluster's workers as threads of this process (tests).
    """

    def __init__(self, scheduler: str | None = None, workers: int | None = None, processes: bool = True):
        self.address = check_cluster(scheduler, workers)
        self.workers = workers or os.cpu_count() or 1
        self.processes = processes
        self.client = self.cluster = None
        self.run_id = uuid.uuid4().hex[:8]

    def __enter__(self) -> "Executor":
        from distributed import Client, LocalCluster
        if self.address is not None:
            try:
                self.client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InvalidParameter("scheduler", self.address, "must be the address of a running Dask scheduler "
                                       f"(start one with `dask scheduler`); connecting failed: {exc}") from None
        else:
            # No dashboard, and the scheduler's HTTP endpoints (/health, /metrics) on a free port: the default
            # 8787 is taken as soon as two clusters run on one machine.
            self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=self.processes,
                                        dashboard_address=None, silence_logs=logging.ERROR,
                                        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"})
            self.client = Client(self.cluster, set_as_default=False)
        return self

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

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
        cancels what has not run.
        """
        from distributed import as_completed
        futures = {}
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
                self.client.cancel(list(futures), force=True)


__all__ = ["Executor", "ENV_SCHEDULER", "RETRIES", "check_cluster", "scheduler_address", "worker_address"]
