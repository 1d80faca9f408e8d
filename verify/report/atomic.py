"""Atomic writes: a file or a whole folder is either complete or absent, never half-written.

Files: verify.atomic (re-exported here). Folders: build the new folder as a hidden sibling, then swap it in
with two renames; :func:`recover_folder` finishes or undoes a swap that a crash interrupted.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..atomic import write_bytes_atomic, write_json_atomic  # noqa: F401  (re-exported for the report's callers)

WORK = "_work"   # scratch sub-folder of a report folder (saved parts); carried over on every swap


def _siblings(out: Path) -> tuple[Path, Path]:
    return out.parent / f".{out.name}.new", out.parent / f".{out.name}.old"


def recover_folder(out) -> None:
    """Repair the state a crash during :func:`swap_folder` can leave (each step is one rename).

    - ``new`` complete but ``out`` missing (crash between the two renames): finish the swap.
    - the saved parts moved into ``new`` but ``out`` still old: move them back.
    - a leftover ``old`` or unfinished ``new``: remove it (the report in ``out`` is the valid one).
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
    report folder, or ``out`` is absent and :func:`recover_folder` completes the swap.
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
