"""The ``claim`` parts of ``verify all``: one per claim of the catalogue (lemmas.CLAIMS), run at the profile."""
from __future__ import annotations

from verify.run import part


def claim_ids() -> list[str]:
    from lemmas import CLAIMS
    return sorted(CLAIMS)


@part("claim", args=claim_ids, order=20)
def claim_part(claim_id: str, profile: str) -> dict:
    """One claim's statements, each decided from its evidence, at the profile (``verify check ID``)."""
    from lemmas import CLAIMS
    return CLAIMS[claim_id].run(profile).as_dict()
