"""The Dask executor on real processes: a `dask scheduler` and two `dask worker` processes on 127.0.0.1
started here (free ports, no dashboard, one thread each) and stopped by their process ids; a LocalCluster
for the part time limit.

- a sweep through --scheduler: every row once, each row names one of those workers, and each row's
  numbers equal a local run's;
- one worker killed in the middle of a sweep: the sweep completes with every row exactly once;
- a part that hangs is recorded as a timeout, the run goes on, and the next part runs on the same worker.
"""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from verify.pipeline import runner as pipeline
from verify.run import parts
from verify.cli import main
from verify.run.version import code_version
from verify.sweep import compute_row, parse_grid, plan_rows
from verify.sweep.run import rows_dir
from waiting import gate_env, release, started, wait_for

ROOT = Path(pipeline.__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
HOLD_D = "8,10"        # the rows the lost-worker test holds (tests/gate.py)


@pytest.fixture(autouse=True)
def _no_scheduler_from_the_environment(monkeypatch):
    """$VERIFY_SCHEDULER would send these runs to someone's cluster: the tests choose their own."""
    monkeypatch.delenv("VERIFY_SCHEDULER", raising=False)



def _start(args, tmp, name):
    """A process of ours in its own process group (so stopping it stops its children too); it imports the test
    measurement "gate" (tests/gate.py, holding at the folder ``tmp/gate``)."""
    env = gate_env(tmp / "gate", hold_d=HOLD_D)
    # One task per worker thread at a time (no task queued behind a running one): a held row never blocks
    # another row queued on the same worker, so the workers take the rows strictly in their order.
    env["DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION"] = "1.0"
    with open(tmp / f"{name}.log", "wb") as log:    # the child keeps its own descriptor
        return subprocess.Popen([str(BIN / "dask"), *args], cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """{"address", "workers": {address: Popen}} of a real scheduler with two single-thread workers."""
    from distributed import Client
    tmp = tmp_path_factory.mktemp("dask")
    (tmp / "gate").mkdir()
    procs = []
    try:
        sched_file = tmp / "scheduler.json"
        procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--dashboard-address",
                             "127.0.0.1:0", "--scheduler-file", str(sched_file)], tmp, "scheduler"))
        wait_for(sched_file.exists, "the scheduler's file written", proc=procs[0])
        address = json.loads(sched_file.read_text())["address"]
        for i in range(2):
            procs.append(_start(["worker", address, "--nthreads", "1", "--no-dashboard", "--no-nanny",
                                 "--name", f"w{i}", "--local-directory", str(tmp / f"w{i}")], tmp, f"worker{i}"))
        with Client(address, timeout="30s", set_as_default=False) as c:
            c.wait_for_workers(2, timeout=60)
            info = c.scheduler_info()["workers"]
            pids = c.run(os.getpid)
        by_pid = {p.pid: p for p in procs[1:]}
        yield {"address": address, "workers": {a: by_pid[pids[a]] for a in info}, "tmp": tmp}
    finally:
        for p in reversed(procs):
            _stop(p)


def _numbers_equal(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


@pytest.mark.slow
def test_sweep_through_the_scheduler_rows_once_on_its_workers_equal_to_local(cluster, tmp_path):
    out = tmp_path / "sw"
    args = ["sweep", "--scheduler", cluster["address"], "--grid", "D=8,16", "--grid", "K=2,4", "--steps", "4000",
            "--measure", "trajectory", "--out", str(out), "--json", "--quiet"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]                  # strict JSON: no NaN anywhere
    tasks = plan_rows(parse_grid(["D=8,16", "K=2,4"]), 4000, ["trajectory"], {}, code_version())
    assert sorted(r["key"] for r in rows) == sorted(t["key"] for t in tasks)   # every row, exactly once
    assert all(r["status"] == "ok" for r in rows)
    assert {r["worker"] for r in rows} <= set(cluster["workers"])
    local = {t["key"]: compute_row(t) for t in tasks}    # the same rows computed here, without Dask
    skip = {"worker", "seconds", "finished"}
    for row in rows:
        mine = local[row["key"]]
        assert set(row) == set(mine)
        diff = {k: (row[k], mine[k]) for k in row if k not in skip and not _numbers_equal(row[k], mine[k])}
        assert not diff, diff
    assert (out / "sweep.parquet").is_file() and (out / "figures" / "exponents-vs-D.png").is_file()


@pytest.mark.slow
def test_lost_worker_sweep_completes_with_every_row_once(cluster, tmp_path):
    """Kill one worker (its process) while it computes a row: its task is run again elsewhere. The rows of D in
    HOLD_D hold (tests/gate.py) until the kill; being the cheapest they run last (longest first), so each worker
    holds one of them once the other rows are saved."""
    out, gate = tmp_path / "sw", cluster["tmp"] / "gate"
    grid = ["D=8,10,12,14,16,18,20,22", "K=2"]
    cmd = [sys.executable, "-c", "from verify.cli import main; main()", "sweep", "--scheduler", cluster["address"],
           "--steps", "2000", "--claim-steps", "400", "--measure", "trajectory", "--measure", "gate",
           "--out", str(out), "--json", "--quiet"]
    cmd += [a for g in grid for a in ("--grid", g)]
    proc = subprocess.Popen(cmd, env=gate_env(gate, hold_d=HOLD_D), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    held = [f"D{d}" for d in HOLD_D.split(",")]
    try:
        wait_for(lambda: all(started(gate, h) for h in held) and len(list(rows_dir(out).glob("*.json"))) == 6,
                 "six rows saved and both workers holding a row", proc=proc)
        done_before = {p.stem for p in rows_dir(out).glob("*.json")}
        victim, vproc = next(iter(cluster["workers"].items()))
        os.killpg(vproc.pid, signal.SIGKILL)
        vproc.wait()
        release(gate)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, stderr.decode()[-3000:]
    rows = json.loads(stdout)["rows"]
    keys = [r["key"] for r in rows]
    assert len(keys) == 8 and len(set(keys)) == 8                      # every row, none twice
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["status"] != "ok"]
    after = [r for r in rows if r["key"] not in done_before]
    assert sorted(r["D"] for r in after) == sorted(int(d) for d in HOLD_D.split(","))   # the held rows
    assert all(r["gate_held"] for r in after) and not any(r["gate_held"] for r in rows if r not in after)
    assert all(r["worker"] != victim for r in after)                    # both finished on the survivor
    assert {r["worker"] for r in rows} <= set(cluster["workers"])


HANG_MODULE = '''
import os, threading
from verify.run import part


@part("hang", order=1)
def hang(profile):
    threading.Event().wait()          # forever: only the part's time limit ends it


@part("after", order=2)
def after(profile):
    return {"verdict": "supported", "pid": os.getpid()}
'''


@pytest.mark.slow
def test_hanging_part_times_out_and_the_worker_stays_usable(tmp_path, monkeypatch):
    mod = f"hangparts_{os.getpid()}"
    (tmp_path / f"{mod}.py").write_text(HANG_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))   # for the part processes
    monkeypatch.setattr(parts, "REGISTRY", {})
    monkeypatch.setattr(pipeline, "REGISTRY", parts.REGISTRY)
    monkeypatch.setattr(pipeline, "discover", lambda: [])
    __import__(mod)
    seen = []
    state = pipeline.run_parts(tmp_path / "rep", "ci", workers=1, part_timeout=3,
                               progress=lambda *a: seen.append(a))
    recs = {r["part"]: r for r in state.done}
    assert recs["hang"]["status"] == "timeout" and "time limit of 3 s" in recs["hang"]["error"]
    assert recs["after"]["status"] == "ok"
    assert [s[0] for s in seen] == ["hang", "after"]                     # one worker: the run went on after it
    assert recs["hang"]["worker"] == recs["after"]["worker"] and recs["after"]["worker"].startswith("tcp://")
    group = int(recs["hang"]["error"].split("process group ")[1].split(")")[0])
    with pytest.raises(ProcessLookupError):                              # the hung process is gone
        os.killpg(group, 0)
    saved = json.loads((tmp_path / "rep" / "_work" / "parts" / "hang.json").read_text())
    assert saved["status"] == "timeout"


@pytest.mark.slow
def test_bench_dask_targets_run_at_tiny_sizes():
    """Smoke run of the two Dask benchmarks (the lead measures them at full size; speed is never asserted)."""
    from verify.bench import timings as bench
    sc = bench.sweep_scaling(quick=True)
    assert sc["workers_1"]["failed_rows"] == sc["workers_2"]["failed_rows"] == 0 and sc["rows"] == 2
    assert sc["ratio"] > 0 and sc["target_ratio"] == 1.8
    ov = bench.dask_overhead(quick=True)
    assert ov["mean_task_seconds"] > 0 and ov["per_task_overhead_seconds"] > 0 and ov["target_fraction"] == 0.05
    text = bench.to_markdown({"quick": True, "regime": {}, "machine": {"cpus": 2}, "convention": "c", "engines": {},
                              "ratios": {}, "certified_radius": {"bits": 256, "max_state_radius": 0.0, "steps": 1,
                                                                 "seconds": 0.0},
                              "monte_carlo": {"state": {"d": 4}, "mc_rms_rel_error_at_n0": 0.1, "n0": 1,
                                              "reduced_gradient_seconds": 0.1, "rows": []},
                              "dask": {"sweep_scaling": sc, "overhead": ov}})
    assert "rows/s with 1 worker" in text and "per-task overhead" in text


def _report_then_wait(topic: str, ack: str) -> bool:
    """A task that sends one progress message, then waits for the client to say it arrived."""
    from distributed import Event
    from verify.run.execute import report_progress
    report_progress(topic, ["row", 0.25])
    return Event(ack).wait(timeout=120)


def test_a_task_s_progress_message_reaches_the_client():
    """verify.run.execute.report_progress inside a task reaches the handler of Executor.subscribe while the task
    still runs (the task waits for the client's acknowledgement: no sleep, and a lost message fails the test)."""
    import threading
    from distributed import Event
    from verify.run.execute import Executor
    got, arrived = [], threading.Event()

    def handler(msg):
        got.append(msg)
        arrived.set()

    with Executor(workers=1, processes=False) as ex:
        ex.subscribe("verify-test-progress", handler)
        fut = ex.client.submit(_report_then_wait, "verify-test-progress", "verify-test-ack", pure=False)
        assert arrived.wait(120), "the progress message never reached the client"
        Event("verify-test-ack", client=ex.client).set()
        assert fut.result(timeout=120) is True
    assert got == [["row", 0.25]]
