"""Numbers from the exact leading terms of verify.derive.asymptotics (sigma = identity, 0 < K < D): the terms at a
setting, GD's ratios to them, the entry time into a band around them, the derived onset of the 1/T phase and the
horizon far into it, and the exponents of the terms against Theorem 3.1's claimed orders (verify.model.paper).

Evidence gathering shared by the Theorem 3.1 claim (lemmas/theorem_3_1.py), the probes and the sweep: none of them
reaches into another's module for these facts."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from ..derive.asymptotics import leading_terms, leading_terms_general
from ..engines.fast import iterate_fast
from ..model.paper import exponent_of, theorem_3_1_orders
from ..model.quantities import KEYS
from ..model.symbols import D, K, N, T, eta, values_at, vnorm
from .regime_runs import Series


@lru_cache(maxsize=None)
def terms() -> dict:
    return leading_terms()


def leading(s, q: str):
    """The exact leading term of q at the setting's parameters, as a function of T (numpy): the terms with every
    convention symbol kept (c_L, v, lambda, beta, eta_KQ; verify.derive.asymptotics.leading_terms_general), so
    that they hold in the setting's own convention; at the reference they are :func:`terms`."""
    return sp.lambdify(T, term_at(s, q), "numpy")


def term_at(s, q: str) -> sp.Expr:
    """The leading term of q (a function of T) at the setting, in its own convention: the terms with every
    convention symbol kept (verify.derive.asymptotics.leading_terms_general) at the setting's values."""
    return leading_terms_general()[q].subs(values_at(s))


def onset(s) -> float:
    """The onset of the 1/T phase at the setting, D^2/(2 (D - K)^2 c) with c the derived cubic coefficient in the
    setting's convention (verify.derive.asymptotics.leading_terms_general): K D/(2 eta ||V*||^2) in the reference
    convention."""
    c = term_at(s, "c")
    return float(sp.Rational(s.D**2, 2 * (s.D - s.K) ** 2) / c)


def onset_horizon(s) -> int:
    """200 times the derived onset (:func:`onset`; K D/(2 eta ||V*||^2) in the reference
    convention): far into the 1/T phase."""
    return int(200 * onset(s))


def t_exponent(q: str):
    """The T-exponent of q's leading term (SymPy: -1 for the excess loss, -1/2 for the parameter errors)."""
    return exponent_of(terms()[q], T)


def leading_constant(s, q: str) -> sp.Expr:
    """lim_T q(T) * T^{-p}: the exact constant (SymPy) at the setting, in its own convention (:func:`leading`)."""
    return sp.simplify(term_at(s, q) * T ** (-t_exponent(q)))


def series_values(series) -> dict:
    """The three quantities of a :class:`verify.evidence.regime_runs.Series`, keyed as verify.model.quantities."""
    return {"excess_loss": series.excess, "s_err": series.s_err, "w_err": series.w_err}


def ratios(series, s) -> np.ndarray:
    """q(t) / leading_q(t) for the three quantities, rows in verify.model.quantities.KEYS order."""
    t = series.steps.astype(float)
    vals = series_values(series)
    return np.vstack([vals[q] / leading(s, q)(t) for q in KEYS])


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
    """The reduced recursion at ``checkpoints`` by the compiled float64 engine (verify.engines.fast, generated
    from the same SymPy step as verify.evidence.regime_runs.reduced_float64), as a Series without delta (the fast engine
    records the support mass instead): ~10^7 steps per second after a one-off compilation of a few seconds."""
    cps = sorted(set(int(c) for c in checkpoints))
    r = iterate_fast(s, int(steps), checkpoints=cps)
    cps = np.array(cps, dtype=np.int64)
    d = r.data
    return Series(cps, d["alpha"][0, :, :s.M], np.full(len(cps), np.nan), d["excess_loss"][0], d["s_err"][0],
                  d["w_err"][0], d["support_mass"][0])


# ---- exponents of the exact leading terms against the claimed orders (SymPy on a formal expansion) -----------
# The two paths of D -> oo along which the D-exponents are compared: N fixed, and N = D/K.
PATHS = {"N fixed": lambda e: e, "N = D/K": lambda e: e.subs(N, D / K)}


@lru_cache(maxsize=None)
def exponents() -> dict:
    """{"leading"|"claimed": {q: {"T", "vnorm", "eta", "K (D -> oo)", "D (N fixed)", "D (N = D/K)"}}}."""
    out = {}
    for name, table in (("leading", terms()), ("claimed", theorem_3_1_orders())):
        out[name] = {}
        for q in KEYS:
            e = table[q]
            out[name][q] = {"T": exponent_of(e, T), "vnorm": exponent_of(e, vnorm), "eta": exponent_of(e, eta),
                            "K (D -> oo)": exponent_of(e, K, (D, sp.oo))}
            for path, f in PATHS.items():
                out[name][q][f"D ({path})"] = exponent_of(f(e), D, (D, sp.oo))
    return out
