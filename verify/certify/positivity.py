"""Lemma C.2 over a cell of the atlas: alpha(t) > 0 for every t >= 1, for every member, by an invariant band.

A cell is a box of rho = K/D, x = eta_V c_L v N/K and kappa = y/x (verify.derive.invariants: r = 1/rho - 1,
y = kappa x). In w = e^-delta in [0, 1] (w = 1 at the start delta = 0, w -> 0 as delta -> oo) the reduced map of
sigma = identity (generated from verify.derive.invariants, never copied) reads

    alpha' = f(w) alpha + b(w),            f = d alpha'/d alpha (affine: the obligation "alpha-affine"),
    w'     = w exp(-inc(alpha, w)),        inc = delta' - delta,

with b = x E/(r + E) > 0 ("b-positive"). The first step from (0, 0) is (alpha, delta) = (x rho, 0) ("first-step").
The certificate of a cell is one band [L, A] of rationals, 0 < L, such that the set

    S = {(alpha, w) : L <= alpha <= A, 0 <= w <= 1}       (0 <= w <= 1 is delta >= 0)

contains the first step of every member and is mapped into itself by every member's map; then by induction on t
every alpha(t), t >= 1, lies in [L, A], so alpha(t) >= L > 0 for all time, with no iteration. Invariance is
checked in Arb on boxes of w covering [0, 1] (bisected where a check fails), with the cell's parameters as balls:
alpha' over alpha in [L, A] is the hull of its values at L and at A (affine in alpha), and w' <= 1 holds where
inc >= 0 or w_hi e^(-inc_lo) <= 1. The band is chosen by a linear programme (scipy) over sampled members and w:
the invariance conditions are linear in (L, A) at each sample; the rigorous check is the boxes'.

Whether delta is monotone: it is not. inc < 0 where alpha > 1 + (1 + r)/(E - 1) (the inc formula), which the
band allows; only delta >= 0 is kept invariant. At delta = 0, inc = alpha y/(1 + r) > 0 ("inc-at-start").

The result is plain JSON (:data:`VERSION`), re-checked by recheck.positivity, which states the map
by hand and imports nothing of verify.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.invariants import SCOPE, invariant_map, r, x, y
from ..derive.obligations import Obligation, stopwatch
from ..model.precision import arb_precision
from ..model.symbols import alpha, delta
from .arbfun import ball, exact, lambdify_arb

VERSION = 1
NAMES = ("rho", "x", "kappa")
w = sp.Symbol("w", nonnegative=True)                # e^-delta
rho, kappa = sp.symbols("rho kappa", positive=True)
PREC = 128                                          # Arb bits of the invariance checks
W_PIECES = 16                                       # initial boxes of w in [0, 1]
MIN_WIDTH = Fraction(1, 2**20)                      # a box is not bisected below this width
MAX_BOXES = 6000                                    # boxes checked per cell before it is left open
# The regions of Lemma C.2's large-step range decided cell by cell (verify.certify.region_b), as data: the box (x from
# min(1, r), the small-step edge, to its upper end) and the width of the initial cells' rho slices. "B" is the
# atlas issue's Region B; "B-low" the strip below it where no constant band exists and the ratio set closes (kappa
# <= 1: above 1 it stays open, docs/atlas.md). "saved_only": Lemma C.2 reads the region's saved run when there is
# one and never decides its cells during a claim run (a claim run decides Region B and B-x-edge in full when no run
# is saved: 139 and 24 cells, a few seconds of CPU).
# Towards the faces of the large-step range (issue 27), each 1% short of the face it approaches: "B-x-edge" = Region B's
# rho and kappa with x in [1.9, 1.98] (x -> 2, the stability edge); "B-rho-top" = rho in [7/8, 99/100] (K -> D) with x
# from r up to 1.98; "B-kappa-low" = kappa in [1/65536, 1/256] (kappa -> 0) over Region B's rho with x up to 1.98;
# "B-kappa-high" = kappa in [4, 64] (kappa -> oo), where the staircase set closes most of what the band and the ratio set
# leave open (docs/atlas.md says where and why).
# "B-zero" = rho in [0, 1/32] (every D >= 32 K, rho = 0 the cell's end: D -> oo) with x from 1 to 1.98 and kappa in
# [1/256, 1], decided by the threshold set (verify.certify.positivity_threshold; a few seconds: a claim run decides it).
# Between the regions (region_b.holes lists what FACES_BOX has in none; docs/atlas.md, "Lemma C.2 between the
# regions"): "B-low-x-edge" (rho [1/32, 1/8], x [1.9, 1.98], kappa [1/256, 1]), "B-zero-kappa-low" (rho [0, 1/8],
# kappa [1/65536, 1/256]), "B-zero-kappa-mid" (rho [0, 1/8], kappa [1, 4]) and
# "B-rho-top-kappa-low" (rho [7/8, 0.99], kappa [1/65536, 1/256]), "B-low-kappa-high" (rho [1/32, 1/8], x from 1,
# kappa [4, 64]: mostly open, docs/atlas.md), "B-zero-kappa-high" (rho [0, 1/32], kappa [4, 64]: open, past the
# threshold set's flip at kappa x ~ 2; a region so that its cells are named and searched for counterexamples) and
# "B-rho-top-kappa-high" (rho [7/8, 0.99], kappa [4, 64]: K -> D and kappa -> oo at once). "sets": the set kinds
# tried, in that order (positivity_sets.kinds_named; default all, the registry's order): the threshold set first where it closes in a
# fraction of a second cells on which the band and the ratio set spend seconds (or their whole budget) first; at
# kappa -> oo and rho -> 1 the staircase after the band and the ratio set, without the threshold set (its flip at
# kappa x > 2 makes it fail there after its whole budget).
REGIONS = {
    "B": {"rho": (Fraction(1, 8), Fraction(7, 8)), "x": (None, Fraction(19, 10)),
          "kappa": (Fraction(1, 256), Fraction(4)), "rho_slice": Fraction(1, 16)},
    "B-low": {"rho": (Fraction(1, 32), Fraction(1, 8)), "x": (None, Fraction(19, 10)),
              "kappa": (Fraction(1, 256), Fraction(1)), "rho_slice": Fraction(1, 32), "saved_only": True},
    "B-x-edge": {"rho": (Fraction(1, 8), Fraction(7, 8)), "x": (Fraction(19, 10), Fraction(99, 50)),
                 "kappa": (Fraction(1, 256), Fraction(4)), "rho_slice": Fraction(1, 16)},
    "B-rho-top": {"rho": (Fraction(7, 8), Fraction(99, 100)), "x": (None, Fraction(99, 50)),
                  "kappa": (Fraction(1, 256), Fraction(4)), "rho_slice": Fraction(23, 800), "saved_only": True,
                  "sets": ("band", "ratio", "stair")},
    "B-kappa-low": {"rho": (Fraction(1, 8), Fraction(7, 8)), "x": (None, Fraction(99, 50)),
                    "kappa": (Fraction(1, 65536), Fraction(1, 256)), "rho_slice": Fraction(1, 16), "saved_only": True},
    "B-kappa-high": {"rho": (Fraction(1, 8), Fraction(7, 8)), "x": (None, Fraction(99, 50)),
                     "kappa": (Fraction(4), Fraction(64)), "rho_slice": Fraction(1, 16), "saved_only": True,
                     "sets": ("band", "ratio", "stair")},
    "B-zero": {"rho": (Fraction(0), Fraction(1, 32)), "x": (Fraction(1), Fraction(99, 50)),
               "kappa": (Fraction(1, 256), Fraction(1)), "rho_slice": Fraction(1, 32)},
    "B-low-x-edge": {"rho": (Fraction(1, 32), Fraction(1, 8)), "x": (Fraction(19, 10), Fraction(99, 50)),
                     "kappa": (Fraction(1, 256), Fraction(1)), "rho_slice": Fraction(1, 32), "saved_only": True,
                     "sets": ("threshold", "band", "ratio")},
    "B-zero-kappa-low": {"rho": (Fraction(0), Fraction(1, 8)), "x": (Fraction(1), Fraction(99, 50)),
                         "kappa": (Fraction(1, 65536), Fraction(1, 256)), "rho_slice": Fraction(1, 32),
                         "saved_only": True, "sets": ("threshold", "band", "ratio")},
    "B-zero-kappa-mid": {"rho": (Fraction(0), Fraction(1, 8)), "x": (Fraction(1), Fraction(99, 50)),
                         "kappa": (Fraction(1), Fraction(4)), "rho_slice": Fraction(1, 32), "saved_only": True,
                         "sets": ("threshold", "band")},
    "B-rho-top-kappa-low": {"rho": (Fraction(7, 8), Fraction(99, 100)), "x": (None, Fraction(99, 50)),
                            "kappa": (Fraction(1, 65536), Fraction(1, 256)), "rho_slice": Fraction(23, 800),
                            "saved_only": True},
    "B-low-kappa-high": {"rho": (Fraction(1, 32), Fraction(1, 8)), "x": (Fraction(1), Fraction(99, 50)),
                         "kappa": (Fraction(4), Fraction(64)), "rho_slice": Fraction(1, 32),
                         "saved_only": True, "sets": ("band", "ratio", "stair")},
    "B-zero-kappa-high": {"rho": (Fraction(0), Fraction(1, 32)), "x": (Fraction(1), Fraction(99, 50)),
                          "kappa": (Fraction(4), Fraction(64)), "rho_slice": Fraction(1, 32),
                          "saved_only": True, "sets": ("threshold",)},
    "B-rho-top-kappa-high": {"rho": (Fraction(7, 8), Fraction(99, 100)), "x": (None, Fraction(99, 50)),
                             "kappa": (Fraction(4), Fraction(64)), "rho_slice": Fraction(23, 800),
                             "saved_only": True, "sets": ("band", "ratio", "stair")},
}
REGION_B = REGIONS["B"]
# The box the regions aim to tile: Lemma C.2's large-step range less 1% margins at its faces (issue 27's stretch: rho up
# to 0.99, x from min(1, r) up to 1.98, kappa in [1/65536, 64]; rho from 0, D -> oo, a cell end). region_b.holes lists
# its parts in no region.
FACES_BOX = {"rho": (Fraction(0), Fraction(99, 100)), "x": (None, Fraction(99, 50)),
             "kappa": (Fraction(1, 65536), Fraction(64))}


def _in_w(e):
    """An expression in (alpha, delta; r, x, y) written in (alpha, w; rho, x, kappa)."""
    return sp.factor(sp.cancel(sp.together(sp.sympify(e).subs(delta, -sp.log(w)).subs(
        {r: 1 / rho - 1, y: kappa * x}))))


@lru_cache(maxsize=None)
def band_map() -> dict:
    """The generated map's parts in (alpha, w; rho, x, kappa): f = d alpha'/d alpha, b = alpha'(alpha = 0), inc."""
    m = invariant_map()
    return {"f": _in_w(sp.diff(m.a_next, alpha)), "b": _in_w(m.a_next.subs(alpha, 0)), "inc": _in_w(m.inc)}


def identity_obligation(key: str, name: str, expr_zero, detail: str = "") -> Obligation:
    """The obligation "expr_zero simplifies to 0" (a SymPy identity), timed."""
    with stopwatch() as t:
        z = sp.simplify(sp.cancel(sp.together(expr_zero)))
    return Obligation(name, z == 0, detail or ("simplifies to 0" if z == 0 else f"residue {sp.sstr(z)[:160]}"),
                      "sympy identity", SCOPE, seconds=t(), key=key)


@lru_cache(maxsize=None)
def obligations() -> tuple:
    """The symbolic steps the band argument uses, each a SymPy identity on the generated map."""
    m = invariant_map()
    bm = band_map()
    E = sp.Symbol("E", positive=True)
    out = []

    def ob(key, name, expr_zero, detail=""):
        out.append(identity_obligation(key, name, expr_zero, detail))
    ob("alpha-affine", "alpha' is affine in alpha at fixed delta: d^2 alpha'/d alpha^2 = 0", sp.diff(m.a_next, alpha, 2))
    ob("band-form", "alpha' = f(w) alpha + b(w) and delta' - delta = inc(alpha, w) with w = e^-delta, r = 1/rho - 1, "
       "y = kappa x: the band's functions are the generated map", _in_w(m.a_next) - (bm["f"] * alpha + bm["b"])
       + (_in_w(m.inc) - bm["inc"]))
    b_E = sp.cancel(m.a_next.subs(alpha, 0).subs(delta, sp.log(E)))
    ob("alpha-linear-in-x", "alpha' is affine in x at fixed (alpha, delta): d^2 alpha'/d x^2 = 0", sp.diff(m.a_next, x, 2))
    ob("b-positive", "b = alpha'(alpha = 0) = x E/(r + E) (> 0 for x, r, E > 0)", b_E - x * E / (r + E))
    ob("first-step", "from (alpha, delta) = (0, 0): alpha(1) = x rho and delta(1) = 0",
       (_in_w(m.a_next).subs({alpha: 0, w: 1}) - x * rho) ** 2 + _in_w(m.inc).subs({alpha: 0, w: 1}) ** 2)
    ob("inc-at-start", "at delta = 0 (w = 1): delta' - delta = alpha y/(1 + r) = alpha kappa x rho (> 0 for alpha > 0)",
       bm["inc"].subs(w, 1) - alpha * kappa * x * rho)
    for name, var, sign in monotonicity():
        out.append(sign_obligation(name, var, sign))
    ob("inc-kappa-x", "delta' - delta = kappa x h(alpha, w, rho): inc/(kappa x) is free of kappa and x",
       sp.diff(bm["inc"] / (kappa * x), kappa) ** 2 + sp.diff(bm["inc"] / (kappa * x), x) ** 2)
    concave = _rational_sign(sp.diff(bm["inc"], alpha, 2))
    out.append(Obligation("d^2 inc/d alpha^2 <= 0 for 0 < w <= 1, 0 < rho < 1, x, kappa > 0 (inc is concave in alpha: "
                          "its least value over an interval of alpha is at an end)", concave == -1,
                          "coefficient signs after rho = 1/(1 + a), w = 1/(1 + c)", "sympy identity", SCOPE,
                          key="inc-concave"))
    return tuple(out)


# The domain of the signs below: 0 < rho < 1, 0 < w <= 1, x > 0, written rho = 1/(1 + a), w = 1/(1 + c), a > 0,
# c >= 0, so that a rational function of constant sign has numerator and denominator with coefficients of one sign.
_a, _c = sp.symbols("a c", nonnegative=True)
_DOMAIN = {rho: 1 / (1 + _a), w: 1 / (1 + _c)}


def _coefficient_sign(poly) -> int | None:
    """+1 / -1 when every coefficient of the polynomial (in nonnegative variables) is >= 0 / <= 0, not all 0."""
    co = sp.Poly(sp.expand(poly), _a, _c, x, alpha, kappa).coeffs()
    if co and all(c >= 0 for c in co):
        return 1
    if co and all(c <= 0 for c in co):
        return -1
    return None


@lru_cache(maxsize=None)
def derivative_sign(name: str, var) -> int | None:
    """The sign of d g/d var (g = f or b) on the domain, decided by coefficient signs (None: not decided)."""
    return _rational_sign(sp.diff(band_map()[name], var))


def _rational_sign(e) -> int | None:
    """The constant sign of a rational function on the domain by coefficient signs (None: not decided)."""
    num, den = sp.fraction(sp.cancel(sp.together(e.subs(_DOMAIN))))
    sn, sd = _coefficient_sign(num), _coefficient_sign(den)
    return None if sn is None or sd is None else sn * sd


@lru_cache(maxsize=None)
def monotonicity() -> tuple:
    """(function, variable, sign) for f and b in w, rho and x: the corners where their ranges over a box lie."""
    return tuple((g, v, derivative_sign(g, v)) for g in ("f", "b") for v in (w, rho, x))


def sign_obligation(name: str, var, sign) -> Obligation:
    """The obligation "d name/d var has constant sign on the domain" (its proof: coefficient signs)."""
    word = {1: ">= 0", -1: "<= 0", None: "of no single sign (undecided)"}[sign]
    return Obligation(f"d {name}/d {var} {word} for 0 < w <= 1, 0 < rho < 1, x > 0", sign is not None,
                      "with rho = 1/(1 + a), w = 1/(1 + c) (a > 0, c >= 0) the derivative's numerator and denominator "
                      "are polynomials with coefficients of one sign each", "sympy identity", SCOPE,
                      key=f"{name}-monotone-in-{var}")


@lru_cache(maxsize=None)
def _arb_parts():
    bm = band_map()
    return (lambdify_arb((w, rho, x), bm["f"]), lambdify_arb((w, rho, x), bm["b"]),
            lambdify_arb((alpha, w, rho, x, kappa), bm["inc"]))


def fb_range(wl: Fraction, wh: Fraction, box: dict) -> dict:
    """Balls holding the ranges of f and b over w in [wl, wh] and the cell's (rho, x): each function is monotone in
    each variable (:func:`monotonicity`, proved), so its least and largest values are at two corners, evaluated in
    Arb at exact points."""
    f_, b_, _ = _arb_parts()
    fn = {"f": f_, "b": b_}
    ends = {w: (wl, wh), rho: box["rho"], x: box["x"]}
    out = {}
    for g in fn:
        signs = {v: s for n, v, s in monotonicity() if n == g}
        if any(s is None for s in signs.values()):
            raise RuntimeError(f"{g} is not proved monotone in every variable: no corner rule")
        lo = {v: ends[v][0] if s > 0 else ends[v][1] for v, s in signs.items()}
        hi = {v: ends[v][1] if s > 0 else ends[v][0] for v, s in signs.items()}
        at = lambda pt: fn[g](exact(pt[w]), exact(pt[rho]), exact(pt[x]))  # noqa: E731
        out[g] = at(lo).union(at(hi))
    return out


@lru_cache(maxsize=None)
def _float_parts():
    bm = band_map()
    return (sp.lambdify((w, rho, x), bm["f"], "numpy"), sp.lambdify((w, rho, x), bm["b"], "numpy"))


def small_step_edge(rho_: Fraction) -> Fraction:
    """min(1, r) at rho: the lower end of Lemma C.2's large-step range in x."""
    return min(Fraction(1), 1 / Fraction(rho_) - 1)


def _box(cell: dict) -> dict:
    """The cell as Fraction pairs, checked against the hypotheses (0 < rho < 1, 0 < x < 2, kappa > 0)."""
    out = {}
    for n in NAMES:
        lo, hi = (Fraction(v) for v in cell[n])
        if not lo <= hi:
            raise ValueError(f"cell {n}: lower end {lo} above upper end {hi}")
        out[n] = (lo, hi)
    return out


def in_hypotheses(box: dict) -> str | None:
    """None when every member satisfies 0 < K < D and x < 2 (kappa > 0); else the violated hypothesis."""
    # a cell [0, rho_hi] is every member with 0 < rho <= rho_hi (rho = 0 is its end, D -> oo, not a member)
    if not (0 <= box["rho"][0] and 0 < box["rho"][1] < 1):
        return "rho = K/D must lie in (0, 1) (0 < K < D; a cell may start at rho = 0, its members have rho > 0)"
    if not (0 < box["x"][0] and box["x"][1] < 2):
        return "x = eta_V c_L v N/K must lie in (0, 2) (the step-size hypothesis)"
    if not box["kappa"][0] > 0:
        return "kappa = y/x must be > 0"
    return None


def delta_cap(box: dict, samples: int = 4, grid: int = 256) -> float:
    """The largest A for which delta stays >= 0 from every state (A, w) of the sampled members: at w = e^-delta the
    check "delta-nonnegative" asks inc(alpha, w) >= ln w (delta' = delta + inc >= 0). By the inc formula (the
    re-checker's) inc = c alpha (alpha (w - 1) + 1 + r w), c = y (1 + r) w/(1 + r w)^3 > 0, a downward parabola in
    alpha, so inc >= ln w (<= 0) holds for alpha from 0 up to the larger root of c (w - 1) alpha^2 + c (1 + r w) alpha
    - ln w; the cap is the least root over w in (0, 1) and the sampled rho, at the largest y = kappa x of the box
    (inc is proportional to y). Where kappa x is large the unconstrained band's A lies above it (kappa -> oo)."""
    import numpy as np  # heavy: numpy
    y_ = float(box["kappa"][1] * box["x"][1])
    ws = np.linspace(1.0 / grid, 1.0 - 1.0 / grid, grid)
    cap = math.inf
    for rh in np.linspace(float(box["rho"][0]), float(box["rho"][1]), samples):
        r_ = 1 / rh - 1
        c = y_ * (1 + r_) * ws / (1 + r_ * ws) ** 3
        a2, a1, a0 = c * (ws - 1), c * (1 + r_ * ws), -np.log(ws)
        cap = min(cap, float(np.min((-a1 - np.sqrt(a1 * a1 - 4 * a2 * a0)) / (2 * a2))))
    return cap


def choose_band(box: dict, samples: int = 4, grid: int = 64, cap: float | None = None):
    """(L, A) from a linear programme: maximise the least slack of the invariance conditions at sampled members
    (a grid of rho and x, the box's corners among them) and w in [0, 1], with A <= cap when one is given
    (:func:`delta_cap`); None when it is infeasible."""
    import numpy as np  # heavy: numpy
    from scipy.optimize import linprog  # heavy: scipy
    f_, b_ = _float_parts()
    ws = np.linspace(0.0, 1.0, grid)
    rows, rhs = [], []
    for rh in np.linspace(float(box["rho"][0]), float(box["rho"][1]), samples):
        for xx in np.linspace(float(box["x"][0]), float(box["x"][1]), samples):
            f = np.broadcast_to(f_(ws, rh, xx), ws.shape)
            b = np.broadcast_to(b_(ws, rh, xx), ws.shape)
            for fi, bi in zip(f, b):
                # image of [L, A] is [min(fL, fA) + b, max(fL, fA) + b]; rows: a . (L, A, -slack) <= rhs
                if fi >= 0:
                    rows += [[1 - fi, 0, 1], [0, -(1 - fi), 1]]
                    rhs += [bi, -bi]
                else:
                    rows += [[1, -fi, 1], [fi, -1, 1]]
                    rhs += [bi, -bi]
    lo1 = float(box["x"][0] * box["rho"][0])
    hi1 = float(box["x"][1] * box["rho"][1])
    rows += [[1, 0, 1], [0, -1, 1], [-1, 0, 1]]      # L <= alpha(1) for every member, A >= alpha(1), L > 0
    rhs += [lo1, -hi1, 0]
    a_bound = (0, None if cap is None else cap)
    res = linprog([0, 0, -1], A_ub=rows, b_ub=rhs, bounds=[(0, None), a_bound, (None, 1)], method="highs")
    if res.status != 0 or res.x[2] <= 0:
        return None, (float(res.x[2]) if res.status == 0 else None)
    # second stage: keep half the best least slack and take the narrowest band (a low A keeps delta' - delta from
    # going far below 0 where alpha > 1; a high L is the positivity margin)
    slack = res.x[2] / 2
    res2 = linprog([-1, 1, 0], A_ub=rows, b_ub=rhs, bounds=[(0, None), a_bound, (slack, slack)], method="highs")
    L, A, _ = res2.x if res2.status == 0 else res.x
    return (Fraction(L).limit_denominator(1 << 16), Fraction(A).limit_denominator(1 << 16)), float(slack)


def leaf_box(path: str, box: dict) -> tuple:
    """(wl, wh, rl, rh) of a leaf: "i:" picks the i-th of W_PIECES slices of w in [0, 1] (the cell's whole rho
    range), then each letter halves w (w lower half, W upper) or rho (r, R)."""
    head, steps = path.split(":")
    wl, wh = Fraction(int(head), W_PIECES), Fraction(int(head) + 1, W_PIECES)
    rl, rh = box["rho"]
    for c in steps:
        if c in "wW":
            m = (wl + wh) / 2
            wl, wh = (wl, m) if c == "w" else (m, wh)
        else:
            m = (rl + rh) / 2
            rl, rh = (rl, m) if c == "r" else (m, rh)
    return wl, wh, rl, rh


def _check_box(wl: Fraction, wh: Fraction, box: dict, L: Fraction, A: Fraction) -> str | None:
    """The first invariance check that fails on the w-box [wl, wh] with the parameter box ``box`` (None: all hold)."""
    _, _, inc_ = _arb_parts()
    W = ball(wl, wh)
    # alpha' is affine in alpha and in x ("alpha-affine", "alpha-linear-in-x"): over the box its values lie between
    # those at the ends of [L, A] and of the x range; at fixed x, f and b are monotone in w and rho (corners)
    img = []
    for xx in box["x"]:
        fb = fb_range(wl, wh, box | {"x": (xx, xx)})
        img += [fb["f"] * exact(a) + fb["b"] for a in (L, A)]
    if not all(v.lower() >= exact(L) for v in img):
        return "alpha-lower"
    if not all(v.upper() <= exact(A) for v in img):
        return "alpha-upper"
    # inc is concave in alpha ("inc-concave"): its least value over [L, A] is at an end; it is kappa x times a
    # function of (alpha, w, rho) ("inc-kappa-x"), so its range is spanned by the two extreme products kappa x
    # (Arb's ball of a wide positive interval such as kappa in [1/256, 4] would straddle 0 in products)
    R = ball(*box["rho"])
    inc = None
    for a in (L, A):
        for k, xx in ((box["kappa"][0], box["x"][0]), (box["kappa"][1], box["x"][1])):
            v = inc_(exact(a), W, R, exact(xx), exact(k))
            inc = v if inc is None else inc.union(v)
    if not (inc.lower() >= 0 or (exact(wh) * (-inc).exp()).upper() <= 1):
        return "delta-nonnegative"
    return None


def _frac(q) -> str:
    return str(Fraction(q))


def result_skeleton(cell: dict) -> tuple[dict, dict]:
    """(the cell as Fraction pairs, the fields every invariant set's result starts from: version, cell, prec,
    w_pieces); a cell outside the hypotheses raises ValueError."""
    box = _box(cell)
    why = in_hypotheses(box)
    if why is not None:
        raise ValueError(f"cell outside the hypotheses: {why}")
    return box, {"version": VERSION, "cell": {n: [_frac(v) for v in box[n]] for n in NAMES}, "prec": PREC,
                 "w_pieces": W_PIECES}


def first_step(box: dict) -> dict:
    """The first step from (0, 0) over the box as stored: alpha(1) = x rho in [x_lo rho_lo, x_hi rho_hi], delta(1) =
    0 ("first-step")."""
    return {"alpha1": [_frac(box["x"][0] * box["rho"][0]), _frac(box["x"][1] * box["rho"][1])], "delta1": "0"}


def decide_positivity(cell: dict, *, max_boxes: int = MAX_BOXES) -> dict:
    """Decide alpha(t) > 0 for t >= 1 over the cell {"rho": (lo, hi), "x": .., "kappa": ..} (Fractions or strings):
    status "certified" (the band, the first step and every leaf box of (w, rho) checked) or "open" (the failing
    check and where); a cell outside the hypotheses raises ValueError."""
    box, out = result_skeleton(cell)
    unproved = [o.key for o in obligations() if o.holds is not True]
    if unproved:
        return out | {"status": "open", "failed": "obligations",
                      "reason": f"the band argument's symbolic steps are not all proved: {unproved}"}
    out["obligations"] = [o.key for o in obligations()]
    res = _decide_band(box, out, *choose_band(box), max_boxes)
    if res["status"] == "open" and res["failed"] == "delta-nonnegative":
        # the band's A let delta fall below 0 (kappa x large): choose it again under the cap delta_cap (the same
        # rigorous checks decide; a cap is only a better guess)
        cap = 0.98 * delta_cap(box)
        capped = _decide_band(box, out, *choose_band(box, cap=cap), max_boxes)
        if capped["status"] == "certified":
            return capped
        res = res | {"reason": f"{res['reason']}; with A capped at {cap:.4g} (delta_cap): {capped['reason']}"}
    return res


def _decide_band(box: dict, out: dict, band, slack, max_boxes: int) -> dict:
    """The band (L, A) decided over the box: the first step inside it and every leaf box of (w, rho) checked
    (``out``, the result's common fields, is copied, not changed)."""
    out = dict(out)
    if band is None:
        return out | {"status": "open", "reason": "no band [L, A] with L > 0 satisfies the invariance conditions at "
                      f"the sampled members (linear programme, least slack {slack})", "failed": "band"}
    L, A = band
    out["band"] = {"L": _frac(L), "A": _frac(A), "lp_slack": slack}
    a1 = (box["x"][0] * box["rho"][0], box["x"][1] * box["rho"][1])
    out["first_step"] = first_step(box)
    if not (0 < L <= a1[0] and a1[1] <= A):
        return out | {"status": "open", "failed": "first-step",
                      "reason": f"the first step alpha(1) = x rho in [{a1[0]}, {a1[1]}] is not inside [L, A] = [{L}, {A}]"}
    with arb_precision(PREC):
        todo = [f"{i}:" for i in reversed(range(W_PIECES))]
        done, checked = [], 0
        while todo:
            path = todo.pop()
            wl, wh, rl, rh = leaf_box(path, box)
            checked += 1
            bad = _check_box(wl, wh, box | {"rho": (rl, rh)}, L, A)
            if bad is None:
                done.append(path)
                continue
            # halve the side whose relative width is larger (rho relative to the cell's rho range)
            by_rho = (rh - rl) / (box["rho"][1] - box["rho"][0] or 1) > (wh - wl) * W_PIECES
            if max(wh - wl, (rh - rl) if by_rho else 0) <= MIN_WIDTH or checked >= max_boxes:
                return out | {"status": "open", "failed": bad, "boxes_checked": checked,
                              "reason": f"check {bad} fails on w = e^-delta in [{wl}, {wh}], rho in [{rl}, {rh}] "
                                        f"with the band [L, A] = [{L}, {A}]" + (
                                  " (box budget spent)" if checked >= max_boxes else " at the smallest box width")}
            todo += [path + ("R" if by_rho else "W"), path + ("r" if by_rho else "w")]
    out |= {"status": "certified", "leaves": done, "boxes_checked": checked,
            "reason": f"alpha(t) in [{L}, {A}] for every t >= 1 and every member: the first step lies in the band and "
                      f"the band x {{delta >= 0}} is invariant ({len(done)} boxes of (w, rho))"}
    return out


def region_b_volume(box: dict, region: dict = REGION_B) -> float:
    """The volume of a cell's part inside a region (default Region B), in (rho, x, log2 kappa) (the measure the
    decided fraction uses): the x range from max(x_lo, min(1, r), the region's x start when it has one) to
    min(x_hi, the region's x end), integrated over rho numerically."""
    rl, rh = (max(float(box["rho"][0]), float(region["rho"][0])), min(float(box["rho"][1]), float(region["rho"][1])))
    kl, kh = (max(float(box["kappa"][0]), float(region["kappa"][0])),
              min(float(box["kappa"][1]), float(region["kappa"][1])))
    if rh <= rl or kh <= kl:
        return 0.0
    n = 64
    tot = 0.0
    x_start = 0.0 if region["x"][0] is None else float(region["x"][0])
    x_end = float(region["x"][1])
    for i in range(n):
        rr = rl + (i + 0.5) * (rh - rl) / n
        lo = max(float(box["x"][0]), min(1.0, 1 / rr - 1), x_start)
        tot += max(0.0, min(float(box["x"][1]), x_end) - lo)
    return tot * (rh - rl) / n * (math.log2(kh) - math.log2(kl))


__all__ = ["VERSION", "FACES_BOX", "REGIONS", "REGION_B", "band_map", "choose_band", "decide_positivity", "delta_cap",
           "first_step", "in_hypotheses", "obligations", "region_b_volume", "result_skeleton", "small_step_edge"]
