"""Probe ``rates`` (reviewer Q6): fitted tail slopes for the paper's four teachers, and their D-dependence.

Two statements, decided separately (so the reviewer table can say what holds and what does not):
1. Theorem 3.1's T-exponents (-1 for L - L_opt, -1/2 for ||S - S*||_F and ||W_X - V*||_F): for each
   preset the probe fits the log-log slopes over the last decade of T and compares the values at T with
   the exact leading terms of verify.derive.asymptotics.
2. Theorem 3.1's D-dependence (D^{5/2}, D^2, D^4): decided by the exponents of the exact leading terms
   as D -> oo (N fixed and N = D/K; lemmas.theorem_3_1_rates.symbolic_exponents), e.g.
   L - L_opt ~ K N (D - K) / (4 D eta T): D^0 at fixed N, not D^4. The probe's scan of
   T (L - L_opt) over D = 8..64 at fixed K (sts, K = 2) checks that the iteration follows that term.
"""
from __future__ import annotations

from ..evidence import Scope, compare, record
from ..fits import loglog_slope
from ..model import make_setting
from .base import ProbeResult, Statement, labels, probe, question_text, regime, scope_of
from .interior import interior_run, leading_value

STEPS = 100_000
PRESETS = {"cnn D=8 K=2": dict(D=8, K=2, preset="cnn"), "gcn D=6 K=2": dict(D=6, K=2, preset="gcn"),
           "sts D=8 K=3": dict(D=8, K=3, preset="sts"), "gslp D=8": dict(D=8, K=1, preset="gslp")}
D_SCAN = (8, 16, 32, 64)
EXP_TOL = 0.02
EXP_THRESHOLD = {"value": EXP_TOL,
                 "why": "|fitted - predicted exponent| over the last decade of T = 1e5: the leading terms' next-order "
                        "correction is O(u) = O(T^-1/2) relative (u(T) ~ 1e-2 here), which shifts a one-decade "
                        "log-log slope by about 1e-2; 0.02 admits that and no other power"}
SCAN_TOL = 0.02
SCAN_THRESHOLD = {"value": SCAN_TOL, "why": "the D-exponent of T (L - L_opt) at T = 1e5 and that of the exact leading "
                                            "term over the same D must agree to the same O(T^-1/2) correction"}
QUANTITY_TEXT = {"s_err": "||S - S*||_F", "w_err": "||W_X - V*||_F", "loss": "L - L_opt"}
REPLAY = "verify probe rates --json"


@probe("rates", (6,), "tail slopes of the four teachers; D-dependence of the constants vs the claimed D^4")
def run() -> ProbeResult:
    from lemmas.theorem_3_1_rates import symbolic_exponents
    regimes, numbers, data, runs = [], {}, {}, []
    t_records = []
    for label, kw in PRESETS.items():
        s = make_setting(**kw, eta="1/2", vstar_norm="1")
        ser, f, nums = interior_run(s, STEPS)
        regimes.append(regime(s, STEPS, "reduced", label=label))
        numbers[label] = nums["per_quantity"]
        data[label] = {k: ser[k] for k in ("step", "loss", "s_err", "w_err")}
        if label.startswith("cnn"):
            main = f
        devs = [abs(v["fitted_exponent"] - v["predicted_exponent"]) if v["fitted_exponent"] is not None
                else float("nan") for v in nums["per_quantity"].values()]
        t_records.append(record(f"{label}: log-log tail slopes over the last decade of T = {STEPS}", "float64",
                                scope_of((s, STEPS)),
                                ", ".join(f"{q} {v['fitted_exponent']:.4f} (predicted {v['predicted_exponent']:g})"
                                          for q, v in nums["per_quantity"].items()),
                                compare(devs, "<=", EXP_TOL), threshold=EXP_THRESHOLD, replay=REPLAY))
        runs.append((s, STEPS))
    scan = []
    for D in D_SCAN:
        s = make_setting(D=D, K=2, preset="sts", eta="1/2", vstar_norm="1")
        ser, _, nums = interior_run(s, STEPS)
        scan.append({"D": D, "T_times_loss": ser["loss"][-1] * ser["step"][-1],
                     "T_times_leading": leading_value(s, "loss", STEPS) * STEPS,
                     "ratio_to_leading": nums["per_quantity"]["loss"]["ratio_to_leading_term_at_T"]})
        regimes.append(regime(s, STEPS, "reduced", label=f"D scan, D = {D}"))
        runs.append((s, STEPS))
    d_exp = loglog_slope(D_SCAN, [r["T_times_loss"] for r in scan])[0]
    d_exp_lead = loglog_slope(D_SCAN, [r["T_times_leading"] for r in scan])[0]
    worst = max(abs(n["fitted_exponent"] - n["predicted_exponent"]) for lab in numbers for n in numbers[lab].values())
    table = "; ".join(f"{lab}: " + ", ".join(f"{q} {numbers[lab][q]['fitted_exponent']:.3f}" for q in numbers[lab])
                      for lab in numbers)
    import sympy as sp

    from ..derive.asymptotics import leading_terms
    ex = symbolic_exponents()
    terms = {q: sp.sstr(e) for q, e in leading_terms().items()}
    lead, cl = ex["leading"], ex["claimed"]
    keys = ("D (N fixed, D -> oo)", "D (N = D/K, D -> oo)")
    differ = [q for q in lead if any(lead[q][k] != cl[q][k] for k in keys)]
    scan_ok = compare(abs(d_exp - d_exp_lead), "<=", SCAN_TOL)
    every = Scope(dims="all", sigma=("identity",), conventions=("reference",), horizon="all")
    t_statement = Statement("Theorem 3.1's T-exponents: L - L_opt ~ 1/T, ||S - S*||_F and ||W_X - V*||_F ~ 1/sqrt(T) "
                            "(cnn, gcn, sts, gslp)", every, t_records)
    d_statement = Statement(
        "Theorem 3.1's D-dependence: ||S - S*||_F = Θ(D^{5/2}/...), ||W_X - V*||_F = Θ(D^2 ...), "
        "L - L_opt = Θ(K D^4/(eta T))", every,
        [record("D-exponents of the exact leading terms as D -> oo vs claimed", "symbolic",
                Scope(dims="all", sigma=("identity",), conventions=("reference",), horizon="all"),
                "; ".join(f"{QUANTITY_TEXT[q]} ~ {terms[q]}: D^{lead[q][keys[0]]} (N fixed), D^{lead[q][keys[1]]} "
                          f"(N = D/K) vs claimed D^{cl[q][keys[0]]}" for q in lead)
                + "; the Theta lower bounds fail as D grows",
                (not differ) if scan_ok else None, replay="verify derive --asymptotics --json"),
         record(f"T (L - L_opt) at T = {STEPS} over D = {list(D_SCAN)} (sts, K = 2) vs the exact leading term",
                "float64", scope_of(*runs[len(PRESETS):]),
                f"fitted D-exponent {d_exp:.3f}; the leading term K N (D-K)/(4 D eta T) over the same D: {d_exp_lead:.3f}",
                None, role="context" if scan_ok else "failed")],
        role="further")
    return ProbeResult(
        probe="rates", question=question_text(6), regimes=regimes,
        findings=[f"Fitted tail slopes over the last decade of T = {STEPS}: {table}.",
                  f"Largest |fitted - predicted (-1, -0.5, -0.5)| is {worst:.3f}.",
                  f"At fixed K = 2, T (L - L_opt) at T = {STEPS} grows like D^{d_exp:.2f} over D = {list(D_SCAN)}: "
                  f"bounded in D, as the leading term K N (D-K) / (4 D eta T) says (its own fitted exponent over these D: "
                  f"{d_exp_lead:.2f}), not like the claimed K D^4 / (eta T).",
                  "As D -> oo the exact leading terms grow like " + ", ".join(
                      f"{QUANTITY_TEXT[q]} D^{lead[q][keys[0]]} (N fixed) / D^{lead[q][keys[1]]} (N = D/K)"
                      for q in lead) + f", against the claimed D^{cl['s_err'][keys[0]]}, D^{cl['w_err'][keys[0]]}, "
                  f"D^{cl['loss'][keys[0]]}."],
        classification=labels(main), statements=[t_statement, d_statement],
        data=data | {"D_scan": scan}, numbers=numbers | {"D_scan": scan, "D_exponent_of_T_loss": d_exp,
                                               "D_exponent_of_leading_term": d_exp_lead,
                                               "D_exponents_leading_terms": {q: {k: str(v) for k, v in lead[q].items()}
                                                                             for q in lead}})
