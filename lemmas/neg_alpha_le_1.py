"""Negative control: "alpha_i(t) <= 1 for all t" (the row multiples never overshoot V*).

Must come out refuted: alpha tracks alpha*(u) = <s,s*>/||s||^2 = 1 + u + O(u^2) > 1
(verify.derive.asymptotics.slow_manifold), so it exceeds 1 and returns to 1 from above.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from verify.evidence import Scope, record
from lemmas import register
from verify.checks import Check, Claimed, Evaluation, RegimeOutcome
from verify.evidence.regime_runs import convention, fmt, observe, regime, replay_run
from verify.evidence.regime_records import outcome_record, proof_scope
from verify.derive.asymptotics import slow_manifold

MARGIN = 1e-12
THRESHOLD = {"value": 1 + MARGIN,
             "why": "alpha > 1 + 1e-12 counts as an overshoot: float64 rounding of alpha is ~1e-16 relative per "
                    "step, so an excess of 1e-12 over 1 is not rounding"}


@register("neg-alpha-le-1")
class NegAlphaLe1(Check):
    title = "alpha_i(t) <= 1 for every row i and every t (negative control)."
    source = "negative control for Lemma C.2's envelope"
    questions = ()
    hypotheses = ('zero-init', 'centred', '0<K<D')
    long_horizon = True
    statements = (Claimed("neg-alpha-le-1", title, "control", hypotheses,
                          Scope(dims="all", sigma=("identity", "erf"), conventions="all", horizon="all"), source=source),)

    def check(self, setting, steps: int) -> RegimeOutcome:
        r = observe(setting, steps)
        eng = "reduced" if setting.reducible()[0] else "full"
        a = r.alpha.max(axis=1)
        with np.errstate(invalid="ignore"):
            over = np.nonzero(a > 1 + MARGIN)[0]
            bad = np.nonzero(~np.isfinite(a))[0]
        if len(over) and (not len(bad) or over[0] < bad[0]):
            t = int(r.steps[over[0]])
            return RegimeOutcome(False, f"alpha = {fmt(a[over[0]], 15)} > 1 at t = {t}", replay_run(setting, t, eng),
                                 {"first_overshoot": t}, threshold=THRESHOLD)
        if len(bad):   # a NaN never counts as alpha <= 1
            t = int(r.steps[bad[0]])
            return RegimeOutcome(None, f"alpha is not finite at t = {t}: undecided", replay_run(setting, t, eng),
                                 threshold=THRESHOLD)
        return RegimeOutcome(True, f"max alpha = {fmt(a.max())} <= 1 + {MARGIN:g} over 0..{steps}",
                             replay_run(setting, steps, eng), threshold=THRESHOLD)

    def evaluate(self, profile):
        ev = []
        sm = slow_manifold()
        a1 = sm["a1"]
        ev.append(record("slow manifold alpha*(u)", "symbolic",
                         proof_scope({"M": "M", "d": "d", "D": "D", "N": "N", "K": "K"}, "identity"),
                         f"alpha*(u) = {sp.sstr(sm['alpha_star'])}; coefficient of u: {sp.sstr(a1)} > 0, so alpha* > 1 "
                         "for small u > 0 (alpha tracks alpha* only approximately: informative)", None, role="context",
                         alpha_star=sp.sstr(sm["alpha_star"])))
        for s in (regime("cnn", 8, 2, M=2, d=3, eta="1/10"), regime("sts", 8, 2, eta="1/10", sigma="erf")):
            ev.append(outcome_record(self, s, 2000, "counterexample search, t = 0..2000"))
        bad = next((e for e in ev if e["holds"] is False), None)
        return Evaluation({self.id: ev}, replay=bad["replay"] if bad else "verify check neg-alpha-le-1",
                          convention=convention(
            regime("cnn", 8, 2, M=2, d=3, eta="1/10")))
