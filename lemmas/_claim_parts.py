"""The ``claim`` parts of ``verify all``: one per claim of the catalogue (lemmas.CLAIMS), run at the profile.

Beside the claims it runs; its name starts with '_' because every other module of ``lemmas`` is a claim, and the
catalogue (verify.checks.Catalogue.load) skips such names. The part registry finds it by its ``@part(`` line."""
from __future__ import annotations

from lemmas import CLAIMS
from verify.run import part


@part("claim", args=lambda: sorted(CLAIMS), order=20)
def claim_part(claim_id: str, profile: str, convention: dict | None = None) -> dict:
    """One claim's statements, each decided from its evidence, as ``verify check ID`` (verify.checks.Catalogue)."""
    return CLAIMS.part_result(claim_id, profile, convention)
