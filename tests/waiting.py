"""Waiting on events instead of sleeping: the bounded poll every test uses, and the environment of a run that
imports tests/gate.py (a part and a sweep measurement that block until the test releases them).

A test that must interrupt or kill a run *while something runs* puts ``tests/`` on PYTHONPATH and sets
``VERIFY_PLUGINS=gate`` (verify.run.parts: the runner and the sweep import the module in every process) and
``VERIFY_GATE=<folder>`` (:func:`gate_env`); a held part or row writes ``<folder>/started-<name>`` and then
waits until ``<folder>/release`` exists. The test waits for the started file (:func:`wait_for`, a poll of that
event with a generous overall bound), acts, and writes the release file when the run may go on. Nothing here
measures or asserts a time. This module registers nothing (tests/gate.py does, only in the runs that ask).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

ENV_GATE = "VERIFY_GATE"
# Which parts hold (their kinds, comma-separated): each waits for the release before it computes.
ENV_HOLD_PART = "VERIFY_GATE_HOLD_PART"
# Which sweep rows the "gate" measurement holds: their D values, comma-separated (the others pass at once).
ENV_HOLD_D = "VERIFY_GATE_HOLD_D"
# The bound of every wait of a test on an event: generous, since the machine may be loaded.
WAIT_LIMIT = 300.0
POLL = 0.05

TESTS = Path(__file__).resolve().parent


def gate_env(folder: Path, env: dict | None = None, hold_part: str = "", hold_d: str = "") -> dict:
    """``env`` (default os.environ) plus what a run needs to import tests/gate.py and hold at ``folder``."""
    env = dict(os.environ if env is None else env)
    root = TESTS.parent
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), str(TESTS), env.get("PYTHONPATH", "")) if p)
    env["VERIFY_PLUGINS"] = "gate"
    env[ENV_GATE] = str(folder)
    env[ENV_HOLD_PART], env[ENV_HOLD_D] = hold_part, hold_d
    return env


def wait_for(condition: Callable[[], object], what: str, limit: float = WAIT_LIMIT, proc=None):
    """Poll ``condition()`` until it is true (returned) or ``limit`` seconds pass (AssertionError naming ``what``);
    fails early when the process ``proc`` has exited meanwhile."""
    deadline = time.monotonic() + limit
    while True:
        got = condition()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the process exited (status {proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {limit:.0f} s")
        time.sleep(POLL)


def started(folder: Path, name: str) -> bool:
    """Whether the held part or row ``name`` has said it started."""
    return (Path(folder) / f"started-{name}").exists()


def release(folder: Path) -> None:
    """Let every held part or row go on (and any held later pass at once)."""
    (Path(folder) / "release").write_text("go")


def start_as_from_a_terminal(cmd: list[str], env: dict) -> subprocess.Popen:
    """Start ``cmd`` in its own session (so a test can signal its whole process group) with SIGINT at its default
    disposition, as a shell's foreground job has it: a test suite itself started in the background (``pytest &``
    in a script) inherits SIGINT *ignored*, the command would inherit that too, and a Ctrl-C test would then
    measure the shell rather than the run. The disposition is set in this process around the start (a handler
    becomes the default across exec), not in a ``preexec_fn``, which would make Python fork a process that has
    JAX's threads (JAX warns, and the suite turns warnings into errors)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, old)
