"""The claims registry (lemmas/): ids, files, verdicts derived from evidence by the one rule, and the
numbers behind them, each expected verdict backed by an independent reason (a closed form, a hand
value, a second engine), never copied from the code's own output."""
from __future__ import annotations

import json
import math
import re
import shlex
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

import lemmas
from lemmas import CLAIMS as REGISTRY
from verify.evidence.regime_runs import regime
from verify.checks import Catalogue, Check, Claimed, RegimeOutcome, module_name
from verify.cli import main
from verify.evidence import VERDICTS, Scope, covered, decide
from verify.errors import InvalidParameter
from conftest import CLAIM_EXPECTED

REQUIRED = ["lemma-C.2", "wp-zero", "two-level-attention", "early-alignment", "loss-monotone", "theorem-3.1",
            "theorem-3.2-ood", "neg-alpha-le-1", "neg-loss-monotone-any-eta", "neg-rate-exponential"]
# Theorem 3.1 as quantified: its parts, each judged on its own, and the toolkit's findings beside them
THEOREM_PARTS = ["theorem-3.1-upper", "theorem-3.1-lower", "theorem-3.1-lower-T", "theorem-3.1-tstar"]
PER_REGIME = ["lemma-C.2", "wp-zero", "two-level-attention", "early-alignment", "loss-monotone", "neg-alpha-le-1",
              "neg-loss-monotone-any-eta", "neg-rate-exponential"]
LEMMAS_DIR = Path(lemmas.__file__).parent


@pytest.fixture(scope="module")
def results(ci_claims):
    return ci_claims


def head(r) -> dict:
    """The headline (first) statement of a claim's result."""
    return r.statements[0]


def evidence(r) -> list:
    return [e for st in r.statements for e in st["evidence"]]


# ----- registry -----------------------------------------------------------------------------------
def test_required_ids_exist_and_files_match():
    assert set(REQUIRED) <= set(REGISTRY)
    assert {c for c in REGISTRY if REGISTRY[c].per_regime} == set(PER_REGIME)
    for cid in REGISTRY:
        assert REGISTRY[cid].module == f"lemmas.{module_name(cid)}"
        assert all(isinstance(st, Claimed) and isinstance(st.scope, Scope) for st in REGISTRY[cid].statements)
    assert set(REGISTRY.modules()) == {module_name(c) for c in REGISTRY}
    assert set(THEOREM_PARTS) <= {st.id for st in REGISTRY["theorem-3.1"].statements}


@pytest.mark.parametrize("kind, package, module", [("claim", "lemmas", "lemmas.wp_zero"),
                                                    ("probe", "verify.probes", "verify.probes.k_zero")])
def test_a_check_registered_outside_its_file_fails_the_catalogue(kind, package, module):
    """Both catalogues (the claims of lemmas/, the probes of verify/probes/) refuse a check whose id is not its
    module's name."""
    from verify.probes import PROBES
    cat = Catalogue(kind, package)
    cat.checks = dict((REGISTRY if kind == "claim" else PROBES).checks)
    stray = type("Stray", (Check,), {})()
    stray.module = module
    cat.checks["not-in-its-file"] = stray
    with pytest.raises(AssertionError, match="not-in-its-file"):
        cat.load()


def test_statement_ids_are_unique_and_scopes_assume_the_hypotheses():
    ids = [st.id for c in REGISTRY.values() for st in c.statements]
    assert len(ids) == len(set(ids))
    for c in REGISTRY.values():
        for st in c.statements:
            assert set(st.scope.assumes) == {h.id for h in st.hypotheses}, st.id


def test_module_name():
    assert module_name("lemma-C.2") == "lemma_C_2"
    assert module_name("theorem-3.1") == "theorem_3_1"


def test_no_claim_writes_a_verdict():
    """No verdict literal in any claim module: verdicts come from verify.evidence.decide only."""
    pat = re.compile(r"""(verdict|requested)\s*=\s*["'](proved|certified|supported|refuted|inconclusive)["']""")
    for f in LEMMAS_DIR.glob("*.py"):
        assert not pat.search(f.read_text()), f"{f.name} writes a verdict literal"
    assert not hasattr(lemmas, "honest_verdict") and not hasattr(lemmas, "evidence")


def test_bad_profile_and_non_regime_claim():
    with pytest.raises(InvalidParameter, match="profile"):
        REGISTRY["wp-zero"].run("fast")
    with pytest.raises(InvalidParameter, match="per-regime"):
        REGISTRY["theorem-3.1"].regime_check(None, 10)


def test_regime_outcome_holds_has_one_type():
    assert RegimeOutcome(np.bool_(True), "d", "r").holds is True
    with pytest.raises(TypeError):
        RegimeOutcome("True", "d", "r")
    assert RegimeOutcome(None, "d", "r").status == "undecided"


# ----- every verdict follows from the records, by the one rule ----------------------------------------
@pytest.mark.slow
def test_every_statement_is_well_formed(results):
    for cid, r in results.items():
        d = r.as_dict()
        assert {"id", "kind", "title", "statements", "numbers", "convention", "replay"} <= set(d)
        json.dumps(d)   # JSON-ready
        assert r.replay
        for st in r.statements:
            assert st["verdict"] in VERDICTS and st["evidence"]
            for e in st["evidence"]:
                assert e["holds"] in (True, False, None), (st["id"], e["route"])
                if e["role"] == "test" and e["holds"] is not None and e["kind"] not in ("symbolic", "smt", "formal"):
                    assert e["threshold"]["why"], (st["id"], e["route"])   # every numeric decision says why


@pytest.mark.slow
def test_verdicts_are_the_hand_derived_ones(results):
    """Every statement's verdict, extent and why against the hand-derived expectations (conftest.CLAIM_EXPECTED)."""
    got = {st["id"]: st for r in results.values() for st in r.statements}
    assert set(got) == set(CLAIM_EXPECTED)
    for sid, (verdict, extent, words) in CLAIM_EXPECTED.items():
        st = got[sid]
        assert (st["verdict"], st["extent"]) == (verdict, extent), (sid, st["verdict"], st["extent"], st["why"])
        for w in words:
            assert w in st["why"], (sid, w, st["why"])
    # the large-step part's scope cell leads with what was certified, never with the K = D proof's "all dimensions"
    assert not got["lemma-C.2-large-step"]["scope_label"].startswith("all dimensions")
    # the claim-level verdict is the weakest part's, never the first part's (theorem-3.1: its lower part, refuted)
    assert results["lemma-C.2"].verdict == "supported" and results["theorem-3.1"].verdict == "refuted"


@pytest.mark.slow
def test_proved_only_when_the_proofs_cover_the_statement(results):
    """A statement reads "proved" exactly when its exact records cover its scope; otherwise its label says
    where it was checked ("checked at dimensions {...}")."""
    for cid, r in results.items():
        for st in r.statements:
            scope = Scope.from_dict(st["scope"])
            proofs = [Scope.from_dict(e["scope"]) for e in st["evidence"]
                      if e["role"] == "test" and e["holds"] is True and e["kind"] in ("symbolic", "smt")]
            if st["verdict"] == "proved":
                assert covered(proofs, scope) and st["scope_label"] == scope.label()
            elif st["verdict"] == "certified":
                assert not covered(proofs, scope)


@pytest.mark.slow
def test_expected_verdicts_for_independent_reasons(results):
    from verify.derive.reduction_proof import prove_identity_general, prove_reduction_symbolic
    gen = prove_reduction_symbolic()
    generic_symbolic = all(not isinstance(v, int) for k, v in gen.dims.items() if k in ("M", "d", "D", "N", "K"))
    # wp-zero and two-level-attention: the generic-kernel reduction is proved in symbolic dimensions (no
    # integer among its dims), so with each sigma's parity lemma every sigma of the statement is covered;
    # were it checked at explicit sizes only, erf / the cubic would be "certified".
    expect = "proved" if generic_symbolic else "certified"
    assert results["wp-zero"].verdict == expect
    assert results["two-level-attention"].verdict == expect
    if not generic_symbolic:
        assert "checked at dimensions {M=2 d=2 D=3 N=2 K=2}" in head(results["two-level-attention"])["scope_label"]
    # the identity proof is in symbolic dimensions: its scope reads "all dimensions"
    assert all(isinstance(v, str) for v in prove_identity_general().dims.values())
    assert head(results["wp-zero"])["scope_label"].startswith("all dimensions, sigma in {identity")
    # early-alignment admits sigma != identity for M = 1: only Arb balls (finite t) back those, so supported, and its
    # label names them
    ea = head(results["early-alignment"])
    assert ea["verdict"] == "supported" and "sigma in {erf}" in ea["scope_label"] and "t <= " in ea["scope_label"]
    # loss-monotone: only numerics test it (its derivation is a prerequisite); OOD: the certificate's constants bound it
    # for every T in one regime (Arb), a statement for every size: supported, never certified or proved
    assert results["loss-monotone"].verdict == "supported"
    assert head(results["theorem-3.2-ood"])["verdict"] == "supported"


@pytest.mark.slow
def test_negative_controls_are_refuted_with_replays_that_replay(results):
    for cid in ("neg-alpha-le-1", "neg-loss-monotone-any-eta", "neg-rate-exponential"):
        assert all(st.role == "control" for st in REGISTRY[cid].statements)
        assert results[cid].verdict == "refuted"
        bad = [e for e in evidence(results[cid]) if e["holds"] is False and e["role"] == "test"]
        assert bad and all(e["replay"].startswith("verify run") for e in bad)
        # every numeric counterexample replayed to the same conclusion at a 10x longer horizon
        assert all(e["replay_check"]["holds"] is False and e["replay_check"]["horizon"] >= 10 * e["scope"]["horizon"]
                   for e in bad)


def test_neg_alpha_overshoot_is_real_in_mpmath():
    """Independent of the float64 check: the full-matrix engine at 40 digits shows alpha > 1 (the slow
    manifold alpha*(u) = 1 + u + O(u^2) with u > 0)."""
    from verify.engines import iterate
    s = regime("cnn", 8, 2, M=2, d=3, eta="1/10")
    tr = iterate(s, 60, "full", "mpmath", dps=40, checkpoints=[50, 60])
    with mpmath.workdps(40):
        assert max(r.alpha[0] for r in tr.records) > 1 + mpmath.mpf(10) ** -6


def test_neg_loss_monotone_from_the_linearisation():
    """At eta = 3/2 * 2K/N the W_X multiplier 1 - eta N/K = -2 has modulus > 1 once S ~ S*: the loss must
    rise. Check the first increase the claim reports in 30-digit mpmath (an independent engine)."""
    from verify.engines import iterate
    s = regime("sts", 8, 2, eta=6)
    assert abs(1 - 6 * s.N / s.K) > 1
    out = REGISTRY["neg-loss-monotone-any-eta"].regime_check(s, 3000)
    t = out.data["first_increase"]
    tr = iterate(s, t, "reduced", "mpmath", dps=30, checkpoints=[t - 1, t])
    assert tr.records[1].excess_loss > tr.records[0].excess_loss


def test_neg_loss_monotone_overflow_outside_the_reduced_recursion():
    """A regime the reduced recursion does not describe (P general, found by an unseeded fuzz run whose replay
    crashed): when float64 overflows, the loss series comes from the full engine in mpmath, and its first values
    agree with a float64 run of the full engine (a second arithmetic) before the overflow."""
    from lemmas.loss_monotone import first_increase
    from verify.engines import iterate
    s = regime("sts", 5, 5, p_structure="general", eta=1000)
    assert s.reducible()[0] is False
    bad, L = first_increase(s, 80)             # float64 overflows at step 68
    f64 = iterate(s, 4, "full", "float64", checkpoints=range(5))
    assert bad == 1 and len(L) == 81
    assert np.allclose(L[:5], [float(r.excess_loss) for r in f64.records], rtol=1e-9, atol=0)
    out = REGISTRY["neg-loss-monotone-any-eta"].regime_check(s, 80)
    assert out.holds is False and out.data["first_increase"] == 1


def test_neg_rate_exponential_reads_the_asymptotics():
    """Exactly geometric runs (K = D: 1 - alpha(t) = (1 - eta N/D)^t) never read "algebraic" at any horizon,
    short horizons decide nothing, and an interior run past T* follows the 1/T leading term."""
    c = REGISTRY["neg-rate-exponential"]
    for T in (8, 16, 24, 32, 48, 60, 200):
        out = c.regime_check(regime("cnn", 6, 6, eta="1/10"), T)
        assert out.holds is not False, (T, out.detail)
        assert out.data["in_hypotheses"] is False            # K = D is outside 0 < K < D
    # the geometric run, as an exact closed form: its octave slopes double (ratio 2), so it reads exponential
    assert c.regime_check(regime("cnn", 6, 6, eta="1/10"), 200).holds is True
    # the committed fuzz "counterexample" (gslp D=2 K=1 eta=1/20, T=8) was a one-octave artefact
    short = c.regime_check(regime("gslp", 2, 1, eta="1/20"), 8)
    assert short.holds is not False and short.data["in_hypotheses"] is False
    # past T* = K D/(2 eta ||V*||^2) = 80: algebraic, and L T tends to the leading constant K N (D-K)/(4 D eta)
    s = regime("sts", 8, 2, eta="1/10")
    out = c.regime_check(s, 20000)
    assert out.holds is False and out.data["tstar_derived"] == pytest.approx(2 * 8 / (2 * 0.1))
    LT = out.data["loss"][-1] * 20000
    assert LT == pytest.approx(2 * 1 * 6 / (4 * 8 * 0.1), rel=0.1)    # corrections O(u(T)) ~ 5% here


def statement(results, sid: str) -> dict:
    return next(st for r in results.values() for st in r.statements if st["id"] == sid)


LEMMA_PARTS = ["lemma-C.2-small-step", "lemma-C.2-large-step", "lemma-C.2-k-equals-d", "lemma-C.2-other-sigma"]


@pytest.mark.slow
def test_lemma_c2_is_judged_part_by_part(results):
    """Each range of the step-size hypothesis has its own verdict: the small-step range is proved in every
    dimension (its scope names the assumptions the proof used), the large-step range with 0 < K < D, where the
    induction does not close, is certified over finite t only (supported) and names the open steps, the large step
    at K = D is proved, and sigma != identity is certified over finite t only (supported). No verdict covers ranges
    backed by different evidence."""
    assert [st.id for st in REGISTRY["lemma-C.2"].statements] == LEMMA_PARTS
    small, large, kd, other = (statement(results, sid) for sid in LEMMA_PARTS)
    assert small["verdict"] == "proved" and small["scope_label"].startswith("all dimensions, sigma in {identity}")
    proof = next(e for e in small["evidence"] if e["role"] == "test" and e["kind"] == "smt")
    assert {"eta-small-step", "zero-init", "uniform-S*", "centred", "K>0"} <= set(proof["scope"]["assumes"])
    assert large["verdict"] == "supported" and "t <= " in large["scope_label"]
    assert kd["verdict"] == "proved" and kd["scope_label"].startswith("all dimensions, sigma in {identity}")
    assert "K=D" in next(e for e in kd["evidence"] if e["role"] == "test" and e["kind"] == "smt")["scope"]["assumes"]
    attempt = next(e for e in large["evidence"] if e["route"].endswith("attempt (symbolic dimensions)"))
    assert attempt["role"] == "context" and "2 of" in attempt["result"] and "open" in attempt["result"]
    assert "open: delta(t) >= 0 for all t" in large["why"]           # the part says which steps did not close
    assert not any(e["kind"] in ("symbolic", "smt") and e["holds"] is True for e in large["evidence"]
                   if e["role"] == "test")
    assert other["verdict"] == "supported" and "sigma in {erf}" in other["scope_label"]
    # every fixed regime was routed to the part whose hypotheses it meets: by hand, x = eta c_L v N
    for e in large["evidence"]:
        if e["role"] == "test" and e["kind"] == "float64":
            dims = dict(kv.split("=") for kv in e["scope"]["dims"][0].split())
            assert int(dims["K"]) > 0
    assert results["lemma-C.2"].numbers["c_constants"].startswith("our reading")


def test_the_two_step_ranges_split_the_stability_range_exactly():
    """eta-small-step and eta-large-step are disjoint and together are eta-stable (x < 2K), by hand on a grid:
    small means x <= K when K = D, else x <= min(K, D - K)."""
    from verify.model.hypotheses import hypothesis
    small, large, stable = (hypothesis(h) for h in ("eta-small-step", "eta-large-step", "eta-stable"))
    for D, K in ((2, 1), (3, 2), (4, 4), (8, 2), (5, 4)):
        for num in range(1, 4 * K * 4):
            x = Fraction(num, 4)
            s = regime("sts", D, K, eta=str(x))                  # sts: N = 1, c_L = v = 1, so x = eta
            bound = K if K == D else min(K, D - K)
            assert small.holds(s) == (x <= bound) and large.holds(s) == (bound < x < 2 * K)
            assert not (small.holds(s) and large.holds(s)) and (small.holds(s) or large.holds(s)) == stable.holds(s)


@pytest.mark.slow
def test_theorem_3_1_is_judged_part_by_part(results):
    """The upper bound, the lower bound (D-uniform, as stated), its T-rate and the sufficient time each have a
    verdict; a lower bound whose constant is hidden is not refuted by finitely many sizes, only by certified bounds
    over infinitely many (the atlas's ray K = D/16: verify.certify.uniform_constant), and what the toolkit finds
    beyond the paper (the leading terms, the linear onset) is a finding, never the paper's part."""
    v = {sid: statement(results, sid)["verdict"] for sid in THEOREM_PARTS}
    assert v["theorem-3.1-upper"] == "supported" and v["theorem-3.1-lower-T"] == "supported"
    assert v["theorem-3.1-lower"] == "refuted" and v["theorem-3.1-tstar"] in ("supported", "certified")
    for sid in THEOREM_PARTS:
        assert statement(results, sid)["role"] == "claim"
    for sid in ("theorem-3.1.leading-terms", "theorem-3.1.onset-linear"):
        st = statement(results, sid)
        assert st["role"] == "finding" and st["relation"] == "sharper" and st["about"] in THEOREM_PARTS
    lower = statement(results, "theorem-3.1-lower")
    assert "no D-uniform c_lo exists" in lower["why"] and lower["corrected"] and "(D - K)" in lower["corrected"]


@pytest.mark.slow
def test_theorem_3_1_d_dependence_from_the_leading_terms(results):
    """The lower bound's D-dependence rests on the derivation: from the hand-derived leading term of the loss,
    K N (D - K) / (4 D eta T), the D-exponent as D -> oo is 0 at fixed N and 1 with N = D/K; the claim
    says 4. The record carries exactly these exponents, as a formal expansion (never a refutation alone)."""
    D, K, N, eta, T = sp.symbols("D K N eta T", positive=True)
    hand = K * N * (D - K) / (4 * D * eta * T)
    fixed = sp.limit(D * sp.diff(sp.log(hand), D), D, sp.oo)
    prop = sp.limit(D * sp.diff(sp.log(hand.subs(N, D / K)), D), D, sp.oo)
    assert (fixed, prop) == (0, 1)
    lower = statement(results, "theorem-3.1-lower")
    rec = next(e for e in lower["evidence"] if e["route"].startswith("D-exponents"))
    assert rec["kind"] == "formal" and rec["holds"] is False
    assert rec["exponents"]["excess_loss"] == {"D (N fixed)": str(fixed), "D (N = D/K)": str(prop)}
    assert rec["claimed"]["excess_loss"] == "4"
    # the certified upper constant at D = 8 bounds any D-uniform c_lo for the loss by c_hi / (K D^4)
    bound = next(e for e in lower["evidence"] if e["route"].startswith("certified bound"))
    up = next(e for e in statement(results, "theorem-3.1-upper")["evidence"]
              if e["route"] == "all-time certificate: upper rate of L - L_opt")
    assert bound["bounds"]["excess_loss"]["bound"] == pytest.approx(float(Fraction(up["constants"]["c_hi"])) / (2 * 8**4))
    # the T-exponents agree with the claim (numerics)
    fits = next(e for e in statement(results, "theorem-3.1-lower-T")["evidence"] if e["route"].startswith("T-exponents"))
    assert fits["holds"] is True
    for q, p in (("s_err", -0.5), ("w_err", -0.5), ("excess_loss", -1.0)):
        assert abs(fits["fits"][q]["last_decade"] - p) < 0.02
    # the sts D-sweep's exponent of s_err is that of sqrt(D - 2) over the sweep (K = 2, N = 1)
    sweep = next(e for e in lower["evidence"] if e["route"].startswith("D (sts"))
    xs = np.array(sweep["sweep"], float)
    assert sweep["exponents"]["s_err"]["fitted"] == pytest.approx(np.polyfit(np.log(xs), np.log(np.sqrt(xs - 2)), 1)[0],
                                                                  abs=0.02)


@pytest.mark.slow
def test_theorem_3_1_family_records(results):
    """The ci family (sts, K = 4, D = 8..9, eta in [1/16, 51/800], ||V*|| = 1) adds, against hand values: bounds for
    every member to the upper and lower-T parts; to the lower part a context bound on any D-uniform c_lo at D = 9,
    lim eta T (L - L_opt) / (K D^4) with the limit the hand-derived K N (D - K)/(4 D) = 5/9, so 5/9 / 26244; and
    to the leading terms the certified normalised limits (enclosures of 1), which make that finding certified
    over the family (a finite part of every D: supported). The family's bound on a constant refutes nothing (a
    context record); the lower part is refuted by the atlas's certified ray instead (tests/test_uniform_constant.py). The records' scope is the family as a region: D = 8..9 and the eta range, nothing
    more."""
    from verify.evidence import Region
    from verify.model.regions import Interval
    fam = "sts K=4 D=8..9, eta in [1/16, 51/800], ||V*|| = 1"

    def family_record(sid, use):
        return next(e for e in statement(results, sid)["evidence"] if e.get("use") == use)
    for sid, use in (("theorem-3.1-upper", "upper"), ("theorem-3.1-lower-T", "lower")):
        r = family_record(sid, use)
        assert r["kind"] == "arb" and r["role"] == "test" and r["holds"] is True
        region = Scope.from_dict(r["scope"]).dims[0]
        assert isinstance(region, Region) and region.label() == fam
        assert region.interval("D") == Interval(8, 9, integer=True)
        assert region.interval("eta") == Interval(Fraction(1, 16), Fraction(51, 800))
        assert not Scope.from_dict(r["scope"]).covers(Scope(dims="all", sigma=("identity",),
                                                            conventions=("reference",)))
    c = family_record("theorem-3.1-lower", "uniform-lower-constant")
    assert c["role"] == "context" and c["holds"] is None
    assert float(Fraction(c["bounds"]["excess_loss"])) == pytest.approx(5 / 9 / (4 * 9**4), rel=1e-12)
    lower = statement(results, "theorem-3.1-lower")
    assert lower["verdict"] == "refuted" and "K = 1/16 D" in lower["why"]
    lead = statement(results, "theorem-3.1.leading-terms")
    lim = family_record("theorem-3.1.leading-terms", "limits")
    assert lead["verdict"] == "supported" and fam in lead["scope_label"]
    for q, (lo, hi) in lim["normalised_limits"].items():
        assert Fraction(lo) <= 1 <= Fraction(hi) and Fraction(hi) - Fraction(lo) < Fraction(1, 10**12), q
    assert results["theorem-3.1"].numbers["family"]["family"] == fam
    assert results["theorem-3.1"].numbers["family"]["source"] in ("own", "saved")


@pytest.mark.slow
def test_tstar_is_a_sufficient_time_and_the_onset_linear(results):
    """Hand value: the slow-manifold law gives T* ~ K D / (2 eta ||V*||^2), exponent 1 in D at fixed K: the
    sufficient time O(D^2) holds (supported), and the linear growth is the toolkit's sharper finding."""
    lin = statement(results, "theorem-3.1.onset-linear")
    fit = next(e for e in lin["evidence"] if e["route"].startswith("D-exponent of the onset"))
    assert lin["verdict"] == "supported" and fit["holds"] is True
    n = results["theorem-3.1"].numbers["tstar"]
    assert 0.9 < n["exponent"] < 1.2 and n["uncertainty"] < 0.2
    # the onset is proportional to the slow-manifold time scale K D / (2 eta ||V*||^2) = 10 D here (K = 2,
    # eta = 1/10, ||V*|| = 1): the 10% band is entered after a fixed multiple of it, whatever D
    scaled = [t / (10 * int(k)) for k, t in n["onset"].items()]
    assert max(scaled) / min(scaled) < 1.15
    assert statement(results, "theorem-3.1-tstar")["verdict"] == "supported"


def test_tstar_failed_measurement_is_inconclusive(monkeypatch):
    """A D whose onset was not measured makes the sufficient-time part inconclusive, never supported."""
    from lemmas import theorem_3_1 as mod
    real = mod.entry_times

    def one_missing(Ds, factor=1):
        out = real(Ds, factor)
        D0 = next(iter(out))
        out[D0] = (None,) + out[D0][1:]
        return out
    monkeypatch.setattr(mod, "entry_times", one_missing)
    ev, _, _ = mod.tstar_records("ci")
    st = mod.Theorem31.statements[3]
    assert st.id == "theorem-3.1-tstar" and decide(ev, st.scope).verdict == "inconclusive"
    assert any(e["role"] == "failed" for e in ev)


# ----- evidence that contradicts the usual answer changes the verdict ---------------------------------
def test_neg_alpha_is_not_refuted_when_alpha_stays_below_one(monkeypatch):
    from lemmas import neg_alpha_le_1 as mod
    from verify.evidence.regime_runs import observe as real

    def capped(s, steps, checkpoints=None):
        r = real(s, steps, checkpoints)
        r.alpha = np.minimum(r.alpha, 0.5)
        return r
    monkeypatch.setattr(mod, "observe", capped)
    r = REGISTRY["neg-alpha-le-1"].run("ci")
    assert r.verdict == "supported" and not any(e["holds"] is False for e in evidence(r))


def test_wp_zero_refuted_by_a_replayed_counterexample_and_undecided_on_nan(monkeypatch):
    from lemmas import wp_zero as mod
    monkeypatch.setattr(mod, "wp_track", lambda s, n: np.r_[np.zeros(n), 1e-3])
    r = REGISTRY["wp-zero"].run("ci")
    assert r.verdict == "refuted"
    monkeypatch.setattr(mod, "wp_track", lambda s, n: np.r_[np.zeros(5), np.full(n - 4, np.nan)])
    out = REGISTRY["wp-zero"].regime_check(regime("cnn", 8, 2, M=2, d=3, eta="1/10"), 40)
    assert out.holds is None
    assert REGISTRY["wp-zero"].run("ci").verdict == "inconclusive"


def test_two_level_attention_nan_from_step_5_does_not_hold(monkeypatch):
    """A run whose S is NaN from step 5 must not report "holds" (the old
    ``x > worst`` loop skipped NaN)."""
    from verify.engines.full import FullState
    real = FullState.attention

    def poisoned(self, *a, **k):
        S = real(self, *a, **k)
        return np.full_like(np.asarray(S, float), np.nan) if self.step_count >= 5 else S
    monkeypatch.setattr(FullState, "attention", poisoned)
    out = REGISTRY["two-level-attention"].regime_check(regime("cnn", 8, 2, M=2, d=3, eta="1/10"), 20)
    assert out.holds is None and "not finite" in out.detail


@pytest.mark.parametrize("cid", ["lemma-C.2", "early-alignment", "neg-alpha-le-1", "loss-monotone",
                                 "neg-loss-monotone-any-eta", "neg-rate-exponential"])
def test_nan_never_holds(cid, monkeypatch):
    """NaN in the observables of any per-regime check gives holds None (or False for a real failure
    before it), never True."""
    import verify.evidence.regime_runs as common
    from verify.engines.full import FullState
    real_red = common.reduced_float64

    def nan_series(s, steps, checkpoints=None):
        r = real_red(s, steps, checkpoints)
        r.alpha[len(r.alpha) // 2:] = np.nan
        r.excess[len(r.excess) // 2:] = np.nan
        return r
    import lemmas.lemma_C_2
    # observe (used by the other checks) calls common.reduced_float64; lemma-C.2 holds its own reference
    monkeypatch.setattr(common, "reduced_float64", nan_series)
    monkeypatch.setattr(lemmas.lemma_C_2, "reduced_float64", nan_series)
    from verify.engines.full import LogitState
    # the direct formulation and the engine (LogitState records S, whatever backend stepped it)
    for cls in (FullState, LogitState):
        monkeypatch.setattr(cls, "attention", lambda self, *a, real=cls.attention, **k:
                            np.full_like(np.asarray(real(self), float), np.nan))
    s = regime("sts", 8, 2, eta="1/10")
    out = REGISTRY[cid].regime_check(s, 40)
    assert out.holds is not True, (cid, out.detail)


# ----- numbers behind the verdicts ----------------------------------------------------------------------
@pytest.mark.slow
def test_lemma_c2_alpha1_closed_form(results):
    """alpha(1) = eta c_L v <S(0), S*> = eta N / D for the first (identity, cnn D=8 K=2) regime,
    against the full-matrix engine's first step."""
    from verify.engines import iterate
    from lemmas.lemma_C_2 import regimes
    s = regimes()[0]
    a1 = float(iterate(s, 1, "full", "mpmath", checkpoints=[1]).final.alpha[0])
    assert a1 == pytest.approx(float(s.eta_v * s.N / s.D), rel=1e-15)
    env = next(e for e in evidence(results["lemma-C.2"]) if e["route"].startswith("reduced recursion"))["envelope"]
    assert float(env[0]["min"]) == pytest.approx(a1, rel=1e-5) and env[0]["min_at"] == 1
    assert float(env[0]["overshoot"]) > 0


def test_lemma_c2_regime_check_detects_sign_change():
    s = regime("gcn", 6, 2, M=1, d=2, eta="9/10", vstar_norm="2")
    out = REGISTRY["lemma-C.2"].regime_check(s, 400)
    assert out.holds is False and out.replay.startswith("verify run --D 6 --preset gcn --K 2")
    assert out.data["in_hypotheses"] is False             # eta above 2K/(c_L v N): outside, never refuting
    assert REGISTRY["lemma-C.2"].regime_check(s.with_(eta="1/10"), 400).holds


def test_delta_threshold_against_finite_differences():
    """eta_delta = 2 / max H, H = lambda^2 D/(N K (D-K)) (r_dd - r_ad^2/r_aa) at alpha*(delta), by finite
    differences of the generated row loss (independent of the symbolic maximisation)."""
    from verify.derive.reduced_map import case_of
    from verify.derive.stability import thresholds_at
    from verify.engines.reduced_iteration import reduced_functions
    s = regime("sts", 8, 2, vstar_norm="16")
    fn = reduced_functions(s.sigma, case_of(s.K, s.D), "math")
    P = tuple(float(x) for x in (s.D, s.K, s.N, 1, 1, s.eta_v, s.eta_kq, 1, 1))
    vn = float(s.row_norm2()[0])
    r = lambda a, d: fn.row_loss(a, vn, d, *P)  # noqa: E731
    best = 0.0
    h = 1e-3
    for d in np.linspace(0, 4, 801):
        E = math.exp(d)
        Z = s.K * E + s.D - s.K
        a = (E / Z) / ((s.K * E * E + s.D - s.K) / Z**2)          # alpha* = <s,s*>/||s||^2
        raa = (r(a + h, d) - 2 * r(a, d) + r(a - h, d)) / h**2
        rdd = (r(a, d + h) - 2 * r(a, d) + r(a, d - h)) / h**2
        rad = (r(a + h, d + h) - r(a + h, d - h) - r(a - h, d + h) + r(a - h, d - h)) / (4 * h * h)
        best = max(best, s.D / (s.N * s.K * (s.D - s.K)) * (rdd - rad**2 / raa))
    th = thresholds_at(s)
    assert float(th["eta_delta"]) == pytest.approx(2 / best, rel=1e-3)
    assert float(th["eta_alpha"]) == 2 * s.K / s.N


def test_loss_monotone_regime_checks():
    from lemmas.loss_monotone import at_eta
    c = REGISTRY["loss-monotone"]
    b = regime("sts", 8, 2)
    assert c.regime_check(at_eta(b, Fraction(3)), 2000).holds is True      # below eta_c = 4: monotone
    out = c.regime_check(at_eta(b, Fraction(6)), 2000)                     # above eta_alpha = 4: increases
    assert out.holds is True and out.data["first_increase"] is not None
    neg = REGISTRY["neg-loss-monotone-any-eta"].regime_check(at_eta(b, Fraction(6)), 2000)
    assert neg.holds is False


@pytest.mark.slow
def test_ood_formula_and_monte_carlo(results, monkeypatch):
    from lemmas import theorem_3_2_ood as ood
    assert ood.prove_formula()[0]
    mc = [e for e in evidence(results["theorem-3.2-ood"]) if e["kind"] == "monte-carlo"]
    assert len(mc) == 4 and all(e["holds"] is True for e in mc)
    # the symbolic check can fail: drop the factor N of the mean term
    real = ood.ood_formula

    def wrong():
        f, syms = real()
        return f.subs(syms[-1], 1), syms
    monkeypatch.setattr(ood, "ood_formula", wrong)
    assert not ood.prove_formula()[0]
    # the numeric formula against an independent direct Monte Carlo (Gumbel entries, mean 1, var 1/2)
    from verify.model.laws import parse_law
    rng = np.random.default_rng(7)
    a, S, Ss, V = 1.3, np.full((4, 2), 0.25), np.array([[.5, 0], [.5, 0], [0, .5], [0, .5]]), np.array([[1.0, -2.0]])
    law = parse_law("gumbel", "1", "1/2")
    X = law.sample(rng, (20_000, 2, 4))
    vals = np.array([0.5 * np.sum((a * V @ x @ S - V @ x @ Ss) ** 2) for x in X])
    exact = ood.exact_ood(a, S, Ss, V, 1.0, 0.5)
    assert abs(vals.mean() - exact) < 5 * vals.std() / math.sqrt(len(vals))


@pytest.mark.slow
def test_theorem_3_2_is_judged_as_quantified(results):
    """For every epsilon there is a T: the certified constants bound L_ood by C_ood/(eta T) for T >= T0. Recomputed
    here by hand from c_hi, and checked against the full-matrix engine (no symmetry assumed) at T0 and 3 T0, where
    L_ood comes from alpha, ||S - S*|| and the support mass: ||S||^2 = ||S - S*||^2 + 2 <S,S*> - ||S*||^2,
    <S,S*> = N p / K (sts: N = 1, K = 2, ||V*|| = 1, d = 1)."""
    from verify.engines import iterate
    st = statement(results, "theorem-3.2-ood")
    assert st["role"] == "claim" and st["verdict"] == "supported" and "for every epsilon > 0" in st["text"]
    rec = next(e for e in st["evidence"] if e["route"].startswith("certified OOD bound"))
    c_s, c_w = (float(Fraction(rec["c_hi"][q])) for q in ("s_err", "w_err"))
    T0, eta, mu, v, N, K = rec["T0"], 0.1, 0.5, 2.0, 1, 2
    tau0 = (eta * T0) ** -0.5
    hand = 0.5 * (v * ((1 + c_w * tau0) * c_s + c_w * math.sqrt(N / K)) ** 2 + mu**2 * c_w**2 * N)
    assert float(Fraction(rec["C_ood"])) == pytest.approx(hand, rel=1e-6)
    s = regime("sts", 8, 2, eta="1/10", vstar_norm="1")
    tr = iterate(s, 3 * T0, "full", "float64", checkpoints=[T0, 3 * T0])
    for r in tr.records:
        a, p, se = float(r.alpha[0]), float(r.support_mass[0]), float(r.s_err)
        corr, sstar2 = N * p / K, N / K
        sq = se**2 + 2 * corr - sstar2
        L = 0.5 * (v * (a * a * sq - 2 * a * corr + sstar2) + mu**2 * (a - 1) ** 2 * N)
        assert 0 < L <= hand / (eta * r.step)
    for e_, t in rec["T_eps"].items():
        assert t >= T0 and hand / (eta * t) <= float(Fraction(e_)) * (1 + 1e-6)
    assert st["why"] and any(e["kind"] == "monte-carlo" and e["holds"] for e in st["evidence"])


@pytest.mark.slow
def test_the_vstar_question_is_answered_beside_theorem_3_2(results):
    """Reviewer question 5, a finding beside the claim: eta T L_ood does not grow with ||V*||. Hand value behind it:
    ||S - S*||^2 ~ N (D - K)/(2 eta T ||V*||^2) (the leading term), so ||V*||^2 ||S - S*||^2 eta T -> N (D - K)/2."""
    from lemmas.theorem_3_2_ood import student_state
    st = statement(results, "theorem-3.2-ood.vstar-norm")
    assert (st["role"], st["relation"], st["about"]) == ("finding", "answers", "theorem-3.2-ood")
    assert st["verdict"] == "supported"
    vals = results["theorem-3.2-ood"].numbers["vstar_norm"]["eta_T_L_ood"]
    assert max(vals.values()) / min(vals.values()) < 1.05
    T = 200_000            # corrections O(u), u ~ (K D/(2 eta ||V*||^2 T))^(1/2) <= 2% here
    for vn in ("1", "4"):
        s = regime("cnn", 6, 2, M=2, d=3, eta="1/10", vstar_norm=vn)
        r = student_state(s, T)[-1]
        assert float(r.s_err[0]) ** 2 * float(vn) ** 2 * 0.1 * T == pytest.approx(3 * (6 - 2) / 2, rel=0.05)


def test_claim_roles_sources_and_questions():
    """The paper's claims (and the proof steps, as reconstructed) have role "claim"; the toolkit's own step-size
    finding has role "finding"; negative controls "control"; every claim names the reviewer questions it answers."""
    from verify.model.paper import QUESTIONS
    roles = {cid: {st.role for st in c.statements} for cid, c in REGISTRY.items()}
    for cid in ("lemma-C.2", "theorem-3.1", "theorem-3.2-ood", "early-alignment", "wp-zero", "two-level-attention"):
        assert "claim" in roles[cid], cid
    for cid in ("early-alignment", "wp-zero", "two-level-attention"):
        assert "reconstructed" in REGISTRY[cid].source
    assert roles["loss-monotone"] == {"finding"} and "not a statement of the paper" in REGISTRY["loss-monotone"].source
    for cid in ("neg-alpha-le-1", "neg-loss-monotone-any-eta", "neg-rate-exponential"):
        assert roles[cid] == {"control"}
    for cid, c in REGISTRY.items():
        assert set(c.questions) <= {q.number for q in QUESTIONS}, cid
        if roles[cid] != {"control"}:
            assert c.questions, cid
    assert 2 in REGISTRY["lemma-C.2"].questions and 5 in REGISTRY["theorem-3.2-ood"].questions


def test_negative_control_replay_reproduces_the_counterexample():
    """The replay command of neg-alpha-le-1, run through the CLI, shows alpha > 1."""
    out = REGISTRY["neg-alpha-le-1"].regime_check(regime("cnn", 8, 2, M=2, d=3, eta="1/10"), 500)
    assert out.holds is False
    res = CliRunner().invoke(main, ["run", *shlex.split(out.replay)[2:]])
    assert res.exit_code == 0, res.output
    final = json.loads(res.stdout)["final"]
    assert max(float(a) for a in final["alpha"]) > 1


def test_regime_check_reports_hypotheses():
    out = REGISTRY["lemma-C.2"].regime_check(regime("sts", 6, 0, M=1, d=2), 50)
    assert out.holds is False and out.data["in_hypotheses"] is False and "K >= 1" in out.detail
    out = REGISTRY["loss-monotone"].regime_check(regime("cnn", 6, 6), 50)
    assert out.holds is None and out.data["in_hypotheses"] is False       # not claimed at K = D
    assert REGISTRY["wp-zero"].regime_check(regime("cnn", 6, 2, M=1, d=2), 10).data["in_hypotheses"] is True


@pytest.mark.slow
def test_outside_records_never_decide(results):
    """Regimes outside a claim's hypotheses are reported with what they found (role "outside")."""
    c2 = results["lemma-C.2"]
    rec = next(e for e in evidence(c2) if "counterexample" in e["route"])
    assert rec["role"] == "outside" and rec["holds"] is False and rec["kind"] == "mpmath"
    assert rec["first_loss_increase"] < rec["first_nonpositive"]
    res = CliRunner().invoke(main, ["run", *shlex.split(rec["replay"])[2:]])
    assert res.exit_code == 0, res.output
    assert float(json.loads(res.stdout)["final"]["alpha"][0]) < 0
    s = regime("cnn", 1, 1, M=1, d=1, eta="1/20", vstar_norm="3", sigma="poly:0,1,0,1/10")
    assert REGISTRY["lemma-C.2"].regime_check(s, 5).data["in_hypotheses"] is False
    assert REGISTRY["lemma-C.2"].regime_check(s, 3).data["in_hypotheses"] is True   # still a descent run
    # an outside counterexample alone leaves the verdict where the tests inside put it
    assert statement(results, "lemma-C.2-other-sigma")["verdict"] == "supported"


# ----- finite-horizon facts certified by the full-matrix engine's Arb balls ------------------------------------------
def _ball_records(st: dict) -> list:
    return [e for e in st["evidence"] if e["kind"] == "arb" and e["route"].startswith("certified full-matrix engine")]


@pytest.mark.slow
def test_lemma_c2_full_matrix_balls_bound_the_offspan_residual(results):
    """In every fixed regime the certified full-matrix engine (no reduction assumed) decides alpha_i(t) > 0 and
    |off-span| <= 1e-60 over t <= 60; independently, its alpha balls contain the reduced recursion at 80 digits and its
    off-span balls contain the exact value 0, in the identity and the ReLU (W_P frozen) regimes."""
    from lemmas import lemma_C_2 as mod
    from verify.evidence.ball_facts import ball_run
    from verify.engines import iterate
    recs = [e for sid in LEMMA_PARTS for e in _ball_records(statement(results, sid)) if e["role"] == "test"]
    assert len(recs) == len(mod.regimes()) and all(e["holds"] is True and e["scope"]["horizon"] == 60 for e in recs)
    assert all("t <= 60" in e["scope"]["label"] and "--engine full --arb 512" in e["replay"] for e in recs)
    for s in (mod.regimes()[0], next(r for r in mod.regimes() if not r.wp_trainable)):
        run = ball_run(s, 60, 512)
        red = iterate(s, 60, "reduced", "mpmath", 80, checkpoints=[1, 30, 60])
        with mpmath.workdps(80):
            for r in red.records:
                rec = run.seen[r.step]["record"]
                for ball, a in zip(rec.alpha, r.alpha):
                    lo, hi = (mpmath.mpf(str(x.str(100, radius=False))) for x in (ball.lower(), ball.upper()))
                    assert lo - mpmath.mpf(10) ** -70 <= a <= hi + mpmath.mpf(10) ** -70, (s.sigma.spec(), r.step)
                assert all(x.contains(0) and x.upper() <= mpmath.mpf(10) ** -60 for x in rec.offspan)


@pytest.mark.slow
def test_lemma_c2_sinusoidal_counterexample_is_certified_outside(results):
    """The sinusoidal-P regime below 2K/(c_L v N): a ball of alpha(3) entirely below 0, recorded outside the large-step
    part's hypotheses (P^T P = lambda I), so it never decides; the 60-digit mpmath iteration gives alpha(3) < 0 too."""
    from verify.engines import iterate
    large = statement(results, "lemma-C.2-large-step")
    out = [e for e in _ball_records(large) if e["role"] == "outside"]
    assert len(out) == 1 and out[0]["holds"] is False and "alpha(3) lies entirely at or below 0" in out[0]["result"]
    assert "--p-kind sinusoidal" in out[0]["replay"] and "--arb 256" in out[0]["replay"]
    assert "P^T P = lambda I" in out[0]["outside"] and large["verdict"] == "supported"
    s = regime("sts", 4, 2, M=1, d=1, eta="99/25", vstar_norm="2", p_kind="sinusoidal", p_structure="general")
    assert float(iterate(s, 3, "full", "mpmath", dps=60, checkpoints=[3]).final.alpha[0]) < -0.5


@pytest.mark.slow
def test_two_level_attention_full_balls_are_certified_and_lose_it_outside(results):
    """The finding beside two-level-attention is certified over t <= 40 in every regime; the 60-digit direct
    iteration in the ReLU (W_P frozen) regime has its on-support entries equal to 50 digits. Fed a sinusoidal P (outside
    P^T P = lambda I), the balls certify a spread beyond 1e-60, an outside record: the finding is no longer certified."""
    from lemmas import two_level_attention as mod
    from verify.engines.arith import Arith
    from verify.engines.full import FullState
    st = statement(results, "two-level-attention.full-balls")
    assert st["verdict"] == "certified" and "t <= 40" in st["scope_label"] and st["relation"] == "supports"
    assert len(st["evidence"]) == len(mod.regimes()) and all(e["holds"] is True for e in st["evidence"])
    relu = next(r for r in mod.regimes() if not r.wp_trainable)
    ar = Arith.make("mpmath", 60, 40)
    with ar.context():
        fs = FullState(relu, ar)
        for _ in range(40):
            fs.step()
        S = fs.attention()
        for j, g in enumerate(relu.supports):
            assert max(abs(S[i, j] - S[g[0], j]) for i in g) < mpmath.mpf(10) ** -50
    sin = regime("cnn", 8, 2, M=2, d=3, eta="1/10", p_kind="sinusoidal", p_structure="general")
    recs = mod.ball_records("ci", [sin], REGISTRY["two-level-attention"].hypotheses)
    assert recs[0]["role"] == "outside" and recs[0]["holds"] is False and "--p-kind sinusoidal" in recs[0]["replay"]
    claimed = REGISTRY["two-level-attention"].statement("two-level-attention.full-balls")
    assert decide(recs, claimed.scope).verdict == "inconclusive"


def test_ball_margins_decide_by_one_rule():
    """The rule of verify.evidence.ball_facts on hand-built balls: a fact holds when every margin ball lies above 0, fails
    at the first ball entirely on the wrong side, and decides nothing while a ball straddles 0 (a NaN ball included);
    "for some t" holds at a witness and fails only when every ball fails; exact bounds are the decimals written."""
    from flint import arb, fmpq
    from verify.evidence.ball_facts import both, decide_margins, exact
    pos, neg, mid, nan = arb(1, 0.5), arb(-1, 0.5), arb(0, 1), arb("nan")
    assert decide_margins([(1, pos), (2, pos)]).holds is True
    f = decide_margins([(1, pos), (2, mid), (3, neg), (4, neg)])
    assert (f.holds, f.at, f.undecided, f.count, f.upto) == (False, 3, 1, 4, 4)
    assert decide_margins([(1, pos), (2, mid)]).holds is None and decide_margins([(1, nan)]).holds is None
    assert decide_margins([]).holds is None
    assert (decide_margins([(1, neg), (2, pos)], some=True).holds, decide_margins([(1, neg), (2, pos)], some=True).at) \
        == (True, 2)
    assert decide_margins([(1, neg), (2, neg)], some=True).holds is False
    assert decide_margins([(1, neg), (2, mid)], some=True).holds is None
    zero = arb(0)
    assert decide_margins([(1, zero)]).holds is False and decide_margins([(1, zero)], strict=False).holds is True
    ok, bad, open_ = (decide_margins([(t, m)]) for t, m in ((2, pos), (5, neg), (7, mid)))
    assert both(ok, bad).holds is False and both(ok, bad).at == 5 and both(ok, open_).holds is None
    assert both(ok, ok).holds is True
    from verify.model.precision import arb_precision
    with arb_precision(256):
        bound = exact(1e-60)            # 10^-60 to 256 bits; the double nearest 1e-60 is 1e-76 away from it
        assert bound.contains(arb(fmpq(1, 10**60))) and not bound.contains(arb(1e-60))


@pytest.mark.parametrize("kw", [{"loss": "mean"}, {"beta": "2"}, {"eta_kq": "1/20"}])
def test_the_leading_terms_at_a_setting_hold_in_its_own_convention(kw):
    """Outside the reference convention the claims compare GD with the leading terms in the setting's convention
    (c_L, beta, eta_KQ kept): a long GD run (the float64 engine, an independent iteration) agrees with them within
    2%, where the reference convention's terms are off by a factor 2 to 4."""
    from verify.evidence.leading_terms import fast_series, leading, series_values
    from verify.derive.asymptotics import leading_terms
    from verify.model import make_setting
    from verify.model.symbols import T as Tsym, values_at
    s = make_setting(D=8, K=2, preset="cnn", eta="1/10", vstar_norm="1", **kw)
    steps = 2_000_000
    vals = series_values(fast_series(s, steps, [steps]))
    for q in ("excess_loss", "s_err", "w_err"):
        gd = float(vals[q][-1])
        assert abs(gd / float(leading(s, q)(steps)) - 1) < 0.02, (kw, q)
    ref = float(leading_terms()["s_err"].subs(values_at(s)).subs(Tsym, steps))
    assert abs(float(vals["s_err"][-1]) / ref - 1) > 0.3          # the reference terms would not do
