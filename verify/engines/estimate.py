"""How long a run will take, from a short timed calibration of the same engine on the same setting.

Used by ``verify run`` before a long run, and by any probe or sweep that asks for a large one (a
full-matrix run at D = N = 1024, say) before starting it::

    seconds = run_seconds(setting, 100_000, engine="full", arithmetic="float64")
"""
from __future__ import annotations

import time

from . import iterate

CALIBRATION_SECONDS = 0.05    # timed calibration per engine beyond the first call (after a warm-up call)


def _timed(run, n: int) -> float:
    t = time.perf_counter()
    run(n)
    return time.perf_counter() - t


def calibrate(run, steps: int, seconds: float = CALIBRATION_SECONDS) -> tuple[float, float]:
    """(steps per second, fixed seconds per call) of ``run(n)`` (n steps): a warm-up call (code generation,
    compilation: excluded), a call of one step, then n = 2, 4, ... until a call takes ``seconds`` more than
    the one-step call or n reaches ``steps``. The rate is read from the difference, so that the fixed cost of
    a call (set-up, recording the checkpoints) is counted once and not as if every step paid it."""
    run(1)
    t1 = _timed(run, 1)
    n, tn = 1, t1
    while n < steps:
        n = min(steps, 2 * n)
        tn = _timed(run, n)
        if tn - t1 >= seconds:
            break
    rate = (n - 1) / (tn - t1) if n > 1 and tn > t1 else 1 / max(t1, 1e-9)
    return rate, max(0.0, t1 - 1 / rate)


def run_phases(setting, steps: int, engine: str, arithmetic: str, dps: int | None = None,
               bits: int | None = None) -> tuple[float, float]:
    """(steps per second, fixed seconds) of ``verify.engines.iterate`` with these options on ``setting``."""
    return calibrate(lambda n: iterate(setting, n, engine, arithmetic, dps, [n], bits=bits), steps)


def run_seconds(setting, steps: int, engine: str, arithmetic: str, dps: int | None = None,
                bits: int | None = None) -> float:
    """Estimated wall seconds of ``iterate(setting, steps, engine, arithmetic, dps, bits=bits)``."""
    rate, fixed = run_phases(setting, steps, engine, arithmetic, dps, bits)
    return fixed + steps / rate
