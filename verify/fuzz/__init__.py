"""Property-based fuzzing of the claims catalogue over regimes (Hypothesis).

``fuzz(claim_id)`` searches regimes inside a claim's hypotheses for a counterexample and returns its
evidence and verdict; ``fuzz_part(claim_id, profile)`` is the same at a profile's budget (``verify all``).
"""
from .budget import PROFILE_BUDGET, fuzz_part
from .runner import (DEFAULT_EXAMPLES, DISCARD_REASONS, INVALID_CLAIM, MAX_DISCARDED, REPLAY_FACTOR, Crashed,
                     Falsified, claim_ids, fuzz, judge, strategy_for)
from .store import DEFAULT_DB, CounterexampleStore, default_db
from .strategies import BREAKS, Regime, invalid_regimes, valid_regimes

__all__ = ["fuzz", "fuzz_part", "PROFILE_BUDGET", "claim_ids", "judge", "strategy_for", "Falsified", "Crashed",
           "DEFAULT_DB", "default_db", "CounterexampleStore", "DEFAULT_EXAMPLES", "DISCARD_REASONS", "INVALID_CLAIM",
           "MAX_DISCARDED", "REPLAY_FACTOR", "Regime", "valid_regimes", "invalid_regimes", "BREAKS"]
