"""Lemma C.2: every row of W_X(t) is a positive multiple alpha_i(t) of the same row of V*, t >= 1.

The statement's step-size hypothesis is x = eta_V c_L v N < 2K. It is judged in three parts, each on its own:

- ``lemma-C.2-small-step`` (sigma = identity, x <= min(K, D - K), x <= K when K = D): a proof for every
  dimension and every t (verify.derive.stability.positivity_obligations with the reduction's two-valued
  columns): the recursion (*) alpha(t+1) = (1 - x ||s||^2) alpha(t) + x p_on by matrix calculus, and every
  inequality of the induction by z3 and cvc5 in block form (symbolic K, D, N, e^delta): ||s||^2 <= max(1/K, 1/(D - K))
  makes the factor 1 - x ||s||^2 >= 0, so alpha >= 0 gives alpha(t+1) >= x p_on > 0.
- ``lemma-C.2-large-step`` (sigma = identity, 0 < K < D, min(K, D - K) < x < 2K): the factor can be negative
  near S = S*. The proof attempt (verify.derive.stability.large_step_obligations) leaves two steps open in
  symbolic form: delta(t) >= 0 for all t and an invariant upper bound on alpha. Cell by cell they close together
  (verify.certify.positivity_sets): over a box of (rho = K/D, x/K, kappa) an invariant set with delta >= 0 holding
  the first step (a band L <= alpha <= A, or where none exists the ratio set 0 <= alpha <= 2 alpha*: the map's
  fixed curve, or where kappa x is large a staircase L_i <= alpha <= U_i on pieces of e^-delta) gives alpha(t) > 0 for every t, checked in Arb and re-checked independently (recheck.positivity).
  The part reads Region B's result (verify.certify.region_b: rho in [1/8, 7/8], x/K from min(1, r) to 1.9, kappa
  in [1/256, 4]) from the cache when a run saved it there, else decides every cell of Region B in the run (139
  cells, about 4 s of CPU), likewise B-x-edge (x/K in [1.9, 1.98] over Region B's rho and kappa: 24 cells, about
  3 s of CPU), and the saved runs of the regions decided only by their command (B-low: rho in [1/32, 1/8], kappa
  in [1/256, 1]; B-rho-top: rho in [7/8, 0.99]; B-kappa-low: kappa in [1/65536, 1/256]; B-kappa-high: kappa in
  [4, 64]); its records cover the regimes inside certified cells for all t, and state the cells' coverage. These
  regions are not the whole hypothesis (x/K in (1.98, 2), rho below 1/32 or above 0.99, kappa outside
  [1/65536, 64] stay out, and open cells remain), so the statement, for every t and every size, is supported:
  the verdict names what was certified. Arb balls over finite t and float64 runs complete it.
- ``lemma-C.2-k-equals-d`` (sigma = identity, K = D, K < x < 2K): the large step at K = D, where S = S* from
  the start and alpha(t) stays in the invariant interval (0, 2]: a proof for every dimension and every t
  (verify.derive.stability.k_equals_d_obligations).
- ``lemma-C.2-other-sigma`` (every registered sigma != identity the hypotheses admit, W_P frozen where sigma is not
  odd: erf, relu, x + x^3/10, x + x^2/2 among the toolkit's own; while GD is a descent run): Arb
  balls of every alpha_i(t), t = 1..H, and float64 runs, relying on the reduction (rows stay along v*_m) in
  symbolic dimensions. No step-size condition is derived for sigma != identity, and x <= 1 does not suffice:
  fuzzing found sigma = x + x^3/10, D = K = 1, ||V*|| = 3, eta = 1/20 with GD diverging and alpha(5) = -1.77
  (cubic_counterexample, an outside record): the part assumes the run is a descent run (L(t+1) <= L(t)),
  checked on the run itself (verify.evidence.regime_runs.descent_precondition).

Outside records (never deciding): the cubic counterexample, a sinusoidal P (P^T P != lambda I) below 2K/(c_L v N),
eta above 2K/(c_L v N), and K = 0. The envelope of alpha (min, max, overshoot above 1 and when) is reported per
regime; C_1, C_2, C_3 of the paper's proof are interpreted (our reading; the paper's text is not at hand) as the
lower envelope inf_{t>=1} alpha, the upper envelope sup_t alpha, and the contraction factor of the alpha
recursion (a context record, and ``numbers["c_constants"]``).

In every fixed regime the certified full-matrix engine (Arb balls of every entry, no symmetry or reduction assumed;
verify.evidence.ball_facts) decides, for t <= H, that every alpha_i(t) ball (t >= 1) lies above 0 and that every off-span
residual ||w_i - alpha_i v*_i|| lies in a ball [0, r] with r <= 1e-60. In exact arithmetic the residual is 0 (the
reduction); a ball containing 0 cannot show that, so what is certified is the bound by the balls' radius. For
ReLU with W_P frozen this is the statement's conclusion, up to that radius, with no reduction assumed.
"""
from __future__ import annotations

import json
from fractions import Fraction
from types import SimpleNamespace

import numpy as np

from verify.errors import PrecisionError
from verify.evidence import Scope, compare, dims_of, finite, record
from lemmas import register
from verify.checks import Check, Claimed, Evaluation, RegimeOutcome
from verify.model.hypotheses import admitted_sigmas, sigmas_text, step_x
from verify.model.regions import merged
from verify.model.profiles import per_profile
from verify.evidence.regime_runs import (DESCENT, convention, descent_precondition, first_increase_in, fmt,
                                         reduced_float64, regime, regime_label, replay_run)
from verify.evidence.regime_records import obligations_text, outcome_record, prerequisite, regime_scope
from verify.evidence.ball_facts import ball_run, below, both, decide_margins, exceeds, fact_record, show, upper_str
from verify.engines import iterate
from verify.derive.obligations import proof_routes
from verify.derive.reduction_proof import obligations_for
from verify.derive.stability import k_equals_d_obligations, large_step_obligations, positivity_obligations
from verify.model.precision import mpmath_precision
from verify.model.sigmas import parse_sigma
from verify.engines.arb import iterate_certified
from verify.coq.kernel import kernel_route
from verify.certify.atlas_evidence import positivity_scope
from verify.certify.positivity import REGIONS
from verify.certify.positivity_sets import SETS, obligations_of
from verify.certify import region_b    # its functions called through the module: a test points cache_file elsewhere
from verify.derive.invariants import invariants_of
from recheck.positivity import CheckFailed, describe, recheck

HORIZON = per_profile({"ci": 1500, "dev": 20000, "deep": 200000})
ARB_HORIZON = per_profile({"ci": 150, "dev": 1000, "deep": 5000})
FULL_STEPS = per_profile({"ci": 60, "dev": 300, "deep": 1000})
# Arb precision of the certified full-matrix runs over FULL_STEPS: the balls' radius grows by up to 2^3.4 a step
# (x = 7/2, the wrapping effect of verify.engines.fullarb), and must stay below OFFSPAN_BOUND = 2^-200 at the horizon
BALL_BITS = per_profile({"ci": 512, "dev": 2048, "deep": 4096})
OFFSPAN_BOUND = "1e-60"
SOURCE = "Lemma C.2 (appendix)"
HYPOTHESES = ("zero-init", "centred", "iid-entries", "gaussian-or-linear", "wp-zero", "K>0", "eta-stable", "orthogonal-P", "uniform-S*",
              "distinct-queries", "descent")
# every registered sigma family's representatives the hypotheses admit (W_P frozen where sigma is not odd); the
# identity's parts add their own step-size hypotheses, every other sigma is lemma-C.2-other-sigma's, and gets a
# regime (regimes), without an edit
SIGMAS = admitted_sigmas(HYPOTHESES)
OTHER_SIGMAS = tuple(spec for spec in SIGMAS if not parse_sigma(spec).is_identity)
# the regime chosen for some sigmas != identity; every other one of OTHER_SIGMAS runs in OTHER_DEFAULT
OTHER_REGIMES = {"erf": dict(preset="cnn", D=8, K=2, M=2, d=3, eta="1/10", vstar_norm="1"),
                 "relu": dict(preset="cnn", D=8, K=2, M=2, d=2, eta="1/10", vstar_norm="1"),
                 "poly:0,1,0,1/10": dict(preset="sts", D=8, K=2, M=2, d=2, eta="1/5", vstar_norm="3/2")}
OTHER_DEFAULT = dict(preset="cnn", D=8, K=2, M=2, d=2, eta="1/10", vstar_norm="1")
SMALL = HYPOTHESES + ("identity", "eta-small-step")
LARGE = HYPOTHESES + ("identity", "eta-large-step", "0<K<D")
AT_K_EQUALS_D = HYPOTHESES + ("identity", "eta-large-step", "K=D")
EVERY = dict(dims="all", conventions="all", horizon="all")
C_CONSTANTS = ("our reading (the paper's text is not at hand): C_1 = lower envelope inf_{t>=1} alpha_i(t) (identity: "
               "attained at t = 1, alpha(1) = eta c_L v N / D); C_2 = upper envelope sup_t alpha_i(t) = 1 + overshoot "
               "(alpha tracks alpha*(u) = 1 + u + O(u^2) > 1, so alpha exceeds 1 and returns to 1 from above); C_3 = "
               "the contraction factor 1 - eta c_L v ||S(t)||^2 of the alpha recursion, in [1 - eta c_L v N/K, "
               "1 - eta c_L v N/D] once the support mass is at least K/D")
POSITIVE = "for every t >= 1 every row of W_X(t) is a positive multiple alpha_i(t) of the same row of V*"
OFFSPAN_TOL = 1e-9
# the small-step induction's SMT steps that Coq's kernel checks too (verify.coq.groups, group "lemma-C.2")
KERNEL_KEYS = ("c2-positive", "c2-factor", "c2-step", "c2-base")
THRESHOLD = {"value": 0, "why": "alpha_i(t) > 0 strictly, and the full engine's off-span residual <= 1e-9 max(1, "
                                "max alpha): alpha(t) >= alpha(1) = eta c_L v N/D is far above float64 rounding "
                                "(1e-16 relative), and the off-span residual is exactly 0 in exact arithmetic, its "
                                "float64 rounding below 1e-12 over these horizons"}
FULL_THRESHOLD = {"value": {"offspan_over_alpha": 1e-12, "alpha_full_minus_reduced": 1e-10, "alpha": 0},
                  "why": "the full engine assumes no symmetry: its off-span residual is 0 and its alpha equals the "
                         "reduced recursion's in exact arithmetic; float64 rounding over <= 1000 steps stays below "
                         "1e-13 relative, so 1e-12 and 1e-10 leave margin without hiding a real departure"}
ARB_THRESHOLD = {"value": 0, "why": "each Arb ball of alpha_i(t) lies entirely above 0 (a rigorous enclosure of the "
                                    "exact recursion: no rounding allowance)"}


def regimes():
    """The fixed regimes: sigma = identity in the small-step range (eta_V c_L v N <= min(K, D - K), K = D included)
    and in the large-step range (up to 2K, with D < 2K and K = D among them), and every other supported sigma."""
    return [
        regime("cnn", 8, 2, M=2, d=3, eta="1/10", vstar_norm="1"),
        regime("gcn", 6, 2, M=1, d=2, eta="1/10", vstar_norm="2"),
        regime("sts", 16, 4, M=1, d=1, eta="1/2", vstar_norm="1"),
        regime("cnn", 6, 6, M=1, d=2, eta="1/10"),                        # K = D: S = S* from the start
        regime("sts", 8, 2, M=1, d=1, eta="3", vstar_norm="1"),           # x = 3 in (2, 4)
        regime("gcn", 6, 2, M=1, d=2, eta="1/2", vstar_norm="2"),         # x = 3 in (2, 4), N = D
        regime("sts", 3, 2, M=1, d=2, eta="7/2", vstar_norm="1"),         # D < 2K: x = 7/2 in (1, 4)
        regime("cnn", 4, 4, M=1, d=1, eta="6", vstar_norm="1"),           # K = D: x = 6 in (4, 8)
    ] + [other_regime(spec) for spec in OTHER_REGIMES if spec in OTHER_SIGMAS] + [
        other_regime(spec) for spec in OTHER_SIGMAS if spec not in OTHER_REGIMES]


def other_regime(spec: str):
    """The regime of ``spec`` != identity (OTHER_REGIMES, else OTHER_DEFAULT), W_P frozen where it is not odd."""
    kw = dict(OTHER_REGIMES.get(spec, OTHER_DEFAULT))
    return regime(kw.pop("preset"), kw.pop("D"), kw.pop("K"), sigma=spec, **kw,
                  **({} if parse_sigma(spec).odd else {"wp_trainable": False}))


def cubic_counterexample() -> dict:
    """The fuzzer's counterexample to Lemma C.2 without a step-size condition for a non-identity sigma,
    reproduced by the full-matrix engine in mpmath (no reduction assumed): sigma(x) = x + x^3/10,
    D = K = 1, ||V*|| = 3, eta = 1/20. Here eta_V c_L v N = 1/20 <= K (the identity condition holds),
    yet the loss rises at t = 4 and alpha(5) < 0. Outside the claim's descent hypothesis (role
    "outside": reported, never deciding); it answers the reviewers' question: Lemma C.2 is false for
    this sigma unless the step size keeps GD a descent run."""
    s = regime("cnn", 1, 1, M=1, d=1, eta="1/20", vstar_norm="3", sigma="poly:0,1,0,1/10")
    T = 5
    tr = iterate(s, T, "full", "mpmath", dps=30, checkpoints=range(T + 1))
    with mpmath_precision(30):
        alpha = [float(r.alpha[0]) for r in tr.records]
        loss = [float(r.loss) for r in tr.records]
    up = next((t for t in range(1, T + 1) if loss[t] > loss[t - 1]), None)
    neg = next((t for t in range(1, T + 1) if alpha[t] <= 0), None)
    cond = step_x(s)
    return record("outside the step-size hypothesis (sigma != identity): counterexample", "mpmath",
                  regime_scope(s, T),
                  f"outside the step-size hypothesis, Lemma C.2 fails: sigma = {s.sigma.spec()}, D = K = 1, "
                  f"||V*|| = 3, eta = {s.eta_v} (eta_V c_L v N = {cond} <= K = 1): GD diverges, the loss first "
                  f"rises at t = {up} and alpha({neg}) = {fmt(alpha[neg]) if neg else 'n/a'} < 0 "
                  f"(alpha(0..{T}) = {', '.join(fmt(a, 4) for a in alpha)}; full engine, mpmath, 30 digits)",
                  False if neg else None, role="outside", replay=replay_run(s, T, "full", "mpmath"),
                  alpha=[fmt(a, 10) for a in alpha], loss=[fmt(x, 10) for x in loss], first_loss_increase=up,
                  first_nonpositive=neg, outside=DESCENT.text,
                  regime_text=f"σ = {s.sigma.spec()}, D = K = {s.D}, η = {s.eta_v}, ‖V*‖ = {s.vstar_norm}",
                  note="the identity-derived condition eta_V c_L v N <= K (here K = D = 1) does not carry over to other sigma; "
                       "the claim is stated under the descent hypothesis instead")


def envelope(series, s) -> dict:
    """min / max of alpha_i(t) over 1 <= t <= T per row, the overshoot above 1 and when it peaks."""
    a = series.alpha[1:]
    steps = series.steps[1:]
    rows = []
    for m in range(s.M):
        col = a[:, m]
        i_min, i_max = int(np.argmin(col)), int(np.argmax(col))
        rows.append({"row": m, "min": fmt(col[i_min]), "min_at": int(steps[i_min]), "max": fmt(col[i_max]),
                     "max_at": int(steps[i_max]), "overshoot": fmt(max(0.0, col[i_max] - 1)),
                     "final": fmt(col[-1])})
    out = {"rows": rows, "min": float(a.min()), "max": float(a.max()), "interior": 0 < s.K < s.D}
    if s.sigma.is_identity and 0 < s.K < s.D and getattr(series, "delta", None) is not None:
        # C_3 reading: the factor 1 - eta c_L v ||S(t)||^2 of the affine alpha recursion (*), with
        # ||S||^2 = N (K e^{2 delta} + D - K) / (K e^delta + D - K)^2 for two-valued columns
        E = np.exp(series.delta[:-1])
        sq = s.N * (s.K * E * E + s.D - s.K) / (s.K * E + s.D - s.K) ** 2
        f = 1 - float(s.eta_v * s.loss_scale * s.law.var) * sq
        out["contraction_factor"] = {"min": fmt(f.min()), "max": fmt(f.max()),
                                     "bounds": [fmt(1 - float(s.eta_v * s.loss_scale * s.law.var * s.N) / s.K),
                                                fmt(1 - float(s.eta_v * s.loss_scale * s.law.var * s.N) / s.D)]}
    return out


def full_engine_check(setting, n: int) -> RegimeOutcome:
    """The full-matrix engine (no symmetry assumed) against the reduced recursion over t = 1..n: off-span
    residuals, |alpha_full - alpha_reduced| and min alpha (float64)."""
    tr = iterate(setting, n, "full", "float64", checkpoints=range(1, n + 1))
    with np.errstate(all="ignore"):
        off = np.array([float(x) / max(1e-300, float(a)) for r in tr.records for x, a in zip(r.offspan, r.alpha)])
    red = reduced_float64(setting, n, checkpoints=range(1, n + 1)).alpha
    full = np.array([[float(a) for a in r.alpha] for r in tr.records])
    replay = replay_run(setting, n, "full")
    if not finite(off, full, red):
        return RegimeOutcome(None, "non-finite values in the full-engine run: undecided", replay,
                             threshold=FULL_THRESHOLD)
    gap = float(np.max(np.abs(full - red)))
    holds = (compare(off, "<", 1e-12) and compare(gap, "<", 1e-10) and compare(full, ">", 0))
    return RegimeOutcome(holds, f"max off-span/alpha {off.max():.2e}, max |alpha_full - alpha_reduced| {gap:.2e}, "
                         f"min alpha {full.min():.6g}", replay, {"max_offspan_over_alpha": float(off.max()),
                                                                 "max_gap": gap}, threshold=FULL_THRESHOLD)


def multiples_fact(run):
    """"alpha_i(t) > 0 for 1 <= t <= H and |off-span_i(t)| <= OFFSPAN_BOUND for t <= H" decided by the balls."""
    return both(decide_margins(exceeds(run, lambda o: o["record"].alpha, 0)),
                decide_margins(below(run, lambda o: o["record"].offspan, OFFSPAN_BOUND), strict=False))


def describe_multiples(run, fact) -> str:
    recs = [run.seen[t]["record"] for t in sorted(run.seen) if t <= (fact.upto or run.last)]
    t, low = min(((r.step, a) for r in recs[1:] for a in r.alpha), key=lambda ta: float(ta[1].lower()),
                 default=(None, None))
    high = max((x for r in recs for x in r.offspan), key=lambda x: float(x.upper()))
    head = ("no step t >= 1 reached" if low is None else
            f"every ball of alpha_i(t), t = 1..{recs[-1].step}, lies above 0 (the lowest: {show(low, 6)})"
            if low.lower() > 0 else f"the ball of alpha({t}) lies entirely at or below 0: {show(low, 6)}"
            if low.upper() <= 0 else f"the ball of alpha({t}) straddles 0: {show(low, 6)}")
    return (f"{head}; every off-span ball lies within [0, {upper_str(high)}] (the widest: {show(high, 3)}): the "
            "residual is 0 in exact arithmetic, and the balls bound it by their radius")


def full_ball_record(s_, steps: int, bits: int, hypotheses) -> dict:
    """alpha_i(t) > 0 and the off-span residual <= 1e-60 over t <= ``steps``, from the certified full-matrix engine
    at ``bits`` bits (no symmetry or reduction assumed); outside ``hypotheses`` it reports (role "outside")."""
    run = ball_run(s_, steps, bits)
    return fact_record(f"certified full-matrix engine ({run.bits} bits, no symmetry assumed): alpha_i(t) > 0 and "
                       f"|off-span| <= {OFFSPAN_BOUND}, t <= {run.horizon}", run, multiples_fact, describe_multiples,
                       hypotheses=hypotheses, bound=f"every alpha_i(t) ball (t >= 1) above 0 and every off-span ball "
                                                  f"within [0, {OFFSPAN_BOUND}]")


def proof_records() -> dict:
    """The proofs' evidence per part (verify.derive.stability, with the reduction's symbolic-dimension
    obligations for sigma = identity: the two-valued columns and W_P = 0 every step relies on)."""
    columns = obligations_for(parse_sigma("identity"), "all", explicit=False)
    # the load-bearing steps: the SymPy reduction (two-valued columns of S, W_P = 0, the affine alpha recursion)
    # and the SMT induction (z3 and cvc5) on it
    small = proof_routes("the SymPy reduction, then an SMT induction: alpha(t) > 0 for t >= 1 (sigma = identity, "
                         "x <= min(K, D - K))", positivity_obligations().obligations + columns)
    # the kernel route (Coq, verify.coq): the induction's SMT steps as theorems; "not run" without coqc
    kernel = kernel_route("lemma-C.2", KERNEL_KEYS)
    for rec in small:
        if rec["route"].endswith("(symbolic dimensions)"):
            rec["kernel"] = kernel
            rec["result"] += (f"; {kernel['status']} (Coq): {kernel['why']}" if kernel["status"] != "not run"
                              else f"; kernel route not run: {kernel['why']}")
    kd = proof_routes("the SymPy reduction, then an SMT induction at K = D: alpha(t) in (0, 2] for t >= 1 and "
                      "0 < x < 2K (sigma = identity)", k_equals_d_obligations().obligations + columns)
    large = proof_routes("induction for min(K, D - K) < x < 2K, K < D (sigma = identity): attempt",
                         large_step_obligations().obligations + columns)
    return {"lemma-C.2-small-step": small, "lemma-C.2-large-step": large, "lemma-C.2-k-equals-d": kd}


def arb_record(s_, H: int) -> dict:
    """alpha_i(t) > 0 certified for t = 1..H by Arb balls of the reduced recursion (128 bits)."""
    tr = iterate_certified(s_, H, bits=128, checkpoints=range(H + 1))
    lows = [min(float(a.lower()) for a in r.alpha) for r in tr.records[1:]]
    pos = all(a > 0 for r in tr.records[1:] for a in r.alpha)
    return record(f"Arb balls of alpha_i(t), t = 1..{H}", "arb", regime_scope(s_, H),
                  f"every ball > 0: {pos}; smallest lower end {min(lows):.6g}", True if pos else None,
                  threshold=ARB_THRESHOLD, horizon=H, bits=128,
                  relies_on="the reduction (verify.derive.reduction_proof) at this regime's sizes")


def alpha1_record(s_) -> tuple[dict, dict]:
    """alpha(1) = eta c_L v <S(0), S*> = eta c_L v N / D exactly (S(0) uniform; sigma = identity) against the
    float64 iteration: the iteration is the exact recursion's."""
    a1 = Fraction(s_.eta_v * s_.loss_scale * s_.law.var * s_.N, s_.D)
    first = float(reduced_float64(s_, 1).alpha[1, 0])
    agrees = compare(abs(first - float(a1)), "<=", 1e-14 * float(a1))
    rec = prerequisite("alpha(1) = eta c_L v N / D (closed form) vs the float64 iteration", "float64",
                       regime_scope(s_, 1), f"closed form {a1}, iterated {fmt(first, 15)} (relative tolerance 1e-14: "
                       "one float64 step)", agrees)
    return rec, {"alpha1_closed_form": str(a1), "alpha1_iterated": fmt(first, 15)}


def outside_records(claim) -> dict:
    """Regimes outside the hypotheses, per part they bear on (role "outside": reported, never deciding)."""
    s_out = regime("gcn", 6, 2, M=1, d=2, eta="9/10", vstar_norm="2")
    thr = Fraction(2 * s_out.K) / (s_out.loss_scale * s_out.law.var * s_out.N)
    # found by `verify fuzz --claim lemma-C.2`: eta c_L v N = 99/25 is below 2K/(c_L v N) = 4, yet the columns of S
    # concentrate, ||S||^2 exceeds N/K and alpha(3) < 0
    s_sin = regime("sts", 4, 2, M=1, d=1, eta="99/25", vstar_norm="2", p_kind="sinusoidal", p_structure="general")
    return {
        "lemma-C.2-small-step": [outcome_record(
            claim, regime("sts", 6, 0, M=1, d=2, eta="1/10"), 300, "edge case K = 0, D = 6",
            note="K = 0: S* = 0, the teacher is 0 and W_X stays 0, so alpha = 0 is not a positive multiple: the lemma "
                 "needs K >= 1")],
        "lemma-C.2-large-step": [
            outcome_record(claim, s_out, 400, f"outside the hypotheses: eta_V = {s_out.eta_v} > 2K/(c_L v N) = {thr}",
                           note="GD diverges in the W_X block and alpha changes sign: the step-size hypothesis is "
                                "needed"),
            outcome_record(claim, s_sin, 3, "outside the hypotheses: sinusoidal P (P^T P != lambda I)",
                           note="the step-size threshold 2K/(c_L v N) assumes two-valued columns of S, which need "
                                "P^T P = lambda I: with sinusoidal P, alpha(3) < 0 below that threshold"),
            # the same counterexample certified: a ball of alpha(3) entirely below 0 (outside: it never decides)
            full_ball_record(s_sin, 3, 256, claim.statement("lemma-C.2-large-step").hypotheses)],
        "lemma-C.2-other-sigma": [cubic_counterexample()],
    }


def outside_numbers(rec: dict) -> dict:
    """The cubic counterexample's regime, first step with alpha <= 0 and alpha there (README's numbers)."""
    t = rec["first_nonpositive"]
    return {"regime": rec["regime_text"], "t": t, "alpha": float(rec["alpha"][t]) if t is not None else None}


def _from_rho_zero(o: dict) -> str:
    """", its cells start at rho = 0: every D >= N K" for a region whose box starts at rho = 0 (a cell [0, rho_hi]
    holds every member with 0 < rho = K/D <= rho_hi, i.e. every D >= K/rho_hi at once) and has no open cell (with
    one, the certified cells need not reach rho = 0), else ""."""
    lo, hi = (Fraction(v) for v in o["region"]["rho"])
    return f"; from rho = 0: every D >= {1 / hi} K" if lo == 0 and o["certified"] and not o["open"] else ""


def large_step_why(profile: str, regimes_run: int, cover: dict | None = None) -> dict:
    """The large-step part's one sentence: what is certified, what the rest rests on, and the proof steps that
    stay open."""
    still_open = [o.name for o in large_step_obligations().obligations if o.holds is None]
    regions = [("B", cover)] + [(n, o) for n, o in (cover or {}).get("other_regions", {}).items() if "cells" in o]
    kinds = ", ".join(k.name for k in SETS[:-1]) + f" or {SETS[-1].name}"
    band = ("" if not cover else f"; for every t and every D, an invariant set (of a kind of "
            f"verify.certify.positivity_sets: {kinds}) certified "
            + ", ".join(f"{o['certified']} of {o['cells']} cells of Region {n} ({100 * o['decided_fraction']:.1f}% "
                        "of its volume in (rho, x, log2 kappa)" + _from_rho_zero(o) + ")" for n, o in regions)
            + ": every regime whose (rho = K/D, x, kappa) lies in "
            + ("; ".join(cover.get("regions", [])[:4]) + (f" or {len(cover['regions']) - 4} more boxes"
                                                         if len(cover.get("regions", [])) > 4 else "")
               if cover.get("regions") else "no certified cell")
            + ", which is not the whole hypothesis")
    return {"lemma-C.2-large-step": f"certified only for t <= {ARB_HORIZON[profile]} in {regimes_run} regimes (Arb "
                                    f"balls; the full-matrix balls to t <= {FULL_STEPS[profile]}), float64 runs agree "
                                    f"to t = {HORIZON[profile]}{band}; for every t and every size the induction does "
                                    "not close, open: " + "; ".join(still_open)}


def _saved_run(name: str) -> tuple[dict | None, str | None]:
    """A region's saved run in the cache (verify.certify.region_b.cache_file), every certified cell re-checked by the
    independent re-checker: (result, where it came from); (None, why) when the file is refused; (None, None) when
    there is none."""
    path = region_b.cache_file(name)
    if not path.is_file():
        return None, None
    res = json.loads(path.read_text())
    try:
        for c in res["cells"]:
            if c["status"] == "certified":
                recheck(c)
        return res, f"saved run {path.name} (every certified cell re-checked independently)"
    except (CheckFailed, KeyError, TypeError) as exc:
        return None, f"the saved run {path.name} was refused ({exc})"


def _region_result(name: str) -> tuple[dict | None, str]:
    """A region's result: its saved run (:func:`_saved_run`); else, unless the region is marked "saved_only", every
    initial cell decided now in this process (Region B: about 4 s of CPU for its 139 cells; B-x-edge about 3 s for
    its 24); else None. Returns (result, where it came from)."""
    res, why = _saved_run(name)
    if res is not None or REGIONS[name].get("saved_only"):
        return res, why
    why = (why + "; " if why else "") + "every cell decided in this run"
    return region_b.run_cells_here(region_b.initial_cells(region=name), region=name), why


def region_b_result() -> tuple[dict, str]:
    """Region B's result (:func:`_region_result`)."""
    return _region_result("B")


def saved_region_results() -> list:
    """(name, result or None, where it came from) for every region beside Region B (positivity.REGIONS) with a
    result (:func:`_region_result`: a saved run, else one decided in this run unless "saved_only") or a refused
    saved run; a "saved_only" region without a saved run is left out."""
    out = []
    for name in REGIONS:
        if name != "B":
            res, why = _region_result(name)
            if why is not None:
                out.append((name, res, why))
    return out


def _coverage(res: dict) -> dict:
    """A region's result in brief: its cells, how many are certified and open, the decided fraction, its box."""
    return {"cells": len(res["cells"]), "certified": res["counts"]["certified"], "open": res["counts"]["open"],
            "decided_fraction": res["decided_fraction"], "region": res["region"]}


def region_b_records(settings) -> tuple[list, dict]:
    """The invariant-band records of the large-step part: one Arb record (all t) whose scope is the certified cells'
    boxes of (rho, x, kappa) as Regions (verify.certify.atlas_evidence.positivity_scope: every regime at their
    points, every D), with the coverage of Region B and the claim's regimes inside them; open cells as context
    records naming their reasons."""
    res, source = region_b_result()
    others = saved_region_results()
    cells = res["cells"] + [c for _, r, _ in others if r is not None for c in r["cells"]]
    inside = []
    for s_ in settings:
        r_, x_, y_ = invariants_of(s_)
        c = region_b.cell_of_point(cells, (1 / (1 + r_), x_, y_ / x_))
        if c is not None and c["status"] == "certified":
            inside.append((s_, c))
    cover = _coverage(res) | {"measure": res["measure"], "source": source}
    if others:
        cover["other_regions"] = {name: (_coverage(r) if r is not None else {}) | {"source": src}
                                  for name, r, src in others}
    recs = []
    certified = [c for c in cells if c["status"] == "certified"]
    obs = obligations_of(certified)
    steps_ok = all(o.holds is True for o in obs)
    # the certified cells' boxes of (rho = K/D, x, kappa) as Regions: every regime at their points, every D
    scope = positivity_scope([c["cell"] for c in certified]) if certified else None
    # the certified cells' union in as few boxes as it takes (a region certified whole reads as its box)
    cover["regions"] = [r.label() for r in merged(list(scope.dims))] if certified else []
    if certified:
        bands = "; ".join(f"{regime_label(s_)}: {describe(c)}" for s_, c in inside)
        recs.append(record("invariant sets over the cells of Region B and its neighbours (verify.certify."
                           "positivity_sets; re-checked by recheck.positivity), every t >= 1", "arb", scope,
                           f"for every regime whose (rho, x, kappa) lies in one of the {len(certified)} certified "
                           f"cells, alpha(t) > 0 for all t >= 1 (an invariant set); {len(inside)} of this claim's "
                           f"regimes lie in them" + (f" ({bands})" if bands else "") + f"; Region B: "
                           f"{cover['certified']} of {cover['cells']} cells certified, "
                           f"{100 * cover['decided_fraction']:.1f}% of its volume ({source})"
                           + "".join(f"; Region {name}: " + (f"{o['certified']} of {o['cells']} cells certified, "
                                                             f"{100 * o['decided_fraction']:.1f}% of its volume "
                                                             if "cells" in o else "") + f"({o['source']})"
                                     for name, o in cover.get("other_regions", {}).items()),
                           True if steps_ok else None, threshold=ARB_THRESHOLD, coverage=cover,
                           cells=[c["cell"] for c in certified],
                           relies_on=[{"step": o.name, "status": o.status} for o in obs]))
    for name, r in [("B", res)] + [(name, r) for name, r, _ in others if r is not None]:
        for c in r.get("open", []):
            recs.append(record(f"Region {name} cell {c['path']} open", "arb", Scope(sigma=("identity",)),
                               f"cell {c['cell']}: {c['reason']}", None, role="context"))
    return recs, cover



@register("lemma-C.2")
class LemmaC2(Check):
    title = ("Lemma C.2: " + POSITIVE + f", under eta_V < 2K/(c_L v N) (sigma in {sigmas_text(SIGMAS, HYPOTHESES)}; "
             "for sigma != identity while GD is a descent run, L(t+1) <= L(t)).")
    source = SOURCE
    questions = (2,)
    hypotheses = HYPOTHESES
    long_horizon = True
    statements = (
        Claimed("lemma-C.2-small-step", "For sigma = identity and eta_V c_L v N <= min(K, D - K) (<= K when K = D): "
                + POSITIVE + ".", "claim", SMALL, Scope(sigma=("identity",), **EVERY), source=SOURCE),
        Claimed("lemma-C.2-large-step", "For sigma = identity, 0 < K < D and min(K, D - K) < eta_V c_L v N < 2K: "
                + POSITIVE + ".", "claim", LARGE, Scope(sigma=("identity",), **EVERY), source=SOURCE),
        Claimed("lemma-C.2-k-equals-d", "For sigma = identity, K = D and K < eta_V c_L v N < 2K (the large step at "
                "K = D): " + POSITIVE + ".", "claim", AT_K_EQUALS_D, Scope(sigma=("identity",), **EVERY),
                source=SOURCE),
        Claimed("lemma-C.2-other-sigma", f"For sigma in {sigmas_text(OTHER_SIGMAS, HYPOTHESES)}, eta_V < 2K/(c_L v N) "
                "and while GD is a descent run (L(t+1) <= L(t)): " + POSITIVE + ".", "claim", HYPOTHESES,
                Scope(sigma=OTHER_SIGMAS, **EVERY), source=SOURCE),
    )

    def part_of(self, setting) -> str:
        """The id of the part whose scope admits ``setting`` (its sigma and setting-level hypotheses)."""
        return next(st.id for st in self.statements if st.scope.admits(setting))

    def check(self, setting, steps: int) -> RegimeOutcome:
        """alpha_i(t) > 0 for 1 <= t <= steps (reduced recursion, float64; full engine if not reducible)."""
        ok, why = setting.reducible()
        replay = replay_run(setting, steps, "reduced" if ok else "full")
        try:
            series = reduced_float64(setting, steps) if ok else None
        except PrecisionError:
            return self._diverged(setting, steps)
        if ok:
            offspan = 0.0
            loss = series.excess
        else:
            tr = iterate(setting, steps, "full", "float64", checkpoints=range(steps + 1))
            al = np.array([[float(x) for x in r.alpha] for r in tr.records])
            series = SimpleNamespace(alpha=al, steps=np.arange(steps + 1), delta=None)
            offspan = max(float(x) for r in tr.records for x in r.offspan)
            loss = np.array([float(x) for x in tr.series("loss")])
        descent, why_not, first_up = descent_precondition(setting, loss)
        data = {"first_loss_increase": first_up}
        if not descent:
            data |= {"in_hypotheses": False, "outside": why_not}
        if not finite(series.alpha, offspan):
            # NaN / overflow in an observable decides nothing (never "holds")
            return RegimeOutcome(None, f"alpha or the off-span residual is not finite over 1..{steps} (float64): "
                                 "undecided", replay, data, threshold=THRESHOLD)
        env = envelope(series, setting)
        holds = compare(series.alpha[1:], ">", 0) and compare(offspan, "<=", OFFSPAN_TOL * max(1.0, env["max"]))
        bad = None
        if not holds:
            neg = np.nonzero(series.alpha[1:].min(axis=1) <= 0)[0]
            bad = int(series.steps[1:][neg[0]]) if len(neg) else None
            replay = replay_run(setting, bad, "reduced" if ok else "full") if bad else replay
        detail = (f"min alpha = {fmt(env['min'])}, max alpha = {fmt(env['max'])} over 1..{steps}"
                  + (f"; alpha <= 0 first at t = {bad}" if bad else "") + (f"; off-span {offspan:.2e}" if not ok else ""))
        return RegimeOutcome(holds, detail, replay, data | {"envelope": env, "first_nonpositive": bad},
                             threshold=THRESHOLD)

    def _diverged(self, setting, steps: int) -> RegimeOutcome:
        """The float64 reduced run left the float range before ``steps``: GD diverged, so the loss rose
        from a finite L(0) past 1e308 and the run is not a descent run. For sigma != identity that is
        outside the claim's hypotheses (the outcome says so, with alpha over the finite prefix); for
        sigma = identity no run-level hypothesis applies and the regime cannot be evaluated in float64:
        the outcome is undecided (holds None), never counted as support."""
        if setting.sigma.is_identity:
            return RegimeOutcome(None, f"float64 reduced iteration overflowed before step {steps}: undecided "
                                 "(use mpmath)", replay_run(setting, steps, "reduced", "mpmath"), threshold=THRESHOLD)
        lo, hi = 0, steps            # last step count that stays finite: reduced_float64(lo) succeeds
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                reduced_float64(setting, mid)
                lo = mid
            except PrecisionError:
                hi = mid
        series = reduced_float64(setting, lo)
        a = series.alpha[1:]
        holds = compare(a, ">", 0) if a.size else None
        bad = first_increase_in(np.append(series.excess, np.inf))
        detail = (f"GD diverged: float64 overflow at t = {hi}; alpha over 1..{lo}: "
                  + (f"min {fmt(a.min())}, max {fmt(a.max())}" if a.size else "none"))
        return RegimeOutcome(holds, detail, replay_run(setting, hi, "reduced", "mpmath"),
                             {"first_loss_increase": bad, "in_hypotheses": False,
                              "outside": f"the run leaves the descent regime (sigma = {setting.sigma.spec()}): "
                                         f"the loss first rises at t = {bad} and overflows float64 at t = {hi}"},
                             threshold=THRESHOLD)

    def regime_records(self, s_, profile: str) -> tuple[list, dict]:
        """Arb balls to ARB_HORIZON, the reduced recursion to HORIZON (with the envelope of alpha), the full-matrix
        engine to FULL_STEPS, and for sigma = identity alpha(1) against its closed form, for one fixed regime."""
        T, n = HORIZON[profile], FULL_STEPS[profile]
        recs = [arb_record(s_, ARB_HORIZON[profile])]
        out = self.regime_check(s_, T)
        env = out.data.get("envelope", {})
        extra = {}
        if s_.sigma.is_identity:
            rec, extra = alpha1_record(s_)
            recs.append(rec)
        recs.append(outcome_record(self, s_, T, f"reduced recursion, t = 1..{T}", out=out, envelope=env.get("rows")))
        recs.append(outcome_record(full_engine_check, s_, n, f"full-matrix engine (no symmetry assumed), t = 1..{n}"))
        recs.append(full_ball_record(s_, n, BALL_BITS[profile], self.statement(self.part_of(s_)).hypotheses))
        return recs, {"regime": regime_label(s_), **{k: v for k, v in env.items() if k != "rows"},
                      "rows": env.get("rows"), **extra}

    def evaluate(self, profile):
        ev = {st.id: [] for st in self.statements}
        for sid, recs in proof_records().items():
            ev[sid] += recs
        regs = regimes()
        # the direction part for every sigma != identity (rows stay along v*_m, symbolic dimensions): what the Arb
        # and float64 routes rely on when they iterate the reduced recursion
        for sig in sorted({s_.sigma for s_ in regs if not s_.sigma.is_identity}, key=lambda z: z.spec()):
            rows = obligations_for(sig, "rows", explicit=False)
            ok = bool(rows) and all(o.holds is True for o in rows)
            ev["lemma-C.2-other-sigma"].append(prerequisite(
                "reduction: rows of dL/dW_X stay along v*_m (direction only; positivity is the other routes')",
                "symbolic", Scope("all", (sig.spec(),), "all", "all"), obligations_text(rows), ok))
        envs = []
        for s_ in regs:
            recs, env = self.regime_records(s_, profile)
            ev[self.part_of(s_)] += recs
            envs.append(env)
        outside = outside_records(self)
        for sid, recs in outside.items():
            ev[sid] += recs
        band_recs, cover = region_b_records([s_ for s_ in regs if self.part_of(s_) == "lemma-C.2-large-step"
                                             and 0 < s_.K < s_.D])
        ev["lemma-C.2-large-step"] += band_recs
        T = HORIZON[profile]
        ev["lemma-C.2-small-step"].append(record(
            "interpretation of C_1, C_2, C_3", "float64", Scope(dims=tuple(sorted({dims_of(s_) for s_ in regs})),
                                                                sigma=SIGMAS, conventions="all", horizon=T),
            C_CONSTANTS, None, role="context", envelopes=envs))
        numbers = {"c_constants": C_CONSTANTS, "alpha_envelopes": envs,
                   # the peaks of alpha over the regimes with 0 < K < D (above 1: the multiples are not bounded
                   # by 1; at K = D alpha(t) = 1 - q^t approaches 1 from below)
                   "alpha_overshoot": [min(e["max"] for e in envs if e["interior"]),
                                       max(e["max"] for e in envs if e["interior"])],
                   "outside_step_size": outside_numbers(outside["lemma-C.2-other-sigma"][0]),
                   "region_b": cover}
        large = sum(self.part_of(s_) == "lemma-C.2-large-step" for s_ in regs)
        return Evaluation(ev, numbers=numbers, why=large_step_why(profile, large, cover),
                          replay=f"verify check lemma-C.2 --profile {profile} --json",
                          convention=convention(regs[0]) | {"horizon_float64": T, "horizon_arb": ARB_HORIZON[profile],
                                                            "arb_bits": 128})
