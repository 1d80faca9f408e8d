"""``verify sweep``: the grid, the rows (numbers checked against closed forms and the derived leading terms),
the Parquet/CSV/figures output, resuming under the code-version key, and every bad input as exit code 2.

Sweeps here run on an in-process Dask cluster (worker threads); tests/test_dask.py runs them on a real
scheduler and worker processes.
"""
from __future__ import annotations

import json
import math
import warnings

import pytest
from click.testing import CliRunner

from verify.run import execute as executor
from verify.cli import main
from verify.run.version import code_version
from verify.errors import InvalidParameter
from verify.run.lock import folder_lock
from verify.sweep import (MEASURES, compute_row, measure, parse_grid, plan_rows, points, read_meta, read_table,
                          run_sweep, setting_kwargs)
from verify.sweep import run as sweep_run


@pytest.fixture(autouse=True)
def _no_scheduler_from_the_environment(monkeypatch):
    """$VERIFY_SCHEDULER would send these runs to someone's cluster: the tests choose their own."""
    monkeypatch.delenv("VERIFY_SCHEDULER", raising=False)


BAD = [  # (arguments, the flag the message must name)
    (["--grid", "D"], "grid"),
    (["--grid", "X=1,2"], "grid"),
    (["--grid", "D=a,b"], "grid"),
    (["--grid", "D="], "grid"),
    (["--grid", "D=8,,16"], "grid"),
    (["--grid", "D=8,8"], "grid"),
    (["--grid", "D=8", "--grid", "D=16"], "grid"),
    (["--grid", "eta=fast"], "grid"),
    (["--grid", "loss=median"], "grid"),
    (["--grid", "N=2", "--grid", "preset=cnn"], "grid"),
    (["--grid", "D=8", "--grid", "K=3"], "grid"),            # no valid regime: K must divide D for cnn
    (["--steps", "5"], "--steps"),
    (["--steps", "-100"], "--steps"),
    (["--claim-steps", "0"], "--claim-steps"),
    (["--measure", "nothing"], "measure"),
    (["--workers", "0"], "--workers"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "workers"),
    (["--scheduler", "nonsense"], "scheduler"),
]


@pytest.mark.parametrize("args,flag", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, args, flag):
    r = CliRunner().invoke(main, ["sweep", "--out", str(tmp_path / "s"), "--quiet"] + args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and flag in r.output
    assert not (tmp_path / "s" / "sweep.parquet").exists()


def test_unreachable_scheduler_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", "1s")
    r = CliRunner().invoke(main, ["sweep", "--out", str(tmp_path / "s"), "--quiet", "--grid", "D=8", "--grid", "K=2",
                                  "--scheduler", "tcp://127.0.0.1:9"])
    assert r.exit_code == 2 and "scheduler" in r.output and "Traceback" not in r.output
    monkeypatch.setenv(executor.ENV_SCHEDULER, "tcp://127.0.0.1:9")    # the environment variable is honoured
    r = CliRunner().invoke(main, ["sweep", "--out", str(tmp_path / "s"), "--quiet", "--grid", "D=8", "--grid", "K=2"])
    assert r.exit_code == 2 and "tcp://127.0.0.1:9" in r.output


def test_grid_axes_and_cyclic_supports():
    g = parse_grid(["D=6", "K=2", "N=1,3,6", "freeze_wp=true", "sigma=identity,erf"])
    pts = points(g)
    assert [p.label() for p in pts][:2] == ["D=6 K=2 N=1 freeze_wp=true sigma=identity",
                                           "D=6 K=2 N=1 freeze_wp=true sigma=erf"]
    assert all(p.invalid is None for p in pts)
    kw = setting_kwargs(dict(pts[-1].values))
    # N = D: the gcn preset's circulant supports g_j = {j, j+1} mod D, first N of them
    assert kw["supports"] == [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [0, 5]] and kw["wp_trainable"] is False
    assert "preset" not in kw
    assert parse_grid([]) == {"D": [8, 16, 32], "K": [2, 4], "eta": ["1/10", "1/20"]}
    assert parse_grid(["sigma=identity;poly:0,1,0,1/10"]) == {"sigma": ["identity", "poly:0,1,0,1/10"]}
    with pytest.raises(InvalidParameter, match="grid"):
        parse_grid(["K=2", "k=3"])


def _run(tmp_path, **kw):
    args = dict(grid={"D": [8, 16], "K": [2, 3, 8]}, steps=20_000, out=tmp_path / "sw",
                measures=["trajectory", "claims"], claim_steps=60, processes=False, workers=2)
    args.update(kw)
    return run_sweep(args.pop("grid"), args.pop("steps"), args.pop("out"), **args)


@pytest.mark.slow
def test_local_sweep_table_figures_and_resume(tmp_path, monkeypatch):
    res = _run(tmp_path)
    rows, out = res["rows"], tmp_path / "sw"
    assert len(rows) == 6 and len({r["key"] for r in rows}) == 6
    st = {(r["D"], r["K"]): r["status"] for r in rows}
    assert st == {(8, 2): "ok", (8, 3): "invalid", (8, 8): "ok", (16, 2): "ok", (16, 3): "invalid", (16, 8): "ok"}
    bad = next(r for r in rows if r["status"] == "invalid")
    assert "K" in bad["error"] and "divide" in bad["error"]
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(r["worker"].startswith(("tcp://", "inproc://")) and r["code_version"] == code_version() for r in ok)
    # every per-regime claim has a verdict in every regime; K = D is outside loss-monotone's 0 < K < D
    claims = [c for c in ok[0] if c.startswith("claim:")]
    assert claims and all(r[c] in ("holds", "fails", "undecided", "outside") for r in ok for c in claims)
    assert all(r["claim_steps"] == 60 for r in ok)
    # Parquet read back by pandas and by dask.dataframe; the CSV copy agrees
    import dask.dataframe as dd
    import pandas as pd
    df = read_table(out)
    assert list(df["key"]) == [r["key"] for r in rows]
    with warnings.catch_warnings():   # dask.dataframe itself calls a pandas API that pandas 3.1 deprecates
        warnings.simplefilter("ignore", pd.errors.Pandas4Warning)
        assert dd.read_parquet(str(out / "sweep.parquet")).compute().shape == df.shape
    csv = pd.read_csv(out / "sweep.csv")
    assert list(csv["key"]) == list(df["key"])
    assert csv["slope_excess_loss"].fillna(0).tolist() == pytest.approx(df["slope_excess_loss"].fillna(0).tolist())
    meta = read_meta(out)
    assert meta["grid"] == {"D": [8, 16], "K": [2, 3, 8]} and meta["steps"] == 20_000
    assert meta["measures"] == ["trajectory", "claims"] and meta["options"] == {"claim_steps": 60}
    assert meta["code_version"] == code_version() and meta["rows"] == 6
    for axis in ("D", "K"):
        png = (out / "figures" / f"exponents-vs-{axis}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # Rerun: every ok row is reused as saved (same record, same finishing time); a new code version
    # recomputes them all under new keys.
    res2 = _run(tmp_path)
    assert res2["reused"] == 4 and [r for r in res2["rows"] if r["status"] == "ok"] == ok
    monkeypatch.setattr(sweep_run, "code_version", lambda: "0123456789abcdef")
    res3 = _run(tmp_path)
    assert res3["reused"] == 0 and all(r["code_version"] == "0123456789abcdef" for r in res3["rows"])
    assert {r["key"] for r in res3["rows"]}.isdisjoint({r["key"] for r in rows})
    assert [r.get("excess_loss") for r in res3["rows"]] == [r.get("excess_loss") for r in rows]


@pytest.mark.slow
def test_row_numbers_match_closed_forms_and_derived_leading_terms():
    """Two routes to each number: K = D has a closed form (S = S* from step 0 and
    alpha_t = 1 - (1 - eta N / D)^t); in the interior the derived leading terms must match GD at large T."""
    v = code_version()
    task = plan_rows(parse_grid(["D=8", "K=8"]), 1000, ["trajectory"], {}, v)[0]
    row = compute_row(task)
    q = (1 - 0.1 * 1 / 8) ** 1000                       # 1 - alpha_T (eta = 1/10, N = 1, D = 8)
    assert row["w_err"] == pytest.approx(q * 1.0, rel=1e-8)               # |1 - alpha| ||V*||_F, ||V*|| = 1
    # L - L_opt = 1/2 (1 - alpha)^2 ||V*||^2 ||s*||^2 with ||s*||^2 = 1/K; a difference of O(1) terms in
    # float64 leaves ~4 significant digits at 7e-13.
    assert row["excess_loss"] == pytest.approx(0.5 * q * q / 8, rel=1e-3)
    assert row["s_err"] == 0.0 and row["slope_s_err"] is None and "s_err" in row["trajectory_note"]
    assert row["ratio_w_err"] is None and "0 < K < D" in row["leading_term_note"]
    task = plan_rows(parse_grid(["D=16", "K=4", "M=2"]), 10**6, ["trajectory"], {}, v)[0]
    row = compute_row(task)
    for quantity, claimed in (("excess_loss", -1.0), ("s_err", -0.5), ("w_err", -0.5)):
        # the leading term's relative correction is O(u(T)) with u(10^6) ~ 0.02 here
        assert row[f"ratio_{quantity}"] == pytest.approx(1.0, abs=0.05)
        assert row[f"slope_{quantity}"] == pytest.approx(claimed, abs=0.02)


def test_diverging_regime_gives_no_numbers_and_strict_json():
    """GD beyond the stability threshold overflows: the row says so and holds no NaN passed off as a value."""
    task = plan_rows(parse_grid(["D=8", "K=2", "eta=50"]), 200, ["trajectory", "claims"], {"claim_steps": 50},
                     code_version())[0]
    row = compute_row(task)
    assert row["status"] == "ok"
    assert all(row[k] is None or math.isfinite(row[k]) for k in row if k.startswith(("slope_", "ratio_")))
    assert row["ratio_excess_loss"] is None and "stability threshold" in row["leading_term_note"]
    json.dumps(row, allow_nan=False)


def test_new_measurements_plug_in_and_a_failing_one_costs_its_columns(monkeypatch):
    from verify.sweep import measures as ms
    monkeypatch.setattr(ms, "MEASURES", dict(MEASURES))

    @measure("tokens", default=False)
    def tokens(s, steps, options):
        return {"tokens_times_steps": s.D * steps}

    @measure("broken", default=False)
    def broken(s, steps, options):
        raise ArithmeticError("no bound here")
    assert "tokens" in ms.MEASURES and ms.check_measures(None) == ["trajectory", "claims"]
    monkeypatch.setattr(sweep_run, "MEASURES", ms.MEASURES)
    task = plan_rows(parse_grid(["D=8", "K=2"]), 100, ["trajectory", "tokens", "broken"], {}, code_version())[0]
    row = compute_row(task)
    assert row["tokens_times_steps"] == 800 and row["excess_loss"] is not None
    assert row["status"] == "failed" and "broken: ArithmeticError: no bound here" in row["error"]


def test_worker_running_other_code_is_refused():
    task = plan_rows(parse_grid(["D=8", "K=2"]), 100, ["trajectory"], {}, "feedfacefeedface")[0]
    row = compute_row(task)
    assert row["status"] == "failed" and "other code" in row["error"] and "excess_loss" not in row


def test_second_sweep_into_the_same_out_is_refused(tmp_path):
    out = tmp_path / "sw"
    with folder_lock(out):
        r = CliRunner().invoke(main, ["sweep", "--out", str(out), "--quiet", "--grid", "D=8", "--grid", "K=2"])
    assert r.exit_code == 2 and "out" in r.output and "in use" in r.output and "Traceback" not in r.output
    assert not (out / "_work").exists()


def test_certified_enclosures_contain_the_float64_run():
    """Two routes: the Arb enclosure of each final value (rounded outwards) contains the float64 iteration's
    value up to float64 rounding (1e-12 relative: ~16 digits less the cancellation in L - L_opt)."""
    task = plan_rows(parse_grid(["D=8", "K=2", "M=2"]), 500, ["trajectory", "certified"], {"arb_bits": 128},
                     code_version())[0]
    row = compute_row(task)
    assert row["status"] == "ok" and row["certified_bits"] == 128
    for q in ("excess_loss", "s_err", "w_err"):
        lo, hi, x = row[f"certified_{q}_lo"], row[f"certified_{q}_hi"], row[q]
        assert lo <= hi and hi - lo <= 4 * math.ulp(max(abs(lo), abs(hi)))   # a 128-bit ball, rounded to floats
        assert lo - 1e-12 * abs(x) <= x <= hi + 1e-12 * abs(x)


@pytest.mark.slow
def test_certificate_measure_bounds_the_trajectory_and_refuses_or_is_exact():
    """The opt-in "certificate" column: its all-time bounds at --steps contain the row's own float64 values
    (a second engine); K = D is certified exactly; eta above 2K/(c_L v N) is refused, naming why."""
    from verify.model import make_setting
    from verify.sweep.measures import MEASURES
    s = make_setting(D=8, K=2, preset="sts", eta="1/10")
    steps = 20_000
    cert = MEASURES["certificate"].func(s, steps, {})
    traj = MEASURES["trajectory"].func(s, steps, {})
    assert cert["certificate_status"] == "certified" and cert["certificate_T0"] > 0
    for q in ("excess_loss", "s_err", "w_err"):
        lo, hi = cert[f"certificate_{q}_at_steps_lo"], cert[f"certificate_{q}_at_steps_hi"]
        assert lo <= traj[q] * (1 + 1e-9) and traj[q] * (1 - 1e-9) <= hi, (q, lo, traj[q], hi)
    assert MEASURES["certificate"].func(make_setting(D=4, K=4, preset="cnn", eta="1/10"), 100, {})[
        "certificate_status"] == "exact"
    bad = MEASURES["certificate"].func(make_setting(D=4, K=2, preset="sts", eta="5"), 100, {})
    assert bad["certificate_status"] == "refused" and "2K/(c_L v N)" in bad["certificate_note"]


@pytest.mark.slow
def test_invalid_regimes_are_summarised_by_kind_and_early_horizons_flagged(tmp_path):
    """cnn needs K | D: of D in {4, 6} x K in {3, 4, 5} the valid regimes are (6, 3) and (4, 4) (by hand), so
    four are invalid, all for K. With --quiet the summary is still one line per kind, not one per row. The
    sts-like row D = 6, K = 3 at 50 steps ends long before the onset 200 K D/(2 eta ||V*||^2) = 18000."""
    out = tmp_path / "sw"
    r = CliRunner().invoke(main, ["sweep", "--grid", "D=4,6", "--grid", "K=3,4,5", "--steps", "50", "--measure",
                                  "trajectory", "--out", str(out), "--quiet", "--workers", "1"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert "4 not valid regimes" in lines[0]
    assert "not valid regimes: 4, by the parameter at fault:" in lines and sum("x K: e.g." in x for x in lines) == 1
    assert any("1 rows end before the onset T*" in x for x in lines) and len(lines) <= 5, lines
    rows = {(row["D"], row["K"]): row for row in read_table(out).to_dict("records")}
    assert rows[(6, 3)]["tstar"] == 200 * 3 * 6 / (2 * 0.1 * 1) and rows[(6, 3)]["before_tstar"] is True
    assert rows[(4, 4)]["tstar"] is None or rows[(4, 4)]["tstar"] != rows[(4, 4)]["tstar"]   # K = D: no 1/T phase


@pytest.mark.slow
def test_rate_constants_and_their_figure_against_each_axis(tmp_path):
    """constant_q = q(T) T^-p with Theorem 3.1's T-exponents (T (L - L_opt), sqrt(T) ||S - S*||_F, ...), from
    the row's own final values; the derived constant of L - L_opt is K N (D - K)/(4 D eta) in the reference
    convention (the hand-derived leading term times T); the figure of each swept axis is written."""
    res = run_sweep(parse_grid(["D=8,16", "K=2"]), 4_000, tmp_path / "sw", measures=["trajectory"],
                    processes=False, workers=1)
    for r in res["rows"]:
        T = r["steps"]
        assert r["constant_excess_loss"] == pytest.approx(r["excess_loss"] * T, rel=1e-12)
        assert r["constant_s_err"] == pytest.approx(r["s_err"] * math.sqrt(T), rel=1e-12)
        assert r["constant_w_err"] == pytest.approx(r["w_err"] * math.sqrt(T), rel=1e-12)
        D, K, N = r["D"], r["K"], r["N"]
        assert r["derived_constant_excess_loss"] == pytest.approx(K * N * (D - K) / (4 * D * 0.1), rel=1e-12)
        assert r["constant_excess_loss"] == pytest.approx(r["derived_constant_excess_loss"], rel=0.2)
    figs = {f["file"]: f["caption"] for f in res["meta"]["figures"]}
    assert set(figs) == {"figures/exponents-vs-D.png", "figures/constants-vs-D.png"}
    assert "D^4, D^5/2, D^2" in figs["figures/constants-vs-D.png"]          # from verify.model.paper
    assert (tmp_path / "sw" / "figures" / "constants-vs-D.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_ctrl_c_stops_a_sweep_cleanly_and_the_rerun_resumes(tmp_path):
    """SIGINT to the process group of a real `verify sweep` while a row runs, one row being saved: one line, no
    traceback, exit status 130, no table; the same sweep planned again reuses the saved row and computes only the
    other. On one worker the rows run longest first: D = 16, then D = 8, which holds (tests/gate.py) until the
    interrupt."""
    import os
    import signal
    import sys
    from verify.sweep.run import sort_rows
    from waiting import gate_env, start_as_from_a_terminal, started, wait_for
    out, grid, steps, gate = tmp_path / "sw", ["D=8,16", "K=2"], 2000, tmp_path / "gate"
    gate.mkdir()
    measures = ["trajectory", "gate"]
    args = ["sweep", *[a for g in grid for a in ("--grid", g)], "--steps", str(steps),
            *[a for m in measures for a in ("--measure", m)], "--workers", "1", "--out", str(out)]
    proc = start_as_from_a_terminal([sys.executable, "-c", "from verify.cli import main; main()", *args],
                                    env=gate_env(gate, hold_d="8"))
    rows = out / "_work" / "rows"
    try:
        wait_for(lambda: started(gate, "D8") and list(rows.glob("*.json")), "the row D = 16 saved and D = 8 running",
                 proc=proc)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130 and "Traceback" not in err and "Exception ignored" not in err, err
    assert err.strip().splitlines()[-1].startswith("Error: interrupted") and "resume" in err
    saved = [json.loads(f.read_text()) for f in rows.glob("*.json")]
    assert [r["D"] for r in saved] == [16] and not (out / "sweep.parquet").exists()
    tasks = plan_rows(parse_grid(grid), steps, measures, {}, code_version())
    _, todo, reused = sort_rows(tasks, rows, fresh=False)
    assert reused == 1 and [dict(map(tuple, t["point"]))["D"] for t in todo] == [8]


def test_a_running_row_reports_the_fraction_of_its_steps_done(monkeypatch):
    """A row tells the client how far it is as its measurements advance (the sweep's counter counts steps, not
    rows): trajectory (one call of the fast engine) then certified (Arb, a progress call every 1000 steps) over
    3000 steps, each half of the row; the messages rise to 1 and include the certified run's 1000 and 2000 steps:
    (1 + 1000/3000)/2 and (1 + 2000/3000)/2 of the row."""
    sent = []
    monkeypatch.setattr(sweep_run, "report_progress", lambda topic, msg: sent.append((topic, msg)))
    monkeypatch.setattr(sweep_run, "PROGRESS_INTERVAL", 0.0)
    task = plan_rows(parse_grid(["D=8", "K=2"]), 3000, ["trajectory", "certified"], {"arb_bits": 128},
                     code_version())[0]
    row = compute_row(task)
    assert row["status"] == "ok"
    assert {topic for topic, _ in sent} == {sweep_run.PROGRESS_TOPIC} and {m[0] for _, m in sent} == {task["key"]}
    fractions = [m[1] for _, m in sent]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and 0.5 in fractions
    for want in ((1 + 1000 / 3000) / 2, (1 + 2000 / 3000) / 2):
        assert any(abs(f - want) < 1e-12 for f in fractions), (want, fractions)
