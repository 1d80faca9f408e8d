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
from pathlib import Path

from ..checks import weakest
from ..errors import InvalidParameter
from ..inputs import read_json
from ..model.paper import CITATION
from ..run.parts import STATUS
from .questions import questions_table
from .statements import (FUZZ_SCOPE, NO_SCOPE, NOT_CHECKED, anchor, counts, declared_statements, extents, fuzz_items, proof_routes, redecide,
                         statements_of)

SCHEMA_VERSION = "2.0"
KIND_ORDER = ("derive", "convergence", "attention", "certify", "reconcile", "claim", "probe", "fuzz", "bench", "discovery")
CHECK_FIELDS = ("id", "kind", "title", "source", "questions", "profile", "convention", "numbers", "replay")
PROBE_FIELDS = ("question", "regimes", "findings", "classification", "fits")
BRIEF = ("id", "text", "role", "about", "relation", "hypotheses", "verdict", "scope_label", "short_scope", "reason",
         "why", "corrected", "saved_verdict", "extent")


def schema() -> dict:
    return json.loads(resources.files("verify").joinpath("schemas/results.schema.json").read_text())


def validate(results: dict) -> None:
    """Raise jsonschema.ValidationError when ``results`` does not follow the schema."""
    import jsonschema
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
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    recs.sort(key=lambda r: (rank.get(r.get("kind"), len(rank)), r["part"]))
    return recs


def short(text: str, n: int = 240) -> str:
    """``text`` in at most ``n`` characters, cut at a word boundary (never mid-word) and marked with "…"."""
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:") + "…"


def brief(st: dict) -> dict:
    """A statement without its records (the parts list; the records are in claims/probes and parts/)."""
    return {k: st[k] for k in BRIEF if k in st}


def decision_of(rec: dict, statements: list[dict]) -> dict:
    """{verdict, scope_label, reason} of a saved part: its headline (first) statement's, decided again; for a claim
    judged in several parts, its weakest part's (verify.checks.weakest), the reason listing every part. A part
    that did not finish is "not checked"; bench makes no claim ("n/a")."""
    if rec["status"] != "ok":
        return {"verdict": NOT_CHECKED, "scope_label": NO_SCOPE, "reason": f"the part did not finish ({rec['status']})"}
    if rec["kind"] == "bench":
        return {"verdict": "n/a", "scope_label": NO_SCOPE, "reason": "a benchmark makes no claim"}
    if not statements:
        return {"verdict": "inconclusive", "scope_label": NO_SCOPE,
                "reason": "no evidence records: the report derives every verdict from records"}
    if rec["kind"] == "fuzz" and len(statements) > 1:
        # a bundle of fuzzed claims: one decision over all their records
        ev = [e for st in statements for e in (st["evidence"] or [])]
        d = redecide({"evidence": ev, "scope": FUZZ_SCOPE.as_dict()})
        return {k: d[k] for k in ("verdict", "scope_label", "reason")}
    judged = [st for st in statements if st["role"] != "finding"]
    if rec["kind"] == "claim" and len(judged) > 1:
        # a claim judged part by part is as established as its weakest part, never its first or strongest
        w = next(st for st in judged if st["verdict"] == weakest(x["verdict"] for x in judged))
        return {"verdict": w["verdict"], "scope_label": w["scope_label"],
                "reason": "every part: " + ", ".join(f"{st['id']} {st['verdict']}" for st in judged)
                          + f"; the weakest, {w['id']}: {w['reason']}"}
    return {k: statements[0][k] for k in ("verdict", "scope_label", "reason")}


def finding_of(rec: dict, statements: list[dict]) -> str:
    """One line saying what the part found: its own "finding" when it saved one, else its headline's why."""
    if rec["status"] != "ok":
        err = (rec.get("error") or "").strip().splitlines()
        return f"{rec['status']}: {err[0] if err else 'no detail'}"
    res = rec.get("result") or {}
    if rec["kind"] == "fuzz":
        bad = [st["about"] for st in statements if st["verdict"] == "refuted"]
        return (f"counterexamples: {', '.join(bad)}" if bad else "no counterexample") + f" ({len(statements)} claims fuzzed)"
    if isinstance(res.get("finding"), str) and res["finding"]:
        return " ".join(res["finding"].split())
    if statements:
        return f"{statements[0]['verdict']}: {statements[0]['why']}"
    return ""


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
    from ..model.convention import Convention
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


def check_entry(rec: dict, statements: list[dict]) -> dict:
    """A claim or probe: its declaration, its statements decided again (with their records), its numbers."""
    res = rec.get("result") or {}
    out = {k: res[k] for k in CHECK_FIELDS if k in res} | {"id": res.get("id") or res.get("probe") or rec["arg"],
                                                            "kind": rec["kind"], "part": rec["part"]}
    if rec["kind"] == "probe":
        out |= {k: res[k] for k in PROBE_FIELDS if k in res}
    out.setdefault("numbers", {})
    head = decision_of(rec, statements) if statements else {"verdict": "inconclusive", "scope_label": NO_SCOPE,
                                                            "reason": ""}
    return out | {"statements": statements, "verdict": head["verdict"], "scope_label": head["scope_label"],
                  "reason": head["reason"]}


def derivation_entry(res: dict, statements: list[dict]) -> dict:
    """The derive part: asymptotics, the per-sigma proofs and each sigma's verdict, keyed by the sigma spec the
    statement's own scope names (never by its text)."""
    sigmas = {}
    for st in statements:
        sig = (st.get("scope") or {}).get("sigma")
        if isinstance(sig, list) and len(sig) == 1:
            sigmas[sig[0]] = st["verdict"]
    head = statements[0] if statements else {"verdict": "inconclusive", "scope_label": NO_SCOPE}
    return {k: res[k] for k in ("asymptotics", "reduction", "convention", "replay") if k in res} | {
        "sigmas": sigmas, "verdict": head["verdict"], "scope_label": head["scope_label"]}


def certify_entry(res: dict, head: dict) -> dict:
    cert = res.get("certificate") or {}
    return {k: res.get(k) for k in ("statement", "finding", "bounds", "relative_width_at_1e12", "replay")} | {
        "verdict": head["verdict"], "scope_label": head["scope_label"], "regime": res.get("regime"),
        "T0": cert.get("T0"), "constants": cert.get("constants"), "asymptotic": cert.get("asymptotic"),
        "region": {k: (cert.get("region") or {}).get(k) for k in ("definition", "u0", "C")},
        "a": cert.get("a"), "b": cert.get("b"), "cubic_coefficient_c": cert.get("cubic_coefficient_c"),
        "shells": len(cert.get("shells") or []), "obligations": len(cert.get("obligations") or []),
        "recheck": cert.get("recheck"),
        "exact_cases": {lab: {"note": ((e.get("certificate") or {}).get("rate") or {}).get("note"),
                              "replay": e.get("replay")} for lab, e in (res.get("exact_cases") or {}).items()},
        "family": {k: v for k, v in (res.get("family") or {}).items() if k != "records"}}


def reconcile_entry(res: dict, statements: list[dict], head: dict) -> dict:
    """The reconciliation's section: the widened family, each reading's systems, the representative and the
    reference fits, and its statements with their verdicts (derived again here), keyed as the part keyed them."""
    der = res.get("derivation") or {}
    return {k: res.get(k) for k in ("family", "readings", "representative", "reference", "claims", "finding",
                                    "replay")} | {
        "verdict": head["verdict"], "scope_label": head["scope_label"], "statements": [brief(st) for st in statements],
        "verdicts": {k: {"verdict": st["verdict"], "scope_label": st["scope_label"]}
                     for k, st in zip(res.get("verdicts") or {}, statements)},
        "leading_terms": der.get("leading_terms"), "d_exponents": der.get("d_exponents"),
        "tstar_definition": der.get("tstar_definition")}


def convergence_entry(res: dict, head: dict) -> dict:
    return {"verdict": head["verdict"], "scope_label": head["scope_label"], "regime": res.get("regime"),
            "quantities": {q: {k: v for k, v in d.items() if k != "leading_term_values"}
                           for q, d in res.get("quantities", {}).items()}, "replay": res.get("replay")}


def sections(records: list[dict], per_part: dict, parts: list[dict]) -> dict:
    """claims, probes and the built-in parts' sections of results.json."""
    out = {"claims": [], "probes": [], "derivation": None, "convergence": None, "fuzz": None, "bench": None,
           "certify": None, "reconcile": None}
    heads = {p["name"]: p for p in parts}
    for r in records:
        if r["status"] != "ok":
            continue
        res, sts, head = r.get("result") or {}, per_part[r["part"]], heads[r["part"]]
        if r["kind"] in ("claim", "probe"):
            out[r["kind"] + "s"].append(check_entry(r, sts))
        elif r["kind"] == "derive":
            out["derivation"] = derivation_entry(res, sts)
        elif r["kind"] == "convergence":
            out["convergence"] = convergence_entry(res, head)
        elif r["kind"] == "fuzz":
            out["fuzz"] = out["fuzz"] or {"claims": []}
            out["fuzz"]["claims"] += [{k: v for k, v in i.items() if k != "evidence"} for i in fuzz_items(res)]
        elif r["kind"] == "bench":
            out["bench"] = res
        elif r["kind"] == "certify":
            out["certify"] = certify_entry(res, head)
        elif r["kind"] == "reconcile":
            out["reconcile"] = reconcile_entry(res, sts, head)
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
    from importlib.metadata import version as _v
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
           "finding_of", "assemble", "anchor"]
