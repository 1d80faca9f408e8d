"""Property-based fuzzing of the claims catalogue over regimes (Hypothesis)."""
from .runner import DEFAULT_DB, DEFAULT_EXAMPLES, INVALID_CLAIM, Falsified, claim_ids, fuzz
from .strategies import BREAKS, Regime, invalid_regimes, valid_regimes

__all__ = ["fuzz", "claim_ids", "Falsified", "DEFAULT_DB", "DEFAULT_EXAMPLES", "INVALID_CLAIM", "Regime",
           "valid_regimes", "invalid_regimes", "BREAKS"]
