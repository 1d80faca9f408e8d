"""The setting: invalid input gives one clear error naming the parameter (one parametrised table)."""
import json
from fractions import Fraction

import pytest

from verify.engines import iterate
from verify.errors import InvalidParameter, VerificationError
from verify.model import make_setting, preset_supports

BASE = dict(D=6, K=2, M=2, d=3, preset="cnn", vstar_norm="2")


def with_(**kw):
    out = dict(BASE)
    for k, v in kw.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


INVALID = [
    ("K", with_(K=7, preset="sts")),
    ("K", with_(K=-1, preset="sts")),
    ("D", with_(D=0, preset="sts", K=0)),
    ("eta", with_(eta="0")),
    ("eta", with_(eta="-0.1")),
    ("eta", with_(eta="nan")),
    ("eta", with_(eta="abc")),
    ("eta_kq", with_(eta_kq="-1")),
    ("supports", with_(preset=None, supports=[[0, 1], [2]])),
    ("supports[0] entry", with_(preset=None, supports=[[0, 9], [2, 3]])),
    ("supports[0]", with_(preset=None, supports=[[1, 1], [2, 3]])),
    ("supports", with_(preset=None, supports=None)),
    ("vstar", with_(vstar_norm=None, vstar=[[1, 2, 3]])),
    ("vstar", with_(vstar_norm=None, vstar=[[1, 2], [3, 4]])),
    ("vstar", with_(vstar_norm=None, vstar=[[0, 0, 0], [0, 0, 0]])),
    ("vstar_norm", with_(vstar_norm="-2")),
    ("sigma", with_(sigma="tanh")),
    ("sigma", with_(sigma="poly:0,0")),
    ("law", with_(law="cauchy")),
    ("law", with_(law="student-t:2")),
    ("law", with_(sigma="erf", law="gumbel")),
    ("law_var", with_(law_var="0")),
    ("sigma", with_(sigma="relu")),
    ("noise_sd", with_(noise_sd="-1")),
    ("p_lambda", with_(p_lambda="0")),
    ("p_kind", with_(p_kind="sinusoidal")),
    ("p_matrix", with_(p_kind="explicit", p_matrix=[[1] * 6] * 6)),
    ("N", with_(N=5)),
    ("K", with_(K=4)),                  # cnn needs K | D
    ("K", with_(preset="gslp", K=2)),
    ("init_scale", with_(init="random")),
    ("loss", with_(loss="median")),
    ("query", with_(preset="sts", query=[0, 0])),
    ("M", with_(M=0)),
    ("seed", with_(seed=-3)),
    ("data", with_(data="mnist")),
    ("D", with_(data="digits", d=8)),                           # the digits are 8 tokens ...
    ("d", with_(data="digits", D=8, K=2)),                      # ... of 8 pixels
    ("law", with_(data="digits", D=8, d=8, law="rademacher")),  # the entry law does not apply to the digits
    ("law_var", with_(data="gaussian:digits", D=8, d=8, law_var="2")),
    ("init", with_(data="digits", D=8, d=8, sigma="relu", wp_trainable=False)),  # no radial convention over images
]


@pytest.mark.parametrize("name,kwargs", INVALID, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INVALID)])
def test_invalid_parameter_is_named(name, kwargs):
    with pytest.raises(InvalidParameter) as info:
        make_setting(**kwargs)
    assert info.value.name == name
    assert name in str(info.value) and "must" in str(info.value)


@pytest.mark.parametrize("call,name", [
    (lambda s: iterate(s, -1), "steps"),
    (lambda s: iterate(s, 10, engine="exact"), "engine"),
    (lambda s: iterate(s, 10, arithmetic="float64", dps=30), "dps"),
    (lambda s: iterate(s, 10, dps=2), "dps"),
    (lambda s: iterate(s.with_(sstar_weights=((Fraction(1, 3), Fraction(2, 3)),) * 3), 10, engine="reduced"), "engine"),
    (lambda s: iterate(s.with_(data="digits", D=8, d=8), 10, engine="reduced"), "engine"),
    # the finite sum over the images under a nonlinear sigma: jax.grad in float64 only
    (lambda s: iterate(s.with_(data="digits", D=8, d=8, sigma="erf"), 10, engine="full"), "arithmetic"),
    (lambda s: iterate(s.with_(data="digits", D=8, d=8, sigma="erf"), 10, engine="full", arithmetic="arb"), "arithmetic"),
])
def test_invalid_run_parameters(call, name):
    s = make_setting(**BASE)
    with pytest.raises(InvalidParameter) as info:
        call(s)
    assert info.value.name == name


def test_error_hierarchy():
    assert issubclass(InvalidParameter, VerificationError) and issubclass(InvalidParameter, ValueError)


def test_decimals_are_read_exactly():
    s = make_setting(**with_(eta="0.07"))
    assert s.eta_v == Fraction(7, 100) and s.eta_v != Fraction(0.07)


def test_vstar_norm_is_exact():
    s = make_setting(**with_(vstar_norm="3/2"))
    assert s.vstar_norm2() == Fraction(9, 4)


def test_json_inputs_read_exactly(tmp_path):
    v = tmp_path / "V.json"
    v.write_text(json.dumps([[0.1, 0.2, 0.3], [1, 0, 0]]).replace("0.1", "0.1000000000000000000001"))
    sup = tmp_path / "S.json"
    sup.write_text("[[0, 1], [2, 3], [4, 5]]")
    s = make_setting(D=6, M=2, d=3, vstar=str(v), supports=str(sup))
    assert s.vstar_base[0][0] == Fraction("0.1000000000000000000001")
    assert s.K == 2 and s.N == 3


def test_presets_match_their_definitions():
    assert preset_supports("cnn", 6, 2) == ((0, 1), (2, 3), (4, 5))
    gcn = preset_supports("gcn", 5, 3)
    assert len(gcn) == 5 and all(len(g) == 3 for g in gcn)
    # K-regular: every token is in exactly K columns
    assert all(sum(i in g for g in gcn) == 3 for i in range(5))
    assert preset_supports("sts", 5, 2) == ((0, 1),)
    assert preset_supports("gslp", 5, 1) == ((0,),)


def test_config_records_every_option():
    cfg = make_setting(**BASE).config()
    for key in ("sigma", "law", "law_mean", "law_var", "loss", "p_lambda", "eta_v", "eta_kq", "init", "noise_sd",
                "relu_at_zero", "wp_trainable", "supports", "vstar_norm2"):
        assert key in cfg


@pytest.mark.parametrize("kwargs,name", [
    (with_(eta="1e400"), "eta"),
    (with_(eta="1e-400"), "eta"),
    (with_(law_mean="-1e999999999"), "law_mean"),          # refused before 10**exponent is built
    (with_(sigma="poly:0,1e309"), "sigma coefficient"),
    (with_(vstar_norm="1e200"), "vstar_norm"),              # ||V*||^2 = 1e400
    (with_(vstar_norm=None, vstar=[["1e300", 0, 0], [0, 0, "1e-160"]]), "vstar"),   # squared: 1e600, 1e-320
])
def test_numbers_outside_the_float64_range_are_refused(kwargs, name):
    with pytest.raises(InvalidParameter) as info:
        make_setting(**kwargs)
    assert info.value.name == name and "float64" in str(info.value)


def test_json_numbers_outside_the_float64_range_are_refused(tmp_path):
    for text in ("[[1e400, 0, 0], [1, 0, 0]]", "[[1" + "0" * 400 + ", 0, 0], [1, 0, 0]]"):
        v = tmp_path / "V.json"
        v.write_text(text)
        with pytest.raises(InvalidParameter) as info:
            make_setting(**with_(vstar_norm=None, vstar=str(v)))
        assert info.value.name == "vstar entry" and text[2:7] in str(info.value)


def test_every_problem_is_reported_together():
    with pytest.raises(InvalidParameter) as info:
        make_setting(**with_(eta="-1", sigma="relu", law="gumbel", init="random", noise_sd="-2"))
    names = [p.name for p in info.value.problems]
    assert sorted(names) == ["eta", "init_scale", "law", "noise_sd", "sigma"]
    assert str(info.value).startswith("5 problems: ")
    # cross-field rules name the options involved (the CLI shows what the user set them to)
    relu = next(p for p in info.value.problems if p.name == "sigma")
    assert relu.also == ("wp_trainable",) and "wp_trainable=False" in str(info.value)


def test_values_are_shown_as_rationals_not_reprs():
    with pytest.raises(InvalidParameter) as info:
        make_setting(**with_(init_scale="0.5"))
    assert "init_scale = 1/2" in str(info.value) and "Fraction" not in str(info.value)


def test_D_has_no_cap_until_a_D_x_D_array_is_built():
    """D = 10^6 (sts, K = 3, eta = 1/10, ||V*|| = 1): a setting, with invariants r = (D - K)/K = 999997/3,
    x = eta N/K = 1/30 and y = eta ||V*||^2/K^2 = 1/90 by hand; building P or S* (D x D, D x N) is refused naming D
    and its range there."""
    from verify.derive.invariants import invariants_of
    s = make_setting(D=10**6, K=3, preset="sts", eta="1/10", vstar_norm="1")
    assert invariants_of(s) == (Fraction(999997, 3), Fraction(1, 30), Fraction(1, 90))
    for build in (s.p_exact, s.sstar, s.p_numeric):
        with pytest.raises(InvalidParameter) as info:
            build()
        assert info.value.name == "D" and "D <= 4096" in str(info.value) and "full-matrix" in str(info.value)
    assert make_setting(D=4096, K=3, preset="sts").sstar()[4095] == [0]
