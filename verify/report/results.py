"""results.json: the report's machine-readable content, assembled from saved part records.

Its schema is verify/schemas/results.schema.json (validated by :func:`validate` before anything is
written). Claims keep their full result; probes, fuzz and bench keep their summary fields and point
to the complete saved record under parts/ (the evidence).
"""
from __future__ import annotations

import json
import re
import time
from importlib import resources
from pathlib import Path

from .questions import PRIMARY, QUESTIONS, answers, strongest

SCHEMA_VERSION = "1.0"
VERDICTS = ("proved", "certified", "supported", "refuted", "inconclusive")
KIND_ORDER = ("derive", "convergence", "attention", "claim", "probe", "fuzz", "bench", "discovery")
PROBE_FIELDS = ("probe", "question", "questions", "regimes", "findings", "classification", "verdict", "statement",
                "verdict_detail", "fits", "replay")


def schema() -> dict:
    return json.loads(resources.files("verify").joinpath("schemas/results.schema.json").read_text())


def validate(results: dict) -> None:
    """Raise jsonschema.ValidationError when ``results`` does not follow the schema."""
    import jsonschema
    jsonschema.validate(results, schema())


def load_parts(pdir) -> list[dict]:
    """Every saved part record in ``pdir``, in report order (kind, then name)."""
    recs = []
    for f in sorted(Path(pdir).glob("*.json")):
        try:
            rec = json.loads(f.read_text())
        except ValueError:
            continue   # written atomically, so only a foreign file can be unreadable
        if isinstance(rec, dict) and "part" in rec and "status" in rec:
            rec["file"] = f.name
            recs.append(rec)
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    recs.sort(key=lambda r: (rank.get(r.get("kind"), len(rank)), r["part"]))
    return recs


def anchor(name: str) -> str:
    return "part-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def fuzz_items(res: dict) -> list[dict]:
    """The per-claim fuzz results of a fuzz part (one claim, or a {"claims": [...]} bundle)."""
    items = res.get("claims", [res] if "claim" in res else [])
    return [i for i in items if isinstance(i, dict)]


def verdict_of(rec: dict) -> str:
    """The part's verdict; a part that did not finish is "not checked"; bench makes no claim ("n/a")."""
    if rec["status"] != "ok":
        return "not checked"
    res = rec.get("result") or {}
    if rec["kind"] == "bench":
        return "n/a"
    if rec["kind"] == "fuzz":
        items = fuzz_items(res)
        if any(i.get("falsified") for i in items):
            return "refuted"
        return "supported" if items else "inconclusive"
    v = res.get("verdict")
    return v if v in VERDICTS else "inconclusive"


def finding_of(rec: dict) -> str:
    """One line saying what the part found."""
    if rec["status"] != "ok":
        err = (rec.get("error") or "").strip().splitlines()
        return f"{rec['status']}: {err[0] if err else 'no detail'}"
    res = rec.get("result") or {}
    if rec["kind"] == "fuzz":
        items = fuzz_items(res)
        bad = [str(i.get("claim")) for i in items if i.get("falsified")]
        n = sum(int(i.get("examples") or 0) for i in items)
        return (f"falsified: {', '.join(bad)}" if bad else "no counterexample") + f" ({len(items)} claims, {n} examples)"
    if rec["kind"] == "claim" and isinstance(res.get("evidence"), list):
        # A claim's statement is the paper's; what was found is in its evidence: the first record that
        # decides (holds False for a refutation, True otherwise), else the first one.
        want = res.get("verdict") != "refuted"
        head = next((e for e in res["evidence"] if isinstance(e, dict) and e.get("headline")), None)
        if head:      # a claim may name the record that answers the reviewers' question
            return f"{res.get('verdict')}: {head['headline']}"
        ev = [e for e in res["evidence"] if isinstance(e, dict) and e.get("result")]
        pick = next((e for e in ev if e.get("holds") is want), ev[0] if ev else None)
        if pick:
            return " ".join(f"{res.get('verdict')}: {pick.get('route', '')}: {pick['result']}".split())
    for key in ("finding", "findings", "verdict_detail", "statement", "summary"):
        v = res.get(key)
        if isinstance(v, list):
            v = v[0] if v else None
        if isinstance(v, dict):
            v = v.get("text") or json.dumps(v)[:200]
        if v:
            return " ".join(str(v).split())
    return ""


def short(text: str, n: int = 240) -> str:
    """``text`` in at most ``n`` characters, cut at a word boundary (never mid-word) and marked with "…"."""
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:") + "…"


def questions_table(records: list[dict]) -> list[dict]:
    """One row per reviewer question: verdict, one-line finding, evidence links."""
    rows = []
    for i, (q, _, _) in enumerate(QUESTIONS, 1):
        hits = [r for r in records if i in answers(r["part"], r["kind"], r.get("result"))]
        ok = [r for r in hits if r["status"] == "ok"]
        # Parts that name the question themselves (a probe's "questions") speak for it first; parts
        # matched by their id's keywords only when none does.
        named = [r for r in ok if i in answers(r["part"], r["kind"], r.get("result"), keywords=False)]
        verdict = strongest([verdict_of(r) for r in (named or ok)])
        ok = named + [r for r in ok if r not in named]
        primary = next((r for r in ok if r["part"] == PRIMARY.get(i)), None)
        if primary is not None:
            verdict = verdict_of(primary)
            others = [f"{r['part']} {verdict_of(r)}" for r in ok if r is not primary and verdict_of(r) != verdict]
            also = f" Also: {', '.join(others[:3])}." if others else ""
            finding = f"{primary['part']}: {short(finding_of(primary), 200)}{also}"
        elif ok:
            best = next(r for r in ok if verdict_of(r) == verdict) if verdict != "not checked" else ok[0]
            finding = f"{best['part']}: {finding_of(best)}"
        elif hits:
            finding = "every part that answers it did not finish: " + "; ".join(
                f"{r['part']} ({r['status']})" for r in hits)
        else:
            finding = "no part of this toolkit answers this question (not checked)"
        rows.append({"number": i, "question": q, "verdict": verdict, "finding": short(finding, 320),
                     "evidence": [{"part": r["part"], "verdict": verdict_of(r), "anchor": anchor(r["part"]),
                                   "file": f"parts/{r['file']}"} for r in hits]})
    return rows


def assemble(records: list[dict], *, profile: str, wall_seconds: float | None, reused: list[str],
             figures: list[dict], provenance: dict) -> dict:
    """The results dict written as results.json."""
    from importlib.metadata import version as _v
    version = _v("verify")
    parts, claims, probes = [], [], []
    derivation = convergence = fuzz = bench = None
    for r in records:
        res = r.get("result") or {}
        parts.append({"name": r["part"], "kind": r["kind"], "status": r["status"], "seconds": r.get("seconds") or 0.0,
                      "verdict": verdict_of(r), "finding": short(finding_of(r), 400), "error": r.get("error"),
                      "reused": r["part"] in reused, "anchor": anchor(r["part"]), "evidence": f"parts/{r['file']}",
                      "replay": res.get("replay") if isinstance(res.get("replay"), str) else None})
        if r["status"] != "ok":
            continue
        if r["kind"] == "claim":
            claims.append(res | {"id": res.get("id", r["arg"])})
        elif r["kind"] == "probe":
            probes.append({k: res[k] for k in PROBE_FIELDS if k in res} | {"probe": res.get("probe", r["arg"])})
        elif r["kind"] == "derive":
            derivation = {k: res[k] for k in ("verdict", "statement", "asymptotics", "reduction", "convention",
                                              "replay") if k in res}
        elif r["kind"] == "convergence":
            convergence = {"verdict": res.get("verdict"), "regime": res.get("regime"),
                           "quantities": {q: {k: v for k, v in d.items() if k != "leading_term_values"}
                                          for q, d in res.get("quantities", {}).items()},
                           "replay": res.get("replay")}
        elif r["kind"] == "fuzz":
            fuzz = fuzz or {"claims": []}
            fuzz["claims"] += fuzz_items(res)
        elif r["kind"] == "bench":
            bench = res
    counts = {}
    for p in parts:
        counts[p["verdict"]] = counts.get(p["verdict"], 0) + 1
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "verify", "version": version},
        "paper": "Zhang, Zhao, Gu, Cao: Transformers Trained via Gradient Descent Can Provably Learn a Class of "
                 "Teacher Models (arXiv:2603.22801)",
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "profile": profile,
        "summary": {"parts": len(parts), "ok": sum(p["status"] == "ok" for p in parts),
                    "not_ok": sum(p["status"] != "ok" for p in parts), "verdicts": counts,
                    "wall_seconds": wall_seconds, "part_seconds": round(sum(p["seconds"] for p in parts), 3),
                    "reused_parts": len(reused)},
        "questions": questions_table(records),
        "parts": parts,
        "claims": claims,
        "probes": probes,
        "derivation": derivation,
        "convergence": convergence,
        "fuzz": fuzz,
        "bench": bench,
        "figures": figures,
        "provenance": provenance,
    }
