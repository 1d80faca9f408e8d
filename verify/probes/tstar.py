"""Probe ``tstar`` (reviewer Q9): how the time to reach the asymptotic regime grows with D.

Along the slow manifold u = 1 - p obeys Delta u = -c u^3, c = eta D ||V*||^2 / (K (D-K)^2)
(verify.derive.asymptotics), so u^-2(T) ~ u0^-2 + 2 c T with u0 = (D-K)/D: the transient lasts
T* ~ u0^-2 / (2c) = K D / (2 eta ||V*||^2). Two measured definitions, per D:
  T*_cross: the first step with u(t)^-2 >= 2 u0^-2 (the growth term has caught up with the start);
  T*_track: the last recorded step at which L - L_opt is more than 10% away from its leading term.
Family A keeps K = 2 (and eta, ||V*||) fixed; family B has K = D/2. The probe fits log T* on log D.
"""
from __future__ import annotations

import numpy as np

from ..engines import Arith
from ..engines.reduced import ReducedState
from ..evidence import REPLAY_FACTOR, Scope, compare, record
from ..fits import loglog_slope
from ..model import make_setting
from .base import (ProbeResult, Statement, classify_series, fits_json, labels, probe, question_text, regime, run_series,
                   scope_of)
from .interior import leading_value

FAMILIES = {"A: K = 2": ((4, 8, 16, 32, 64), lambda D: 2), "B: K = D/2": ((4, 8, 16, 32, 64), lambda D: D // 2)}
TRACK_TOL = 0.1
CLASSIFY_STEPS = 300_000
HORIZON_FACTOR = 60   # horizon of the T*_track run, in units of the predicted K D / (2 eta ||V*||^2)
CLAIMED = 2.0
FIT_THRESHOLD = {"value": "|exponent - 2| > 3 x uncertainty",
                 "why": "uncertainty = max(2 standard errors, largest deviation of a local exponent between consecutive "
                        "D from the fit): statistical error and finite-D drift of the slope; 3 x that is the smallest "
                        "difference read as a real disagreement"}
LOCAL_TOL = 0.15
LOCAL_THRESHOLD = {"value": LOCAL_TOL,
                   "why": "|local exponent between the two largest D - 2|: the prediction K D/(2 eta ||V*||^2) with "
                          "K = D/2 gives exactly 2; the measured local exponents approach it from below as D grows "
                          "(finite-D corrections of the transient), by less than 0.15 at D = 32..64"}
REPLAY = "verify probe tstar --json"


def exponent_fit(D, T) -> dict:
    """Slope of log T against log D, its uncertainty and whether it differs from 2 (FIT_THRESHOLD)."""
    slope_, se = loglog_slope(D, T)
    local = [float(np.log(T[i + 1] / T[i]) / np.log(D[i + 1] / D[i])) for i in range(len(T) - 1)]
    unc = max(2 * se, max(abs(x - slope_) for x in local))
    return {"exponent": slope_, "se": se, "uncertainty": unc, "local": local,
            "differs": compare(abs(slope_ - CLAIMED), ">", 3 * unc)}


def t_cross(s) -> int:
    """First step with u^-2 >= 2 u0^-2 (module docstring)."""
    st = ReducedState(s, Arith.make("float64", None, 10))
    u0 = (s.D - s.K) / s.D
    while True:
        u = 1 - float(st.record().support_mass[0])
        if u ** -2 >= 2 * u0 ** -2:
            return st.step_count
        st.step()


def t_track(s, horizon: int):
    """Last recorded step where |(L - L_opt) / leading - 1| > TRACK_TOL, and the run."""
    ser = run_series(s, horizon)
    last = 0
    for t, v in zip(ser["step"], ser["loss"]):
        if t >= 1 and abs(v / leading_value(s, "loss", t) - 1) > TRACK_TOL:
            last = t
    return (None if last == ser["step"][-1] else last), ser


def slope(D, T) -> float:
    return loglog_slope(D, T)[0]


@probe("tstar", (9,), "T* ~ K D / (2 eta ||V*||^2): linear in D at fixed K, quadratic only when K ~ D")
def run() -> ProbeResult:
    regimes, numbers, data = [], {}, {}
    for fam, (Ds, Kof) in FAMILIES.items():
        rows = []
        for D in Ds:
            s = make_setting(D=D, K=Kof(D), preset="sts", eta="1/2", vstar_norm="1")
            pred = s.K * s.D / (2 * float(s.eta_v) * float(s.vstar_norm2()))
            horizon = int(HORIZON_FACTOR * pred)
            tc = t_cross(s)
            tt, ser = t_track(s, horizon)
            rows.append({"D": D, "K": s.K, "predicted_KD_over_2eta_vn2": pred, "t_cross": tc, "t_track": tt})
            regimes.append(regime(s, horizon, "reduced", label=f"{fam}, D = {D}"))
        Dv = [r["D"] for r in rows]
        fit = {"exponent_t_cross": slope(Dv, [r["t_cross"] for r in rows]),
               "exponent_predicted": slope(Dv, [r["predicted_KD_over_2eta_vn2"] for r in rows]),
               "local_exponent_t_cross_last_pair": slope(Dv[-2:], [r["t_cross"] for r in rows[-2:]])}
        tr = [r for r in rows if r["t_track"]]
        if len(tr) >= 2:
            fit["exponent_t_track"] = slope([r["D"] for r in tr], [r["t_track"] for r in tr])
        numbers[fam] = {"rows": rows, "fit": fit}
        data[fam] = {"D": Dv, "t_cross": [r["t_cross"] for r in rows], "t_track": [r["t_track"] for r in rows],
                     "predicted": [r["predicted_KD_over_2eta_vn2"] for r in rows]}
    # Classification: the largest family-A regime, run far past its T*_track.
    last_s = make_setting(D=64, K=2, preset="sts", eta="1/2", vstar_norm="1")
    f = classify_series(run_series(last_s, CLASSIFY_STEPS))
    regimes.append(regime(last_s, CLASSIFY_STEPS, "reduced", label="classification run"))
    a, b = numbers["A: K = 2"]["fit"], numbers["B: K = D/2"]["fit"]
    rows_a, rows_b = numbers["A: K = 2"]["rows"], numbers["B: K = D/2"]["rows"]
    sets_a = [make_setting(D=r["D"], K=r["K"], preset="sts", eta="1/2", vstar_norm="1") for r in rows_a]
    sets_b = [make_setting(D=r["D"], K=r["K"], preset="sts", eta="1/2", vstar_norm="1") for r in rows_b]
    horizons_a = [int(HORIZON_FACTOR * r["predicted_KD_over_2eta_vn2"]) for r in rows_a]
    fa = exponent_fit([r["D"] for r in rows_a], [r["t_cross"] for r in rows_a])
    extra = {}
    if fa["differs"]:
        # T*_cross is a first crossing: it has no horizon to lengthen. The statement is asymptotic in D, so the
        # replay re-measures it over 10x larger D (same K, eta, ||V*||): its exponent must differ from 2 as well
        big = [REPLAY_FACTOR * r["D"] for r in rows_a]
        crosses = [t_cross(make_setting(D=D, K=2, preset="sts", eta="1/2", vstar_norm="1")) for D in big]
        g = exponent_fit(big, crosses)
        extra["replay_check"] = {"horizon": max(crosses), "holds": False if g["differs"] else None,
                                 "detail": f"T*_cross has no horizon (a first crossing); replayed at {REPLAY_FACTOR}x "
                                           f"larger D = {big}: T*_cross = {crosses}, exponent {g['exponent']:.3f} +- "
                                           f"{g['uncertainty']:.3f}"}
    fixed_k = [record("T*_cross against D at fixed K = 2 (log-log fit)", "float64",
                      scope_of(*[(s_, h) for s_, h in zip(sets_a, horizons_a)]),
                      f"exponent {fa['exponent']:.3f} +- {fa['uncertainty']:.3f} (local "
                      f"{', '.join(f'{x:.3f}' for x in fa['local'])}); claimed 2; derived K D/(2 eta ||V*||^2): 1",
                      None if fa["differs"] is None else not fa["differs"], threshold=FIT_THRESHOLD, replay=REPLAY,
                      **extra)]
    for r, s_, h in zip(rows_a, sets_a, horizons_a):
        if r["t_track"] is None:     # a measurement that failed: the statement is at most inconclusive
            fixed_k.append(record(f"T*_track at D = {r['D']}", "float64", scope_of((s_, h)),
                                  f"the 10% band around the leading term is left at the horizon {h}: T*_track not "
                                  "measured", None, role="failed"))
    fixed_k.append(record("slow-manifold prediction T* = 1/(2 c u0^2) = K D/(2 eta ||V*||^2)", "symbolic",
                          Scope(dims="all", sigma=("identity",), conventions=("reference",), horizon="all"),
                          "exponent 1 in D at fixed K, 2 when K grows like D (verify.derive.asymptotics)", None,
                          role="context"))
    every = Scope(dims="all", sigma=("identity",), conventions=("reference",), horizon="all")
    s1 = Statement("T* grows like D^2 (read at fixed K, eta, ||V*||)", every, fixed_k)
    s2 = Statement("T* grows like D^2 when K grows with D (K = D/2)", every,
                   [record("local exponent of T*_cross between the two largest D (K = D/2)", "float64",
                           scope_of(*[(s_, int(HORIZON_FACTOR * r["predicted_KD_over_2eta_vn2"]))
                                      for s_, r in zip(sets_b[-2:], rows_b[-2:])]),
                           f"{b['local_exponent_t_cross_last_pair']:.3f} (claimed 2)",
                           compare(abs(b["local_exponent_t_cross_last_pair"] - CLAIMED), "<=", LOCAL_TOL),
                           threshold=LOCAL_THRESHOLD, replay=REPLAY)],
                   role="further")
    return ProbeResult(
        probe="tstar", question=question_text(9), regimes=regimes,
        findings=[
            f"Fixed K = 2, eta = 1/2, ||V*|| = 1: T*_cross grows like D^{a['exponent_t_cross']:.2f} "
            f"(T*_track like D^{a.get('exponent_t_track', float('nan')):.2f}); predicted K D / (2 eta ||V*||^2) is "
            "linear in D.",
            f"K = D/2: T*_cross grows like D^{b['exponent_t_cross']:.2f} (last pair D^"
            f"{b['local_exponent_t_cross_last_pair']:.2f}; T*_track D^{b.get('exponent_t_track', float('nan')):.2f}), "
            "approaching the predicted D^2 = (K D) with K proportional to D.",
            "So the D^2 of the paper is the K ~ D case; at fixed support size the transient is linear in the sequence "
            "length, and in general it is K D / (2 eta ||V*||^2).",
        ],
        classification=labels(f), statements=[s1, s2],
        data=data, fits={f"A: K = 2, D = {last_s.D}": fits_json(f)}, numbers=numbers)
