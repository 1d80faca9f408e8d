"""Negative control: "the loss is non-increasing for every step size eta > 0".

Must come out refuted: above eta_alpha = 2K/(c_L v N) (verify.derive.stability) the W_X block
diverges once S approaches S*, and the loss increases.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verify.evidence import Scope, finite
from lemmas import register
from verify.checks import Check, Claimed, Evaluation, RegimeOutcome
from verify.evidence.regime_runs import convention, regime, replay_run
from verify.evidence.regime_records import outcome_record
from lemmas.loss_monotone import THRESHOLD, first_increase


@register("neg-loss-monotone-any-eta")
class NegLossMonotoneAnyEta(Check):
    title = "L(t+1) <= L(t) for all t and every eta > 0 (negative control)."
    source = "negative control for loss-monotone"
    questions = ()
    hypotheses = ('identity', 'zero-init', 'centred')
    long_horizon = True
    statements = (Claimed("neg-loss-monotone-any-eta", title, "control", hypotheses,
                          Scope(dims="all", sigma=("identity",), conventions="all", horizon="all"), source=source),)

    def check(self, setting, steps: int) -> RegimeOutcome:
        bad, L = first_increase(setting, steps)
        eng = "reduced" if setting.reducible()[0] else "full"
        nan = np.nonzero(np.isnan(L))[0]
        if bad is not None and (not len(nan) or bad < nan[0]) and finite(L[bad - 1]):
            # an increase between finite values, or a finite loss that overflows (+inf): a real increase
            return RegimeOutcome(False, f"L({bad}) = {float(L[bad])!r} > L({bad - 1}) = {float(L[bad - 1])!r} at "
                                 f"eta = {setting.eta_v}", replay_run(setting, bad, eng), {"first_increase": bad},
                                 threshold=THRESHOLD)
        if len(nan):
            return RegimeOutcome(None, f"the loss is NaN from t = {int(nan[0])}: undecided",
                                 replay_run(setting, int(nan[0]), eng), threshold=THRESHOLD)
        return RegimeOutcome(True, f"no increase in 1..{steps} at eta = {setting.eta_v}", replay_run(setting, steps, eng),
                             threshold=THRESHOLD)

    def evaluate(self, profile):
        ev = []
        for b in (regime("sts", 8, 2), regime("cnn", 8, 2, M=2, d=2)):
            eta = Fraction(3, 2) * 2 * b.K / (b.loss_scale * b.law.var * b.N)
            s = regime("sts" if b.N == 1 else "cnn", b.D, b.K, M=b.M, d=b.d, eta=eta)
            ev.append(outcome_record(self, s, 3000, f"eta = 3/2 * 2K/(c_L v N) = {eta}"))
        bad = next((e for e in ev if e["holds"] is False), None)
        return Evaluation({self.id: ev}, replay=bad["replay"] if bad else "verify check neg-loss-monotone-any-eta",
                          convention=convention(regime("sts", 8, 2)))
