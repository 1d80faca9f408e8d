"""``certify_part(profile)``: the all-time certificates as one part of ``verify all``.

Regimes: the benchmark regime (gcn, D = N = 64, K = 4, eta = 1/32: Theorem 3.1's rates certified for every
T), and the two regimes where the rate is not 1/T, certified exactly: K = D (geometric) and K = 0 (zero
loss, no parameter convergence); beside them, a whole family of regimes certified at once (the profile's
family, verify.certify.certificate_records.FAMILIES) with its uniform normalised limits. The verdict is
:func:`verify.evidence.decide` on the benchmark regime's records; the family's statement has its own verdict;
the band data let verify.certify.figure redraw the figure from the saved result.
"""
from __future__ import annotations

import time
from fractions import Fraction

from ..coq.kernel import route_digests
from ..evidence import Scope, Statement, headline
from ..model import make_setting
from ..run import part
from ..model.flags import setting_command
from ..model.regimes import BENCHMARK_REGIME
from .certificate import CertificateFailed, certify
from .certificate_records import FAMILIES, certificate_evidence, family_evidence, regime_scope
from .figure import band, trajectory_of
from .methods import method_of

EXACT = {"K = D": dict(D=8, K=8, preset="cnn", eta="1/10"),
         "K = 0": dict(D=5, K=0, preset="sts", M=2, d=3, eta="1/2", vstar_norm="3/2")}
AT = (10**3, 10**6, 10**9, 10**12)
TRAJECTORY_STEPS = {"ci": 10**6, "dev": 10**7, "deep": 10**8}


def _options(profile: str) -> dict:
    """What the certify part's result depends on besides the code: the regime, the times, the family, and the
    trapping-region routes `verify prove --coq` saved (its kernel record reads them: a later prove makes a saved
    result stale)."""
    return {"regime": BENCHMARK_REGIME, "at": list(AT), "trajectory_steps": TRAJECTORY_STEPS[profile],
            "family": {k: [str(v) for v in r] for k, r in FAMILIES[profile].items()}, "kernel_routes": route_digests()}


@part("certify", order=5, options=_options, convention_why="the all-time certificate is built for sigma = identity, "
      "Gaussian entries and the reference P; `verify certify` with a regime's own flags certifies another regime")
def certify_part(profile: str) -> dict:
    """The part's JSON-ready result (verdict from the evidence records; see the module docstring)."""
    t0 = time.perf_counter()
    s = make_setting(**BENCHMARK_REGIME)
    scope = regime_scope(s)
    try:
        cert = certify(s)
    except CertificateFailed as exc:
        ev = certificate_evidence(s)
        return headline([Statement(STATEMENT, scope, ev)]) | {
                "finding": f"the certificate did not close: {exc}", "regime": s.config(),
                "replay": setting_command("certify", s, "--json")}
    ev = certificate_evidence(s, cert)
    bounds = [cert.bounds_json(T) for T in AT]
    width = {q: _rel_width(bounds[-1][q]) for q in ("excess_loss", "s_err", "w_err")}
    k, a = cert.constants["excess_loss"], cert.asymptotic["excess_loss"]
    traj = trajectory_of(s, TRAJECTORY_STEPS.get(profile, 10**6))
    exact = {}
    for label, kw in EXACT.items():
        se = make_setting(**kw)
        ce = certify(se)
        exact[label] = {"regime": se.config(), "certificate": ce.as_dict(), "bounds": [ce.bounds_json(T) for T in AT],
                        "evidence": certificate_evidence(se, ce),
                        "replay": setting_command("certify", se, "--json")}
    finding = (f"Theorem 3.1's T-rates certified for every T (gcn D = N = 64, K = 4, eta = 1/32): "
               f"{k['c_lo']} <= eta T (L - L_opt) <= {k['c_hi']} for T >= T0 = {cert.T0}, and eta T (L - L_opt) -> "
               f"[{a['liminf_ge']}, {a['limsup_le']}] (the derived leading constant eta b2/(2c)); relative width at "
               f"T = 1e12: " + ", ".join(f"{q} {w:.1e}" for q, w in width.items())
               + ". K = D: geometric decay rho^T (exact, no 1/T); K = 0: zero loss and no parameter convergence (exact)")
    fam = family_summary(profile)
    return headline([Statement(STATEMENT, scope, ev), fam["statement"]]) | {
        "finding": finding + ". " + fam["finding"], "family": fam["data"],
        "regime": s.config(), "certificate": cert.as_dict(), "bounds": bounds, "relative_width_at_1e12": width,
        "band": band(cert, extra=traj["T"]), "trajectory": traj,
        "exact_cases": exact, "questions": [1, 3, 4],
        "convention": {"sigma": "identity", "loss": "sum", "law_var": "1", "p_lambda": "1", "eta_kq": "eta"},
        "replay": setting_command("certify", s, "--at", ",".join(f"{T:.0e}".replace("+", "") for T in AT), "--json"),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def family_summary(profile: str) -> dict:
    """The profile's family certificate as a statement (its own scope, verify.certify.certificate_records.family_evidence),
    a one-sentence finding and the data the report prints."""
    ev = family_evidence(profile)
    scope = Scope.from_dict(ev[0]["scope"])
    st = Statement(FAMILY_STATEMENT, scope, ev)
    lim = next((r for r in ev if r.get("use") == "limits" and r.get("limits_at_largest_D")), None)
    if lim is None:
        return {"statement": st, "finding": f"the family {scope.dims[0]} did not close", "data": {"records": ev}}
    table = {q: [float(Fraction(lo)), float(Fraction(hi))] for q, (lo, hi) in lim["normalised_limits"].items()}
    dev = max(max(abs(lo - 1), abs(hi - 1)) for lo, hi in table.values())
    finding = (f"the family {scope.dims[0]} (every integer D, every eta in the range) is certified at once "
               f"({ev[0]['cells']} cells): every member's lim q(T)/leading_q(T) lies within {dev:.1e} of 1 for all "
               "three quantities")
    return {"statement": st, "finding": finding,
            "data": {"label": scope.dims[0], "cells": ev[0]["cells"], "normalised_limits": lim["normalised_limits"],
                     "limits_at_largest_D": lim["limits_at_largest_D"], "records": ev}}


FAMILY_STATEMENT = ("for every member of the family and every T >= T0 of its cell, certified lower and upper bounds "
                    "on the three quantities, and lim q(T)/leading_q(T) in the certified table")
STATEMENT = ("for every T >= 0, certified lower and upper bounds on L(T) - L_opt, ||S(T) - S*||_F and "
             "||W_X(T) - V*||_F, with c_lo <= eta T (L - L_opt) <= c_hi and c_lo <= (eta T)^(1/2) q <= c_hi "
             "for the parameter errors beyond T0 (Theorem 3.1's T-rate, upper and lower)")


def _rel_width(iv) -> float:
    lo, hi = Fraction(iv[0]), Fraction(iv[1])
    return float((hi - lo) / lo) if lo > 0 else float("inf")


def report_section(res: dict) -> str:
    """Markdown for the report's section on the all-time certificates (from a saved certify_part result)."""
    c = res.get("certificate") or {}
    lines = ["## All-time certificates (verify certify)", "",
             f"**{res.get('verdict', 'inconclusive')}**: {res.get('finding', '')}", ""]
    if c:
        lines += method_of(c).report_lines(res)
    for label, e in (res.get("exact_cases") or {}).items():
        lines.append(f"- {label}: {method_of(e['certificate']).note(e['certificate']) or ''} (`{e['replay']}`)")
    fam = res.get("family") or {}
    if fam.get("normalised_limits"):
        lines += ["", f"Family {fam['label']} ({fam['cells']} cells, each certified for all its members): "
                  "lim q(T)/leading_q(T) for every member, and the limits of (eta T)^p q at the largest D:", "",
                  "| quantity | lim q/leading_q (every member) | lim (eta T)^p q at D = "
                  f"{fam['limits_at_largest_D']['D']} |", "|---|---|---|"]
        for q, (lo, hi) in fam["normalised_limits"].items():
            a, b = fam["limits_at_largest_D"][q]
            lines.append(f"| {q} | 1 + [{float(Fraction(lo) - 1):.2e}, {float(Fraction(hi) - 1):.2e}] | "
                         f"[{float(Fraction(a)):.10g}, {float(Fraction(b)):.10g}] |")
    return "\n".join(lines) + "\n"
