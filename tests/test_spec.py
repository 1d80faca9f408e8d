"""The field table (verify.model.spec) is what the user sees: the click options of ``verify run`` carry the flags,
defaults and help texts listed here by hand, make_setting's defaults are the reference convention of docs/setting.md
(hand-listed), the regime file's keys are the flags without their dashes, and a replay command writes a random V*'s
norm from the setting itself (not from a prose string) and leaves the defaults out."""
from __future__ import annotations

import click
import pytest

from verify.cli import main
from verify.cli.options import cli_message
from verify.cli.regime import KEYS
from verify.errors import InvalidParameter
from verify.model import make_setting
from verify.model.convention import KEYWORDS, Convention
from verify.model.flags import setting_command
from verify.model.setting import MAKE_KEYWORDS
from verify.model.spec import FIELDS, KINDS, REPLAY
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
