"""Probes: the classifier on series with known behaviour; the probe catalogue (files, findings, relations to the
claims); each probe's numbers checked against an independent calculation (closed forms, symbolic asymptotics, a
second engine, hand values); every verdict derived from its statements' evidence by the one rule; proved scopes
that exclude the regimes violating their assumptions; and stochastic findings decided over seeds."""
from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

from lemmas import CLAIMS
from verify.checks import Check, Claimed, module_name
from verify.cli import main
from verify.derive.asymptotics import leading_terms
from verify.engines import Arith, iterate
from verify.engines.full import FullState
from verify.errors import InvalidParameter
from verify.evidence import Scope, decide
from verify.model import make_setting, symbols as sy
from verify.model.hypotheses import closure, hypothesis
from verify.model.quantities import KEYS
from verify.probes import PROBES, Probe, register
from verify.probes.support.classify import classify
from verify.probes.support.seeds import ensemble, ensemble_holds
from conftest import holds_values

REQUIRED = {"id", "kind", "title", "questions", "profile", "question", "regimes", "findings", "classification",
            "statements", "numbers", "data", "replay"}
PROBES_DIR = Path(__file__).resolve().parents[1] / "verify" / "probes"
THROUGH_THE_CLI = ("full-attention",)      # its result comes from `verify probe NAME --json`, the command's path


@pytest.fixture(scope="module")
def results():
    """Every probe run once at the ci profile (each takes seconds); keyed by name, as the JSON dicts."""
    cache = {}

    def get(name):
        if name not in cache and name in THROUGH_THE_CLI:
            res = CliRunner().invoke(main, ["probe", name, "--profile", "ci", "--json"])
            assert res.exit_code == 0, res.output
            cache[name] = json.loads(res.stdout)         # progress lines go to stderr
        elif name not in cache:
            cache[name] = PROBES[name].run("ci").as_dict()
        return cache[name]
    return get


def statement(out: dict, sid: str) -> dict:
    return next(st for st in out["statements"] if st["id"] == sid)


def verdict(out: dict) -> str:
    """The headline (first) statement's verdict of a saved probe result."""
    return out["statements"][0]["verdict"]


def leading_exponent(q: str) -> float:
    """d log(leading term) / d log T, from the symbolic asymptotics (not from any fit)."""
    e = leading_terms()[q]
    return float(sp.simplify(sp.diff(sp.log(e), sy.T) * sy.T))


# ----- the classifier ----------------------------------------------------------------------
T = np.unique(np.round(np.geomspace(1, 10**5, 300))).astype(int)


@pytest.mark.parametrize("p", [-1.0, -0.5, -0.25, -2.0])
def test_classify_power_recovers_exponent(p):
    # y = 3 t^p (1 + 1/t): the correction dies out over the tail decade
    c = classify(T, [3 * t**p * (1 + 1 / t) for t in T])
    assert c.kind == "power" and abs(c.exponent - p) < 1e-3 and c.label == f"power:{round(p, 2):g}"


@pytest.mark.parametrize("q", [0.9, 0.5, 0.99])
def test_classify_exponential_recovers_rate(q):
    t = np.arange(0, 3000)
    c = classify(t, [2 * q**k for k in t])
    assert c.kind == "exponential" and abs(c.rate + math.log(q)) < 1e-6 * abs(math.log(q)) + 1e-9


def test_classify_exact_none_and_divergence():
    t = np.arange(0, 100)
    assert classify(t, [1.0] + [0.0] * 99).kind == "exact-from-start"
    assert classify(t, [0.7 + 1e-3 * (-1) ** k for k in t]).kind == "none"          # oscillates, no trend
    assert classify(t, [1.0 + 0.5 * k for k in t]).kind == "none"                   # moves away
    assert classify(t, [1.0] * 50 + [math.inf] * 50).kind == "none"                 # diverged


def test_classify_power_vs_exponential_not_confused():
    # a slow exponential over the same window is still called exponential, a power law is not
    c1 = classify(T, [math.exp(-t / 3000) for t in T])
    c2 = classify(T, [t ** -0.5 for t in T])
    assert (c1.kind, c2.kind) == ("exponential", "power")


# ----- the catalogue: files, findings, relations --------------------------------------------
def test_registry_matches_the_files():
    files = sorted(p.stem for p in PROBES_DIR.glob("*.py") if not p.stem.startswith("_"))
    assert sorted(PROBES.modules()) == files == sorted(module_name(p) for p in PROBES)
    for name, p in PROBES.items():
        assert p.module == f"verify.probes.{module_name(name)}" and isinstance(p, Probe) and p.kind == "probe"
        assert p.questions and p.summary and p.sizes


def test_every_statement_is_a_finding_and_a_claim_statement_is_refused():
    for name, p in PROBES.items():
        assert all(st.role == "finding" for st in p.statements), name
        for st in p.statements:
            assert set(st.scope.assumes) == {h.id for h in st.hypotheses}, st.id
    bad = type("Bad", (Probe,), {"questions": (3,), "statements": (
        Claimed("bad.claim", "Theorem 3.1 fails at K = D", "claim", ("K=D",), Scope()),)})
    with pytest.raises(AssertionError, match="finding"):
        register("bad")(bad)
    with pytest.raises(TypeError, match="Probe"):
        register("not-a-probe")(type("C", (Check,), {"statements": bad.statements}))
    assert "bad" not in PROBES


def _setting_level(ids) -> set:
    return {h for h in closure(ids) if hypothesis(h).holds is not None}


def _about_hypotheses(about: str) -> set:
    """The setting-level hypotheses of the claim part (or claim) a finding bears on."""
    owner = CLAIMS.statement_ids().get(about, about)
    c = CLAIMS[owner]
    hyps = c.statement(about).hypotheses if about in CLAIMS.statement_ids() else c.hypotheses
    return _setting_level(h.id for h in hyps)


def test_a_finding_outside_its_claims_hypotheses_says_outside():
    """relation="outside" exactly when the finding leaves a hypothesis of the claim part it bears on: an edge
    regime is reported beside the paper's claim, never as a verdict on it."""
    known = set(CLAIMS.ids()) | set(CLAIMS.statement_ids())
    for name, p in PROBES.items():
        for st in p.statements:
            if st.about is None:
                assert st.relation == "answers", st.id
                continue
            assert st.about in known, f"{st.id}: about {st.about!r} is no claim or claim part"
            leaves = _about_hypotheses(st.about) - _setting_level(h.id for h in st.hypotheses)
            assert (st.relation == "outside") == bool(leaves), (st.id, sorted(leaves))
    for sid in ("d-eq-k.geometric", "k-zero.frozen"):        # the two edges of the teacher class
        st = next(s for p in PROBES.values() for s in p.statements if s.id == sid)
        assert st.relation == "outside" and st.about.startswith("theorem-3.1")


def test_unknown_probe_is_invalid_parameter():
    with pytest.raises(InvalidParameter, match="probe"):
        PROBES["no-such-probe"]
    res = CliRunner().invoke(main, ["probe", "no-such-probe"])
    assert res.exit_code == 2 and "invalid NAME no-such-probe" in res.output and "Traceback" not in res.output


def test_no_probe_writes_a_verdict():
    pat = re.compile(r"""verdict\s*=\s*["'](proved|certified|supported|refuted|inconclusive)["']""")
    for f in PROBES_DIR.rglob("*.py"):
        assert not pat.search(f.read_text()), f"{f.name} writes a verdict literal"


@pytest.mark.slow
def test_cli_list_and_json():
    res = CliRunner().invoke(main, ["probe", "--list", "--json"])
    assert res.exit_code == 0 and {r["probe"] for r in json.loads(res.stdout)} == set(PROBES)
    res = CliRunner().invoke(main, ["probe", "k-zero", "--profile", "ci", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert REQUIRED <= set(out) and set(out["classification"]) == set(KEYS) and out["questions"] == [4]
    assert out["question"].startswith("Q4: They also seem to break when K = 0")
    res = CliRunner().invoke(main, ["probe", "k-zero"])
    assert res.exit_code == 0 and "k-zero.frozen" in res.output and "PROVED" in res.output


# Every finding's verdict, worked out by hand from what it quantifies over and what its evidence covers: proved
# where an exact record covers every size (K = D's closed form, K = 0's fixed point, lambda's equivalence); certified
# where the finding speaks of the regimes run over t <= H and Arb balls enclose exactly that; supported where only
# numerics back it, or where the exact identity is checked at one explicit size of a statement for every law and size
# (non-gaussian.identity-any-law).
PROBE_VERDICTS = {
    "d-eq-k.geometric": "proved", "k-zero.frozen": "proved", "p-scale.lambda-equivalence": "proved",
    "nonuniform-s.finite-horizon": "certified", "nonzero-init.finite-t": "certified",
    "nonzero-init.finite-horizon": "certified", "p-scale.sinusoidal-finite-horizon": "certified",
    "p-scale.sinusoidal-lemma-C2": "certified",
    "non-gaussian.identity-any-law": "supported", "non-gaussian.erf-law-matters": "supported",
    "finite-sample.realisable-rate": "supported", "finite-sample.noise-floor": "supported",
    "full-attention.x-block-fades": "supported", "full-attention.same-rate": "supported",
    "k-near-d.tails": "supported", "k-one.tails": "supported", "large-eta.boundary": "supported",
    "nonuniform-s.tails": "supported", "nonzero-init.realign": "supported", "p-scale.sinusoidal-tails": "supported",
    "rates.t-exponents": "supported", "rates.d-scan": "supported", "real-data.recovery": "supported",
    "real-data.t-exponents": "supported", "real-data.lemma-C2": "supported", "real-data.second-moments": "supported",
    "tstar.linear-at-fixed-K": "supported", "tstar.quadratic-when-K-grows": "supported",
}


def test_every_finding_has_a_hand_derived_verdict():
    assert set(PROBE_VERDICTS) == {st.id for p in PROBES.values() for st in p.statements}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_probe_reports_required_fields(results, name):
    out = results(name)
    assert REQUIRED <= set(out) and out["id"] == name and out["kind"] == "probe" and out["profile"] == "ci"
    assert all(out["classification"][q] in ("exact-from-start", "exponential", "none")
               or out["classification"][q].startswith("power:") for q in KEYS)
    assert out["regimes"] and all("config" in r for r in out["regimes"]) and out["replay"].startswith("verify probe")
    assert "--profile ci" in out["replay"]
    assert [st["id"] for st in out["statements"]] == [st.id for st in PROBES[name].statements]
    # every statement's verdict is the hand-derived one (PROBE_VERDICTS)
    for st in out["statements"]:
        assert st["role"] == "finding" and st["verdict"] == PROBE_VERDICTS[st["id"]], (st["id"], st["why"])
        for e in st["evidence"]:
            assert e["holds"] in (True, False, None)
            if e["role"] == "test" and e["holds"] is not None and e["kind"] not in ("symbolic", "smt", "formal"):
                assert e["threshold"]["why"]
    json.dumps(out)  # JSON-ready, arrays included
    found = list(holds_values(out))
    assert found and all(v is None or isinstance(v, bool) for _, v in found)    # never the string "True"
    assert not any("loss" == k for d in out["data"].values() if isinstance(d, dict) for k in d)   # one spelling


# ----- proved scopes name their assumptions --------------------------------------------------------------
BASES = {"d-eq-k.geometric": dict(D=6, K=6, preset="sts", M=2, d=2, eta="1/2", vstar_norm="1"),
         "k-zero.frozen": dict(D=5, K=0, preset="sts", M=2, d=3, eta="1/2", vstar_norm="3/2"),
         "p-scale.lambda-equivalence": dict(D=8, K=2, preset="sts", eta="1/2", vstar_norm="1", p_lambda="4")}


@pytest.mark.slow
@pytest.mark.parametrize("sid", sorted(BASES))
def test_proved_scopes_exclude_every_regime_violating_an_assumption(results, sid):
    out = results(sid.split(".")[0])
    st = statement(out, sid)
    assert st["verdict"] == "proved"
    scope = Scope.from_dict(st["scope"])
    base = make_setting(**BASES[sid])
    assert scope.admits(base)
    for h in scope.assumes:
        hyp = hypothesis(h)
        assert hyp.text in st["scope_label"]
        if hyp.violate is None:
            continue
        try:
            other = hyp.violate(base)
        except InvalidParameter:
            continue                          # no such regime exists
        assert not scope.admits(other), (sid, h)


def test_d_eq_k_scope_excludes_eta_9_where_gd_diverges(results):
    st = statement(results("d-eq-k"), "d-eq-k.geometric")
    scope = Scope.from_dict(st["scope"])
    assert "0 < eta_V c_L v N < 2D" in st["scope_label"]
    inside = make_setting(D=4, K=4, preset="sts", eta="7/4", vstar_norm="1")      # x = 7/4 < 8
    outside = make_setting(D=4, K=4, preset="sts", eta="9", vstar_norm="1")       # x = 9 > 8
    assert scope.admits(inside) and not scope.admits(outside)
    # independently: the full engine in 40 digits from zero, ||W_X - V*|| = |1 - 9/4|^t = 1.25^t
    tr = iterate(outside, 30, "full", "mpmath", dps=40, checkpoints=[30])
    assert float(tr.final.w_err) == pytest.approx(1.25**30, rel=1e-20) and 1.25**30 > 800
    rec = next(e for e in st["evidence"] if e["role"] == "outside")
    assert rec["holds"] is False and "807.8" in rec["result"]
    assert results("d-eq-k")["numbers"]["divergent"]["w_err"] == pytest.approx(1.25**30, rel=1e-12)


# ----- contradicting evidence changes the verdict ----------------------------------------------------------
def test_d_eq_k_verdict_follows_its_evidence(monkeypatch):
    """A failed proof step leaves only numerics (supported); a wrong closed form is a counterexample that does not
    replay (inconclusive): no verdict is written by hand."""
    from verify.probes import d_eq_k
    from verify.probes.support.proofs import identity_step
    x = sp.Symbol("x")
    broken = (identity_step("a step that does not close", [x], "identity", "K=D"),
              identity_step("another", [x], "identity", "eta-geometric"))
    monkeypatch.setattr(d_eq_k, "closed_form_steps", lambda sigma: broken)
    assert PROBES["d-eq-k"].run("ci").verdict == "supported"
    monkeypatch.undo()
    real = d_eq_k.closed_form
    monkeypatch.setattr(d_eq_k, "closed_form", lambda s, steps: tuple([1.01 * v for v in c] for c in real(s, steps)))
    assert PROBES["d-eq-k"].run("ci").verdict == "inconclusive"


@pytest.mark.slow
def test_finite_sample_ensemble_can_fail():
    """Six seeds of online SGD with B = 1 stopped at T = 300 scatter (slopes from about -1.0 to -1.5): the ensemble
    breaks the band, so the record does not hold, and the statement is not supported."""
    from verify.probes import finite_sample as fs
    s = make_setting(**fs.BASE)
    rec = fs.ensemble_record(s, 1, tuple(range(6)), 300, "verify probe finite-sample --json")
    e = rec["ensemble"]
    assert rec["holds"] is False and e["max"] - e["min"] > 2 * fs.BAND - 0.1 and "replay_check" in rec
    st = PROBES["finite-sample"].statement("finite-sample.realisable-rate")
    assert decide([rec], st.scope).verdict != "supported"
    # the rule itself, on hand values
    assert ensemble_holds(ensemble(range(4), [-1.0, -1.01, -0.99, -1.0]), -1, band=0.2, floor=0.02) is True
    assert ensemble_holds(ensemble(range(4), [-1.0, -0.7, -1.3, -1.0]), -1, band=0.2, floor=0.02) is False
    assert ensemble_holds(ensemble(range(4), [-0.9, -0.9, -0.9, -0.91]), -1, band=0.2, floor=0.02) is False
    assert ensemble_holds(ensemble(range(3), [-1.0, float("nan"), -1.0]), -1, band=0.2, floor=0.02) is None


# ----- each probe against an independent calculation -----------------------------------------
def test_d_eq_k_matches_linear_recursion(results):
    out = results("d-eq-k")
    assert out["question"].startswith("Q3: The proofs seem to break when D = K") and out["questions"] == [3]
    assert out["classification"] == {"excess_loss": "exponential", "s_err": "exact-from-start", "w_err": "exponential"}
    assert statement(out, "d-eq-k.geometric")["verdict"] == "proved"
    for label, (D, N, eta) in (("sts D=K=6", (6, 1, 0.5)), ("gcn D=K=4", (4, 4, 0.25))):
        rate = -math.log(1 - eta * N / D)       # alpha_t = 1 - (1 - eta N/D)^t exactly
        fit = out["fits"][label]
        assert fit["w_err"]["rate"] == pytest.approx(rate, rel=1e-6)
        assert fit["excess_loss"]["rate"] == pytest.approx(2 * rate, rel=1e-6)
        data = out["data"][label]
        vn = data["w_err"][0]
        for t, w, l in zip(data["step"], data["w_err"], data["excess_loss"]):
            assert w == pytest.approx(vn * (1 - eta * N / D) ** t, rel=1e-9, abs=1e-15)
            # L - L_opt = N ||V*||^2 (1 - eta N/D)^{2t} / (2D) (reference convention), by hand; float64 computes
            # L - L_opt as a difference of O(1) terms, so its absolute error is ~1e-16
            assert l == pytest.approx(N * vn**2 * (1 - eta * N / D) ** (2 * t) / (2 * D), rel=1e-6, abs=1e-15)
    # the full engine in mpmath, independently: S never moves, alpha follows the recursion
    s = make_setting(D=3, K=3, preset="sts", eta="1/3", vstar_norm="1")
    tr = iterate(s, 5, "full", "mpmath", checkpoints=range(6))
    for r in tr.records:
        exact = 1 - Fraction(8, 9) ** r.step
        with mpmath.workdps(40):
            assert r.s_err == 0 and abs(r.alpha[0] - mpmath.mpf(exact.numerator) / exact.denominator) < 1e-25


def test_k_zero_closed_forms(results):
    out = results("k-zero")
    assert out["classification"] == {"excess_loss": "exact-from-start", "s_err": "none", "w_err": "none"}
    data = out["data"]["sts K=0 D=5"]
    assert all(v == pytest.approx(math.sqrt(1 / 5), rel=1e-14) for v in data["s_err"])
    assert all(v == pytest.approx(1.5, rel=1e-14) for v in data["w_err"])
    assert max(data["excess_loss"]) == 0
    assert verdict(out) == "proved" and out["statements"][0]["relation"] == "outside"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["k-one", "k-near-d"])
def test_interior_exponents_match_symbolic_asymptotics(results, name):
    out = results(name)
    for label, nums in out["numbers"].items():
        if label == "worst_tail_deviation":
            continue
        for q in KEYS:
            assert nums[q]["fitted_exponent"] == pytest.approx(leading_exponent(q), abs=0.015), (label, q)
            assert nums[q]["ratio_to_leading_term_at_T"] == pytest.approx(1, abs=0.02), (label, q)
    assert verdict(out) == "supported" and out["statements"][0]["relation"] == "supports"


@pytest.mark.slow
def test_nonuniform_s_exponents_and_engine_route(results):
    out = results("nonuniform-s")
    for label, nums in out["numbers"].items():
        for q in KEYS:
            assert nums[q]["fitted_exponent"] == pytest.approx(leading_exponent(q), abs=0.03), (label, q)
        assert nums["shape_err"]["final"] < 1e-2 * nums["shape_err"]["initial"]
    assert verdict(out) == "supported"
    # The full engine's sstar_weights path with uniform weights reproduces the reduced recursion.
    s_w = make_setting(D=4, K=2, preset="sts", sstar_weights=[["1/2", "1/2"]], eta="1/2", vstar_norm="1")
    s_u = make_setting(D=4, K=2, preset="sts", eta="1/2", vstar_norm="1")
    a = iterate(s_w, 200, "full", "float64", checkpoints=[200]).final
    b = iterate(s_u, 200, "reduced", "float64", checkpoints=[200]).final
    assert float(a.loss) == pytest.approx(float(b.loss), rel=1e-10)


@pytest.mark.slow
def test_non_gaussian(results):
    out = results("non-gaussian")
    n = out["numbers"]
    # the closed-form identity is checked at explicit sizes (M=2 d=2 D=3 N=2) only, of a statement for every size:
    # supported, and its scope and why name where it was proved
    assert verdict(out) == "supported" and "checked at dimensions {M=2 d=2 D=3 N=2}" in out["statements"][0][
        "scope_label"] and "proved only on part of the statement" in out["statements"][0]["why"]
    assert n["identity_max_trajectory_difference_across_laws"] == 0
    assert n["identity_max_z_score"] < 4      # Monte Carlo agrees with the closed form under every law
    assert all(r > 0 for r in n["erf_ratio_mc_loss_to_gaussian_closed_form_at_T"].values())
    assert statement(out, "non-gaussian.erf-law-matters")["verdict"] == "supported"


def test_large_eta_boundary_matches_linearisation(results):
    out = results("large-eta")
    b = out["numbers"]["boundaries"]
    K, N, D = 2, 1, 8
    # independently: alpha' = alpha - eta N ||s||^2 (alpha - alpha*), ||s||^2 -> 1/K: stable iff eta < 2K/N
    assert b["derived_near_optimum_2K_over_N"] == pytest.approx(2 * K / N)
    assert b["derived_at_start_2D_over_N"] == pytest.approx(2 * D / N)
    conv = [v[0] for v in b["convergence"].values()]
    assert all(c > 2 * K / N for c in conv) and conv == sorted(conv, reverse=True)
    assert conv[-1] < 1.05 * 2 * K / N
    div = [v[0] for v in b["divergence"].values()]
    assert all(d > c for d, c in zip(div, conv)) and all(d < 2 * D / N for d in div)
    a0, a1, a2 = out["numbers"]["alpha_at_T_T+1_T+2 (eta = 1.5 x 2K/N)"]
    assert a0 == pytest.approx(a2, rel=1e-9) and abs(a0 - a1) > 0.1     # a period-2 orbit
    assert out["classification"] == {"excess_loss": "none", "s_err": "none", "w_err": "none"}
    assert {q: out["fits"]["eta_ok"][q]["kind"] for q in KEYS} == dict.fromkeys(KEYS, "power")
    assert verdict(out) == "supported"


@pytest.mark.slow
def test_nonzero_init_offspan_law(results):
    out = results("nonzero-init")
    n = out["numbers"]
    assert n["offspan_initial"] > 0.01
    # the off-span start is decided by Arb balls of r(0), r(1) (certified), the geometric tail by float64 (supported)
    assert verdict(out) == "supported" and statement(out, "nonzero-init.finite-t")["verdict"] == "certified"
    assert all(st["relation"] == "outside" and st["about"] == "lemma-C.2" for st in out["statements"])
    assert n["offspan_fit"]["kind"] == "exponential" and n["one_step_law_max_rel_dev"] < 1e-9
    # independently: r(t+1) = |1 - eta ||S(t)||_F^2| r(t) for the off-span part (identity, centred law)
    s = make_setting(D=3, K=1, preset="sts", M=1, d=2, vstar=[["1", "0"]], eta="1/2", init="random",
                     init_scale="1/5", seed=1)
    st = FullState(s, Arith.make("float64", None, 10))
    for _ in range(5):
        S = st.attention()
        r0 = abs(float(st.WX[0, 1]))       # V* = e_1, so the off-span part is the second coordinate
        st.step()
        assert abs(float(st.WX[0, 1])) == pytest.approx(abs(1 - 0.5 * float((S * S).sum())) * r0, rel=1e-12)


def test_p_scale_equivalence_and_the_sinusoidal_findings(results):
    out = results("p-scale")
    assert out["numbers"]["max_rel_dev_reduced"] < 1e-12 and out["numbers"]["max_rel_dev_full_vs_reduced"] < 1e-9
    for q in KEYS:
        assert out["numbers"]["sinusoidal_exponents"][q] == pytest.approx(leading_exponent(q), abs=0.03)
    assert statement(out, "p-scale.lambda-equivalence")["verdict"] == "proved"
    assert statement(out, "p-scale.sinusoidal-lemma-C2")["verdict"] == "certified"      # a ball of alpha(3) below 0
    # independently, with the full engine on both sides: lambda = 9 vs eta_KQ x 81
    a = make_setting(D=3, K=1, preset="sts", eta="1/4", vstar_norm="1", p_lambda="9")
    b = make_setting(D=3, K=1, preset="sts", eta="1/4", eta_kq="81/4", vstar_norm="1")
    ra, rb = (iterate(x, 30, "full", "float64", checkpoints=[30]).final for x in (a, b))
    assert float(ra.loss) == pytest.approx(float(rb.loss), rel=1e-10)
    # the sinusoidal P below 2K/(c_L v N): alpha < 0 in exact rationals after 3 steps of the full engine at 60 digits
    s = make_setting(D=4, K=2, preset="sts", eta="99/25", vstar_norm="2", p_kind="sinusoidal", p_structure="general")
    assert float(s.eta_v * s.N) < 2 * s.K
    tr = iterate(s, 3, "full", "mpmath", dps=60, checkpoints=[3])
    assert float(tr.final.alpha[0]) < -0.5


@pytest.mark.slow
def test_tstar_exponents(results):
    out = results("tstar")
    a, b = out["numbers"]["A: K = 2"], out["numbers"]["B: K = D/2"]
    # derived T* = K D / (2 eta ||V*||^2): exponent 1 at fixed K, 2 with K = D/2
    Ds = [r["D"] for r in a["rows"]]
    assert [r["predicted_KD_over_2eta_vn2"] for r in a["rows"]] == [2 * D / (2 * 0.5) for D in Ds]
    assert a["fit"]["exponent_t_cross"] == pytest.approx(1, abs=0.1)
    assert a["fit"]["exponent_t_track"] == pytest.approx(1, abs=0.2)
    assert b["fit"]["local_exponent_t_cross_last_pair"] == pytest.approx(2, abs=0.15)
    # the measured onset is a sharper finding beside Theorem 3.1's sufficient time, never its verdict
    assert all(st["verdict"] == "supported" and st["relation"] == "sharper" and st["about"] == "theorem-3.1-tstar"
               for st in out["statements"])
    assert out["numbers"]["tstar_cross"]["fixed_K"]["exponent"] == a["fit"]["exponent_t_cross"]


def test_rates(results):
    out = results("rates")
    for label in ("cnn D=8 K=2", "gcn D=6 K=2", "sts D=8 K=3", "gslp D=8"):
        for q in KEYS:
            assert out["numbers"][label][q]["fitted_exponent"] == pytest.approx(leading_exponent(q), abs=0.015)
    worst = max(abs(out["numbers"][lab][q]["fitted_exponent"] - leading_exponent(q))
                for lab in out["numbers"]["t_exponents"] for q in KEYS)
    assert out["numbers"]["worst_tail_deviation"] == pytest.approx(worst, abs=1e-12)
    assert out["numbers"]["d_exponent_of_T_excess_loss"] == pytest.approx(out["numbers"]["d_exponent_of_leading_term"],
                                                                            abs=0.02)
    # K N (D - K)/(4 D eta T) at N = 1, K = 2: T (L - L_opt) is D-independent up to (D - 2)/D, by hand
    for row in out["numbers"]["D_scan"]:
        assert row["T_times_leading"] == pytest.approx(2 * (row["D"] - 2) / (4 * row["D"] * 0.5), rel=1e-12)
    assert statement(out, "rates.t-exponents")["verdict"] == "supported"
    d = statement(out, "rates.d-scan")
    assert d["verdict"] == "supported" and d["relation"] == "sharper" and d["about"] == "theorem-3.1-lower"


@pytest.mark.slow
def test_finite_sample(results):
    from verify.probes.support.sgd import OnlineSGD
    out = results("finite-sample")
    ens = out["numbers"]["exponent_ensembles"]
    assert set(ens) == {"B=1", "B=8", "B=64"} and all(e["n"] == len(out["numbers"]["seeds"]) >= 2 for e in ens.values())
    for e in ens.values():      # the spread is reported, and recomputed here from the per-seed values
        v = np.array(e["values"])
        assert (e["min"], e["max"]) == (v.min(), v.max()) and e["sd"] == pytest.approx(v.std(ddof=1))
    assert ens["B=64"]["mean"] == pytest.approx(-1, abs=0.05)
    assert all(x > -0.8 for x in out["numbers"]["noise_exponent_ensemble"]["values"])
    assert verdict(out) == "supported" and statement(out, "finite-sample.noise-floor")["relation"] == "outside"
    assert "seeds 0..3" in out["replay"]
    # independently: the mean of many mini-batch gradients is the population gradient of verify.engines.full
    s = make_setting(D=3, K=1, preset="sts", d=2, eta="1/4", vstar_norm="1", init="random", init_scale="1/2", seed=2)
    sgd = OnlineSGD(s, 200_000, 5)
    X = s.law.sample(sgd.rngs[0], (200_000, s.d, s.D))
    mc = sgd.gradients(X[None], np.zeros((1, 200_000, s.M, s.N)))
    pop = sgd.pop.gradients()
    for a, b in zip(mc, pop):
        assert np.max(np.abs(a[0] - b)) < 0.02 * max(1.0, np.max(np.abs(b)))
    # chains run in lockstep are the single-seed runs of their seeds
    cps = [0, 10, 50]
    both, one = OnlineSGD(s, 4, (5, 6)).run(cps), OnlineSGD(s, 4, 6).run(cps)
    assert both[6] == one[6] and both[5] != both[6]


@pytest.mark.slow
def test_full_attention(results):
    out = results("full-attention")
    assert verdict(out) == "supported" and {st["relation"] for st in out["statements"]} == {"answers"}
    for label, runs in out["data"].items():
        a, b = runs["position-only"], runs["input-dependent"]
        per = out["numbers"][label]
        assert max(a["kq_x_block"]) == 0 and max(a["s_spread"]) < 1e-12       # (a) never sees X
        for n in per.values():
            # the held-out estimate of (a)'s loss tracks its exact population loss (2000 held-out samples)
            assert n["held_out_rel_error_vs_exact_population"] < 0.1
        first = next(iter(per.values()))
        assert first["loss_ratio_b_over_a_at_T"] == pytest.approx(b["excess_loss"][-1] / a["excess_loss"][-1])
        assert first["x_over_p_at_T"] == pytest.approx(b["kq_x_block"][-1] / b["kq_p_block"][-1])
        # both students approach the teacher: the held-out loss falls by more than 1000x
        assert a["excess_loss"][-1] < 1e-3 * a["excess_loss"][0] and b["excess_loss"][-1] < 1e-3 * b["excess_loss"][0]
        assert out["fits"][label]["position-only"]["excess_loss"]["exponent"] == pytest.approx(-1, abs=0.1)
        assert a["step"] == b["step"] and a["step"][-1] == out["regimes"][0]["steps"]
        # the quoted ensemble is recomputed from the per-seed values
        xs = [n["x_over_p_at_T"] for n in per.values()]
        assert out["numbers"]["x_block"][label]["values"] == pytest.approx(xs)
        assert out["numbers"]["x_block"][label]["mean"] == pytest.approx(sum(xs) / len(xs))
    assert set(out["numbers"]["x_block"]) == set(out["data"]) == set(out["numbers"]["x_block_peak"])
    assert out["question"].startswith("Q11: Position-only attention") and "seeds 11..12" in out["replay"]


@pytest.mark.slow
def test_quoted_numbers_are_named_by_key(results):
    """The numbers the README quotes are found by key, never by a route label."""
    assert results("rates")["numbers"]["worst_tail_deviation"] < 0.02
    assert set(results("large-eta")["numbers"]["boundaries"]) >= {"convergence", "divergence"}
    assert set(results("tstar")["numbers"]["tstar_cross"]) == {"fixed_K", "K_half_D"}
    assert all(e["max"] < 0.01 for e in results("full-attention")["numbers"]["x_block"].values())


def test_each_probe_draws_its_figure_beside_its_computation(results, tmp_path):
    from verify.report import figures as fg
    out = results("k-zero")
    made = PROBES["k-zero"].figures(out, tmp_path)
    assert made == [{"file": "k-zero.png", "caption": fg.draw_probe("k-zero", out).caption}]
    assert (tmp_path / "k-zero.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert PROBES["k-zero"].figures({"id": "k-zero"}, tmp_path / "none") == [] and not (tmp_path / "none").exists()


# ----- finite-horizon facts certified by the full-matrix engine's Arb balls ------------------------------------------
def _ball_horizon(probe: str) -> int:
    return PROBES[probe].size("ci", "ball_steps")


CERTIFIED = {"nonuniform-s.finite-horizon": lambda: _ball_horizon("nonuniform-s"),
             "nonzero-init.finite-horizon": lambda: _ball_horizon("nonzero-init"),
             "nonzero-init.finite-t": lambda: 1,
             "p-scale.sinusoidal-finite-horizon": lambda: _ball_horizon("p-scale"),
             "p-scale.sinusoidal-lemma-C2": lambda: 5}


@pytest.mark.slow
@pytest.mark.parametrize("sid", sorted(CERTIFIED))
def test_finite_horizon_facts_are_certified_with_their_horizon(results, sid):
    """Each upgraded statement is certified by Arb records that reached the horizon they were asked for, and its scope
    label names that horizon; the float64 evidence beside it is kept where the statement had some."""
    st = statement(results(sid.split(".")[0]), sid)
    H = CERTIFIED[sid]()
    assert st["verdict"] == "certified" and f"t <= {H}" in st["scope_label"], (st["verdict"], st["scope_label"])
    balls = [e for e in st["evidence"] if e["kind"] == "arb" and e["role"] == "test"]
    assert balls and all(e["holds"] is True and e["horizon_reached"] >= H and "ball" in e["threshold"]["why"]
                         for e in balls)
    assert all("verify run" in e["replay"] and "--arb" in e["replay"] for e in balls)
    if sid in ("nonzero-init.finite-t", "p-scale.sinusoidal-lemma-C2"):
        assert any(e["kind"] != "arb" for e in st["evidence"])       # the numeric routes stay beside the balls


def _mpmath_states(s, steps: int):
    """The direct formulation (verify.engines.full.FullState: W_P and W_KQ stepped, logits formed every step) at 60
    digits: (record, attention) at every t <= steps. It shares no step code with the certified LogitState."""
    ar = Arith.make("mpmath", 60, steps)
    out = []
    with ar.context():
        st = FullState(s, ar)
        for t in range(steps + 1):
            out.append((st.record(), st.attention()))
            if t < steps:
                st.step()
    return out


def _in(ball, value) -> bool:
    """The 60-digit ``value`` inside ``ball`` widened by 1e-55 (the reference's own rounding) relative."""
    from verify.engines.arb import to_fraction
    with mpmath.workdps(120):
        lo, hi = (mpmath.mpf(to_fraction(x).numerator) / to_fraction(x).denominator
                  for x in (ball.lower(), ball.upper()))
        w = mpmath.mpf(10) ** -55 * max(1, abs(value))
        return lo - w <= value <= hi + w


def test_the_probes_balls_contain_a_60_digit_mpmath_iteration():
    """Second route: the balls the probes decide with (L - L_opt, the within-support shape error and the secant
    exponent of nonuniform-s; alpha of p-scale's sinusoidal regime; the off-span residuals of nonzero-init) contain the
    same quantities computed from a 60-digit mpmath iteration of the direct formulation, shape errors and secants
    written out here from S and the weights."""
    from verify.evidence.ball_facts import ball_run, secant_exponent
    from verify.probes import nonuniform_s as nu, nonzero_init as nz, p_scale as ps
    s = make_setting(**nu.REGIMES["sts D=4 K=2 weights 1/4,3/4"])
    run, ref = ball_run(s, 60, 512, nu.with_shape), _mpmath_states(s, 60)
    with mpmath.workdps(60):
        for t in (0, 1, 30, 60):
            rec, S = ref[t]
            assert _in(run.seen[t]["record"].excess_loss, rec.excess_loss)
            for j, g in enumerate(s.supports):
                on = [S[i, j] for i in g]
                w = [mpmath.mpf(x.numerator) / x.denominator for x in s.sstar_weights[j]]
                err = mpmath.sqrt(sum((x / sum(on) - y) ** 2 for x, y in zip(on, w)))
                assert _in(run.seen[t]["shape"][j], err), (t, j)
        slope = mpmath.log(ref[60][0].s_err / ref[30][0].s_err) / mpmath.log(2)
        assert _in(secant_exponent(run, lambda o: o["record"].s_err, 30, 60), slope)
    s = make_setting(**ps.C2_BREAK)
    run, ref = ball_run(s, 5, 256), _mpmath_states(s, 5)
    with mpmath.workdps(60):
        assert all(_in(run.seen[t]["record"].alpha[0], ref[t][0].alpha[0]) for t in range(6))
        assert ref[3][0].alpha[0] < -0.5 and run.seen[3]["record"].alpha[0].upper() < 0
    s = nz.setting_for(3)
    run, ref = ball_run(s, 60, 512), _mpmath_states(s, 60)
    with mpmath.workdps(60):
        for t in range(61):
            assert all(_in(b, v) for b, v in zip(run.seen[t]["record"].offspan, ref[t][0].offspan)), t
            if t:   # the rate bound 1 - eta v N/D = 7/8, by hand: eta = 1/2, v = N = 1, D = 4
                assert all(b <= mpmath.mpf(7) / 8 * a for a, b in zip(ref[t - 1][0].offspan, ref[t][0].offspan))


def _breaking_cases():
    """(probe, statement, records fed a regime that breaks the fact, the flag naming that regime in the replay)."""
    from verify.probes import nonuniform_s as nu, nonzero_init as nz, p_scale as ps
    hot = dict(nu.REGIMES["sts D=4 K=2 weights 1/4,3/4"], eta="20")
    yield ("nonuniform-s.finite-horizon", lambda: nu.certified_runs("ci", {"eta 20": hot})["eta 20"]["records"],
           "--eta 20")
    yield ("nonzero-init.finite-horizon", lambda: nz.certified_records(
        "ci", {"eta 7/2": nz.setting_for(3).with_(eta="7/2")})[0], "--eta 7/2")
    sin = make_setting(**ps.SMALL, p_kind="sinusoidal", p_structure="general").with_(eta="20")
    yield "p-scale.sinusoidal-finite-horizon", lambda: ps.certified_records("ci", sin=sin)[1], "--eta 20"
    orth = make_setting(**dict(ps.C2_BREAK, p_kind="identity", p_structure="orthogonal"))
    yield "p-scale.sinusoidal-lemma-C2", lambda: ps.certified_records("ci", c2=orth)[0], "--eta 99/25"


@pytest.mark.parametrize("case", list(_breaking_cases()), ids=lambda c: c[0])
def test_a_certified_fact_is_refuted_in_a_regime_that_breaks_it(case):
    """Fed a regime where the fact fails (a diverging step size; a step size beyond the rate bound; P = I for the
    sinusoidal-P counterexample), the same records become certified counterexamples that replay at 10x their step, and
    the one rule refutes the statement; the replay names the regime."""
    sid, make, flag = case
    probe = sid.split(".")[0]
    recs = make()
    bad = [e for e in recs if e["holds"] is False]
    assert bad and all(e["role"] == "test" and e["kind"] == "arb" for e in bad)
    for e in bad:
        assert flag in e["replay"] and e["replay_check"]["holds"] is False and flag in e["replay_check"]["replay"]
        assert e["replay_check"]["horizon"] == 10 * e["scope"]["horizon"]
        if sid == "p-scale.sinusoidal-lemma-C2":
            assert "sinusoidal" not in e["replay"]
    assert decide(recs, PROBES[probe].statement(sid).scope).verdict == "refuted"


@pytest.mark.slow
def test_the_probe_verdict_follows_a_monkeypatched_regime(monkeypatch):
    """The whole nonzero-init probe run on eta = 7/2 (x = 7/2 < 2K: GD in its stable range for alpha, but beyond the
    off-span rate bound 1 - eta v N/D = 1/8): its certified statement comes out refuted, replaying that regime. By hand,
    in 60-digit mpmath: the off-span residual there grows by more than 1/8 in one step within the first ten."""
    from verify.probes import nonzero_init as nz
    real = nz.setting_for
    monkeypatch.setattr(nz, "setting_for", lambda seed: real(seed).with_(eta="7/2"))
    st = PROBES["nonzero-init"].run("ci").statement("nonzero-init.finite-horizon")
    assert st["verdict"] == "refuted" and "--eta 7/2" in st["reason"]
    ref = _mpmath_states(nz.setting_for(3), 10)
    with mpmath.workdps(60):
        assert any(b > a / 8 for t in range(1, 11) for a, b in zip(ref[t - 1][0].offspan, ref[t][0].offspan))

# ----- real-data: the digits (a stand-in for MNIST) against Gaussian data ------------------------------------------
def _real_data_runs(out: dict) -> dict:
    """The probe's runs rebuilt from its saved result (settings from the teachers, fits from the saved series)."""
    from verify.probes.real_data import teacher_setting
    from verify.probes.support.runs import classify_series
    return {t: {data: {"setting": teacher_setting(t, data), "steps": ser["step"][-1], "series": ser,
                       "fits": classify_series(ser)} for data, ser in by.items()} for t, by in out["data"].items()}


@pytest.mark.slow
def test_real_data_findings_and_their_second_routes(results):
    """Every finding supported at ci; the token variances by hand from sklearn's floats; the digits' run against the
    numpy chain rule of the second-moment route (not JAX's autodiff); the quoted exponents against a least-squares
    fit of the saved series over the quoted window; the isotropic-pixel tensor's feature Gram matrices are multiples
    of I (why the rows stay on their lines there)."""
    from sklearn.datasets import load_digits
    from verify.engines import fullcov
    from verify.engines.fullgrad import fixed
    from verify.probes.real_data import teacher_setting
    out = results("real-data")
    assert {st["id"]: st["verdict"] for st in out["statements"]} == {
        "real-data.recovery": "supported", "real-data.t-exponents": "supported", "real-data.lemma-C2": "supported",
        "real-data.second-moments": "supported"}
    assert all("stand-in for MNIST: sklearn's 8×8 digits" in st["text"] for st in out["statements"])
    assert "data=digits" in out["statements"][0]["scope_label"]
    X = load_digits().data.reshape(-1, 8, 8)
    X = X - X.mean(axis=0)
    X = X / np.sqrt((X ** 2).mean())
    assert out["numbers"]["token_variances"] == pytest.approx(list((X ** 2).mean(axis=(0, 1))), abs=1e-12)
    ser = out["data"]["cnn K=2"]["digits"]
    t = next(s for s in ser["step"] if s >= 1000)
    rec = iterate(teacher_setting("cnn K=2", "digits"), t, "full", "float64", checkpoints=[t]).final   # JAX
    from verify.engines.full import iterate_full
    ref = iterate_full(teacher_setting("cnn K=2", "digits"), t, Arith.make("float64", None, t), [t],
                       backend="numpy").final
    i = ser["step"].index(t)
    for q in KEYS:
        assert float(getattr(ref, q)) == pytest.approx(ser[q][i], rel=1e-10)
        assert float(getattr(rec, q)) == pytest.approx(ser[q][i], rel=1e-12)
    for teacher, by in out["numbers"]["runs"].items():
        for data, nums in by.items():
            for q, f in nums["t_exponents"].items():
                if f["kind"] != "power":
                    continue
                s = out["data"][teacher][data]
                lo, hi = f["window"]
                idx = [k for k, st in enumerate(s["step"]) if lo <= st <= hi and s[q][k] > 0]
                p = np.polyfit(np.log(np.array(s["step"])[idx]), np.log(np.array(s[q])[idx]), 1)[0]
                assert p == pytest.approx(f["fitted_exponent"], abs=1e-9), (teacher, data, q)
    fx = fixed(teacher_setting("cnn K=2", "gaussian:digits-tokens"), Arith.make("float64", None, 1))
    S = np.random.default_rng(0).dirichlet(np.ones(8), size=4).T
    P = fullcov.feature_gram(fx.cov, S, S)
    assert all(np.max(np.abs(Pj - Pj[0, 0] * np.eye(8))) < 1e-14 for Pj in P)
    fx = fixed(teacher_setting("cnn K=2", "gaussian:digits-pixels"), Arith.make("float64", None, 1))
    assert max(np.max(np.abs(Pj - Pj[0, 0] * np.eye(8))) for Pj in fullcov.feature_gram(fx.cov, S, S)) > 1e-2


@pytest.mark.slow
def test_real_data_verdicts_follow_their_evidence(results):
    """The probe's record builders on altered runs: rows that stay on their lines on the digits, or a digits run
    whose exponents are the claimed ones, leave the findings unsupported (a counterexample, not replayed)."""
    import copy
    from verify.probes import real_data as rd
    res = _real_data_runs(results("real-data"))
    scope = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all")
    assert decide(rd.lemma_records(res), scope).verdict == "supported"
    flat = copy.deepcopy(res)
    flat["sts K=4"]["digits"]["series"]["offspan"] = [0.0] * len(flat["sts K=4"]["digits"]["series"]["step"])
    assert decide(rd.lemma_records(flat), scope).verdict not in ("supported", "proved", "certified")
    iso = copy.deepcopy(res)
    iso["cnn K=2"]["digits"] = iso["cnn K=2"]["gaussian"]
    assert decide(rd.exponent_records(iso), scope).verdict not in ("supported", "proved", "certified")
    assert decide(rd.recovery_records(res), scope).verdict == "supported"
