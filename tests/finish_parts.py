"""Test-only parts of ``verify all`` for tests/test_all_finish.py, registered when this module is imported (by the
driver :data:`DRIVER`, which then runs the command line; the part processes import it by name, from PYTHONPATH).

``test-hold`` computes nothing while the file named by $VERIFY_TEST_HOLD exists (a part that hangs without
using the CPU, until the test removes the file), ``test-spin`` computes while it exists (a part that hangs using
the CPU), ``test-quick`` returns at once. Each result is one statement judged by one evidence record.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from verify.evidence import Scope, Statement, headline, record
from verify.run import part

HOLD = "VERIFY_TEST_HOLD"
DRIVER = "import finish_parts; from verify.cli import main; main()"
FEW = Scope(dims=("D=3",), sigma=("identity",), conventions=("reference",), horizon=10)


def _held() -> bool:
    flag = os.environ.get(HOLD)
    return bool(flag) and Path(flag).exists()


def _result(name: str) -> dict:
    return headline([Statement(f"{name} ran", FEW, [record(name, "float64", FEW, "returned", True,
                                                          threshold={"value": 0, "why": "test part"})])])


@part("test-hold", order=1)
def hold_part(profile: str) -> dict:
    """Waits, computing nothing, while $VERIFY_TEST_HOLD names an existing file."""
    while _held():
        time.sleep(0.05)
    return _result("test-hold")


@part("test-spin", order=2)
def spin_part(profile: str) -> dict:
    """Computes while $VERIFY_TEST_HOLD names an existing file."""
    n = 0
    while _held():
        for i in range(100_000):
            n += i % 3
    return _result("test-spin")


@part("test-quick", order=3)
def quick_part(profile: str) -> dict:
    """Returns at once."""
    return _result("test-quick")
