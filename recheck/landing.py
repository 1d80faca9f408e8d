"""The landing of an open atlas cell holding rho = 0 (verify.certify.landing), re-checked from the file alone.

The file's "landing" formulas are the drift band's chart (recheck.drift, itself tied to the model's map) in the lag
over omega, eta = s h with s = t nu^4: decided exactly over rational functions (flint),

  landing-identities  Ghat = s Gamma(nu, t, eta/s); Delta(Ghat) = the band's Delta at Gamma = Ghat/s; eta + x deta
                      = s (h + x dh) at h = eta/s, Gamma = Ghat/s (X and E1 free)

and then the stated cover is replayed: the initial grid of (nu, t, eta) times the cell's (x, kappa), each box split
as its tree says; on every leaf 0 <= d eta'/d eta <= lambda (lambda_n where eta >= -eps1, else lambda_f), d Ghat/d eta
<= 0 (both mean-value forms whose gradients are the e1 e2 parts of hyper-dual evaluations over the box:
recheck.hyperdual), and at h = 0 the band's Gamma > 0 and -(1 - lambda_n) W/2 <= h' <= W (recheck.drift's own
enclosures). The constants C = max(-h'(0), 0), a = max(-d Ghat/d eta), b = max Gamma(0) so recomputed must not
exceed the stated ones, and the count the statement rests on is recomputed from the stated constants: w = W - C/(1 -
lambda_n) > 0, eps1 > C s_hi/(1 - lambda_f), C s_hi <= (1 - lambda_n) eps1, j_f, K0, K1 (each stated value at least
the recomputed one). The approach before it (its stated "approach") is replayed the same way: on every leaf eta' -
eta >= d_min, Ghat > 0, eta' <= 0 and log(nu/(1 + eta)) growing by at most c (eta' - eta), by mean-value forms of
its own (recheck.hyperdual.mean_values over the terms stated here), and N_a, K_a recomputed.
"""
from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, ctx

from recheck import certificates as R
from recheck import drift as D
from recheck.hyperdual import HD, exprel, hd_power, mean_values

STATE = ("nu", "t", "eta", "x", "kappa")
NAMES = STATE + ("Ghat", "X", "E1")
ARGS = {"Ghat": STATE, "Delta": ("nu", "t", "Ghat", "x", "kappa"),
        "deta": ("nu", "t", "eta", "Ghat", "X", "E1", "x", "kappa")}


def check_landing_identities(F: R.Formulas) -> None:
    """The identities of the module docstring (after recheck.drift's, which tie the band's chart to the model)."""
    alg = R.RFAlg(NAMES)
    v = {n: alg.var(n) for n in NAMES}
    nu, t, eta, x, G = (v[n] for n in ("nu", "t", "eta", "x", "Ghat"))
    s = t * alg.power(nu, D.T_POWER)
    h = eta / s
    dr = lambda name, **env: F("drift", name, v | env, alg)  # noqa: E731
    ld = lambda name, **env: F("landing", name, v | env, alg)  # noqa: E731
    checks = {
        "Ghat = s Gamma(nu, t, eta/s)": (ld("Ghat"), s * dr("Gamma", h=h)),
        "Delta(Ghat) is the band's Delta at Gamma = Ghat/s": (ld("Delta"), dr("Delta", Gamma=G / s)),
        "eta + x deta = s (h + x dh) at h = eta/s, Gamma = Ghat/s": (
            eta + x * ld("deta"), s * (h + x * dr("dh", h=h, Gamma=G / s))),
    }
    for what, (lhs, rhs) in checks.items():
        if not lhs.equals(rhs):
            raise R.CheckFailed("landing-identities", f"landing: {what} does not hold as an identity of rational "
                                "functions")


def _compiled(F: R.Formulas) -> dict:
    """The landing formulas compiled for hyper-dual numbers (values only)."""
    return {n: R.compile_arb([F.trees[("landing", n)]], list(ARGS[n]), power=hd_power) for n in ARGS}


def _eta_next(fh: dict, Z) -> tuple:
    V, T, H, Px, Pk = Z
    g = fh["Ghat"](*Z)[0]
    d = fh["Delta"](V, T, g, Px, Pk)[0]
    return H + Px * fh["deta"](V, T, H, g, exprel(d), d.exp(), Px, Pk)[0], g


def _derivatives(fh: dict, b: tuple) -> tuple:
    """(d eta'/d eta, d Ghat/d eta) over the box b (pairs of rationals): mean-value forms intersected with the
    direct enclosures."""
    B = tuple(R.interval(lo, hi) for lo, hi in b)
    C = tuple(R.ball((lo + hi) / 2) for lo, hi in b)
    e, g = _eta_next(fh, tuple(HD(c, 1 if i == 2 else 0) for i, c in enumerate(C)))
    P, PG, Pd, PGd = e.b, g.b, None, None
    for i in range(5):
        e, g = _eta_next(fh, tuple(HD(z, 1 if j == 2 else 0, 1 if j == i else 0) for j, z in enumerate(B)))
        Pd = e.b if Pd is None else Pd.intersection(e.b)
        PGd = g.b if PGd is None else PGd.intersection(g.b)
        P, PG = P + e.d * (B[i] - C[i]), PG + g.d * (B[i] - C[i])
    tight = lambda mv, direct: mv.intersection(direct) if mv.is_finite() and direct.is_finite() else direct  # noqa
    return tight(P, Pd), tight(PG, PGd)


def _leaf(F, fh, b, st, where) -> None:
    near = b[2][0] >= -st["eps1"]
    lam = st["lam_n"] if near else st["lam_f"]
    P, PG = _derivatives(fh, b)
    Z = tuple(R.interval(lo, hi) for lo, hi in b)
    Zc = tuple(R.ball((lo + hi) / 2) for lo, hi in b)
    at0 = lambda Y: Y[:2] + (R.ball(0),) + Y[3:]  # noqa: E731
    G0, Q, _, _ = D._box(F, at0(Z), at0(Zc))
    fail = None
    if Q is None:
        fail = f"Gamma at h = 0 = {G0} not certainly > 0"
    elif not (P.is_finite() and R.lower(P) >= 0 and R.upper(P) <= lam):
        fail = f"d eta'/d eta = {P} not in [0, {lam}]"
    elif not (PG.is_finite() and R.upper(PG) <= 0):
        fail = f"d Ghat/d eta = {PG} not <= 0"
    elif not (Q.is_finite() and R.upper(Q) <= st["W"] and R.lower(Q) >= -st["C_max"]):
        fail = f"h'(0) = {Q} not in [-{st['C_max']}, {st['W']}]"
    if fail:
        spans = ", ".join(f"{n} in [{float(lo):.4g}, {float(hi):.4g}]" for n, (lo, hi) in zip(STATE, b))
        raise R.CheckFailed("landing", f"{where}: on {spans}: {fail}")
    st["C"] = max(st["C"], -R.lower(Q))
    st["a"] = max(st["a"], -R.lower(PG))
    st["b"] = max(st["b"], R.upper(G0))


def _q(z: Fraction) -> arb:
    return arb(z.numerator) / z.denominator


COUNT_BITS = 256     # the counts' precision (verify.certify.landing states them at the same)


def _count(c: dict) -> dict:
    """The count from the stated constants (verify.certify.landing.counts, stated here again)."""
    old = ctx.prec
    ctx.prec = COUNT_BITS
    try:
        return _count_at(c)
    finally:
        ctx.prec = old


def _count_at(c: dict) -> dict:
    lf, ln = c["lam_f"], c["lam_n"]
    w = c["W"] - c["C"] / (1 - ln)
    far = c["eps1"] - c["C"] * c["s_hi"] / (1 - lf)
    if not (w > 0 and far > 0 and c["C"] * c["s_hi"] <= (1 - ln) * c["eps1"]):
        return {}
    j_f = math.ceil(R.upper((_q(c["eps"]) / _q(far)).log() / (1 / _q(lf)).log()))
    grow = (1 + c["s_hi"]) * c["x_hi"]
    return {"j_f": j_f, "K0": grow * c["a"] * (c["eps"] / (1 - lf) + c["eps1"] / (1 - ln)),
            "K1": grow * (c["a"] * c["C"] * (1 / (1 - lf) + 1 / (1 - ln)) + c["b"])}


def check_landing(F: R.Formulas, cell: dict, land: dict, band: dict) -> int:
    """Replay the landing a cell states into its stated band (module docstring); the number of boxes that passed."""
    where = f"cell {cell['path']}"
    box = {n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in cell["box"].items()}
    r_hi = box["rho"][1]
    st = {k: R.frac(land[k]) for k in ("eps", "eps1", "tau", "W", "v_hi", "s_hi")}
    st |= {"lam_f": R.frac(land["lambda_f"]), "lam_n": R.frac(land["lambda_n"]), "x_hi": box["x"][1],
           "C": Fraction(0), "a": Fraction(0), "b": Fraction(0)}
    if not (st["s_hi"] >= r_hi / (1 - r_hi) and st["tau"] == R.frac(band["tau"]) and st["W"] == R.frac(band["W"])
            and 0 < st["v_hi"] <= R.frac(band["v_hi"]) and 0 < st["eps1"] <= st["eps"] < Fraction(1, 2)
            and 0 < st["lam_n"] < 1 and 0 < st["lam_f"] < 1):
        raise R.CheckFailed("landing", f"{where}: the landing's shape does not fit the cell or its band")
    st["C_max"] = (1 - st["lam_n"]) * st["W"] / 2
    fh = _compiled(F)
    e, v_hi, tau = st["eps"], st["v_hi"], st["tau"]
    passed = D.replay(land, lambda i, j, k, n: ((v_hi * i / n[0], v_hi * (i + 1) / n[0]),
                                                (tau * j / n[1], tau * (j + 1) / n[1]),
                                                (-e + e * k / n[2], -e + e * (k + 1) / n[2]), box["x"], box["kappa"]),
                      st["s_hi"], where, "landing", lambda b: _leaf(F, fh, b, st, where))
    stated = {k: R.frac(land[k]) for k in ("C", "a", "b")}
    if any(stated[k] < st[k] for k in stated):
        raise R.CheckFailed("landing", f"{where}: the stated C, a, b ({stated}) are below the boxes' "
                            f"({ {k: float(st[k]) for k in stated} })")
    c = _count(st | stated)
    if not c or int(land["j_f"]) < c["j_f"] or R.frac(land["K0"]) < c["K0"] or R.frac(land["K1"]) < c["K1"]:
        raise R.CheckFailed("landing", f"{where}: the count does not reach the band, or the stated j_f, K0, K1 are "
                            f"below what the constants give ({c})")
    return passed



def _approach_terms(fh: dict, Z) -> tuple:
    """(eta' - eta, Ghat, eta', Delta - log((1 + eta')/(1 + eta))) at the state Z: the last is the growth of
    log(nu/(1 + eta)) in a step (nu' = nu e^Delta)."""
    V, T, H, Px, Pk = Z
    g = fh["Ghat"](*Z)[0]
    d = fh["Delta"](V, T, g, Px, Pk)[0]
    e = H + Px * fh["deta"](V, T, H, g, exprel(d), d.exp(), Px, Pk)[0]
    return e - H, g, e, d - ((1 + e) / (1 + H)).log()


def check_approach(F: R.Formulas, cell: dict, appr: dict, land: dict) -> int:
    """Replay the approach a cell states into its stated landing: on every leaf eta' - eta > 0, Ghat > 0, eta' <= 0
    and the growth of log(nu/(1 + eta)) at most c (eta' - eta), with d_min and c no better than the boxes give, and
    the stated N_a >= (eps_a - eps)/d_min, K_a >= c eps_a + log(1/(1 - eps_a)). The number of boxes that passed."""
    where = f"cell {cell['path']}"
    box = {n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in cell["box"].items()}
    st = {k: R.frac(appr[k]) for k in ("eps_a", "eps", "tau", "v_hi", "s_hi", "d_min", "c")}
    if not (st["eps"] == R.frac(land["eps"]) and st["tau"] == R.frac(land["tau"]) and st["v_hi"] == R.frac(land["v_hi"])
            and st["s_hi"] >= R.frac(land["s_hi"]) and st["eps"] < st["eps_a"] < 1 and st["d_min"] > 0):
        raise R.CheckFailed("approach", f"{where}: the approach's shape does not fit its landing")
    fh = _compiled(F)

    def leaf(b):
        (d, _), (g, _), (e, _), (f, _) = mean_values(lambda Z: _approach_terms(fh, Z), b, lambda lo, hi:
                                                     R.interval(lo, hi), R.ball)
        if not (d.is_finite() and R.lower(d) >= st["d_min"] and g.is_finite() and g > 0 and e.is_finite()
                and R.upper(e) <= 0 and f.is_finite() and R.upper(f) <= st["c"] * R.lower(d)):
            spans = ", ".join(f"{n} in [{float(lo):.4g}, {float(hi):.4g}]" for n, (lo, hi) in zip(STATE, b))
            raise R.CheckFailed("approach", f"{where}: on {spans}: eta' - eta = {d}, Ghat = {g}, eta' = {e}, "
                                f"growth {f} against d_min = {st['d_min']}, c = {st['c']}")

    e_a, v_hi, tau, span = st["eps_a"], st["v_hi"], st["tau"], st["eps_a"] - st["eps"]
    n = D.replay(appr, lambda i, j, k, g: ((v_hi * i / g[0], v_hi * (i + 1) / g[0]),
                                         (tau * j / g[1], tau * (j + 1) / g[1]),
                                         (-e_a + span * k / g[2], -e_a + span * (k + 1) / g[2]), box["x"], box["kappa"]),
                 st["s_hi"], where, "approach", leaf)
    old = ctx.prec
    ctx.prec = COUNT_BITS
    try:
        K = st["c"] * st["eps_a"] + R.upper((1 / (1 - _q(st["eps_a"]))).log())
    finally:
        ctx.prec = old
    if int(appr["N_a"]) < math.ceil((st["eps_a"] - st["eps"]) / st["d_min"]) or R.frac(appr["K_a"]) < K:
        raise R.CheckFailed("approach", f"{where}: the stated N_a or K_a is below what d_min and c give")
    return n
