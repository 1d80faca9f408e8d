"""The ``claim`` parts of ``verify all``: one per claim of the catalogue (lemmas.CLAIMS), run at the profile.

Beside the claims it runs; its name starts with '_' because every other module of ``lemmas`` is a claim, and the
catalogue (verify.checks.Catalogue.load) skips such names. The part registry finds it by its ``@part(`` line."""
from __future__ import annotations

from lemmas import CLAIMS
from verify.model.convention import Convention
from verify.run import part


def claim_ids() -> list[str]:
    return sorted(CLAIMS)


@part("claim", args=claim_ids, order=20)
def claim_part(claim_id: str, profile: str, convention: dict | None = None) -> dict:
    """One claim's statements, each decided from its evidence, at the profile and under the run's convention
    (make_setting keywords; None: the reference), as ``verify check ID`` with the convention flags."""
    conv = Convention.from_options(convention) if convention else None
    return CLAIMS[claim_id].run(profile, conv).as_dict()
