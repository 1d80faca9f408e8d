"""A counterexample search for Lemma C.2 in the cells Region B left open (verify.certify.region_b).

Members of a cell are drawn by Hypothesis (rationals in the cell's box of (rho, x, kappa)); each is iterated with the
generated invariant map (verify.derive.invariants, compiled to float64) for ``horizon`` steps from (0, 0), and a
member with some alpha(t) <= 0 (t >= 1) is replayed as the toolkit replays refutations: the same member at 40 digits
(mpmath) over REPLAY_FACTOR times the horizon (verify.evidence.REPLAY_FACTOR); it counts only if alpha <= 0 occurs
there too, at the same step. A found counterexample is a member inside the hypotheses (0 < rho < 1, 0 < x < 2)
with its replay.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import mpmath
import sympy as sp
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.errors import Unsatisfiable

from ..derive.invariants import invariant_map, r, x, y
from ..evidence import REPLAY_FACTOR
from ..model.precision import mpmath_precision
from ..model.symbols import alpha, delta

NAMES = ("rho", "x", "kappa")
DPS = 40


@lru_cache(maxsize=None)
def _map(backend: str):
    m = invariant_map()
    return sp.lambdify((alpha, delta, r, x, y), (m.a_next, m.inc), backend)


def members(cell: dict):
    """Members of a cell: rationals in each coordinate's range (ends included), rho > 0 (a cell [0, rho_hi] is its
    members with 0 < rho <= rho_hi)."""
    return st.tuples(*(st.fractions(min_value=Fraction(cell[n][0]), max_value=Fraction(cell[n][1]),
                                    max_denominator=1 << 12) for n in NAMES)).filter(lambda m: m[0] > 0)


def first_nonpositive(member: tuple, horizon: int, exact: bool = False) -> tuple:
    """(the first t in 1..horizon with alpha(t) <= 0 or None, min alpha over 1..horizon) of a member (rho, x,
    kappa), float64 or ``exact`` (mpmath at DPS digits)."""
    rho, x, kappa = member
    step = _map("mpmath" if exact else "math")
    with mpmath_precision(DPS):
        num = (lambda q: mpmath.mpf(q.numerator) / q.denominator) if exact else float  # noqa: E731
        r, xx = num(1 / Fraction(rho) - 1), num(Fraction(x))
        y = num(Fraction(kappa) * Fraction(x))
        a, d, low = num(Fraction(0)), num(Fraction(0)), math.inf
        for t in range(1, horizon + 1):
            an, inc = step(a, d, r, xx, y)
            a, d = an, d + inc
            low = min(low, float(a))
            if not a > 0:
                return t, float(a)
    return None, low


def search(cell: dict, examples: int = 100, horizon: int = 2000) -> dict:
    """Hypothesis over the cell's members (derandomized: reproducible from the cell alone); returns {"examples", "horizon", "counterexamples": [...]} where each
    counterexample states the member, t, alpha(t) and its replay at REPLAY_FACTOR x horizon (40 digits)."""
    found: list = []
    tried = [0]

    @settings(max_examples=examples, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(members(cell))
    def probe(m):
        tried[0] += 1
        t, a = first_nonpositive(m, horizon)
        if t is not None and all(f["member"] != m for f in found):
            t2, a2 = first_nonpositive(m, REPLAY_FACTOR * horizon, exact=True)
            inside = 0 < m[0] < 1 and 0 < m[1] < 2 and m[2] > 0
            found.append({"member": m, "inside_hypotheses": inside, "t": t, "alpha": a, "replay": {
                "horizon": REPLAY_FACTOR * horizon, "arithmetic": f"mpmath {DPS} digits", "t": t2, "alpha": a2,
                "holds": t2 is None, "same_step": t2 == t}})

    try:
        probe()
    except Unsatisfiable:
        pass
    return {"examples": tried[0], "horizon": horizon, "counterexamples": [
        f | {"member": {n: str(v) for n, v in zip(NAMES, f["member"])}} for f in found]}


def search_open(result: dict, examples: int = 100, horizon: int = 2000) -> list:
    """:func:`search` in every open cell of a Region B result (verify.certify.region_b)."""
    out = []
    for c in result["cells"]:
        if c["status"] == "open":
            cell = {n: tuple(Fraction(v) for v in c["cell"][n]) for n in NAMES}
            out.append({"path": c["path"], "cell": c["cell"]} | search(cell, examples, horizon))
    return out


__all__ = ["first_nonpositive", "members", "search", "search_open"]
