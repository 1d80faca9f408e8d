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

Steps (the first failing one is named, exit 1): format, hypotheses (0 < rho < 1, 0 < x < 2, kappa > 0),
identities, first-step (L > 0 and x rho in [L, A] over the cell), cover (the leaves' paths partition [0, 1] x the
rho range), invariance (every leaf maps [L, A] x {delta >= 0} into itself; a leaf that does not pass at once is
bisected here up to SPLITS times).
"""
from __future__ import annotations

import json
import sys
from fractions import Fraction

from flint import arb, ctx, fmpq, fmpq_mpoly_ctx

VERSION = 1
SPLITS = 6            # bisections of a leaf this checker may make on its own
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
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise CheckFailed("identities", f"not identities: {bad}")


def _q(w_: Fraction, r_: Fraction) -> arb:
    W, R = _ball(w_), _ball(r_)
    return (R * W * W + 1) / ((R * W + 1) * (R * W + 1))


def _p(w_: Fraction, r_: Fraction) -> arb:
    return 1 / (_ball(r_) * _ball(w_) + 1)


def _leaf(path: str, pieces: int, rho: tuple) -> tuple:
    head, steps = path.split(":")
    i = int(head)
    if not 0 <= i < pieces or set(steps) - set("wWrR"):
        raise CheckFailed("cover", f"malformed leaf path {path!r}")
    wl, wh = Fraction(i, pieces), Fraction(i + 1, pieces)
    rl, rh = rho
    for ch in steps:
        if ch in "wW":
            m = (wl + wh) / 2
            wl, wh = (wl, m) if ch == "w" else (m, wh)
        else:
            m = (rl + rh) / 2
            rl, rh = (rl, m) if ch == "r" else (m, rh)
    return wl, wh, rl, rh


def _complete(paths: list) -> bool:
    """The paths (suffixes after "i:") are the leaves of one full binary tree: the empty path alone, or every path
    continuing with the two halves of one coordinate, each side complete."""
    if paths == [""]:
        return True
    if not paths or "" in paths:
        return False
    firsts = {p[0] for p in paths}
    if firsts not in ({"w", "W"}, {"r", "R"}):
        return False
    return all(_complete([p[1:] for p in paths if p[0] == f]) for f in firsts)


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


def recheck(res: dict) -> dict:
    """Re-verify one stored cell result; returns {"status": "passed", "steps": [...]} or raises CheckFailed."""
    steps = []
    if res.get("version") != VERSION or res.get("status") != "certified":
        raise CheckFailed("format", f"expected a certified result of version {VERSION}, got version "
                          f"{res.get('version')!r}, status {res.get('status')!r}")
    try:
        cell = {n: tuple(Fraction(v) for v in res["cell"][n]) for n in ("rho", "x", "kappa")}
        L, A = Fraction(res["band"]["L"]), Fraction(res["band"]["A"])
        pieces, leaves = int(res["w_pieces"]), list(res["leaves"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise CheckFailed("format", f"unreadable field: {exc}") from None
    steps.append("format")
    (rl, rh), (xl, xh), (kl, kh) = cell["rho"], cell["x"], cell["kappa"]
    if not (0 < rl <= rh < 1 and 0 < xl <= xh < 2 and 0 < kl <= kh):
        raise CheckFailed("hypotheses", f"cell {res['cell']} leaves 0 < rho < 1, 0 < x < 2, kappa > 0")
    steps.append("hypotheses")
    identities()
    steps.append("identities")
    if not (0 < L <= xl * rl and xh * rh <= A):
        raise CheckFailed("first-step", f"alpha(1) = x rho in [{xl * rl}, {xh * rh}] is not inside [L, A] = [{L}, {A}] "
                          "with L > 0")
    steps.append("first-step")
    by_slice: dict = {}
    for p in leaves:
        _leaf(p, pieces, cell["rho"])
        head, tail = p.split(":")
        by_slice.setdefault(int(head), []).append(tail)
    if sorted(by_slice) != list(range(pieces)) or not all(_complete(v) for v in by_slice.values()):
        raise CheckFailed("cover", "the leaves do not partition [0, 1] x the cell's rho range")
    steps.append("cover")
    old = ctx.prec
    ctx.prec = PREC
    try:
        for p in leaves:
            bad = _invariant(_leaf(p, pieces, cell["rho"]), (xl, xh), (kl, kh), L, A)
            if bad is not None:
                lf = _leaf(p, pieces, cell["rho"])
                raise CheckFailed("invariance", f"leaf {p} (w in [{lf[0]}, {lf[1]}], rho in [{lf[2]}, {lf[3]}]): "
                                  f"check {bad} fails with [L, A] = [{L}, {A}]")
    finally:
        ctx.prec = old
    steps.append("invariance")
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
