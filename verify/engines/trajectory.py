"""What every engine records: the quantities of docs/setting.md at chosen steps."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

PROGRESS_SECONDS = 0.2      # least time between two progress callbacks of a run
RECORDED = ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv", "alpha", "offspan", "support_mass")


@dataclass
class Record:
    """The state's recorded quantities at one step (numbers in the engine's arithmetic)."""

    step: int
    loss: object
    excess_loss: object
    s_err: object
    w_err: object
    wp_norm: object
    cos_wv: object
    alpha: list
    offspan: list
    support_mass: list


@dataclass
class Trajectory:
    """Records at checkpoints, plus what produced them."""

    engine: str
    arithmetic: str
    dps: int | None
    records: list[Record] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    backend: str | None = None       # what carried the arithmetic where there is a choice ("jax", "numpy")

    @property
    def final(self) -> Record:
        """The record at the last checkpoint."""
        return self.records[-1]

    def series(self, name: str) -> list:
        """One recorded quantity (a Record field, e.g. "excess_loss") at every checkpoint."""
        return [getattr(r, name) for r in self.records]

    def steps(self) -> list[int]:
        """The checkpoint steps."""
        return [r.step for r in self.records]


def checkpoint_steps(steps: int, every: int | None = None, log_points: int = 0) -> list[int]:
    """0 and ``steps`` always; every ``every`` steps; and ``log_points`` log-spaced steps."""
    out = {0, steps}
    if every:
        out.update(range(0, steps + 1, every))
    if log_points and steps > 0:
        for i in range(log_points + 1):
            out.add(int(round(math.exp(i / log_points * math.log(steps)))))
    return sorted(s for s in out if 0 <= s <= steps)


def throttled(progress):
    """``progress(step)`` called at most every PROGRESS_SECONDS (and always with ``force=True``); None stays None."""
    if progress is None:
        return None
    last = [0.0]

    def call(step, force=False):
        now = time.perf_counter()
        if force or now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            progress(step)
    return call
