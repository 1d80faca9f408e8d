"""The ``fuzz`` parts of ``verify all``: one Hypothesis search per fuzzable claim.

The budget per profile belongs to verify.fuzz: when it defines ``fuzz_part(claim_id, profile)``, that is
what runs; otherwise a fixed seed and no example database at ci (reproducible, writes nothing), the
profile's example count and the project's database at dev and deep.
"""
from __future__ import annotations

from ..parts import part
from ..profiles import PROFILES


def fuzz_ids() -> list[str]:
    from . import claim_ids
    return list(claim_ids())


@part("fuzz", args=fuzz_ids, order=40,
      options=lambda claim_id, profile: {"examples": PROFILES[profile]["fuzz_examples"]})
def fuzz_claim_part(claim_id: str, profile: str) -> dict:
    """Search for a regime falsifying one claim, with the profile's budget."""
    from .. import fuzz as fz
    if hasattr(fz, "fuzz_part"):
        return fz.fuzz_part(claim_id, profile)
    if profile == "ci":
        return fz.fuzz(claim_id, examples=PROFILES[profile]["fuzz_examples"], seed=0, database=None)
    return fz.fuzz(claim_id, examples=PROFILES[profile]["fuzz_examples"], database=fz.DEFAULT_DB)
