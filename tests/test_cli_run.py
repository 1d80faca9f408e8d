"""The `verify run` contract other tools rely on."""
import json
from decimal import Decimal
from fractions import Fraction

import pytest
from click.testing import CliRunner

from verify.cli import main
from waiting import wait_for

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
    return json.loads(res.stdout)


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
    a = _run(ARGS[:-7] + ["--steps", "30", "--engine", "reduced", "--dps", "40", "--json"] + files)
    b = _run(ARGS[:-7] + ["--steps", "30", "--engine", "full", "--dps", "40", "--json"] + files)
    assert Decimal(a["final"]["loss"]) - Decimal(b["final"]["loss"]) == 0 or \
        abs(Decimal(a["final"]["loss"]) - Decimal(b["final"]["loss"])) < Decimal("1e-35")


def test_bad_input_is_one_line_error(files):
    res = CliRunner().invoke(main, ["run", "--D", "4", "--K", "5", "--preset", "sts", "--json"])
    assert res.exit_code == 2 and "invalid --K 5" in res.output and "Traceback" not in res.output


@pytest.mark.slow
def test_derive_asymptotics_json_parses():
    import sympy as sp
    res = CliRunner().invoke(main, ["derive", "--asymptotics", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    syms = {n: sp.Symbol(n, positive=True) for n in ("D", "K", "N", "M", "eta", "T", "vnorm")}
    for key in ("excess_loss", "s_err", "w_err"):
        expr = sp.sympify(data[key], locals=syms)
        assert expr.free_symbols <= set(syms.values())


@pytest.mark.slow
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
    assert res.exit_code == 2 and "--steps 100000000" in res.output


# ----- numerical trouble: one line, the step and the quantity, no RuntimeWarning --------------------

DIVERGING = ["run", "--D", "4", "--K", "2", "--preset", "sts", "--eta", "3", "--sigma", "poly:0,1,0,1/10",
             "--vstar-norm", "3", "--steps", "1000"]


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--arithmetic", "float64"], ["--arithmetic", "float64", "--engine", "full"],
                                   [], ["--arb", "128"]])
def test_numerical_trouble_is_one_line_with_step_quantity_and_advice(extra):
    res = CliRunner().invoke(main, DIVERGING + extra)
    out = res.output
    assert res.exit_code == 3, out
    assert out.startswith("Error: numerical trouble at step ") and out.count("\n") == 1, out
    assert "Traceback" not in out and "RuntimeWarning" not in out
    assert any(q in out for q in ("alpha", "W_X", "W_KQ")), out        # the quantity
    assert "try a smaller --eta (here eta = 3" in out                    # what to try, as a flag


def test_numerical_trouble_names_the_first_bad_step():
    from verify.engines import iterate
    from verify.errors import NumericalTrouble
    from verify.model import make_setting
    s = make_setting(D=4, K=2, preset="sts", eta="3", sigma="poly:0,1,0,1/10", vstar_norm="3")
    with pytest.raises(NumericalTrouble) as info:
        iterate(s, 1000, "reduced", "float64")
    # Independent: the same recursion in mpmath is finite up to the step before and beyond the float64
    # range (1.8e308) at the step named.
    bad = info.value.step
    tr = iterate(s, bad, "reduced", "mpmath", 30, checkpoints=list(range(bad + 1)))
    import mpmath
    big = [max(abs(mpmath.mpf(a)) for a in r.alpha) for r in tr.records]
    assert big[bad - 1] < 1e308 < max(big[bad], abs(mpmath.mpf(tr.records[-1].loss)))
    assert isinstance(info.value, FloatingPointError)     # callers that skip float trouble still do


@pytest.mark.slow
def test_no_runtime_warning_reaches_the_terminal():
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONWARNINGS="default")
    res = subprocess.run([sys.executable, "-c", "from verify.cli import main; main()"] + DIVERGING
                         + ["--arithmetic", "float64"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 3
    assert "RuntimeWarning" not in res.stderr and res.stderr.count("\n") == 1, res.stderr


# ----- any precision: the reference is always more precise than the run ---------------------------

@pytest.mark.parametrize("dps,steps", [(100, 200), (1000, 30)])
def test_run_at_high_dps_is_cross_checked(dps, steps):
    import mpmath
    from verify.engines import iterate
    from verify.model import make_setting
    args = ["run", "--D", "6", "--K", "2", "--preset", "cnn", "--eta", "0.07", "--steps", str(steps),
            "--dps", str(dps), "--json"]
    out = _run(args)
    pc = out["config"]["precision_check"]
    assert pc["agree"] and pc["reference"].startswith("arb")
    assert int(pc["reference"][3:]) > 3.32 * out["config"]["work_dps"]     # strictly more precise
    assert _sig_digits(out["final"]["loss"]) == dps
    # an independent run at 30 more digits agrees to the printed digits
    ref = iterate(make_setting(D=6, K=2, preset="cnn", eta="7/100"), steps, "reduced", "mpmath", dps + 30).final
    with mpmath.workdps(dps + 30):
        rel = abs(mpmath.mpf(out["final"]["loss"]) - ref.loss) / ref.loss
        assert rel < mpmath.mpf(10) ** (5 - dps)


# ----- --arb: the balls are the result, every certified digit printed ------------------------------

@pytest.mark.slow
def test_arb_prints_every_certified_digit_and_contains_the_100_digit_value():
    import mpmath
    from verify.engines import iterate
    from verify.model import make_setting
    steps = 1500
    out = _run(["run", "--D", "12", "--K", "3", "--preset", "gcn", "--eta", "0.07", "--sigma", "erf", "--M", "2",
                "--d", "2", "--steps", str(steps), "--arb", "256", "--json", "--quiet"])
    f, cfg = out["final"], out["config"]
    assert cfg["arithmetic"] == "arb256" and cfg["precision_check"]["agree"]
    # the mpmath cross-check stops at the checkpoints up to ARB_CHECK_STEPS: no full mpmath trajectory
    assert "up to step" in cfg["precision_check"]["scope"] and str(steps) not in cfg["precision_check"]["scope"]
    s = make_setting(D=12, K=3, preset="gcn", eta="7/100", sigma="erf", M=2, d=2)
    ref = iterate(s, steps, "reduced", "mpmath", 100).final
    with mpmath.workdps(120):
        for k in ("loss", "s_err", "w_err", "cos_wv", "alpha"):
            mids = f[k] if isinstance(f[k], list) else [f[k]]
            rads = f[k + "_rad"] if isinstance(f[k], list) else [f[k + "_rad"]]
            vals = getattr(ref, k) if isinstance(f[k], list) else [getattr(ref, k)]
            for m, r, v in zip(mids, rads, vals):
                assert abs(mpmath.mpf(m) - v) <= mpmath.mpf(r) + mpmath.mpf(10) ** -90, (k, m, r)
                # digits match the radius: the last printed digit's unit u has u/10 <= radius <= u
                u = Decimal(1).scaleb(Decimal(m).as_tuple().exponent)
                assert u / 10 <= Decimal(r) <= u, (k, m, r)
                assert _sig_digits(m) > 60          # every certified digit, not the 30-digit default


def test_arb_digits_are_capped_by_dps():
    out = _run(["run", "--D", "6", "--K", "2", "--preset", "cnn", "--steps", "50", "--arb", "256", "--dps", "20",
                "--json", "--quiet"])
    assert _sig_digits(out["final"]["loss"]) <= 20 and out["config"]["dps"] == 20


# ----- time estimate, engine auto, progress ---------------------------------------------------------

HUGE = ["run", "--D", "6", "--K", "2", "--preset", "cnn", "--steps", "1000000000000"]


def test_huge_steps_are_estimated_up_front_and_need_yes():
    res = CliRunner().invoke(main, HUGE + ["--estimate-only", "--json"])
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    # 10^12 steps at no more than 10^6 steps/s (reduced mpmath is ~10^4): at least 10^6 s
    assert est["estimated_seconds"] > 1e6 and ("years" in est["estimate"] or "days" in est["estimate"])
    res = CliRunner().invoke(main, HUGE)
    assert res.exit_code == 2 and res.output.count("\n") == 1
    assert "--steps 1000000000000" in res.output and "--yes" in res.output and "estimated time" in res.output


def test_a_long_run_says_its_estimate_on_stderr(monkeypatch):
    import verify.cli.run as run_mod
    monkeypatch.setattr(run_mod, "ANNOUNCE_SECONDS", -1.0)
    res = CliRunner().invoke(main, ["run", "--D", "6", "--K", "2", "--preset", "cnn", "--steps", "20", "--json"])
    assert res.exit_code == 0
    assert "estimated time" in res.stderr and "steps/s" in res.stderr
    json.loads(res.stdout)                     # stdout stays pure JSON
    res = CliRunner().invoke(main, ["run", "--D", "6", "--K", "2", "--preset", "cnn", "--steps", "20", "--quiet"])
    assert res.stderr == ""


def test_progress_follows_the_run_and_its_cross_check():
    import io
    from rich.console import Console
    from verify.cli.progress import progress
    from verify.cli.run import run_json
    from verify.model import make_setting
    s = make_setting(D=6, K=2, preset="cnn")
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=120)
    with progress("verify run", 60, console=con) as bar:
        run_json(s, 30, "auto", "mpmath", None, bar=bar)
        assert bar.progress.tasks[0].completed == 60          # 30 GD steps + 30 reference steps
    assert "ETA" in buf.getvalue()
    plain = io.StringIO()
    with progress("verify check", 10, console=Console(file=plain), interval=0.05) as bar:   # not a terminal
        assert bar.progress is None and bar.shown
        bar.advance(4, description="verify check: lemma-C.2")
        wait_for(lambda: "4/10" in plain.getvalue(), "a plain progress line after the advance")
    lines = plain.getvalue().splitlines()
    assert lines and "verify check: lemma-C.2: 4/10 (40%)" in lines[-1] and "elapsed" in lines[-1]
    assert "left" in lines[-1]                                       # an estimate of the time left
    with progress("hidden", 10, quiet=True, console=Console(file=io.StringIO())) as bar:     # --quiet: no-op
        assert not bar.shown


def test_engine_auto_is_recorded():
    out = _run(["run", "--D", "6", "--K", "2", "--preset", "cnn", "--steps", "5", "--json", "--quiet"])
    assert out["config"]["engine"] == "reduced" and out["config"]["engine_choice"].startswith("auto")
    out = _run(["run", "--D", "6", "--K", "2", "--preset", "cnn", "--steps", "5", "--engine", "reduced", "--json"])
    assert "engine_choice" not in out["config"]


def test_derive_text_has_no_python_dicts():
    res = CliRunner().invoke(main, ["derive", "--asymptotics"])
    assert res.exit_code == 0 and "{'" not in res.output and "convention:\n  sigma: identity" in res.output


# ----- user-facing summaries: tables, counts, no Python dicts, no words cut ---------------------------

def test_check_ends_with_a_verdict_table():
    import io
    from rich.console import Console
    from verify.cli.check import summary_table
    def st(sid, role, verdict, text):
        return {"id": sid, "role": role, "verdict": verdict, "text": text}
    results = [{"statements": [st("a", "claim", "proved", "first"), st("a.x", "finding", "supported", "sharper")]},
               {"statements": [st("b", "claim", "refuted", "OOD loss is [1/2, 1/2 + epsilon]")]},
               {"statements": [st("c", "claim", "proved", "third"), st("neg", "control", "refuted", "false")]}]
    buf = io.StringIO()
    Console(file=buf, width=200).print(summary_table(results))
    text = " ".join(buf.getvalue().split())          # the caption wraps at the table's width
    assert "the paper's claims: 2 proved, 1 refuted" in text and "negative controls: 1 refuted" in text
    assert "the toolkit's own findings: 1 supported" in text
    assert all(s["id"] in text for r in results for s in r["statements"])
    assert "[1/2, 1/2 + epsilon]" in text                  # rich markup would eat the brackets


def test_summaries_are_words_not_dicts():
    from verify.cli.fuzz import regime_text
    from verify.cli.progress import counts_text, duration
    assert counts_text({"proved": 3, "refuted": 1}) == "3 proved, 1 refuted"
    assert regime_text({"setting": {"D": 4, "eta": "1/2"}, "steps": 3}) == "D=4 eta=1/2 steps=3"
    assert duration(5e7) == "1.6 years" and duration(90) == "1.5 min" and duration(3) == "3 s"


def test_short_cuts_at_a_word_boundary():
    from verify.report.results import short
    text = "the attention mass on the support converges like one over T"
    for n in range(10, len(text)):
        s = short(text, n)
        assert len(s) <= n and s.endswith("…")
        assert text.startswith(s[:-1]) and text[len(s) - 1] == " ", s     # the cut is at a space
    assert short(text, 200) == text


def test_output_folders_are_checked_before_any_work(tmp_path):
    from verify.cli.options import check_writable_dir
    from verify.errors import InvalidParameter
    f = tmp_path / "file"
    f.write_text("x")
    assert check_writable_dir("--out", tmp_path / "new" / "sub") == tmp_path / "new" / "sub"
    assert not (tmp_path / "new").exists()                                 # nothing left on disk
    for bad in (f, f / "sub"):
        with pytest.raises(InvalidParameter, match="--out"):
            check_writable_dir("--out", bad)


def test_a_computation_in_phases_reports_each_phase():
    """verify certify hands its progress(phase, done, total) calls to the display, one task per phase, when
    the computation takes a progress keyword; one that does not gets nothing (the display shows time only)."""
    import io
    from rich.console import Console
    from verify.cli.progress import progress, progress_hook

    def work(setting, progress=None):
        for i in range(1, 4):
            progress("certified prefix (steps)", i * 100, 300)
        progress("trapping region (boxes)", 5, None)

    def silent(setting):
        return None
    buf = io.StringIO()
    with progress("verify certify", None, console=Console(file=buf, force_terminal=True, width=120)) as bar:
        hook = progress_hook(work, bar)
        work(None, **hook)
        tasks = {t.description: t for t in bar.progress.tasks}
        assert tasks["certified prefix (steps)"].completed == 300 and tasks["certified prefix (steps)"].total == 300
        assert tasks["trapping region (boxes)"].completed == 5
        assert progress_hook(silent, bar) == {}
