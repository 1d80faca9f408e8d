"""The probes honour a run's convention (verify.model.convention): ``verify probe NAME`` with the convention flags
and the probe part of ``verify all`` build every regime in it, record it, replay it, and judge the findings in
it; a keyword a regime cannot take is named on every finding with why; the reference run is unchanged."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from click.testing import CliRunner

from verify.cli import main
from verify.engines import iterate
from verify.model import make_setting
from verify.model.convention import REFERENCE, Convention, using
from verify.probes import PROBES
from verify.probes.support.convention import noting, regime_setting
from verify.probes.support.probe_parts import probe_part
from verify.run.parts import REGISTRY


def _probe_json(*args) -> dict:
    res = CliRunner().invoke(main, ["probe", *args, "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_d_eq_k_under_the_mean_loss_is_the_summed_run_at_eta_over_M_N():
    """docs/setting.md: the mean loss is c_L = 1/(M N) times the summed one, so GD on it at step eta is GD on the
    summed loss at eta / (M N). In d-eq-k's regime sts D = K = 6 (M = 2, N = 1, eta = 1/2, v = 1) that is eta = 1/4
    summed, x = eta c_L v N = 1/4 and the geometric rate -log(1 - x/D) = -log(23/24) (hand values)."""
    out = _probe_json("d-eq-k", "--loss", "mean")
    cfg = next(r["config"] for r in out["regimes"] if r["label"] == "sts D=K=6")
    assert (cfg["loss"], cfg["M"], cfg["N"], cfg["eta_v"]) == ("mean", 2, 1, "1/2")
    num = out["numbers"]["sts D=K=6"]
    assert math.isclose(num["predicted_rate_w_err"], -math.log(Fraction(23, 24)), rel_tol=1e-12)
    assert math.isclose(num["fitted_rate_w_err"], -math.log(Fraction(23, 24)), rel_tol=1e-6)
    # the trajectory is the summed-loss one at eta / (M N), run here in the reference convention
    data = out["data"]["sts D=K=6"]
    summed = make_setting(D=6, K=6, preset="sts", M=2, d=2, eta=Fraction(1, 4), vstar_norm="1")
    ref = iterate(summed, data["step"][-1], "reduced", "float64", checkpoints=data["step"])
    assert [r.step for r in ref.records] == data["step"]
    for a, r in zip(data["w_err"], ref.records):
        assert abs(a - float(r.w_err)) <= 1e-12 * max(1.0, float(r.w_err))
    # the divergent example keeps x = 9 > 2D: eta = 9 / (c_L v N) = 9 M N (M = 1, N = 1 in sts D = K = 4: eta = 9)
    div = out["numbers"]["divergent"]
    assert Fraction(div["x"]) == 9 and div["w_err"] > 800


def test_the_record_replay_and_hypotheses_carry_the_convention():
    """Under --loss mean --p-lambda 4: the result records the convention (label and keywords), the replay
    command has its flags, no finding assumes the summed loss or lambda = 1, and the regimes were built in it."""
    out = _probe_json("k-zero", "--loss", "mean", "--p-lambda", "4")
    conv = out["convention"]
    assert conv["run_convention"] == {"loss": "mean", "p_lambda": "4"} == conv["honoured"]
    assert conv["run_convention_label"] == "loss=mean, p_lambda=4" and conv["not_honoured"] == {}
    assert out["replay"].startswith("verify probe k-zero --profile ci --loss mean --p-lambda 4 --json")
    assert all((r["config"]["loss"], r["config"]["p_lambda"]) == ("mean", "4") for r in out["regimes"])
    for st in out["statements"]:
        assert not {"sum-loss", "unit-lambda"} & set(st["hypothesis_ids"])
        assert any("loss = mean" in h for h in st["hypotheses"]) and any("4" in h and "lambda" in h
                                                                          for h in st["hypotheses"])
        assert st["convention_not_honoured"] == []


def test_the_probe_part_takes_the_runs_convention():
    """`verify all` passes its convention (make_setting keywords) to the probe part, which builds the regimes in it."""
    spec = REGISTRY["probe"]
    assert spec.takes_convention and spec.func is probe_part
    out = spec.run("k-zero", "ci", {"loss": "mean"})
    assert out["convention"]["run_convention"] == {"loss": "mean"} and "convention_note" not in out
    assert all(r["config"]["loss"] == "mean" for r in out["regimes"])


def test_a_keyword_the_reduced_recursion_cannot_take_is_left_and_named():
    """A random initialisation leaves the reduced recursion's hypotheses (Setting.reducible): a reduced regime
    keeps zero init (and the rest of the convention), a full-matrix regime takes it."""
    conv = Convention.from_options({"init": "random", "init_scale": "1/10", "loss": "mean"})
    with using(conv), noting() as notes:
        red = regime_setting(reduced=True, D=4, K=2, preset="sts")
        full = regime_setting(D=4, K=2, preset="sts")
    assert (red.init, red.loss) == ("zero", "mean") and (full.init, full.loss) == ("random", "mean")
    assert set(notes) == {"init", "init_scale"} and "random" in notes["init"] and "reduced recursion" in notes["init"]
    assert notes["init_scale"] == notes["init"]          # the scale comes with the random start it scales


def test_a_regime_every_keyword_fits_is_built_once_as_the_convention_gives_it(monkeypatch):
    """When every keyword of the convention fits, regime_setting returns the setting it built to test them: one
    make_setting call, equal to verify.model.convention.setting's (the convention applied, explicit keywords
    winning)."""
    import verify.model.convention as model_convention
    from verify.model.convention import setting
    from verify.probes.support import convention as mod
    conv = Convention.from_options({"loss": "mean"})
    calls = []
    real = mod.make_setting
    for where in (mod, model_convention):           # every route to make_setting a regime could take
        monkeypatch.setattr(where, "make_setting", lambda **kw: calls.append(kw) or real(**kw))
    with using(conv), noting() as notes:
        got = regime_setting(reduced=True, D=4, K=2, preset="sts", eta="1/8")
        built = len(calls)
        want = setting(D=4, K=2, preset="sts", eta="1/8")
    assert built == 1 and not notes
    assert got == want and got.loss == "mean" and got.eta_v == Fraction(1, 8)


def test_every_finding_names_the_keyword_it_could_not_take():
    """k-zero runs the reduced recursion: under --init random it keeps zero init, says so on every finding, and
    judges its findings with the zero-init hypothesis (the convention its regimes ran in)."""
    out = _probe_json("k-zero", "--init", "random", "--init-scale", "1/10", "--loss", "mean")
    assert set(out["convention"]["not_honoured"]) == {"init", "init_scale"}
    assert out["convention"]["honoured"] == {"loss": "mean"}
    for st in out["statements"]:
        assert len(st["convention_not_honoured"]) == 2 and st["convention_not_honoured"][0].startswith(
            "--init random not honoured: the probe iterates the exact reduced recursion")
        assert "zero-init" in st["hypothesis_ids"]
    assert all(r["config"]["init"] == "zero" and r["config"]["loss"] == "mean" for r in out["regimes"])


@pytest.mark.slow
def test_the_reference_run_is_unchanged_by_an_explicit_reference_convention():
    """The probe run with no convention and with the reference given explicitly agree key by key; a convention
    that sets loss = sum (the reference's value) differs only in what it records about the convention."""
    a = PROBES["k-zero"].run("ci").as_dict()
    b = PROBES["k-zero"].run("ci", REFERENCE).as_dict()
    c = PROBES["k-zero"].run("ci", Convention.from_options({"loss": "sum"})).as_dict()
    assert a == b
    assert a["convention"]["run_convention_label"] == "reference" and a["convention"]["run_convention"] == {}
    assert a["replay"].startswith("verify probe k-zero --profile ci --json")
    assert set(a) == set(c) and all(a[k] == c[k] for k in a if k not in ("convention", "replay"))
    assert [s["hypothesis_ids"] for s in a["statements"]] == [s["hypothesis_ids"] for s in c["statements"]]


def test_a_regime_compared_with_the_leading_terms_keeps_their_hypotheses():
    """The leading terms (verify.derive.asymptotics) are derived for the summed loss and lambda = 1: a regime
    compared with them keeps those, takes the rest (a Rademacher law), and names the two it left."""
    from verify.probes.support.interior import LEADING
    conv = Convention.from_options({"loss": "mean", "p_lambda": "4", "law": "rademacher"})
    with using(conv), noting() as notes:
        s = regime_setting(needs=LEADING, D=8, K=2, preset="sts")
    assert (s.loss, s.p_lambda, s.law.spec()) == ("sum", 1, "rademacher")
    assert set(notes) == {"loss", "p_lambda"}
    assert "summed loss" in notes["loss"] and "lambda = 1" in notes["p_lambda"]


@pytest.mark.slow
def test_nonzero_init_under_the_mean_loss_certifies_its_contraction_with_c_L():
    """Under --loss mean (c_L = 1/(M N) = 1/2 in nonzero-init's regime, M = 2, N = 1): the off-span rate bound is
    1 - eta c_L v N/D = 1 - (1/2)(1/2)/4 = 15/16 (hand value), the one-step law with c_L holds, and the certified
    records test inside the findings' hypotheses (loss = mean), so the finite-horizon finding stays certified."""
    out = PROBES["nonzero-init"].run("ci", Convention.from_options({"loss": "mean"})).as_dict()
    cfg = out["regimes"][0]["config"]
    assert (cfg["loss"], cfg["M"], cfg["N"], cfg["D"], cfg["eta_v"]) == ("mean", 2, 1, 4, "1/2")
    assert {v["rate_bound"] for v in out["numbers"]["certified"].values()} == {"15/16"}
    assert out["numbers"]["one_step_law_max_rel_dev"] < 1e-9      # 7 to 17% off if c_L were left out
    sts = {st["id"]: st for st in out["statements"]}
    law = [e for e in sts["nonzero-init.realign"]["evidence"] if "one-step law" in e["route"]]
    assert law and all(e["holds"] is True and e["role"] == "test" for e in law)
    fin = sts["nonzero-init.finite-horizon"]
    assert fin["verdict"] == "certified" and "sum-loss" not in fin["hypothesis_ids"]
    assert all(e["role"] == "test" for e in fin["evidence"] if e["kind"] == "arb")
