"""results.json: the report's machine-readable content, assembled from saved part records.

Its schema is verify/schemas/results.schema.json (validated by :func:`validate` before anything is written).
Every statement is decided again by the one rule from the records its part saved (verify.report.statements);
``summary.roles`` counts the verdicts of the paper's claims, of the negative controls and of the toolkit's
own findings apart, so nothing outside a claim's hypotheses is ever counted as a verdict on the paper. Claims
and probes keep their statements (with evidence) and their ``numbers``, the figures the README quotes by key;
the built-in parts keep their summary fields; every part's complete record is the evidence file under parts/.
"""
from __future__ import annotations

import json
import time
from importlib import resources
from importlib.metadata import version as _v
from pathlib import Path

from ..errors import InvalidParameter
from ..inputs import read_json
from ..model.convention import Convention
from ..model.paper import CITATION
from .text import short
from .kinds import REPORT_KINDS, brief, declared_statements, empty_sections, kind_of, report_rank, statements_of
from ..run.parts import STATUS
from .questions import questions_table
from .statements import NO_SCOPE, NOT_CHECKED, anchor, counts, extents, proof_routes

SCHEMA_VERSION = "2.0"


def schema() -> dict:
    return json.loads(resources.files("verify").joinpath("schemas/results.schema.json").read_text())


def validate(results: dict) -> None:
    """Raise jsonschema.ValidationError when ``results`` does not follow the schema."""
    import jsonschema  # heavy: jsonschema
    jsonschema.validate(results, schema())


def unreadable_record(f: Path, why: str) -> dict:
    """The record standing for a saved part file that cannot be read (corrupted, truncated, foreign): a part
    that did not finish, named from its file name, so the report counts it and says which it is."""
    name = f.stem.replace("--", ":", 1)
    return {"part": name, "kind": name.partition(":")[0], "arg": name.partition(":")[2], "options": {},
            "code_version": None, "status": "failed", "seconds": 0.0, "finished": None, "worker": None,
            "error": f"the saved record {f.name} cannot be read ({why}): run the part again", "result": None,
            "unreadable": True}


# The fields of a saved part record the report reads, with their types (verify.pipeline.child.part_record writes them).
RECORD_FIELDS = {"part": (str,), "kind": (str,), "arg": (str,), "status": (str,), "options": (dict, type(None)),
                 "seconds": (int, float, type(None)), "result": (dict, type(None)), "error": (str, type(None))}


def record_problem(rec) -> str | None:
    """What makes ``rec`` not a part record (a missing field, a field of the wrong type, an unknown status), or
    None: a file of another shape is counted as a part that did not finish, never read into a KeyError."""
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not an object"
    for key, types in RECORD_FIELDS.items():
        if key not in rec and key in ("part", "kind", "status"):
            return f'no "{key}"'
        if key in rec and (not isinstance(rec[key], types) or isinstance(rec[key], bool)):
            return f'"{key}" is a {type(rec[key]).__name__}'
    if rec["status"] not in STATUS:
        return f'"status" is not one of {", ".join(STATUS)}'
    return None


def load_parts(pdir) -> list[dict]:
    """Every saved part record in ``pdir``, in report order (kind, then name); a file that cannot be read as a
    part record counts as a part that did not finish (:func:`unreadable_record`)."""
    recs = []
    for f in sorted(Path(pdir).glob("*.json")):
        try:
            rec = read_json(f, "from", what="part record")
        except InvalidParameter as exc:
            rec = unreadable_record(f, exc.valid)
        why = None if isinstance(rec, dict) and rec.get("unreadable") else record_problem(rec)
        if why is not None:
            rec = unreadable_record(f, f"not a part record: {why}")
        rec["file"] = f.name
        recs.append(rec)
    recs.sort(key=lambda r: (report_rank(r), r["part"]))
    return recs


def decision_of(rec: dict, statements: list[dict]) -> dict:
    """{verdict, scope_label, reason} of a saved part: its kind's decision (verify.report.kinds: the headline
    statement's, decided again; a claim's weakest part's; bench "n/a"); a part that did not finish is "not
    checked"."""
    if rec["status"] != "ok":
        return {"verdict": NOT_CHECKED, "scope_label": NO_SCOPE, "reason": f"the part did not finish ({rec['status']})"}
    return kind_of(rec).decision(rec, statements)


def finding_of(rec: dict, statements: list[dict]) -> str:
    """One line saying what the part found (its kind's finding), or why it did not finish."""
    if rec["status"] != "ok":
        err = (rec.get("error") or "").strip().splitlines()
        return f"{rec['status']}: {err[0] if err else 'no detail'}"
    return kind_of(rec).finding(rec, statements)


def part_entry(rec: dict, statements: list[dict], reused: list[str]) -> dict:
    res = rec.get("result") or {}
    dec = decision_of(rec, statements)
    return {"name": rec["part"], "kind": rec["kind"], "status": rec["status"], "seconds": rec.get("seconds") or 0.0,
            "cpu_seconds": rec.get("cpu_seconds"), "verdict": dec["verdict"], "scope_label": dec["scope_label"], "reason": dec["reason"],
            "statements": [brief(st) for st in statements], "finding": short(finding_of(rec, statements), 400),
            "error": rec.get("error"), "reused": rec["part"] in reused, "anchor": anchor(rec["part"]),
            "evidence": f"parts/{rec['file']}", "replay": res.get("replay") if isinstance(res.get("replay"), str) else None,
            "convention_note": rec.get("convention_note"), "not_honoured": not_honoured(res)}


def not_honoured(res: dict) -> list[str]:
    """The run's convention keywords a part's regimes could not take, each with why (a probe records them as
    ``convention.not_honoured``; [] for a part that took the whole convention or records none)."""
    conv = res.get("convention") if isinstance(res, dict) else None
    said = conv.get("not_honoured") if isinstance(conv, dict) else None
    return [str(v) for v in said.values()] if isinstance(said, dict) else []


def run_convention(records: list[dict]) -> dict:
    """The convention the parts ran under (the ``convention`` of their options; none: the reference), in words
    as the header states it; parts saved under different conventions are said to be mixed."""
    seen = {json.dumps((r.get("options") or {}).get("convention") or {}, sort_keys=True)
            for r in records if not r.get("unreadable")}
    convs = [Convention.from_options(json.loads(s)) for s in sorted(seen)] or [Convention()]
    if len(convs) == 1:
        c = convs[0]
        return {"values": c.as_dict(), "label": c.label(), "reference": c.is_reference, "words": c.words(),
                "flags": c.flags()}
    return {"values": None, "label": "mixed", "reference": False, "flags": None,
            "words": "mixed: the saved parts ran under different conventions (" + "; ".join(c.label() for c in convs)
                     + "); run `verify all` again with one convention"}


def sections(records: list[dict], per_part: dict, parts: list[dict]) -> dict:
    """The sections of results.json the finished parts fill: each registered kind's (verify.report.kinds), one
    entry per part (claims, probes) or one for the kind."""
    out = empty_sections()
    heads = {p["name"]: p for p in parts}
    for r in records:
        if r["status"] != "ok":
            continue
        k = kind_of(r)
        if k.section is None:
            continue
        out[k.section] = k.merge(out.get(k.section), k.entry(r, per_part[r["part"]], heads[r["part"]]))
    return out


def summary(parts: list[dict], statements: list[dict], timing: dict) -> dict:
    """Counts of parts and, per role, of verdicts; the run's times (``timing``: wall_seconds,
    computed_wall_seconds, rebuilt, reused_parts)."""
    per_part = {}
    for p in parts:
        per_part[p["verdict"]] = per_part.get(p["verdict"], 0) + 1
    return {"parts": len(parts), "ok": sum(p["status"] == "ok" for p in parts),
            "not_ok": sum(p["status"] != "ok" for p in parts), "verdicts": per_part, "roles": counts(statements),
            "extents": extents(statements),
            "part_seconds": round(sum(p["seconds"] for p in parts), 3)} | timing


def assemble(records: list[dict], *, profile: str, timing: dict, reused: list[str], figures: list[dict],
             provenance: dict, figure_errors: list[dict] | None = None) -> dict:
    """The results dict written as results.json."""
    per_part = {r["part"]: statements_of(r) for r in records}
    parts = [part_entry(r, per_part[r["part"]], reused) for r in records]
    every = [st for r in records for st in (per_part[r["part"]] or declared_statements(r))]
    verdicts = {p["name"]: p["verdict"] for p in parts}
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "verify", "version": _v("verify")},
        "paper": CITATION,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "profile": profile,
        "convention": run_convention(records),
        "summary": summary(parts, every, timing),
        "statements": [brief(st) | {"part": st["part"], "check": st["check"], "anchor": anchor(st["part"]),
                                    "routes": proof_routes(st)} for st in every],
        "questions": questions_table(records, per_part, verdicts),
        "parts": parts,
        **sections(records, per_part, parts),
        "figures": figures,
        "figure_errors": list(figure_errors or []),
        "provenance": provenance,
    }


__all__ = ["SCHEMA_VERSION", "schema", "validate", "load_parts", "short", "brief", "decision_of", "run_convention",
           "finding_of", "assemble", "anchor", "REPORT_KINDS"]
