"""The code version: a hash of the package sources, so that saved results are never reused across edits.

Hashed: every ``.py`` file of ``verify/``, ``lemmas/`` and ``recheck/`` and the JSON schemas of ``verify/schemas/``
(their paths and bytes), nothing else (not tests/, not reports/, not caches). A commit hash would miss
uncommitted edits, and the sources are what a result depends on. The hash is recomputed only when a
file's size or modification time changed, so calling it per task costs a few stat calls.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .parts import PACKAGES, source_root

_cache: dict = {}


def source_files(root: Path | None = None) -> list[Path]:
    """The files the code version covers, sorted."""
    root = Path(root) if root is not None else source_root()
    files = []
    for pkg in PACKAGES:
        base = root / pkg
        files += [f for f in base.rglob("*.py") if "__pycache__" not in f.parts]
        files += list((base / "schemas").glob("*.json")) if (base / "schemas").is_dir() else []
    return sorted(files)


def code_version(root: Path | None = None) -> str:
    """16 hex digits of the SHA-256 of the sources under ``root`` (default: this package's own tree)."""
    root = Path(root).resolve() if root is not None else source_root()
    files = source_files(root)
    stamp = tuple((str(f), st.st_size, st.st_mtime_ns) for f in files for st in (f.stat(),))
    hit = _cache.get(root)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    version = h.hexdigest()[:16]
    _cache[root] = (stamp, version)
    return version


__all__ = ["code_version", "source_files"]
