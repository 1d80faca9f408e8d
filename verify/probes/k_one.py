"""Probe ``k-one`` (reviewer Q6, Q3/Q4's neighbour): K = 1, the group-sparse linear predictor (gslp), the sparsest
teacher inside Theorem 3.1's 0 < K < D.

The probe fits the tails and compares them with the exact leading terms of verify.derive.asymptotics
(exponents and constants) and with the claimed T-exponents -1, -1/2, -1/2 (verify.model.paper).
"""
from __future__ import annotations

from . import register
from .support.findings import finding
from .support.tails import INTERIOR_HYPOTHESES as HYPOTHESES, TailProbe


@register("k-one")
class KOne(TailProbe):
    title = "K = 1 (gslp): tails 1/T, 1/sqrt(T), 1/sqrt(T) with the derived constants"
    summary = title
    source = "reviewer question 6; Theorem 3.1 (rates in T)"
    questions = (6,)
    regimes = {"gslp D=8": dict(D=8, K=1, preset="gslp", eta="1/2", vstar_norm="1"),
               "gslp D=4 d=3": dict(D=4, K=1, preset="gslp", d=3, eta="1/4", vstar_norm="2")}
    figure_title = "K = 1 (group-sparse linear predictor): Theorem 3.1's rates in T, with the derived leading terms"
    statements = (finding(
        "k-one.tails", "At K = 1 (gslp, the sparsest teacher), GD's tails are the derived leading terms: the fitted "
        "last-decade exponents of L - L_opt, ||S - S*||_F and ||W_X - V*||_F lie within 0.05 of the claimed -1, -1/2, "
        "-1/2 and q(T)/leading(T) within 5% of 1 at the horizon.", HYPOTHESES, about="theorem-3.1-lower-T",
        relation="supports"),)
