"""Probe ``k-near-d`` (reviewer Q3's neighbour): K = D - 1, one token off the support.

The proofs divide by D - K; here D - K = 1, the smallest non-zero value. The leading terms carry
factors (D - K) (verify.derive.asymptotics), so the approach is fast but still a power law, unlike K = D.
"""
from __future__ import annotations

from ..model import make_setting
from .base import probe
from .k_one import interior_probe


@probe("k-near-d", (3,), "K = D - 1: still the interior power laws (with small (D-K) constants)")
def run():
    settings = {
        "sts D=8 K=7": make_setting(D=8, K=7, preset="sts", eta="1/2", vstar_norm="1"),
        "gcn D=4 K=3": make_setting(D=4, K=3, preset="gcn", M=2, d=2, eta="1/4", vstar_norm="1"),
    }
    return interior_probe(
        "k-near-d", (3,), settings, "sts D=8 K=7", " at K = D - 1",
        ["The discontinuity is at K = D only: for K = D - 1 the rates are the interior power laws, while at K = D "
         "(probe d-eq-k) the convergence is geometric and S is exact from the start."])
