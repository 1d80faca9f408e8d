"""``reconcile()``: the ``verify reconcile --json`` object, assembled from verify.reconcile.analysis.

Keys: ``family`` and ``derivation`` (the widened family, the leading terms and their D-exponents, the
combination rules, the conditions); ``claims``; ``readings`` (for each reading of T*, every system's
solution set, each with its exponents by member name, its T* exponent, where every other claim and
condition holds, and a witness or a verified certificate); ``representative`` and ``reference`` (GD
fits, after dividing out the finite-D factors, with the raw fits beside them); ``statements`` and
``verdicts`` (decided by verify.evidence.decide); ``evidence``; ``options``; ``replay``.
"""
from __future__ import annotations

import sympy as sp

from .analysis import (SCOPE, derivation_json, derived_statements, numerics_of, numerics_statement, ordered,
                       reading_result, reading_statements, representative_of)
from .claims import TSTAR_READINGS, default_claims
from .confirm import BAND, REPLAY
from .scaling_family import FAMILY_LABEL, MEMBERS
from .realise import budget
from .systems import point_json

CLAIMS_SOURCE = "Theorem 3.1 and T* ~ D^2 as verify.model.paper states them"


def _readings(claims: dict | None) -> list[tuple[str, str, dict]]:
    """(id, text, claims) for every reading of T* solved (one, the file's, with --claims)."""
    if claims is None:
        return [(r.id, r.text, default_claims(r)) for r in TSTAR_READINGS]
    return [("claims-file", "the claimed T*" if "tstar" in claims else "", claims)]


def _representative(systems, claims: dict, profile: str, numerics: bool) -> tuple[dict | None, dict | None]:
    """The representative's JSON and its GD confirmation (None when no system is feasible)."""
    sys_, wit = representative_of(systems)
    if wit is None:
        return None, None
    num = numerics_of(wit, profile) if numerics else None
    out = point_json(wit, claims) | {"from_system": sys_.id, "numerics": _public(num)}
    return out, num


def _reference(claims: dict, profile: str, numerics: bool) -> dict:
    """The reference convention (every exponent 0, one step size): derived D-exponents and GD's fits."""
    zero = {m.name: sp.Integer(0) for m in MEMBERS}
    out = point_json(zero, claims)
    if numerics:
        out["numerics"] = _public(numerics_of(zero, profile, one_step=True, label="reference convention"))
    return out


def _public(num: dict | None) -> dict | None:
    return None if num is None else {k: v for k, v in num.items() if k != "evidence"}


def _distinct(records) -> list:
    """Each record once (the derivation's records back several statements)."""
    seen, out = set(), []
    for r in records:
        key = (r["route"], r["result"])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def reconcile(claims: dict | None = None, profile: str = "ci", numerics: bool = True) -> dict:
    """The ``verify reconcile --json`` object (module docstring). ``claims``: {quantity: Claim} (default:
    Theorem 3.1 under every reading of T*)."""
    budget(profile)
    readings = _readings(claims)
    solved = [(rid, text, cl, *reading_result(cl, text, rates=i == 0)) for i, (rid, text, cl) in enumerate(readings)]
    statements = {}
    for i, (rid, text, _, _, _, recs) in enumerate(solved):
        statements |= reading_statements(rid, text, recs, main=i == 0)
    statements |= derived_statements()
    rep, num = _representative(solved[0][3], solved[0][2], profile, numerics)
    if num is not None:
        statements["numerics_agree"] = numerics_statement(num, rep["text"])
    headline = "rates_tstar_conditions" if "rates_tstar_conditions" in statements else "rates_conditions"
    pairs = ordered(statements, headline)
    decided = {k: st.decided() for k, st in pairs}
    return {
        "family": {"label": FAMILY_LABEL, "scope": SCOPE.as_dict()},
        "derivation": derivation_json(),
        "claims": {rid: {q: c.as_dict() for q, c in cl.items()} for rid, _, cl, *_ in solved},
        "claims_source": CLAIMS_SOURCE if claims is None else "--claims",
        "readings": [{"id": rid, "text": text, "systems": js} for rid, text, _, _, js, _ in solved],
        "representative": rep,
        "reference": _reference(solved[0][2], profile, numerics),
        "statements": list(decided.values()),
        "verdicts": decided,
        "evidence": _distinct(r for st in decided.values() for r in st["evidence"]),
        "options": {"profile": profile, "numerics": numerics, "family": FAMILY_LABEL, "sigma": "identity",
                    "grid": list(budget(profile).Ds), "phase_factor": budget(profile).phase_factor, "band": BAND,
                    "reference_convention": "summed loss, entry variance 1, P^T P = I, logit temperature 1, one step size "
                                            "(eta_KQ = eta_V), N and ||V*||_F fixed: every exponent 0"},
        "replay": REPLAY if claims is None else "verify reconcile --json --claims FILE",
    }


__all__ = ["CLAIMS_SOURCE", "reconcile"]
