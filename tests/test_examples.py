"""The documented example commands (verify.bench.examples): what counts as one, the bench times exactly the pages' list,
and every example of the real pages still parses as a command."""
import shlex

import click
import pytest

from verify.bench import timings as bench, examples
from verify.cli import bench as bench_cli
from verify.cli import main as cli

PAGE = """# A page

```
$ cat my.json
{"D": 8}
$ cat other.toml
loss = "mean"
```

```
verify run --D 8 --K 2 --preset sts \\
           --steps 10 --json   # a comment
verify atlas --rho LO..HI --x 1/64 [--save FILE]
verify check --regime FILE
verify all --profile ci
$ verify probe --list
```

```python
verify = 1   # python, not a command
```

```text
verify fuzz --examples 3
```
"""


@pytest.fixture
def site(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "docs" / "b.md").write_text("```\nverify derive --json\n```\n", encoding="utf-8")
    return tmp_path


def test_examples_are_the_concrete_verify_lines_of_shell_blocks(site):
    got = [(e.page, e.line, e.command) for e in examples.documented_examples(site)]
    assert got == [("README.md", 11, "verify run --D 8 --K 2 --preset sts --steps 10 --json"),
                   ("README.md", 15, "verify all --profile ci"),
                   ("README.md", 16, "verify probe --list"),
                   ("docs/" + "b.md", 2, "verify derive --json")]
    assert examples.documented_files(site) == {"my.json": '{"D": 8}\n', "other.toml": 'loss = "mean"\n'}


def test_the_bench_times_the_pages_examples_and_no_other(site, monkeypatch):
    """The examples target runs what the pages say, in page order, in a folder holding their input files; the
    examples with a budget of their own are listed with why, not run."""
    ran = []

    def fake(ex, folder, budget, baseline):
        ran.append((ex.command, sorted(p.name for p in folder.iterdir())))
        met = ex.command != "verify derive --json"
        return {"command": ex.command, "met": met, "seconds": 1.0, "cpu_seconds": 1.0, "stopped": False,
                "exit_status": 0}

    monkeypatch.setattr(examples, "run_example", fake)
    res = examples.time_examples(site)
    assert ran == [("verify run --D 8 --K 2 --preset sts --steps 10 --json", ["my.json", "other.toml"]),
                   ("verify probe --list", ["my.json", "other.toml"]),
                   ("verify derive --json", ["my.json", "other.toml"])]
    assert [s["command"] for s in res["own_budget"]] == ["verify all --profile ci"]
    assert res["met"] is False and res["over_budget"] == ["verify derive --json"]


@pytest.mark.slow
def test_an_example_is_timed_and_its_failure_reported(tmp_path):
    ok = examples.run_example(examples.Example("x.md", 1, "verify probe --list"), tmp_path, budget=600)
    bad = examples.run_example(examples.Example("x.md", 2, "verify run --D 0"), tmp_path, budget=600)
    assert ok["exit_status"] == 0 and ok["met"] and ok["seconds"] > 0 and ok["ratio"] == round(ok["seconds"] / 600, 3)
    assert bad["exit_status"] == 2 and not bad["met"] and "D" in bad["error"]


def test_an_example_meets_its_budget_by_its_cpu_time_over_the_same_run_s_baseline(tmp_path):
    """The budget is a ratio to a baseline measured in the same run: the same command meets it against a slow
    baseline and misses it against a baseline a million times faster than its own CPU time allows (exit 0, not
    stopped, so only the ratio decides); the target is the budget over the baseline's seconds on the reference
    machine (60 s / 0.06 s = 1000)."""
    from verify.run.speed import REFERENCE_CPU_SECONDS
    ex = examples.Example("x.md", 1, "verify probe --list")
    slow = examples.run_example(ex, tmp_path, budget=60, baseline=10.0)
    fast = examples.run_example(ex, tmp_path, budget=60, baseline=1e-6)
    assert slow["target_ratio"] == fast["target_ratio"] == round(60 / REFERENCE_CPU_SECONDS, 1) == 1000
    assert slow["exit_status"] == fast["exit_status"] == 0 and not fast["stopped"]
    assert slow["met"] and slow["baseline_ratio"] < 1000
    assert not fast["met"] and fast["baseline_ratio"] > 1000


def test_the_bench_only_choices_are_its_targets():
    option = next(p for p in bench_cli.bench_cmd.params if p.name == "only")
    assert sorted(option.type.choices) == sorted(bench.ONLY)


@pytest.mark.parametrize("example", examples.documented_examples(), ids=lambda e: f"{e.page}:{e.line}")
def test_every_documented_example_parses(example):
    """Each example of the real pages names a subcommand and options it takes (a renamed flag fails here)."""
    words = shlex.split(example.command)
    assert words[0] == "verify"
    ctx = click.Context(cli)
    cmd = cli.get_command(ctx, words[1])
    assert cmd is not None, f"{example.command}: no subcommand {words[1]!r}"
    cmd.make_context(words[1], example.argv()[1:], resilient_parsing=False)
