"""A sigma family is one module: a toy family written to a temporary directory and imported (nothing
else edited) is derived, iterated by both engines, fuzzed and Monte-Carlo-checked like the built-in ones.

The toy is sigma(x) = sin(x), a genuinely new family (not a polynomial): odd, with the Gaussian kernel
E[sin u sin z] = (e^{-(A+B-2C)/2} cos(mu_u - mu_z) - e^{-(A+B+2C)/2} cos(mu_u + mu_z)) / 2 written by hand
in the module, exact at any means. Monte Carlo is the independent check of that hand-written kernel.
"""
import importlib
import json
import sys
from decimal import Decimal

import pytest
from click.testing import CliRunner
from hypothesis import find, settings
from hypothesis.errors import NoSuchExample

from verify.cli import main
from verify.engines.arith import Arith
from verify.engines.full import FullState
from verify.errors import InvalidParameter
from verify.fuzz.strategies import valid_regimes
from verify.model import make_setting
from verify.model.sigmas import parse_sigma, sigma_examples, sigma_families, unregister
from verify.probes.support.montecarlo import mc_loss

TOY = '''"""sigma(x) = sin(x): a toy family (tests/test_sigma_plugin.py)."""
import sympy as sp

from verify.model.sigmas import Kernel, Sigma, register
from verify.model.symbols import A, B, C, mu_u, mu_z


def _cross(a, c, b, m, n):
    """E[sin u sin z] for (u, z) Gaussian: Var a, b, Cov c, means m, n (sin u sin z = (cos(u-z) - cos(u+z))/2)."""
    return (sp.exp(-(a + b - 2 * c) / 2) * sp.cos(m - n) - sp.exp(-(a + b + 2 * c) / 2) * sp.cos(m + n)) / 2


@register
class Sine(Sigma):
    family = "sine"
    odd = True
    needs_centred = False

    def expr(self, x):
        return sp.sin(x)

    def gaussian_kernel(self):
        euu, ezz = _cross(A, A, A, mu_u, mu_u), _cross(B, B, B, mu_z, mu_z)
        ell = euu - 2 * _cross(A, C, B, mu_u, mu_z) + ezz
        return Kernel(self, ell, sp.diff(ell, mu_u).subs({mu_u: 0, mu_z: 0}), "exact derivative", euu)
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """Write the toy family's module, import it (its @register runs), and forget it afterwards."""
    folder = tmp_path_factory.mktemp("toy_sigma")
    (folder / "toy_sine_sigma.py").write_text(TOY)
    sys.path.insert(0, str(folder))
    try:
        importlib.import_module("toy_sine_sigma")
        yield "sine"
    finally:
        unregister("sine")
        sys.modules.pop("toy_sine_sigma", None)
        sys.path.remove(str(folder))


def _invoke(args):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_unknown_before_registration_then_known(toy):
    assert toy in sigma_families() and toy in sigma_examples()
    sig = parse_sigma(toy)
    assert sig.odd and sig.at_zero == 0 and not sig.is_identity and sig.kernel.with_means


@pytest.mark.slow
def test_derive_proves_the_reduction_for_the_toy(toy):
    out = _invoke(["derive", "--sigma", toy, "--json"])
    assert out["sigma"] == toy
    assert out["wp_invariance"]["holds"] is True                      # the parity lemma from sin's SymPy form
    assert out["reduction_proof"]["proved"] is True
    own = out["obligations"][f"reduction for sigma = {toy}"]
    assert len(own) >= 4 and all(o["status"] == "proved" for o in own)


@pytest.mark.slow
def test_run_reduced_and_full_engines_agree_on_the_toy(toy):
    args = ["run", "--D", "6", "--K", "2", "--preset", "gcn", "--M", "2", "--d", "2", "--vstar-norm", "3/2",
            "--sigma", toy, "--eta", "1/10", "--steps", "40", "--dps", "40", "--json"]
    red = _invoke(args + ["--engine", "reduced"])
    full = _invoke(args + ["--engine", "full"])
    assert red["config"]["sigma"] == full["config"]["sigma"] == toy
    for key in ("loss", "s_err", "w_err"):
        a, b = Decimal(red["final"][key]), Decimal(full["final"][key])
        assert abs(a - b) <= Decimal("1e-30") * abs(a), key


@pytest.mark.slow
def test_the_fuzzer_draws_the_toy_inside_its_hypotheses(toy):
    regime = find(valid_regimes(max_d=6, long_horizon=False, hypotheses=("odd", "wp-zero")),
                  lambda r: dict(r.kwargs)["sigma"] == toy, settings=settings(database=None, max_examples=2000))
    assert regime.setting().sigma == parse_sigma(toy)
    # "sigma = identity" excludes it: the draw reads the family's properties, not a list of names
    with pytest.raises(NoSuchExample):
        find(valid_regimes(max_d=6, long_horizon=False, hypotheses=("identity",)),
             lambda r: dict(r.kwargs)["sigma"] == toy, settings=settings(database=None, max_examples=300))


def test_monte_carlo_loss_of_the_toy_matches_its_kernel(toy):
    """The hand-written kernel at a generic point (non-zero means, random W_X, W_P, W_KQ) is within 5
    standard errors of Monte Carlo with sin applied to sampled inputs (Sigma.numpy, from the SymPy form)."""
    s = make_setting(D=4, K=2, M=2, d=3, preset="cnn", vstar_norm="1.5", sigma=toy, init="random",
                     init_scale="0.5", seed=3, law_mean="0.3")
    st = FullState(s, Arith.make("float64", None, 1))
    closed = float(st.excess_loss())
    mean, se = mc_loss(s, st.WX, st.WP, st.attention(), samples=40000, seed=7)
    assert closed > 0.05 and abs(mean - closed) < 5 * se


def test_unregistered_toy_fails_loudly(toy):
    unregister(toy)
    try:
        with pytest.raises(InvalidParameter, match="must be one of identity, erf"):
            parse_sigma(toy)
    finally:
        importlib.reload(sys.modules["toy_sine_sigma"])     # registers it again for the other tests
    assert parse_sigma(toy).odd
