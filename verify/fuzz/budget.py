"""Fuzzing budgets per profile, and the fuzz part of ``verify all``.

``ci`` searches with a fixed seed and no database, so the example report is reproducible and depends on
nothing stored locally; ``dev`` and ``deep`` draw a seed (recorded in the result: the run replays with
``verify fuzz --seed``) and use the counterexample database (verify.fuzz.store), whose saved failures are
reported as replayed, apart from new ones.
"""
from __future__ import annotations

from ..errors import InvalidParameter
from ..run import part
from .runner import claim_ids, fuzz
from .store import DEFAULT_DB

# examples: Hypothesis max_examples per claim (checked regimes; discards come on top);
# seed: an int (fixed) or None (drawn per run and recorded); database: use the counterexample database.
PROFILE_BUDGET = {
    "ci": {"examples": 50, "seed": 0, "database": False},
    "dev": {"examples": 200, "seed": None, "database": True},
    "deep": {"examples": 2000, "seed": None, "database": True},
}


@part("fuzz", args=claim_ids, order=40, options=lambda claim_id, profile: dict(PROFILE_BUDGET[profile]),
      convention_why="it draws its regimes across the conventions itself (both losses, entry laws, P kinds, "
      "eta_KQ != eta_V), so its scope names the conventions it covered")
def fuzz_part(claim_id: str, profile: str, database=DEFAULT_DB) -> dict:
    """``fuzz(claim_id)`` at the budget of ``profile`` (ci | dev | deep); the result records the profile and
    its budget. ``database`` is used only by profiles whose budget says so."""
    if profile not in PROFILE_BUDGET:
        raise InvalidParameter("profile", profile, f"must be one of {', '.join(PROFILE_BUDGET)}")
    b = PROFILE_BUDGET[profile]
    res = fuzz(claim_id, examples=b["examples"], seed=b["seed"], database=database if b["database"] else None)
    return res | {"profile": profile, "budget": dict(b, seed_policy="fixed" if b["seed"] is not None else "drawn")}


__all__ = ["PROFILE_BUDGET", "fuzz_part"]
