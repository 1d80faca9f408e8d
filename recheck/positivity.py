"""An independent re-checker of Lemma C.2's cell results: ``python -m recheck.positivity FILE``.

It imports nothing from ``verify`` (python-flint and the standard library only) and states the map itself.
Reduced map of sigma = identity (two-valued columns, zero start), derived here by hand: with E = e^delta,
r = (D - K)/K, x = eta_V c_L v N/K, y = eta_KQ c_L v lambda^2 beta^2 ||V*||^2/K^2, one column of S has mass
p = E/(E + r) on the support and K ||s||^2 = q = (E^2 + r)/(E + r)^2, and the loss per unit prefactor is
l = (alpha^2 q - 2 alpha p + 1)/2. Gradient descent in W_X moves alpha by -x dl/dalpha, the logit gap by
-y (1 + r)/r dl/ddelta (the factor D/(D - K) of the two-valued logit gradient); in w = 1/E = e^-delta:

    p = 1/(1 + r w),   q = (r w^2 + 1)/(r w + 1)^2,
    alpha' = alpha - x (alpha q - p),
    inc = delta' - delta = y (1 + r) w/(2 r) d/dw (alpha^2 q - 2 alpha p)      (d/ddelta = -w d/dw)
        = y (1 + r) w alpha (alpha (w - 1) + 1 + r w)/(1 + r w)^3.

From (0, 0): alpha(1) = x p(1) = x/(1 + r) = x rho and inc = 0, so delta(1) = 0. Facts used, each checked here as
an exact identity of polynomials (flint's fmpq_mpoly): dq/dw = 2 r (w - 1)/(r w + 1)^3 <= 0 and
dq/dr = w (w - 2 - r w^2)/(r w + 1)^3 <= 0 on 0 <= w <= 1, r > 0 (q, and p = 1/(1 + r w), are decreasing in w and r:
their ranges over a box are at two corners); the closed form of inc; inc's coefficient of alpha^2 is
y (1 + r) w (w - 1)/(1 + r w)^3 <= 0 (concave in alpha: least at an end of [L, A]); alpha' is affine in alpha and x,
inc linear in y = kappa x.

Three kinds of invariant set (SETS; a result names its kind in "set", none is a band): the band [L, A] x
{delta >= 0}, the staircase set (below), and the ratio set {0 <= alpha <= gamma alpha*, delta >= 0} with
alpha* = p/q = (1 + r w)/(1 + r w^2)
(alpha' = alpha there; d alpha*/dw = r (1 - 2 w - r w^2)/(1 + r w^2)^2, so alpha* rises then falls in w and its
least value over an interval is at an end; d alpha*/dr = w (1 - w)/(1 + r w^2)^2 >= 0), whose leaves are boxes of
(w, rho, s), alpha = s gamma alpha*; for alpha >= 0 the sign of inc is that of 1 + r w - alpha (1 - w).
The staircase set ("stair") is {L_i <= alpha <= U_i where w lies in piece i}: the file states the pieces of w
(they must partition [0, 1] in order; a piece without ends is empty, and an image meeting it is refused; every
L_i > 0), leaves are boxes of (w, rho, s) of each non-empty piece, alpha = L_i + s (U_i - L_i), and a leaf's image
(alpha' free of y, so of kappa; inc = y g c with g = alpha w (1 + r)/(1 + r w)^3 >= 0 and c = 1 + r w - alpha (1 - w)
monotone in r, w and alpha) must keep delta >= 0 and lie in [L_j, U_j] of every piece j its w range meets.

Steps (the first failing one is named, exit 1): format, hypotheses (0 < rho < 1, 0 < x < 2, kappa > 0),
identities, first-step (band: L > 0 and x rho in [L, A] over the cell; ratio: x rho <= gamma = gamma alpha*(1);
staircase: x rho in the last piece's ends), cover (the leaves' paths partition [0, 1] x the rho range, x [0, 1] of s
for the ratio set; every non-empty piece x the rho range x [0, 1] of s for the staircase), invariance (every leaf
maps the set into itself, for the ratio set with alpha' > 0; a leaf that does not pass at once is bisected here up
to SPLITS, RATIO_SPLITS or STAIR_SPLITS times).
"""
from __future__ import annotations

import bisect
import json
import sys
from fractions import Fraction

from flint import arb, ctx, fmpq, fmpq_mpoly_ctx

VERSION = 1
SPLITS = 6            # bisections of a leaf this checker may make on its own
RATIO_SPLITS = 12     # ... for a ratio-set leaf (w, rho and s in turn: four each)
STAIR_SPLITS = 6      # ... for a staircase-set leaf (w, rho and s in turn: two each)
PREC = 128


class CheckFailed(Exception):
    """A step of the re-check failed: ``step`` names it."""

    def __init__(self, step: str, detail: str):
        self.step, self.detail = step, detail
        super().__init__(f"{step}: {detail}")


def _ball(q: Fraction) -> arb:
    return arb(fmpq(q.numerator, q.denominator))


def _hull(lo: Fraction, hi: Fraction) -> arb:
    return _ball(lo).union(_ball(hi))


def identities() -> None:
    """The facts the module docstring lists, as exact polynomial identities (denominators multiplied out)."""
    c = fmpq_mpoly_ctx.get(("r", "w", "a", "y"), "lex")
    r, w, a, y = c.gens()
    d = r * w + 1
    qn, qd = r * w**2 + 1, d**2                          # q = qn/qd
    checks = {
        "dq/dw": qn.derivative("w") * qd - qn * qd.derivative("w") == 2 * r * (w - 1) * d,
        "dq/dr": qn.derivative("r") * qd - qn * qd.derivative("r") == w * (w - 2 - r * w**2) * d,
    }
    # inc = y (1 + r) w/(2 r) d/dw (a^2 qn/qd - 2 a/d): with qd = d^2, d/dw (qn/d^2) = (qn' d - 2 qn r)/d^3 and
    # d/dw (1/d) = -r/d^2, so the derivative is
    # (a^2 (qn' d - 2 r qn) + 2 a r d)/d^3 and inc d^3 = y (1 + r) w (a^2 (qn' d - 2 r qn) + 2 a r d)/(2 r)
    lhs = y * (1 + r) * w * (a**2 * (qn.derivative("w") * d - 2 * r * qn) + 2 * a * r * d)
    rhs = 2 * r * (y * (1 + r) * w * a * (a * (w - 1) + 1 + r * w))
    checks["inc-closed-form"] = lhs == rhs
    # the coefficient of alpha^2 in inc d^3: y (1 + r) w (w - 1) (<= 0: concave in alpha)
    checks["inc-concave"] = (rhs - rhs.subs({"a": 0})).derivative("a").derivative("a") == 4 * r * y * (1 + r) * w * (w - 1)
    # the ratio set's alpha* = p/q = (1 + r w)/(1 + r w^2) (alpha' = alpha - x (alpha q - p) = alpha there):
    # d/dw = r (1 - 2 w - r w^2)/(1 + r w^2)^2 (rises then falls), d/dr = w (1 - w)/(1 + r w^2)^2 (>= 0 on w <= 1)
    an, ad = 1 + r * w, 1 + r * w**2
    checks["astar-fixed"] = an * qn == ad * d                    # (an/ad) q = 1/d = p, with q = qn/d^2
    checks["astar-dw"] = an.derivative("w") * ad - an * ad.derivative("w") == r * (1 - 2 * w - r * w**2)
    checks["astar-dr"] = an.derivative("r") * ad - an * ad.derivative("r") == w * (1 - w)
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise CheckFailed("identities", f"not identities: {bad}")


def _q(w_: Fraction, r_: Fraction) -> arb:
    W, R = _ball(w_), _ball(r_)
    return (R * W * W + 1) / ((R * W + 1) * (R * W + 1))


def _p(w_: Fraction, r_: Fraction) -> arb:
    return 1 / (_ball(r_) * _ball(w_) + 1)


def _leaf(path: str, pieces: int, rho: tuple, letters: str = "wWrR") -> tuple:
    """(wl, wh, rl, rh, sl, sh) of a leaf path: slice i of w, then halvings of w, rho and (ratio set) s in [0, 1]."""
    head, steps = path.split(":")
    i = int(head)
    if not 0 <= i < pieces or set(steps) - set(letters):
        raise CheckFailed("cover", f"malformed leaf path {path!r}")
    b = {"w": [Fraction(i, pieces), Fraction(i + 1, pieces)], "r": list(rho), "s": [Fraction(0), Fraction(1)]}
    for ch in steps:
        lo, hi = b[ch.lower()]
        m = (lo + hi) / 2
        b[ch.lower()] = [lo, m] if ch.islower() else [m, hi]
    return (*b["w"], *b["r"], *b["s"])


def _complete(paths: list, letters: str = "wWrR") -> bool:
    """The paths (suffixes after "i:") are the leaves of one full binary tree: the empty path alone, or every path
    continuing with the two halves of one coordinate, each side complete."""
    if paths == [""]:
        return True
    if not paths or "" in paths:
        return False
    firsts = {p[0] for p in paths}
    if firsts not in [{c, c.upper()} for c in letters if c.islower()]:
        return False
    return all(_complete([p[1:] for p in paths if p[0] == f], letters) for f in firsts)


def _box_ok(wl, wh, rl, rh, xs, ks, L, A) -> str | None:
    """None when the box maps [L, A] x {delta >= 0} into itself; else the failing check."""
    r_hi, r_lo = 1 / rl - 1, 1 / rh - 1               # r = 1/rho - 1 decreases in rho
    q_lo, q_hi = _q(wh, r_hi), _q(wl, r_lo)           # q decreasing in w and r
    p_lo, p_hi = _p(wh, r_hi), _p(wl, r_lo)
    Lb, Ab = _ball(L), _ball(A)
    for xx in xs:                                     # alpha' = alpha (1 - x q) + x p: affine in alpha and x
        X = _ball(xx)
        for a in (Lb, Ab):
            img = a - X * (a * q_lo.union(q_hi) - p_lo.union(p_hi))
            if not img.lower() >= Lb:
                return "alpha-lower"
            if not img.upper() <= Ab:
                return "alpha-upper"
    W = _hull(wl, wh)
    R = _hull(r_lo, r_hi)
    inc = None
    for a in (Lb, Ab):                                # concave in alpha: least at an end; linear in y
        for y in (_ball(xs[0] * ks[0]), _ball(xs[1] * ks[1])):
            v = y * (1 + R) * W * a * (a * (W - 1) + 1 + R * W) / ((1 + R * W) ** 3)
            inc = v if inc is None else inc.union(v)
    if not (inc.lower() >= 0 or (_ball(wh) * (-inc).exp()).upper() <= 1):
        return "delta-nonnegative"
    return None


def _invariant(leaf: tuple, xs, ks, L, A, depth: int = 0) -> str | None:
    bad = _box_ok(*leaf, xs, ks, L, A)
    if bad is None or depth >= SPLITS:
        return bad
    wl, wh, rl, rh = leaf
    halves = (((wl, (wl + wh) / 2, rl, rh), ((wl + wh) / 2, wh, rl, rh)) if depth % 2 == 0 else
              ((wl, wh, rl, (rl + rh) / 2), (wl, wh, (rl + rh) / 2, rh)))
    for h in halves:
        b = _invariant(h, xs, ks, L, A, depth + 1)
        if b is not None:
            return b
    return None


def _astar(w_, r_) -> arb:
    """alpha* = p/q = (1 + r w)/(1 + r w^2) on balls."""
    return (1 + r_ * w_) / (1 + r_ * w_ * w_)


def _ratio_box_ok(wl, wh, rl, rh, sl, sh, xs, ks, gamma) -> str | None:
    """None when every state alpha = s gamma alpha*, s in [sl, sh], of the box maps into the ratio set with
    alpha' > 0 and delta' >= 0; else the failing check ("positive", "delta", "upper")."""
    r_hi, r_lo = 1 / rl - 1, 1 / rh - 1
    R, W, G = _hull(r_lo, r_hi), _hull(wl, wh), _ball(gamma)
    # alpha* rises in r (d/dr = w (1 - w)/..^2) and rises then falls in w: least at an end of w with r = r_lo;
    # largest at an end of w with r = r_hi unless 1 - 2 w - r w^2 changes sign on the box (then the whole ball)
    lo = min((_astar(_ball(e), _ball(r_lo)) for e in (wl, wh)), key=lambda v: v.lower())
    hi = max((_astar(_ball(e), _ball(r_hi)) for e in (wl, wh)), key=lambda v: v.upper())
    g = [1 - 2 * _ball(e) - R * _ball(e) ** 2 for e in (wl, wh)]
    if not (all(v.lower() > 0 for v in g) or all(v.upper() < 0 for v in g)):
        hi = hi.union(_astar(W, R))
    a_lo, a_hi = _ball(sl) * G * lo, _ball(sh) * G * hi
    a = a_lo.union(a_hi)
    q = _q(wh, r_hi).union(_q(wl, r_lo))              # q, p decreasing in w and r
    p = _p(wh, r_hi).union(_p(wl, r_lo))
    img = []
    for xx in xs:
        X = _ball(xx)
        a1 = a * (1 - X * q) + X * p                 # alpha - x (alpha q - p), alpha once (no dependency)
        if not (a1.lower() > 0 or (X * q).upper() <= 1):      # x q <= 1: alpha' >= x p > 0 from alpha >= 0
            return "positive"
        img.append(a1)
    a1 = img[0].union(img[1])
    def inc_(y, al):                                  # the closed form (identities: "inc-closed-form")
        return y * (1 + R) * W * al * (al * (W - 1) + 1 + R * W) / ((1 + R * W) ** 3)
    inc = None
    for y in (_ball(xs[0] * ks[0]), _ball(xs[1] * ks[1])):
        v = inc_(y, a)                                # concave in alpha: least at an end of the alpha range
        low = min(inc_(y, a_lo).lower(), inc_(y, a_hi).lower())
        v = max(v.lower(), low).union(v.upper())
        inc = v if inc is None else inc.union(v)
    w1 = W * (-inc).exp()
    if not ((1 + R * W - a_hi * (1 - W)).lower() >= 0 or inc.lower() >= 0 or w1.upper() <= 1):
        return "delta"
    ends = (_ball(wl) * (-inc.upper()).exp(), _ball(wh) * (-inc.lower()).exp())
    least = min((_astar(e, R) for e in ends), key=lambda v: v.lower())
    if not (G * least.lower() - a1).lower() >= 0:
        return "upper"
    return None


def _split_check(ok, leaf: tuple, splits: int, depth: int = 0) -> str | None:
    """ok(leaf) (None or the failing check) on a leaf of three coordinate pairs, halving them in turn up to
    ``splits`` times where it fails: None when every piece passes, else the first failure."""
    bad = ok(leaf)
    if bad is None or depth >= splits:
        return bad
    k = depth % 3
    lo, hi = leaf[2 * k], leaf[2 * k + 1]
    m = (lo + hi) / 2
    for half in ((lo, m), (m, hi)):
        b = _split_check(ok, leaf[:2 * k] + half + leaf[2 * k + 2:], splits, depth + 1)
        if b is not None:
            return b
    return None


def _ratio_invariant(leaf: tuple, xs, ks, gamma) -> str | None:
    return _split_check(lambda lf: _ratio_box_ok(*lf, xs, ks, gamma), leaf, RATIO_SPLITS)


def _cover(leaves: list, pieces: int, rho: tuple, letters: str) -> None:
    by_slice: dict = {}
    for p in leaves:
        _leaf(p, pieces, rho, letters)
        head, tail = p.split(":")
        by_slice.setdefault(int(head), []).append(tail)
    if sorted(by_slice) != list(range(pieces)) or not all(_complete(v, letters) for v in by_slice.values()):
        raise CheckFailed("cover", "the leaves do not partition the cell's boxes" + (
            " ([0, 1] of w x the rho range)" if letters == "wWrR" else " ([0, 1] of w x the rho range x [0, 1] of s)"))


def _band(res: dict, cell: dict, pieces: int, leaves: list, steps: list) -> None:
    """The band [L, A] x {delta >= 0}: first step, cover, invariance."""
    try:
        L, A = Fraction(res["band"]["L"]), Fraction(res["band"]["A"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise CheckFailed("format", f"unreadable field: {exc}") from None
    (xl, xh), (kl, kh) = cell["x"], cell["kappa"]
    rl, rh = cell["rho"]
    if not (0 < L <= xl * rl and xh * rh <= A):
        raise CheckFailed("first-step", f"alpha(1) = x rho in [{xl * rl}, {xh * rh}] is not inside [L, A] = [{L}, {A}] "
                          "with L > 0")
    steps.append("first-step")
    _cover(leaves, pieces, cell["rho"], "wWrR")
    steps.append("cover")
    for p in leaves:
        lf = _leaf(p, pieces, cell["rho"])[:4]
        bad = _invariant(lf, (xl, xh), (kl, kh), L, A)
        if bad is not None:
            raise CheckFailed("invariance", f"leaf {p} (w in [{lf[0]}, {lf[1]}], rho in [{lf[2]}, {lf[3]}]): "
                              f"check {bad} fails with [L, A] = [{L}, {A}]")
    steps.append("invariance")


def _ratio(res: dict, cell: dict, pieces: int, leaves: list, steps: list) -> None:
    """The ratio set {0 <= alpha <= gamma alpha*, delta >= 0}: first step, cover, invariance (alpha' > 0 included)."""
    try:
        gamma = Fraction(res["gamma"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise CheckFailed("format", f"unreadable field: {exc}") from None
    (xl, xh), (kl, kh) = cell["x"], cell["kappa"]
    # alpha(1) = x rho > 0 at w = 1, where alpha* = (1 + r)/(1 + r) = 1
    if not (0 < gamma and xh * cell["rho"][1] <= gamma):
        raise CheckFailed("first-step", f"alpha(1) = x rho <= {xh * cell['rho'][1]} is not inside [0, gamma alpha*(1)] "
                          f"= [0, {gamma}]")
    steps.append("first-step")
    _cover(leaves, pieces, cell["rho"], "wWrRsS")
    steps.append("cover")
    for p in leaves:
        lf = _leaf(p, pieces, cell["rho"], "wWrRsS")
        bad = _ratio_invariant(lf, (xl, xh), (kl, kh), gamma)
        if bad is not None:
            raise CheckFailed("invariance", f"leaf {p} (w in [{lf[0]}, {lf[1]}], rho in [{lf[2]}, {lf[3]}], s in "
                              f"[{lf[4]}, {lf[5]}]): check {bad} fails with alpha <= {gamma} alpha*")
    steps.append("invariance")


# ----- the threshold set, in the chart (v, w, p) regular at rho = 0 ---------------------------------------------------
# With w = e^-delta (as above), v = rho/(rho + w) (= 1/(1 + omega), omega = w/rho) and p = alpha v, so rho = v w/(1 - v)
# and r = 1/rho - 1 = R/(v w) with R = 1 - v - v w. Then 1 + r w = (R + v)/v = (1 - v w)/v and r w^2 + 1 =
# (R w + v)/v, so
#   q = v (v + w (1 - v) - w^2 v)/(1 - v w)^2,   p_mass = v/(1 - v w),   P := alpha' v = (1 - x q) p + x v p_mass,
#   inc = y (1 + r) w alpha (alpha (w - 1) + 1 + r w)/(1 + r w)^3 = kappa x h,  h = p (1 - v)((1 - v w) - p (1 - w))/(1 - v w)^3
# (1 + r = (1 - v)/(v w)); the step w' = w E (E = e^-inc) at fixed rho gives v' = v/(v + (1 - v) E) and p' = P v'/v.
# The set: 0 <= alpha <= min(gamma T, c A(rho)) with T = (1 + r w)/(1 - w) (inc > 0 exactly below it: the sign of
# 1 + r w - alpha (1 - w)), A(rho) = (1 + sqrt(rho))/(2 sqrt(rho)) = the maximum of alpha* = (1 + r w)/(1 + r w^2)
# over w, and c = a_factor >= 1. In (v, w, p): gamma T v = gamma (1 - v w)/(1 - w) (rising in w, falling in v) and
# A v = v/2 + sqrt(v (1 - v)/w)/2. Invariance, each state of S mapped into S:
#   alpha' <= c A: alpha' - alpha* = (1 - x q)(alpha - alpha*) (alpha* is fixed), so where x q <= 1 alpha' lies between
#     alpha and alpha* <= A <= c A (no check needed); elsewhere P/v <= c A(rho_hi of the box) (A falls in rho);
#   alpha' > 0: alpha' >= x p_mass > 0 where x q <= 1; elsewhere P > 0;
#   w' <= 1: inc >= 0 where (1 - v w) - p (1 - w) >= 0; elsewhere w_hi e^-inc_lo <= 1;
#   alpha' <= gamma T': times v + (1 - v) E > 0 it is gamma v + gamma E (1 - v - v w) - P (1 - E w) >= 0, affine in E.
THRESHOLD_SPLITS = 9  # bisections of a threshold-set leaf this checker may make (v, w and p in turn: three each)


def threshold_identities(c: Fraction) -> None:
    """The threshold set's facts above as exact polynomial identities, and c >= 1."""
    if not c >= 1:
        raise CheckFailed("identities", f"a_factor = {c} < 1: c A(rho) lies below the maximum A(rho) of alpha*, so "
                                        "alpha' <= c A does not follow where x q <= 1")
    m = fmpq_mpoly_ctx.get(("v", "w", "p", "E", "P", "g", "t"), "lex")
    v, w, p, E, P, g, t = m.gens()
    R, den = 1 - v - v * w, 1 - v * w
    D = v + (1 - v) * E
    checks = {
        "vwp-1+rw": R + v == den, "vwp-1+r": R + v * w == 1 - v,
        # q = (r w^2 + 1)/(r w + 1)^2 = v (R w + v)/(R + v)^2 and the stated numerator
        "vwp-q": R * w + v == v + w * (1 - v) - w * w * v,
        # (gamma (1 - v' w') - p' (1 - w')) D with v' = v/D, w' = w E, p' = P/D
        "threshold-slack": g * (D - v * w * E) - P * (1 - w * E) == g * v + g * E * (1 - v - v * w) - P * (1 - E * w),
        # d/dw (1 - v w)/(1 - w): numerator of the derivative
        "g-dw": -v * (1 - w) + den == 1 - v,
        # A - alpha* with rho = t^2, alpha* = (t^2 + (1 - t^2) w)/(t^2 + (1 - t^2) w^2): (1 + t) Dn - 2 t Nn over 2 t Dn
        "A-max": (1 + t) * (t * t + (1 - t * t) * w * w) - 2 * t * (t * t + (1 - t * t) * w)
        == (1 - t) * (w - t + t * w) ** 2,
        # h den^3 = p (1 - v)(den - p (1 - w)): its coefficient of p^2 is -(1 - v)(1 - w) <= 0 (concave in p)
        "h-concave": (p * (1 - v) * (den - p * (1 - w))).derivative("p").derivative("p") == -2 * (1 - v) * (1 - w),
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise CheckFailed("identities", f"not identities: {bad}")


def _A_ball(r_: Fraction) -> arb:
    t = _ball(r_).sqrt()
    return (1 + t) / (2 * t)


def _threshold_box_ok(leaf: tuple, cell: dict, gamma: Fraction, c: Fraction) -> str | None:
    """None when every state of the set in the box maps into it with alpha' > 0 (or the box holds none)."""
    vl, vh, wl, wh, pl, ph = leaf
    (rl, rh), (xl, xh), (kl, kh) = cell["rho"], cell["x"], cell["kappa"]
    if vl > 0:
        wh = min(wh, rh * (1 - vl) / vl)               # rho = v w/(1 - v) <= rho_hi
    if rl > 0:
        wl = max(wl, rl * (1 - vh) / vh)
    if wl > wh:
        return None
    r_lo = max(rl, vl * wl / (1 - vl))
    r_hi = min(rh, vh * wh / (1 - vh)) if vh < 1 else rh
    V, W, G, C = _hull(vl, vh), _hull(wl, wh), _ball(gamma), _ball(c)
    ups = []
    if wh < 1:
        ups.append(G * (1 - _ball(vl) * _ball(wh)) / (1 - _ball(wh)))
    if r_lo > 0:
        ups.append(C * _A_ball(r_lo) * _ball(vh))
    if wl > 0:
        ups.append(C * (_ball(vh) / 2 + (_ball(vh * (1 - vl)) / _ball(wl)).sqrt() / 2))
    cap = min((u.upper() for u in ups), default=None)
    if ph == THRESHOLD_P_ROOT and not (cap is not None and cap <= _ball(ph)):
        return "cap"
    if cap is not None and _ball(pl) > cap:
        return None
    p_hi = cap if cap is not None and cap < _ball(ph) else _ball(ph)
    p_lo = _ball(pl)
    pp = p_lo.union(p_hi)
    den = 1 - V * W
    q = V * (V + W * (1 - V) - W * W * V) / (den * den)
    Ps = [pp * (1 - _ball(xx) * q) + _ball(xx) * V * V / den for xx in (xl, xh)]
    Pb = Ps[0].union(Ps[1])
    if not (_ball(xh) * q).upper() <= 1:
        if not Pb.lower() > 0:
            return "positive"
        if not (Pb / V).upper() <= (C * _A_ball(r_hi)).lower():
            return "A"

    def h(pv):
        return pv * (1 - V) * (den - pv * (1 - W)) / (den * den * den)
    hb = h(pp)
    h_lo = max(min(h(p_lo).lower(), h(p_hi).lower()), hb.lower())
    ys = (_ball(kl * xl), _ball(kh * xh))
    inc_lo = min((y * h_lo).lower() for y in ys)
    inc_hi = max((y * hb.upper()).upper() for y in ys)
    if not ((den - p_hi * (1 - W)).lower() >= 0 or (_ball(wh) * (-inc_lo).exp()).upper() <= 1):
        return "delta"
    for e in ((-inc_hi).exp(), (-inc_lo).exp()):
        if not (G * V + G * e * (1 - V - V * W) - Pb * (1 - e * W)).lower() > 0:
            return "threshold"
    return None


THRESHOLD_P_ROOT = Fraction(4)   # the leaves cover p in [0, 4]; "cap" checks that S has no p above it


def _threshold_leaf(path: str, pieces: int) -> tuple:
    head, steps = path.split(":")
    i = int(head)
    if not 0 <= i < pieces or set(steps) - set("vVwWpP"):
        raise CheckFailed("cover", f"malformed leaf path {path!r}")
    b = {"v": [Fraction(0), Fraction(1)], "w": [Fraction(i, pieces), Fraction(i + 1, pieces)],
         "p": [Fraction(0), THRESHOLD_P_ROOT]}
    for ch in steps:
        lo, hi = b[ch.lower()]
        m = (lo + hi) / 2
        b[ch.lower()] = [lo, m] if ch.islower() else [m, hi]
    return (*b["v"], *b["w"], *b["p"])


def _threshold_invariant(leaf: tuple, cell: dict, gamma, c) -> str | None:
    return _split_check(lambda lf: _threshold_box_ok(lf, cell, gamma, c), leaf, THRESHOLD_SPLITS)


def _threshold(res: dict, cell: dict, pieces: int, leaves: list, steps: list) -> None:
    """The threshold set {0 <= alpha <= min(gamma T, c A(rho)), delta >= 0}: identities, first step, cover (boxes of
    [0, 1] of v x slices of w x [0, 4] of p), invariance."""
    try:
        gamma, c = Fraction(res["gamma"]), Fraction(res["a_factor"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise CheckFailed("format", f"unreadable field: {exc}") from None
    threshold_identities(c)
    (xl, xh), rh = cell["x"], cell["rho"][1]
    # alpha(1) = x rho at w = 1 (T = +oo there): x rho <= c A(rho), x rho rising and A falling in rho
    if not (0 < gamma and _ball(xh * rh) < _ball(c) * _A_ball(rh)):
        raise CheckFailed("first-step", f"alpha(1) = x rho <= {xh * rh} is not below c A(rho_hi) = {c} A({rh})")
    steps.append("first-step")
    by_slice: dict = {}
    for pth in leaves:
        _threshold_leaf(pth, pieces)
        head, tail = pth.split(":")
        by_slice.setdefault(int(head), []).append(tail)
    if sorted(by_slice) != list(range(pieces)) or not all(_complete(t, "vwp") for t in by_slice.values()):
        raise CheckFailed("cover", "the leaves do not partition [0, 1] of v x [0, 1] of w x [0, 4] of p")
    steps.append("cover")
    for pth in leaves:
        lf = _threshold_leaf(pth, pieces)
        bad = _threshold_invariant(lf, cell, gamma, c)
        if bad is not None:
            raise CheckFailed("invariance", f"leaf {pth} (v in [{lf[0]}, {lf[1]}], w in [{lf[2]}, {lf[3]}], p in "
                              f"[{lf[4]}, {lf[5]}]): check {bad} fails with alpha <= min({gamma} T, {c} A)")
    steps.append("invariance")


def _frac_of(exact_ball: arb) -> Fraction:
    """The exact value of a radius-0 ball (an arb's lower() or upper())."""
    m, e = exact_ball.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def _stair_box_ok(leaf: tuple, table: list, xs, ks) -> str | None:
    """None when every state of the leaf (piece i, w in [wl, wh], rho in [rl, rh], alpha = L_i + s (U_i - L_i) for s
    in [sl, sh]) maps with delta' >= 0 to alpha' in [L_j, U_j] of every piece j its image's w range meets; else the
    failing check ("delta", "empty", "lower", "upper")."""
    i, wl, wh, rl, rh, sl, sh = leaf
    L, U = table[i][2], table[i][3]
    r_hi, r_lo = 1 / rl - 1, 1 / rh - 1
    R, W = _hull(r_lo, r_hi), _hull(wl, wh)
    a_lo, a_hi = _ball(L + sl * (U - L)), _ball(L + sh * (U - L))
    a = a_lo.union(a_hi)
    q = _q(wh, r_hi).union(_q(wl, r_lo))              # q, p decreasing in w and r
    p = _p(wh, r_hi).union(_p(wl, r_lo))
    # alpha' = alpha - x (alpha q - p): affine in x, free of y (so of kappa)
    a1 = None
    for xx in xs:
        X = _ball(xx)
        v = a * (1 - X * q) + X * p
        a1 = v if a1 is None else a1.union(v)

    # inc = y g c (the closed form, "inc-closed-form"): g = alpha w (1 + r)/(1 + r w)^3 >= 0 and the factor
    # c = 1 + r w - alpha (1 - w), which rises in r (by w) and in w (by r + alpha) and falls in alpha (by 1 - w >= 0):
    # its range has exact ends at two corners
    cl = 1 + r_lo * wl - (L + sh * (U - L)) * (1 - wl)
    ch = 1 + r_hi * wh - (L + sl * (U - L)) * (1 - wh)
    g = a * W * (1 + R) / ((1 + R * W) ** 3)
    g_lo, g_hi = max(g.lower(), arb(0)), g.upper()
    if cl >= 0:
        h = (g_lo * _ball(cl)).union(g_hi * _ball(ch))
    elif ch <= 0:
        h = (g_hi * _ball(cl)).union(g_lo * _ball(ch))
    else:
        h = (g_hi * _ball(cl)).union(g_hi * _ball(ch))
    inc = (_ball(xs[0] * ks[0]) * h).union(_ball(xs[1] * ks[1]) * h)     # y = kappa x > 0, inc linear in y
    w_hi = _ball(wh) * (-inc.lower()).exp()
    if not (inc.lower() >= 0 or w_hi.upper() <= 1):
        return "delta"
    w_lo = _ball(wl) * (-inc.upper()).exp()
    lo_q, hi_q = _frac_of(w_lo.lower()), _frac_of(w_hi.upper())
    # the pieces met: t[1] >= lo_q and t[0] <= hi_q (ends sorted, so by bisection; a shared end counts for both)
    ends = [t[0] for t in table] + [table[-1][1]]
    j0 = max(bisect.bisect_left(ends, lo_q) - 1, 0)
    j1 = min(bisect.bisect_right(ends, hi_q) - 1, len(table) - 1)
    met = [t for t in table[j0:j1 + 1] if t[0] <= hi_q and t[1] >= lo_q]
    if any(t[2] is None for t in met):
        return "empty"
    if not a1.lower() >= _ball(max(t[2] for t in met)):
        return "lower"
    if not a1.upper() <= _ball(min(t[3] for t in met)):
        return "upper"
    return None


def _stair_invariant(leaf: tuple, table: list, xs, ks) -> str | None:
    i = leaf[0]                                       # the piece; its (w, rho, s) halved in turn
    return _split_check(lambda lf: _stair_box_ok((i, *lf), table, xs, ks), leaf[1:], STAIR_SPLITS)


def _stair(res: dict, cell: dict, pieces: int, leaves: list, steps: list) -> None:
    """The staircase set: alpha in [L_i, U_i] where w = e^-delta lies in piece i (pieces partition [0, 1], an empty
    piece has no ends, L_i > 0): first step, cover, invariance."""
    try:
        table = [(Fraction(a), Fraction(b), None if lo is None else Fraction(lo), None if hi is None else Fraction(hi))
                 for a, b, lo, hi in res["pieces"]]
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise CheckFailed("format", f"unreadable field: {exc}") from None
    if len(table) != pieces or not table:
        raise CheckFailed("format", f"{len(table)} pieces stated, w_pieces = {pieces}")
    if table[0][0] != 0 or table[-1][1] != 1 or any(a[1] != b[0] for a, b in zip(table, table[1:])) \
            or any(not t[0] < t[1] for t in table):
        raise CheckFailed("cover", "the pieces of w do not partition [0, 1] in order")
    if any((t[2] is None) != (t[3] is None) or (t[2] is not None and not 0 < t[2] <= t[3]) for t in table):
        raise CheckFailed("format", "a piece's ends must satisfy 0 < L <= U (or both be empty)")
    (xl, xh), (kl, kh), (rl, rh) = cell["x"], cell["kappa"], cell["rho"]
    last = table[-1]                                  # alpha(1) = x rho at w = 1 (delta(1) = 0)
    if last[2] is None or not (last[2] <= xl * rl and xh * rh <= last[3]):
        raise CheckFailed("first-step", f"alpha(1) = x rho in [{xl * rl}, {xh * rh}] is not inside the last piece's "
                          f"ends [{last[2]}, {last[3]}]")
    steps.append("first-step")
    by_piece: dict = {}
    for p_ in leaves:
        head, tail = p_.split(":")
        if not head.isdigit() or not 0 <= int(head) < pieces or table[int(head)][2] is None \
                or set(tail) - set("wWrRsS"):
            raise CheckFailed("cover", f"malformed leaf path {p_!r}")
        by_piece.setdefault(int(head), []).append(tail)
    full = [i for i, t in enumerate(table) if t[2] is not None]
    if sorted(by_piece) != full or not all(_complete(v, "wWrRsS") for v in by_piece.values()):
        raise CheckFailed("cover", "the leaves do not partition every non-empty piece's box (w x rho x [0, 1] of s)")
    steps.append("cover")
    for p_ in leaves:
        head, tail = p_.split(":")
        i = int(head)
        b = {"w": list(table[i][:2]), "r": [rl, rh], "s": [Fraction(0), Fraction(1)]}
        for ch in tail:
            lo, hi = b[ch.lower()]
            m = (lo + hi) / 2
            b[ch.lower()] = [lo, m] if ch.islower() else [m, hi]
        leaf = (i, *b["w"], *b["r"], *b["s"])
        bad = _stair_invariant(leaf, table, (xl, xh), (kl, kh))
        if bad is not None:
            raise CheckFailed("invariance", f"leaf {p_} (w in [{leaf[1]}, {leaf[2]}], rho in [{leaf[3]}, {leaf[4]}], "
                              f"s in [{leaf[5]}, {leaf[6]}]): check {bad} fails for the staircase set")
    steps.append("invariance")


# The invariant sets a stored result may name (its "set"; results without one are bands): one entry per kind,
# (re-check, what a certified result says about alpha(t)).
SETS = {"band": (_band, lambda res: f"alpha(t) in [{res['band']['L']}, {res['band']['A']}]"),
        "ratio": (_ratio, lambda res: f"0 < alpha(t) <= {res['gamma']} alpha*(delta(t))"),
        "threshold": (_threshold, lambda res: f"0 < alpha(t) <= min({res['gamma']} T(delta(t)), {res['a_factor']} "
                                              "A(rho))"),
        "stair": (_stair, lambda res: "alpha(t) in [L_i, U_i] of the piece of e^-delta(t) it lies in, min L_i = "
                  f"{min(Fraction(p[2]) for p in res['pieces'] if p[2] is not None)}")}
# The kinds whose chart is regular at rho = 0: only their cells may start at rho = 0 (members 0 < rho <= rho_hi).
RHO_ZERO = ("threshold",)


def describe(res: dict) -> str:
    """What a certified cell result says about alpha(t), t >= 1, in words (its set's)."""
    return SETS[res.get("set", "band")][1](res)


def recheck(res: dict) -> dict:
    """Re-verify one stored cell result; returns {"status": "passed", "steps": [...]} or raises CheckFailed."""
    steps = []
    if res.get("version") != VERSION or res.get("status") != "certified":
        raise CheckFailed("format", f"expected a certified result of version {VERSION}, got version "
                          f"{res.get('version')!r}, status {res.get('status')!r}")
    kind = res.get("set", "band")
    if kind not in SETS:
        raise CheckFailed("format", f"unknown invariant set {kind!r} (this checker knows {', '.join(SETS)})")
    try:
        cell = {n: tuple(Fraction(v) for v in res["cell"][n]) for n in ("rho", "x", "kappa")}
        pieces, leaves = int(res["w_pieces"]), list(res["leaves"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise CheckFailed("format", f"unreadable field: {exc}") from None
    steps.append("format")
    (rl, rh), (xl, xh), (kl, kh) = cell["rho"], cell["x"], cell["kappa"]
    # a cell [0, rho_hi] is its members 0 < rho <= rho_hi, for a kind whose chart is regular at rho = 0
    if not ((0 < rl or (rl == 0 and kind in RHO_ZERO)) and rl <= rh < 1 and 0 < rh and 0 < xl <= xh < 2
            and 0 < kl <= kh):
        raise CheckFailed("hypotheses", f"cell {res['cell']} leaves 0 < rho < 1, 0 < x < 2, kappa > 0")
    steps.append("hypotheses")
    identities()
    steps.append("identities")
    old = ctx.prec
    ctx.prec = PREC
    try:
        SETS[kind][0](res, cell, pieces, leaves, steps)
    finally:
        ctx.prec = old
    return {"status": "passed", "steps": steps}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m recheck.positivity FILE", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        data = json.load(fh)
    cells = [c for c in data.get("cells", [data]) if c.get("status") == "certified"]
    try:
        for c in cells:
            recheck(c)
    except CheckFailed as exc:
        print(f"refused: {exc}")
        return 1
    print(f"passed: {len(cells)} certified cells re-checked (steps: format, hypotheses, identities, first-step, "
          "cover, invariance)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
