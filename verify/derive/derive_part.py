"""The ``derive`` part of ``verify all``: the reduction proofs per sigma and the leading asymptotics.

Each proof obligation becomes an evidence record (verify.evidence) whose scope says what it covers: the
generic-kernel obligations in symbolic dimensions (block method) and at explicit sizes (a second route), each
sigma's parity lemma and reduced recursion, and for identity the matrix-calculus proof. Every obligation names the
hypotheses it uses; the statement "the reduction is exact" is made under exactly the hypotheses its
symbolic-dimension proof used (their union), so its scope says what it assumes. The verdict of each statement is
decided from those records by the one rule.
"""
from __future__ import annotations

import sympy as sp

from ..evidence import Scope, Statement, headline
from ..run import part
from ..model.profiles import per_profile
from ..derive.obligations import proof_routes
from ..derive.reduction_proof import obligations_for, prove_reduction
from ..model.hypotheses import hypotheses
from ..model.sigmas import parse_sigma, sigma_examples
from ..derive.asymptotics import leading_terms, slow_manifold
from ..model.paper import theorem_3_1_orders
from ..model.sigmas.identity import Identity


def assumed(obligations) -> tuple:
    """The hypotheses the symbolic-dimension steps of a proof use, together (the union of their ``assumes``)."""
    out = []
    for o in obligations:
        if o.role == "test" and o.scope.dims == "all":
            out += [a for a in o.scope.assumes if a not in out]
    return tuple(out)


def reduction_statements(sigmas: list[str]) -> tuple[list[Statement], dict]:
    """One decided statement per sigma ("GD keeps the symmetric set invariant and the reduced recursion
    is exact"), identity first; and the proof reports as dicts.

    Evidence: every obligation of verify.derive.reduction_proof.prove_reduction (the block-method proof for any
    kernel in symbolic dimensions, sigma's parity lemma and reduced recursion, the explicit-dimension second
    route, and for identity the matrix-calculus proof), each with the scope it covers."""
    statements, proofs = [], {}
    for spec in sigmas:
        sig = parse_sigma(spec)
        rep = prove_reduction(sig)
        uses = assumed(rep.obligations)
        stmt = Scope(dims="all", sigma=(sig.spec(),), conventions="all", horizon="all", assumes=uses)
        replay = f"verify derive --sigma {spec} --json"
        ev = proof_routes("the reduction", rep.obligations, replay)
        # W_P = 0 is part of the statement itself: a disproved W_P obligation (sigma's parity lemma: W_P leaves 0)
        # refutes it
        ev += [o.evidence(replay) for o in obligations_for(sig, "wp") if o.holds is False and o.role == "test"]
        statements.append(Statement(f"sigma = {sig.spec()}: GD keeps {{W_X = diag(alpha) V*, W_P = 0, two-valued S}} "
                                    "invariant and the reduced recursion is exact, assuming "
                                    + "; ".join(h.text for h in hypotheses(stmt.assumes)), stmt, ev,
                                    "primary" if sig.is_identity else "further"))
        proofs[spec] = rep.as_dict()
    statements.sort(key=lambda st: st.role != "primary")
    return statements, proofs


# The sigmas whose reduction each profile proves: every registered family's representatives (so a newly registered
# sigma is proved, or refuted, by the derive part without an edit here), and at the deep profile one more cubic.
SIGMAS = per_profile({"ci": list(sigma_examples()), "dev": list(sigma_examples()),
                      "deep": list(sigma_examples()) + ["poly:0,1,0,1"]})


@part("derive", options=lambda profile: {"sigmas": SIGMAS[profile]}, order=12,
      convention_why="the derivation keeps c_L, v, lambda, beta and eta as symbols: one derivation for every "
      "convention")
def derive_part(profile: str) -> dict:
    """The reduction proof per sigma of the profile, and the leading terms of Theorem 3.1's quantities."""
    sigmas = list(SIGMAS[profile])
    if not any(parse_sigma(spec).is_identity for spec in sigmas):      # the primary statement
        sigmas.insert(0, Identity().spec())
    statements, proofs = reduction_statements(sigmas)
    lt = leading_terms()
    return headline(statements) | {
        "asymptotics": {k: sp.sstr(lt[k]) for k in ("excess_loss", "s_err", "w_err", "u")}
        | {"cubic_coefficient_c": sp.sstr(slow_manifold()["c"]),
           "claimed": {k: sp.sstr(v) for k, v in theorem_3_1_orders().items()}},
        "reduction": proofs,
        "convention": {"sigma": "identity", "loss": "sum", "law_var": "1", "p_lambda": "1", "eta_v": "eta",
                       "eta_kq": "eta", "vnorm": "||V*||_F", "regime": "0 < K < D", "sigmas": sigmas},
        "replay": "verify derive --asymptotics --json; verify derive --sigma SIGMA",
    }
