"""An Arb probe of the set S_gamma = {0 <= alpha <= gamma alpha*(omega, rho), rho omega <= 1} over a cell of
(rho, x, kappa) that may contain rho = 0: where its invariance checks fail, not a certificate.

Chart (verify.certify.positivity_chart): v = 1/(1 + omega) in (0, 1] (v -> 0 is omega -> oo, reached only at
rho -> 0; delta >= 0 is rho (1 - v) <= v), the state alpha = s gamma alpha* with s in [0, 1]. In v the closed forms
(proved equal to the generated map: obligation "omega-chart") read

    a = (v^2 + rho (1 - rho) (1 - v)^2)/(v + (1 - rho)(1 - v))^2,     b = x v/(v + (1 - rho)(1 - v)),
    alpha* = v (v + (1 - rho)(1 - v))/(v^2 + rho (1 - rho)(1 - v)^2),      v' = v/(v + (1 - v) e^-inc),

all regular except alpha* at the corner (v, rho) = (0, 0), where it is 0/0 (alpha* ~ 1/(v + rho omega)). A box of
(s, v, rho, x, kappa) passes when, in Arb, every state of it maps into S_gamma: "upper" gamma alpha*(v', rho) -
alpha' >= 0; "positive" alpha' > 0, or x a <= 1 (then alpha' >= b > 0 from alpha >= 0); "delta" inc >= 0 or
v' - rho (1 - v') >= 0. Boxes wholly outside rho (1 - v) <= v are dropped; a failing box is bisected across its
(s, v, rho, x, kappa) sides in turn down to ``min_width`` or until the budget is spent, and the probe reports the
first box it could not pass (its condition and place) with the counts.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.invariants import x
from ..model.precision import arb_precision
from ..model.symbols import alpha
from .arbfun import ball, exact, lambdify_arb
from .positivity import kappa, rho
from .positivity_chart import ASTAR, CLOSED, omega

v = sp.Symbol("v", positive=True)                    # 1/(1 + omega)
SIDES = ("s", "v", "rho", "x", "kappa")
PREC = 128


def in_v(e):
    """An expression in omega written in v = 1/(1 + omega), cancelled (regular at v = 0 where it can be)."""
    return sp.factor(sp.cancel(sp.together(e.subs(omega, (1 - v) / v))))


@lru_cache(maxsize=None)
def _parts():
    return (lambdify_arb((v, rho), in_v(CLOSED["a"])), lambdify_arb((v, rho, x), in_v(CLOSED["b"])),
            lambdify_arb((v, rho), in_v(ASTAR)), lambdify_arb((alpha, v, rho, x, kappa), in_v(CLOSED["inc"])))


def check_box(gamma: Fraction, b: dict) -> str | None:
    """The first condition that fails on the box b = {side: (lo, hi)} (None: every state maps into S_gamma)."""
    a_, b_, astar_, inc_ = _parts()
    S, V, R, X, K = (ball(*b[n]) for n in SIDES)
    G = exact(gamma)
    ast = astar_(V, R)
    al = S * G * ast
    a = a_(V, R)
    al1 = (1 - X * a) * al + b_(V, R, X)
    inc = inc_(al, V, R, X, K)
    v1 = V / (V + (1 - V) * (-inc).exp())
    if not (al1.lower() > 0 or (X * a).upper() <= 1):
        return "positive"
    if not (inc.lower() >= 0 or (v1 - R * (1 - v1)).lower() >= 0):
        return "delta"
    if not (G * astar_(v1, R) - al1).lower() >= 0:
        return "upper"
    return None


def _outside(b: dict) -> bool:
    """The box holds no state with rho (1 - v) <= v (delta >= 0)."""
    return b["rho"][0] * (1 - b["v"][1]) > b["v"][1]


def probe(gamma, cell: dict, *, v_pieces: int = 16, min_width: Fraction = Fraction(1, 2**12),
          max_boxes: int = 20000) -> dict:
    """Bisect (s, v, rho, x, kappa) over the cell {"rho": (lo, hi), "x": .., "kappa": ..} until every box passes or
    one cannot (module docstring). Returns {"passed": bool, "boxes": checked, "dropped": outside delta >= 0,
    "failed": condition, "at": the box} (the first failure at the smallest width or when the budget ran out)."""
    gamma = Fraction(gamma)
    root = {n: tuple(Fraction(t) for t in cell[n]) for n in ("rho", "x", "kappa")} | {"s": (Fraction(0), Fraction(1))}
    todo = [root | {"v": (Fraction(i, v_pieces), Fraction(i + 1, v_pieces))} for i in range(v_pieces)]
    todo = [(b, 0) for b in todo]
    checked = dropped = 0
    with arb_precision(PREC):
        while todo:
            b, depth = todo.pop()
            if _outside(b):
                dropped += 1
                continue
            checked += 1
            bad = check_box(gamma, b)
            if bad is None:
                continue
            # the next side in turn that is still wider than min_width (relative to its root range)
            for k in range(len(SIDES)):
                side = SIDES[(depth + k) % len(SIDES)]
                lo, hi = b[side]
                rl, rh = root[side] if side != "v" else (Fraction(0), Fraction(1))
                if rh > rl and (hi - lo) / (rh - rl) > min_width:
                    break
            else:
                side = None
            if side is None or checked >= max_boxes:
                return {"passed": False, "boxes": checked, "dropped": dropped, "failed": bad,
                        "budget_spent": checked >= max_boxes,
                        "at": {n: [float(t) for t in b[n]] for n in SIDES}}
            lo, hi = b[side]
            m = (lo + hi) / 2
            todo += [(b | {side: (m, hi)}, depth + 1), (b | {side: (lo, m)}, depth + 1)]
    return {"passed": True, "boxes": checked, "dropped": dropped}


__all__ = ["check_box", "in_v", "probe"]
