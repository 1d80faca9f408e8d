"""Fuzzing: strategies (valid regimes build, invalid ones raise InvalidParameter), the runner (shrinking,
example database, JSON), the negative controls falsified within the default budget, the true invariants
surviving it, and every counterexample found so far pinned as an @example."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import Phase, example, given, settings

from verify.cli import main
from verify.engines import iterate
from verify.errors import InvalidParameter
from verify.fuzz import BREAKS, DEFAULT_EXAMPLES, Regime, fuzz, invalid_regimes, valid_regimes
from verify.model import make_setting

lemmas = pytest.importorskip("lemmas")
REGISTRY = lemmas.REGISTRY
KEYS = {"claim", "examples", "falsified", "counterexample", "replay"}


def R(steps, **kw) -> Regime:
    return Regime(tuple(kw.items()), steps)


# Minimal counterexamples found by `verify fuzz` (Hypothesis-shrunk; also stored in fuzz-db/).
NEG_ALPHA = R(15, D=2, K=1, preset="gslp", M=1, d=1, eta="5/20", vstar_norm="1", seed=0, sigma="identity",
              law="gaussian")
NEG_ALPHA_POLY = R(21, D=2, K=1, preset="gslp", M=1, d=1, eta="2/20", vstar_norm="1", seed=0,
                   sigma="poly:0,1,0,1/10", law="gaussian")
NEG_ALPHA_ERF = R(49, D=2, K=1, preset="sts", M=1, d=1, eta="3/20", vstar_norm="1/2", seed=0, sigma="erf",
                  law="gaussian")
NEG_LOSS = R(1, D=1, K=1, preset="cnn", M=1, d=1, eta="41/20", vstar_norm="1", seed=0, sigma="identity",
             law="gaussian")
NEG_LOSS_2 = R(8, D=2, K=1, preset="cnn", M=1, d=1, eta="28/20", vstar_norm="1", seed=0, sigma="identity",
               law="gaussian")
NEG_LOSS_3 = R(6, D=2, K=1, preset="cnn", M=1, d=1, eta="29/20", vstar_norm="1", seed=0, sigma="identity",
               law="gaussian")
# lemma-C.2 with the cubic sigma: GD at eta = 1/20 (below the identity threshold eta_V c_L v N <= 1)
# diverges, and alpha turns negative at t = 5: a genuine counterexample to the claim as first declared.
# The claims now assume, for sigma != identity, that the run is a descent run (the loss rises at t = 4
# here), so these regimes must be reported as outside the hypotheses, never as holding.
EA_POLY = R(3, D=1, K=1, preset="cnn", M=1, d=1, eta="2/20", vstar_norm="3", seed=0, sigma="poly:0,1,0,1/10",
            law="gaussian")
C2_POLY = R(5, D=1, K=1, preset="cnn", M=1, d=1, eta="1/20", vstar_norm="3", seed=0, sigma="poly:0,1,0,1/10",
            law="gaussian")
# Regimes too short to decide: loss-monotone's "eventually increases" half (eta = 41/20 > eta_alpha = 2) and
# neg-rate-exponential's local slope (which crashed at T = 1). Both must be reported outside the hypotheses.
def R1(steps, D, K, preset, eta) -> Regime:
    """A one-row identity regime with ||V*|| = 1 (the strategy's keyword order)."""
    return R(steps, D=D, K=K, preset=preset, M=1, d=1, eta=eta, vstar_norm="1", seed=0, sigma="identity",
             law="gaussian")


LOSS_MONO_SHORT = R1(1, 2, 1, "sts", "41/20")
NEG_RATE_SHORT = R1(1, 2, 1, "sts", "1/20")
# neg-rate-exponential's minimal counterexample: local log-log slope over [4, 8] is about -0.13, not < -3.
NEG_RATE = R1(8, 2, 1, "gslp", "1/20")


# ----- strategies ---------------------------------------------------------------------------
@settings(max_examples=60)
@given(valid_regimes())
def test_valid_regimes_build(regime):
    s = regime.setting()
    assert 1 <= s.D <= 6 and 0 <= s.K <= s.D and 1 <= regime.steps <= 60


@settings(max_examples=80)
@given(invalid_regimes())
def test_invalid_regimes_raise_invalid_parameter(regime):
    with pytest.raises(InvalidParameter):
        regime.setting()


@pytest.mark.parametrize("name,bad,rule", BREAKS, ids=[f"{b[0]}={b[1]}" for b in BREAKS])
def test_every_break_raises_invalid_parameter(name, bad, rule):
    kw = dict(D=3, K=1, preset="sts", eta="1/2", vstar_norm="1")
    if name == "K":
        kw["K"] = 4
    elif name == "N":
        kw["N"] = 2
    elif name == "sigma_relu_wp":
        kw["sigma"] = "relu"
    elif name == "law_non_gaussian_sigma":
        kw |= {"sigma": "erf", "law": "gumbel"}
    else:
        kw[name] = bad
    with pytest.raises(InvalidParameter) as exc:
        make_setting(**kw)
    assert "invalid" in str(exc.value)


def test_invalid_input_at_the_cli_is_one_line():
    res = CliRunner().invoke(main, ["run", "--D", "3", "--K", "1", "--preset", "sts", "--eta", "0"])
    assert res.exit_code == 2 and "invalid --eta 0" in res.output and "Traceback" not in res.output


@settings(max_examples=8, phases=[Phase.explicit, Phase.generate])
@example(NEG_LOSS)
@given(valid_regimes(max_steps=3, sigmas=("identity", "erf")))   # the cubic overflows float64 at large eta
def test_run_command_replays(regime):
    args = regime.run_command().split()[2:]   # drop "verify run"
    res = CliRunner().invoke(main, ["run", *[a.strip("'") for a in args], "--arithmetic", "float64"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["final"]["step"] == regime.steps


# ----- the runner on a local predicate (no catalogue needed) -----------------------------------------
@dataclass
class _Outcome:
    holds: bool
    detail: str
    replay: str
    data: dict = field(default_factory=dict)


class AlphaAtMostOne:
    """alpha(t) <= 1 on the reduced float64 run: false (alpha overshoots 1, then relaxes)."""

    id = "local-alpha-le-1"
    hypotheses = ("zero initialisation", "centred entries", "0 < K < D", "sigma = identity")

    def regime_check(self, setting, steps):
        tr = iterate(setting, steps, "reduced", "float64", checkpoints=range(steps + 1))
        a = max(float(x) for r in tr.records for x in r.alpha)
        return _Outcome(a <= 1, f"max alpha {a}", "local")


def test_runner_shrinks_and_persists(tmp_path):
    first = fuzz(AlphaAtMostOne(), examples=200, seed=3, database=tmp_path)
    assert KEYS <= set(first) and first["falsified"]
    cx = first["counterexample"]["setting"]
    assert cx["sigma"] == "identity" and 0 < cx["K"] < cx["D"]        # inside the declared hypotheses
    # the shrunk regime is a counterexample when replayed independently
    reg = Regime(tuple(cx.items()), first["counterexample"]["steps"])
    assert not AlphaAtMostOne().regime_check(reg.setting(), reg.steps).holds
    # unseeded runs save to the database; the next run replays the saved example first
    fuzz(AlphaAtMostOne(), examples=200, database=tmp_path)
    assert any((tmp_path / "local-alpha-le-1").rglob("*"))
    again = fuzz(AlphaAtMostOne(), examples=200, database=tmp_path)
    assert again["falsified"]


def test_unknown_claim_and_budget_are_invalid():
    with pytest.raises(InvalidParameter, match="claim"):
        fuzz("no-such-claim")
    with pytest.raises(InvalidParameter, match="examples"):
        fuzz(AlphaAtMostOne(), examples=0)


# ----- the catalogue ------------------------------------------------------------------------------
@pytest.mark.parametrize("cid", ["neg-alpha-le-1", "neg-loss-monotone-any-eta", "neg-rate-exponential"])
def test_negative_controls_falsified_within_default_budget(cid):
    out = fuzz(cid, examples=DEFAULT_EXAMPLES, seed=0, database=None)
    assert KEYS <= set(out) and out["falsified"] and out["replay"].startswith("verify run")
    cx = out["counterexample"]
    reg = Regime(tuple(cx["setting"].items()), cx["steps"])
    assert not REGISTRY[cid].regime_check(reg.setting(), reg.steps).holds


@settings(phases=[Phase.explicit])
@example(NEG_ALPHA)
@example(NEG_ALPHA_POLY)
@example(NEG_ALPHA_ERF)
@given(valid_regimes())
def test_pinned_neg_alpha_le_1(regime):
    assert not REGISTRY["neg-alpha-le-1"].regime_check(regime.setting(), regime.steps).holds


@settings(phases=[Phase.explicit])
@example(NEG_LOSS)
@example(NEG_LOSS_2)
@example(NEG_LOSS_3)
@given(valid_regimes())
def test_pinned_neg_loss_monotone_any_eta(regime):
    assert not REGISTRY["neg-loss-monotone-any-eta"].regime_check(regime.setting(), regime.steps).holds


@settings(phases=[Phase.explicit])
@example(C2_POLY)
@given(valid_regimes())
def test_pinned_lemma_c2_poly_counterexample(regime):
    s = regime.setting()
    # independently of the claim: the full engine in mpmath has alpha(5) < 0, after the loss rose
    tr = iterate(s, regime.steps, "full", "mpmath", checkpoints=range(regime.steps + 1))
    assert float(tr.final.alpha[0]) < 0
    L = [float(x) for x in tr.series("loss")]
    assert any(b > a for a, b in zip(L, L[1:]))  # not a descent run
    out = REGISTRY["lemma-C.2"].regime_check(s, regime.steps)
    assert not out.holds and out.data["in_hypotheses"] is False and "descent" in out.detail


@settings(phases=[Phase.explicit])
@example(EA_POLY)
@given(valid_regimes())
def test_pinned_early_alignment_poly_counterexample(regime):
    s = regime.setting()
    tr = iterate(s, regime.steps, "full", "mpmath", checkpoints=[regime.steps])
    assert float(tr.final.cos_wv) < 0            # W_X points away from V*: GD diverged with the cubic
    out = REGISTRY["early-alignment"].regime_check(s, regime.steps)
    assert not out.holds and out.data["in_hypotheses"] is False and "descent" in out.detail


def test_pinned_loss_monotone_short_horizon_decides_nothing():
    s = LOSS_MONO_SHORT.setting()
    out = REGISTRY["loss-monotone"].regime_check(s, LOSS_MONO_SHORT.steps)
    assert out.data["in_hypotheses"] is False and "too short" in out.detail
    # at a long horizon the increase shows (W_X block unstable once ||S||^2 > 2/eta); the engine's own
    # reduced float64 run (another code path) finds it at about the same step: the onset of a slowly
    # growing oscillation is sensitive to rounding, so the two agree to a few percent, not exactly
    T = 4000
    L = [float(x) for x in iterate(s, T, "reduced", "float64", checkpoints=range(T + 1)).series("excess_loss")]
    first = next(t for t in range(1, T + 1) if L[t] > L[t - 1] * (1 + 1e-12) + 1e-13 * L[0])
    out = REGISTRY["loss-monotone"].regime_check(s, T)
    assert out.holds and out.data["in_hypotheses"] is True
    assert out.data["first_increase"] == pytest.approx(first, rel=0.1)


def test_pinned_neg_rate_exponential():
    out = REGISTRY["neg-rate-exponential"].regime_check(NEG_RATE_SHORT.setting(), NEG_RATE_SHORT.steps)
    assert out.data["in_hypotheses"] is False and "too short" in out.detail
    # the minimal counterexample: the local slope over [4, 8] from the full engine in mpmath is far above -3
    s = NEG_RATE.setting()
    tr = iterate(s, NEG_RATE.steps, "full", "mpmath", checkpoints=[4, 8])
    L4, L8 = (float(x) for x in tr.series("excess_loss"))
    slope = np.log(L8 / L4) / np.log(2)
    assert -3 < slope < 0
    out = REGISTRY["neg-rate-exponential"].regime_check(s, NEG_RATE.steps)
    assert not out.holds and out.data["in_hypotheses"] is True
    assert out.data["slope"] == pytest.approx(slope, rel=1e-9)


@pytest.mark.parametrize("cid,strategy", [
    ("wp-zero", None), ("two-level-attention", None),
    # every sigma, the cubic included: its divergent runs (pinned above) are outside the descent hypothesis
    ("early-alignment", None), ("lemma-C.2", None), ("loss-monotone", None),
    # the cubic only: the descent runs that remain must all keep alpha > 0
    ("lemma-C.2", valid_regimes(sigmas=("poly:0,1,0,1/10",))),
])
def test_true_invariants_survive(cid, strategy):
    out = fuzz(cid, examples=DEFAULT_EXAMPLES, seed=0, database=None, strategy=strategy)
    assert not out["falsified"], out
    assert out["examples"] >= DEFAULT_EXAMPLES // 2   # most draws were real checks, not discarded


def test_cli_fuzz_json():
    res = CliRunner().invoke(main, ["fuzz", "--claim", "neg-loss-monotone-any-eta", "--seed", "0", "--no-db",
                                    "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert KEYS <= set(out) and out["falsified"]
    res = CliRunner().invoke(main, ["fuzz", "--claim", "invalid-parameters", "--examples", "50", "--no-db",
                                    "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["falsified"] is False
