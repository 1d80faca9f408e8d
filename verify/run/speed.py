"""How slow this machine is next to the reference machine: the factor that scales the parts' guards.

A fixed workload (exact rational arithmetic and a small floating-point loop, the kind of work the parts do) is
timed in CPU seconds, best of a few repeats, and compared with its time on the reference machine
(:data:`REFERENCE_CPU_SECONDS`). CPU time, not wall time: on a machine busy with other work a process gets less
of a core, and its wall time grows while its CPU time does not, so the factor measures the processor, and the
wall-time guard (verify.model.profiles.WALL_PER_CPU) leaves room for the load. The factor is never below 1: a
faster machine keeps the reference guards.
"""
from __future__ import annotations

import json
import time
from fractions import Fraction
from pathlib import Path

from .parts import source_root

# CPU seconds of one :func:`workload` on the reference machine (2 cores, the README's figures; best of 5,
# measured with `python -c "from verify.run.speed import workload_seconds; print(workload_seconds(5))"`).
REFERENCE_CPU_SECONDS = 0.060
REPEATS = 3


def workload() -> float:
    """A fixed computation: a few hundred exact rational steps of a logistic-like map and a float loop."""
    x = Fraction(1, 3)
    for _ in range(40):
        x = x * (1 - x) * Fraction(7, 2)
        x = Fraction(round(x * 10**12), 10**12)       # keep the denominators bounded
    s = 0.0
    for i in range(1, 400_000):
        s += (i % 7) / i
    return float(x) + s


def workload_seconds(repeats: int = REPEATS) -> float:
    """The least CPU time of ``repeats`` runs of :func:`workload` in this process (the least is the least
    disturbed by other processes sharing the core's caches)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        workload()
        best = min(best, time.process_time() - t0)
    return best


def slowness(repeats: int = REPEATS) -> float:
    """How many times slower than the reference machine this one computes (at least 1)."""
    return max(1.0, workload_seconds(repeats) / REFERENCE_CPU_SECONDS)


def reference_part_seconds(root: Path | None = None) -> dict[str, float]:
    """The wall seconds each part of ``verify all`` took on the reference machine, from the committed example report
    (reports/example/results.json of a source checkout, written by the ci profile); {} when it is not there. The
    ETA of ``verify all`` is built on these and on the times measured in the run itself, never on a part count."""
    if root is None:
        root = source_root()
    try:
        parts = json.loads((Path(root) / "reports" / "example" / "results.json").read_text())["parts"]
        return {p["name"]: float(p["seconds"]) for p in parts if p.get("status") == "ok"}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


class Eta:
    """An honest estimate of the time left in a run of parts on ``workers`` workers: the reference seconds of the
    parts not yet done, times how much slower than the reference the parts done so far in this run were, over the
    workers. None (unknown) until one part has been computed in this run, or while a part left has no reference
    time; a part reused from an earlier run tells nothing about this machine and is only taken off the list."""

    def __init__(self, names, reference: dict[str, float], workers: int):
        self.left = set(names)
        self.reference, self.workers = reference, max(1, workers)
        self.measured = self.expected = 0.0

    def done(self, name: str, seconds: float, computed: bool) -> None:
        self.left.discard(name)
        if computed and name in self.reference and self.reference[name] > 0:
            self.measured += seconds
            self.expected += self.reference[name]

    def seconds(self) -> float | None:
        if not self.left:
            return 0.0
        if self.expected <= 0 or any(n not in self.reference for n in self.left):
            return None
        ratio = self.measured / self.expected
        left = [self.reference[n] for n in self.left]
        return ratio * max(sum(left) / self.workers, max(left))     # never less than the longest part left


__all__ = ["REFERENCE_CPU_SECONDS", "Eta", "reference_part_seconds", "slowness", "workload", "workload_seconds"]
