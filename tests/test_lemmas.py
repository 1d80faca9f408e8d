"""The claims registry (lemmas/): ids, files, honest verdicts, and the numbers behind them."""
from __future__ import annotations

import math
import shlex
from fractions import Fraction

import numpy as np
import pytest

import lemmas
from lemmas import REGISTRY, honest_verdict
from verify.errors import InvalidParameter

REQUIRED = ["lemma-C.2", "wp-zero", "two-level-attention", "early-alignment", "loss-monotone", "theorem-3.1-rates",
            "theorem-3.1-tstar", "theorem-3.2-ood", "neg-alpha-le-1", "neg-loss-monotone-any-eta",
            "neg-rate-exponential"]
PER_REGIME = ["lemma-C.2", "wp-zero", "two-level-attention", "early-alignment", "loss-monotone", "neg-alpha-le-1",
              "neg-loss-monotone-any-eta", "neg-rate-exponential"]
STRENGTH = {"symbolic": 0, "arb": 1, "mpmath": 2, "float64": 2, "monte-carlo": 2}


@pytest.fixture(scope="module")
def results():
    return {cid: c.run("ci") for cid, c in REGISTRY.items()}


def test_required_ids_exist_and_files_match():
    assert set(REQUIRED) <= set(REGISTRY)
    for cid in REGISTRY:
        assert REGISTRY[cid]._module == f"lemmas.{lemmas.module_name(cid)}"
    assert set(lemmas.claim_modules()) == {lemmas.module_name(c) for c in REGISTRY}
    lemmas.check_registry()


def test_registry_check_catches_a_mismatch(monkeypatch):
    stray = type("Stray", (lemmas.Claim,), {})()
    stray._module = "lemmas.wp_zero"
    monkeypatch.setitem(REGISTRY, "not-in-its-file", stray)
    with pytest.raises(AssertionError, match="not-in-its-file"):
        lemmas.check_registry()


def test_module_name():
    assert lemmas.module_name("lemma-C.2") == "lemma_C_2"
    assert lemmas.module_name("theorem-3.1-rates") == "theorem_3_1_rates"


def _ev(kind, holds, **kw):
    return {"route": "r", "kind": kind, "regimes": [], "result": "", "holds": holds, **kw}


@pytest.mark.parametrize("ev, requested, expected", [
    ([_ev("float64", True)], "certified", "supported"),                       # float64 alone is never certified
    ([_ev("float64", True), _ev("mpmath", True)], "proved", "supported"),
    ([_ev("monte-carlo", True)], "certified", "supported"),
    ([_ev("arb", True), _ev("float64", True)], "certified", "supported"),
    ([_ev("arb", True), _ev("float64", True, role="extends")], "certified", "certified"),
    ([_ev("symbolic", True), _ev("arb", True)], "proved", "certified"),
    ([_ev("symbolic", True)], "proved", "proved"),
    ([_ev("symbolic", True)], "supported", "supported"),                     # a claim may ask for less
    ([_ev("symbolic", True), _ev("float64", False)], "proved", "refuted"),
    ([_ev("float64", False, role="extends")], "certified", "refuted"),
    ([_ev("float64", None)], "supported", "inconclusive"),
    ([_ev("float64", True)], "refuted", "inconclusive"),                     # no counterexample, no refutation
    ([], "proved", "inconclusive"),
])
def test_honest_verdict_table(ev, requested, expected):
    assert honest_verdict(ev, requested) == expected


def test_bad_profile_and_non_regime_claim():
    with pytest.raises(InvalidParameter, match="profile"):
        REGISTRY["wp-zero"].run("fast")
    with pytest.raises(InvalidParameter, match="regime_check"):
        REGISTRY["theorem-3.1-rates"].regime_check(None, 10)


def test_every_claim_runs_and_its_verdict_follows_from_its_evidence(results):
    for cid, r in results.items():
        d = r.as_dict()
        assert set(d) == {"id", "verdict", "statement", "evidence", "convention", "replay"}
        assert r.verdict in lemmas.VERDICTS and r.evidence and r.replay
        confirming = [e for e in r.evidence if e["holds"] is True and e.get("role") != "extends"]
        refuting = [e for e in r.evidence if e["holds"] is False]
        if refuting:
            assert r.verdict == "refuted", cid
        if r.verdict in ("proved", "certified"):
            weakest = max(STRENGTH[e["kind"]] for e in confirming)
            assert weakest <= (0 if r.verdict == "proved" else 1), cid
        if r.verdict == "certified":
            assert any(e["kind"] == "arb" for e in confirming)


def test_negative_controls_are_refuted_with_replays(results):
    for cid in ("neg-alpha-le-1", "neg-loss-monotone-any-eta", "neg-rate-exponential"):
        assert REGISTRY[cid].negative_control
        assert results[cid].verdict == "refuted"
        assert any(e["holds"] is False and e.get("replay", "").startswith("verify run") for e in results[cid].evidence)


def test_expected_verdicts(results):
    assert results["wp-zero"].verdict == "proved"
    assert results["two-level-attention"].verdict == "proved"
    assert results["early-alignment"].verdict == "proved"
    assert results["lemma-C.2"].verdict == "certified"
    assert results["loss-monotone"].verdict == "supported"
    assert results["theorem-3.2-ood"].verdict == "supported"
    # the D-dependence of Theorem 3.1 and the D^2 entry time disagree with the reference convention
    assert results["theorem-3.1-rates"].verdict == "refuted"
    assert results["theorem-3.1-tstar"].verdict == "refuted"


def test_lemma_c2_alpha1_closed_form(results):
    """alpha(1) = eta c_L v <S(0), S*> = eta N / D for the first (identity, cnn D=8 K=2) regime,
    against the full-matrix engine's first step."""
    from verify.engines import iterate
    from lemmas.lemma_C_2 import regimes
    s = regimes()[0]
    a1 = float(iterate(s, 1, "full", "mpmath", checkpoints=[1]).final.alpha[0])
    assert a1 == pytest.approx(float(s.eta_v * s.N / s.D), rel=1e-15)
    env = next(e for e in results["lemma-C.2"].evidence if e["route"].startswith("reduced recursion"))["envelope"]
    assert float(env[0]["min"]) == pytest.approx(a1, rel=1e-5) and env[0]["min_at"] == 1
    assert float(env[0]["overshoot"]) > 0


def test_lemma_c2_regime_check_detects_sign_change():
    from lemmas._common import regime
    s = regime("gcn", 6, 2, M=1, d=2, eta="9/10", vstar_norm="2")
    out = REGISTRY["lemma-C.2"].regime_check(s, 400)
    assert not out.holds and out.replay.startswith("verify run --D 6 --preset gcn --K 2")
    assert REGISTRY["lemma-C.2"].regime_check(s.with_(eta_v=Fraction(1, 10), eta_kq=Fraction(1, 10)), 400).holds


def test_delta_threshold_against_finite_differences():
    """eta_delta = 2 / max H, H = lambda^2 D/(N K (D-K)) (r_dd - r_ad^2/r_aa) at alpha*(delta), by finite
    differences of the generated row loss (independent of the symbolic maximisation)."""
    from verify.derive.reduced import case_of
    from verify.derive.stability import thresholds_at
    from verify.engines.reduced import reduced_functions
    from lemmas._common import regime
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
    from lemmas._common import regime
    from lemmas.loss_monotone import at_eta
    c = REGISTRY["loss-monotone"]
    b = regime("sts", 8, 2)
    assert c.regime_check(at_eta(b, Fraction(3)), 2000).holds            # below eta_c = 4: monotone
    out = c.regime_check(at_eta(b, Fraction(6)), 2000)                    # above eta_alpha = 4: increases
    assert out.holds and out.data["first_increase"] is not None
    neg = REGISTRY["neg-loss-monotone-any-eta"].regime_check(at_eta(b, Fraction(6)), 2000)
    assert not neg.holds


def test_rates_exponents_against_closed_forms(results):
    ev = results["theorem-3.1-rates"].evidence
    fits = next(e for e in ev if e["route"].startswith("T-exponents"))["fits"]
    for q, p in (("s_err", -0.5), ("w_err", -0.5), ("loss", -1.0)):
        assert abs(fits[q]["last_decade"] - p) < 0.02
    Dsweep = next(e for e in ev if e["route"].startswith("D-exponents"))
    xs = np.array(Dsweep["sweep"], float)
    # s_err ~ sqrt(N (D-K) / (2 eta T)) / ||V*||, K = 2, N = 1: exponent of sqrt(D - 2) over the sweep
    expected = np.polyfit(np.log(xs), np.log(np.sqrt(xs - 2)), 1)[0]
    assert Dsweep["exponents"]["s_err"]["fitted"] == pytest.approx(expected, abs=0.02)
    expected_w = np.polyfit(np.log(xs), np.log((xs - 2) / np.sqrt(xs)), 1)[0]
    assert Dsweep["exponents"]["w_err"]["fitted"] == pytest.approx(expected_w, abs=0.02)


def test_tstar_exponent_is_linear(results):
    fit = next(e for e in results["theorem-3.1-tstar"].evidence if e["route"].startswith("log-log fit"))
    assert 0.9 < fit["exponent"] < 1.2 and fit["uncertainty"] < 0.2


def test_ood_formula_and_monte_carlo(results, monkeypatch):
    from lemmas import theorem_3_2_ood as ood
    assert ood.prove_formula()[0]
    mc = [e for e in results["theorem-3.2-ood"].evidence if e["kind"] == "monte-carlo"]
    assert len(mc) == 4 and all(e["holds"] for e in mc)
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


def test_negative_control_replay_reproduces_the_counterexample():
    """The replay command of neg-alpha-le-1, run through the CLI, shows alpha > 1."""
    import json
    from click.testing import CliRunner
    from verify.cli import main
    from lemmas._common import regime
    out = REGISTRY["neg-alpha-le-1"].regime_check(regime("cnn", 8, 2, M=2, d=3, eta="1/10"), 500)
    assert not out.holds
    args = shlex.split(out.replay)[2:]
    res = CliRunner().invoke(main, ["run", *args])
    assert res.exit_code == 0, res.output
    final = json.loads(res.output)["final"]
    assert max(float(a) for a in final["alpha"]) > 1


def test_regime_check_reports_hypotheses():
    from lemmas._common import regime
    out = REGISTRY["lemma-C.2"].regime_check(regime("sts", 6, 0, M=1, d=2), 50)
    assert not out.holds and out.data["in_hypotheses"] is False and "K >= 1" in out.detail
    out = REGISTRY["loss-monotone"].regime_check(regime("cnn", 6, 6), 50)
    assert out.holds and out.data["in_hypotheses"] is False
    assert REGISTRY["wp-zero"].regime_check(regime("cnn", 6, 2, M=1, d=2), 10).data["in_hypotheses"] is True


def test_lemma_c2_reports_the_cubic_counterexample(results):
    """Outside the step-size hypothesis Lemma C.2 fails for sigma = x + x^3/10: the finding is reported
    (informative, with a replay), and its replay through the CLI shows alpha < 0 after the loss rose."""
    import json
    from click.testing import CliRunner
    from verify.cli import main
    rec = next(e for e in results["lemma-C.2"].evidence if "counterexample" in e["route"])
    assert rec["holds"] is None and rec["kind"] == "mpmath" and "fails" in rec["result"]
    assert rec["first_loss_increase"] < rec["first_nonpositive"]
    res = CliRunner().invoke(main, ["run", *shlex.split(rec["replay"])[2:]])
    assert res.exit_code == 0, res.output
    assert float(json.loads(res.output)["final"]["alpha"][0]) < 0
    # the same regime is outside the claim's (descent) hypotheses, so it is no counterexample to the claim
    from lemmas._common import regime
    s = regime("cnn", 1, 1, M=1, d=1, eta="1/20", vstar_norm="3", sigma="poly:0,1,0,1/10")
    assert REGISTRY["lemma-C.2"].regime_check(s, 5).data["in_hypotheses"] is False
    assert REGISTRY["lemma-C.2"].regime_check(s, 3).data["in_hypotheses"] is True   # still a descent run
