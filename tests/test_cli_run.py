"""The `verify run` contract other tools rely on."""
import json
from decimal import Decimal
from fractions import Fraction

import pytest
from click.testing import CliRunner

from verify.cli import main

ARGS = ["run", "--D", "13", "--K", "3", "--N", "5", "--M", "2", "--d", "4", "--eta", "0.07", "--steps", "200",
        "--engine", "reduced", "--dps", "50", "--json"]


@pytest.fixture()
def files(tmp_path):
    v = tmp_path / "V.json"
    v.write_text("[[1, 2, 0, 0.5], [0, 1, 1, -1]]")
    s = tmp_path / "S.json"
    s.write_text("[[0,1,2],[3,4,5],[6,7,8],[9,10,11],[12,0,1]]")
    return ["--vstar", str(v), "--supports", str(s)]


def _run(args):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _sig_digits(x: str) -> int:
    t = Decimal(x).as_tuple()
    return len(t.digits)


def test_run_json_contract(files):
    out = _run(ARGS + files)
    assert set(out) == {"config", "final"}
    f = out["final"]
    for key in ("step", "loss", "excess_loss", "s_err", "w_err", "wp_norm", "alpha", "support_mass"):
        assert key in f
    assert f["step"] == 200 and len(f["alpha"]) == 2 and len(f["support_mass"]) == 5
    for key in ("loss", "excess_loss", "s_err", "w_err"):
        assert _sig_digits(f[key]) >= 50
    cfg = out["config"]
    assert cfg["eta_v"] == "7/100" and cfg["dps"] == 50 and cfg["engine"] == "reduced" and cfg["sigma"] == "identity"


def test_decimal_eta_is_the_rational_it_spells(files):
    a = _run(ARGS + files)
    b = _run([x if x != "0.07" else "7/100" for x in ARGS] + files)
    assert a["final"] == b["final"]
    c = _run([x if x != "0.07" else str(Fraction(0.07)) for x in ARGS] + files)   # the binary double nearest 0.07
    assert c["final"]["loss"] != a["final"]["loss"]


def test_full_and_reduced_agree_through_the_cli(files):
    a = _run(ARGS[:-5] + ["--steps", "30", "--engine", "reduced", "--dps", "40", "--json"] + files)
    b = _run(ARGS[:-5] + ["--steps", "30", "--engine", "full", "--dps", "40", "--json"] + files)
    assert Decimal(a["final"]["loss"]) - Decimal(b["final"]["loss"]) == 0 or \
        abs(Decimal(a["final"]["loss"]) - Decimal(b["final"]["loss"])) < Decimal("1e-35")


def test_bad_input_is_one_line_error(files):
    res = CliRunner().invoke(main, ["run", "--D", "4", "--K", "5", "--preset", "sts", "--json"])
    assert res.exit_code == 2 and "invalid --K 5" in res.output and "Traceback" not in res.output


def test_derive_asymptotics_json_parses():
    import sympy as sp
    res = CliRunner().invoke(main, ["derive", "--asymptotics", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    syms = {n: sp.Symbol(n, positive=True) for n in ("D", "K", "N", "M", "eta", "T", "vnorm")}
    for key in ("loss", "s_err", "w_err"):
        expr = sp.sympify(data[key], locals=syms)
        assert expr.free_symbols <= set(syms.values())


def test_every_run_is_cross_checked_at_higher_precision():
    base = ["run", "--D", "6", "--K", "2", "--preset", "cnn", "--d", "2", "--eta", "1/10", "--steps", "150",
            "--vstar-norm", "1", "--arithmetic", "float64", "--json"]
    red = _run(base)["config"]["precision_check"]
    assert red["agree"] and red["reference"].startswith("arb")
    full = _run(base + ["--engine", "full"])["config"]["precision_check"]
    assert full["agree"] and full["reference"].startswith("arb") and "exact reduced" in full["scope"]
    rnd = _run(base + ["--engine", "full", "--init", "random", "--init-scale", "0.1"])["config"]["precision_check"]
    assert rnd["agree"] and rnd["reference"].startswith("mpmath")
    skipped = _run(base + ["--no-cross-check"])["config"]["precision_check"]
    assert "not cross-checked" in skipped


def test_float64_prints_only_the_digits_it_carries():
    out = _run(["run", "--D", "6", "--K", "2", "--preset", "cnn", "--eta", "1/10", "--steps", "20000",
                "--arithmetic", "float64", "--json", "--no-cross-check"])
    assert out["config"]["dps"] <= 7 and _sig_digits(out["final"]["loss"]) <= out["config"]["dps"]
    res = CliRunner().invoke(main, ["run", "--D", "6", "--K", "2", "--preset", "cnn", "--steps", "100000000",
                                    "--arithmetic", "float64", "--json"])
    assert res.exit_code == 2 and "steps = 100000000" in res.output
