"""What a per-regime check found in one regime (:class:`RegimeOutcome`): the data a claim's or probe's
``regime_check`` returns and an evidence record is made from (verify.evidence.regime_records.outcome_record).
Kept at the evidence layer, below the checks that produce it and the record helpers that read it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .recording import KINDS


@dataclass
class RegimeOutcome:
    """Whether a check's per-regime property holds in one regime (True / False / None = undecided, e.g. NaN),
    why, how it was decided (evidence ``kind`` and ``threshold``), and how to reproduce it.

    ``data["in_hypotheses"]`` (set by :meth:`Check.regime_check`) says whether the regime meets the check's
    hypotheses; outside them a failure is information, not a counterexample."""

    holds: bool | None
    detail: str
    replay: str
    data: dict = field(default_factory=dict)
    kind: str = "float64"
    threshold: dict | None = None

    def __post_init__(self):
        if isinstance(self.holds, np.bool_):
            self.holds = bool(self.holds)
        if self.holds not in (True, False, None):
            raise TypeError(f"holds must be True, False or None, not {self.holds!r}")
        if self.kind not in KINDS:
            raise ValueError(f"evidence kind must be one of {KINDS}, not {self.kind!r}")

    @property
    def status(self) -> str:
        """"holds", "fails" or "undecided" (what ``verify check ID --regime FILE`` prints)."""
        return {True: "holds", False: "fails", None: "undecided"}[self.holds]


__all__ = ["RegimeOutcome"]
