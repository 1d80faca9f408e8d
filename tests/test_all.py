"""``verify all``: every file, resumable parts keyed by options and code version, no half-written report, a
failing part does not stop the run, one run per output folder, outputs in gitignored places.

Most tests register fast fake parts (verify.run.parts registry) and run them on an in-process Dask cluster
(worker threads, parts run in the worker); one runs the real pipeline on a small subset of parts, and two run
it with a part held by tests/gate.py until released (so a kill or Ctrl-C lands while it runs) on a
LocalCluster of worker processes, each part in a child process.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from verify.pipeline import runner as pipeline
from verify.run import parts, version as codeversion
from verify.cli import main
from verify.evidence import Scope, Statement, headline, record
from verify.run.lock import folder_lock
from verify.report import validate
from verify.run.atomic import WORK

from test_report import check_html, question_rows
from waiting import WAIT_LIMIT, gate_env, release, start_as_from_a_terminal, started, wait_for

ROOT = Path(pipeline.__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_scheduler_from_the_environment(monkeypatch):
    """$VERIFY_SCHEDULER would send these runs to someone's cluster: the tests choose their own."""
    monkeypatch.delenv("VERIFY_SCHEDULER", raising=False)


REPORT = ("index.md", "index.html", "results.json", "figures/convergence.png", "figures/attention.png")

T = [1, 10, 100, 1000]
ALL = Scope(dims="all", sigma="all", conventions="all", horizon="all")
FEW = Scope(dims=("D=3",), sigma=("identity",), conventions=("reference",), horizon=10)
TH = {"value": 0, "why": "fake"}


def _fake_fuzz(a):
    bad = a == "lemma-C.2"
    ev = [record(f"fuzz {a}", "float64", FEW, "fake", not bad, threshold=TH, replay="verify run --D 3" if bad else None,
                 replay_check={"horizon": 100, "holds": False} if bad else None)]
    return {"claim": a, "examples": 10, "falsified": bad, "counterexample": {"D": 3} if bad else None,
            "replay": "verify run --D 3", "evidence": ev}


FAKE = {
    "derive": lambda a: headline([Statement("reduction", ALL, [record("proof", "symbolic", ALL, "ok", True)])])
    | {"asymptotics": {"loss": "1/T"}, "reduction": {"identity": {"proved": True, "obligations": []}},
       "replay": "verify derive"},
    "convergence": lambda a: headline([Statement("slopes", FEW, [record("fit", "float64", FEW, "ok", True,
                                                                        threshold=TH)])])
    | {"steps": T, "regime": {"D": 4}, "series": {q: [1.0 / t for t in T] for q in ("excess_loss", "s_err", "w_err")},
       "alpha": [[1.0] for _ in T], "support_mass": [[0.9] for _ in T],
       "quantities": {"excess_loss": {"fitted_slope": -1.0, "claimed_slope": -1.0, "fit_range": [100, 1000]}}},
    "attention": lambda a: headline([Statement("moves", FEW, [record("run", "float64", FEW, "ok", True,
                                                                     threshold=TH)])])
    | {"snapshots": [{"step": 0, "S": [[0.5], [0.5]], "s_err": 0.7}], "sstar": [[1.0], [0.0]]},
    "claim": lambda a: headline([Statement(f"claim {a}", ALL, [record("proof", "symbolic", ALL, "ok", True)])])
    | {"id": a, "convention": {}, "replay": f"verify claim {a}"},
    "probe": lambda a: headline([Statement(f"{a} statement", ALL, [record("proof", "symbolic", ALL, "fails", False,
                                                                          replay=f"verify probe {a}")])])
    | {"probe": a, "questions": [{"d_eq_k": 3, "k_zero": 4}[a]], "regimes": [], "classification": {},
       "findings": [f"{a} finding"], "replay": f"verify probe {a}", "data": {"run": {"step": T, "loss": [1.0, 0.5, 0.4, 0.3]}}},
    "fuzz": _fake_fuzz,
    "bench": lambda a: {"quick": True, "timings": {}, "ratio": float("nan")},
}
ARGS = {"claim": ["lemma-C.2", "theorem-3.1-rate"], "probe": ["d_eq_k", "k_zero"],
        "fuzz": ["lemma-C.2", "invalid-parameters"]}


class Fakes:
    """Fast stand-ins for every part kind, registered in a fresh registry (discovery off); counts calls;
    ``explode`` maps part names to exceptions."""

    def __init__(self, monkeypatch):
        self.calls = []
        self.explode = {}
        monkeypatch.setattr(parts, "REGISTRY", {})
        monkeypatch.setattr(pipeline, "REGISTRY", parts.REGISTRY)
        monkeypatch.setattr(pipeline, "discover", lambda: [])
        for i, kind in enumerate(FAKE):
            self.register(kind, i)

    def register(self, kind, order, lister=None):
        if kind in ARGS or lister is not None:
            def f(arg, profile, kind=kind):
                return self.call(kind, arg)
            parts.part(kind, args=lister or (lambda kind=kind: ARGS[kind]), order=order)(f)
        else:
            def g(profile, kind=kind):
                return self.call(kind, "")
            parts.part(kind, order=order)(g)

    def call(self, kind, arg):
        name = f"{kind}:{arg}" if arg else kind
        self.calls.append(name)
        if name in self.explode:
            raise self.explode[name]
        return FAKE[kind](arg)


def run(out, **kw):
    """verify all on an in-process cluster, parts run in the worker (so the fakes are seen)."""
    return pipeline.verify_all(out, "ci", processes=False, isolate=False, workers=kw.pop("workers", 2), **kw)


@pytest.mark.slow
def test_fake_run_writes_every_file_and_resumes(tmp_path, monkeypatch):
    fk = Fakes(monkeypatch)
    out = tmp_path / "rep"
    res = run(out)
    for f in REPORT:
        assert (out / f).is_file(), f

    def strict(c):
        raise AssertionError(f"{c} is not JSON")
    saved = json.loads((out / "results.json").read_text(), parse_constant=strict)
    validate(saved)
    assert saved["bench"]["ratio"] == "nan"
    check_html(out)
    assert len(question_rows(out)) == 12
    names = [p.name for p in pipeline.plan("ci")[0]]
    assert sorted(fk.calls) == sorted(names)
    assert {p["name"] for p in res["parts"]} == set(names)
    q = {r["number"]: r for r in res["questions"]}
    assert q[3]["verdict"] == "refuted" and q[3]["evidence"][0]["part"] == "probe:d_eq_k"
    assert all(p["seconds"] >= 0 for p in res["parts"])
    # Q2's verdict is its primary part's (claim:lemma-C.2, "proved" in the fake); a part that disagrees
    # (here the fake fuzz:lemma-C.2 falsification) is named in the finding, never hidden.
    assert res["fuzz"]["claims"][1]["falsified"] and q[2]["verdict"] == "proved"
    assert "fuzz:lemma-C.2 refuted" in q[2]["finding"]
    # Every record names the Dask worker that ran it and the code version it ran under.
    recs = [json.loads(f.read_text()) for f in (out / WORK / "parts").glob("*.json")]
    assert all(r["worker"].startswith(("tcp://", "inproc://")) for r in recs), {r["worker"] for r in recs}
    assert {r["code_version"] for r in recs} == {codeversion.code_version()}
    # A second run reuses every saved part.
    fk.calls.clear()
    res2 = run(out)
    assert fk.calls == [] and res2["summary"]["reused_parts"] == len(names)
    # ... and its header quotes the run that computed them, not its own fraction of a second.
    first = res["summary"]["wall_seconds"]
    assert res2["summary"]["computed_wall_seconds"] == first == res["summary"]["computed_wall_seconds"]
    assert f"All {len(names)} parts reused from an earlier run of {first:.1f} s" in (out / "index.md").read_text()
    # --fresh runs everything again.
    pipeline.run_parts(out, "ci", fresh=True, processes=False, isolate=False)
    assert sorted(fk.calls) == sorted(names)


@pytest.mark.slow
def test_failing_part_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    fk = Fakes(monkeypatch)
    fk.explode["claim:lemma-C.2"] = ZeroDivisionError("division by zero in the claim")
    out = tmp_path / "rep"
    res = run(out, only=["claim", "derive"])
    part = next(p for p in res["parts"] if p["name"] == "claim:lemma-C.2")
    assert part["status"] == "failed" and "ZeroDivisionError" in part["error"]
    assert part["verdict"] == "not checked"
    assert {p["status"] for p in res["parts"] if p["name"] != "claim:lemma-C.2"} == {"ok"}
    # On the next run only the failed part runs again.
    fk.explode.clear()
    fk.calls.clear()
    res = run(out, only=["claim", "derive"])
    assert fk.calls == ["claim:lemma-C.2"]
    assert {p["status"] for p in res["parts"]} == {"ok"}


def test_broken_lister_and_broken_module_are_recorded_failures(tmp_path, monkeypatch):
    fk = Fakes(monkeypatch)

    def broken():
        raise ModuleNotFoundError("No module named 'lemmas'")
    fk.register("claim", 3, lister=broken)
    monkeypatch.setattr(pipeline, "discover", lambda: [("verify.certify.certify_part", "SyntaxError: bad")])
    res = run(tmp_path / "rep", only=["derive", "claim"])
    by = {p["name"]: p for p in res["parts"]}
    assert by["discovery:claims"]["status"] == "failed" and "lemmas" in by["discovery:claims"]["error"]
    assert by["discovery:verify.certify.certify_part"]["status"] == "failed" and "SyntaxError" in \
        by["discovery:verify.certify.certify_part"]["error"]
    assert not [c for c in fk.calls if c.startswith("claim")]


@pytest.mark.slow
def test_interrupted_run_leaves_no_half_written_report_and_resumes(tmp_path, monkeypatch):
    fk = Fakes(monkeypatch)
    out = tmp_path / "rep"
    seen = []

    def stop_after_three(name, status, seconds, worker):   # the user presses Ctrl-C mid-run
        seen.append(name)
        if len(seen) == 3:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run(out, progress=stop_after_three, workers=1)
    assert not any((out / f).exists() for f in REPORT)       # no report at all, only saved parts
    done = {json.loads(f.read_text())["part"] for f in (out / WORK / "parts").glob("*.json")}
    assert done >= set(seen) and len(done) < len(pipeline.plan("ci")[0])
    fk.calls.clear()
    res = run(out)
    assert not set(fk.calls) & done and fk.calls                     # finished parts are skipped
    assert res["summary"]["reused_parts"] == len(done)
    for f in REPORT:
        assert (out / f).is_file()
    # Interrupting a later run leaves the previous complete report in place.
    old = (out / "results.json").read_text()
    seen.clear()
    with pytest.raises(KeyboardInterrupt):
        run(out, fresh=True, progress=stop_after_three, workers=1)
    assert (out / "results.json").read_text() == old and (out / "index.html").is_file()


def test_options_must_match_to_reuse(tmp_path, monkeypatch):
    fk = Fakes(monkeypatch)
    out = tmp_path / "rep"
    run(out, only=["derive"])
    f = out / WORK / "parts" / "derive.json"
    rec = json.loads(f.read_text())
    rec["options"]["profile"] = "deep"
    f.write_text(json.dumps(rec))
    fk.calls.clear()
    run(out, only=["derive"])
    assert fk.calls == ["derive"]


def copy_sources(dst: Path) -> Path:
    """The package sources (verify/, lemmas/, recheck/) and tests/ copied to ``dst``."""
    for pkg in ("verify", "lemmas", "recheck", "tests"):
        shutil.copytree(ROOT / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


@pytest.mark.slow
def test_editing_a_source_file_invalidates_saved_parts(tmp_path, monkeypatch):
    """The reuse key is the code version (a hash of the sources) with the options: a rerun after an edit
    runs every part again; a rerun without edits reuses them."""
    fk = Fakes(monkeypatch)
    src = copy_sources(tmp_path / "src")
    monkeypatch.setattr(codeversion, "source_root", lambda: src)
    out = tmp_path / "rep"
    only = ["derive", "claim"]
    n = len(pipeline.plan("ci", only)[0])
    run(out, only=only)
    assert len(fk.calls) == n == 3
    fk.calls.clear()
    run(out, only=only)
    assert fk.calls == []                                    # no edit: everything reused
    (src / "tests" / "test_all.py").write_text("# not part of the code version\n")
    run(out, only=only)
    assert fk.calls == []                                    # tests/ are not package sources
    fits = src / "verify" / "engines" / "fits.py"
    fits.write_text(fits.read_text() + "\n# an edit\n")
    res = run(out, only=["derive"])
    assert fk.calls == ["derive"]                            # an edited source: the part runs again, and
    assert [p["name"] for p in res["parts"]] == ["derive"]   # the old code's results leave the report
    fk.calls.clear()
    run(out, only=only)
    assert len(fk.calls) == n - 1                            # every other part runs again too
    fk.calls.clear()
    run(out, only=only)
    assert fk.calls == []


def test_code_version_hashes_the_package_sources_only(tmp_path):
    src = copy_sources(tmp_path / "src")
    v0 = codeversion.code_version(src)
    assert v0 == codeversion.code_version(ROOT) and len(v0) == 16
    (src / "tests" / "x.py").write_text("x = 1\n")
    (src / "reports").mkdir()
    (src / "reports" / "r.json").write_text("{}")
    assert codeversion.code_version(src) == v0
    lemma = next((src / "lemmas").glob("[!_]*.py"))
    text = lemma.read_text()
    lemma.write_text(text + "\n")
    v1 = codeversion.code_version(src)
    assert v1 != v0
    lemma.write_text(text)
    assert codeversion.code_version(src) == v0                # the content, not the time stamp
    schema = src / "verify" / "schemas" / "results.schema.json"
    schema.write_text(schema.read_text() + " ")
    assert codeversion.code_version(src) != v0


def test_second_concurrent_run_on_the_same_out_is_refused(tmp_path, monkeypatch):
    fk = Fakes(monkeypatch)
    out = tmp_path / "rep"
    with folder_lock(out):                                    # a first run holds OUT
        r = CliRunner().invoke(main, ["all", "--out", str(out), "--quiet", "--only", "derive"])
        assert r.exit_code == 2, r.output
        msg = r.output.strip().splitlines()[-1]
        assert "out" in msg and str(out) in msg and f"pid {os.getpid()}" in msg and "Traceback" not in r.output
        r = CliRunner().invoke(main, ["report", "--out", str(out)])
        assert r.exit_code == 2 and "in use" in r.output
    assert fk.calls == [] and not (out / WORK).exists()       # the second run did no work at all
    run(out, only=["derive"])                                 # released: the next run works
    assert fk.calls == ["derive"]


def test_bad_profile_and_only_are_invalid_parameters(tmp_path):
    from verify.errors import InvalidParameter
    with pytest.raises(InvalidParameter, match="profile"):
        pipeline.run_parts(tmp_path, "quick")
    r = CliRunner().invoke(main, ["all", "--out", str(tmp_path / "x"), "--profile", "quick"])
    assert r.exit_code == 2
    with pytest.raises(InvalidParameter, match="only"):
        pipeline.plan("ci", ["claim:no-such-claim"])
    r = CliRunner().invoke(main, ["all", "--out", str(tmp_path / "x"), "--workers", "2", "--scheduler",
                                  "tcp://127.0.0.1:1", "--quiet", "--only", "derive"])
    assert r.exit_code == 2 and "workers" in r.output and "Traceback" not in r.output


def test_report_without_saved_parts_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(main, ["report", "--out", str(tmp_path / "empty")])
    assert r.exit_code == 2 and "from" in r.output and not (tmp_path / "empty" / "index.html").exists()


def test_builtin_parts_register_where_they_compute():
    """derive, convergence, attention, claim, probe, fuzz and bench are found by discovery, each registered
    in the module that computes it; the pipeline defines none and imports nothing from the CLI."""
    assert parts.discover() == []
    where = {k: s.module for k, s in parts.REGISTRY.items()}
    assert where["derive"] == "verify.derive.derive_part"
    assert where["convergence"] == where["attention"] == "verify.engines.trajectory_parts"
    assert where["claim"] == "lemmas._claim_parts" and where["probe"] == "verify.probes.support.probe_parts"
    assert where["fuzz"] == "verify.fuzz.budget" and where["reconcile"] == "verify.reconcile.reconcile_part"
    assert where["bench"] == "verify.bench.timings"
    text = Path(pipeline.__file__).read_text()
    assert "@part(" not in text and ".cli" not in text


def _real_subset() -> list[str]:
    """derive, the built-in parts, and one cheap claim and probe (the cheapest at ci: a negative control's claim,
    about 3 s of CPU, and the nonzero-init probe, about 9 s; reports/example/parts/*.json's cpu_seconds)."""
    only = ["derive", "convergence", "attention"]
    parts.discover()
    claims = parts.REGISTRY["claim"].arguments()
    probes = parts.REGISTRY["probe"].arguments()
    only.append(f"claim:{'neg-loss-monotone-any-eta' if 'neg-loss-monotone-any-eta' in claims else claims[0]}")
    only.append(f"probe:{'nonzero-init' if 'nonzero-init' in probes else probes[0]}")
    return only


@pytest.mark.slow
def test_real_pipeline_subset_through_the_cli(tmp_path):
    out = tmp_path / "rep"
    only = _real_subset()
    args = ["all", "--out", str(out), "--profile", "ci", "--quiet"] + [a for o in only for a in ("--only", o)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    validate(res)
    check_html(out)
    st = {p["name"]: p["status"] for p in res["parts"]}
    assert set(st) == set(only)
    assert st["derive"] == st["convergence"] == st["attention"] == "ok", res["parts"]
    conv = res["convergence"]["quantities"]
    assert abs(conv["excess_loss"]["fitted_slope"] + 1) < 0.05
    assert res["derivation"]["reduction"]["identity"]["proved"] is True
    # The verdicts of the built-in parts are decided from their evidence records.
    recs = {p: json.loads((out / WORK / "parts" / f"{p}.json").read_text()) for p in ("derive", "convergence")}
    assert recs["derive"]["result"]["verdict"] == "proved" and recs["derive"]["result"]["scope_label"].startswith("all dimensions")
    assert recs["convergence"]["result"]["verdict"] == "supported"
    assert all(e["kind"] == "float64" for e in recs["convergence"]["result"]["evidence"])
    # `verify report` rebuilds the same report from the saved parts, elsewhere.
    r = CliRunner().invoke(main, ["report", "--out", str(tmp_path / "again"), "--from", str(out)])
    assert r.exit_code == 0, r.output
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["questions"] == res["questions"] and again["parts"] == [p | {"reused": False} for p in res["parts"]]


SAVED, HELD = "attention", "claim"               # saved first (order 11), then held (order 20)
SAVED_FILE, HELD_PART = "attention.json", "claim:neg-loss-monotone-any-eta"   # the cheapest claim at ci


def _gated_run(tmp_path, quiet=True):
    """(command, environment, out, scratch folder, gate folder) of a real `verify all` of two real parts on one
    worker: attention runs and is saved first (parts run in their order), then a negative control's claim holds
    (tests/gate.py) until the test releases it. The two cheapest real parts at ci (about 5 s and 2 s of CPU,
    reports/example/parts/*.json's cpu_seconds; convergence, 17 s, was the saved part before): what these tests
    check is the run's interruption and resumption, the same for any part."""
    out, tmp, gate = tmp_path / "rep", tmp_path / "tmp", tmp_path / "gate"
    tmp.mkdir()
    gate.mkdir()
    cmd = [sys.executable, "-c", "from verify.cli import main; main()", "all", "--out", str(out),
           "--workers", "1", "--only", SAVED, "--only", HELD_PART] + (["--quiet"] if quiet else [])
    return cmd, gate_env(gate, dict(os.environ, TMPDIR=str(tmp)), hold_part=HELD), out, tmp, gate


def _stop_group(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.slow
def test_killed_process_resumes(tmp_path):
    """Kill a real `verify all` (our own process group) while a part runs, one part being saved; rerun completes
    it. The part process that was running (its own session: the kill does not reach it) sees its worker gone,
    stops and removes its verify-part-* folder."""
    cmd, env, out, tmp, gate = _gated_run(tmp_path)
    pdir = out / WORK / "parts"
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: started(gate, HELD) and (pdir / SAVED_FILE).exists(),
                 f"{SAVED} saved and {HELD_PART} running", proc=proc)
    finally:
        _stop_group(proc)                                     # SIGKILL to the whole group, while the claim runs
    assert not (out / "index.html").exists() and not (out / "results.json").exists()
    wait_for(lambda: not _our_processes(str(tmp)), "the part process gone after its worker")
    saved = {json.loads(f.read_text())["part"] for f in pdir.glob("*.json")}
    assert saved == {SAVED}                                    # the held part was running, never saved
    release(gate)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    # a folder the killed worker had no time to remove is removed by the next part run (its worker is gone)
    assert not list(tmp.glob("verify-part-*"))
    res = json.loads((out / "results.json").read_text())
    assert {p["name"] for p in res["parts"] if p["reused"]} == {SAVED}
    assert {p["name"]: p["status"] for p in res["parts"]} == {SAVED: "ok", HELD_PART: "ok"}
    assert (out / "index.html").is_file()


def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.skipif(_git("rev-parse", "--git-dir").returncode != 0, reason="not a git checkout")
def test_default_outputs_are_gitignored_and_the_example_is_tracked():
    """`verify all`, `verify sweep` and `verify bench` write by default to gitignored folders (with their
    lock files beside them); the committed example report lives where only a deliberate --out writes."""
    from verify.bench.timings import run_bench
    from verify.run.lock import lock_path
    from verify.sweep.run import DEFAULT_OUT as SWEEP_OUT
    import inspect
    bench_out = inspect.signature(run_bench).parameters["out_dir"].default
    for folder in (pipeline.DEFAULT_OUT, SWEEP_OUT, bench_out):
        for f in ("index.html", "results.json", "sweep.parquet", "bench.json", "_work/parts/x.json",
                  "figures/a.png"):
            assert _git("check-ignore", "-q", f"{folder}/{f}").returncode == 0, f"{folder}/{f} is not ignored"
        lock = lock_path(ROOT / folder).relative_to(ROOT)
        assert _git("check-ignore", "-q", str(lock)).returncode == 0, lock
    assert pipeline.DEFAULT_OUT != "reports/example"
    tracked = _git("ls-files", "reports/example").stdout.split()
    assert "reports/example/index.md" in tracked and "reports/example/results.json" in tracked
    assert _git("check-ignore", "-q", "reports/example/index.md").returncode != 0


def test_saved_results_keep_one_type_per_value():
    """What a part returns is saved as strict JSON with numpy booleans as booleans (never the string "True"),
    arrays as lists and non-finite floats as strings: checked against hand-written values."""
    import numpy as np
    from verify.pipeline.child import json_ready
    saved = json_ready({"holds": np.bool_(True), "a": np.array([1.0, np.nan]), "x": np.float64(np.inf), "n": np.int64(3)})
    assert saved == {"holds": True, "a": [1.0, "nan"], "x": "inf", "n": 3}
    assert saved["holds"] is True


OLD_RUNNER_MODULES = ("pipeline", "executor", "partrun", "parts", "codeversion", "folderlock", "atomic")


@pytest.mark.slow
def test_the_runner_is_one_subpackage_with_no_shims_left():
    """The runner's modules live in verify/run/ only: nothing remains at the old top-level paths (nor
    verify/report/atomic.py, merged into verify/run/atomic.py), and no source imports them."""
    import ast
    for name in OLD_RUNNER_MODULES:
        assert not (ROOT / "verify" / f"{name}.py").exists(), name
    assert not (ROOT / "verify" / "report" / "atomic.py").exists()
    old = {f"verify.{n}" for n in OLD_RUNNER_MODULES} | {"verify.report.atomic"}
    for f in list((ROOT / "verify").rglob("*.py")) + list((ROOT / "lemmas").rglob("*.py")):
        pkg = ".".join(f.relative_to(ROOT).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = pkg.rsplit(".", node.level - 1)[0] if node.level else ""
                target = ".".join(p for p in (base, node.module or "") if p) if node.level else node.module
                assert target not in old, f"{f}: imports {target}"
                assert not (target == "verify" and {a.name for a in node.names} & set(OLD_RUNNER_MODULES)), f


@pytest.mark.slow
def test_no_private_name_is_imported_from_another_package():
    """``from X import _y`` only inside X's own package (a private name is the business of its package)."""
    import ast
    for f in list((ROOT / "verify").rglob("*.py")) + list((ROOT / "lemmas").rglob("*.py")):
        parts_ = f.relative_to(ROOT).with_suffix("").parts
        pkg = ".".join(parts_[:-1]) if parts_[-1] != "__init__" else ".".join(parts_[:-1])
        for node in ast.walk(ast.parse(f.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
                continue
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            if not private:
                continue
            if node.level:
                base = pkg.rsplit(".", node.level - 1)[0] if node.level > 1 else pkg
                target = ".".join(p for p in (base, node.module or "") if p)
            else:
                target = node.module
            if not (target.startswith("verify") or target.startswith("lemmas")):
                continue                                     # a library's own convention (importlib.metadata ...)
            home = target if (ROOT / Path(*target.split("."))).is_dir() else target.rsplit(".", 1)[0]
            assert pkg == home or pkg.startswith(home + "."), f"{f}: from {target} import {', '.join(private)}"


# ----- nothing lost, nothing left running ---------------------------------------------------------------

def test_workers_are_capped_at_what_the_machine_holds(tmp_path, monkeypatch):
    """--workers 1000 on a machine of 2 cores: 2 workers start, and the run says why; the memory cap is
    the available memory over WORKER_MEMORY (hand values: 3 GiB available holds 3 workers of 1 GiB)."""
    from verify.run import execute
    monkeypatch.setattr(execute, "machine_capacity", lambda: (2, 3 * 2**30, 3))
    n, note = execute.local_workers(1000, 50)
    assert n == 2 and "capped at 2" in note and "2 cores" in note and "3.0 GB" in note and "holds 3" in note
    monkeypatch.setattr(execute, "machine_capacity", lambda: (8, 3 * 2**30, 3))
    assert execute.local_workers(1000, 50)[0] == 3                        # memory binds before the cores
    assert execute.local_workers(2, 50) == (2, "") and execute.local_workers(None, 1) == (1, "")
    Fakes(monkeypatch)
    monkeypatch.setattr(execute, "machine_capacity", lambda: (2, 3 * 2**30, 3))
    state = pipeline.run_parts(tmp_path / "rep", "ci", workers=1000, processes=False, isolate=False,
                               only=["derive", "claim"])
    assert len(state.executor["workers"]) == 2 and any("capped at 2" in n for n in state.notes)


def test_a_part_that_cannot_be_written_is_kept_elsewhere(tmp_path, monkeypatch):
    """The disk fills up mid-run: the part just computed is kept in a verify-unsaved-* folder (the same record
    that would have been saved), the run stops with one OutputError naming it, and no report is written."""
    import errno
    from verify.errors import OutputError
    fk = Fakes(monkeypatch)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)            # re-read TMPDIR
    real = pipeline.write_json_atomic

    def full(path, obj, *a):
        if Path(path).name == "derive.json":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, obj, *a)
    monkeypatch.setattr(pipeline, "write_json_atomic", full)
    with pytest.raises(OutputError) as info:
        run(tmp_path / "rep", only=["derive"])
    msg = str(info.value)
    assert "No space left on device" in msg and "derive.json" in msg and "verify-unsaved-parts-" in msg
    kept = list((tmp_path / "tmp").glob("verify-unsaved-parts-*/derive.json"))
    assert len(kept) == 1 and str(kept[0]) in msg
    rec = json.loads(kept[0].read_text())
    assert rec["part"] == "derive" and rec["status"] == "ok" and rec["result"]["replay"] == "verify derive"
    assert fk.calls == ["derive"] and not (tmp_path / "rep" / "index.html").exists()


def test_a_report_that_cannot_be_written_leaves_the_parts_and_no_half_report(tmp_path, monkeypatch):
    import errno
    from verify.errors import OutputError
    Fakes(monkeypatch)

    def full(*a, **k):
        from verify.run.atomic import new_folder
        new_folder(tmp_path / "rep")                     # the report had begun beside OUT
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(pipeline, "write_report", full)     # the pipeline imports the report at its top
    with pytest.raises(OutputError) as info:
        run(tmp_path / "rep", only=["derive"])
    assert "verify report --from" in str(info.value) and "1 parts are saved" in str(info.value)
    assert (tmp_path / "rep" / WORK / "parts" / "derive.json").is_file()
    assert not (tmp_path / ".rep.new").exists()


def test_report_from_a_folder_with_an_unreadable_part_counts_it_as_not_finished(tmp_path, monkeypatch):
    Fakes(monkeypatch)
    out = tmp_path / "rep"
    run(out, only=["derive", "claim"])
    pdir = out / WORK / "parts"
    n = len(list(pdir.glob("*.json")))
    (pdir / "claim--lemma-C.2.json").write_text('{"part": "claim:lemma-C.2", "sta')       # a torn write
    r = CliRunner().invoke(main, ["report", "--out", str(tmp_path / "again"), "--from", str(out)])
    assert r.exit_code == 0, r.output
    assert f"{n - 1} parts finished, 1 not" in r.stdout
    assert "claim--lemma-C.2.json cannot be read" in r.stderr
    res = json.loads((tmp_path / "again" / "results.json").read_text())
    bad = next(p for p in res["parts"] if p["name"] == "claim:lemma-C.2")
    assert bad["status"] == "failed" and "cannot be read" in bad["error"]


def test_a_convention_keys_the_saved_parts_and_reaches_the_parts_that_take_it(tmp_path, monkeypatch):
    """A part function with a ``convention`` keyword receives the run's convention; the convention is in every
    part's options, so a run under another convention does not reuse the reference run's parts."""
    fk = Fakes(monkeypatch)
    seen = []

    def derive(profile, convention=None):
        seen.append(convention)
        return FAKE["derive"]("")
    parts.REGISTRY.pop("derive")
    parts.part("derive", order=0)(derive)
    out = tmp_path / "rep"
    st = pipeline.run_parts(out, "ci", processes=False, isolate=False, only=["derive", "claim"])
    assert seen == [None] and all("convention" not in r["options"] for r in st.done)
    fk.calls.clear()
    st = pipeline.run_parts(out, "ci", processes=False, isolate=False, only=["derive", "claim"],
                            convention={"loss": "mean"})
    assert seen == [None, {"loss": "mean"}] and len(fk.calls) == 2          # nothing reused across conventions
    recs = {r["part"]: r for r in st.done}
    assert all(r["options"]["convention"] == {"loss": "mean"} for r in recs.values())
    assert "convention_note" not in recs["derive"] and "reference convention" in recs["claim:lemma-C.2"]["convention_note"]


def _process_tree(pid: int) -> list[str]:
    """The command lines (shortened) of ``pid``'s process group and of its descendants, for a failure message."""
    import psutil
    found = []
    for p in psutil.process_iter(["pid", "ppid", "cmdline"]):
        try:
            if os.getpgid(p.pid) == pid or pid in [a.pid for a in p.parents()]:
                found.append(f"{p.pid}<-{p.info['ppid']}: {' '.join(p.info['cmdline'] or [])[:160]}")
        except (psutil.Error, ProcessLookupError):
            continue
    return found


def _our_processes(marker: str) -> list[str]:
    """Command lines of running processes that mention ``marker`` (a test's own temporary folder)."""
    found = []
    for p in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmd = p.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and "pytest" not in cmd:
            found.append(cmd)
    return found


@pytest.mark.slow
def test_ctrl_c_stops_verify_all_cleanly_and_the_rerun_resumes(tmp_path):
    """SIGINT to the whole process group of a real `verify all` (what Ctrl-C at a terminal sends) while a part runs,
    another being saved: one line on stderr and no traceback, exit status 130, no part process left running, no
    verify-part-* folder left, and the same command then reuses the saved part."""
    cmd, env, out, tmp, gate = _gated_run(tmp_path, quiet=False)
    pdir = out / WORK / "parts"
    proc = start_as_from_a_terminal(cmd, env)
    try:
        wait_for(lambda: started(gate, HELD) and (pdir / SAVED_FILE).exists(),
                 f"{SAVED} saved and {HELD_PART} running", proc=proc)
        os.killpg(proc.pid, signal.SIGINT)                    # the claim is running in its child process
        try:
            _, err = proc.communicate(timeout=WAIT_LIMIT)
        except subprocess.TimeoutExpired:
            alive = "running" if proc.poll() is None else f"exited {proc.returncode}"
            tree = _process_tree(proc.pid)
            _stop_group(proc)
            _, err = proc.communicate()
            raise AssertionError(f"verify all ({alive}) or a process holding its output did not end "
                                 f"{WAIT_LIMIT:.0f} s after SIGINT; processes: {tree}; stderr: {err}") from None
    finally:
        _stop_group(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("Error: interrupted") and "run the same command again" in last, err
    assert not list(tmp.glob("verify-part-*")) and not _our_processes(str(tmp))
    assert not (out / "index.html").exists()
    saved = {json.loads(f.read_text())["part"] for f in pdir.glob("*.json")}
    assert saved == {SAVED}
    release(gate)
    r = subprocess.run(cmd + ["--quiet"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert {p["name"] for p in res["parts"] if p["reused"]} == saved
