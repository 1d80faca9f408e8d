"""Negative control: "alpha_i(t) <= 1 for all t" (the row multiples never overshoot V*).

Must come out refuted: alpha tracks alpha*(u) = <s,s*>/||s||^2 = 1 + u + O(u^2) > 1
(verify.derive.asymptotics.slow_manifold), so it exceeds 1 and returns to 1 from above.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from lemmas import Claim, RegimeOutcome, claim, evidence
from lemmas._common import convention, fmt, observe, regime, regime_label, replay_run


@claim("neg-alpha-le-1",
       statement="alpha_i(t) <= 1 for every row i and every t (negative control).",
       source="negative control for Lemma C.2's envelope", negative_control=True,
       hypotheses=["zero initialisation", "centred entries", "0 < K < D"],
       routes=["float64 reduced recursion (counterexample search)", "symbolic slow manifold alpha*(u) = 1 + u + O(u^2)"])
class NegAlphaLe1(Claim):
    conditions = ("zero-init", "centred", "0<K<D")

    def check(self, setting, steps: int) -> RegimeOutcome:
        r = observe(setting, steps)
        eng = "reduced" if setting.reducible()[0] else "full"
        over = np.nonzero(r.alpha.max(axis=1) > 1)[0]
        if len(over):
            t = int(r.steps[over[0]])
            return RegimeOutcome(False, f"alpha = {fmt(r.alpha[over[0]].max(), 15)} > 1 at t = {t}",
                                 replay_run(setting, t, eng), {"first_overshoot": t})
        return RegimeOutcome(True, f"max alpha = {fmt(r.alpha.max())} <= 1 over 0..{steps}", replay_run(setting, steps, eng))

    def evaluate(self, profile):
        from verify.derive.asymptotics import slow_manifold
        ev = []
        sm = slow_manifold()
        a1 = sm["a1"]
        ev.append(evidence("slow manifold alpha*(u)", "symbolic", ["sigma = identity, 0 < K < D"],
                           f"alpha*(u) = {sp.sstr(sm['alpha_star'])}; coefficient of u: {sp.sstr(a1)} > 0, so alpha* > 1 "
                           "for small u > 0", None, alpha_star=sp.sstr(sm["alpha_star"])))
        for s in (regime("cnn", 8, 2, M=2, d=3, eta="1/10"), regime("sts", 8, 2, eta="1/10", sigma="erf")):
            out = self.regime_check(s, 2000)
            ev.append(evidence("counterexample search, t = 0..2000", "float64", [regime_label(s)], out.detail,
                               out.holds, replay=out.replay))
        bad = next((e for e in ev if e["holds"] is False), None)
        return ev, "refuted", bad["replay"] if bad else "verify check neg-alpha-le-1", convention(
            regime("cnn", 8, 2, M=2, d=3, eta="1/10"))
