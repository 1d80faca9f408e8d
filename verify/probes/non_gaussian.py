"""Probe ``non-gaussian`` (reviewer Q7): entry laws other than the Gaussian.

sigma = identity: the population loss E||W_X X S + W_P P S - V* X S*||^2 / 2 expands into moments of
order <= 2 of the entries only (verify.derive.loss.prove_identity_closed_form proves it symbolically),
so every standardised law gives the same loss function and hence the same GD trajectory: exact.
The probe runs each law, checks the trajectories are identical, and confirms the closed form by
Monte Carlo under each law at the trained parameters (an independent route).
Other sigma: no closed form for non-Gaussian laws. The probe trains under the Gaussian law (where the
kernel is exact) and estimates by Monte Carlo the loss the trained parameters have under each law;
these numbers are labelled ``monte-carlo`` and carry standard errors.
"""
from __future__ import annotations


from ..derive.loss import prove_identity_closed_form
from ..engines import Arith
from ..engines.full import FullState
from ..evidence import Scope, compare, record
from ..model import make_setting, parse_law
from .base import (ProbeResult, Statement, classify_series, fits_json, labels, probe, question_text, regime, run_series,
                   scope_of)
from .montecarlo import mc_loss

LAWS = ("gaussian", "rademacher", "student-t:5", "gumbel", "exponential")
STEPS = 20_000
FULL_STEPS = 400
MC_SAMPLES = 20_000
Z_MAX = 4
MC_THRESHOLD = {"value": f"|z| <= {Z_MAX}", "why": "z = (Monte Carlo mean - closed form) / standard error is about "
                                                   "standard normal at 20000 draws; |z| > 4 happens by chance with "
                                                   "probability 6e-5 per law"}
SAME_THRESHOLD = {"value": 0, "why": "the law enters the generated recursion only through its mean and variance, so "
                                     "runs under laws with equal moments execute the same float64 operations: any "
                                     "difference at all would be a real one"}
REPLAY = "verify probe non-gaussian --json"


def trained_full(setting, steps: int) -> FullState:
    """The full-matrix state after ``steps`` float64 GD steps."""
    st = FullState(setting, Arith.make("float64", None, steps))
    for _ in range(steps):
        st.step()
    return st


def mc_table(setting, state: FullState) -> dict:
    """Monte Carlo loss under every law at the state's parameters, with the closed form (Gaussian kernel)."""
    S = state.attention()
    out = {"closed_form_gaussian": float(state.excess_loss(S))}
    for law in LAWS:
        mean, se = mc_loss(setting, state.WX, state.WP, S, parse_law(law), MC_SAMPLES, seed=7)
        out[law] = {"mc_mean": mean, "mc_stderr": se}
    return out


@probe("non-gaussian", (7,), "other entry laws: identical trajectories for sigma = identity (exact); Monte Carlo else")
def run() -> ProbeResult:
    base = dict(D=6, K=2, preset="sts", M=2, d=2, eta="1/2", vstar_norm="1")
    regimes, data, series = [], {}, {}
    for law in LAWS:
        s = make_setting(**base, law=law)
        series[law] = run_series(s, STEPS)
        regimes.append(regime(s, STEPS, "reduced", label=f"identity, {law}"))
    ref = series["gaussian"]
    max_dev = max(abs(a - b) for law in LAWS for q in ("loss", "s_err", "w_err")
                  for a, b in zip(series[law][q], ref[q]))
    proved, how = prove_identity_closed_form()
    data["identity"] = {"step": ref["step"], **{f"loss[{law}]": series[law]["loss"] for law in LAWS}}
    # Monte Carlo at the trained parameters (identity) and at a few steps for erf.
    s_id = make_setting(**base)
    st_id = trained_full(s_id, 30)
    mc_id = mc_table(s_id, st_id)
    s_erf = make_setting(D=4, K=2, preset="sts", M=1, d=2, eta="1/2", vstar_norm="1", sigma="erf")
    regimes += [regime(s_id, 30, "full", label="identity: Monte Carlo at step 30"),
                regime(s_erf, FULL_STEPS, "full", label="erf, trained under gaussian; Monte Carlo under each law")]
    mc_erf = {}
    for t in (20, FULL_STEPS):
        mc_erf[str(t)] = mc_table(s_erf, trained_full(s_erf, t))
    z_id = max(abs(mc_id[law]["mc_mean"] - mc_id["closed_form_gaussian"]) / mc_id[law]["mc_stderr"] for law in LAWS)
    fin = mc_erf[str(FULL_STEPS)]
    ratios = {law: fin[law]["mc_mean"] / fin["closed_form_gaussian"] for law in LAWS}
    fits = classify_series(ref)
    numbers = {"identity_max_trajectory_difference_across_laws": max_dev,
               "identity_closed_form_proved": proved, "identity_closed_form_proof": how,
               "identity_monte_carlo_at_step_30": mc_id, "identity_max_z_score": z_id,
               "erf_monte_carlo (labelled: monte-carlo, not exact)": mc_erf,
               "erf_ratio_mc_loss_to_gaussian_closed_form_at_T": ratios}
    data["erf_monte_carlo"] = mc_erf
    every = Scope(dims="all", sigma=("identity",), conventions=("any law: mean 0, variance 1",), horizon="all")
    same = Statement(
        "For sigma = identity, GD follows the same trajectory under every entry law with mean 0 and variance 1 (so "
        "Theorem 3.1's Gaussian analysis transfers)", every,
        [record("the population loss uses only E[x] and E[x^2] (entry-by-entry expectation = matrix closed form)",
                "symbolic", Scope(dims=("M=2 d=2 D=3 N=2",), sigma=("identity",), conventions="all", horizon="all"),
                how, True if proved else None),
         record(f"trajectories under {', '.join(LAWS)}, t <= {STEPS}", "float64",
                scope_of(*[(make_setting(**base, law=law), STEPS) for law in LAWS]),
                f"max difference {max_dev:.1g}", compare(max_dev, "<=", 0), threshold=SAME_THRESHOLD, replay=REPLAY),
         record(f"Monte Carlo ({MC_SAMPLES} draws per law) at the parameters after 30 steps", "monte-carlo",
                scope_of((s_id, 30)), f"largest |z| = {z_id:.2f} against the closed form", compare(z_id, "<=", Z_MAX),
                threshold=MC_THRESHOLD, replay=REPLAY)])
    nonlinear = Statement(
        "For sigma = erf, Theorem 3.1's Gaussian computations carry over to other entry laws",
        Scope(dims="all", sigma=("erf",), conventions=("any law: mean 0, variance 1",), horizon="all"),
        [record(f"Monte Carlo loss under each law at Gaussian-trained parameters (t = {FULL_STEPS})", "monte-carlo",
                scope_of((s_erf, FULL_STEPS)),
                "loss ratios (law / Gaussian closed form) " + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items())
                + ": the law changes the loss landscape; whether the rates survive is not tested here", None,
                role="context")],
        role="further")
    return ProbeResult(
        probe="non-gaussian", question=question_text(7), regimes=regimes,
        findings=[
            f"sigma = identity: the trajectories under {', '.join(LAWS)} coincide (max difference {max_dev:.1g}): "
            "the loss uses only E[x] and E[x^2] (" + ("proved symbolically: " if proved else "NOT proved: ") + how + ").",
            f"Monte Carlo ({MC_SAMPLES} draws per law) at the parameters after 30 steps agrees with the closed form "
            f"under every law (largest |z| = {z_id:.2f}).",
            "sigma = erf (monte-carlo, not exact): parameters trained under the Gaussian law have, after "
            f"{FULL_STEPS} steps, loss ratios (law / Gaussian closed form) "
            + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items())
            + ": the law changes the loss landscape once sigma is non-linear, so Theorem 3.1's Gaussian "
              "computations do not transfer as they stand.",
        ],
        classification=labels(fits), statements=[same, nonlinear],
        data=data, fits={"identity (every law)": fits_json(fits)}, numbers=numbers)
