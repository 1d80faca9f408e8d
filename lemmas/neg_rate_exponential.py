"""Negative control: "L - L_opt decays exponentially in T for 0 < K < D".

Must come out refuted: the local log-log slope d log(L - L_opt) / d log T tends to -1 (algebraic
decay, verify.derive.asymptotics: L - L_opt ~ K N (D-K)/(4 D eta T)), whereas exponential decay
C e^{-rT} has a local log-log slope -r T -> -infinity. A regime counts as exponential when the
slope over the last octave of the horizon is below -3 (K = D is such a case: alpha -> 1 geometrically).
Horizons T < 8 are outside the check (regime_check reports in_hypotheses = False): an exponential
C e^{-rT} has local slope -rT, above -3 at small T for any moderate rate, so a short run decides nothing.
"""
from __future__ import annotations

import math

from lemmas import Claim, RegimeOutcome, claim, evidence
from lemmas._common import convention, regime, regime_label, replay_run
from lemmas._common import observe

SLOPE_EXP = -3.0
MIN_STEPS = 8      # shortest horizon whose last octave [T/2, T] spans 4 steps


@claim("neg-rate-exponential",
       statement="L(T) - L_opt decays exponentially in T when 0 < K < D (negative control).",
       source="negative control for Theorem 3.1 (reviewer question 1: Theta(1/T) without PL)", negative_control=True,
       hypotheses=["sigma = identity", "zero initialisation", "0 < K < D", "horizon T >= 8 (checked per run)"],
       routes=["float64 reduced recursion: local log-log slope over the last octave"])
class NegRateExponential(Claim):
    conditions = ("identity", "zero-init", "0<K<D")

    def check(self, setting, steps: int) -> RegimeOutcome:
        eng = "reduced" if setting.reducible()[0] else "full"
        if steps < MIN_STEPS:
            # a local slope over [T/2, T] needs an octave of several steps; C e^{-rT} has local slope
            # -r T, which at small T is above SLOPE_EXP for any rate r < 3/T: nothing is decided
            return RegimeOutcome(True, f"horizon T = {steps} < {MIN_STEPS}: too short for a local log-log slope",
                                 replay_run(setting, steps, eng),
                                 {"in_hypotheses": False,
                                  "outside": f"horizon T >= {MIN_STEPS} (an octave [T/2, T] of >= {MIN_STEPS // 2} steps)"})
        h = steps // 2
        r = observe(setting, steps, checkpoints=[h, steps])
        L1, L2 = float(r.excess[0]), float(r.excess[1])
        if L2 <= 0 or L1 <= 0:
            return RegimeOutcome(True, f"L - L_opt reached 0 (L({h}) = {L1!r}, L({steps}) = {L2!r})",
                                 replay_run(setting, steps, eng))
        slope = math.log(L2 / L1) / math.log(steps / h)
        holds = slope < SLOPE_EXP
        return RegimeOutcome(holds, f"local log-log slope over [{h}, {steps}] = {slope:.4f} "
                             f"({'exponential-like' if holds else 'algebraic, about T^' + format(slope, '.3f')})",
                             replay_run(setting, steps, eng), {"slope": slope})

    def evaluate(self, profile):
        ev = []
        for s, T in ((regime("sts", 8, 2, eta="1/10"), 200000), (regime("cnn", 12, 3, M=2, d=2, eta="1/10"), 100000)):
            out = self.regime_check(s, T)
            ev.append(evidence(f"local log-log slope of L - L_opt at T = {T}", "float64", [regime_label(s)],
                               out.detail, out.holds, replay=out.replay))
        s = regime("cnn", 6, 6, eta="1/10")
        out = self.regime_check(s, 400)
        ev.append(evidence("contrast: K = D (outside the statement)", "float64", [regime_label(s)], out.detail, None,
                           note="with K = D, S = S* from the start and alpha -> 1 geometrically: exponential"))
        bad = next((e for e in ev if e["holds"] is False), None)
        return ev, "refuted", bad["replay"] if bad else "verify check neg-rate-exponential", \
            convention(regime("sts", 8, 2, eta="1/10"))
