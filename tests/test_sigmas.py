"""The sigma registry (verify.model.sigmas): each family's declared facts against a second route, the
requirements it declares against what validation enforces, loud failure for unknown specs, and no
module that compares sigma names."""
import importlib
import pkgutil
import re
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp

import verify.model.sigmas as sigmas
from verify.errors import InvalidParameter
from verify.model import make_setting
from verify.model.hypotheses import sigmas_text
from verify.model.sigmas import FAMILIES, X, parse_sigma, register, sigma_examples, sigma_families

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sigma_examples()

# What each built-in family requires, written by hand from its mathematics (docs/setting.md):
# (any entry law, law mean must be 0, W_P may train, loss not differentiable at W_X = 0)
REQUIREMENTS = {"identity": (True, False, True, False), "erf": (False, True, True, False),
                "relu": (False, True, False, True), "poly": (False, False, True, False)}


def test_every_module_of_the_package_registers_a_family():
    modules = {m.name for m in pkgutil.iter_modules(sigmas.__path__)} - {"base"}
    registered = {cls.__module__.rsplit(".", 1)[1] for cls in FAMILIES.values() if cls.__module__.startswith(
        sigmas.__name__ + ".")}
    assert modules == registered and set(REQUIREMENTS) <= set(sigma_families())
    assert sigma_families()[0] == "identity"          # the reference sigma first (help texts, fuzz shrinking)


@pytest.mark.parametrize("spec", EXAMPLES)
def test_parity_flag_agrees_with_sympy(spec):
    """A second route to Sigma.odd: sigma(-x) + sigma(x) simplifies to 0 exactly for the odd ones."""
    sig = parse_sigma(spec)
    assert (sp.simplify(sig.expr(-X) + sig.expr(X)) == 0) is sig.odd


@pytest.mark.parametrize("spec", EXAMPLES)
def test_numpy_form_agrees_with_mpmath_evaluation_of_the_sympy_form(spec):
    sig = parse_sigma(spec)
    z = np.random.default_rng(5).normal(scale=2.0, size=(3, 7))
    ref = sp.lambdify(X, sig.expr(X), "mpmath")
    want = np.array([[float(ref(mpmath.mpf(float(v)))) for v in row] for row in z])
    got = sig.numpy(z)
    assert got.shape == z.shape and np.allclose(got, want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("spec", EXAMPLES)
def test_spec_round_trips_and_members_are_cache_keys(spec):
    sig = parse_sigma(spec)
    again = parse_sigma(sig.spec())
    assert again == sig and hash(again) == hash(sig) and len({sig, again}) == 1
    assert sig.at_zero == sig.expr(sp.Integer(0)) and sig.kernel.with_means is not sig.needs_centred


def test_identity_map_is_a_property_of_the_sympy_form():
    assert [s for s in EXAMPLES if parse_sigma(s).is_identity] == ["identity"]
    assert parse_sigma("poly:0,1").is_identity        # the same function under another spelling


@pytest.mark.parametrize("family", sorted(REQUIREMENTS))
def test_declared_requirements_are_what_validation_enforces(family):
    any_law, centred, wp_trains, kink = REQUIREMENTS[family]
    spec = next(s for s in EXAMPLES if s.partition(":")[0] == family)
    base = dict(D=4, K=2, preset="sts", sigma=spec, wp_trainable=wp_trains)

    def fails(**kw):
        try:
            make_setting(**(base | kw))
        except InvalidParameter as exc:
            return {p.name for p in exc.problems}
        return set()

    assert fails() == set()
    assert ("law" in fails(law="gumbel")) is not any_law
    assert ("law_mean" in fails(law_mean="1/2")) is centred
    assert ("sigma" in fails(wp_trainable=True)) is not wp_trains
    assert ("relu_at_zero" in fails(relu_at_zero="error")) is kink


@pytest.mark.parametrize("spec", ["tanh", "", "identity:1", "Erf", None, 3])
def test_unknown_sigma_names_the_parameter_and_lists_the_families(spec):
    with pytest.raises(InvalidParameter) as info:
        parse_sigma(spec)
    assert info.value.problems[0].name == "sigma"
    if spec not in ("identity:1",):
        assert all(name in str(info.value) for name in ("identity", "erf", "relu", "poly:c0,c1,..."))


def test_a_family_name_is_registered_once():
    class Other(FAMILIES["erf"]):
        pass
    with pytest.raises(TypeError, match="already registered"):
        register(Other)
    assert FAMILIES["erf"] is not Other


def test_no_module_compares_sigma_names():
    """Every consumer asks the sigma object (odd, any_law, kink_at_zero, ...), never its name."""
    pattern = re.compile(r'sigma\.name|sig\.name|\.name ?== ?"(identity|relu|erf|poly)"|"(relu|erf)" in')
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for folder in ("verify", "lemmas")
            for p in sorted((ROOT / folder).rglob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []
    assert importlib.util.find_spec("verify.model.sigma") is None     # the old module is gone, no shim


@pytest.mark.parametrize("spec, text", [("poly:0,1,0,1/10", "x + x^3/10"), ("poly:0,1,1/2", "x + x^2/2"),
                                        ("poly:1,-3/2", "1 - 3 x/2"), ("poly:0,0,-1", "-x^2"),
                                        ("poly:2,0,3", "2 + 3 x^2"), ("erf", "erf"), ("relu", "relu")])
def test_readable_names(spec, text):
    """How a statement's prose names a sigma (hand-written): the polynomial in x, lowest power first; else the spec."""
    assert parse_sigma(spec).readable() == text


def test_sigmas_text_names_each_condition():
    """W_P frozen for a non-odd sigma under "wp-zero"; M = 1 for a nonlinear sigma under "linear-or-M1"."""
    assert sigmas_text(("identity", "poly:0,1,1/2", "erf"), ("wp-zero",)) == "{identity, x + x^2/2 with W_P frozen, erf}"
    assert sigmas_text(("identity", "relu"), ("wp-zero", "linear-or-M1")) == \
        "{identity, relu with W_P frozen and M = 1}"
