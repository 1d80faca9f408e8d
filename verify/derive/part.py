"""The ``derive`` part of ``verify all``: the reduction proofs per sigma and the leading asymptotics.

Each proof obligation becomes an evidence record (verify.evidence) whose scope says what it covers:
the identity obligations are proved by matrix calculus in symbolic dimensions (every M, d, D, N), the
generic-kernel obligations by exact identities at one explicit size, and each sigma's parity lemma
for every dimension. The verdict of each statement is decided from those records by the one rule.
"""
from __future__ import annotations

import sympy as sp

from ..evidence import Scope, Statement, headline, record
from ..parts import part
from ..profiles import PROFILES

CONVENTIONS = ("law mean 0",)     # the reduction needs centred entries (otherwise W_X moves along 1)


def _dims_label(dims: dict) -> str:
    return " ".join(f"{k}={dims[k]}" for k in ("M", "d", "D", "N", "K") if k in dims)


def route_record(route: str, obligations, scope: Scope, sigma: str) -> dict:
    """One evidence record for a route: it confirms the statement (within ``scope``) only when every one of
    its obligations is proved; one disproved obligation is a counterexample, anything else undecided."""
    vals = [o.holds for o in obligations]
    holds = True if all(v is True for v in vals) else (False if any(v is False for v in vals) else None)
    bad = [o for o in obligations if o.holds is not True]
    result = (f"all {len(vals)} obligations proved" if holds else
              "; ".join(f"{o.name}: {'disproved' if o.holds is False else 'undecided'} {o.detail}".strip()
                        for o in bad))
    return record(route, "symbolic", scope, result, holds,
                  replay=f"verify derive --sigma {sigma}" if holds is False else None,
                  obligations=[{"name": o.name, "holds": o.holds, "detail": o.detail} for o in obligations])


def reduction_statements(sigmas: list[str]) -> tuple[list[Statement], dict]:
    """One decided statement per sigma ("GD keeps the symmetric set invariant and the reduced recursion
    is exact"), identity first; and the proof reports as dicts.

    Routes: (a) the generic-kernel identities at one explicit size together with sigma's parity lemma
    (scope: that size); (b) for sigma = identity, matrix calculus in symbolic dimensions (every size)."""
    from ..derive.reduction import parity_obligation, prove_identity_general, prove_reduction_generic
    from ..model.sigma import parse_sigma
    generic = prove_reduction_generic()
    statements, proofs = [], {}
    for spec in sigmas:
        sig = parse_sigma(spec)
        par = parity_obligation(sig)
        explicit = Scope(dims=(_dims_label(generic.dims),), sigma=(sig.spec(),), conventions=CONVENTIONS,
                         horizon="all")
        ev = [route_record("generic-kernel identities at explicit dimensions + parity lemma",
                           list(generic.obligations) + [par], explicit, spec)]
        obligations = list(generic.obligations) + [par]
        if sig.name == "identity":
            ident = prove_identity_general()
            ev.append(route_record("matrix calculus in symbolic dimensions (sigma = identity)", ident.obligations,
                                   Scope(dims="all", sigma=("identity",), conventions=CONVENTIONS, horizon="all"),
                                   spec))
            obligations += ident.obligations
        stmt = Scope(dims="all", sigma=(sig.spec(),), conventions=CONVENTIONS, horizon="all")
        statements.append(Statement(f"sigma = {sig.spec()}: GD keeps {{W_X = diag(alpha) V*, W_P = 0, two-valued S}} "
                                    "invariant and the reduced recursion is exact", stmt, ev,
                                    "primary" if sig.name == "identity" else "further"))
        proofs[spec] = {"sigma": sig.spec(), "proved": all(o.holds is True for o in obligations),
                        "dims": {"identity obligations": "all M, d, D, N", "generic obligations": generic.dims},
                        "obligations": [{"name": o.name, "holds": o.holds, "detail": o.detail} for o in obligations]}
    statements.sort(key=lambda st: st.role != "primary")
    return statements, proofs


@part("derive", options=lambda profile: {"sigmas": PROFILES[profile]["sigmas"]}, order=12)
def derive_part(profile: str) -> dict:
    """The reduction proof per sigma of the profile, and the leading terms of Theorem 3.1's quantities."""
    from ..derive.asymptotics import claimed_terms, leading_terms, slow_manifold
    sigmas = list(PROFILES[profile]["sigmas"])
    if "identity" not in sigmas:
        sigmas.insert(0, "identity")
    statements, proofs = reduction_statements(sigmas)
    lt = leading_terms()
    return headline(statements) | {
        "asymptotics": {k: sp.sstr(lt[k]) for k in ("loss", "s_err", "w_err", "u")}
        | {"cubic_coefficient_c": sp.sstr(slow_manifold()["c"]),
           "claimed": {k: sp.sstr(v) for k, v in claimed_terms().items()}},
        "reduction": proofs,
        "convention": {"sigma": "identity", "loss": "sum", "law_var": "1", "p_lambda": "1", "eta_v": "eta",
                       "eta_kq": "eta", "vnorm": "||V*||_F", "regime": "0 < K < D", "sigmas": sigmas},
        "replay": "verify derive --asymptotics --json; verify derive --sigma SIGMA",
    }
