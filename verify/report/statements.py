"""The judged statements of a report: read from the saved part records, each decided again by the one rule.

A claim or a probe (a :class:`verify.checks.Check`) saves ``statements`` in the shape of
:func:`verify.checks.decided`: id, text, role ("claim": a part of one of the paper's claims; "control": a
negative control; "finding": the toolkit's own finding), about, relation, hypotheses, scope, evidence, why and
corrected. The built-in parts of ``verify all`` (derive, convergence, certify, reconcile, ...) save
:func:`verify.evidence.headline` dicts whose statements carry "statement" text and role "primary"/"further":
they are the toolkit's findings, and so is every fuzz part (one statement per fuzzed claim).

Every verdict here is derived again from the saved records (:func:`verify.evidence.decide`), never copied: a
statement saved without records reads "inconclusive", and a saved verdict the rule does not reproduce is
kept as ``saved_verdict`` beside the derived one and named in the reason.
"""
from __future__ import annotations

import re

from ..checks import ROLES
from ..evidence import ROLES as RECORD_ROLES
from ..evidence import VERDICTS, Scope, decide, record

NO_SCOPE = "no evidence records"
NOT_CHECKED = "not checked"
FUZZ_SCOPE = Scope(dims=("fuzzed regimes",))
# Folded scopes show at most this many record scopes; the full label is one click away.
SHORT_SCOPES = 2


def anchor(name: str) -> str:
    """The in-page anchor of a part's section (``claim:lemma-C.2`` -> ``part-claim-lemma-c-2``)."""
    return "part-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def is_record(e) -> bool:
    return isinstance(e, dict) and e.get("role") in RECORD_ROLES and isinstance(e.get("scope"), dict) and "kind" in e


def records_of(st: dict) -> list | None:
    """The statement's evidence records, or None when it saved none (or something that is not records)."""
    ev = st.get("evidence")
    return ev if isinstance(ev, list) and ev and all(is_record(e) for e in ev) else None


def scope_of(d) -> Scope:
    """A saved scope; an unreadable one is the strictest target (nothing but a proof of everything covers it)."""
    try:
        return Scope.from_dict(d)
    except (KeyError, TypeError, ValueError):
        return Scope()


def short_scope(evidence: list | None, label: str, statement_scope: Scope) -> str:
    """The scope a verdict covers, folded (counts instead of long lists: verify.evidence.Scope.short_label).

    The rule's label is the statement's (a proof) or the deciding records' labels joined by "; ". It is read
    back as that sequence of record labels (the longest record label at each point), each folded through its
    own Scope; a label that does not read back so is shown whole."""
    if label == statement_scope.label():
        return statement_scope.short_label()
    folded = {e["scope"]["label"]: scope_of(e["scope"]).short_label() for e in evidence or []
              if isinstance(e["scope"].get("label"), str)}
    shorts, rest = [], label
    while rest:
        head = max((lab for lab in folded if rest == lab or rest.startswith(lab + "; ")), key=len, default=None)
        if head is None:
            return label
        shorts.append(folded[head])
        rest = rest[len(head) + 2:]
    shorts = list(dict.fromkeys(shorts))
    more = len(shorts) - SHORT_SCOPES
    return "; ".join(shorts[:SHORT_SCOPES]) + (f" (and {more} more)" if more > 0 else "")


def _decision(ev: list | None, target: Scope) -> dict:
    if ev is None:
        return {"verdict": "inconclusive", "scope_label": NO_SCOPE, "short_scope": NO_SCOPE, "extent": "",
                "reason": "no evidence records: the report derives every verdict from records"}
    try:
        d = decide(ev, target)
    except (ValueError, TypeError) as exc:
        return {"verdict": "inconclusive", "scope_label": NO_SCOPE, "short_scope": NO_SCOPE, "extent": "",
                "reason": f"unreadable evidence records: {exc}"}
    return {"verdict": d.verdict, "scope_label": d.scope, "short_scope": short_scope(ev, d.scope, target),
            "reason": d.reason, "extent": d.extent}


def redecide(st: dict) -> dict:
    """verdict, scope_label, short_scope, reason (and saved_verdict when the saved one differs) of one saved
    statement, by the one rule from its records."""
    saved = st.get("verdict") if st.get("verdict") in VERDICTS else None
    out = _decision(records_of(st), scope_of(st.get("scope")))
    if saved and saved != out["verdict"]:
        out["saved_verdict"] = saved
        out["reason"] += f" [the part saved '{saved}'; the rule gives '{out['verdict']}' from its records]"
    return out


def _why(st: dict, dec: dict) -> str:
    """The statement's one sentence of why: the check's own, unless the verdict it explained is not the one the
    rule gives now (then the rule's reason)."""
    why = st.get("why")
    if not why or "saved_verdict" in dec or why == st.get("reason"):
        return dec["reason"]
    return str(why)


def normalised(st: dict, part: str, check: str | None, default_role: str = "finding") -> dict:
    """One saved statement in the report's shape, decided again (see the module docstring); a statement saved
    without one of the roles (a headline dict's "primary"/"further") takes ``default_role``."""
    dec = redecide(st)
    role = st.get("role") if st.get("role") in ROLES else default_role
    hyps = st.get("hypotheses")
    return {"id": st.get("id"), "part": part, "check": check, "text": " ".join(str(st.get("text") or
            st.get("statement") or "").split()), "role": role, "about": st.get("about"), "relation": st.get("relation"),
            "hypotheses": [str(h) for h in hyps] if isinstance(hyps, list) else [],
            "scope": st.get("scope") if isinstance(st.get("scope"), dict) else None,
            "evidence": records_of(st), "why": _why(st, dec), "corrected": st.get("corrected") or None} | dec


STEP_ROUTE = {"sympy identity": "SymPy", "matrix calculus": "SymPy"}   # a proof step's method -> its route


def step_routes(step: dict, accepted=()) -> list[str]:
    """The routes that decided one step of a proof: SymPy (an identity), each SMT solver, and Coq when the kernel
    accepted it (its statement among ``accepted``, the proof's kernel route's accepted obligations)."""
    out = [STEP_ROUTE[step["method"]]] if step.get("method") in STEP_ROUTE else []
    out += [s for s in (step.get("solvers") or {}) if s not in out]
    return out + (["Coq"] if step.get("route") in accepted else [])


def _leaves(steps) -> list:
    """A proof's steps, a step that is itself a proof replaced by its own steps."""
    return [leaf for step in steps if isinstance(step, dict)
            for leaf in (_leaves(step["steps"]) if step.get("steps") else [step])]


def obligation_routes(st: dict) -> tuple[list, list]:
    """(routes of each obligation, kernel routes) of a statement: the steps of its proofs that hold (with the Coq
    route where the proof's kernel route accepted the step) and the obligations its context records list with
    their routes (an all-time certificate's: verify.certify.certificate_records), each a list of route names."""
    per, kernel = [], []
    for rec in records_of(st) or ():
        k = rec.get("kernel") if isinstance(rec.get("kernel"), dict) else None
        if rec.get("holds") is True and rec.get("role") == "test" and rec.get("steps"):
            if k:
                kernel.append(k)
            accepted = set((k or {}).get("accepted_obligations") or ())
            per += [step_routes(step, accepted) for step in _leaves(rec["steps"])]
        elif rec.get("role") == "context" and isinstance(rec.get("routes"), list):
            per.append([str(r) for r in rec["routes"]])
        elif rec.get("role") == "context" and k:
            kernel.append(k)
    return per, kernel


def proof_routes(st: dict) -> str:
    """Which routes decided the statement's obligations (the steps of its exact proofs, or an all-time certificate's
    obligations): SymPy, z3, cvc5, Arb and Coq (verify.coq), with the obligations grouped by the routes that
    decided each ("4 by z3 + cvc5 + Coq, 3 by SymPy"); "" when it has none. "kernel-checked" when the kernel accepted
    every obligation, else how many; "kernel route not run" when a kernel route was not run (no coqc)."""
    per, kernel = obligation_routes(st)
    if not per:
        return ""
    names = list(dict.fromkeys(r for rs in per for r in rs))
    groups = {}
    for rs in per:
        groups[" + ".join(rs)] = groups.get(" + ".join(rs), 0) + 1
    n = sum("Coq" in rs for rs in per)
    out = "Routes: " + ", ".join(names) + ("" if len(per) == 1 else " (" + ", ".join(
        f"{c} by {g}" if i else f"{c} obligation{'s' * (c != 1)} by {g}" for i, (g, c) in enumerate(groups.items())) + ")")
    if n:
        out += "; kernel-checked" + (" (every obligation)" if n == len(per) else f": {n} of its {len(per)} obligations")
    out += "."
    return out + (" Kernel route not run." if any(k.get("status") == "not run" for k in kernel) else "")


def fuzz_items(res: dict) -> list[dict]:
    """The per-claim fuzz results of a fuzz part (one claim, or a {"claims": [...]} bundle)."""
    items = res.get("claims", [res] if "claim" in res else [])
    return [i for i in items if isinstance(i, dict)]


def fuzz_statement(item: dict) -> dict:
    """A fuzzed claim as a statement: "no counterexample inside its hypotheses", decided from the fuzzer's
    records; a fuzzed claim without records decides nothing (a failed measurement)."""
    ev = records_of(item)
    if ev is None:
        ev = [record(f"fuzz {item.get('claim')}", "float64", FUZZ_SCOPE, "no evidence records saved", None,
                     role="failed")]
    return {"id": f"fuzz:{item.get('claim')}", "about": item.get("claim"), "relation": "supports",
            "text": f"{item.get('claim')} holds in every regime drawn inside its hypotheses (verify fuzz)",
            "role": "finding", "scope": FUZZ_SCOPE.as_dict(), "evidence": ev, "verdict": item.get("verdict")}


def counts(statements: list[dict]) -> dict:
    """{role: {verdict: n}} over ``statements``: the paper's claims, the negative controls and the toolkit's
    findings each counted apart (a finding outside a claim's hypotheses is never a verdict on the paper)."""
    out = {role: {} for role in ROLES}
    for st in statements:
        c = out[st["role"]]
        c[st["verdict"]] = c.get(st["verdict"], 0) + 1
    return out


def extents(statements: list[dict]) -> dict:
    """{role: {"whole": n, "part": n}}: how many statements exact or rigorous records establish over the whole
    statement (proved, certified), and how many on a finite part of it only (supported, with a certified part;
    verify.evidence.Decision.extent)."""
    out = {role: {"whole": 0, "part": 0} for role in ROLES}
    for st in statements:
        if st.get("extent") in ("whole", "part"):
            out[st["role"]][st["extent"]] += 1
    return out


__all__ = ["NO_SCOPE", "NOT_CHECKED", "anchor", "is_record", "records_of", "scope_of", "short_scope", "redecide", "normalised",
           "fuzz_items", "fuzz_statement", "counts", "extents"]
