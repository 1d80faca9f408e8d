"""Numbers from the exact leading terms of verify.derive.asymptotics, for the Theorem 3.1 claims."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

QUANTITIES = ("s_err", "w_err", "loss")
T_EXPONENT = {"s_err": sp.Rational(-1, 2), "w_err": sp.Rational(-1, 2), "loss": sp.Integer(-1)}


@lru_cache(maxsize=None)
def _terms():
    from verify.derive.asymptotics import claimed_terms, leading_terms
    return leading_terms(), claimed_terms()


def subs_of(s) -> dict:
    from verify.model.symbols import values_at
    return values_at(s)


def leading(s, q: str):
    """The exact leading term of q at the setting's parameters, as a function of T (numpy)."""
    from verify.model.symbols import T
    lt, _ = _terms()
    key = "loss" if q == "loss" else q
    return sp.lambdify(T, lt[key].subs(subs_of(s)), "numpy")


def leading_constant(s, q: str) -> sp.Expr:
    """lim_T q(T) * T^{-p}: the exact constant (SymPy) at the setting."""
    from verify.model.symbols import T
    lt, _ = _terms()
    return sp.simplify(lt[q].subs(subs_of(s)) * T ** (-T_EXPONENT[q]))


def ratios(series, s) -> np.ndarray:
    """q(t) / leading_q(t) for the three quantities, rows in QUANTITIES order."""
    t = series.steps.astype(float)
    vals = {"s_err": series.s_err, "w_err": series.w_err, "loss": series.excess}
    return np.vstack([vals[q] / leading(s, q)(t) for q in QUANTITIES])


def entry_time(series, s, band: float = 0.1):
    """First recorded T after which every ratio stays in [1 - band, 1 + band] up to the horizon."""
    rat = ratios(series, s)
    out = np.nonzero(np.any(np.abs(rat - 1) > band, axis=0))[0]
    if len(out) == 0:
        return int(series.steps[0])
    if out[-1] == len(series.steps) - 1:
        return None
    return int(series.steps[out[-1] + 1])


def fast_series(s, steps: int, checkpoints):
    """The reduced recursion at ``checkpoints`` by the compiled float64 engine (verify.engines.fast,
    generated from the same SymPy step as lemmas._common.reduced_float64), as a lemmas._common.Series
    without delta (the fast engine records the support mass instead). For the long runs of the
    Theorem 3.1 claims: ~10^7 steps per second after a one-off compilation of a few seconds."""
    from lemmas._common import Series
    from verify.engines.fast import iterate_fast
    cps = sorted(set(int(c) for c in checkpoints))
    r = iterate_fast(s, int(steps), checkpoints=cps)
    cps = np.array(cps, dtype=np.int64)
    d = r.data
    return Series(cps, d["alpha"][0, :, :s.M], np.full(len(cps), np.nan), d["excess_loss"][0], d["s_err"][0],
                  d["w_err"][0], d["support_mass"][0])
