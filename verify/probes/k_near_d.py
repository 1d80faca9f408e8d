"""Probe ``k-near-d`` (reviewer Q3's neighbour): K = D - 1, one token off the support, still inside Theorem 3.1's
0 < K < D.

The proofs divide by D - K; here D - K = 1, the smallest non-zero value. The leading terms carry factors
(D - K) (verify.derive.asymptotics), so the approach is fast but still a power law, unlike K = D (probe d-eq-k).
"""
from __future__ import annotations

from . import register
from .support.findings import finding
from .support.tails import INTERIOR_HYPOTHESES as HYPOTHESES, TailProbe


@register("k-near-d")
class KNearD(TailProbe):
    title = "K = D - 1: still the interior power laws (with small (D-K) constants)"
    summary = title
    source = "reviewer question 3; Theorem 3.1 (0 < K < D)"
    questions = (3,)
    regimes = {"sts D=8 K=7": dict(D=8, K=7, preset="sts", eta="1/2", vstar_norm="1"),
               "gcn D=4 K=3": dict(D=4, K=3, preset="gcn", M=2, d=2, eta="1/4", vstar_norm="1")}
    figure_title = "K = D − 1: still the interior power laws (the break is at K = D only)"
    statements = (finding(
        "k-near-d.tails", "At K = D - 1 (one token off the support), GD's tails are still the interior power laws of "
        "the derived leading terms: fitted last-decade exponents within 0.05 of the claimed -1, -1/2, -1/2 and "
        "q(T)/leading(T) within 5% of 1 at the horizon; the discontinuity is at K = D only (probe d-eq-k).",
        HYPOTHESES, about="theorem-3.1-lower-T", relation="supports"),)
