"""The counterexample database: failing regimes saved by one fuzz run and replayed by the next.

One JSON file per regime, ``<db>/<claim id>/<digest>.json`` (the regime's ``as_dict()``, plus when and
with which seed it was found), written atomically (verify.run.atomic). Regimes are stored, not Hypothesis
choice sequences: a stored regime replays as exactly that regime even after the strategies change,
so a replayed failure is never a new regime in disguise, and a reader can open the file.

The default location is a cache, never a tracked file: ``.cache/verify/fuzz-db`` at the project root
in a source checkout (gitignored), else the user cache (``$XDG_CACHE_HOME/verify/fuzz-db``, by default
``~/.cache/verify/fuzz-db``). ``verify fuzz --db PATH`` chooses another one.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..run.cache import cache_dir
from ..errors import InvalidParameter
from ..inputs import read_json
from ..run.atomic import write_json_atomic


def default_db() -> Path:
    """Where the counterexample database lives unless ``--db`` says otherwise (module docstring)."""
    return cache_dir("fuzz-db")


DEFAULT_DB = default_db()


def _digest(regime: dict) -> str:
    return hashlib.sha256(json.dumps(regime, sort_keys=True).encode()).hexdigest()[:16]


class CounterexampleStore:
    """Saved failing regimes of one claim (a folder of JSON files)."""

    def __init__(self, root, claim_id: str):
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise InvalidParameter("db", str(root), "must be a directory (or a path that does not exist yet)")
        self.root = root
        self.path = root / claim_id

    def load(self) -> list[dict]:
        """Every stored entry ({"regime": ..., "seed": ..., ...}), in a fixed order; unreadable files are skipped
        (they can only be foreign: ours are written atomically)."""
        out = []
        for f in sorted(self.path.glob("*.json")) if self.path.is_dir() else ():
            try:
                entry = read_json(f, "db", what="stored counterexample")     # bounded: a foreign file is skipped
            except InvalidParameter:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("regime"), dict):
                out.append(entry | {"file": str(f)})
        return out

    def save(self, regime: dict, **info) -> Path:
        """Store a failing regime (idempotent: the file name is the regime's digest)."""
        return write_json_atomic(self.path / f"{_digest(regime)}.json", {"regime": regime, **info})

    def delete(self, regime: dict) -> None:
        """Forget a regime that no longer fails."""
        (self.path / f"{_digest(regime)}.json").unlink(missing_ok=True)


__all__ = ["CounterexampleStore", "DEFAULT_DB", "default_db"]
