"""Numbers and verdicts of a results.json, looked up by key: a check's ``numbers[key]``, a statement by its id, a
built-in part's saved field by its name. Never by the text of a route or a statement, so renaming a label
changes no number. A number that is not there raises :class:`MissingNumber` naming what was asked for."""
from __future__ import annotations


class MissingNumber(KeyError):
    """A number (or verdict) asked for is not in the report: the text that quotes it cannot be written."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "missing number"


def _walk(value, path: tuple, where: str):
    for key in path:
        if not isinstance(value, dict) or key not in value or value[key] is None:
            raise MissingNumber(f"{where}[{']['.join(repr(k) for k in path)}]")
        value = value[key]
    return value


def check(results: dict, kind: str, cid: str) -> dict:
    """The entry of claim or probe ``cid`` (kind "claim" or "probe")."""
    entry = next((c for c in results.get(kind + "s") or [] if c.get("id") == cid), None)
    if entry is None:
        raise MissingNumber(f"{kind} {cid} (it did not finish or did not run)")
    return entry


def number(results: dict, kind: str, cid: str, *path):
    """``numbers[path[0]][path[1]]...`` of claim or probe ``cid``."""
    return _walk(check(results, kind, cid).get("numbers"), path, f"{kind} {cid}: numbers")


def field(results: dict, section: str, *path):
    """A saved field of a built-in part's section of results.json (``certify``, ``reconcile``, ``derivation``,
    ``summary``, ...)."""
    return _walk(results.get(section), path, section)


def statement(results: dict, sid: str) -> dict:
    """The statement with id ``sid`` (its verdict decided again by the report)."""
    st = next((s for s in results.get("statements") or [] if s.get("id") == sid), None)
    if st is None:
        raise MissingNumber(f"statement {sid}")
    return st


def statements(results: dict, *, check_id: str | None = None, role: str | None = None, part: str | None = None) -> list:
    """The statements of one check, one role or one part (prefix ``part``: "fuzz:" for every fuzz part)."""
    return [s for s in results.get("statements") or [] if (check_id is None or s.get("check") == check_id)
            and (role is None or s.get("role") == role) and (part is None or s.get("part", "").startswith(part))]


__all__ = ["MissingNumber", "check", "number", "field", "statement", "statements"]
