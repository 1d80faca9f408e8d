"""Lemma C.2 over a cell that contains rho = 0 (every D >= K/rho_hi at once): the threshold set in a blown-up chart.

In the omega chart (verify.certify.positivity_chart: omega = e^-delta/rho, alpha' = (1 - x a) alpha + b, omega' =
omega e^-inc) the threshold T = (1 + (1 - rho) omega)/(1 - rho omega) is where inc changes sign ("inc-sign") and
alpha* <= T is the fixed curve ("fixed-below-threshold"). The set certified here is

    S(gamma, A) = {0 <= alpha <= min(gamma T(omega, rho), A(rho)),  rho omega <= 1},   gamma: 2, then 3/2 (GAMMAS),
    A(rho) = max over omega of alpha*(omega, rho) = (1 + sqrt(rho))/(2 sqrt(rho))          (+oo at rho = 0).

The ratio set's bound gamma alpha* crosses the rho = 0 curve of fixed points alpha = 1 + omega in the corner rho -> 0,
omega -> oo with zero margin (docs/atlas.md); gamma T does not: at rho = 0 it is gamma (1 + omega), above the curve
by (gamma - 1)(1 + omega), where inc < 0 drives omega up and T with it. A caps alpha where T is large (near the start,
w = rho omega -> 1), where alpha above T would let delta fall below 0.

The chart. In v = 1/(1 + omega) in (0, 1), w = rho omega in (0, 1] and p = alpha v (rho = v w/(1 - v)) the map is
regular on the whole closure, the corner (v, w) = (0, 0) included ("vwp-chart", "vwp-step"):

    a = v (v + w (1 - v) - w^2 v)/(1 - v w)^2,   b v = x v^2/(1 - v w),   P = (1 - x a) p + b v,
    inc = kappa x h,   h = p (1 - v)((1 - v w) - p (1 - w))/(1 - v w)^3,
    v' = v/(v + (1 - v) E),   w' = w E,   p' = P v'/v,      E = e^-inc,
    alpha <= gamma T  <=>  p (1 - w) <= gamma (1 - v w),      alpha <= A  <=>  p <= A(rho) v = v/2 + sqrt(v (1 - v)/w)/2.

Why S is invariant, and so alpha(t) > 0 for t >= 1 (the first step (x rho, omega = 1/rho) lies in S when x rho <= A(rho),
"first-step"):

- alpha' <= A: alpha' - alpha* = (1 - x a)(alpha - alpha*) ("A-convex"), so where x a <= 1 (a >= 0 always) alpha' lies
  between alpha and alpha*, both <= A ("A-max": A - alpha* >= 0, a square over a positive, attained): exact, no margin
  needed. Where x a > 1 on a box: alpha' = P/v <= A at the box's largest rho (A falls in rho, "A-decreasing").
- alpha' > 0: where x a <= 1, alpha' >= b > 0; elsewhere P > 0 on the box.
- delta' >= 0 (w' <= 1): where (1 - v w) - p (1 - w) >= 0 (alpha <= T) inc >= 0; elsewhere w e^-inc_lo <= 1.
- alpha' <= gamma T': multiplied by v + (1 - v) E > 0 it is slack(E) = gamma v + gamma E (1 - v - v w) - P (1 - E w)
  >= 0 ("threshold-slack"), affine in E, so checked at the two ends of E's range.

Boxes. Leaves are boxes of (v, w, p): "i:" the i-th of W_PIECES slices of w with v in [0, 1] and p in [0, P_ROOT],
then each letter halves v (v, V), w (w, W) or p (p, P). A box holds the states of S in it: w clipped to the cell's rho
(rho_lo (1 - v)/v <= w <= rho_hi (1 - v)/v), p to the least of the upper bounds of gamma (1 - v w)/(1 - w) (rising in
w, falling in v: "g-monotone"), A(rho) v and v/2 + sqrt(v (1 - v)/w)/2; a box holding none passes. P_ROOT = 4 bounds p
on S (checked: every leaf at p = P_ROOT has those bounds <= P_ROOT, "cap"). P is affine in x, inc = kappa x h with h
concave in p ("h-concave"), so the ranges are the hulls at the ends. The re-checker (recheck.positivity, set
"threshold") states the map in (v, w, p) by hand.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.invariants import x
from ..model.precision import arb_precision
from ..model.symbols import alpha
from .arbfun import ball, exact, lambdify_arb
from .positivity import PREC, W_PIECES, identity_obligation, kappa, rho, w
from .positivity_chart import ASTAR, THRESHOLD, chart, omega

# The gammas tried in turn (any gamma > 0 is sound: every condition is checked on the boxes). 2 first (the margin
# at the corner rho -> 0, omega -> oo); 3/2 where kappa x passes about 2.4 with x near 1: at the corner (v, w) = (0, 0)
# the map is p' = p e^(kappa x p (1 - p)), whose fixed point p = 1 flips at kappa x = 2, so S needs gamma >= max_p p
# e^(kappa x p (1 - p)) there (1.40 at kappa x = 3.3); on the gamma T face delta' >= 0 needs about kappa x gamma
# (gamma - 1) <= delta, which a smaller gamma eases; near the start (v -> 1) alpha' reaches about x alpha*, so gamma
# >= about x (docs/atlas.md, "Lemma C.2 between the regions").
GAMMAS = (Fraction(2), Fraction(3, 2))
GAMMA = GAMMAS[0]
LATER_BOXES = 20000             # box budget of each gamma after the first (3/2 closed kappa x to 3.3 in 13 624 boxes;
                                # where 2 fails, 3/2 mostly fails too, spending its budget: docs/atlas.md)
A_FACTOR = Fraction(1)          # the set's cap is A_FACTOR * A(rho); below 1 the step "A-convex" fails (stored)
P_ROOT = Fraction(4)            # p = alpha v on S lies in [0, P_ROOT] (the "cap" check)
MIN_WIDTH = Fraction(1, 2**40)  # relative width below which a box is not bisected
MAX_BOXES = 200000

v = sp.Symbol("v", positive=True)              # 1/(1 + omega)
p = sp.Symbol("p", nonnegative=True)           # alpha v
E = sp.Symbol("E", positive=True)              # e^-inc
P = sp.Symbol("P")                             # p'/(v'/v) = alpha' v
g = sp.Symbol("gamma", positive=True)
_den = 1 - v * w
VWP = {"a": v * (v + w * (1 - v) - w**2 * v) / _den**2, "b": x * v / _den,
       "h": p * (1 - v) * (_den - p * (1 - w)) / _den**3}
P_EXPR = (1 - x * VWP["a"]) * p + VWP["b"] * v
SLACK = g * v + g * E * (1 - v - v * w) - P * (1 - E * w)
G_EXPR = g * _den / (1 - w)                     # gamma T v
A_RHO = (1 + sp.sqrt(rho)) / (2 * sp.sqrt(rho))
A_VW = v / 2 + sp.sqrt(v * (1 - v) / w) / 2     # A(rho) v with rho = v w/(1 - v)
_TO_OMEGA = {omega: (1 - v) / v, rho: v * w / (1 - v)}


def _z(e):
    return sp.simplify(sp.cancel(sp.together(e)))


@lru_cache(maxsize=None)
def obligations() -> tuple:
    """The threshold set's own symbolic steps (the chart's are positivity_chart.obligations)."""
    c = chart()
    to = lambda e: sp.together(e.subs(alpha, p / v).subs(_TO_OMEGA))  # noqa: E731  (alpha, omega, rho) -> (v, w, p)
    out = []
    ob = lambda key, name, expr_zero: out.append(identity_obligation(key, name, expr_zero))  # noqa: E731
    ob("vwp-chart", "in v = 1/(1 + omega), w = rho omega, p = alpha v the generated a, b and inc are VWP's a, b and "
       "kappa x h", (to(c["a"]) - VWP["a"]) ** 2 + (to(c["b"]) - VWP["b"]) ** 2
       + (to(c["inc"]) - kappa * x * VWP["h"]) ** 2)
    om = (1 - v) / v
    v1 = 1 / (1 + om * E)
    ob("vwp-step", "omega' = omega E gives v' = v/(v + (1 - v) E), w' = rho omega' = w E, and p' = alpha' v' = "
       "(v'/v) P with P = (1 - x a) p + b v", (v1 - v / (v + (1 - v) * E)) ** 2
       + ((v * w / (1 - v)) * om * E - w * E) ** 2
       + (((1 - x * VWP["a"]) * (p / v) + VWP["b"]) * v1 - (v1 / v) * P_EXPR) ** 2)
    w1, p1 = w * E, (v1 / v) * P
    ob("threshold-slack", "(gamma (1 - v' w') - p' (1 - w')) (v + (1 - v) E) = gamma v + gamma E (1 - v - v w) - "
       "P (1 - E w): alpha' <= gamma T(omega') is slack >= 0", _z((g * (1 - v1 * w1) - p1 * (1 - w1))
                                                                    * (v + (1 - v) * E) - SLACK))
    ob("threshold-in-vwp", "gamma T v = gamma (1 - v w)/(1 - w): alpha <= gamma T is p (1 - w) <= gamma (1 - v w)",
       _z((g * THRESHOLD * v).subs(_TO_OMEGA) - G_EXPR))
    t = sp.Symbol("t", positive=True)                   # sqrt(rho)
    ast = ASTAR.subs(rho, t**2)
    om_star = 1 / (t * (1 + t))
    ob("A-max", "A(rho) - alpha*(omega, rho) = (1 - sqrt(rho))(1 - sqrt(rho)(1 + sqrt(rho)) omega)^2/(2 sqrt(rho) (1 + rho "
       "(1 - rho) omega^2)) (>= 0), and alpha* = A at omega = 1/(sqrt(rho)(1 + sqrt(rho))): A is alpha*'s maximum",
       (A_RHO.subs(rho, t**2) - ast - (1 - t) * (1 - t * (1 + t) * omega) ** 2
        / (2 * t * (1 + t**2 * (1 - t**2) * omega**2))) ** 2 + (ast.subs(omega, om_star) - A_RHO.subs(rho, t**2)) ** 2)
    # both sides less v/2 are >= 0, so equal squares are equal values
    ob("A-in-vwp", "A(rho) v = v/2 + sqrt(v (1 - v)/w)/2 at rho = v w/(1 - v): (A v - v/2)^2 = v^2/(4 rho) = "
       "v (1 - v)/(4 w), both sides less v/2 >= 0", ((A_RHO * v - v / 2) ** 2).subs(rho, v * w / (1 - v))
       - (A_VW - v / 2) ** 2)
    ob("A-decreasing", "dA/drho = -1/(4 rho^(3/2)) (< 0)", sp.diff(A_RHO, rho) + 1 / (4 * rho ** sp.Rational(3, 2)))
    a_, b_ = chart()["a"], chart()["b"]
    ob("A-convex", "alpha' - alpha* = (1 - x a)(alpha - alpha*): where 0 <= x a <= 1, alpha' lies between alpha and "
       "alpha*", (1 - x * a_) * alpha + b_ - ASTAR - (1 - x * a_) * (alpha - ASTAR))
    ob("h-concave", "d^2 h/dp^2 = -2 (1 - v)(1 - w)/(1 - v w)^3 (<= 0: h's least value over an interval of p is at an "
       "end)", sp.diff(VWP["h"], p, 2) + 2 * (1 - v) * (1 - w) / _den**3)
    ob("g-monotone", "d/dw gamma (1 - v w)/(1 - w) = gamma (1 - v)/(1 - w)^2 (>= 0), d/dv = -gamma w/(1 - w) (<= 0)",
       (sp.diff(G_EXPR, w) - g * (1 - v) / (1 - w) ** 2) ** 2 + (sp.diff(G_EXPR, v) + g * w / (1 - w)) ** 2)
    return tuple(out)


@lru_cache(maxsize=None)
def _arb_parts():
    return {"a": lambdify_arb((v, w), VWP["a"]), "h": lambdify_arb((v, w, p), VWP["h"]),
            "P": lambdify_arb((v, w, p, x), P_EXPR), "slack": lambdify_arb((v, w, P, E, g), SLACK),
            "g": lambdify_arb((v, w, g), G_EXPR), "A": lambdify_arb((rho,), A_RHO)}


def leaf_box(path: str) -> tuple:
    """(vl, vh, wl, wh, pl, ph) of a leaf path (module docstring)."""
    head, steps = path.split(":")
    b = {"v": [Fraction(0), Fraction(1)], "w": [Fraction(int(head), W_PIECES), Fraction(int(head) + 1, W_PIECES)],
         "p": [Fraction(0), P_ROOT]}
    for c in steps:
        lo, hi = b[c.lower()]
        m = (lo + hi) / 2
        b[c.lower()] = [lo, m] if c.islower() else [m, hi]
    return (*b["v"], *b["w"], *b["p"])


def check_box(leaf: tuple, box: dict, gamma: Fraction = GAMMA, a_factor: Fraction = A_FACTOR) -> str | None:
    """The first condition of the module docstring that fails on the leaf (None: all hold, or no state of S in it)."""
    f = _arb_parts()
    vl, vh, wl, wh, pl, ph = leaf
    (rl, rh), (xl, xh), (kl, kh) = box["rho"], box["x"], box["kappa"]
    if vl > 0:                                   # rho = v w/(1 - v) <= rho_hi
        wh = min(wh, rh * (1 - vl) / vl)
    if rl > 0:                                   # ... >= rho_lo
        wl = max(wl, rl * (1 - vh) / vh)
    if wl > wh:
        return None
    r_lo = max(rl, vl * wl / (1 - vl))           # the states' rho (rising in v and w)
    r_hi = min(rh, vh * wh / (1 - vh)) if vh < 1 else rh
    V, W, G, AF = ball(vl, vh), ball(wl, wh), exact(gamma), exact(a_factor)
    ups = []                                     # upper bounds of the largest p of S on the box
    if wh < 1:
        ups.append(f["g"](exact(vl), exact(wh), G))
    if r_lo > 0:
        ups.append(AF * f["A"](exact(r_lo)) * exact(vh))
    if wl > 0:                                   # A v = v/2 + sqrt(v (1 - v)/w)/2 ("A-in-vwp"), v (1 - v) <= vh (1 - vl)
        ups.append(AF * (exact(vh) / 2 + (exact(vh * (1 - vl)) / exact(wl)).sqrt() / 2))
    cap = min((u.upper() for u in ups), default=None)
    if ph == P_ROOT and not (cap is not None and cap <= exact(P_ROOT)):
        return "cap"
    if cap is not None and exact(pl) > cap:
        return None
    p_hi = cap if cap is not None and cap < exact(ph) else exact(ph)
    p_lo = exact(pl)
    Pp = p_lo.union(p_hi)
    img = [f["P"](V, W, Pp, exact(xx)) for xx in (xl, xh)]      # P is affine in x
    Pb = img[0].union(img[1])
    a = f["a"](V, W)
    if not (exact(xh) * a).upper() <= 1:
        if not Pb.lower() > 0:
            return "positive"
        if not (Pb / V).upper() <= (AF * f["A"](exact(r_hi))).lower():
            return "A"
    hb = f["h"](V, W, Pp)
    h_lo = max(min(f["h"](V, W, p_lo).lower(), f["h"](V, W, p_hi).lower()), hb.lower())
    prods = (exact(kl * xl), exact(kh * xh))
    inc_lo = min((c * h_lo).lower() for c in prods)
    inc_hi = max((c * hb.upper()).upper() for c in prods)
    if not ((1 - V * W - p_hi * (1 - W)).lower() >= 0 or (exact(wh) * (-inc_lo).exp()).upper() <= 1):
        return "delta"
    for e in ((-inc_hi).exp(), (-inc_lo).exp()):
        if not f["slack"](V, W, Pb, e, G).lower() > 0:
            return "threshold"
    return None


def _widest(leaf: tuple) -> str:
    vl, vh, wl, wh, pl, ph = leaf
    rel = {"v": vh - vl, "w": (wh - wl) * W_PIECES, "p": (ph - pl) / P_ROOT}
    return max(rel, key=lambda k: rel[k])


def first_step_ok(box: dict, a_factor: Fraction = A_FACTOR) -> bool:
    """alpha(1) = x rho <= A_FACTOR A(rho) for every member (x rho rises and A falls in rho: checked at rho_hi, in
    Arb); at omega = 1/rho, w = 1, so gamma T = +oo there."""
    with arb_precision(PREC):
        return bool((exact(box["x"][1] * box["rho"][1]) < exact(a_factor) * _arb_parts()["A"](exact(box["rho"][1]))))


def decide(box: dict, *, max_boxes: int = MAX_BOXES) -> dict:
    """The threshold set over the cell's box (Fraction pairs; rho_lo may be 0), for each gamma of :data:`GAMMAS` in
    turn: {"status": "certified", "gamma", "a_factor", "leaves", "boxes_checked"} for the first that closes, or
    {"status": "open", "failed", "reason"} with the first gamma's failing check and every gamma's reason."""
    unproved = [o.key for o in obligations() if o.holds is not True]
    if unproved:
        return {"status": "open", "failed": "obligations", "reason": f"threshold set: steps not proved: {unproved}"}
    if not first_step_ok(box):
        return {"status": "open", "failed": "first-step", "reason": "threshold set: x rho exceeds A(rho)"}
    opened = []
    for gamma in GAMMAS:
        res = _decide_gamma(box, gamma, max_boxes if gamma == GAMMAS[0] else min(max_boxes, LATER_BOXES))
        if res["status"] == "certified":
            return res
        opened.append(res)
    return opened[0] | {"reason": "; ".join(r["reason"] for r in opened)}


def _decide_gamma(box: dict, gamma: Fraction, max_boxes: int) -> dict:
    """S(gamma, A) over the box: every leaf of (v, w, p) checked, bisected where a check fails."""
    with arb_precision(PREC):
        todo, done, checked = [f"{i}:" for i in reversed(range(W_PIECES))], [], 0
        while todo:
            path = todo.pop()
            leaf = leaf_box(path)
            checked += 1
            bad = check_box(leaf, box, gamma)
            if bad is None:
                done.append(path)
                continue
            side = _widest(leaf)
            lo, hi = {"v": leaf[0:2], "w": leaf[2:4], "p": leaf[4:6]}[side]
            root = {"v": 1, "w": Fraction(1, W_PIECES), "p": P_ROOT}[side]
            if (hi - lo) / root <= MIN_WIDTH or checked >= max_boxes:
                return {"status": "open", "failed": bad, "boxes_checked": checked, "gamma": str(gamma),
                        "reason": f"threshold set alpha <= min({gamma} T, A): check {bad} fails on v in [{leaf[0]}, "
                                  f"{leaf[1]}], w in [{leaf[2]}, {leaf[3]}], p in [{leaf[4]}, {leaf[5]}]"
                                  + (" (box budget spent)" if checked >= max_boxes else " at the smallest width")}
            todo += [path + side.upper(), path + side]
    return {"status": "certified", "gamma": str(gamma), "a_factor": str(A_FACTOR), "leaves": done,
            "boxes_checked": checked,
            "reason": f"alpha(t) in (0, min({gamma} T, A(rho))] for every t >= 1 and every member with 0 < rho <= "
                      f"{box['rho'][1]} (every D >= {1 / box['rho'][1]} K): the first step lies in the threshold set "
                      f"and it is invariant ({len(done)} boxes of (v, w, p))"}


__all__ = ["A_FACTOR", "A_RHO", "GAMMA", "GAMMAS", "LATER_BOXES", "P_ROOT", "VWP", "check_box", "decide",
           "first_step_ok", "leaf_box", "obligations"]
