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
