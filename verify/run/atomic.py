"""Atomic writes: a file or a whole folder is either complete or absent, never half-written.

Files: a temporary sibling is written, flushed and fsynced, then ``os.replace``d onto the target (atomic on
POSIX within one file system). Folders (a report): the new folder is built as a hidden sibling and swapped in
with two renames; :func:`recover_folder` finishes or undoes a swap that a crash interrupted. Every part of the
toolkit that writes to disk (engines, bench, fuzz database, sweep, report) writes through here.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

WORK = "_work"   # scratch sub-folder of an output folder (saved parts, sweep rows); carried over on every swap


def write_bytes_atomic(path, data: bytes, make_parents: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temporary sibling and ``os.replace`` (creating the folder unless
    ``make_parents`` is False: then a missing folder is an error)."""
    path = Path(path)
    if make_parents:
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


def json_bytes(obj) -> bytes:
    """``obj`` as the toolkit saves JSON: indented, keys in insertion order, non-JSON values as strings."""
    return (json.dumps(obj, indent=1, default=str) + "\n").encode()


def write_json_atomic(path, obj, make_parents: bool = True) -> Path:
    """JSON (:func:`json_bytes`) written atomically."""
    return write_bytes_atomic(path, json_bytes(obj), make_parents)


def keep_elsewhere(files: dict, label: str) -> Path | None:
    """Write ``files`` (relative name -> bytes) into a new folder ``verify-unsaved-<label>-*`` under the system's
    temporary folder, else under the home folder: what could not be written where it was asked for is kept
    there. Returns the folder, or None when neither place can be written."""
    for base in (tempfile.gettempdir(), Path.home()):
        try:
            folder = Path(tempfile.mkdtemp(prefix=f"verify-unsaved-{label}-", dir=base))
            for name, data in files.items():
                write_bytes_atomic(folder / name, data)
            return folder
        except OSError:
            continue
    return None


def _siblings(out: Path) -> tuple[Path, Path]:
    return out.parent / f".{out.name}.new", out.parent / f".{out.name}.old"


def recover_folder(out) -> None:
    """Repair the state a crash during :func:`swap_folder` can leave (each step is one rename).

    - ``new`` complete but ``out`` missing (crash between the two renames): finish the swap.
    - the saved parts moved into ``new`` but ``out`` still old: move them back.
    - a leftover ``old`` or unfinished ``new``: remove it (the folder in ``out`` is the valid one).
    """
    out = Path(out)
    new, old = _siblings(out)
    if new.exists() and (new / ".complete").exists() and not out.exists():
        os.rename(new, out)
    if new.exists() and (new / WORK).exists() and out.exists() and not (out / WORK).exists():
        os.rename(new / WORK, out / WORK)
    for p in (new, old):
        if p.exists():
            shutil.rmtree(p)


def new_folder(out) -> Path:
    """An empty hidden sibling of ``out`` to build the next version of the folder in."""
    out = Path(out)
    recover_folder(out)
    new, _ = _siblings(out)
    new.mkdir(parents=True)
    return new


def swap_folder(new, out) -> Path:
    """Put the finished folder ``new`` in place of ``out`` (keeping ``out``'s saved parts).

    Order: mark ``new`` complete; move ``out/_work`` into ``new`` (one rename); rename ``out`` aside;
    rename ``new`` to ``out``; delete the old folder. At every instant either ``out`` is a complete
    folder, or ``out`` is absent and :func:`recover_folder` completes the swap.
    """
    new, out = Path(new), Path(out)
    (new / ".complete").write_text("")
    if (out / WORK).exists() and not (new / WORK).exists():
        os.rename(out / WORK, new / WORK)
    _, old = _siblings(out)
    if out.exists():
        if old.exists():
            shutil.rmtree(old)
        os.rename(out, old)
    os.rename(new, out)
    if old.exists():
        shutil.rmtree(old)
    return out


__all__ = ["WORK", "write_bytes_atomic", "write_json_atomic", "json_bytes", "keep_elsewhere", "recover_folder", "new_folder",
           "swap_folder"]
