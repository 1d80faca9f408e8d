"""Negative control: "the loss is non-increasing for every step size eta > 0".

Must come out refuted: above eta_alpha = 2K/(c_L v N) (verify.derive.stability) the W_X block
diverges once S approaches S*, and the loss increases.
"""
from __future__ import annotations

from fractions import Fraction

from lemmas import Claim, RegimeOutcome, claim, evidence
from lemmas._common import convention, regime, regime_label, replay_run
from lemmas.loss_monotone import first_increase


@claim("neg-loss-monotone-any-eta",
       statement="L(t+1) <= L(t) for all t and every eta > 0 (negative control).",
       source="negative control for loss-monotone", negative_control=True,
       hypotheses=["sigma = identity", "zero initialisation", "centred entries"],
       routes=["float64 reduced recursion at eta = 3/2 eta_alpha"])
class NegLossMonotoneAnyEta(Claim):
    conditions = ("identity", "zero-init", "centred")

    def check(self, setting, steps: int) -> RegimeOutcome:
        bad, L = first_increase(setting, steps)
        if bad is not None:
            return RegimeOutcome(False, f"L({bad}) = {float(L[bad])!r} > L({bad - 1}) = {float(L[bad - 1])!r} at eta = {setting.eta_v}",
                                 replay_run(setting, bad, "reduced" if setting.reducible()[0] else "full"), {"first_increase": bad})
        return RegimeOutcome(True, f"no increase in 1..{steps} at eta = {setting.eta_v}", replay_run(setting, steps, "reduced" if setting.reducible()[0] else "full"))

    def evaluate(self, profile):
        ev = []
        for b in (regime("sts", 8, 2), regime("cnn", 8, 2, M=2, d=2)):
            eta = Fraction(3, 2) * 2 * b.K / (b.loss_scale * b.law.var * b.N)
            s = regime("sts" if b.N == 1 else "cnn", b.D, b.K, M=b.M, d=b.d, eta=eta)
            out = self.regime_check(s, 3000)
            ev.append(evidence(f"eta = 3/2 * 2K/(c_L v N) = {eta}", "float64", [regime_label(s)], out.detail,
                               out.holds, replay=out.replay))
        bad = next((e for e in ev if e["holds"] is False), None)
        return ev, "refuted", bad["replay"] if bad else "verify check neg-loss-monotone-any-eta", \
            convention(regime("sts", 8, 2))
