"""Which of a claim's statements speak of a regime, and which of their proofs cover it (``verify check ID
--regime FILE``).

A statement's scope *admits* a regime when the regime lies in it (verify.evidence.Scope.admits: its sizes,
sigma, convention and every assumption). A proof covers the regime when one of the statement's exact proof
records (kinds symbolic, smt: verify.evidence.PROOF_KINDS) holds with a scope that admits it: those are exact in
every parameter their scope does not fix, under the assumptions it names. A regime can lie inside a statement
and outside its proof: Lemma C.2 speaks of eta_V < 2K/(c_L v N), its induction assumes eta_V c_L v N <= 1.
Enclosures (arb) certify the one regime each was computed at; a scope does not record eta or V*, so they are
listed, never taken to cover the user's regime.

The evidence is the claim's own: its saved part (``verify all`` under this code version, reports/latest) when
there is one, else a run of the claim at the ci profile (said on stderr; kept for the process).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..evidence import PROOF_KINDS, RIGOROUS_KINDS, Scope
from ..model.hypotheses import hypotheses
from ..pipeline.runner import DEFAULT_OUT, load_saved, part_options, parts_dir
from ..run.parts import Part
from ..run.version import code_version
from .progress import note

PROFILE = "ci"


@lru_cache(maxsize=None)
def _run(claim_id: str, version: str) -> dict:
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    return CLAIMS[claim_id].run(PROFILE).as_dict()


def claim_result(claim_id: str, quiet: bool = False) -> tuple[dict, str]:
    """(the claim's decided statements with their evidence records, where they come from)."""
    part, version = Part("claim", claim_id), code_version()
    for folder in (parts_dir(DEFAULT_OUT), Path(DEFAULT_OUT) / "parts"):
        rec = load_saved(folder / part.filename, part_options(part, PROFILE), version)
        if rec is not None:
            return rec["result"], f"the saved part {folder / part.filename} (verify all, this code version)"
    note(f"verify check: running {claim_id} at the {PROFILE} profile to read which proofs cover this regime "
         f"(verify all saves it for next time)", quiet)
    return _run(claim_id, version), f"a run of {claim_id} at the {PROFILE} profile (this code version)"


def unmet(scope: Scope, setting) -> list[str]:
    """The assumptions of ``scope`` the regime breaks (texts)."""
    return [h.text for h in hypotheses(scope.assumes) if h.holds is not None and not h.holds(setting)]


def _route(rec: dict, setting) -> dict:
    sc = Scope.from_dict(rec["scope"])
    exact = rec["kind"] in PROOF_KINDS
    return {"route": rec["route"], "kind": rec["kind"], "scope": sc.short_label(),
            "covers": bool(exact and sc.admits(setting)), "unmet": unmet(sc, setting) if exact else []}


def why_not_proved(routes: list[dict]) -> str:
    """Why none of the exact ``routes`` covers the regime: the assumptions it breaks, or the sizes, sigma or
    convention they were made for."""
    exact = [r for r in routes if r["kind"] in PROOF_KINDS]
    unmet_ = sorted({u for r in exact for u in r["unmet"]})
    if unmet_:
        return "its proofs assume " + "; ".join(unmet_)
    if exact:
        scopes = sorted({r["scope"] for r in exact})
        return "its proofs are for " + "; ".join(scopes[:3]) + (f" and {len(scopes) - 3} more" if len(scopes) > 3 else "")
    return "it has no exact proof"


def statement_coverage(st: dict, setting) -> dict:
    """One statement against the regime: whether its scope admits it (and the assumptions it breaks), its
    rigorous routes (exact proofs with whether each covers the regime; enclosures, which certify their own
    regimes only), and the conclusion in words."""
    scope = Scope.from_dict(st["scope"])
    admits = bool(scope.admits(setting))
    routes = [_route(r, setting) for r in st.get("evidence", ())
              if r.get("kind") in RIGOROUS_KINDS and r.get("holds") is True and r.get("role") == "test"]
    proved = [r for r in routes if r["covers"]]
    boxes = sum(r["kind"] not in PROOF_KINDS for r in routes)
    if not admits:
        covers = "outside the statement (" + "; ".join(unmet(scope, setting) or ["its sizes, sigma or convention"]) + ")"
    elif proved:
        covers = f"proved here: {proved[0]['route']}"
    else:
        covers = f"no proof covers it: {why_not_proved(routes)}; its verdict ({st.get('verdict')}) rests on its own regimes"
    if admits and not proved and boxes:
        covers += f" ({boxes} enclosure{'s' if boxes > 1 else ''} certify the regimes they were computed at)"
    return {"id": st["id"], "role": st.get("role"), "verdict": st.get("verdict"), "text": st.get("text"),
            "admits": admits, "unmet": unmet(scope, setting), "routes": routes, "proved_here": bool(proved and admits),
            "coverage": covers}


def coverage(claim_id: str, setting, quiet: bool = False) -> dict:
    """{"from": where the evidence comes from, "statements": [statement_coverage, ...]} for the claim."""
    res, source = claim_result(claim_id, quiet)
    return {"from": source, "statements": [statement_coverage(st, setting) for st in res["statements"]]}


__all__ = ["coverage", "statement_coverage", "claim_result", "unmet", "why_not_proved"]
