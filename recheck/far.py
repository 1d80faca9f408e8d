"""The far approach of an open atlas cell holding rho = 0 (verify.certify.far), re-checked from the file alone.

The file's "far" formulas are a chart of the model's map: with alpha = 1/beta, nu = beta varpi, s = t nu^4, y = kappa
x, u = 1/(1 + nu) and E(u) the coordinates' gap (tied to the model by the coordinates step), this checker decides
exactly, over rational functions (flint),

  far-identities  the model's delta-increment at (alpha, E(u)) is varpi incp; alpha + the model's alpha-increment is
                  alpha ratio; ratio - 1 = x beta^2 varpi bdec; and s u^3 e(nu, t, eta/s) = alpha - alpha*(u) with e
                  the file's drift e_of (so eta is the landing's eta = s h)

so the chart's map is beta' = beta/ratio, varpi' = alpha' nu' = varpi ratio E1 (nu' = nu E1, E1 = e^inc: the drift
identities' next gap), t' = t/E1^4, and (varpi' - varpi)/varpi^2 = incp X ratio + x beta^2 bdec with E1 = 1 + inc X
(algebra, stated here). Then the stated covers are replayed: on every leaf of (beta, t, varpi) in [0, beta_max] x [0,
tau] x [0, pi_h] times the cell's (x, kappa) that quotient is >= d, bdec >= 0 and incp >= 0 (mean-value forms from
hyper-dual evaluations, recheck.hyperdual); on every leaf of the layer pi_h <= varpi <= pi_x eta lies in [-eps_a,
-eps] and nu e^(c |eta|)/(1 + eta) <= nu_room (nu = beta varpi, c the stated approach's: that is the approach's
entry set, nu <= nu_in(s) e^-K_a(eta0), K_a(eta0) = c |eta0| - log(1 + eta0)); pi_h (1 + pi_h g_max) <= pi_x with
g_max no less than the leaves give; and nu_room <= nu_in_min, recomputed from the stated landing
(verify.certify.landing.nu_in_min over s <= the far approach's s_hi, stated here again). No box may be marked as
holding no member.
"""
from __future__ import annotations

import math
from fractions import Fraction

from flint import ctx

from recheck import certificates as R
from recheck import drift as D
from recheck import landing as L
from recheck.hyperdual import exprel, hd_power, mean_values

STATE = ("beta", "t", "varpi", "x", "kappa")


def check_far_identities(F: R.Formulas) -> None:
    """The identities of the module docstring (after the coordinates' and the drift band's)."""
    alg = R.RFAlg(STATE)
    v = {n: alg.var(n) for n in STATE}
    beta, t, varpi, x, kappa = (v[n] for n in STATE)
    nu = beta * varpi
    s, y, u, al = t * alg.power(nu, D.T_POWER), kappa * x, alg.num(1) / (1 + nu), alg.num(1) / beta
    base = {"s": s, "x": x, "y": y}
    co = lambda name, **env: F("coordinates", name, base | env, alg)  # noqa: E731
    mp = lambda name, **env: F("reduced_map", name, base | env, alg)  # noqa: E731
    fa = lambda name: F("far", name, v, alg)  # noqa: E731
    E_u = co("E_of_u", u=u)
    checks = {
        "the model's delta-increment at (1/beta, E(u)) is varpi incp": (
            mp("delta_increment", E=E_u, alpha=al), varpi * fa("incp")),
        "alpha + the model's alpha-increment is alpha ratio": (al + mp("alpha_increment", E=E_u, alpha=al),
                                                               al * fa("ratio")),
        "ratio - 1 = x beta^2 varpi bdec": (fa("ratio") - 1, x * beta * beta * varpi * fa("bdec")),
        "s u^3 e(nu, t, eta/s) = alpha - alpha*(u)": (
            s * alg.power(u, 3) * F("drift", "e_of", {"nu": nu, "t": t, "h": fa("eta") / s, "x": x, "kappa": kappa},
                                    alg), al - co("alpha_star", u=u)),
    }
    for what, (lhs, rhs) in checks.items():
        if not lhs.equals(rhs):
            raise R.CheckFailed("far-identities", f"far: {what} does not hold as an identity of rational functions")


def step_terms(fh: dict, Z) -> tuple:
    """((varpi' - varpi)/varpi^2, bdec, incp) at Z: incp X ratio + x beta^2 bdec, X = exprel(varpi incp)."""
    B, _, P, Px, _ = Z
    ip, r, bd = (fh[n](*Z)[0] for n in ("incp", "ratio", "bdec"))
    return ip * exprel(P * ip) * r + Px * B * B * bd, bd, ip


def _nu_in_min(land: dict, s_max: Fraction) -> Fraction:
    """nu_in(s) >= this for every 0 < s <= s_max <= the landing's s_hi (verify.certify.landing.nu_in_min, stated
    again)."""
    c = {k: R.frac(land[k]) for k in ("eps", "eps1", "W", "v_hi", "C", "a", "b", "K0", "K1")} | {"s_hi": s_max}
    lam_n = R.frac(land["lambda_n"])
    w = c["W"] - c["C"] / (1 - lam_n)
    ell = (1 / L._q(lam_n)).log()
    s_star = L._q(c["eps1"] / w) / L._q(Fraction(1)).exp()
    if c["s_hi"] <= R.lower(s_star):
        sL = L._q(c["s_hi"]) * L._q(c["eps1"] / (c["s_hi"] * w)).log() / ell
    else:
        sL = s_star / ell
    K = L._q(c["K0"]) + L._q(c["K1"]) * (L._q(c["s_hi"] * (int(land["j_f"]) + 1)) + sL)
    return R.lower(L._q(c["v_hi"]) * (-K).exp())


def check_far(F: R.Formulas, cell: dict, fa: dict, appr: dict) -> int:
    """Replay the far approach a cell states into its stated approach (module docstring); the boxes that passed."""
    where = f"cell {cell['path']}"
    box = {n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in cell["box"].items()}
    land = cell["checks"]["trajectory"]["evidence"]["landing"]
    st = {k: R.frac(fa[k]) for k in ("beta_max", "tau", "eps_a", "eps", "nu_room", "pi_h", "pi_x", "d", "g_max",
                                     "s_hi")}
    if not (0 < st["s_hi"] <= R.frac(land["s_hi"]) and st["tau"] == R.frac(appr["tau"])
            and st["eps_a"] == R.frac(appr["eps_a"]) and st["eps"] == R.frac(appr["eps"]) and 0 < st["pi_h"] < st["pi_x"] < 1 and st["d"] > 0
            and st["beta_max"] > 0 and R.frac(fa["c"]) == R.frac(appr["c"])):
        raise R.CheckFailed("far", f"{where}: the far approach's shape does not fit its approach")
    old = ctx.prec
    ctx.prec = L.COUNT_BITS
    try:
        room = _nu_in_min(land, st["s_hi"])
    finally:
        ctx.prec = old
    if not (st["nu_room"] <= room and st["pi_h"] * (1 + st["pi_h"] * st["g_max"]) <= st["pi_x"]):
        raise R.CheckFailed("far", f"{where}: the hand-over does not hold: nu room {float(st['nu_room']):.4g} (at most "
                            f"{float(room):.4g}), pi_h (1 + pi_h g_max) = "
                            f"{float(st['pi_h'] * (1 + st['pi_h'] * st['g_max'])):.4g} against pi_x")
    c = R.ball(R.frac(appr["c"]))
    fh = {n: R.compile_arb([F.trees[("far", n)]], list(STATE), power=hd_power) for n in ("incp", "ratio", "bdec", "eta")}
    ivl = lambda lo, hi: R.interval(lo, hi)  # noqa: E731
    spans = lambda b: ", ".join(f"{n} in [{float(lo):.4g}, {float(hi):.4g}]" for n, (lo, hi) in zip(STATE, b))  # noqa

    def leaf(b):
        (g, _), (bd, _), (ip, _) = mean_values(lambda Z: step_terms(fh, Z), b, ivl, R.ball)
        if not (g.is_finite() and R.lower(g) >= st["d"] and R.upper(g) <= st["g_max"] and bd.is_finite()
                and R.lower(bd) >= 0 and ip.is_finite() and R.lower(ip) >= 0):
            raise R.CheckFailed("far", f"{where}: on {spans(b)}: gpi = {g} (stated d = {st['d']}, g_max = "
                                f"{st['g_max']}), bdec = {bd}, incp = {ip}")

    def layer(b):
        ((e, _),) = mean_values(lambda Z: fh["eta"](*Z), b, ivl, R.ball)
        q = ivl(*b[0]) * ivl(*b[2]) * (-c * e).exp() / (1 + e)
        if not (e.is_finite() and R.lower(e) >= -st["eps_a"] and R.upper(e) <= -st["eps"] and q.is_finite()
                and R.upper(q) <= st["nu_room"]):
            raise R.CheckFailed("far", f"{where}: on the layer, {spans(b)}: eta = {e}, nu e^(c |eta|)/(1 + eta) = {q} "
                                f"(the approach's entry: <= the nu room {float(st['nu_room']):.4g})")

    def start(lo, hi):
        return lambda i, j, k, n: ((st["beta_max"] * i / n[0], st["beta_max"] * (i + 1) / n[0]),
                                   (st["tau"] * j / n[1], st["tau"] * (j + 1) / n[1]),
                                   (lo + (hi - lo) * k / n[2], lo + (hi - lo) * (k + 1) / n[2]), box["x"], box["kappa"])
    # no box may be marked as holding no member: s_hi = infinity refuses every such mark
    n = D.replay(fa, start(Fraction(0), st["pi_h"]), math.inf, where, "far", leaf)
    n += D.replay({"grid": fa["layer_grid"], "trees": fa["layer_trees"], "bits": fa.get("bits", 128)},
                  start(st["pi_h"], st["pi_x"]), math.inf, where, "far", layer)
    return n
