"""Probe ``k-zero`` (reviewer Q4): K = 0, S* = 0, so the teacher output is identically sigma(0) = 0.

With W_X(0) = 0 the student output is 0 too: the loss is L_opt from step 0, every gradient vanishes,
W_X stays 0 and S stays uniform. So ||W_X - V*||_F = ||V*||_F and ||S - S*||_F = ||S(0)||_F = sqrt(N/D)
for all t: V* is not identifiable (any V* gives the same data), and neither limit is approached.
"""
from __future__ import annotations

import math

from ..model import make_setting
from .base import ProbeResult, classify_series, fits_json, labels, probe, question_text, regime, run_series

STEPS = 300


@probe("k-zero", (4,), "K = 0: loss optimal from step 0; W_X and S never move (V* unidentifiable)")
def run() -> ProbeResult:
    settings = {
        "sts K=0 D=5": make_setting(D=5, K=0, preset="sts", M=2, d=3, eta="1/2", vstar_norm="3/2"),
        "sts K=0 D=3 erf": make_setting(D=3, K=0, preset="sts", eta="1/2", vstar_norm="1", sigma="erf"),
    }
    regimes, data, fits, numbers = [], {}, {}, {}
    for label, s in settings.items():
        red = run_series(s, STEPS)
        full = run_series(s, STEPS, engine="full", checkpoints=red["step"])
        regimes += [regime(s, STEPS, "reduced", label=label), regime(s, STEPS, "full", label=label + " (check)")]
        data[label] = {k: red[k] for k in ("step", "loss", "s_err", "w_err")}
        fits[label] = fits_json(classify_series(red))
        numbers[label] = {
            "s_err_closed_form": math.sqrt(s.N / s.D), "s_err_range": [min(red["s_err"]), max(red["s_err"])],
            "w_err_closed_form": math.sqrt(float(s.vstar_norm2())), "w_err_range": [min(red["w_err"]), max(red["w_err"])],
            "max_loss": max(red["loss"]),
            "max_abs_dev_full_vs_reduced": max(abs(a - b) for k in ("loss", "s_err", "w_err")
                                               for a, b in zip(full[k], red[k])),
        }
    main_label = "sts K=0 D=5"
    main = classify_series(run_series(settings[main_label], STEPS))
    n = numbers[main_label]
    return ProbeResult(
        probe="k-zero", question=question_text(4), regimes=regimes,
        findings=[
            f"L - L_opt = {n['max_loss']:.1g} at every step: the zero student is already optimal.",
            f"||W_X - V*||_F stays {n['w_err_range'][0]:.6g} = ||V*||_F and ||S - S*||_F stays "
            f"{n['s_err_range'][0]:.6g} = sqrt(N/D): neither parameter approaches the teacher's.",
            "The data do not determine V* or S* at all (y = sigma(0) = 0 whatever V* is), so parameter "
            "convergence cannot hold; the loss statement holds trivially. Same with sigma = erf; the "
            "full-matrix engine agrees.",
        ],
        classification=labels(main), verdict="refuted",
        statement="Theorem 3.1 at K = 0 (||S - S*||_F and ||W_V - V*||_F -> 0)",
        verdict_detail="The parameter errors never decrease: ||S - S*||_F = sqrt(N/D), ||W_X - V*||_F = ||V*||_F "
                       "for all T; the loss is exactly optimal from T = 0 (the Θ(K D^4/(eta T)) = 0 bound holds "
                       "only because K = 0).",
        data=data, fits=fits, numbers=numbers,
        replay="verify probe k-zero --json  (one regime: verify run --D 5 --K 0 --preset sts --M 2 --d 3 --eta 1/2 "
               "--vstar-norm 3/2 --steps 300 --arithmetic float64 --json)")
