"""results.json: the report's machine-readable content, assembled from saved part records.

Its schema is verify/schemas/results.schema.json (validated by :func:`validate` before anything is
written). Claims keep their full result; probes, fuzz and bench keep their summary fields and point
to the complete saved record under parts/ (the evidence).

Every verdict shown is derived here, again, by the one rule (verify.evidence.decide) from the evidence
records the part saved, never copied from a saved "verdict" field: a claim-style result carries
``evidence`` (records) and ``scope`` (the statement's Scope, as Scope.as_dict writes it); a probe carries
``statements``, each with its own ``evidence`` and ``scope`` (the first is the headline). A part that
saved a verdict but no records reads "inconclusive" ("no evidence records"), and a saved verdict that
the rule does not reproduce is flagged in the reason.
"""
from __future__ import annotations

import json
import re
import time
from importlib import resources
from pathlib import Path

from ..evidence import ROLES, Scope, decide, record
from .questions import PRIMARY, QUESTIONS, answers, strongest

SCHEMA_VERSION = "1.1"
VERDICTS = ("proved", "certified", "supported", "refuted", "inconclusive")
KIND_ORDER = ("derive", "convergence", "attention", "certify", "reconcile", "claim", "probe", "fuzz", "bench", "discovery")
PROBE_FIELDS = ("probe", "question", "questions", "regimes", "findings", "classification", "statement", "scope",
                "fits", "numbers", "replay")
NO_SCOPE = "no evidence records"


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


def load_parts(pdir) -> list[dict]:
    """Every saved part record in ``pdir``, in report order (kind, then name); a file that cannot be read as a
    part record counts as a part that did not finish (:func:`unreadable_record`)."""
    recs = []
    for f in sorted(Path(pdir).glob("*.json")):
        try:
            rec = json.loads(f.read_text())
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            rec = unreadable_record(f, f"{type(exc).__name__}: {exc}")
        if not (isinstance(rec, dict) and "part" in rec and "status" in rec):
            rec = unreadable_record(f, "not a part record")
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


def _is_record(e) -> bool:
    return isinstance(e, dict) and e.get("role") in ROLES and isinstance(e.get("scope"), dict) and "kind" in e


def _scope_of(d) -> Scope:
    try:
        return Scope.from_dict(d)
    except (KeyError, TypeError, ValueError):
        return Scope()          # no readable statement scope: the strictest target ("proved" needs all of it)


def _decided(result: dict, saved: str | None = None) -> dict:
    """verdict / scope_label / reason of one statement-like dict ({"evidence", "scope"}), by the one rule."""
    ev = result.get("evidence")
    if not (isinstance(ev, list) and ev and all(_is_record(e) for e in ev)):
        note = f" (a verdict '{saved}' was saved without records)" if saved else ""
        return {"verdict": "inconclusive", "scope_label": NO_SCOPE,
                "reason": "no evidence records: the report derives every verdict from records" + note}
    try:
        d = decide(ev, _scope_of(result.get("scope")))
    except (ValueError, TypeError) as exc:
        return {"verdict": "inconclusive", "scope_label": NO_SCOPE, "reason": f"unreadable evidence records: {exc}"}
    out = d.as_dict()
    out["scope_label"] = out.pop("scope")
    if saved and saved != d.verdict:
        out["reason"] += f" [the part saved '{saved}'; the rule gives '{d.verdict}' from its records]"
    return out


def fuzz_records(res: dict) -> list[dict]:
    """Evidence records of a fuzz part: the ones each fuzzed claim carries (verify.fuzz decides its
    verdict from them); a fuzzed claim without records decides nothing (a failed measurement)."""
    out = []
    for item in fuzz_items(res):
        ev = item.get("evidence")
        if isinstance(ev, list) and ev and all(_is_record(e) for e in ev):
            out += ev
        else:
            scope = Scope(dims=("fuzzed regimes",), sigma="all", conventions="all", horizon="all")
            out.append(record(f"fuzz {item.get('claim')}", "float64", scope, "no evidence records saved", None,
                              role="failed"))
    return out


def decision_of(rec: dict) -> dict:
    """{verdict, scope_label, reason} of a saved part, derived from its evidence records (module docstring).
    A part that did not finish is "not checked"; bench makes no claim ("n/a")."""
    if rec["status"] != "ok":
        return {"verdict": "not checked", "scope_label": NO_SCOPE, "reason": f"the part did not finish ({rec['status']})"}
    res = rec.get("result") or {}
    saved = res.get("verdict") if res.get("verdict") in VERDICTS else None
    if rec["kind"] == "bench":
        return {"verdict": "n/a", "scope_label": NO_SCOPE, "reason": "a benchmark makes no claim"}
    if rec["kind"] == "fuzz":
        ev = fuzz_records(res)
        if not ev:
            return _decided({}, saved)
        return _decided({"evidence": ev, "scope": Scope(dims=("fuzzed regimes",)).as_dict()}, saved)
    if isinstance(res.get("statements"), list) and res["statements"]:
        head = res["statements"][0]
        return _decided(head if isinstance(head, dict) else {}, saved)
    return _decided(res, saved)


def statements_of(rec: dict) -> list[dict]:
    """Each statement of a saved probe (or the one of a claim): text, role, scope, evidence, and the
    verdict, scope label and reason derived again from the evidence."""
    res = rec.get("result") or {}
    if rec["status"] != "ok":
        return []
    sts = res.get("statements") if isinstance(res.get("statements"), list) else (
        [res] if "evidence" in res and rec["kind"] != "fuzz" else [])
    out = []
    for st in sts:
        if isinstance(st, dict):
            d = _decided(st, st.get("verdict") if st.get("verdict") in VERDICTS else None)
            out.append({"statement": str(st.get("text") or st.get("statement") or ""), "id": st.get("id"),
                        "role": st.get("role", "primary"),
                        "scope": st.get("scope"), "evidence": st.get("evidence")} | d)
    return out


def verdict_of(rec: dict) -> str:
    """The part's verdict (:func:`decision_of`)."""
    return decision_of(rec)["verdict"]


def finding_of(rec: dict) -> str:
    """One line saying what the part found (with the derived verdict of a claim)."""
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
        # A claim's statement is the paper's; what was found is in its evidence: the record it names as
        # answering the reviewers' question, else the first that decides the way the verdict went.
        verdict = verdict_of(rec)
        head = next((e for e in res["evidence"] if isinstance(e, dict) and e.get("headline")), None)
        if head:
            return f"{verdict}: {head['headline']}"
        want = {"refuted": False, "inconclusive": None}.get(verdict, True)
        ev = [e for e in res["evidence"] if isinstance(e, dict) and e.get("result") and e.get("role") == "test"]
        pick = next((e for e in ev if e.get("holds") is want), ev[0] if ev else None)
        if pick:
            return " ".join(f"{verdict}: {pick.get('route', '')}: {pick['result']}".split())
    for key in ("finding", "findings", "reason", "statement", "summary"):
        v = res.get(key)
        if isinstance(v, list):
            v = v[0] if v else None
        if isinstance(v, dict):
            # a dict as "key: value" pairs, cut at a word boundary (never a raw dict cut mid-word)
            v = v.get("text") or short("; ".join(f"{k}: {x}" for k, x in v.items()), 200)
        if v:
            return " ".join(str(v).split())
    return ""


def statement_line(rec: dict, n: int = 160) -> str:
    """"[verdict] statement" for each statement of a part, so a row says what was refuted and what holds."""
    return "; ".join(f"[{st['verdict']}] {short(' '.join(st['statement'].split()), n)}" for st in statements_of(rec))


def short(text: str, n: int = 240) -> str:
    """``text`` in at most ``n`` characters, cut at a word boundary (never mid-word) and marked with "…"."""
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:") + "…"


def negative_control(rec: dict) -> bool:
    """Whether a saved claim is a negative control (its statements are false by design, role "control")."""
    sts = (rec.get("result") or {}).get("statements") or []
    return bool(sts) and all(isinstance(s, dict) and s.get("role") == "control" for s in sts)


def questions_table(records: list[dict]) -> list[dict]:
    """One row per reviewer question: verdict, the scope it covers, the statement judged, a one-line
    finding, evidence links. The verdict is the primary part's headline statement's; its other
    statements (e.g. a refuted D-dependence beside supported T-exponents) are named in the finding."""
    rows = []
    for i, (q, _, _) in enumerate(QUESTIONS, 1):
        hits = [r for r in records if i in answers(r["part"], r["kind"], r.get("result"))]
        ok = [r for r in hits if r["status"] == "ok"]
        # Parts that name the question themselves (a probe's "questions") speak for it first; parts
        # matched by their id's keywords only when none does.
        named = [r for r in ok if i in answers(r["part"], r["kind"], r.get("result"), keywords=False)]
        # A negative control is refuted by design: it is listed as evidence, but never speaks for a question
        # when a part that tests the paper's statements answers it.
        judged = [r for r in (named or ok) if not negative_control(r)] or (named or ok)
        verdict = strongest([verdict_of(r) for r in judged])
        ok = [r for r in named if r in judged] + [r for r in ok if r in judged and r not in named] + [
            r for r in ok if r not in judged]
        primary = next((r for r in ok if r["part"] == PRIMARY.get(i)), None)
        if primary is None and ok:
            primary = next((r for r in judged if verdict_of(r) == verdict), ok[0])
        scope, statement = NO_SCOPE, ""
        if primary is not None:
            dec = decision_of(primary)
            verdict, scope = dec["verdict"], dec["scope_label"]
            sts = statements_of(primary)
            statement = sts[0]["statement"] if sts else str((primary.get("result") or {}).get("statement") or "")
            others = [f"{r['part']} {verdict_of(r)}" for r in ok if r is not primary and verdict_of(r) != verdict]
            also = f" Also: {', '.join(others[:3])}." if others else ""
            further = [st for st in sts[1:]]
            more = (" Further statements: " + "; ".join(f"[{st['verdict']}] {short(st['statement'], 120)}"
                                                         for st in further) + ".") if further else ""
            finding = f"{primary['part']}: {short(finding_of(primary), 200)}{more}{also}"
        elif hits:
            finding = "every part that answers it did not finish: " + "; ".join(
                f"{r['part']} ({r['status']})" for r in hits)
        else:
            finding = "no part of this toolkit answers this question (not checked)"
        rows.append({"number": i, "question": q, "verdict": verdict, "scope": scope, "statement": statement,
                     "finding": short(finding, 480),
                     "evidence": [{"part": r["part"], "verdict": verdict_of(r), "anchor": anchor(r["part"]),
                                   "file": f"parts/{r['file']}"} for r in hits]})
    return rows


def _route(res: dict, prefix: str) -> dict:
    records = res.get("evidence") or [e for st in res.get("statements", []) for e in st.get("evidence", [])]
    return next(e for e in records if str(e.get("route", "")).startswith(prefix))


def _st(res: dict, prefix: str) -> dict:
    return next(x for x in res["statements"] if str(x.get("statement", "")).startswith(prefix))


def _c2_overshoot(res: dict) -> list:
    env = _route(res, "interpretation of C_1")["envelopes"]
    return [min(e["max"] for e in env if "sigma=identity" in e["regime"]),
            max(e["max"] for e in env if "sigma=identity" in e["regime"])]


def _fa_x_block(res: dict) -> dict:
    n = res["numbers"]
    return {lab: {"peak": v["kq_x_block_max (b)"], "at_T_over_p_block": v["kq_x_block_at_T (b)"]
                  / v["kq_blocks_at_T (b)"]["kq_p_block"]} for lab, v in n.items()}


# The numbers the findings (and the README) quote, each read from one saved part by a fixed path, so a
# test can compare a text with the report it describes: (name, part, extractor of the part's result).
HEADLINE = [
    ("Theorem 3.1: fitted T-exponents (exponent, uncertainty, last decade)", "claim:theorem-3.1",
     lambda r: r["numbers"]["t_exponents"]),
    ("Theorem 3.1: iterate / exact leading term at the horizon", "claim:theorem-3.1",
     lambda r: r["numbers"]["leading_ratio"]),
    ("Theorem 3.1: D-exponents of the exact leading terms (D -> oo)", "claim:theorem-3.1",
     lambda r: r["numbers"]["d_exponents"]),
    ("Theorem 3.1: claimed D-exponents", "claim:theorem-3.1", lambda r: r["numbers"]["claimed_d_exponents"]),
    ("Theorem 3.1: sweep D-exponents of the constants (sts, N = 1)", "claim:theorem-3.1",
     lambda r: r["numbers"]["sweep_d_exponents"]["sts"]),
    ("Theorem 3.1: sweep D-exponents of the constants (cnn, N = D/K)", "claim:theorem-3.1",
     lambda r: r["numbers"]["sweep_d_exponents"]["cnn"]),
    ("T*: D-exponent at fixed K (exponent, uncertainty)", "claim:theorem-3.1",
     lambda r: [r["numbers"]["tstar"]["exponent"], r["numbers"]["tstar"]["uncertainty"]]),
    ("Lemma C.2: largest alpha over the identity regimes (min, max)", "claim:lemma-C.2", _c2_overshoot),
    ("Lemma C.2 outside the step-size hypothesis: alpha(t) for the cubic", "claim:lemma-C.2",
     lambda r: _route(r, "outside the step-size hypothesis")["alpha"]),
    ("Four teachers: largest |fitted - predicted| tail exponent", "probe:rates",
     lambda r: max(abs(v["fitted_exponent"] - v["predicted_exponent"]) for k, n in r["numbers"].items()
                   if not k.startswith("D_") for v in n.values())),
    ("Step size: derived 2K/N and the bisected convergence / divergence boundaries", "probe:large-eta",
     lambda r: {"2K/N": r["numbers"]["derived_eta_max_near_optimum (2K/N)"],
                "convergence": r["numbers"]["bisection_convergence_boundary"],
                "divergence": r["numbers"]["bisection_divergence_boundary"]}),
    ("T*_cross: D-exponents (K = 2; K = D/2, last pair)", "probe:tstar",
     lambda r: [r["numbers"]["A: K = 2"]["fit"]["exponent_t_cross"],
                r["numbers"]["B: K = D/2"]["fit"]["local_exponent_t_cross_last_pair"]]),
    ("Input-dependent attention: X-block of W_KQ (peak; at T over the P-P block)", "probe:full-attention",
     _fa_x_block),
]


def headline_numbers(records: list[dict]) -> list[dict]:
    """Every HEADLINE number from the saved parts; a number whose part did not finish, or whose record
    lacks it, is listed with ``value`` null and why (never dropped)."""
    by = {r["part"]: r for r in records}
    out = []
    for name, part, get in HEADLINE:
        rec = by.get(part)
        row = {"name": name, "part": part, "value": None, "missing": None}
        if rec is None or rec["status"] != "ok":
            row["missing"] = "the part did not run" if rec is None else f"the part did not finish ({rec['status']})"
        else:
            try:
                row["value"] = get(rec.get("result") or {})
            except (KeyError, StopIteration, TypeError, IndexError, ValueError, ZeroDivisionError) as exc:
                row["missing"] = f"not in the saved result ({type(exc).__name__}: {exc})"
        out.append(row)
    return out


def assemble(records: list[dict], *, profile: str, wall_seconds: float | None, reused: list[str],
             figures: list[dict], provenance: dict, figure_errors: list[dict] | None = None) -> dict:
    """The results dict written as results.json."""
    from importlib.metadata import version as _v
    version = _v("verify")
    parts, claims, probes = [], [], []
    derivation = convergence = fuzz = bench = certify = reconcile = None
    for r in records:
        res = r.get("result") or {}
        dec = decision_of(r)
        parts.append({"name": r["part"], "kind": r["kind"], "status": r["status"], "seconds": r.get("seconds") or 0.0,
                      "verdict": dec["verdict"], "scope_label": dec["scope_label"], "reason": dec["reason"],
                      "statements": [{k: st[k] for k in ("statement", "role", "verdict", "scope_label", "reason")}
                                     for st in statements_of(r)],
                      "finding": short(finding_of(r), 400), "error": r.get("error"),
                      "reused": r["part"] in reused, "anchor": anchor(r["part"]), "evidence": f"parts/{r['file']}",
                      "replay": res.get("replay") if isinstance(res.get("replay"), str) else None})
        if r["status"] != "ok":
            continue
        if r["kind"] == "claim":
            claims.append(res | {"id": res.get("id", r["arg"]), "verdict": dec["verdict"],
                                 "scope_label": dec["scope_label"], "reason": dec["reason"]})
        elif r["kind"] == "probe":
            probes.append({k: res[k] for k in PROBE_FIELDS if k in res}
                          | {"probe": res.get("probe", r["arg"]), "verdict": dec["verdict"],
                             "scope_label": dec["scope_label"], "reason": dec["reason"],
                             "statements": statements_of(r)})
        elif r["kind"] == "derive":
            derivation = {k: res[k] for k in ("statement", "asymptotics", "reduction", "convention",
                                              "replay") if k in res} | {"verdict": dec["verdict"],
                                                                        "scope_label": dec["scope_label"]}
        elif r["kind"] == "convergence":
            convergence = {"verdict": dec["verdict"], "scope_label": dec["scope_label"], "regime": res.get("regime"),
                           "quantities": {q: {k: v for k, v in d.items() if k != "leading_term_values"}
                                          for q, d in res.get("quantities", {}).items()},
                           "replay": res.get("replay")}
        elif r["kind"] == "fuzz":
            fuzz = fuzz or {"claims": []}
            fuzz["claims"] += fuzz_items(res)
        elif r["kind"] == "bench":
            bench = res
        elif r["kind"] == "certify":
            cert = res.get("certificate") or {}
            certify = {k: res.get(k) for k in ("statement", "finding", "bounds", "relative_width_at_1e12", "replay")} | {
                "verdict": dec["verdict"], "scope_label": dec["scope_label"], "regime": res.get("regime"),
                "T0": cert.get("T0"), "constants": cert.get("constants"), "asymptotic": cert.get("asymptotic"),
                "region": {k: (cert.get("region") or {}).get(k) for k in ("definition", "u0", "C")},
                "a": cert.get("a"), "b": cert.get("b"), "cubic_coefficient_c": cert.get("cubic_coefficient_c"),
                "shells": len(cert.get("shells") or []), "obligations": len(cert.get("obligations") or []),
                "recheck": cert.get("recheck"),
                "exact_cases": {lab: {"note": ((e.get("certificate") or {}).get("rate") or {}).get("note"),
                                      "replay": e.get("replay")} for lab, e in (res.get("exact_cases") or {}).items()}}
        elif r["kind"] == "reconcile":
            reconcile = {k: res.get(k) for k in ("solutions", "unique", "status", "tstar", "reference", "stability",
                                                 "claims", "replay")} | {
                "verdict": dec["verdict"], "scope_label": dec["scope_label"],
                "statements": [{k: st[k] for k in ("statement", "role", "verdict", "scope_label", "reason")}
                               for st in statements_of(r)],
                "leading_terms": (res.get("derivation") or {}).get("leading_terms"),
                "d_exponents": (res.get("derivation") or {}).get("d_exponents"),
                "tstar_definition": (res.get("derivation") or {}).get("tstar_definition")}
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
        "certify": certify,
        "reconcile": reconcile,
        "headline_numbers": headline_numbers(records),
        "figures": figures,
        "figure_errors": list(figure_errors or []),
        "provenance": provenance,
    }
