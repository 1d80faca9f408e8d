"""One run per output folder: a lock held while ``verify all`` / ``verify sweep`` / ``verify report`` write OUT.

The lock file is a hidden sibling of OUT (``.NAME.lock``, removed when the run ends), not inside it: ``verify all``
replaces OUT by a rename (verify.run.atomic), which would carry a lock file inside OUT away mid-run. The holder
writes who it is (pid, host, start time, command) into the lock file, so a second run says whom it waits for.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import InvalidParameter


def lock_path(out) -> Path:
    """Where the lock of folder ``out`` lives."""
    out = Path(out).absolute()
    return out.parent / f".{out.name}.lock"


def holder(out) -> str:
    """Who holds (or last held) the lock of ``out``, as one phrase."""
    try:
        info = json.loads(lock_path(out).read_text() or "{}")
    except (OSError, ValueError):
        info = {}
    if not info:
        return "another verify run"
    return (f"pid {info.get('pid')} on {info.get('host')}, running since {info.get('started')}: "
            f"{info.get('command')}")


@contextmanager
def folder_lock(out, flag: str = "out"):
    """Hold the lock of ``out`` for the duration; if another run holds it, InvalidParameter naming ``flag``."""
    path = lock_path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameter(flag, str(out), f"must be a folder that can be created ({exc.strerror})") from None
    me = {"pid": os.getpid(), "host": socket.gethostname(),
          "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
          "command": " ".join(["verify"] + sys.argv[1:]) if sys.argv and sys.argv[0].endswith("verify")
          else " ".join(sys.argv)}

    def stamp(fd: int) -> None:
        data = json.dumps(me).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)

    lock = FileLock(path, timeout=0, on_acquired=stamp, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise InvalidParameter(flag, str(out), f"is in use by another run ({holder(out)}); wait for it to "
                               f"finish or choose another --{flag}") from None
    except OSError as exc:           # a read-only or full place: the lock file beside OUT cannot be written
        raise InvalidParameter(flag, str(out), f"must be a folder that can be written ({path} cannot: "
                               f"{exc.strerror or exc})") from None
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):    # removed while still held: no lock file is left beside OUT
            path.unlink()
        lock.release()


__all__ = ["folder_lock", "lock_path", "holder"]
