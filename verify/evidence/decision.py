"""The one rule: :func:`decide` turns evidence records into a verdict, the scope it covers and the reason (the
package docstring, verify.evidence, states the rule); a :class:`Statement` is decided by it."""
from __future__ import annotations

from dataclasses import dataclass

from ..model.hypotheses import closure
from .recording import KINDS, PROOF_KINDS, RIGOROUS_KINDS, ROLES, as_holds
from .scope import ALL, Scope, covered, horizon_covers, horizon_label

VERDICTS = ("proved", "certified", "supported", "refuted", "inconclusive")
EXTENTS = ("whole", "part", "")


@dataclass(frozen=True)
class Decision:
    """A verdict, the scope it covers (as it reads), and why; ``extent``: "whole" when exact or rigorous records
    establish the whole statement (proved, certified), "part" when they establish a part of it only (supported,
    with a certified part), "" otherwise."""

    verdict: str
    scope: str
    reason: str
    extent: str = ""

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "scope": self.scope, "reason": self.reason, "extent": self.extent}


def _scope(rec: dict) -> Scope:
    return Scope.from_dict(rec["scope"])


def _union_label(recs: list[dict]) -> str:
    seen = []
    for r in recs:
        lab = r["scope"]["label"]
        if lab not in seen:
            seen.append(lab)
    return "; ".join(seen)


def _refutes(r: dict, statement: Scope) -> bool:
    """Whether a counterexample record refutes the statement: an exact one or a certified bound (Arb) only when
    it assumed nothing the statement's hypotheses do not imply; a numeric one only when it replayed; a formal
    one never alone."""
    if r["kind"] in RIGOROUS_KINDS:
        return set(r["scope"].get("assumes", ())) <= closure(statement.assumes)
    if r["kind"] == "formal":
        return False
    rc = r.get("replay_check")
    return isinstance(rc, dict) and rc.get("holds") is False


def _refutation(r: dict) -> str:
    """Which kind of refutation ``r`` is, in words."""
    if r["kind"] in PROOF_KINDS:
        return "an exact counterexample"
    if r["kind"] == "arb":
        return "a certified bound (rigorous enclosure) contradicts it"
    return f"a counterexample that failed again at t = {r['replay_check']['horizon']}"


def _routes(recs: list[dict]) -> str:
    return "; ".join(dict.fromkeys(r["route"] for r in recs))


def _field_covers(a, b) -> bool:
    return a == ALL or (b != ALL and set(b) <= set(a))


def uncovered(scopes: list[Scope], statement: Scope) -> list[str]:
    """What of ``statement`` the union of ``scopes`` leaves uncovered, as it reads ("all dimensions", "all t",
    "sigma {erf}", ...): per atom of the statement (one sigma, convention and dims value) that is not covered, the
    quantifiers the scopes of its sigma miss; atoms missing the same ones are named together ("(sigma erf, relu)")."""
    out = {}
    for atom in statement.atoms():
        if covered(scopes, atom):
            continue
        fit = [s for s in scopes if _field_covers(s.sigma, atom.sigma)]
        gaps = []
        if not fit:
            gaps.append("every sigma" if atom.sigma == ALL else f"sigma {{{', '.join(atom.sigma)}}}")
        else:
            if not covered([Scope(s.dims) for s in fit], Scope(atom.dims)):
                gaps.append(atom.dims_label())
            if not any(horizon_covers(s.horizon, atom.horizon) for s in fit):
                gaps.append(horizon_label(atom.horizon))
            if not any(_field_covers(s.conventions, atom.conventions) for s in fit):
                gaps.append("every convention" if atom.conventions == ALL else
                            f"conventions {{{', '.join(atom.conventions)}}}")
            if not any(set(s.assumes) <= closure(atom.assumes) for s in fit):
                gaps.append("the statement's hypotheses alone (it assumed more)")
        sig = atom.sigma[0] if fit and atom.sigma != ALL and statement.sigma != ALL and len(statement.sigma) > 1 else ""
        out.setdefault(", ".join(gaps) or "all of it at once", []).append(sig)
    return [text + (f" (sigma {', '.join(dict.fromkeys(s for s in sigs if s))})" if any(sigs) else "")
            for text, sigs in out.items()]


def _certified_part(rigorous: list[dict], statement: Scope) -> str:
    """What the rigorous records certify of a statement they do not cover: where, and what they leave."""
    several = statement.sigma == ALL or len(statement.sigma) > 1
    where = list(dict.fromkeys(_where(_scope(r), several) for r in rigorous))
    gaps = uncovered([_scope(r) for r in rigorous], statement)
    word = "proved" if all(r["kind"] in PROOF_KINDS for r in rigorous) else "certified"
    return (f"{word} only on part of the statement: " + "; ".join(where) + f" ({_routes(rigorous)})"
            + (", not for " + "; ".join(gaps) if gaps else ""))


def _where(sc: Scope, sigma: bool) -> str:
    """Where a record certified, in a reason: its sizes, its sigma (with ``sigma``: the statement names several) and
    horizon ("at {D=8 ...}, t <= 150")."""
    sig = ", sigma " + "/".join(sc.sigma) if sigma and sc.sigma != ALL else ""
    return f"{sc.dims_label().replace('checked at dimensions', 'at')}{sig}, {horizon_label(sc.horizon)}"


def decide(records: list[dict], statement: Scope) -> Decision:
    """The verdict the records allow for a statement of scope ``statement`` (module docstring)."""
    for r in records:
        if r.get("role") not in ROLES or r.get("kind") not in KINDS or "scope" not in r:
            raise ValueError(f"not an evidence record (use verify.evidence.record): {r!r}")
        as_holds(r.get("holds"))
    tests = [r for r in records if r["role"] == "test"]
    counter = [r for r in tests if r["holds"] is False]
    refuting = [r for r in counter if _refutes(r, statement)]
    if refuting:
        first = refuting[0]
        return Decision("refuted", _union_label(refuting), f"{_refutation(first)}: {first['route']}: {first['result']} "
                        f"(replay: {first['replay']})")
    if counter:
        first = counter[0]
        why = ("a formal asymptotic expansion contradicts it, and a formal expansion cannot refute on its own"
               if first["kind"] == "formal" else
               "an exact counterexample or certified bound assumes more than the statement's hypotheses"
               if first["kind"] in RIGOROUS_KINDS else "a counterexample did not replay at a longer horizon")
        return Decision("inconclusive", _union_label(counter), f"{why}: {first['route']}: {first['result']}")
    undecided = [r for r in records if r["role"] == "failed" or (r["role"] == "test" and r["holds"] is None)]
    if undecided:
        first = undecided[0]
        return Decision("inconclusive", _union_label(undecided),
                        f"a measurement failed or could not decide: {first['route']}: {first['result']}")
    confirming = [r for r in tests if r["holds"] is True]
    proofs = [r for r in confirming if r["kind"] in PROOF_KINDS]
    if proofs and covered([_scope(r) for r in proofs], statement):
        return Decision("proved", statement.label(), "exact proofs cover the whole statement: " + _routes(proofs),
                        "whole")
    rigorous = [r for r in confirming if r["kind"] in RIGOROUS_KINDS]
    if rigorous and covered([_scope(r) for r in rigorous], statement):
        return Decision("certified", statement.label(), "rigorous enclosures" + (" and exact proofs" if proofs else "")
                        + " cover the whole statement: " + _routes(rigorous), "whole")
    if rigorous:
        rest = [r for r in confirming if r["kind"] not in RIGOROUS_KINDS]
        return Decision("supported", _union_label(rigorous + rest), _certified_part(rigorous, statement) + "; "
                        + (f"the rest rests on {_routes(rest)}" if rest else "nothing else covers the rest"), "part")
    if confirming:
        return Decision("supported", _union_label(confirming), "numerics or a formal expansion agree, no "
                        "counterexample: " + _routes(confirming))
    return Decision("inconclusive", statement.label(), "no record inside the statement's hypotheses decides it")


@dataclass(frozen=True)
class Statement:
    """One statement a claim, probe or part tests: its text, its scope (what it speaks of), its evidence
    records, and whether it is the headline ("primary") or a further one."""

    text: str
    scope: Scope
    evidence: list
    role: str = "primary"

    def __post_init__(self):
        if not isinstance(self.scope, Scope):
            raise TypeError("Statement.scope must be a verify.evidence.Scope")
        if not self.evidence:
            raise AssertionError(f"statement {self.text!r} has no evidence record")

    def decided(self) -> dict:
        """The statement as saved: text, role, scope, records, and the verdict, scope label and reason
        that :func:`decide` derives from the records."""
        d = decide(self.evidence, self.scope)
        return {"statement": self.text, "role": self.role, "scope": self.scope.as_dict(), "evidence": self.evidence,
                "verdict": d.verdict, "scope_label": d.scope, "reason": d.reason, "extent": d.extent}


def headline(statements: list[Statement]) -> dict:
    """The result fields of something whose first statement is its headline: the decided statements,
    and the headline's verdict, scope label, reason, text, scope and records at the top level."""
    decided = [st.decided() for st in statements]
    head = decided[0]
    return {k: head[k] for k in ("verdict", "scope_label", "reason", "statement", "scope", "evidence")} | {
        "statements": decided}


__all__ = ["VERDICTS", "EXTENTS", "Decision", "decide", "uncovered", "Statement", "headline"]
