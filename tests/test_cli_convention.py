"""The reviewer's convention end to end: ``verify all`` under ``--convention FILE`` (or the convention flags)
records it, states it in the report's header, runs the claim parts under it, and ``verify compare`` against
a reference run of the same parts lists what changed; bad convention files exit 2 with one line naming the key."""
from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest
from click.testing import CliRunner

from verify.cli import main

PARTS = ["--only", "claim:neg-alpha-le-1", "--only", "claim:loss-monotone"]


def _all(out, *extra):
    res = CliRunner().invoke(main, ["all", "--profile", "ci", *PARTS, "--out", str(out), "--quiet", "--workers", "1",
                                    *extra])
    assert res.exit_code == 0, res.output
    return json.loads((out / "results.json").read_text())


def _first_overshoot(eta: Fraction, steps: int) -> int:
    """The first t with some alpha_i(t) > 1 + 1e-12 (the control's threshold) in the summed-loss convention."""
    from verify import iterate, make_setting
    s = make_setting(D=8, preset="cnn", K=2, M=2, d=3, eta=eta)
    tr = iterate(s, steps, "reduced", "float64", checkpoints=range(steps + 1))
    return next(r.step for r in tr.records if max(float(a) for a in r.alpha) > 1 + 1e-12)


@pytest.mark.slow
def test_a_convention_round_trip_through_verify_all_and_compare(tmp_path):
    """The mean loss divides the loss scale c_L by M N: in the control's cnn regime (D = 8, K = 2, so N = 4, and
    M = 2) every GD update is 1/8 of the summed loss's, so its first overshoot of alpha is the summed-loss run's
    at eta / 8 (computed here in the reference convention, by hand-scaled eta), not at eta."""
    conv = tmp_path / "mean.toml"
    conv.write_text('loss = "mean"\n')
    ref, mean = _all(tmp_path / "ref"), _all(tmp_path / "mean", "--convention", str(conv))
    assert ref["convention"]["reference"] is True and ref["convention"]["values"] == {}
    assert mean["convention"]["values"] == {"loss": "mean"} and mean["convention"]["flags"] == ["--loss", "mean"]
    assert "**Convention**: the reference convention (docs/setting.md) except --loss mean." in \
        (tmp_path / "mean" / "index.md").read_text()
    assert "the default one" in (tmp_path / "ref" / "index.md").read_text()
    # the claim parts took the convention: no record says it did not apply, and their options key it
    parts = {p["name"]: p for p in mean["parts"]}
    assert all(p["convention_note"] is None for p in parts.values())
    saved = json.loads((tmp_path / "mean" / "parts" / "claim--neg-alpha-le-1.json").read_text())
    assert saved["options"]["convention"] == {"loss": "mean"}
    out = tmp_path / "cmp.md"
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "ref"), str(tmp_path / "mean"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert text == res.stdout
    assert "- **B**: `" in text and "except --loss mean" in text and "(profile ci): the reference convention" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| `neg-alpha-le-1`"))
    t_ref, t_mean = (int(t) for t in re.findall(r"> 1 at t = (\d+)", row))
    assert t_ref == _first_overshoot(Fraction(1, 10), 2000)
    assert t_mean == _first_overshoot(Fraction(1, 10) / 8, 2000) and t_mean != t_ref
    # loss-monotone's regimes have M = N = 1: the mean loss is the summed one there, nothing of it changes
    assert "loss-monotone" not in text


@pytest.mark.parametrize("content, name, phrase", [
    ('{"law_var": "1/4"}', "c.json", 'unknown key "law_var"'),              # the flags' names: law-var
    ('{"los": "mean"}', "c.json", "did you mean loss?"),
    ('{"loss": "avg"}', "c.json", "loss = avg (in --convention"),
    ('p-lambda = "-1"\n', "c.toml", "p-lambda = -1 (in --convention"),
    ('loss = "mean"\nloss = "sum"\n', "c.toml", "must be valid TOML"),
    ("[1, 2]", "c.json", "must hold a table"),
])
def test_bad_convention_files_exit_2_with_one_line_naming_the_key(tmp_path, content, name, phrase):
    f = tmp_path / name
    f.write_text(content)
    res = CliRunner().invoke(main, ["check", "neg-alpha-le-1", "--convention", str(f)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and phrase in res.output, res.output
    assert "Traceback" not in res.output


def test_a_key_in_the_file_and_as_a_flag_is_refused(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('loss = "mean"\n')
    for cmd in (["check", "neg-alpha-le-1"], ["probe", "k-zero"], ["all", "--out", str(tmp_path / "o")]):
        res = CliRunner().invoke(main, [*cmd, "--convention", str(f), "--loss", "sum"])
        assert res.exit_code == 2 and "give it once" in res.output, res.output
    assert not (tmp_path / "o").exists()                       # nothing half-written


def test_compare_refuses_a_folder_without_results(tmp_path):
    res = CliRunner().invoke(main, ["compare", str(tmp_path), str(tmp_path)])
    assert res.exit_code == 2 and "REPORT_A" in res.output and "results.json" in res.output, res.output


def test_check_regime_takes_the_convention_options_over_the_file(tmp_path):
    """The same regime file, 60 steps: in the summed convention alpha overshoots 1 first at the step computed
    apart (before 60), under --loss mean only after it (the summed-loss run at eta / (M N) = eta / 8)."""
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"D": 8, "K": 2, "M": 2, "d": 3, "preset": "cnn", "eta": "1/10", "steps": 60}))

    def check(*extra):
        res = CliRunner().invoke(main, ["check", "neg-alpha-le-1", "--regime", str(f), "--json", "--quiet", *extra])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)
    ref, mean = check(), check("--loss", "mean")
    assert ref["regime"]["loss"] == "sum" and mean["regime"]["loss"] == "mean"
    assert _first_overshoot(Fraction(1, 10), 2000) <= 60 < _first_overshoot(Fraction(1, 10) / 8, 2000)
    assert ref["holds"] is False and f"at t = {_first_overshoot(Fraction(1, 10), 2000)}" in ref["detail"]
    assert mean["holds"] is True
