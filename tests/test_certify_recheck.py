"""Saved certificates and the independent re-checker (python -m recheck).

The re-checker is a second program: it parses the file's formulas itself, checks their identities exactly and
re-computes every enclosure. Each test tampers with one stated number (or drops one box) and asserts that the
re-checker rejects the file, naming the step; the untouched file is accepted. Its independence is asserted from
the outside: a fresh interpreter running it imports no module of the toolkit but the two package files.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
REGIME = ["--D", "4", "--K", "2", "--preset", "cnn", "--eta", "1/4", "--vstar-norm", "2"]   # as conftest's


def recheck(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "recheck", str(path)], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def saved(regime_certificate) -> Path:
    return regime_certificate          # tests/conftest.py: made once per session


def tampered(saved: Path, tmp_path: Path, change) -> Path:
    data = json.loads(saved.read_text())
    change(data)
    out = tmp_path / "tampered.json"
    out.write_text(json.dumps(data))
    return out


def test_saved_file_has_the_named_keys(saved):
    d = json.loads(saved.read_text())
    assert d["format"] == "verify-certificate" and d["kind"] == "slow-manifold"
    assert {"map", "prefix", "region", "shells", "lemma", "bounds", "trusts"} <= set(d)
    assert d["region"]["boxes"] and {"u0", "C"} <= set(d["region"])
    assert [b["T"] for b in d["bounds"]] == [0, 17, 40, 10**6, 10**12]
    assert all(set(b) >= {"T", "excess_loss", "s_err", "w_err"} and len(b["s_err"]) == 2 for b in d["bounds"])
    assert "verify.derive.reduction_proof" in d["trusts"][0]["proof"] and d["trusts"][0]["scope"]
    assert {"alpha", "delta", "u", "eps"} <= set(d["prefix"]["end"])


def test_the_untouched_file_is_verified(saved):
    r = recheck(saved)
    assert r.returncode == 0, r.stdout + r.stderr
    for step in ("map-identities", "model", "regime", "parameters", "prefix", "region", "shells", "bounds",
                 "constants", "limits"):
        assert f"ok  {step}" in r.stdout


def _tighten(pair, which):
    """Move one end of a stated [lo, hi] inwards by a third of its width (the stated bounds are rounded outward by
    about a tenth of it)."""
    lo, hi = Fraction(pair[0]), Fraction(pair[1])
    w = (hi - lo) / 3
    return [str(lo + w), pair[1]] if which == 0 else [pair[0], str(hi - w)]


@pytest.mark.slow
@pytest.mark.parametrize("change, step", [
    (lambda d: d["bounds"][4].__setitem__("excess_loss", _tighten(d["bounds"][4]["excess_loss"], 0)), "bounds"),
    (lambda d: d["bounds"][1].__setitem__("w_err", [d["bounds"][1]["w_err"][0]] * 2), "bounds"),   # T = 17 <= T0
    (lambda d: d["region"]["boxes"].pop(len(d["region"]["boxes"]) // 2), "region-cover"),
    (lambda d: d["shells"][5].__setitem__("b", str(Fraction(d["shells"][5]["b"]) * Fraction(999, 1000))), "shells"),
    (lambda d: d["prefix"].__setitem__("T0", d["prefix"]["T0"] // 2), "prefix"),
    (lambda d: d["region"].__setitem__("C_runs", [[str(Fraction(v) / 64), n] for v, n in d["region"]["C_runs"]]),
     "prefix-in-region"),
    (lambda d: d["region"]["C_runs"][-1].__setitem__(1, d["region"]["C_runs"][-1][1] + 1), "format"),   # one too many
    (lambda d: d["region"]["C_runs"][0].__setitem__(1, 0), "format"),
    (lambda d: d["region"]["boxes"][0].__setitem__(3, str(4 * Fraction(d["region"]["C"]))), "region-invariant"),
    (lambda d: d["constants"]["s_err"].__setitem__("c_hi", str(Fraction(d["constants"]["s_err"]["c_lo"]))), "constants"),
    (lambda d: d["map"]["reduced_map"].__setitem__("delta_increment",
                                                  d["map"]["reduced_map"]["delta_increment"] + "*(1 + 1/1000)"),
     "map-identities"),
    (lambda d: d["parameters"].__setitem__("eta_V", "1/3"), "regime"),       # not the regime block's
    (lambda d: d["invariants"].__setitem__("x", str(Fraction(d["invariants"]["x"]) * 2)), "parameters"),
])
def test_a_tampered_file_is_rejected_naming_the_step(saved, tmp_path, change, step):
    r = recheck(tampered(saved, tmp_path, change))
    assert r.returncode == 1, r.stdout
    assert r.stdout.splitlines()[-1].startswith(f"FAILED {step}"), r.stdout


def test_cli_recheck_runs_the_checker(saved, tmp_path):
    ok = CliRunner().invoke(main, ["certify", "--recheck", str(saved)])
    assert ok.exit_code == 0 and "certificate verified" in ok.stdout
    bad = tampered(saved, tmp_path, lambda d: d["region"]["boxes"].pop(0))
    r = CliRunner().invoke(main, ["certify", "--recheck", str(bad)])
    assert r.exit_code == 1 and "FAILED region-cover" in r.stdout


def test_the_checker_imports_nothing_of_the_toolkit(saved):
    """Its own import statements name only the standard library and flint (and dask.distributed inside the function
    that spreads a family's cells over --workers); and a fresh interpreter running it
    (python -X importtime -m recheck) loads no verify or lemmas module at all, and no SymPy, NumPy or mpmath."""
    tree = ast.parse((ROOT / "recheck" / "certificates.py").read_text())
    roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    roots |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert not any(isinstance(n, ast.ImportFrom) and n.level > 0 for n in ast.walk(tree))
    # dask only inside a function (for --workers N), never at the top of the module
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert roots <= set(sys.stdlib_module_names) | {"flint", "__future__", "dask"}, roots
    assert top <= set(sys.stdlib_module_names) | {"flint", "__future__"}, top
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "recheck", str(saved)],
                       capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    ours = {m for m in loaded if m.split(".")[0] in ("verify", "lemmas")}
    assert not ours, ours
    assert not {m for m in loaded if m.split(".")[0] in ("sympy", "numpy", "mpmath", "z3", "cvc5")}


def test_save_refuses_a_bad_path_before_any_work(tmp_path):
    r = CliRunner().invoke(main, ["certify", *REGIME, "--save", str(tmp_path / "no" / "such" / "dir" / "c.json")])
    assert r.exit_code == 2 and "--save" in r.stderr
    assert not (tmp_path / "no").exists()
