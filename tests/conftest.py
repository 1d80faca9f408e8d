"""Test configuration: Hypothesis profiles live here and only here.

``ci`` (selected when CI=true or with HYPOTHESIS_PROFILE=ci) is derandomised with a fixed budget,
so a run is reproducible; ``dev`` explores more, randomly.
"""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=60, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def holds_values(obj, path="$"):
    """Every value stored under a key "holds", anywhere in a JSON document, with its path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "holds":
                yield path + ".holds", v
            yield from holds_values(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from holds_values(v, f"{path}[{i}]")


@pytest.fixture(scope="session")
def ci_claims():
    """Every claim of lemmas.CLAIMS run once at the ci profile, shared by the tests that read their results (a run
    takes minutes; the tests that change a claim's evidence run it again themselves)."""
    from lemmas import CLAIMS
    return {cid: c.run("ci") for cid, c in CLAIMS.items()}


# ----- saved certificates shared by the re-checker's tests (each costs tens of seconds to make) -----------------
SMALL_FAMILY = ({"preset": "sts", "K": 4, "vstar_norm": "1"}, {"D": (8, 9), "eta": ("1/16", "51/800")})
REGIME = ["--D", "4", "--K", "2", "--preset", "cnn", "--eta", "1/4", "--vstar-norm", "2"]   # T0 = 32, ~1000 boxes


@pytest.fixture(scope="session")
def small_family():
    """The family sts K = 4, D = 8..9, eta in [1/16, 51/800] (a 2% interval), certified once (two cells)."""
    from fractions import Fraction

    from verify.certify.family import FamilySpec, certify_family
    options, ranges = SMALL_FAMILY
    spec = FamilySpec.of(options, {"D": ranges["D"], "eta": tuple(Fraction(v) for v in ranges["eta"])})
    return certify_family(spec, workers=2, processes=False)


@pytest.fixture(scope="session")
def small_family_path(small_family, tmp_path_factory):
    """Its file, with the members at the corners (D = 8, eta = 1/16) and (D = 9, eta = 51/800)."""
    from fractions import Fraction

    from verify.certify.files import family_file, save
    path = tmp_path_factory.mktemp("fam") / "family.json"
    eta = [Fraction(v) for v in SMALL_FAMILY[1]["eta"]]
    save(family_file(small_family, [10**6, 10**12], [{"D": 8, "eta": eta[0]}, {"D": 9, "eta": eta[1]}]), path)
    return path


@pytest.fixture(scope="session")
def regime_certificate(tmp_path_factory):
    """A one-regime certificate file (cnn, D = 4, K = 2, eta = 1/4, ||V*|| = 2), saved by the command line."""
    from click.testing import CliRunner

    from verify.cli import main
    path = tmp_path_factory.mktemp("cert") / "cert.json"
    r = CliRunner().invoke(main, ["certify", *REGIME, "--at", "0,17,40,1e6,1e12", "--save", str(path)])
    assert r.exit_code == 0, r.output
    return path
