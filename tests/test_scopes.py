"""A proved scope names the assumptions its proof used, and each one is real.

For every proved statement (the claims at the ci profile, the derive part's reduction statements), for every
hypothesis the covering proof assumes, the hypothesis' own ``violate`` applied to a setting inside the statement
gives a regime that neither the proof's scope nor the statement's admits (or validation refuses to build it); and
where it is cheap, the property really fails in that regime, by a second route (the full-matrix engine, which
assumes no symmetry). A statement whose proof assumes more than its hypotheses imply is not "proved"."""
from __future__ import annotations

import numpy as np
import pytest

from lemmas import CLAIMS
from verify.evidence.regime_runs import regime
from verify.checks import Claimed
from verify.errors import InvalidParameter
from verify.evidence import PROOF_KINDS, Scope, decide
from verify.model import make_setting
from verify.model.hypotheses import hypothesis

# settings inside the statements' scopes, one per sigma the claims speak of
BASES = [regime("cnn", 8, 2, M=2, d=3, eta="1/10"),
         regime("cnn", 8, 2, M=2, d=3, eta="1/10", sigma="erf"),
         regime("sts", 8, 2, M=2, d=2, eta="1/5", vstar_norm="3/2", sigma="poly:0,1,0,1/10"),
         regime("cnn", 8, 2, M=2, d=2, eta="1/10", sigma="relu", wp_trainable=False),
         # K = D with a large step (x = eta_V c_L v N = 6 in (K, 2K) = (4, 8)): lemma-C.2-k-equals-d speaks of it
         regime("cnn", 4, 4, M=1, d=1, eta="6", vstar_norm="1")]
# hypotheses no valid setting breaks: building a violation is refused by validation
VALIDATED = {"distinct-queries": lambda: make_setting(D=4, K=2, preset="cnn", query=[0, 0]),
             "gaussian-or-linear": lambda: make_setting(D=4, K=2, preset="cnn", sigma="erf", law="rademacher")}


def proof_scopes(st: dict) -> list[Scope]:
    """The scopes of the exact proofs in symbolic dimensions behind a proved statement (one per sigma, say; each is
    a whole proof, whose scope is the intersection of its steps': every assumption any step used)."""
    proofs = [Scope.from_dict(e["scope"]) for e in st["evidence"]
              if e["role"] == "test" and e["holds"] is True and e["kind"] in PROOF_KINDS and e["scope"]["dims"] == "all"]
    assert proofs, st["id"]
    return proofs


def proved(ci_claims):
    """(label, statement scope, proof scopes) of every proved statement of the claims and the derive part."""
    from verify.derive.derive_part import reduction_statements
    out = []
    for cid, r in ci_claims.items():
        for st in r.statements:
            if st["verdict"] == "proved":
                out.append((st["id"], Scope.from_dict(st["scope"]), proof_scopes(st)))
    statements, _ = reduction_statements(["identity", "erf"])
    for st in statements:
        d = st.decided()
        assert d["verdict"] == "proved"
        out.append((d["statement"][:20], st.scope, proof_scopes({"id": d["statement"], "evidence": d["evidence"]})))
    return out


@pytest.mark.slow
def test_every_proved_scope_names_assumptions_that_a_violation_leaves_out(ci_claims):
    items = proved(ci_claims)
    ids = {label for label, _, _ in items}
    assert {"lemma-C.2-small-step", "wp-zero", "two-level-attention"} <= ids
    for label, stmt, proofs in items:
        bases = [b for b in BASES if stmt.admits(b)]
        assert bases, f"{label}: no base setting inside its scope"
        for base in bases:
            # the proofs of this base's sigma: each covers it, and each names what it assumed
            for pf in (p for p in proofs if p.sigma == "all" or base.sigma.spec() in p.sigma):
                assert pf.assumes and "assuming {" in pf.label(), label
                assert pf.admits(base), (label, base.config())
                for a in pf.assumes:
                    violated(label, a, base, pf, stmt)


def violated(label: str, a: str, base, pf: Scope, stmt: Scope):
    """The hypothesis ``a``'s own violation of ``base`` lies outside the proof's and the statement's scope (or is
    refused by validation, for this sigma or for every setting)."""
    h = hypothesis(a)
    if h.violate is None:
        with pytest.raises(InvalidParameter):
            VALIDATED[a]()
        return
    try:
        v = h.violate(base)
    except InvalidParameter:          # e.g. a non-centred law for erf: validation refuses it
        assert not base.sigma.linear, (label, a)
        return
    assert not h.holds(v) and not pf.admits(v) and not stmt.admits(v), (label, a, v.config())


def test_the_derive_part_states_what_its_proof_used():
    """The reduction is stated under P^T P = lambda I, distinct query positions, uniform S* weights and (for a
    nonlinear sigma's kernel) Gaussian data, not only "law mean 0"."""
    from verify.derive.derive_part import reduction_statements
    statements, _ = reduction_statements(["identity", "erf"])
    for st in statements:
        assert {"orthogonal-P", "distinct-queries", "uniform-S*", "centred", "zero-init",
                "gaussian-or-linear"} <= set(st.scope.assumes), st.text
        assert st.scope.conventions == "all" and "assuming" in st.text
    sinusoidal = regime("sts", 6, 2, eta="1/10", p_kind="sinusoidal", p_structure="general")
    assert not any(st.scope.admits(sinusoidal) for st in statements)
    assert statements[0].scope.admits(regime("sts", 6, 2, eta="1/10", law="rademacher"))   # identity: any law


# ----- where it is cheap, the property really fails outside each assumption (full-matrix engine) -------------
def offspan_at(s, t: int) -> float:
    """max_i ||w_i - alpha_i v*_i|| / ||v*_i|| after t steps of the full-matrix engine (no symmetry assumed)."""
    from verify.engines import iterate
    r = iterate(s, t, "full", "float64", checkpoints=[t]).final
    return max(float(x) for x in r.offspan)


def test_outside_orthogonal_p_the_columns_are_not_two_valued():
    base = BASES[0]
    v = hypothesis("orthogonal-P").violate(base)
    P = v.p_numeric()                       # independent of the engine: P^T P is not a multiple of I
    G = P.T @ P
    assert np.max(np.abs(G - G[0, 0] * np.eye(v.D))) > 1e-2
    out = CLAIMS["two-level-attention"].check(v, 200)
    assert out.holds is False and out.data["max_spread"] > 1e-2      # the tolerance is 1e-12
    assert CLAIMS["two-level-attention"].check(base, 200).holds is True


def test_outside_uniform_weights_the_columns_are_not_two_valued():
    v = hypothesis("uniform-S*").violate(BASES[0])
    out = CLAIMS["two-level-attention"].check(v, 50)
    assert out.holds is False and out.data["max_spread"] > 1e-3


def test_outside_centred_entries_w_p_leaves_zero():
    v = hypothesis("centred").violate(BASES[0])
    out = CLAIMS["wp-zero"].check(v, 20)
    assert out.holds is False and out.data["max_wp"] > 1e-6


def test_outside_zero_init_the_rows_leave_the_line_of_v_star():
    base = BASES[0]
    assert offspan_at(base, 5) < 1e-12
    assert offspan_at(hypothesis("zero-init").violate(base), 5) > 1e-3


def test_outside_k_positive_alpha_is_not_positive():
    v = hypothesis("K>0").violate(BASES[0])
    assert v.K == 0 and CLAIMS["lemma-C.2"].check(v, 50).holds is False


# ----- a proof that assumes more than the statement's hypotheses does not prove it --------------------------------
def test_a_proof_assuming_more_than_the_hypotheses_is_not_proved():
    from verify.derive.obligations import proof_routes
    from verify.derive.reduction_proof import obligations_for
    from verify.model.sigmas import parse_sigma
    ev = proof_routes("columns two-valued", obligations_for(parse_sigma("identity"), "two-valued", explicit=False))
    full = ("zero-init", "orthogonal-P", "uniform-S*", "distinct-queries", "centred", "iid-entries", "gaussian-or-linear")
    scope = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all")
    ok = Claimed("by-hand", "columns stay two-valued", "claim", full, scope)
    assert decide(ev, ok.scope).verdict == "proved"
    for dropped in ("orthogonal-P", "uniform-S*", "zero-init"):
        st = Claimed("by-hand", "columns stay two-valued", "claim", tuple(h for h in full if h != dropped), scope)
        d = decide(ev, st.scope)
        assert d.verdict != "proved", dropped
        assert d.verdict == "supported"      # exact, but over less than the statement speaks of
