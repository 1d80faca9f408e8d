"""The passage of an open atlas cell holding rho = 0 (verify.certify.passage), re-checked from the file alone.

The file's "passage" formulas are the far approach's (recheck.far, itself tied to the model's map) in xi = s alpha
omega = t beta^2 varpi^3: this checker decides exactly, over rational functions (flint),

  passage-identities  incp, ratio and bdec equal the file's far formulas at t = xi/(beta^2 varpi^3)

so the chart's map is beta' = beta/ratio, varpi' = varpi ratio E, xi' = xi ratio/E (E = e^(varpi incp)), and with
A = alpha^2, z = x beta^2 varpi bdec: A' - A = x varpi bdec (2 + z), log(A'/A) = 2 log(1 + z) >= 2 z (1 - z/2), and
log(varpi'/varpi) = log(1 + z) + varpi incp lies between varpi (incp + x beta^2 bdec (1 - z/2)) and varpi (incp + x
beta^2 bdec) for z >= 0 (algebra, stated here). Then the stated cover is replayed: on every leaf of (beta, xi, varpi)
in [0, beta_a] x [0, xi_a] x [0, pi_h] times the cell's (x, kappa), (varpi' - varpi)/varpi^2 lies in [d, g_max] (d >
0), bdec >= 0, incp - x beta^2 bdec >= 0, Psi = k A + log A grows by at least psi_min > 0 and A by at most q_max per
unit of log varpi (their rational bounds); the passage's shape is the stated far approach's (beta_max, tau, s_hi,
pi_h), and varpi_e (1 + varpi_e g_max) <= pi_h. No box may be marked as holding no member.
"""
from __future__ import annotations

import math

from recheck import certificates as R
from recheck import drift as D
from recheck import far as FA
from recheck.hyperdual import hd_power, mean_values

STATE = ("beta", "xi", "varpi", "x", "kappa")
NAMES = ("incp", "ratio", "bdec")


def check_passage_identities(F: R.Formulas) -> None:
    """The identities of the module docstring (after the far approach's)."""
    alg = R.RFAlg(STATE)
    v = {n: alg.var(n) for n in STATE}
    far_at = {"beta": v["beta"], "varpi": v["varpi"], "x": v["x"], "kappa": v["kappa"],
              "t": v["xi"] / (v["beta"] * v["beta"] * alg.power(v["varpi"], 3))}
    for n in NAMES:
        if not F("passage", n, v, alg).equals(F("far", n, far_at, alg)):
            raise R.CheckFailed("passage-identities", f"passage: {n} is not the far approach's at t = xi/(beta^2 "
                                "varpi^3), as an identity of rational functions")


def _terms(fh: dict, Z, k) -> tuple:
    """(gpi, bdec, incp - x beta^2 bdec, psi_lo, q_hi) at Z (module docstring)."""
    B, _, P, Px, _ = Z
    g, bd, ip = FA.step_terms(fh, Z)       # the far approach's step (gpi, bdec, incp), in xi for t
    xb = Px * B * B * bd
    num = Px * bd * (2 + P * xb)
    lin = 1 - P * xb / 2
    return g, bd, ip - xb, (k * num + 2 * xb * lin) / (ip + xb), num / (ip + xb * lin)


def check_passage(F: R.Formulas, cell: dict, pa: dict, fa: dict) -> int:
    """Replay the passage a cell states into its stated far approach (module docstring); the boxes that passed."""
    where = f"cell {cell['path']}"
    box = {n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in cell["box"].items()}
    st = {k: R.frac(pa[k]) for k in ("beta_a", "xi_a", "pi_h", "varpi_e", "beta_max", "tau", "s_hi", "d", "g_max",
                                     "k", "psi_min", "q_max")}
    if not (all(st[k] == R.frac(fa[k]) for k in ("beta_max", "tau", "s_hi", "pi_h")) and st["beta_a"] > 0
            and st["xi_a"] > 0 and 0 < st["varpi_e"] < st["pi_h"] and st["d"] > 0 and st["psi_min"] > 0
            and st["k"] >= 0):
        raise R.CheckFailed("passage", f"{where}: the passage's shape does not fit its far approach")
    if not st["varpi_e"] * (1 + st["varpi_e"] * st["g_max"]) <= st["pi_h"]:
        raise R.CheckFailed("passage", f"{where}: the hand-over does not hold: varpi_e (1 + varpi_e g_max) = "
                            f"{float(st['varpi_e'] * (1 + st['varpi_e'] * st['g_max'])):.4g} against pi_h")
    fh = {n: R.compile_arb([F.trees[("passage", n)]], list(STATE), power=hd_power) for n in NAMES}
    ivl = lambda lo, hi: R.interval(lo, hi)  # noqa: E731
    spans = lambda b: ", ".join(f"{n} in [{float(lo):.4g}, {float(hi):.4g}]" for n, (lo, hi) in zip(STATE, b))  # noqa

    k = R.ball(st["k"])

    def leaf(b):
        (g, _), (bd, _), (xd, _), (pl, _), (qh, _) = mean_values(lambda Z: _terms(fh, Z, k), b, ivl, R.ball)
        if not (all(q.is_finite() for q in (g, bd, xd, pl, qh)) and R.lower(g) >= st["d"]
                and R.upper(g) <= st["g_max"] and R.lower(bd) >= 0 and R.lower(xd) >= 0
                and R.lower(pl) >= st["psi_min"] and R.upper(qh) <= st["q_max"] and R.lower(qh) > 0):
            raise R.CheckFailed("passage", f"{where}: on {spans(b)}: gpi = {g} (stated d = {st['d']}, g_max = "
                                f"{st['g_max']}), bdec = {bd}, incp - x beta^2 bdec = {xd}, Psi's growth {pl} (stated "
                                f">= {st['psi_min']}), alpha^2's {qh} (stated <= {st['q_max']})")

    def start(i, j, m, n):
        return ((st["beta_a"] * i / n[0], st["beta_a"] * (i + 1) / n[0]),
                (st["xi_a"] * j / n[1], st["xi_a"] * (j + 1) / n[1]),
                (st["pi_h"] * m / n[2], st["pi_h"] * (m + 1) / n[2]), box["x"], box["kappa"])
    # no box may be marked as holding no member: s_hi = infinity refuses every such mark
    return D.replay(pa, start, math.inf, where, "passage", leaf)


__all__ = ["check_passage", "check_passage_identities"]
