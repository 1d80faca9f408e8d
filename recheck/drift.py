"""The drift band of an open atlas cell holding rho = 0 (verify.certify.drift), re-checked from the file alone.

The file's "drift" formulas are a chart of the model's map: with s = t nu^4, y = kappa x, u = 1/(1 + nu) and the
state alpha = alpha*(u) + s u^3 e(nu, t, h) (e: the file's e_of; alpha*, E(u) the coordinates', themselves tied to
the model by the coordinates step), this checker decides exactly, over rational functions (flint):

  drift-identities  the model's delta-increment at that state is the file's Delta at Gamma = the file's Gamma; with
                    E1 = e^Delta and X = exprel(Delta) = (E1 - 1)/Delta the next gap is E(u) E1, i.e. u' = 1/(1 + nu
                    E1), and s u'^3 e(nu E1, t/E1^4, h') with h' the file's h_next is alpha' - alpha*(u'), alpha' =
                    alpha + the model's alpha-increment; every stated partial is the derivative of its formula

and then replays the stated cover: the initial grid of (nu, t, h) times the cell's (x, kappa), each box split as its
tree says; on every leaf Gamma > 0, |h'| <= W and, where nu' can pass nu_hi = 1/u0 - 1 (so u' < u0), |e'| <= C
with C no more than the cell's re-checked R~'s innermost C; a box marked as holding no member has t nu^4 > s_hi
on all of it. The enclosures are mean-value forms in all five variables, by the chain rule through Gamma and Delta,
as verify.certify.drift computes them (stated here again, not imported).
"""
from __future__ import annotations

import itertools
from fractions import Fraction

from flint import arb, ctx

from recheck import certificates as R

T_POWER = 4                                   # t = s nu^T_POWER
STATE = ("nu", "t", "h", "x", "kappa")
NAMES = STATE + ("Gamma", "X", "E1")


def check_drift_identities(F: R.Formulas) -> None:
    """The identities of the module docstring (call after the coordinates' own, which tie them to the model)."""
    alg = R.RFAlg(NAMES)
    v = {n: alg.var(n) for n in NAMES}
    nu, t, h, x, kappa, E1 = (v[n] for n in ("nu", "t", "h", "x", "kappa", "E1"))
    s, y, u = t * alg.power(nu, T_POWER), kappa * x, alg.num(1) / (1 + nu)
    base = {"s": s, "x": x, "y": y}
    co = lambda name, **env: F("coordinates", name, base | env, alg)  # noqa: E731
    mp = lambda name, **env: F("reduced_map", name, base | env, alg)  # noqa: E731
    dr = lambda name, **env: F("drift", name, v | env, alg)  # noqa: E731
    E_u = co("E_of_u", u=u)
    al = co("alpha_star", u=u) + s * alg.power(u, 3) * dr("e_of")
    w = alg.num(1) / (1 + nu * E1)
    # h' with X = (E1 - 1)/Delta holds for every Gamma (Gamma enters h' only through Delta X = E1 - 1), so Gamma stays
    # a variable there; that the state's Delta is Delta(nu, t, Gamma) at the file's Gamma is the first identity
    h_next = h + x * dr("dh", X=(E1 - 1) / dr("Delta"))
    checks = {
        "the model's delta-increment at the state is Delta(nu, t, Gamma)": (
            mp("delta_increment", E=E_u, alpha=al), dr("Delta", Gamma=dr("Gamma"))),
        "the next gap E(u) e^Delta is E(u') at u' = 1/(1 + nu E1)": (E_u * E1, co("E_of_u", u=w)),
        "s u'^3 e(nu E1, t/E1^4, h') = alpha' - alpha*(u')": (
            s * alg.power(w, 3) * dr("e_of", nu=nu * E1, t=t / alg.power(E1, T_POWER), h=h_next),
            al + mp("alpha_increment", E=E_u, alpha=al) - co("alpha_star", u=w)),
    }
    for name, wrt in (("Gamma", STATE), ("Delta", ("nu", "t", "Gamma", "x", "kappa")),
                      ("dh", ("nu", "t", "h", "Gamma", "X", "E1", "x", "kappa"))):
        for z in wrt:
            checks[f"{name}_{z} is the derivative of {name} in {z}"] = (dr(f"{name}_{z}"), dr(name).derivative(z))
    for what, (lhs, rhs) in checks.items():
        if not lhs.equals(rhs):
            raise R.CheckFailed("drift-identities", f"drift: {what} does not hold as an identity of rational "
                                "functions")


def _dexprel(D: arb) -> arb:
    """exprel'(d) = int_0^1 s e^{ds} ds lies in [1/2, e^d/2] for d >= 0 (D a ball of such d)."""
    return (arb(1) / 2).union(arb(D.upper()).exp() / 2)


def _mv(value, grads, B, C, direct):
    """value(C) + sum grads_i (B_i - C_i) over the box B, intersected with the direct enclosure (both hold the
    range; the direct one alone when either is not finite)."""
    out = value
    for g, b, c in zip(grads, B, C):
        out = out + g * (b - c)
    return out.intersection(direct) if out.is_finite() and direct.is_finite() else direct


def _box(F, B, C) -> tuple:
    """(Gamma, h', nu', t') on the box B with centre C (balls, in STATE order); h' None unless Gamma > 0."""
    env = lambda Z: dict(zip(STATE, Z))  # noqa: E731
    gnames = ("Gamma",) + tuple(f"Gamma_{z}" for z in STATE)
    g = F.arb(tuple(("drift", n) for n in gnames), env(B))
    Gc = F("drift", "Gamma", env(C), R.Arb)
    G = _mv(Gc, g[1:], B, C, g[0])
    if not (G.is_finite() and G > 0):
        return G, None, None, None
    dnames = ("Delta",) + tuple(f"Delta_{z}" for z in ("nu", "t", "Gamma", "x", "kappa"))
    d = F.arb(tuple(("drift", n) for n in dnames), env(B) | {"Gamma": G})
    D = d[0]
    X = R._exprel(D)
    E1 = 1 + D * X
    # d Delta/dz through Gamma: (nu, t, h, x, kappa)
    dD = (d[1] + d[3] * g[1], d[2] + d[3] * g[2], d[3] * g[3], d[4] + d[3] * g[4], d[5] + d[3] * g[5])
    qnames = ("dh",) + tuple(f"dh_{z}" for z in ("nu", "t", "h", "Gamma", "X", "E1", "x", "kappa"))
    q = F.arb(tuple(("drift", n) for n in qnames), env(B) | {"Gamma": G, "X": X, "E1": E1})
    own = (q[1], q[2], q[3], q[7], q[8])
    chain = q[5] * _dexprel(D) + q[6] * D.exp()
    dq = [o + q[4] * gz + chain * dz for o, gz, dz in zip(own, g[1:], dD)]
    x = B[3]
    Dc = F("drift", "Delta", env(C) | {"Gamma": Gc}, R.Arb)
    Xc = R._exprel(Dc)
    qc = F("drift", "dh", env(C) | {"Gamma": Gc, "X": Xc, "E1": 1 + Dc * Xc}, R.Arb)
    qB = _mv(qc, dq, B, C, q[0])
    # h' = h + x dh
    grads = [x * dq[0], x * dq[1], 1 + x * dq[2], qB + x * dq[3], x * dq[4]]
    hn = _mv(C[2] + C[3] * qc, grads, B, C, B[2] + x * qB)
    return G, hn, B[0] * E1, B[1] / E1**T_POWER


def check_band(F: R.Formulas, cell: dict, band: dict, region: dict) -> int:
    """Replay the band a cell states (module docstring); the number of boxes that passed."""
    where = f"cell {cell['path']}"
    box = {n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in cell["box"].items()}
    r_hi = box["rho"][1]
    tau, W, v_hi, s_hi, u0, C = (R.frac(band[k]) for k in ("tau", "W", "v_hi", "s_hi", "u0", "region_C"))
    runs = region.get("C_runs") or []
    if not runs or not (s_hi >= r_hi / (1 - r_hi) and u0 == R.frac(region["u0"]) and v_hi >= 1 / u0 - 1
                        and C <= min(R.frac(cv) for cv, _ in runs) and tau > 0 and W > 0):
        raise R.CheckFailed("drift-band", f"{where}: the band's shape does not fit the cell or its region R~ "
                            f"(s_hi {s_hi}, u0 {u0}, nu_hi {v_hi}, C {C})")
    return replay(band, lambda i, j, k, n: ((v_hi * i / n[0], v_hi * (i + 1) / n[0]),
                                            (tau * j / n[1], tau * (j + 1) / n[1]),
                                            (-W + 2 * W * k / n[2], -W + 2 * W * (k + 1) / n[2]), box["x"], box["kappa"]),
                  s_hi, where, "drift-band", lambda b: _leaf(F, b, W, v_hi, C, where))


def replay(stated: dict, start_of, s_hi, where: str, step: str, on_leaf) -> int:
    """Replay a stated cover over (nu, t, third, x, kappa) at its precision: the initial grid stated["grid"] (start_of(i,
    j, k, grid) the box (i, j, k)), each box split as its tree in stated["trees"] says; a box marked as holding no
    member must have t nu^4 > s_hi on all of it, every other leaf goes to on_leaf (which raises when it fails). The
    number of leaves that passed."""
    n = tuple(int(k) for k in stated["grid"])
    trees = stated.get("trees")
    if not isinstance(trees, list) or len(trees) != n[0] * n[1] * n[2]:
        raise R.CheckFailed(step, f"{where}: {n[0] * n[1] * n[2]} trees expected, one per box of the grid")
    old = ctx.prec
    ctx.prec = int(stated.get("bits", 128))
    passed = 0
    try:
        for tree, (i, j, k) in zip(trees, itertools.product(*(range(m) for m in n))):
            for kind, b in leaves(tree, start_of(i, j, k, n), where, step):
                if kind == "x":
                    if not b[1][0] * b[0][0] ** T_POWER > s_hi:
                        raise R.CheckFailed(step, f"{where}: a box marked as holding no member has t nu^4 <= s_hi "
                                            f"somewhere ({b})")
                else:
                    on_leaf(b)
                    passed += 1
    finally:
        ctx.prec = old
    return passed


def leaves(tree: str, start: tuple, where: str, step: str):
    """("." or "x", box) for each leaf of a stated preorder bisection tree ("." a box that passed, "x" one said to
    hold no member, a digit i < 5 a box halved across dimension i, followed by its halves), refused as ``step``
    when the tree does not match its boxes."""
    stack, pos = [start], 0
    while stack:
        b = stack.pop()
        if pos >= len(tree):
            raise R.CheckFailed(step, f"{where}: a tree ends before its boxes do")
        mark = tree[pos]
        pos += 1
        if mark.isdigit() and int(mark) < 5:
            i = int(mark)
            a, c = b[i]
            m = (a + c) / 2
            stack += [b[:i] + ((m, c),) + b[i + 1:], b[:i] + ((a, m),) + b[i + 1:]]
        elif mark in (".", "x"):
            yield mark, b
        else:
            raise R.CheckFailed(step, f"{where}: unknown tree mark {mark!r}")
    if pos != len(tree):
        raise R.CheckFailed(step, f"{where}: a tree has marks left over")


def _leaf(F, b, W, v_hi, C, where) -> None:
    B = tuple(R.interval(lo, hi) for lo, hi in b)
    Cn = tuple(R.ball((lo + hi) / 2) for lo, hi in b)
    G, hn, vn, tn = _box(F, B, Cn)
    fail = None
    if hn is None:
        fail = f"Gamma = {G} not certainly > 0"
    elif not (hn.is_finite() and R.upper(abs(hn)) <= W):
        fail = f"h' = {hn} leaves [-{W}, {W}]"
    elif R.upper(vn) > v_hi:
        out = R.interval(max(v_hi, R.lower(vn)), R.upper(vn))
        en = F("drift", "e_of", {"nu": out, "t": tn, "h": hn, "x": B[3], "kappa": B[4]}, R.Arb)
        if not (en.is_finite() and R.upper(abs(en)) <= C):
            fail = f"leaving through nu = {v_hi}, e' = {en} is not in |e| <= {C}"
    if fail:
        spans = ", ".join(f"{n} in [{float(lo):.4g}, {float(hi):.4g}]" for n, (lo, hi) in zip(STATE, b))
        raise R.CheckFailed("drift-band", f"{where}: on {spans}: {fail}")
