"""Hostile input that once ended in a traceback, a hang, a silent accept or an unclear line (issue 29, sections 3
and 4): one table (argv, expected exit status, a phrase the one line must hold[, environment]), one test.

Paths in argv use the placeholders of ``places`` (files made once per module: a symlink to /dev/zero, a sparse
100 MB regime file, JSON nested 100,000 deep, a key given twice, ...). Every row fails before any work. Below the
table: a report whose disk fills up (a real 12 kB tmpfs), part records of the wrong shape, and --arb's help.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
C = ["certify", "--D", "4", "--K", "2", "--preset", "cnn", "--eta", "1/4", "--vstar-norm", "2"]
R = ["run", "--D", "4", "--K", "2", "--preset", "sts"]
LONG = "a" * 6000                       # one name of 6,000 characters
DEEP = "a/" * 3000                      # 6,000 characters in short names

ROWS = [
    # --- section 3: bounded reads (a device, a huge file, deep nesting), the content never echoed -------------
    (["check", "wp-zero", "--regime", "{ZERO}"], 2, "--regime {ZERO}: must be a regular JSON regime file, not a "
                                                    "character device"),
    (["check", "wp-zero", "--regime", "{HUGE}"], 2, "is 100.0 MB, more than the 1.0 MB a JSON regime file may hold"),
    (["run", "--regime", "{HUGE}"], 2, "more than the 1.0 MB"),
    (["check", "wp-zero", "--regime", "{DEEP}"], 2, "nest more deeply than a JSON reader follows"),
    (["run", "--regime", "{DEEP}"], 2, "nest more deeply"),
    (["certify", "--regime", "{DEEP}"], 2, "--regime {DEEP}: must be a valid JSON regime file"),
    (["certify", "--family", "{DEEP}", "--query", "D=8"], 2,
     "--family {DEEP}: must be a valid family certificate file"),
    (["certify", "--family", "{ZERO}", "--query", "D=8"], 2, "--family {ZERO}: must be a regular family certificate "
                                                              "file, not a character device"),
    (["certify", "--family", "{DIR}", "--query", "D=8"], 2, "not a folder"),
    (["certify", "--recheck", "{ZERO}"], 2, "--recheck {ZERO}: must be a regular certificate file"),
    (["certify", "--recheck", "{DIR}/missing.json"], 2, "must be an existing certificate file"),
    (R + ["--vstar", "{DEEP}"], 2, "--vstar {DEEP}: must be a valid JSON file"),
    (["run", "--D", "4", "--supports", "{ZERO}"], 2, "not a character device"),
    (["check", "neg-alpha-le-1", "--convention", "{ZERO}"], 2, "must be a regular TOML or JSON convention file"),
    (["reconcile", "--claims", "{DEEP}"], 2, "--claims {DEEP}: must be a valid JSON file"),
    (["compare", "{ZERO}", "{DIR}"], 2, "must be a report folder holding results.json"),
    (["check", "wp-zero", "--regime", "{LONGVALUE}"], 2, "... (200,002 characters)"),    # a long value is cut
    # --- section 4: tracebacks ------------------------------------------------------------------------------
    (C + ["--u0", "0"], 2, "--u0 0: must satisfy 0 < u0 < 1"),                     # was ZeroDivisionError
    (C + ["--u0", "3/2"], 2, "must satisfy 0 < u0 < 1"),
    (C + ["--save", "{DIR}/" + LONG], 2, "paths here hold at most"),
    (C + ["--save", "{DIR}/" + "b" * 250], 2, "names here hold at most"),
    (C + ["--save", "{DIR}"], 2, "must be a file path in an existing folder"),
    (["sweep", "--grid", "D=8", "--out", "{DIR}/" + LONG], 2, "--out {DIR}/aaaa"),    # was OSError: name too long
    (["sweep", "--grid", "D=8", "--out", "{DIR}/" + DEEP], 2, "paths here hold at most"),
    (["all", "--only", "derive", "--out", "{DIR}/" + LONG], 2, "(6,"),                 # the length, not the path
    (["all", "--only", "derive", "--out", "{DIR}/" + DEEP], 2, "paths here hold at most"),
    (["report", "--out", "{DIR}/" + DEEP, "--from", "{DIR}"], 2, "paths here hold at most"),
    (["sweep", "--grid", "D=8", "--steps", "10", "--claim-steps", "10", "--out", "{DIR}/s"], 2,
     "invalid TMPDIR = {DIR}/no-such-folder: must be a folder that can be written (it does not exist)",
     {"TMPDIR": "{DIR}/no-such-folder"}),
    (["all", "--only", "derive", "--out", "{DIR}/a"], 2, "unset TMPDIR", {"TMPDIR": "{FILE}"}),
    # --- section 4: silent accepts --------------------------------------------------------------------------
    (["check", "wp-zero", "--regime", "{TWICE}"], 2, 'gives the key "D" twice'),   # was: the later value, silently
    (["run", "--regime", "{TWICE}"], 2, 'gives the key "D" twice'),
    (["check", "neg-alpha-le-1", "--convention", "{CONV_TWICE}"], 2, 'gives the key "loss" twice'),
    (["all", "--timeout", "nan"], 2, "--timeout nan: must be a finite number of seconds >= 1"),
    (["all", "--timeout", "inf"], 2, "--timeout inf: must be a finite number"),
    (["sweep", "--steps", "10", "--claim-steps", "100"], 2,
     "--claim-steps 100 with --steps 10: must be at most --steps"),
    # --- section 4: unclear messages ------------------------------------------------------------------------
    (["check", "neg-alpha-le-1", "--convention", "{YAML}"], 2, "YAML is not supported: write the same table as TOML "
                                                               "(.toml) or JSON (.json)"),
    (["check", "neg-alpha-le-1", "--convention", "{BAD_JSON_CONV}"], 2, "must be a valid JSON file (a .toml name is "
                                                                        "read as TOML)"),
    (["check", "wp-zero", "--regime", "{REGIME_OK}", "--arb", "128"], 2, "no claim's per-regime check takes Arb yet"),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    regime = {"D": 4, "K": 2, "preset": "sts", "steps": 3}
    files = {"DEEP": "[" * 100_000 + "]" * 100_000, "TWICE": '{"D": 4, "K": 2, "preset": "sts", "D": 8, "steps": 3}',
             "CONV_TWICE.json": '{"loss": "mean", "loss": "sum"}', "YAML.yaml": "loss: mean\n",
             "BAD_JSON_CONV.cfgx": "loss = 'mean'", "FILE": "not a folder", "REGIME_OK": json.dumps(regime),
             "LONGVALUE": json.dumps(regime | {"D": "8" * 200_000})}
    out = {"DIR": str(d)}
    for name, text in files.items():
        (d / name).write_text(text)
        out[name.split(".")[0]] = str(d / name)
    os.symlink("/dev/zero", d / "zero.json")
    out["ZERO"] = str(d / "zero.json")
    with open(d / "huge.json", "wb") as fh:          # 100 MB, sparse: its length is all that is read
        fh.write(b'{"D": "')
        fh.truncate(100 * 2**20)
    out["HUGE"] = str(d / "huge.json")
    return out


def _fill(text: str, places: dict) -> str:
    for k in sorted(places, key=len, reverse=True):
        text = text.replace("{" + k + "}", places[k])
    return text


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0][0]}-{i}" for i, r in enumerate(ROWS)])
def test_hostile_input_is_one_clear_line(row, places):
    argv, status, phrase, env = (*row, {}) if len(row) == 3 else row
    argv = [_fill(a, places) for a in argv]
    res = CliRunner(env={k: _fill(v, places) for k, v in env.items()}).invoke(main, argv)
    out = res.output
    assert res.exit_code == status, (res.exit_code, out[:500], res.exception)
    assert not isinstance(res.exception, (RecursionError, KeyError, ZeroDivisionError, OSError, TypeError)), \
        res.exception
    assert out.startswith("Error: ") and out.strip().count("\n") == 0, out[:500]     # one line
    assert _fill(phrase, places) in out, out[:500]
    assert len(out) < 700, len(out)             # no file content and no 6,000-character path is echoed
    assert not list(Path(places["DIR"]).glob("s")) and not list(Path(places["DIR"]).glob("a"))   # nothing written


def test_the_table_covers_every_listed_case():
    text = " ".join(" ".join(r[0]) + " " + str(r[2]) for r in ROWS)
    for case in ("{ZERO}", "{HUGE}", "{DEEP}", "--u0 0", "TMPDIR", "{TWICE}", "--timeout nan", "--claim-steps 100",
                 "{YAML}", "--arb", "--family {DEEP}", LONG):
        assert case in text, case


# ----- part records of the wrong shape: counted as parts that did not finish, never a KeyError ----------------

def test_part_records_of_the_wrong_shape_are_counted_as_unfinished(tmp_path):
    """One genuine part (derive, from the committed example) and four foreign files: the report says 1 finished,
    4 not, and names each foreign file (by hand: the four files written here)."""
    src = tmp_path / "src" / "parts"
    src.mkdir(parents=True)
    (src / "derive.json").write_bytes((ROOT / "reports" / "example" / "parts" / "derive.json").read_bytes())
    foreign = {"claim--x.json": {"part": "claim:x", "status": "ok"},                 # no "kind": was KeyError 'kind'
               "claim--y.json": [1, 2], "claim--z.json": 7,
               "claim--w.json": {"part": "claim:w", "kind": "claim", "arg": "w", "status": "ok", "result": [1]}}
    for name, rec in foreign.items():
        (src / name).write_text(json.dumps(rec))
    res = CliRunner().invoke(main, ["report", "--out", str(tmp_path / "out"), "--from", str(tmp_path / "src")])
    assert res.exit_code == 0, (res.output, res.exception)
    assert "(1 parts finished, 4 not;" in res.stdout, res.stdout
    for name in foreign:
        assert f"{name} cannot be read as a part record" in res.stderr, res.stderr


# ----- a report whose disk fills up: exit 4, one line, nothing left beside OUT ---------------------------------

FULL = """
import json, sys
from click.testing import CliRunner
from verify.cli import main
r = CliRunner().invoke(main, ["report", "--out", sys.argv[1] + "/r", "--from", sys.argv[2]])
print(json.dumps([r.exit_code, r.output]))
"""


@pytest.mark.slow
def test_a_full_disk_leaves_no_lock_and_no_half_built_folder(tmp_path):
    """`verify report --out` on a 12 kB tmpfs (user and mount namespaces, as the read-only test of
    test_cli_errors.py): the report does not fit; one line with exit status 4, and the mount is left empty."""
    import shutil
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        pytest.skip("no user/mount namespaces here")
    full, src = tmp_path / "full", tmp_path / "src"
    full.mkdir()
    (src / "parts").mkdir(parents=True)
    (src / "parts" / "derive.json").write_bytes((ROOT / "reports" / "example" / "parts" / "derive.json").read_bytes())
    script = (f'mount -t tmpfs -o size=12k tmpfs {full} && "$@" && ls -A {full}')
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", sys.executable, "-c", FULL, str(full), str(src)],
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = res.stdout.strip().splitlines()
    code, out = json.loads(lines[0])
    assert code == 4 and out.startswith("Error: could not write") and out.strip().count("\n") == 0, out
    assert "No space left on device" in out and "is as it was" in out, out
    assert lines[1:] == [], lines            # `ls -A` of the mount: no .r.lock, no .r.new, no r


# ----- --arb of verify check: not advertised while no claim's check takes Arb ------------------------------------

def test_check_arb_is_not_advertised():
    from verify.cli.check import certified_claims
    assert certified_claims() == []                      # no claim's check has a `bits` parameter today
    assert "--arb" not in CliRunner().invoke(main, ["check", "--help"]).output
    readme = (ROOT / "README.md").read_text()
    assert "`--arb BITS`: certified, where the claim's check takes Arb" not in readme


# ----- folders the toolkit reads back (the fuzz database, a sweep's rows): a foreign device file is skipped ---------

def test_a_device_in_a_database_or_among_saved_rows_is_skipped_not_read(tmp_path):
    """A symlink to /dev/zero among the stored counterexamples (or a sweep's saved rows) would be read forever; it is
    skipped as a foreign file, and the one genuine entry written here is all that is loaded."""
    from verify.fuzz.store import CounterexampleStore
    from verify.sweep.run import load_row
    store = CounterexampleStore(tmp_path / "db", "neg-alpha-le-1")
    store.path.mkdir(parents=True)
    os.symlink("/dev/zero", store.path / "0000.json")
    (store.path / "1111.json").write_text(json.dumps({"regime": {"D": 4}, "seed": 1}))
    assert [e["seed"] for e in store.load()] == [1]
    assert load_row(store.path / "0000.json") is None
    (tmp_path / "row.json").write_text(json.dumps({"status": "ok", "x": 1}))
    assert load_row(tmp_path / "row.json") == {"status": "ok", "x": 1}
