"""The field table (verify.model.spec) is what the user sees: the click options of ``verify run`` carry the flags,
defaults and help texts listed here by hand, make_setting's defaults are the reference convention of docs/setting.md
(hand-listed), the regime file's keys are the flags without their dashes, a replay command writes a random V*'s
norm from the setting itself (not from a prose string) and leaves the defaults out, and a bad value of every field
(through the command line, a regime file, a family's range) is one line naming the flag or key and the field's range."""
from __future__ import annotations

import importlib
import json
from dataclasses import replace
from fractions import Fraction

import click
import pytest
from click.testing import CliRunner

from verify.cli import main
from verify.cli.options import cli_message
from verify.cli.regime import KEYS
from verify.errors import InvalidParameter
from verify.model import make_setting, validate
from verify.model.convention import KEYWORDS, Convention
from verify.model.flags import setting_command
from verify.model.setting import MAKE_KEYWORDS
from verify.model.spec import BY_NAME, FIELDS, KINDS, REPLAY
from verify.sweep.grid import INT_AXES, NUMBER_AXES


def _run_params() -> dict:
    run = main.get_command(click.Context(main), "run")
    return {p.opts[0]: p for p in run.params if isinstance(p, click.Option)}


# flag -> (click name, default, type name or choices, help text) as `verify run --help` has shown them.
EXPECTED = {
    "--D": ("D", None, "integer", "sequence length (number of tokens); required unless --regime FILE gives it"),
    "--M": ("M", 1, "integer", "output dimension (rows of V*)"),
    "--eta": ("eta", "1/10", "text", "step size (read exactly: 0.07 is 7/100)"),
    "--eta-kq": ("eta_kq", None, "text", "separate step size for W_KQ (default: --eta)"),
    "--loss": ("loss", "sum", ["sum", "mean"], None),
    "--p-structure": ("p_structure", None, ["orthogonal", "general"],
                      "default: what --p-kind implies (general for sinusoidal, orthogonal otherwise)"),
    "--law-var": ("law_var", "1", "text", None),
    "--seed": ("seed", 0, "integer", None),
}


@pytest.mark.parametrize("flag", sorted(EXPECTED))
def test_run_options_keep_their_name_default_type_and_help(flag):
    name, default, typ, help_text = EXPECTED[flag]
    p = _run_params()[flag]
    assert (p.name, p.default, p.help) == (name, default, help_text)
    assert (list(p.type.choices) if isinstance(p.type, click.Choice) else p.type.name) == typ
    assert bool(p.show_default) == (default is not None)


def test_freeze_wp_is_a_switch_and_sigma_lists_the_families():
    params = _run_params()
    assert params["--freeze-wp"].is_flag and params["--freeze-wp"].help == "keep W_P at 0 (wp_trainable = False)"
    assert params["--sigma"].default == "identity"
    assert "relu" in params["--sigma"].help and "(the registered sigma families)" in params["--sigma"].help
    assert params["--data"].default == "gaussian" and "digits" in params["--data"].type.choices


def test_make_setting_defaults_are_the_reference_convention():
    c = make_setting(D=4, K=1, preset="cnn").config()
    hand = {"M": 1, "d": 1, "eta_v": "1/10", "eta_kq": "1/10", "seed": 0, "sigma": "identity", "law": "gaussian",
            "law_mean": "0", "law_var": "1", "noise_sd": "0", "loss": "sum", "p_kind": "identity",
            "p_structure": "orthogonal", "p_lambda": "1", "beta": "1", "init": "zero", "init_scale": "0",
            "relu_at_zero": "radial", "data": "gaussian", "wp_trainable": True, "vstar_norm": "1"}
    assert {k: c[k] for k in hand} == hand


def test_every_field_is_a_make_setting_keyword_and_a_regime_key():
    for f in FIELDS:
        assert f.kind in KINDS and f.replay in REPLAY, f
        assert f.setting_keyword in MAKE_KEYWORDS, f.name
        assert KEYS[f.flag[2:]] == f.name
    assert {f.flag[2:] for f in FIELDS} == set(KEYS)


def test_the_convention_flags_are_the_hand_listed_ones():
    assert list(KEYWORDS) == ["sigma", "data", "law", "law_mean", "law_var", "noise_sd", "loss", "p_kind",
                              "p_structure", "p_lambda", "beta", "init", "init_scale", "relu_at_zero",
                              "wp_trainable", "eta_kq_ratio"]
    assert KEYWORDS["wp_trainable"] == "--freeze-wp" and KEYWORDS["law_var"] == "--law-var"


def test_replay_writes_a_random_vstar_norm_and_leaves_defaults_out():
    s = make_setting(D=6, K=2, preset="cnn", M=2, d=3, vstar_norm="0.25", loss="mean", eta="0.5", eta_kq="0.5")
    cmd = setting_command("run", s)
    assert cmd == "verify run --D 6 --preset cnn --K 2 --M 2 --d 3 --eta 1/2 --loss mean --vstar-norm 1/4"
    unit = setting_command("run", make_setting(D=6, K=2, preset="cnn", eta_kq="1/5"))
    assert unit == "verify run --D 6 --preset cnn --K 2 --eta 1/10 --eta-kq 1/5"


@pytest.mark.parametrize("api_name, flag", [("eta_v", "--eta"), ("wp_trainable", "--freeze-wp"), ("eta", "--eta"),
                                            ("law_var", "--law-var")])
def test_an_error_naming_an_api_name_is_shown_as_its_flag(api_name, flag):
    run = main.get_command(click.Context(main), "run")
    ctx = click.Context(run)
    ctx.params = {"eta": "0.5", "freeze_wp": True, "law_var": "1"}
    msg = cli_message(InvalidParameter(api_name, "x", "must be checked"), ctx)
    assert msg.startswith(f"invalid {flag}"), msg


def test_the_number_fields_are_read_exactly_by_a_convention_and_a_sweep():
    assert NUMBER_AXES == ("eta", "eta_kq", "vstar_norm", "law_mean", "law_var", "noise_sd", "p_lambda", "beta",
                           "init_scale")
    assert INT_AXES == ("D", "K", "N", "M", "d", "seed")
    assert dict(Convention.from_options({"law_var": "0.25", "loss": "mean"}).values) == {"law_var": "1/4",
                                                                                         "loss": "mean"}


def test_a_data_model_keeps_the_entry_law_at_the_reference_defaults():
    with pytest.raises(InvalidParameter) as err:
        make_setting(data="digits", D=8, d=8, K=2, preset="cnn", law_var="0.5", law_mean="0.25")
    assert "law_mean = 1/4: must stay at its default 0" in str(err.value)
    assert "law_var = 1/2: must stay at its default 1" in str(err.value)
    make_setting(data="digits", D=8, d=8, K=2, preset="cnn", law_var="1.0", law_mean="0.00")   # the defaults, spelled


# ----- every field's bad value: one line naming the flag (or the regime-file key) and the field's range -------------

R = ["run", "--D", "4", "--K", "2", "--preset", "sts", "--steps", "1"]
# A bad value of each kind, by hand: below every integer field's range (D >= 1, K >= 0, ...), below every bounded
# number field's (> 0 or >= 0), not a number for the one with no range (law_mean), not a choice, not a spec.
BAD_TEXT = {"int": "-1", "number": "-1", "choice": "bogus", "text": "bogus", "file": "missing-file.json"}
# What the line must say for a few fields, written by hand from docs/setting.md (K and N are capped by --D 4).
HAND = {"--D": "D >= 1", "--K": "0 <= K <= 4", "--N": "1 <= N <= 4", "--M": "1 <= M <= 4096",
        "--seed": "seed >= 0", "--eta": "eta > 0", "--eta-kq": "eta_kq > 0", "--noise-sd": "noise_sd >= 0",
        "--law-mean": "decimal number", "--loss": "sum", "--p-kind": "permutation"}


def _bad_text(f) -> str:
    return "abc" if f.kind == "number" and f.valid is None else BAD_TEXT[f.kind]


def _one_line_error(res) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    assert res.output.startswith("Error: ") and res.output.strip().count("\n") == 0, res.output
    assert "Traceback" not in res.output
    return res.output


@pytest.mark.parametrize("f", [f for f in FIELDS if f.kind != "flag"], ids=lambda f: f.flag)
def test_a_bad_value_of_every_field_names_its_flag_and_range(f, tmp_path):
    argv = [a for a in R]
    if f.flag in argv:                                  # replace the valid regime's own value
        argv[argv.index(f.flag) + 1] = _bad_text(f)
    else:
        argv += [f.flag, _bad_text(f)]
    out = _one_line_error(CliRunner().invoke(main, argv, catch_exceptions=False))
    assert f.flag in out, out
    if f.flag in HAND:
        assert HAND[f.flag] in out, out
    if f.valid is not None:                             # the field's one range text, wherever it is checked
        assert f.range_text({"D": 4}) in out, out
    for choice in f.choices:                            # a choice names every valid one
        assert choice in out, out


JSON_BAD = {"int": -1, "number": "-1", "choice": "bogus", "text": "bogus", "file": "missing-file.json", "flag": "yes"}


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.flag)
def test_a_bad_value_of_every_field_in_a_regime_file_names_its_key_and_range(f, tmp_path):
    regime = {"D": 4, "K": 2, "preset": "sts", "steps": 1}
    regime[f.key] = "abc" if f.kind == "number" and f.valid is None else JSON_BAD[f.kind]
    path = tmp_path / "regime.json"
    path.write_text(json.dumps(regime))
    out = _one_line_error(CliRunner().invoke(main, ["run", "--regime", str(path)], catch_exceptions=False))
    assert f'"{f.key}"' in out or f"{f.key} = " in out, out      # the key as the file spells it
    assert f.flag not in out.replace("--regime", ""), out         # not the flag, which the user did not type
    if f.valid is not None:
        assert f.range_text({"D": 4}) in out, out


def test_hand_written_keys_of_a_regime_file():
    # the flag without its dashes, for the fields whose keyword differs from it
    assert {f.key: f.name for f in FIELDS if f.key != f.name} == {"eta-kq": "eta_kq", "vstar-norm": "vstar_norm",
        "law-mean": "law_mean", "law-var": "law_var", "noise-sd": "noise_sd", "p-kind": "p_kind",
        "p-structure": "p_structure", "p-lambda": "p_lambda", "init-scale": "init_scale",
        "relu-at-zero": "relu_at_zero", "freeze-wp": "freeze_wp"}


@pytest.mark.parametrize("name, text, expected", [
    ("D", "8..512", (8, 512)), ("D", "16", (16, 16)), ("eta", "1/16..0.125", (Fraction(1, 16), Fraction(1, 8))),
    ("vstar_norm", "2", (2, 2))])
def test_a_family_range_is_read_by_its_field(name, text, expected):
    assert BY_NAME[name].read_range(text) == expected


@pytest.mark.parametrize("name, text, phrase", [
    ("D", "8..4", "LO <= HI"), ("D", "0..8", "D >= 1"), ("D", "8.5..9", "must be an integer"),
    ("eta", "0..1/8", "eta > 0"), ("eta", "1/8..x", "decimal number"), ("D", "1..2..3", "LO..HI")])
def test_a_bad_family_range_names_the_field_and_why(name, text, phrase):
    with pytest.raises(InvalidParameter) as err:
        BY_NAME[name].read_range(text)
    assert err.value.name == name and phrase in str(err.value), str(err.value)


def test_a_bad_family_range_on_the_command_line_names_the_flag():
    for argv, flag, phrase in ((["--D", "0..8"], "--D 0..8", "D >= 1"), (["--D", "8", "--eta", "1/8..1/16"],
                                                                        "--eta 1/8..1/16", "LO <= HI")):
        out = _one_line_error(CliRunner().invoke(main, ["certify", "--K", "2", "--preset", "sts", *argv]))
        assert flag in out and phrase in out, out


def test_a_family_on_the_command_line_is_read_through_the_fields(monkeypatch):
    """``verify certify --D 8..9 --eta 1/16..0.06375``: the ranges reach the family certificate as exact values
    (0.06375 is 51/800, by hand), the other options as one regime's (the certificate itself is not run here)."""
    family = importlib.import_module("verify.certify.family")

    class Stop(Exception):
        pass

    seen = {}

    def fake(spec, **kw):
        seen["spec"] = spec
        raise Stop

    monkeypatch.setattr(family, "certify_family", fake)
    r = CliRunner().invoke(main, ["certify", "--D", "8..9", "--K", "4", "--preset", "sts", "--eta", "1/16..0.06375",
                                  "--vstar-norm", "1", "--quiet"])
    assert isinstance(r.exception, Stop), (r.output, r.exception)
    spec = seen["spec"]
    assert spec.range_of == {"D": (8, 9), "eta": (Fraction(1, 16), Fraction(51, 800))}
    opts = dict(spec.options)
    assert (opts["K"], opts["preset"], opts["vstar_norm"], opts["wp_trainable"]) == (4, "sts", "1", True)
    assert "D" not in opts and "eta" not in opts


@pytest.mark.parametrize("change, phrase", [({"eta_v": Fraction(0)}, "invalid eta = 0: must satisfy eta > 0"),
                                            ({"K": 7}, "invalid K = 7: must satisfy 0 <= K <= 4"),
                                            ({"beta": Fraction(-1, 2)}, "must satisfy beta > 0")])
def test_validate_checks_each_field_against_its_range(change, phrase):
    s = make_setting(D=4, K=2, preset="sts")
    assert validate(s) is s
    with pytest.raises(InvalidParameter) as err:
        validate(replace(s, **change))
    assert phrase in str(err.value), str(err.value)


def test_the_independent_checker_ranges_the_same_fields():
    from recheck.certificates import FAMILY_RANGED  # heavy: loads flint (it imports nothing of verify: its own list)
    assert set(FAMILY_RANGED) == {f.name for f in FIELDS if f.ranged} == {"D", "eta", "eta_kq", "vstar_norm"}


def test_a_family_command_spells_each_field_by_its_flag():
    from fractions import Fraction
    from verify.model.flags import family_command
    # by hand: the ci family of verify.certify.certificate_records, as the certify command reads it
    got = family_command("certify", {"preset": "sts", "K": 4}, {"D": (8, 9), "eta": (Fraction(1, 16), Fraction(51, 800))},
                         "--vstar-norm", "1", "--json")
    assert got == "verify certify --preset sts --K 4 --D 8..9 --eta 1/16..51/800 --vstar-norm 1 --json"
