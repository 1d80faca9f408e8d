"""Fuzzing: strategies (valid regimes build, stay inside each claim's hypotheses and reach the edges of the
setting; invalid ones raise InvalidParameter), the runner (seeds, replayed vs new counterexamples, discards by
reason, verdicts decided from evidence), the database's location outside git, the negative controls refuted
within the ci budget, the true invariants surviving it, and every genuine counterexample pinned as an @example."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from random import Random

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, example, find, given, settings
from hypothesis import strategies as st

import lemmas
from verify.cli import main
from verify.engines import iterate
from verify.errors import InvalidParameter
from verify.fuzz import (BREAKS, DEFAULT_DB, MAX_DISCARDED, PROFILE_BUDGET, REPLAY_FACTOR,
                         CounterexampleStore, Regime, fuzz, fuzz_part, invalid_regimes, strategy_for, valid_regimes)
from verify.fuzz.strategies import FULL_MAX_STEPS, LAWS, MAX_STEPS
from verify.model import make_setting
from verify.model.hypotheses import hypothesis, within
from verify.model.sigmas import parse_sigma, sigma_examples

REGISTRY = lemmas.CLAIMS
KEYS = {"claim", "verdict", "evidence", "examples", "falsified", "replayed", "counterexample", "replay", "seed",
        "discarded", "database"}
ROOT = Path(__file__).resolve().parents[1]


def R(steps, **kw) -> Regime:
    return Regime(tuple(kw.items()), steps)


def x_of(s) -> Fraction:
    """eta c_L v N, the quantity the step-size conditions are stated in."""
    return s.eta_v * s.loss_scale * s.law.var * s.N


# Minimal counterexamples found by `verify fuzz` (Hypothesis-shrunk).
NEG_ALPHA = R(15, D=2, K=1, preset="gslp", M=1, d=1, eta="5/20", vstar_norm="1", seed=0, sigma="identity",
              law="gaussian")
NEG_ALPHA_POLY = R(21, D=2, K=1, preset="gslp", M=1, d=1, eta="2/20", vstar_norm="1", seed=0,
                   sigma="poly:0,1,0,1/10", law="gaussian")
NEG_ALPHA_ERF = R(49, D=2, K=1, preset="sts", M=1, d=1, eta="3/20", vstar_norm="1/2", seed=0, sigma="erf",
                  law="gaussian")
NEG_ALPHA_RELU = R(74, D=2, K=1, preset="sts", M=1, d=1, eta="1/10", vstar_norm="1", seed=0, sigma="relu",
                   law="gaussian", wp_trainable=False)
NEG_LOSS = R(1, D=1, K=1, preset="cnn", M=1, d=1, eta="41/20", vstar_norm="1", seed=0, sigma="identity",
             law="gaussian")
NEG_LOSS_2 = R(8, D=2, K=1, preset="cnn", M=1, d=1, eta="28/20", vstar_norm="1", seed=0, sigma="identity",
               law="gaussian")
NEG_LOSS_3 = R(6, D=2, K=1, preset="cnn", M=1, d=1, eta="29/20", vstar_norm="1", seed=0, sigma="identity",
               law="gaussian")
NEG_LOSS_EDGE = R(1, D=1, K=1, preset="gslp", M=1, d=1, eta="101/50", vstar_norm="1", seed=0)   # 1% above 2K/N
# lemma-C.2 with the cubic sigma: GD at eta = 1/20 (below the identity threshold eta_V c_L v N <= 1)
# diverges, and alpha turns negative at t = 5: a genuine counterexample to the claim as first declared.
# The claims now assume, for sigma != identity, that the run is a descent run (the loss rises at t = 4
# here), so these regimes must be reported as outside the hypotheses, never as holding.
EA_POLY = R(3, D=1, K=1, preset="cnn", M=1, d=1, eta="2/20", vstar_norm="3", seed=0, sigma="poly:0,1,0,1/10",
            law="gaussian")
C2_POLY = R(5, D=1, K=1, preset="cnn", M=1, d=1, eta="1/20", vstar_norm="3", seed=0, sigma="poly:0,1,0,1/10",
            law="gaussian")
# lemma-C.2 with sinusoidal P (P^T P != lambda I), found by the widened fuzzer: eta c_L v N = 3.96 is below the
# declared W_X-block threshold 2K/(c_L v N) = 4, yet alpha(3) < 0. That threshold assumes two-valued columns of
# S (||S||^2 <= N/K), which needs P^T P = lambda I; here S concentrates and 1 - eta c_L v ||S||^2 < -1.
C2_SINUSOIDAL = R(3, D=4, K=2, preset="sts", M=1, d=1, sigma="identity", p_kind="sinusoidal", p_structure="general",
                  vstar_norm="2", seed=0, eta="99/25")
# Regimes too short to decide: loss-monotone's "eventually increases" half (eta = 41/20 > eta_alpha = 2) and
# neg-rate-exponential's local slope. Both must be reported outside the hypotheses.
LOSS_MONO_SHORT = R(1, D=2, K=1, preset="sts", M=1, d=1, eta="41/20", vstar_norm="1", seed=0)
NEG_RATE_SHORT = R(1, D=2, K=1, preset="sts", M=1, d=1, eta="1/20", vstar_norm="1", seed=0)
# neg-rate-exponential: the pin "slope over [4, 8]" (D = 2, gslp, T = 8) was an artefact of a one-octave check
# at a horizon far too short to show the asymptotic law , and is dropped. In its place a
# counterexample at a long horizon, where the decay is algebraic over several octaves (checked below by the
# engine's own reduced recursion, another code path).
NEG_RATE_LONG = R(20000, D=8, K=2, preset="sts", M=1, d=1, eta="1/10", vstar_norm="1", seed=0)


# ----- strategies ---------------------------------------------------------------------------
@settings(max_examples=60)
@given(valid_regimes())
def test_valid_regimes_build(regime):
    s = regime.setting()
    json.dumps(regime.as_dict())                                      # saved as is in the counterexample database
    assert all(isinstance(dict(regime.kwargs)[k], int) for k in ("D", "K", "M", "d"))
    assert 1 <= s.D <= 48 and 0 <= s.K <= s.D and 1 <= regime.steps <= MAX_STEPS
    if regime.steps > FULL_MAX_STEPS:   # long horizons only where the reduced recursion applies, below 2K/(c_L v N)
        assert s.reducible()[0] and 0 < x_of(s) < 2 * s.K


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


@pytest.mark.parametrize("cid", sorted(c.id for c in REGISTRY.values() if c.per_regime))
def test_strategy_stays_inside_the_claims_hypotheses(cid):
    claim = REGISTRY[cid]

    @settings(max_examples=40, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy_for(claim))
    def inside(regime):
        ok, why = within(regime.setting(), claim.hypotheses)
        assert ok, why

    inside()


PER_REGIME_HYPOTHESES = sorted({h.id for c in REGISTRY.values() if c.per_regime for h in c.hypotheses
                                if h.holds is not None})


@pytest.mark.parametrize("hid", PER_REGIME_HYPOTHESES)
def test_regimes_drawn_inside_a_hypothesis_satisfy_it(hid):
    """Every setting-level hypothesis of every per-regime claim is a strategy: what valid_regimes draws inside it
    satisfies its predicate (the strategy reads its Restriction, never its id)."""
    h = hypothesis(hid)

    @settings(max_examples=30, phases=[Phase.generate], suppress_health_check=list(HealthCheck), database=None)
    @given(valid_regimes(hypotheses=(h,)))
    def inside(regime):
        assert h.holds(regime.setting()), (hid, regime.as_dict())

    inside()


def test_eta_stable_is_one_definition_for_the_fuzzer_and_the_claims():
    """eta-stable is x = eta_V c_L v N < 2K, with no exception at K = 0 (once 2 max(K, 1) in the fuzzer): drawn
    inside it, K >= 1 and x < 2K, by hand; and the strategy reaches just below 2K."""
    @settings(max_examples=60, phases=[Phase.generate], suppress_health_check=list(HealthCheck), database=None)
    @given(valid_regimes(hypotheses=("eta-stable",), long_horizon=False))
    def inside(regime):
        s = regime.setting()
        assert s.K >= 1 and x_of(s) < 2 * s.K

    inside()
    k0 = make_setting(D=4, K=0, preset="sts", eta="1/2")            # x = 1/2 < 2 max(K, 1), but K = 0
    assert not hypothesis("eta-stable").holds(k0)
    r = reach(lambda r, s: x_of(s) == Fraction(999, 1000) * 2 * s.K, valid_regimes(hypotheses=("eta-stable",)))
    assert x_of(r.setting()) < 2 * r.setting().K


def test_the_step_size_parts_of_lemma_c2_are_drawn_up_to_their_edges():
    """Both ranges of Lemma C.2's step size are strategies whose edges are reached: x = min(K, D - K) exactly in the
    small-step range, and just above it in the large-step range (x = 1001/1000 of it)."""
    edge = lambda s: Fraction(s.K if s.K == s.D else min(s.K, s.D - s.K))  # noqa: E731   (by hand)
    r = reach(lambda r, s: x_of(s) == edge(s) and s.D > s.K, valid_regimes(hypotheses=("eta-small-step",)))
    assert hypothesis("eta-small-step").holds(r.setting())
    r = reach(lambda r, s: x_of(s) == Fraction(1001, 1000) * edge(s), valid_regimes(hypotheses=("eta-large-step",)))
    assert hypothesis("eta-large-step").holds(r.setting())


def test_the_fuzzer_names_no_hypothesis():
    """verify/fuzz reads Restrictions; no hypothesis id is written there (one fact, one place). Ids that are also
    option values the strategy draws ("identity" is a sigma and a kind of P, "gaussian" a law) do not count."""
    from verify.fuzz.strategies import P_KINDS
    from verify.model.hypotheses import HYPOTHESES
    src = "\n".join(p.read_text() for p in (ROOT / "verify" / "fuzz").glob("*.py"))
    values = set(sigma_examples()) | set(LAWS) | set(P_KINDS)
    named = [h for h in HYPOTHESES if h not in values and (f'"{h}"' in src or f"'{h}'" in src)]
    assert named == [] and "HONOURED" not in src and "conditions=" not in src


FIND = settings(max_examples=5000, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))


def reach(predicate, strategy=None):
    """A regime of the strategy meeting ``predicate`` (hypothesis.find, seeded)."""
    return find(strategy if strategy is not None else valid_regimes(), lambda r: predicate(r, r.setting()),
                settings=FIND, random=Random(0))


# (what must be reachable, predicate on (regime, setting))
REACH = [
    ("D >= 32", lambda r, s: s.D >= 32),
    ("steps >= 10^4", lambda r, s: r.steps >= 10**4),
    ("eta above 2K/(c_L v N)", lambda r, s: x_of(s) > 2 * s.K > 0),
    ("eta 1% above 2K/(c_L v N)", lambda r, s: s.K > 0 and x_of(s) == Fraction(101, 100) * 2 * s.K),
    ("K = 0", lambda r, s: s.K == 0),
    ("K = D", lambda r, s: s.K == s.D > 1),
    ("mean loss", lambda r, s: s.loss == "mean"),
    ("law mean != 0", lambda r, s: s.law.mean != 0),
    ("law variance != 1", lambda r, s: s.law.var != 1),
    ("p_lambda != 1", lambda r, s: s.p_lambda != 1),
    ("permutation P", lambda r, s: s.p_kind == "permutation"),
    ("sinusoidal P", lambda r, s: s.p_kind == "sinusoidal" and s.p_structure == "general"),
    ("eta_KQ != eta_V", lambda r, s: s.eta_kq != s.eta_v),
    ("random init", lambda r, s: s.init == "random" and s.init_scale > 0),
    ("noise", lambda r, s: s.noise_sd > 0),
    ("W_P frozen, odd sigma", lambda r, s: not s.wp_trainable and s.sigma.odd),
    ("even sigma, W_P trainable", lambda r, s: s.wp_trainable and not s.sigma.odd),
    ("||V*|| = 10", lambda r, s: s.vstar_norm2() == 100),
    ("M = 3, d = 4", lambda r, s: s.M == 3 and s.d == 4),
]
REACH += [(f"sigma {sig}", lambda r, s, spec=parse_sigma(sig).spec(): s.sigma.spec() == spec) for sig in sigma_examples()]
REACH += [(f"law {law}", lambda r, s, law=law: s.law.spec() == law) for law in LAWS]


@pytest.mark.parametrize("what,pred", REACH, ids=[w for w, _ in REACH])
def test_widened_strategy_reaches(what, pred):
    r = reach(pred)
    assert pred(r, r.setting())


@pytest.mark.slow
def test_boundaries_of_the_step_size_hypotheses_are_hit():
    # eta c_L v N = 1 exactly (allowed by "eta_V c_L v N <= 1") and just below 2K (strict "eta-stable")
    r = reach(lambda r, s: x_of(s) == 1, valid_regimes(hypotheses=("eta-small",)))
    assert x_of(r.setting()) == 1
    r = reach(lambda r, s: x_of(s) == Fraction(999, 1000) * 2 * s.K,
              valid_regimes(hypotheses=("eta-stable", "K>0")))
    assert x_of(r.setting()) < 2 * r.setting().K
    # and a long horizon just below the W_X-block threshold
    r = reach(lambda r, s: r.steps >= 10**4 and x_of(s) == Fraction(99, 100) * 2 * s.K,
              valid_regimes(hypotheses=("eta-stable", "K>0")))
    assert r.setting().reducible()[0]


@pytest.mark.slow
@settings(max_examples=8, phases=[Phase.explicit, Phase.generate])
@example(NEG_LOSS)
@example(R(2, D=3, K=1, preset="sts", init="random", init_scale="1/10", p_kind="sinusoidal", p_structure="general",
           law_mean="1/2", eta_kq="1/20", noise_sd="1/10", loss="mean", p_lambda="4"))
@given(valid_regimes(max_steps=3, sigmas=("identity", "erf")))
def test_run_command_replays(regime):
    args = regime.run_command().split()[2:]   # drop "verify run"
    # (--no-cross-check: with label noise the float64 excess loss L - L_opt cancels digits, and verify run's
    # float64-vs-mpmath cross-check tolerance does not allow for it; that is verify run's policy, not the replay)
    res = CliRunner().invoke(main, ["run", *[a.strip("'") for a in args], "--arithmetic", "float64",
                                    "--no-cross-check"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["final"]["step"] == regime.steps


# ----- the runner on local claims (no catalogue needed) ---------------------------------------------
@dataclass
class _Outcome:
    holds: bool | None
    detail: str
    replay: str
    data: dict = field(default_factory=dict)


class AlphaAtMostOne:
    """alpha(t) <= 1 on the reduced float64 run: false (alpha overshoots 1, then relaxes)."""

    id = "local-alpha-le-1"
    hypotheses = ("zero-init", "centred", "0<K<D", "identity")

    def regime_check(self, setting, steps):
        tr = iterate(setting, steps, "reduced", "float64", checkpoints=range(steps + 1))
        a = max(float(x) for r in tr.records for x in r.alpha)
        return _Outcome(a <= 1, f"max alpha {a}", "local")


SMALL = valid_regimes(max_d=6, max_steps=200, sigmas=("identity",),
                      hypotheses=("zero-init", "centred", "0<K<D", "orthogonal-P"))


def test_new_counterexample_is_saved_and_replayed_apart(tmp_path):
    first = fuzz(AlphaAtMostOne(), examples=100, seed=3, database=tmp_path, strategy=SMALL)
    assert KEYS <= set(first) and first["falsified"] and first["replayed"] is False
    assert first["verdict"] == "refuted" and first["database"]["saved"]
    cx = Regime.from_dict(first["counterexample"])
    assert hypothesis("identity").holds(cx.setting()) and 0 < cx.setting().K < cx.setting().D
    # the shrunk regime is a counterexample when checked independently, at T and at 10 T (the replay check)
    assert not AlphaAtMostOne().regime_check(cx.setting(), cx.steps).holds
    assert first["replay_check"]["horizon"] == REPLAY_FACTOR * cx.steps and first["replay_check"]["holds"] is False
    ref = next(e for e in first["evidence"] if e["holds"] is False)
    assert ref["replay_check"]["holds"] is False and not ref["replayed"]
    files = list((tmp_path / "local-alpha-le-1").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["regime"] == first["counterexample"]
    # a search that cannot find it (one step with eta c_L v N <= 1: alpha(1) = eta c_L v N / D <= 1) reports it
    # replayed from the database
    one_step = valid_regimes(max_d=6, max_steps=1, sigmas=("identity",), long_horizon=False,
                             hypotheses=("zero-init", "centred", "0<K<D", "orthogonal-P", "eta-small"))
    again = fuzz(AlphaAtMostOne(), examples=20, seed=4, database=tmp_path, strategy=one_step)
    assert again["falsified"] and again["replayed"] is True and again["verdict"] == "refuted"
    assert again["counterexample"] == first["counterexample"]
    assert again["database"] | {"path": None} == {"path": None, "loaded": 1, "still_failing": 1, "cleared": 0,
                                                   "saved": False, "save_error": None}
    kinds = {(e["holds"], e.get("replayed")) for e in again["evidence"] if e["role"] == "test"}
    assert kinds == {(True, None), (False, True)}       # the search itself found nothing; the database did
    # the same search without the database finds nothing
    alone = fuzz(AlphaAtMostOne(), examples=20, seed=4, database=None, strategy=one_step)
    assert not alone["falsified"] and alone["replayed"] is None and alone["verdict"] == "supported"


def test_a_stored_regime_that_no_longer_fails_is_cleared(tmp_path):
    store = CounterexampleStore(tmp_path, "local-alpha-le-1")
    holds = R(1, D=4, K=1, preset="sts", eta="1/10")
    store.save(holds.as_dict())
    out = fuzz(AlphaAtMostOne(), examples=5, seed=0, database=tmp_path,
               strategy=st.just(R(1, D=3, K=1, preset="sts", eta="1/10")))
    assert out["database"]["cleared"] == 1 and store.load() == [] and not out["falsified"]


class Recorder:
    """Holds everywhere; remembers the regimes it was asked about."""

    id = "local-recorder"
    hypotheses = ()

    def __init__(self):
        self.seen = []

    def regime_check(self, setting, steps):
        self.seen.append((setting.config(), steps))
        return _Outcome(True, "ok", "local")


@pytest.mark.slow
def test_seed_is_drawn_recorded_and_replays_the_run():
    first = fuzz(AlphaAtMostOne(), examples=40, database=None, strategy=SMALL)
    assert first["seed_drawn"] and isinstance(first["seed"], int) and f"--seed {first['seed']}" in first["rerun"]
    again = fuzz(AlphaAtMostOne(), examples=40, seed=first["seed"], database=None, strategy=SMALL)
    assert not again["seed_drawn"]
    same = ("verdict", "counterexample", "examples", "generated", "discarded", "first_discarded", "shrink_calls")
    assert {k: again[k] for k in same} == {k: first[k] for k in same}
    # the same seed draws the same regimes in the same order; another seed draws others
    a, b, c = Recorder(), Recorder(), Recorder()
    strat = valid_regimes(max_d=6, long_horizon=False, max_steps=20)
    fuzz(a, examples=20, seed=first["seed"], database=None, strategy=strat)
    fuzz(b, examples=20, seed=first["seed"], database=None, strategy=strat)
    fuzz(c, examples=20, seed=first["seed"] + 1, database=None, strategy=strat)
    assert a.seen == b.seen and len(a.seen) == 20 and c.seen != a.seen


class Picky:
    """A claim that holds where it decides, but discards by every reason according to the horizon T:
    T % 5 == 0 undecided (holds None), == 1 a float error, == 2 outside a run-level hypothesis;
    its declared hypothesis (sigma = identity) discards the other sigmas before the check."""

    id = "local-picky"
    hypotheses = ("identity",)

    def __init__(self, keep=(3, 4)):
        self.keep = keep

    def regime_check(self, setting, steps):
        r = steps % 5
        if r in self.keep:
            return _Outcome(True, "ok", "local")
        if r == 0:
            return _Outcome(None, "NaN", "local")
        if r == 1:
            raise FloatingPointError("overflow")
        return _Outcome(True, "too short", "local", {"in_hypotheses": False})


# The filter keeps few draws (D = 1 of D <= 4), so Hypothesis's own filter gives up on some test cases (three
# rejections in a row): "hypothesis_filter" counts them beside its overruns, whichever regimes the seed draws.
PICKY = valid_regimes(max_d=4, max_steps=50, sigmas=("identity", "erf"), long_horizon=False).filter(
    lambda r: dict(r.kwargs)["D"] == 1)


@pytest.mark.slow
def test_discards_are_counted_by_reason_and_mostly_discarded_is_not_supported():
    out = fuzz(Picky(), examples=30, seed=1, database=None, strategy=PICKY)
    d = out["discarded"]
    assert all(d[k] > 0 for k in ("outside_hypotheses", "float_errors", "undecided", "hypothesis_filter")), d
    assert out["generated"] == out["examples"] + out["discarded_total"]
    assert out["discarded_fraction"] > MAX_DISCARDED
    assert out["verdict"] == "inconclusive" and not out["falsified"]
    (rec,) = out["evidence"]
    assert rec["role"] == "failed" and rec["holds"] is None and rec["threshold"]["value"] == MAX_DISCARDED
    assert set(out["first_discarded"]) >= {"outside_hypotheses", "float_errors", "undecided"}
    # every example discarded (Hypothesis gives up: Unsatisfiable): inconclusive, not an error
    none = fuzz(Picky(keep=()), examples=30, seed=1, database=None, strategy=PICKY)
    assert none["examples"] == 0 and none["discarded_total"] == none["generated"] > 0
    assert none["verdict"] == "inconclusive" and none["evidence"][0]["role"] == "failed"
    # the same claim discarding little is supported, with a scope stating what was sampled
    ok = fuzz(Picky(keep=(0, 1, 2, 3, 4)), examples=30, seed=1, database=None,
              strategy=valid_regimes(max_d=4, max_steps=50, sigmas=("identity",), long_horizon=False))
    assert ok["verdict"] == "supported" and ok["discarded_fraction"] <= MAX_DISCARDED
    (rec,) = ok["evidence"]
    assert rec["role"] == "test" and rec["holds"] is True and rec["kind"] == "float64"
    assert rec["scope"]["label"].startswith("checked at dimensions {D 1..") and rec["scope"]["horizon"] <= 50
    assert "(30 sampled regimes)" in rec["scope"]["label"]


class ShortLived:
    """Fails at horizons T <= 3 only: a failure that does not replay at 10 T."""

    id = "local-short-lived"
    hypotheses = ()

    def regime_check(self, setting, steps):
        return _Outcome(steps > 3, f"T = {steps}", "local")


def test_a_failure_that_does_not_replay_does_not_refute():
    out = fuzz(ShortLived(), examples=40, seed=0, database=None,
               strategy=valid_regimes(max_d=3, max_steps=20, long_horizon=False))
    assert not out["falsified"] and out["discarded"]["not_replayed"] > 0
    assert out["verdict"] == "inconclusive" and "did not replay" in out["decision"]["reason"]
    nr = out["first_discarded"]["not_replayed"]
    assert nr["replay_check"]["holds"] is True
    assert nr["replay_check"]["horizon"] == REPLAY_FACTOR * nr["regime"]["steps"]


class Crashy:
    id = "local-crashy"
    hypotheses = ()

    def regime_check(self, setting, steps):
        if setting.D > 2:
            raise KeyError("boom")
        return _Outcome(True, "ok", "local")


def test_a_crashing_check_is_reported_not_a_verdict():
    out = fuzz(Crashy(), examples=30, seed=0, database=None, strategy=valid_regimes(max_d=6, long_horizon=False))
    assert out["crash"] and "KeyError" in out["crash"]["detail"] and not out["falsified"]
    assert out["crash"]["regime"]["setting"]["D"] == 3               # shrunk
    assert out["verdict"] == "inconclusive"


class FailsThenCrashes:
    """Fails at D >= 4 (at every horizon: it replays), crashes at D = 3: shrinking a counterexample meets a crash."""

    id = "local-fails-then-crashes"
    hypotheses = ()

    def __init__(self):
        self.seen = []          # every D the search checked

    def regime_check(self, setting, steps):
        self.seen.append(setting.D)
        if setting.D == 3:
            raise KeyError("boom")
        return _Outcome(setting.D < 4, f"D = {setting.D}", "local")


def test_a_crash_met_while_shrinking_keeps_the_counterexample():
    # the counterexample is what refutes; a crash met on the way is reported beside it, never in its place. A search
    # may also meet neither (its draws all at D = 2, as Hypothesis's small-first generation can make them: seen once
    # in a clean clone's CI run), and then it says so: no refutation, no crash.
    both = 0
    for seed in range(16):
        claim = FailsThenCrashes()
        out = fuzz(claim, examples=30, seed=seed, database=None, strategy=valid_regimes(max_d=6, long_horizon=False))
        if out["falsified"]:
            assert out["verdict"] == "refuted", (seed, out["decision"])
            assert out["counterexample"]["setting"]["D"] == 4               # shrunk to the smallest failing D
            both += out["crash"] is not None and out["crash"]["regime"]["setting"]["D"] == 3
        elif out["crash"] is not None:  # the search met the crash first: reported, and no verdict on the claim
            assert out["crash"]["regime"]["setting"]["D"] == 3 and out["verdict"] == "inconclusive"
        else:                   # it met neither: then it checked no D >= 3 at all
            assert max(claim.seen, default=0) < 3, (seed, claim.seen)
            assert out["verdict"] != "refuted" and out["counterexample"] is None, seed
    assert both            # the case arose: a counterexample and a crash in one search, both reported


def test_invalid_arguments():
    with pytest.raises(InvalidParameter, match="claim"):
        fuzz("no-such-claim")
    with pytest.raises(InvalidParameter, match="examples"):
        fuzz(AlphaAtMostOne(), examples=0)
    with pytest.raises(InvalidParameter, match="seed"):
        fuzz(AlphaAtMostOne(), seed=-1)
    with pytest.raises(InvalidParameter, match="profile"):
        fuzz_part("wp-zero", "huge")


# ----- the database lives outside git ------------------------------------------------------------
def test_default_database_is_not_tracked(monkeypatch):
    from verify.run.cache import ENV_CACHE_DIR, cache_dir
    assert DEFAULT_DB == cache_dir("fuzz-db")                  # the session's cache folder (tests/conftest.py)
    monkeypatch.delenv(ENV_CACHE_DIR)
    assert cache_dir("fuzz-db") == ROOT / ".cache" / "verify" / "fuzz-db"     # outside the tests
    assert not (ROOT / "fuzz-db").exists() or not any((ROOT / "fuzz-db").iterdir())
    if shutil.which("git") and (ROOT / ".git").exists():
        probe = cache_dir("fuzz-db") / "claim" / "x.json"
        assert subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", str(probe)]).returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_unseeded_fuzz_leaves_a_fresh_checkout_clean(tmp_path):
    # a copy of the tracked files of this tree, committed: then `verify fuzz` (unseeded, default database)
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src, dst = ROOT / rel, tmp_path / rel
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(git + cmd, check=True)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop("VERIFY_CACHE_DIR")                                 # the default database of that checkout
    res = subprocess.run([sys.executable, "-c", "from verify.cli import main; main()", "fuzz", "--claim",
                          "neg-loss-monotone-any-eta", "--examples", "200"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "counterexample, new, found by this search" in res.stdout and "seed" in res.stdout
    assert list((tmp_path / ".cache" / "verify" / "fuzz-db" / "neg-loss-monotone-any-eta").glob("*.json"))
    status = subprocess.run(git + ["status", "--porcelain"], capture_output=True, text=True, check=True).stdout
    assert status == ""


# ----- the catalogue ------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("cid", ["neg-alpha-le-1", "neg-loss-monotone-any-eta", "neg-rate-exponential"])
def test_negative_controls_refuted_within_the_ci_budget(cid, tmp_path):
    out = fuzz_part(cid, "ci", database=tmp_path)
    assert KEYS <= set(out) and out["verdict"] == "refuted" and out["falsified"] and out["replayed"] is False
    assert out["seed"] == PROFILE_BUDGET["ci"]["seed"] and out["database"]["path"] is None
    assert not any(tmp_path.iterdir())                      # the ci budget uses no database
    cx = Regime.from_dict(out["counterexample"])
    for T in (cx.steps, REPLAY_FACTOR * cx.steps):          # fails, and fails again at 10x the horizon
        o = REGISTRY[cid].regime_check(cx.setting(), T)
        assert o.holds is False and o.data["in_hypotheses"] is True


@pytest.mark.slow
@pytest.mark.parametrize("cid,strategy", [
    ("wp-zero", None), ("two-level-attention", None), ("early-alignment", None), ("loss-monotone", None),
    # lemma-C.2 inside its hypotheses, P^T P = lambda I among them (outside it the fuzzer refutes it: pinned below)
    ("lemma-C.2", None),
    # the cubic only, with eta c_L v N <= 1: the descent runs that remain must all keep alpha > 0. (Over the
    # whole of eta < 2K/(c_L v N) about half of the cubic's runs leave the descent regime, so the discarded
    # fraction sat on the 50% line and its side depended on Hypothesis' path; here it is about 30%.)
    ("lemma-C.2", valid_regimes(sigmas=("poly:0,1,0,1/10",),
                                hypotheses=REGISTRY["lemma-C.2"].hypotheses + ("eta-small",))),
    ("invalid-parameters", None),
])
def test_true_invariants_survive(cid, strategy):
    """At the ci budget every per-regime claim that is not a control survives, and its search drew inside its
    hypotheses: at most MAX_DISCARDED of the generated regimes were discarded."""
    out = fuzz(cid, examples=PROFILE_BUDGET["ci"]["examples"], seed=0, database=None, strategy=strategy)
    assert not out["falsified"] and out["crash"] is None, out["detail"]
    assert out["verdict"] == "supported" and out["discarded_fraction"] <= MAX_DISCARDED


@settings(phases=[Phase.explicit])
@example(NEG_ALPHA)
@example(NEG_ALPHA_POLY)
@example(NEG_ALPHA_ERF)
@example(NEG_ALPHA_RELU)
@given(valid_regimes())
def test_pinned_neg_alpha_le_1(regime):
    assert not REGISTRY["neg-alpha-le-1"].regime_check(regime.setting(), regime.steps).holds


@settings(phases=[Phase.explicit])
@example(NEG_LOSS)
@example(NEG_LOSS_2)
@example(NEG_LOSS_3)
@example(NEG_LOSS_EDGE)
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
@example(C2_SINUSOIDAL)
@given(valid_regimes())
def test_pinned_lemma_c2_sinusoidal_p_counterexample(regime):
    s = regime.setting()
    assert x_of(s) < 2 * s.K and hypothesis("identity").holds(s)  # inside the declared step-size hypothesis
    # independently of the claim: the full engine in mpmath (no symmetry assumed) has alpha(3) < 0
    tr = iterate(s, regime.steps, "full", "mpmath", checkpoints=range(regime.steps + 1))
    assert float(tr.final.alpha[0]) < 0 < min(float(r.alpha[0]) for r in tr.records[1:-1])
    # the claim must never report it as holding inside its hypotheses: it fails there, or (its hypotheses
    # require P^T P = lambda I) calls it outside
    out = REGISTRY["lemma-C.2"].regime_check(s, regime.steps)
    assert not (out.holds and out.data["in_hypotheses"])


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
    assert out.data["in_hypotheses"] is False
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
    assert out.data["in_hypotheses"] is False        # T = 1 decides nothing
    # the long-horizon counterexample: over the octaves [2500, 5000], [5000, 10^4], [10^4, 2 10^4] the engine's
    # reduced recursion has log-log slopes within 0.1 of -1 (algebraic, not exponential: e^{-rT} would have
    # local slope -rT, steeper every octave)
    s = NEG_RATE_LONG.setting()
    cps = [2500, 5000, 10000, 20000]
    L = [float(x) for x in iterate(s, NEG_RATE_LONG.steps, "reduced", "float64", checkpoints=cps).series("excess_loss")]
    slopes = [math.log(L[i + 1] / L[i]) / math.log(2) for i in range(3)]
    assert all(abs(x + 1) < 0.1 for x in slopes), slopes
    for T in (NEG_RATE_LONG.steps, REPLAY_FACTOR * NEG_RATE_LONG.steps):
        out = REGISTRY["neg-rate-exponential"].regime_check(s, T)
        assert out.holds is False and out.data["in_hypotheses"] is True


# ----- command line -------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_fuzz_json_and_text(tmp_path):
    res = CliRunner().invoke(main, ["fuzz", "--claim", "neg-loss-monotone-any-eta", "--seed", "0", "--no-db",
                                    "--examples", str(PROFILE_BUDGET["ci"]["examples"]), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert KEYS <= set(out) and out["falsified"] and out["verdict"] == "refuted" and out["seed"] == 0
    # a drawn seed: 200 examples (the search stops at the first failure; about 1 in 10 draws of 20 finds none)
    res = CliRunner().invoke(main, ["fuzz", "--claim", "neg-loss-monotone-any-eta", "--examples", "200",
                                    "--db", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "REFUTED" in res.output and "counterexample, new, found by this search" in res.output
    assert "(drawn)" in res.output
    assert "discarded" in res.output and str(tmp_path) in res.output
    res = CliRunner().invoke(main, ["fuzz", "--claim", "neg-loss-monotone-any-eta", "--examples", "20", "--seed", "1",
                                    "--db", str(tmp_path)])
    assert res.exit_code == 0 and "1 replayed, 1 still failing" in res.output


@pytest.mark.parametrize("args,name", [
    (["--db", "x", "--no-db"], "db"), (["--seed", "-1"], "seed"), (["--examples", "0"], "examples"),
    (["--claim", "nope"], "claim")])
def test_cli_fuzz_invalid_input_is_one_line(args, name):
    res = CliRunner().invoke(main, ["fuzz", "--no-db" if "--db" not in args else "--json", *args])
    # one line naming the flag as typed (click's own range errors name it too)
    assert res.exit_code == 2 and f"--{name}" in res.output and "Traceback" not in res.output
    assert res.output.strip().count("\n") == 0


def test_cli_fuzz_db_must_be_a_directory(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    res = CliRunner().invoke(main, ["fuzz", "--claim", "wp-zero", "--db", str(f)])
    assert res.exit_code == 2 and "invalid --db" in res.output


@pytest.mark.slow
def test_fuzz_progress_counts_every_example_and_every_shrink_step():
    """The progress callback sees each example Hypothesis hands to the claim (the searched ones, then the shrink
    steps), so ``verify fuzz`` counts examples, not claims; counted against the search's own tallies."""
    ticks = []
    # seed 0 at the ci budget finds the control's counterexample (test_cli_fuzz_json_and_text), so it shrinks
    res = fuzz("neg-loss-monotone-any-eta", PROFILE_BUDGET["ci"]["examples"], 0, None,
               progress=lambda judged, shrinking: ticks.append((judged, shrinking)))
    searched = [j for j, s in ticks if not s]
    assert searched == list(range(1, len(searched) + 1))                 # one tick per example, in order
    assert len(searched) == res["generated"] - res["discarded"]["hypothesis_filter"]
    assert sum(1 for _, s in ticks if s) == res["shrink_calls"]
    assert res["falsified"] and res["shrink_calls"] > 0 and not ticks[0][1]
