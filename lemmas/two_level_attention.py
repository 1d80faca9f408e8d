"""Every column of S(t) stays two-valued: one value on the support g_j of S*, one value off it.

Route 1 (symbolic): at a two-valued point the logit gradient of every column is two-valued
(verify.derive.reduction_proof.prove_reduction_generic, obligation (iii), for any per-entry kernel at the
explicit sizes it states), and W_KQ starts at 0 (S uniform), so by induction the logits, hence the
columns of S, stay two-valued.
Route 2 (float64): the full-matrix engine (no symmetry assumed) measures the spread of S(t) on and
off each support.
Route 3 (arb, the finding ``two-level-attention.full-balls``): the certified full-matrix engine (Arb balls of every
entry, no symmetry or reduction assumed; verify.evidence.ball_facts) encloses every difference S_ij(t) - S_i'j(t) between
two entries on (or two entries off) the support g_j in a ball of radius at most 1e-60 around 0, for t <= H. Exactly
two-valued is the proof's: a ball containing 0 bounds the spread by its radius, no better.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verify.evidence import Scope, dims_of
from lemmas import register
from verify.checks import Check, Claimed, Evaluation, RegimeOutcome
from verify.model.profiles import per_profile
from verify.evidence.regime_runs import convention, regime, regime_label
from verify.evidence.regime_records import bounded_series_outcome, outcome_record, runs_scope
from verify.evidence.ball_facts import ball_run, below, decide_margins, fact_record, records_of, upper_str
from verify.engines.arith import Arith
from verify.engines.full import FullState
from verify.derive.obligations import proof_routes
from verify.derive.reduction_proof import obligations_for
from verify.model.hypotheses import admitted_sigmas, sigmas_text
from verify.model.sigmas import parse_sigma

STEPS = per_profile({"ci": 40, "dev": 300, "deep": 2000})
# Arb precision of the certified runs over STEPS: the balls' radius grows by up to 2^1.7 a step (sigma = x + x^3/10,
# the wrapping effect of verify.engines.fullarb) and must stay below SPREAD_BOUND = 2^-200 at the horizon
BALL_BITS = per_profile({"ci": 512, "dev": 2048, "deep": 4096})
SPREAD_BOUND = "1e-60"
TOL = 1e-12
THRESHOLD = {"value": TOL, "why": "relative on/off spread of a column of S <= 1e-12: the softmax of equal float64 "
                                  "logits is exactly equal, and logits that are equal in exact arithmetic differ by "
                                  "rounding of order 1e-16 per step, far below 1e-12 over these horizons"}
HYPOTHESES = ('zero-init', 'orthogonal-P', 'uniform-S*', 'distinct-queries', 'wp-zero', 'centred', 'iid-entries',
              'gaussian-or-linear')
# every registered sigma family's representatives these hypotheses admit (W_P frozen where sigma is not odd): a new
# family is proved and claimed here without an edit
SIGMAS = admitted_sigmas(HYPOTHESES)


def regimes():
    return [regime("cnn", 8, 2, M=2, d=3, eta="1/10"),
            regime("gcn", 6, 2, M=1, d=2, eta="1/10", vstar_norm="2"),
            regime("cnn", 8, 2, M=2, d=3, eta="1/10", sigma="erf"),
            regime("cnn", 8, 2, M=2, d=2, eta="1/10", sigma="relu", wp_trainable=False),
            regime("sts", 8, 2, M=2, d=2, eta="1/5", vstar_norm="3/2", sigma="poly:0,1,0,1/10")]


# the sigmas of the regimes run (the full-balls finding speaks of these only)
RUN_SIGMAS = tuple(dict.fromkeys(s.sigma.spec() for s in regimes()))


def spreads(setting, steps: int) -> np.ndarray:
    """max_j (spread of S(t)[:, j] on g_j + spread off g_j) / max S(t)[:, j], for t = 0..steps (full
    engine, float64). A NaN in S gives NaN here (never a small spread)."""
    st = FullState(setting, Arith.make("float64", None, steps))
    out = np.empty(steps + 1)
    with np.errstate(all="ignore"):
        for t in range(steps + 1):
            if t:
                st.step()
            S = np.asarray(st.attention(), dtype=float)
            col = []
            for j, g in enumerate(setting.supports):
                on = S[list(g), j]
                off = np.delete(S[:, j], list(g))
                x = (np.ptp(on) if len(on) else 0.0) + (np.ptp(off) if len(off) else 0.0)
                col.append(x / S[:, j].max())
            out[t] = np.max(col) if np.all(np.isfinite(col)) else np.nan
    return out


def with_spreads(st) -> dict:
    """The certified observation of a ball state, with every difference S_ij - S_i'j between the first entry of a
    column on (off) its support g_j and the column's other entries on (off) it."""
    S, out = st.attention(), []
    for j, g in enumerate(st.s.supports):
        for part in (list(g), [i for i in range(st.s.D) if i not in g]):
            out += [S[i, j] - S[part[0], j] for i in part[1:]]
    return records_of(st) | {"spreads": out}


def spread_fact(run):
    """"|S_ij(t) - S_i'j(t)| <= SPREAD_BOUND on and off every support, t <= H" decided by the balls."""
    return decide_margins(below(run, lambda o: o["spreads"], SPREAD_BOUND), strict=False)


def describe_spreads(run, fact) -> str:
    end = fact.at if fact.holds is False else run.last
    widest = max((x for t in sorted(run.seen) if t <= end for x in run.seen[t]["spreads"]),
                 key=lambda x: float(abs(x).upper()), default=None)
    if widest is None:
        return "no spread to bound (every column is a single value on and off its support)"
    return (f"over t = 0..{end} every on/off-support difference of S lies within +-{upper_str(abs(widest))}"
            + ("" if fact.holds is not False else f"; at t = {fact.at} one lies entirely beyond {SPREAD_BOUND}"))


def ball_records(profile: str, settings, hypotheses) -> list[dict]:
    """The certified spreads of S(t) over t <= STEPS in each regime (kind "arb")."""
    n, bits = STEPS[profile], BALL_BITS[profile]
    return [fact_record(f"{regime_label(s)}: certified full-matrix engine ({bits} bits, no symmetry assumed), "
                        f"t <= {n}", ball_run(s, n, bits, with_spreads), spread_fact, describe_spreads,
                        hypotheses=hypotheses, observe=with_spreads,
                        bound=f"|S_ij(t) - S_i'j(t)| <= {SPREAD_BOUND} for i, i' both on or both off g_j")
            for s in settings]


@register("two-level-attention")
class TwoLevelAttention(Check):
    title = ("Every column j of S(t) takes one value on the support g_j of S* and one value off it, for all t "
             f"(sigma in {sigmas_text(SIGMAS, HYPOTHESES)}).")
    source = "a step of the proofs of Lemma C.2 and Theorem 3.1 (the reduction), as reconstructed by the toolkit (the paper's text is not at hand)"
    questions = (2, 8)
    hypotheses = HYPOTHESES
    statements = (Claimed("two-level-attention", title, "claim", hypotheses,
                          Scope(dims="all", sigma=SIGMAS, conventions="all", horizon="all"), source=source),
                  Claimed("two-level-attention.full-balls", "In the regimes run (sigma in "
                          f"{sigmas_text(RUN_SIGMAS, HYPOTHESES)}), the exact GD trajectory, enclosed over t <= H by Arb balls of the "
                          "full-matrix recursion (no symmetry or reduction assumed; H = "
                          + ", ".join(f"{STEPS[p]} at {p}" for p in STEPS) + "), has every column of S(t) two-valued "
                          f"up to the balls' radius: any two entries both on, or both off, the support g_j differ by "
                          f"at most {SPREAD_BOUND}.", "finding", hypotheses,
                          Scope(dims=tuple(sorted({dims_of(s) for s in regimes()})), sigma=RUN_SIGMAS,
                                conventions="all", horizon="all"), about="two-level-attention", relation="supports"))

    def check(self, setting, steps: int) -> RegimeOutcome:
        return bounded_series_outcome(spreads(setting, steps), setting, steps, "relative on/off spread of S(t)", "max_spread", TOL, THRESHOLD)

    def evaluate(self, profile):
        ev = []
        # every sigma of the statement (with W_P = 0): the logit gradient of a two-valued column is two-valued
        # (any kernel, symbolic dimensions, every case of K), so by induction from S(0) uniform the columns stay
        # two-valued; explicit sizes as a second route
        for spec in SIGMAS:
            ev += proof_routes(f"columns of S stay two-valued for sigma = {spec}",
                               obligations_for(parse_sigma(spec), "two-valued"), f"verify derive --sigma {spec} --json")
        n = STEPS[profile]
        for s in regimes():
            ev.append(outcome_record(self, s, n, f"full-matrix engine, t = 0..{n}"))
        # outside the hypotheses (informative): non-uniform S* weights break the two-level structure
        s = regime("sts", 6, 2, M=1, d=2, eta="1/10").with_(sstar_weights=((Fraction(3, 4), Fraction(1, 4)),))
        ev.append(outcome_record(self, s, 20, "outside the hypotheses: S* weights (3/4, 1/4)",
                                 note="columns of S are no longer two-valued (reviewer question 8)"))
        return Evaluation({self.id: ev, "two-level-attention.full-balls": ball_records(profile, regimes(),
                                                                                       self.hypotheses)},
                          scopes={"two-level-attention.full-balls": runs_scope(regimes(), n)},
                          replay=f"verify check two-level-attention --profile {profile} --json",
                          convention=convention(regimes()[0]))
