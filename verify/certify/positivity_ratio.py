"""Lemma C.2 over a cell by the ratio set S_gamma = {0 <= alpha <= gamma alpha*(w, rho), 0 <= w <= 1}: a state bound
that follows the map's own fixed curve, where no constant band [L, A] exists (rho below 1/8 at x near 3/2).

alpha* = b/(1 - f) is where alpha' = alpha at fixed w (f, b of verify.certify.positivity.band_map, generated; in
omega = w/rho it is (1 + (1 - rho) omega)/(1 + rho (1 - rho) omega^2): verify.certify.positivity_chart), free of x
("astar-free-of-x"), 1 at w = 0 and at w = 1. If S_gamma holds the first step (alpha(1) = x rho at w = 1, where
gamma alpha* = gamma: "first-step") and every member's map sends S_gamma into itself with alpha' > 0, then by
induction alpha(t) > 0 for every t >= 1. Invariance is checked in Arb on leaf boxes of (w, rho, s), alpha = s gamma
alpha*, s in [0, 1]:

- "positive": alpha' > 0, or f >= 0 (x a <= 1: then alpha' >= b > 0 from alpha >= 0);
- "delta": inc >= 0 or w e^-inc <= 1 (delta stays >= 0);
- "upper": alpha' <= gamma alpha*(w e^-inc, rho), alpha*'s least value over the images' w at an end of their range
  ("astar-unimodal").

alpha' is affine in x at fixed (alpha, w) ("alpha-linear-in-x" of positivity.obligations) and alpha = s gamma alpha*
does not depend on x, so alpha' over the cell's x range is the hull of its values at the two ends; inc = kappa x
h(alpha, w, rho) ("inc-kappa-x"), so its range is the hull of the extreme products kappa x times the ball of h.
Leaves: "i:" the i-th of W_PIECES slices of w in [0, 1] with the cell's whole rho and s in [0, 1], then each letter
halves w (w, W), rho (r, R) or s (s, S). The re-checker (recheck.positivity, set "ratio") states the map by hand.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.invariants import x
from ..model.precision import arb_precision
from ..model.symbols import alpha
from .arbfun import ball, exact, lambdify_arb
from .positivity import PREC, W_PIECES, band_map, fb_range, identity_obligation, kappa, rho, w

GAMMAS = (Fraction(2),)      # tried in turn; 2 is forced as rho -> 0 (docs/atlas.md, "D -> oo: the omega chart and the ratio set")
MIN_WIDTH = Fraction(1, 2**14)                               # relative width below which a box is not bisected
MAX_BOXES = 60000


@lru_cache(maxsize=None)
def astar():
    """alpha* = b/(1 - f): alpha' = alpha there (generated from the band map)."""
    bm = band_map()
    return sp.factor(sp.cancel(sp.together(bm["b"] / (1 - bm["f"]))))


@lru_cache(maxsize=None)
def obligations() -> tuple:
    """The ratio set's own symbolic steps (the band's shared ones are positivity.obligations)."""
    bm, a_ = band_map(), astar()
    out = []

    def ob(key, name, expr_zero):
        out.append(identity_obligation(key, name, expr_zero))
    ob("astar-fixed", "alpha* = b/(1 - f) is fixed by alpha' = f alpha + b", bm["f"] * a_ + bm["b"] - a_)
    ob("astar-free-of-x", "alpha* does not depend on x", sp.diff(a_, x))
    r_ = 1 / rho - 1
    ob("astar-unimodal", "d alpha*/dw = r (1 - 2 w - r w^2)/(1 + r w^2)^2 (r = 1/rho - 1): the factor 1 - 2 w - r w^2 "
       "falls in w >= 0, so alpha* rises then falls and its least value over an interval of w is at an end",
       sp.diff(a_, w) - r_ * (1 - 2 * w - r_ * w**2) / (1 + r_ * w**2) ** 2)
    ob("astar-rho", "d alpha*/d rho = -w (1 - w)/(rho^2 (1 + r w^2)^2) (<= 0 for 0 <= w <= 1)",
       sp.diff(a_, rho) + w * (1 - w) / (rho**2 * (1 + r_ * w**2) ** 2))
    ob("inc-factor", "inc = kappa x alpha w (1 + r) (1 + r w - alpha (1 - w))/(1 + r w)^3: for alpha >= 0 and w <= 1 "
       "its sign is that of the last factor, which falls in alpha", band_map()["inc"]
       - kappa * x * alpha * w * (1 + r_) * (1 + r_ * w - alpha * (1 - w)) / (1 + r_ * w) ** 3)
    ob("astar-ends", "alpha* = 1 at w = 1 (the start) and at w = 0 (delta -> oo)",
       (a_.subs(w, 1) - 1) ** 2 + (a_.subs(w, 0) - 1) ** 2)
    return tuple(out)


@lru_cache(maxsize=None)
def _arb_parts():
    bm = band_map()
    return (lambdify_arb((w, rho, x), bm["f"]), lambdify_arb((w, rho, x), bm["b"]), lambdify_arb((w, rho), astar()),
            lambdify_arb((alpha, w, rho), sp.cancel(bm["inc"] / (kappa * x))))


def leaf_box(path: str, box: dict) -> tuple:
    """(wl, wh, rl, rh, sl, sh) of a leaf path (module docstring)."""
    head, steps = path.split(":")
    b = {"w": [Fraction(int(head), W_PIECES), Fraction(int(head) + 1, W_PIECES)], "r": list(box["rho"]),
         "s": [Fraction(0), Fraction(1)]}
    for c in steps:
        lo, hi = b[c.lower()]
        m = (lo + hi) / 2
        b[c.lower()] = [lo, m] if c.islower() else [m, hi]
    return (*b["w"], *b["r"], *b["s"])


def astar_range(wl: Fraction, wh: Fraction, rl: Fraction, rh: Fraction) -> tuple:
    """Balls holding the least and the largest alpha* over w in [wl, wh], rho in [rl, rh]: alpha* falls in rho
    ("astar-rho") and rises then falls in w ("astar-unimodal"), so its least value is at an end of w at rho = rh and
    its largest at an end of w at rho = rl, unless the peak 1 - 2 w - r w^2 = 0 lies inside (then the ball of the
    whole box bounds it)."""
    _, _, astar_, _ = _arb_parts()
    lo = min((astar_(exact(e), exact(rh)) for e in (wl, wh)), key=lambda v: v.lower())
    hi = max((astar_(exact(e), exact(rl)) for e in (wl, wh)), key=lambda v: v.upper())
    R = ball(rl, rh)
    r_ = 1 / R - 1
    g = [1 - 2 * exact(e) - r_ * exact(e) ** 2 for e in (wl, wh)]
    if not (all(v.lower() > 0 for v in g) or all(v.upper() < 0 for v in g)):
        hi = hi.union(astar_(ball(wl, wh), R))
    return lo, hi


def check_box(leaf: tuple, box: dict, gamma: Fraction) -> str | None:
    """The first condition of the module docstring that fails on the leaf (None: all hold)."""
    _, _, astar_, h_ = _arb_parts()
    wl, wh, rl, rh, sl, sh = leaf
    W, R, G = ball(wl, wh), ball(rl, rh), exact(gamma)
    amin, amax = astar_range(wl, wh, rl, rh)
    al_lo, al_hi = exact(sl) * G * amin, exact(sh) * G * amax
    al = al_lo.union(al_hi)
    img = []
    for xx in box["x"]:
        # f and b are monotone in w, rho and x (positivity.monotonicity): their ranges at two corners each
        fb = fb_range(wl, wh, box | {"rho": (rl, rh), "x": (xx, xx)})
        a1 = fb["f"] * al + fb["b"]
        if not (a1.lower() > 0 or fb["f"].lower() >= 0):
            return "positive"
        img.append(a1)
    a1 = img[0].union(img[1])
    # inc is concave in alpha (positivity "inc-concave"): its least value is at an end of the alpha range
    h = h_(al, W, R)
    h_lo = max(min(h_(al_lo, W, R).lower(), h_(al_hi, W, R).lower()), h.lower())
    h = h_lo.union(h.upper())
    inc = (exact(box["kappa"][0] * box["x"][0]) * h).union(exact(box["kappa"][1] * box["x"][1]) * h)
    w1 = W * (-inc).exp()
    # inc has the sign of 1 + r w - alpha (1 - w) for alpha >= 0 ("inc-factor"): >= 0 there keeps delta' >= delta
    factor = 1 + (1 / R - 1) * W - al_hi * (1 - W)
    if not (factor.lower() >= 0 or inc.lower() >= 0 or w1.upper() <= 1):
        return "delta"
    # alpha* rises then falls in w ("astar-unimodal"): its least value over the images' range [wl e^-inc_hi,
    # wh e^-inc_lo] is at one of the two ends, each evaluated on a narrow ball
    ends = (exact(wl) * (-inc.upper()).exp(), exact(wh) * (-inc.lower()).exp())
    least = min((astar_(e, R) for e in ends), key=lambda v: v.lower())
    if not (G * least.lower() - a1).lower() >= 0:
        return "upper"
    return None


def _widest(leaf: tuple, box: dict) -> str:
    """The side to halve: the widest relative to its root (w to a slice, rho to the cell's range, s to [0, 1])."""
    wl, wh, rl, rh, sl, sh = leaf
    rw = box["rho"][1] - box["rho"][0]
    rel = {"w": (wh - wl) * W_PIECES, "r": (rh - rl) / rw if rw else Fraction(0), "s": sh - sl}
    return max(rel, key=lambda k: rel[k])


def decide(box: dict, *, max_boxes: int = MAX_BOXES) -> dict:
    """The ratio set over the cell's box (Fraction pairs, inside the hypotheses): {"status": "certified", "gamma",
    "leaves", "boxes_checked"} or {"status": "open", "failed", "reason"} for the last gamma tried."""
    unproved = [o.key for o in obligations() if o.holds is not True]
    if unproved:
        return {"status": "open", "failed": "obligations", "reason": f"ratio set: steps not proved: {unproved}"}
    last = None
    for gamma in GAMMAS:
        if not box["x"][1] * box["rho"][1] <= gamma:      # alpha(1) = x rho <= gamma alpha*(1) = gamma
            continue
        with arb_precision(PREC):
            todo, done, checked = [f"{i}:" for i in reversed(range(W_PIECES))], [], 0
            while todo:
                path = todo.pop()
                leaf = leaf_box(path, box)
                checked += 1
                bad = check_box(leaf, box, gamma)
                if bad is None:
                    done.append(path)
                    continue
                side = _widest(leaf, box)
                lo, hi = {"w": leaf[0:2], "r": leaf[2:4], "s": leaf[4:6]}[side]
                root = {"w": Fraction(1, W_PIECES), "r": (box["rho"][1] - box["rho"][0]) or 1, "s": 1}[side]
                if (hi - lo) / root <= MIN_WIDTH or checked >= max_boxes:
                    last = {"status": "open", "failed": bad, "boxes_checked": checked, "gamma": str(gamma),
                            "reason": f"ratio set alpha <= {gamma} alpha*: check {bad} fails on w in [{leaf[0]}, "
                                      f"{leaf[1]}], rho in [{leaf[2]}, {leaf[3]}], s in [{leaf[4]}, {leaf[5]}]"
                                      + (" (box budget spent)" if checked >= max_boxes else " at the smallest width")}
                    break
                todo += [path + side.upper(), path + side]
            else:
                return {"status": "certified", "gamma": str(gamma), "leaves": done, "boxes_checked": checked,
                        "reason": f"alpha(t) in (0, {gamma} alpha*(delta(t))] for every t >= 1 and every member: the "
                                  f"first step lies in the ratio set and it is invariant ({len(done)} boxes of "
                                  "(w, rho, s))"}
    return last or {"status": "open", "failed": "first-step", "reason": "ratio set: x rho exceeds every gamma tried"}


__all__ = ["GAMMAS", "astar", "check_box", "decide", "leaf_box", "obligations"]
