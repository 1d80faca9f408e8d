"""Lemma C.2 over a cell by a staircase set: alpha between two ends that depend on delta, where kappa x is large.

As kappa -> oo neither a band {L <= alpha <= A, delta >= 0} nor the ratio set closes: a state with alpha above the
threshold T(w) = (1 + r w)/(1 - w) (inc < 0 above it: the "inc-factor" obligation of verify.certify.positivity_ratio)
at a moderate w = e^-delta has inc = kappa x h(alpha, w, rho) very negative, and one step takes delta below 0
(docs/atlas.md, the kappa -> oo bullet). Members never visit such states: alpha oscillates about alpha*(w) with
the factor 1 - x q and stays close to it where delta is small. The staircase set follows them:

    S = union over pieces i of {w_i <= w <= w_(i+1), L_i <= alpha <= U_i},      0 = w_0 < ... < w_n = 1, L_i > 0,

pieces dyadic in w (:func:`breaks`: equal relative resolution down to w = 2^-24), a piece no image reaches left
empty (no ends), the ends (L_i, U_i) chosen by a float64 reachability sweep over sampled members (:func:`choose`:
the hull of the images of every piece, pushed until nothing grows; a guess, the Arb check decides). If S holds
the first step (alpha(1) = x rho at w = 1, in the last piece) and every member's map sends S into S with
delta' >= 0, then by induction alpha(t) >= min L_i > 0 for every t >= 1. Invariance is checked in Arb on leaf
boxes (w, rho, s) of each piece, alpha = L_i + s (U_i - L_i):

- "delta": inc >= 0, or w e^-inc <= 1 (delta stays >= 0);
- "empty", "lower", "upper": the images' w range [wl e^-inc_hi, wh e^-inc_lo] meets no empty piece, and alpha'
  lies in [L_j, U_j] for every piece j it meets (L_j > 0, so alpha' > 0).

alpha' is affine in alpha and in x and does not depend on kappa ("alpha-affine", "alpha-linear-in-x",
"alpha-free-of-kappa"), f and b are monotone in w, rho and x (positivity.fb_range), inc = kappa x g c with g >= 0
and c = 1 + r w - alpha (1 - w) monotone in each variable ("inc-kappa-x", "inc-factor"; :func:`inc_range`).
Leaves: "i:" piece i with the cell's rho and s in [0, 1], then each letter halves w (w, W), rho (r, R) or s (s, S).
The re-checker (recheck.positivity, set "stair") states the map by hand and reads the pieces from the file,
checking that they partition [0, 1] with L_i > 0.
"""
from __future__ import annotations

import bisect
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.invariants import x
from ..model.precision import arb_precision
from ..model.symbols import alpha
from . import positivity_ratio as PR
from .arbfun import ball, exact, hi_frac, lo_frac
from .positivity import PREC, band_map, fb_range, identity_obligation, kappa, rho, w

DYADIC = 24                  # pieces: [0, 2^-DYADIC], then each [2^-k, 2^-(k-1)] cut into SUB equal parts
SUB = 8
MARGIN = 5e-3                # the float sweep widens every image by this (the Arb check's slack)
SWEEPS = 600                 # sweeps of the float reachability before it gives up
W_SPREAD = 0.05              # ... and the images' w range by this relative amount (the check's boxes are wider)
FRINGE = 2                   # times the empty pieces beside reached ones are filled (choose)
MIN_WIDTH = Fraction(1, 2**12)     # relative width below which a leaf is not bisected
MAX_BOXES = 24000            # leaf boxes checked per cell before it is left open (cells that closed: 2 000-18 000)


def breaks(dyadic: int = DYADIC, sub: int = SUB) -> list:
    """The pieces' ends 0 = w_0 < ... < w_n = 1 (rationals): [0, 2^-dyadic], then sub equal parts of each dyadic
    interval [2^-k, 2^-(k-1)] (equal relative resolution down to w = 2^-dyadic, delta = dyadic ln 2)."""
    out = [Fraction(0)]
    for k in range(dyadic, 0, -1):
        lo = Fraction(1, 2**k)
        out += [lo + lo * j / sub for j in range(sub)]
    return out + [Fraction(1)]


def _float_step(al, w_, r_, x_, y_):
    """One step in float64 in (alpha, w) (the re-checker's closed forms; numpy arrays): (alpha', w')."""
    import numpy as np  # heavy: numpy
    p, q = 1 / (1 + r_ * w_), (r_ * w_ * w_ + 1) / (r_ * w_ + 1) ** 2
    inc = y_ * (1 + r_) * w_ * al * (al * (w_ - 1) + 1 + r_ * w_) / (1 + r_ * w_) ** 3
    return al - x_ * (al * q - p), w_ * np.exp(-inc)


def choose(box: dict, samples: int = 4, nw: int = 7, na: int = 7, margin: float | None = None,
           sweeps: int = SWEEPS) -> tuple:
    """(pieces, None) with pieces [(w_lo, w_hi, L, U)] as rationals from a float64 reachability sweep, or (None, why).

    Start: the last piece holds the first step [x_lo rho_lo, x_hi rho_hi]. A sweep maps every reached piece's box
    (a grid of w, of alpha in [L_i, U_i], of rho and x) and widens the ends of every piece the images' w meets by
    the image's alpha (w' is monotone in kappa, so between kappa's two ends every piece in between is met), plus
    ``margin``; it stops when nothing grows. Fails (None) when an image has w' > 1 (delta < 0) or alpha' <= 0, or
    when a piece is never reached."""
    import numpy as np  # heavy: numpy
    margin = MARGIN if margin is None else margin
    B = breaks()
    Bf = np.array([float(b) for b in B])
    n = len(B) - 1
    L, U = np.full(n, np.inf), np.full(n, -np.inf)
    L[-1] = float(box["x"][0] * box["rho"][0]) - margin
    U[-1] = float(box["x"][1] * box["rho"][1]) + margin
    R, X = np.meshgrid(np.linspace(*map(float, box["rho"]), samples), np.linspace(*map(float, box["x"]), samples))
    r_, x_ = 1 / R.ravel() - 1, X.ravel()
    k_lo, k_hi = (float(k) for k in box["kappa"])
    fringes = 0
    for sweep in range(sweeps):
        grew = False
        for i in np.nonzero(np.isfinite(U))[0][::-1]:
            # the images of the corners of a grid of sub-boxes of (w, alpha), per sampled member and kappa's ends;
            # each sub-box's image is taken as the hull of its corners' (as the Arb check takes a leaf's)
            W, A = np.meshgrid(np.linspace(Bf[i], Bf[i + 1], nw), np.linspace(L[i], U[i], na), indexing="ij")
            W, A = W[..., None], A[..., None]
            a1, w_k = _float_step(A, W, r_, x_, k_hi * x_)
            _, w_l = _float_step(A, W, r_, x_, k_lo * x_)
            if max(w_k.max(), w_l.max()) > 1:
                return None, f"delta: a state of piece {i} (w near {Bf[i]:.3g}, alpha up to {U[i]:.4g}) steps to " \
                             f"w' = {max(w_k.max(), w_l.max()):.4g} > 1 (delta < 0)"
            if a1.min() <= 0:
                return None, f"positive: a state of piece {i} (w near {Bf[i]:.3g}) steps to alpha' = {a1.min():.4g}"

            def hull(v, red):   # over the 4 corners of each sub-box and the members
                c = red(red(v[:-1, :-1], v[1:, :-1]), red(v[:-1, 1:], v[1:, 1:]))
                return red.reduce(c, axis=-1).ravel()
            a_lo, a_hi = hull(a1, np.minimum), hull(a1, np.maximum)
            w_a, w_b = np.minimum(hull(w_k, np.minimum), hull(w_l, np.minimum)), \
                np.maximum(hull(w_k, np.maximum), hull(w_l, np.maximum))
            w_a, w_b = w_a * (1 - W_SPREAD), np.minimum(w_b * (1 + W_SPREAD), 1.0)
            j0 = np.clip(np.searchsorted(Bf, w_a, side="right") - 1, 0, n - 1)
            j1 = np.clip(np.searchsorted(Bf, w_b, side="right") - 1, 0, n - 1)
            lo_j, hi_j = int(j0.min()), int(j1.max())
            js = np.arange(lo_j, hi_j + 1)[None, :]
            met = (j0[:, None] <= js) & (js <= j1[:, None])
            up = np.where(met, a_hi[:, None], -np.inf).max(axis=0) + margin
            dn = np.where(met, a_lo[:, None], np.inf).min(axis=0) - margin
            newU, newL = np.maximum(U[lo_j:hi_j + 1], up), np.minimum(L[lo_j:hi_j + 1], dn)
            if (newU > U[lo_j:hi_j + 1] + margin / 4).any() or (newL < L[lo_j:hi_j + 1] - margin / 4).any():
                grew = True     # (a growth below margin/4 is kept but does not ask for another sweep: the images
                                # then stay 3/4 of the margin inside the ends)
            U[lo_j:hi_j + 1], L[lo_j:hi_j + 1] = newU, newL
        if not grew:
            # an empty piece beside a reached one takes its ends (the Arb check's images spill a little past the
            # sampled ones); then sweep again, FRINGE times
            fringe = [j for j in range(n) if not np.isfinite(U[j]) and any(
                0 <= k < n and np.isfinite(U[k]) for k in (j - 1, j + 1))]
            if not fringe or fringes >= FRINGE:
                break
            fringes += 1
            for j in fringe:
                k = j - 1 if j > 0 and np.isfinite(U[j - 1]) else j + 1
                L[j], U[j] = L[k], U[k]
    else:
        return None, f"the float sweep did not settle in {sweeps} sweeps"
    if L[np.isfinite(L)].min() <= 0:
        return None, f"positive: the lower end reaches {L[np.isfinite(L)].min():.4g}"
    # a piece no image reached is empty (None ends): the Arb check refuses an image that meets it
    pieces = [(B[i], B[i + 1], Fraction(float(L[i])).limit_denominator(1 << 20),
               Fraction(float(U[i])).limit_denominator(1 << 20)) if np.isfinite(U[i]) else (B[i], B[i + 1], None, None)
              for i in range(n)]
    return pieces, None


@lru_cache(maxsize=None)
def obligations() -> tuple:
    """The staircase set's own symbolic steps (the band map's shared ones are positivity.obligations): inc's factored
    form (the ratio set's "inc-factor", the range of inc), and alpha' does not depend on kappa, so one alpha' range
    serves every kappa of the cell while w' spreads over kappa's range."""
    bm = band_map()
    factor = next(o for o in PR.obligations() if o.key == "inc-factor")
    free = identity_obligation("alpha-free-of-kappa", "alpha' = f(w) alpha + b(w) does not depend on kappa: "
                               "d f/d kappa = d b/d kappa = 0", sp.diff(bm["f"], kappa) ** 2 + sp.diff(bm["b"], kappa) ** 2)
    return (factor, free)


def inc_range(wl, wh, rl, rh, a_lo, a_hi):
    """A ball holding inc/(kappa x) = g c over the box (w, rho, alpha in [a_lo, a_hi]) by "inc-factor":
    g = alpha w (1 + r)/(1 + r w)^3 >= 0 (a ball) and c = 1 + r w - alpha (1 - w), which rises in r and w and falls in
    alpha (w <= 1), so its range has exact rational ends; the product of a positive range and a signed one."""
    r_lo, r_hi = 1 / rh - 1, 1 / rl - 1
    cl, ch = 1 + r_lo * wl - a_hi * (1 - wl), 1 + r_hi * wh - a_lo * (1 - wh)
    c_lo, c_hi = exact(cl), exact(ch)
    Rr, W = ball(r_lo, r_hi), ball(wl, wh)
    g = ball(a_lo, a_hi) * W * (1 + Rr) / (1 + Rr * W) ** 3
    g_lo, g_hi = max(g.lower(), exact(0)), g.upper()
    if cl >= 0:
        return (g_lo * c_lo).union(g_hi * c_hi)
    if ch <= 0:
        return (g_hi * c_lo).union(g_lo * c_hi)
    return (g_hi * c_lo).union(g_hi * c_hi)


def kappa_x_hull(h, box: dict):
    """inc = kappa x h ("inc-kappa-x"): the hull of the two extreme products (kappa x > 0)."""
    return (exact(box["kappa"][0] * box["x"][0]) * h).union(exact(box["kappa"][1] * box["x"][1]) * h)


def leaf_box(path: str, box: dict, pieces: list) -> tuple:
    """(i, wl, wh, rl, rh, sl, sh) of a leaf path (module docstring)."""
    head, steps = path.split(":")
    i = int(head)
    b = {"w": list(pieces[i][:2]), "r": list(box["rho"]), "s": [Fraction(0), Fraction(1)]}
    for c in steps:
        lo, hi = b[c.lower()]
        m = (lo + hi) / 2
        b[c.lower()] = [lo, m] if c.islower() else [m, hi]
    return (i, *b["w"], *b["r"], *b["s"])


def check_box(leaf: tuple, box: dict, pieces: list) -> str | None:
    """The first condition of the module docstring that fails on the leaf (None: all hold)."""
    i, wl, wh, rl, rh, sl, sh = leaf
    L, U = pieces[i][2], pieces[i][3]
    al_lo, al_hi = exact(L + sl * (U - L)), exact(L + sh * (U - L))
    al = al_lo.union(al_hi)
    W, R = ball(wl, wh), ball(rl, rh)
    img = []
    for xx in box["x"]:
        # f and b are monotone in w, rho and x (positivity.monotonicity): their ranges at two corners each
        fb = fb_range(wl, wh, box | {"rho": (rl, rh), "x": (xx, xx)})
        img.append(fb["f"] * al + fb["b"])
    a1 = img[0].union(img[1])
    inc = kappa_x_hull(inc_range(wl, wh, rl, rh, L + sl * (U - L), L + sh * (U - L)), box)
    w_hi = exact(wh) * (-inc.lower()).exp()
    if not (inc.lower() >= 0 or w_hi.upper() <= 1):
        return "delta"
    w_lo = exact(wl) * (-inc.upper()).exp()
    # the pieces the images' w range meets (a shared end counts for both)
    ends = [p[0] for p in pieces] + [Fraction(1)]
    lo_q, hi_q = lo_frac(w_lo), min(hi_frac(w_hi), Fraction(1))
    j0 = max(bisect.bisect_left(ends, lo_q) - 1, 0)
    j1 = min(bisect.bisect_right(ends, hi_q) - 1, len(pieces) - 1)
    met = [p for p in pieces[j0:j1 + 1] if p[0] <= hi_q and p[1] >= lo_q]
    if any(p[2] is None for p in met):
        return "empty"
    if not a1.lower() >= exact(max(p[2] for p in met)):
        return "lower"
    if not a1.upper() <= exact(min(p[3] for p in met)):
        return "upper"
    return None


def _widest(leaf: tuple, box: dict, pieces: list) -> str:
    """The side to halve: the widest relative to its root (w to the piece, rho to the cell's range, s to [0, 1])."""
    i, wl, wh, rl, rh, sl, sh = leaf
    rw = box["rho"][1] - box["rho"][0]
    rel = {"w": (wh - wl) / (pieces[i][1] - pieces[i][0]), "r": (rh - rl) / rw if rw else Fraction(0), "s": sh - sl}
    return max(rel, key=lambda k: rel[k])


def decide(box: dict, *, max_boxes: int | None = None) -> dict:
    """The staircase set over the cell's box (Fraction pairs, inside the hypotheses): {"status": "certified",
    "pieces", "leaves", "boxes_checked"} or {"status": "open", "failed", "reason"}."""
    max_boxes = MAX_BOXES if max_boxes is None else max_boxes
    pieces, why = choose(box)
    if pieces is None:
        return {"status": "open", "failed": why.split(":")[0], "reason": f"staircase set: {why}"}
    last = pieces[-1]
    if not (last[2] <= box["x"][0] * box["rho"][0] and box["x"][1] * box["rho"][1] <= last[3]):
        return {"status": "open", "failed": "first-step", "reason": "staircase set: the first step is not inside the "
                                                                      "last piece's ends"}
    stored = [[str(v) if v is not None else None for v in p] for p in pieces]
    with arb_precision(PREC):
        todo = [f"{i}:" for i in reversed(range(len(pieces))) if pieces[i][2] is not None]
        done, checked = [], 0
        while todo:
            path = todo.pop()
            leaf = leaf_box(path, box, pieces)
            checked += 1
            bad = check_box(leaf, box, pieces)
            if bad is None:
                done.append(path)
                continue
            side = _widest(leaf, box, pieces)
            k = "wrs".index(side)
            lo, hi = leaf[1 + 2 * k], leaf[2 + 2 * k]
            root = {"w": pieces[leaf[0]][1] - pieces[leaf[0]][0], "r": (box["rho"][1] - box["rho"][0]) or 1,
                    "s": 1}[side]
            if (hi - lo) / root <= MIN_WIDTH or checked >= max_boxes:
                return {"status": "open", "failed": bad, "boxes_checked": checked,
                        "reason": f"staircase set: check {bad} fails on piece {leaf[0]}, w in [{leaf[1]}, {leaf[2]}], "
                                  f"rho in [{leaf[3]}, {leaf[4]}], s in [{leaf[5]}, {leaf[6]}]"
                                  + (" (box budget spent)" if checked >= max_boxes else " at the smallest width")}
            todo += [path + side.upper(), path + side]
    return {"status": "certified", "pieces": stored, "w_pieces": len(pieces), "leaves": done, "boxes_checked": checked,
            "reason": f"alpha(t) in [L_i, U_i] of its piece of w = e^-delta for every t >= 1 and every member, min L_i "
                      f"= {min(p[2] for p in pieces if p[2] is not None)}: the first step lies in the staircase set and "
                      f"it is invariant ({len(done)} boxes of (w, rho, s) over {len(pieces)} pieces)"}


__all__ = ["breaks", "check_box", "choose", "decide", "leaf_box", "obligations"]
