"""Atomic file writes, shared by every part of the toolkit that writes to disk (engines, bench,
report): a temporary sibling is written, flushed and fsynced, then ``os.replace``d onto the target
(atomic on POSIX within one file system), so a file is complete or absent, never half-written.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary sibling and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)   # mkstemp creates 0600; a report is for reading
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json_atomic(path, obj) -> Path:
    """JSON (indented, keys in insertion order; non-JSON values as strings) written atomically."""
    return write_bytes_atomic(path, (json.dumps(obj, indent=1, default=str) + "\n").encode())
