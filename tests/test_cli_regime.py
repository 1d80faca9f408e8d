"""``--regime FILE`` on ``verify run``, ``verify check ID`` and ``verify certify``: the keys are the flags' names,
the file gives what the flags give, and ``check --regime`` says which statements speak of the regime and which
proofs cover it (for every claim, the theorems included)."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest
from click.testing import CliRunner

from verify.cli import main


def write(tmp_path, obj, name="regime.json"):
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return str(p)


def invoke(args):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return res


# The README's first `verify run` example, as flags and as a regime file naming the same V.json and S.json.
V = [[1, 2, 0, 0.5], [0, 1, 1, -1]]
S = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 0, 1]]
FLAGS = ["--D", "13", "--K", "3", "--N", "5", "--M", "2", "--d", "4", "--eta", "0.07"]
REGIME = {"D": 13, "K": 3, "N": 5, "M": 2, "d": 4, "eta": 0.07, "vstar": "V.json", "supports": "S.json"}


def test_a_regime_file_gives_what_the_flags_give(tmp_path):
    (tmp_path / "V.json").write_text(json.dumps(V))
    (tmp_path / "S.json").write_text(json.dumps(S))
    tail = ["--steps", "40", "--json", "--quiet", "--dps", "40"]
    by_flags = json.loads(invoke(["run", *FLAGS, "--vstar", str(tmp_path / "V.json"), "--supports",
                                  str(tmp_path / "S.json"), *tail]).stdout)
    by_file = json.loads(invoke(["run", "--regime", write(tmp_path, REGIME), *tail]).stdout)
    assert by_file["final"] == by_flags["final"]
    assert by_file["config"]["eta_v"] == "7/100"                          # 0.07 read exactly, as the flag reads it
    # "steps" in the file stands for --steps; both at once is an error
    by_steps = json.loads(invoke(["run", "--regime", write(tmp_path, REGIME | {"steps": 40}), "--json", "--quiet",
                                  "--dps", "40"]).stdout)
    assert by_steps["final"] == by_flags["final"]


@pytest.mark.parametrize("content, args, phrase", [
    ({"D": 4, "K": 2, "preset": "sts", "vstar_norm": "2"}, [], "did you mean vstar-norm?"),
    ({"D": 4, "K": 2, "preset": "sts", "eta_kq": "1/5"}, [], "did you mean eta-kq?"),
    ({"D": 4, "K": 2, "preset": "sts", "freeze-wp": "yes"}, [], "must be true or false"),
    ({"D": 4, "K": 2, "preset": "stz"}, [], "must be one of cnn, gcn, sts, gslp"),
    ({"D": 4, "K": 2, "preset": "sts"}, ["--K", "3"], "give it once"),
    ({"D": 4, "K": 2, "preset": "sts", "steps": 5}, ["--steps", "7"], "give it once"),
    ({"D": 4, "K": 2, "preset": "sts", "eta": "-1"}, [], "eta = -1 (in --regime"),
    ({"K": 2, "preset": "sts"}, [], "--D"),
])
def test_bad_regime_files_for_run_are_one_line(tmp_path, content, args, phrase):
    argv = ["run", "--regime", write(tmp_path, content), *args] + ([] if "--steps" in args else ["--steps", "3"])
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 2 and res.output.count("\n") == 1 and phrase in res.output, res.output
    assert "Traceback" not in res.output


def test_certify_takes_a_regime_file_and_refuses_steps(tmp_path):
    """K = D: the certificate is exact (a geometric decay), quick; the same from flags and from the file."""
    flags = ["--D", "4", "--K", "4", "--preset", "cnn", "--eta", "1/4", "--vstar-norm", "2", "--at", "10", "--json"]
    a = json.loads(invoke(["certify", *flags, "--quiet"]).stdout)
    regime = {"D": 4, "K": 4, "preset": "cnn", "eta": "1/4", "vstar-norm": "2"}
    b = json.loads(invoke(["certify", "--regime", write(tmp_path, regime), "--at", "10", "--json", "--quiet"]).stdout)
    assert a["bounds"] == b["bounds"] and a["status"] == b["status"]
    res = CliRunner().invoke(main, ["certify", "--regime", write(tmp_path, regime | {"steps": 9})])
    assert res.exit_code == 2 and '"steps"' in res.output and "--at" in res.output


def _lemma_c2_at(tmp_path, eta: str, preset="cnn") -> dict:
    f = write(tmp_path, {"D": 8, "K": 2, "preset": preset, "eta": eta, "vstar-norm": "1", "steps": 100})
    return json.loads(invoke(["check", "lemma-C.2", "--regime", f, "--json", "--quiet"]).stdout)


@pytest.mark.slow
def test_check_regime_says_whether_the_proof_covers_the_regime(tmp_path, claims_from_the_session):
    """cnn, D = 8, K = 2: N = 4, so x = eta_V c_L v N = 4 eta (by hand) and min(K, D - K) = 2, 2K = 4. At
    eta = 3/4, x = 3: inside Lemma C.2's large-step statement (2 < x < 4) and outside the small-step one, whose
    induction assumes x <= min(K, D - K); the large-step statement (0 < K < D) has no exact proof (its induction does
    not close; the proof at K = D is the k-equals-d statement's, which does not speak of K = 2 < D), so no proof
    covers the regime. At eta = 1/5, x = 0.8 and the small-step induction covers it."""
    from jsonschema import validate
    from verify.cli.check import REGIME_SCHEMA, load_schema
    out = _lemma_c2_at(tmp_path, "3/4")
    validate(out, load_schema(REGIME_SCHEMA))
    assert Fraction(out["regime"]["eta_v"]) * out["regime"]["N"] == 3
    st = {s["id"]: s for s in out["statements"]}
    small, large = st["lemma-C.2-small-step"], st["lemma-C.2-large-step"]
    assert out["holds"] is True and out["in_hypotheses"] is True                # the property holds here ...
    assert large["admits"] is True and large["proved_here"] is False            # ... but no proof covers it
    assert small["admits"] is False and any("min(K, D - K)" in u for u in small["unmet"])
    assert "no proof covers it" in large["coverage"] and "it has no exact proof" in large["coverage"]
    assert st["lemma-C.2-k-equals-d"]["admits"] is False
    assert any(r["kind"] in ("symbolic", "smt") and not r["covers"] and any("min(K, D - K)" in u for u in r["unmet"])
               for r in small["routes"])
    small = {s["id"]: s for s in _lemma_c2_at(tmp_path, "1/5")["statements"]}["lemma-C.2-small-step"]
    assert small["admits"] is True and small["proved_here"] is True and small["coverage"].startswith("proved here")
    text = invoke(["check", "lemma-C.2", "--regime", write(tmp_path, {"D": 8, "K": 2, "preset": "cnn", "eta": "3/4",
                                                                      "steps": 50}), "--quiet"]).stdout
    assert "lemma-C.2-large-step [claim, supported]: the regime is inside its scope; no proof covers it: it has no " \
           "exact proof" in text


@pytest.mark.slow
def test_check_regime_works_for_the_theorems(tmp_path, claims_from_the_session):
    """Theorem 3.1 has no per-regime property: nothing is run in the regime, and every statement says whether
    its scope admits the regime; sigma = erf is outside every one of them (they assume sigma = identity)."""
    f = write(tmp_path, {"D": 8, "K": 2, "preset": "sts", "eta": "1/10", "steps": 100})
    out = json.loads(invoke(["check", "theorem-3.1", "--regime", f, "--json", "--quiet"]).stdout)
    assert out["status"] == "no per-regime check" and out["holds"] is None
    ids = {s["id"] for s in out["statements"]}
    assert {"theorem-3.1-upper", "theorem-3.1-lower", "theorem-3.1-lower-T", "theorem-3.1-tstar"} <= ids
    assert all(s["admits"] for s in out["statements"])
    f = write(tmp_path, {"D": 8, "K": 2, "preset": "sts", "eta": "1/10", "sigma": "erf", "steps": 100})
    out = json.loads(invoke(["check", "theorem-3.1", "--regime", f, "--json", "--quiet"]).stdout)
    assert not any(s["admits"] for s in out["statements"]) and out["in_hypotheses"] is False
    assert all(s["coverage"].startswith("outside the statement") for s in out["statements"])


def test_arb_certifies_a_per_regime_check_where_the_claim_offers_one(tmp_path):
    """A claim whose check takes ``bits`` is run in Arb balls by ``--arb BITS``; one whose check does not is
    refused, naming --arb. The toy check's certified alpha(1) ball must contain eta c_L v N / D (closed form)."""
    from lemmas import CLAIMS
    from verify.checks import Check, Claimed, Evaluation, RegimeOutcome
    from verify.engines.arb import iterate_certified
    from verify.evidence import Scope, record

    class Toy(Check):
        title = "toy: alpha_1(1) = eta c_L v N / D, certified"
        source = "a test"
        hypotheses = ("zero-init",)
        statements = (Claimed("toy-arb", "alpha(1) > 0", "claim", ("zero-init",), Scope(dims="all", sigma=("identity",),
                                                                                     conventions="all", horizon="all")),)

        def check(self, setting, steps, bits=None):
            ball = iterate_certified(setting, 1, bits or 64, [1]).final.alpha[0]
            exact = setting.eta_v * setting.loss_scale * setting.law.var * setting.N / setting.D
            return RegimeOutcome(bool(ball.contains(float(exact)) and ball.lower() > 0), f"alpha(1) in {ball}",
                                 "verify run", kind="arb")

        def evaluate(self, profile):
            scope = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all", assumes=("eta-small",))
            return Evaluation({"toy-arb": [record("toy proof", "symbolic", scope, "ok", True)]})
    CLAIMS.load()
    CLAIMS.register("toy-arb")(Toy)
    try:
        f = write(tmp_path, {"D": 8, "K": 2, "preset": "cnn", "eta": "1/8", "steps": 5})
        out = json.loads(invoke(["check", "toy-arb", "--regime", f, "--arb", "128", "--json", "--quiet"]).stdout)
        assert out["holds"] is True and out["kind"] == "arb" and out["arb_bits"] == 128
        assert out["statements"][0]["proved_here"] is True                     # eta N = 1/2 <= 1 (by hand)
    finally:
        CLAIMS.checks.pop("toy-arb")
    res = CliRunner().invoke(main, ["check", "wp-zero", "--regime", f, "--arb", "128"])
    assert res.exit_code == 2 and "--arb 128" in res.output and "wp-zero" in res.output
    res = CliRunner().invoke(main, ["check", "wp-zero", "--arb", "128"])
    assert res.exit_code == 2 and "--regime" in res.output
