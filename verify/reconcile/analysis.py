"""The evidence and statements of the reconciliation (assembled by verify.reconcile.reconciliation).

1. verify.reconcile.scaling_family writes every convention a paper might scale as a power of D and derives the
   D-exponents of the slow-manifold leading terms and of T* (affine in the members' exponents);
   verify.reconcile.combinations proves through which combinations the conventions enter.
2. verify.reconcile.systems solves the claims (verify.reconcile.claims) over the whole family, with and
   without T* and the conditions of verify.reconcile.constraints: every solution set, decided by z3 and
   checked exactly (a witness, or a Farkas certificate).
3. One representative member where everything holds (or as much as holds) is realised and iterated,
   and its D-exponents fitted (verify.reconcile.confirm); so is the reference convention.

Every verdict comes from verify.evidence.decide on the records made here. The leading terms rest on the
slow-manifold expansion, a formal asymptotic expansion: every statement about the family assumes it
(hypothesis "slow-manifold"), so the solver's exact decisions prove or refute statements about the
expansion's leading terms, and say so in their scope; the expansion itself is a record of kind "formal".
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..evidence import Scope, Statement, proof, record
from .combinations import combination_obligations, not_entering
from .confirm import REPLAY, confirm
from .constraints import constraints
from .scaling_family import (COMBINATIONS, FAMILY_LABEL, HELD_FIXED, MEMBERS, QUANTITIES, TERMS, TEXT, TSTAR_DEFINITION,
                     exponent_table, finite_d_factor, leading_terms)
from .realise import budget, realise
from .solve import exponents_text
from .systems import System, groups_of, system_json, systems_for

# The statements are about the family's leading terms: they assume the expansion that gives them and the
# hypotheses of the exact reduction it is derived from.
ASSUMES = ("slow-manifold", "identity", "0<K<D", "zero-init", "centred", "orthogonal-P", "distinct-queries",
           "uniform-S*")
SCOPE = Scope(dims="all", sigma=("identity",), conventions=(FAMILY_LABEL,), horizon="all", assumes=ASSUMES)
# "the reduced recursion" exists where the reduction holds: columns of S two-valued (P^T P = lambda I, distinct queries)
REDUCED_RECURSION = Scope("all", ("identity",), "all", "all", assumes=("orthogonal-P", "distinct-queries"))
CONDITIONS = "every condition (both step-size blocks stable, W_X relaxed within T*, 1 <= N <= D)"


@lru_cache(maxsize=None)
def derivation_json() -> dict:
    """The symbolic part shared by every run: the family, the leading terms, their exponents, the rules."""
    table = exponent_table()
    return {"family": FAMILY_LABEL,
            "members": [{"name": m.name, "reads": m.text(m.name), "what": m.what} for m in MEMBERS],
            "combinations": [c.text(c.form) for c in COMBINATIONS], "held_fixed": HELD_FIXED,
            "leading_terms": {q: sp.sstr(t) for q, t in leading_terms().items()},
            "d_exponents": {q: sp.sstr(table[q]["D"]) for q in TERMS},
            "exponent_table": {q: {v: sp.sstr(e) for v, e in row.items()} for q, row in table.items()},
            "finite_d_factors": {q: sp.sstr(finite_d_factor(q)) for q in QUANTITIES},
            "combination_rules": [o.as_dict() for o in combination_obligations()],
            "not_entering": not_entering(), "conditions": [c.as_dict() for c in constraints()],
            "tstar_definition": TSTAR_DEFINITION}


def formal_record() -> dict:
    """The slow-manifold expansion as evidence: a formal asymptotic expansion, which every statement here
    assumes (context: it is what the exact records reason about, not a confirmation of its own)."""
    terms = ", ".join(f"{TEXT[q]} ~ {sp.sstr(t)}" for q, t in leading_terms().items())
    return record("slow-manifold expansion: leading terms as T -> oo (verify.derive.asymptotics."
                  "leading_terms_general), D-exponents affine in the family's exponents", "formal", SCOPE,
                  f"derived (alpha tracks alpha*(u), Delta u = -c u^3 + O(u^4)): {terms}", None, role="context",
                  replay=REPLAY)


def combination_record() -> dict:
    """The combination rules as one proof (exact SymPy identities on the reduced recursion)."""
    return proof("the conventions enter GD only through eta_KQ lambda^2 beta^2, c_L v and ||V*||_F^2 "
                 "(eta_V only in the alpha step; M, d nowhere)", [o.evidence(REPLAY) for o in combination_obligations()],
                 replay=REPLAY)


def system_records(s: System) -> list[dict]:
    """The decision of one system: z3 over the rationals, checked exactly (witness or certificate); for a
    system of equations only, sympy.linsolve too. An empty set is recorded only with its certificate."""
    feas = s.feasible
    how = ("witness substituted exactly into every row" if feas else
           "Farkas certificate checked exactly" if feas is False else "z3 and the exact check disagree")
    cert = None if s.certificate is None else s.certificate.as_dict(list(s.eqs), list(s.ineqs))
    out = [record(f"z3 (QF_LRA) decision of {s.text}, {how}", "smt", SCOPE,
                  ("feasible" if feas else "infeasible over the whole family" if feas is False else "undecided")
                  + f" ({len(s.eqs)} equations, {len(s.ineqs)} inequalities)",
                  feas, role="test" if feas is not None else "failed", replay=REPLAY if feas is False else None,
                  certificate=cert)]
    if not s.ineqs:
        lin = s.affine is not None
        agrees = lin == feas
        out.append(record(f"sympy.linsolve of {s.text}", "symbolic", SCOPE,
                          f"{s.status} ({'dimension ' + str(len(s.affine.parameters)) if s.affine else 'no solution'})"
                          + ("" if agrees else "; disagrees with z3"), lin if agrees else None,
                          role="test" if agrees else "failed", replay=REPLAY if agrees and not lin else None,
                          certificate=cert))
    return out


def reading_result(claims: dict, label: str, rates: bool = True) -> tuple[list[System], list[dict], dict]:
    """(systems, their JSON, {system id: records}) for one set of claims (``rates``: with the systems of the
    rates alone, which do not depend on how T* is read)."""
    systems = systems_for(claims, label, rates)
    groups = groups_of(claims)
    return systems, [system_json(s, groups) for s in systems], {s.id: system_records(s) for s in systems}


def _statement(text: str, records: list[dict], role: str = "further") -> Statement:
    """A statement about the family (its scope names the family), backed by the derivation and ``records``."""
    return Statement(text, SCOPE, [formal_record(), combination_record(), *records], role)


def representative_of(systems: list[System]) -> tuple[System | None, dict | None]:
    """The witness of the most demanding feasible system (rates, T* and conditions first)."""
    order = ("rates+tstar+conditions", "rates+conditions", "rates+tstar", "rates")
    by = {s.id: s for s in systems}
    for sid in order:
        s = by.get(sid)
        if s is not None and s.feasible:
            return s, s.witness
    return None, None


def numerics_of(witness: dict, profile: str, one_step: bool = False, label: str | None = None) -> dict:
    """Realise ``witness`` and confirm its derived D-exponents with GD (verify.reconcile.confirm)."""
    fr = {k: Fraction(str(v)) for k, v in witness.items()}
    target = {q: sp.expand(exponent_table()[q]["D"].subs({m.x: witness[m.name] for m in MEMBERS}))
              for q in QUANTITIES}
    b = budget(profile)
    return confirm(realise(fr, b, one_step), target, b, label or exponents_text(witness))


STATEMENT_TEXT = {
    "rates+tstar+conditions": "some member makes Theorem 3.1's three rates and {tstar} hold together, with " + CONDITIONS,
    "rates+tstar": "some member makes Theorem 3.1's three rates and {tstar} hold together",
    "rates+conditions": "some member makes Theorem 3.1's three rates hold, with " + CONDITIONS,
    "rates": "some member makes Theorem 3.1's three rates hold (every claimed dependence on D, K, ‖V*‖, η and T)",
}


def reading_statements(rid: str, label: str, records: dict, main: bool) -> dict:
    """{key: Statement} for one reading of T*: every system for the main reading, the joint one for the others
    (the rates alone do not depend on how T* is read)."""
    keep = [k for k in STATEMENT_TEXT if k in records and (main or "tstar" in k)]
    prefix = "" if main else rid + ":"
    return {prefix + k.replace("+", "_"): _statement(STATEMENT_TEXT[k].format(tstar=label), records[k]) for k in keep}


def derived_statements() -> dict:
    """The combination rules (exact) and the derived fact that eta_V, M and d do not enter the leading terms."""
    ne = not_entering()
    absent = record("eta_V, M and d are not free symbols of any leading term (slow-manifold expansion)", "symbolic",
                    SCOPE, ", ".join(f"{k}: {'absent' if v else 'present'}" for k, v in ne.items()),
                    all(ne.values()), replay=REPLAY)
    return {"combination_rules": Statement(
                "the reduced recursion (σ = identity) depends on eta_KQ, lambda, beta only through eta_KQ lambda^2 "
                "beta^2, on c_L, v only through c_L v, on the rows of V* only through ||V*||_F^2, on eta_V only in "
                "the alpha step, and not on M or d", REDUCED_RECURSION, [combination_record()], "further"),
            "eta_v_not_entering": Statement(
                "eta_V (and M, d) does not enter the leading terms of "
                + ", ".join(TEXT[q] for q in TERMS) + ": it enters only the step-size conditions", SCOPE,
                [formal_record(), absent], "further")}


def numerics_statement(num: dict, label: str) -> Statement:
    """GD under the representative shows the derived D-exponents (finite-D factors divided out before fitting)."""
    return Statement(f"GD under the representative member ({label}) shows the derived D-exponents of "
                     + ", ".join(TEXT[q] for q in QUANTITIES) + " at a fixed T (finite-D factors divided out "
                     "before fitting; raw fits beside them)", Scope(sigma=("identity",), conventions=(label,)),
                     num["evidence"], "further")


def ordered(statements: dict, headline: str) -> list:
    """The statements with the headline first (role "primary"), the others "further"."""
    keys = [headline] + [k for k in statements if k != headline]
    return [(k, Statement(statements[k].text, statements[k].scope, statements[k].evidence,
                          "primary" if k == headline else "further")) for k in keys]


__all__ = ["SCOPE", "derivation_json", "formal_record", "combination_record", "system_records", "reading_result",
           "representative_of", "numerics_of", "STATEMENT_TEXT", "reading_statements", "derived_statements",
           "numerics_statement", "ordered"]
