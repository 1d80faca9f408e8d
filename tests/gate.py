"""A part and a sweep measurement that block until the test releases them (tests/waiting.py says how a test
uses them): the part named in $VERIFY_GATE_HOLD_PART, when its module is loaded (the runner imports the
plug-ins after a part's module, in the part's own process), and the measurement "gate". Imported only by the
runs a test starts with ``VERIFY_PLUGINS=gate``, never by the test process, so the registries of the tests' own
process stay those of the sources.
"""
from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

from verify.run.parts import REGISTRY
from verify.sweep.measures import measure
from waiting import ENV_GATE, ENV_HOLD_D, ENV_HOLD_PART, POLL

# How long a held part waits for its release before it gives up (so a failed test leaves nothing running).
HOLD_LIMIT = 900.0


def hold(name: str) -> None:
    """Say that ``name`` has started, then wait for the release (tests/waiting.py)."""
    folder = Path(os.environ[ENV_GATE])
    (folder / f"started-{name}").write_text(str(os.getpid()))
    deadline = time.monotonic() + HOLD_LIMIT
    while not (folder / "release").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} was never released")
        time.sleep(POLL)


def hold_part(kind: str) -> None:
    """Make the registered part ``kind`` (when its module is imported here) hold before it computes: a real part,
    so a run's report, which knows only the registered kinds, is written as always once it is released."""
    sp = REGISTRY.get(kind)
    if sp is None or getattr(sp.func, "held", False):
        return

    def held(*args, **kw):
        hold(kind)
        return sp.func(*args, **kw)
    held.held = True
    REGISTRY[kind] = dataclasses.replace(sp, func=held)


@measure("gate", default=False)
def gate_measure(setting, steps, options):
    """Holds the rows whose D is listed in $VERIFY_GATE_HOLD_D until the release; the others pass at once."""
    held = str(setting.D) in os.environ.get(ENV_HOLD_D, "").split(",")
    if held:
        hold(f"D{setting.D}")
    return {"gate_held": held}


for _kind in filter(None, os.environ.get(ENV_HOLD_PART, "").split(",")):
    hold_part(_kind)
