"""How an evidence record is made: its kinds and roles, :func:`record` (one validated record) and :func:`proof`
(several exact steps as one record whose scope is their intersection)."""
from __future__ import annotations

import numpy as np

from .scope import Scope, intersect

KINDS = ("symbolic", "smt", "arb", "mpmath", "float64", "monte-carlo", "formal")
# formal: exact algebra on a formal (not proved) asymptotic expansion: it decides no comparison by a
# numeric threshold, yet it is not a proof, so it supports at most and never refutes alone.
EXACT_ALGEBRA_KINDS = ("symbolic", "smt", "formal")
PROOF_KINDS = ("symbolic", "smt")       # exact: an identity simplified to 0, a formula an SMT solver decided
RIGOROUS_KINDS = PROOF_KINDS + ("arb",)  # ... or a rigorous enclosure over a finite range
# test: bears on the statement, inside its hypotheses (True confirms, False refutes, None undecided);
# outside: run outside the statement's hypotheses: reported with what it found, never decides;
# context: informative only (an interpretation, a closed form), holds must be None;
# failed: a measurement that could not be made (holds None): the verdict is at most inconclusive.
ROLES = ("test", "outside", "context", "failed")
# A numeric counterexample refutes only if it fails again, to the same conclusion, at this many times its horizon.
REPLAY_FACTOR = 10


def as_holds(holds):
    """True / False / None, nothing else (numpy booleans are converted; strings are an error)."""
    if holds is None or isinstance(holds, bool):
        return holds
    if isinstance(holds, np.bool_):
        return bool(holds)
    raise TypeError(f"holds must be True, False or None, not {holds!r} ({type(holds).__name__})")


def record(route: str, kind: str, scope: Scope, result: str, holds, *, role: str = "test",
           threshold: dict | None = None, replay: str | None = None, replay_check: dict | None = None,
           **data) -> dict:
    """One evidence record (a JSON-ready dict), validated.

    ``holds``: True (confirms), False (a counterexample), None (undecided or informative).
    ``threshold``: ``{"value": ..., "why": "..."}``, required when a non-exact route decides by a
    comparison (which bound, and why that bound). ``replay``: the command that reproduces a
    counterexample (required with holds = False). ``replay_check``: ``{"horizon": H, "holds": ...}``,
    the same check re-run at a longer horizon (a numeric counterexample refutes only if it replays).
    """
    if kind not in KINDS:
        raise ValueError(f"evidence kind must be one of {KINDS}, not {kind!r}")
    if role not in ROLES:
        raise ValueError(f"evidence role must be one of {ROLES}, not {role!r}")
    if not isinstance(scope, Scope):
        raise TypeError(f"scope must be a Scope, not {type(scope).__name__}")
    if scope.also:
        raise ValueError(f"{route!r}: a record states one scope (no 'also')")
    holds = as_holds(holds)
    if role in ("context", "failed") and holds is not None:
        raise ValueError(f"a {role} record has holds = None, not {holds!r}")
    if role == "test" and holds is not None and kind not in EXACT_ALGEBRA_KINDS:
        if not (isinstance(threshold, dict) and "value" in threshold and threshold.get("why")):
            raise ValueError(f"{route!r}: a {kind} record that decides needs threshold={{'value', 'why'}}")
    if role == "test" and holds is False and not replay:
        raise ValueError(f"{route!r}: a counterexample needs a replay command")
    if replay_check is not None:
        if not (isinstance(replay_check, dict) and "horizon" in replay_check and "holds" in replay_check):
            raise ValueError("replay_check must be {'horizon': H, 'holds': True/False/None, ...}")
        replay_check = dict(replay_check, holds=as_holds(replay_check["holds"]))
    out = {"route": route, "kind": kind, "role": role, "scope": scope.as_dict(), "result": result, "holds": holds}
    if threshold is not None:
        out["threshold"] = threshold
    if replay is not None:
        out["replay"] = replay
    if replay_check is not None:
        out["replay_check"] = replay_check
    return out | data


def proof(route: str, steps: list[dict], *, replay: str | None = None, **data) -> dict:
    """One complete proof as a single record: the conjunction of its ``steps`` (records of exact kinds).

    A proof covers only what every step covers, so its scope is the intersection of the steps' scopes
    (a general lemma among the steps cannot widen it); it holds when every step is proved. A proof with
    a step open or disproved is not a counterexample to anything (the method failed, not the statement):
    it is recorded as context, naming the steps that did not close. The steps are kept inside the
    record ("steps"), where :func:`decide` does not read them one by one."""
    if not steps:
        raise ValueError(f"{route!r}: a proof needs at least one step")
    kinds = {st["kind"] for st in steps}
    if not kinds <= set(RIGOROUS_KINDS):
        raise ValueError(f"{route!r}: proof steps must be exact or enclosures, not {sorted(kinds - set(RIGOROUS_KINDS))}")
    kind = "arb" if "arb" in kinds else ("smt" if "smt" in kinds else "symbolic")
    scope = intersect([Scope.from_dict(st["scope"]) for st in steps])
    open_ = [st for st in steps if st["holds"] is not True]
    if open_:
        result = f"{len(open_)} of {len(steps)} steps not proved: " + "; ".join(
            f"{st['route']} ({'disproved' if st['holds'] is False else 'open'})" for st in open_)
        return record(route, kind, scope, result, None, role="context", steps=steps, **data)
    result = f"all {len(steps)} steps proved ({', '.join(sorted(kinds))})"
    return record(route, kind, scope, result, True, replay=replay, steps=steps, **data)


__all__ = ["KINDS", "EXACT_ALGEBRA_KINDS", "PROOF_KINDS", "RIGOROUS_KINDS", "ROLES", "REPLAY_FACTOR", "as_holds",
           "record", "proof"]
