"""What a sweep measures in each regime: functions registered with :func:`measure`.

A measurement is ``f(setting, steps, options) -> {column: scalar}`` (floats, ints, strings, booleans or
None; None where a value does not exist, with a "*_note" column saying why). It runs on a Dask worker,
so it must be importable there. New measurements (e.g. certified all-time bounds) plug in with one
decorator::

    @measure("certificate", default=False)
    def certificate(setting, steps, options): ...

Built in: ``trajectory`` (final values at ``steps``, fitted tail exponents, ratios to the derived
leading terms), ``claims`` (each per-regime claim's verdict in the regime) and ``certified`` (Arb
enclosures of the final values; opt-in: CPU-bound); one module each in verify/sweep/measurements/:
``certificate`` (the all-time certificate; opt-in).
"""
from __future__ import annotations

import importlib
import math
import pkgutil
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
import sympy as sp

from . import measurements
from ..derive.asymptotics import leading_terms_general
from ..engines import checkpoint_steps, iterate
from ..engines.arb import iterate_certified, rad_fraction, to_fraction
from ..engines.fast import iterate_fast
from ..engines.fits import loglog_slope
from ..errors import InvalidParameter
from ..evidence.leading_terms import onset_horizon
from ..model import symbols as sy
from ..model.paper import claimed_exponent
from ..model.quantities import KEYS
from ..run.parts import plugin_modules
from lemmas import CLAIMS

QUANTITIES = KEYS
CLAIM_STEPS = 2_000     # default horizon of the per-regime claim checks (their full-matrix routes cost O(D^3) a step)
ARB_BITS = 128


@dataclass(frozen=True)
class Measure:
    name: str
    func: Callable
    default: bool
    summary: str


MEASURES: dict[str, Measure] = {}
# The progress of the measurement running now, as the fraction of it done: set by compute_row (verify.sweep.run)
# around each measurement; a measurement that can tell how far it is calls measurement_progress(fraction).
_PROGRESS: ContextVar[Callable[[float], None] | None] = ContextVar("measurement_progress", default=None)


def measurement_progress(fraction: float) -> None:
    """Say that ``fraction`` (0..1) of the measurement running now is done (nothing when no one listens)."""
    report = _PROGRESS.get()
    if report is not None:
        report(min(max(float(fraction), 0.0), 1.0))


@contextmanager
def progress_to(report: Callable[[float], None] | None):
    """Route :func:`measurement_progress` of the measurement run inside to ``report(fraction)``."""
    token = _PROGRESS.set(report)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def measure(name: str, *, default: bool = True, summary: str = ""):
    """Register ``f(setting, steps, options) -> dict`` as the measurement ``name`` (run by default or on request)."""
    def deco(f):
        if name in MEASURES and MEASURES[name].func is not f:
            raise AssertionError(f"measurement {name!r} registered twice")
        MEASURES[name] = Measure(name, f, default, summary or (f.__doc__ or "").strip().split("\n")[0])
        return f
    return deco


def check_measures(names) -> list[str]:
    """The measurements to run: ``names`` (validated) or the defaults."""
    if not names:
        return [m.name for m in MEASURES.values() if m.default]
    for n in names:
        if n not in MEASURES:
            raise InvalidParameter("measure", n, f"must be one of {', '.join(MEASURES)}")
    return list(dict.fromkeys(names))


def _float(x) -> float | None:
    """A finite float, or None (NaN and infinities are not values)."""
    try:
        f = float(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


@contextmanager
def strict_floats():
    """numpy and warnings set so that an overflow or invalid operation raises (never a silent NaN)."""
    with np.errstate(over="raise", invalid="raise", divide="raise"), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# Relative floor of float64 values: ~16 digits, of which 1e-12 leaves four for the cancellation in
# differences such as L - L_opt or alpha - 1 (as verify.probes.support.runs.FLOAT64_EPS_REL).
FLOAT64_EPS_REL = 1e-12


def tail_fit(steps: list[int], ys: list, horizon: int) -> tuple[float | None, float | None, str]:
    """Log-log slope (and its standard error) over the last decade [horizon/10, horizon], or None and why.

    No slope is fitted through zeros, non-finite values, or values at the float64 rounding level of the
    series (below 1e-12 of its largest value): their logarithms are noise, not a power law."""
    idx = [i for i, t in enumerate(steps) if t >= horizon / 10 and t > 0]
    if len(idx) < 3:
        return None, None, "fewer than 3 checkpoints in the last decade"
    y = [ys[i] for i in idx]
    if not all(v is not None and math.isfinite(v) and v > 0 for v in y):
        return None, None, "zero or non-finite values in the tail (not a power law)"
    top = max(abs(v) for v in ys if v is not None and math.isfinite(v))
    if min(y) < FLOAT64_EPS_REL * top:
        return None, None, f"tail values below the float64 rounding level ({FLOAT64_EPS_REL:g} of the largest)"
    slope, se = loglog_slope([steps[i] for i in idx], y)
    return slope, (se if math.isfinite(se) else None), ""


@lru_cache(maxsize=None)
def claimed_t_exponents() -> dict:
    """Theorem 3.1's claimed exponents of T, by quantity (-1, -1/2, -1/2), computed from the claimed orders
    (verify.model.paper) as floats."""
    return {q: float(claimed_exponent(q, "T")) for q in QUANTITIES}


def rate_constants(values: dict, T: int) -> dict:
    """q(T) T^-p for each quantity q, p its claimed T-exponent: T (L - L_opt), sqrt(T) ||S - S*||_F and
    sqrt(T) ||W_X - V*||_F, the constants Theorem 3.1 bounds; None where a value is missing."""
    p = claimed_t_exponents()
    return {q: (None if values.get(q) is None else values[q] * float(T) ** (-p[q])) for q in QUANTITIES}


@lru_cache(maxsize=None)
def _leading_functions():
    """The derived leading terms with every named convention symbolic, as float functions."""

    lt = leading_terms_general()
    args = (sy.D, sy.K, sy.N, sy.eta_kq, sy.lam, sy.beta, sy.var, sy.c_loss, sy.vnorm, sy.T)
    return {q: sp.lambdify(args, lt[q], "math") for q in QUANTITIES}


def leading_terms_at(s, T: int) -> tuple[dict | None, str]:
    """The derived leading terms of the three quantities at step T in regime ``s``, or None and why not.

    They hold for sigma = identity, 0 < K < D, the exact reduction (centred law, zero init, orthogonal P,
    uniform S*) and a stable W_X block (eta_V c_L v N < 2K)."""
    ok, why = s.reducible()
    if not ok:
        return None, why
    if not s.sigma.is_identity:
        return None, "derived for sigma = identity only"
    if not 0 < s.K < s.D:
        return None, "derived for 0 < K < D (K = 0 and K = D are not power laws)"
    if s.eta_v * s.loss_scale * s.law.var * s.N >= 2 * s.K:
        return None, "eta_V is above the W_X-block stability threshold 2K/(c_L v N)"
    f = _leading_functions()
    vals = (s.D, s.K, s.N, float(s.eta_kq), float(s.p_lambda), float(s.beta),
            float(s.law.var), float(s.loss_scale), math.sqrt(float(s.vstar_norm2())), T)
    return {q: fn(*vals) for q, fn in f.items()}, ""


def onset_columns(s, steps: int, lead) -> dict:
    """``tstar``: the step from which Theorem 3.1's claim takes GD to be in its 1/T phase (the derived onset
    K D/(2 eta ||V*||^2) times the claim's own factor: verify.evidence.leading_terms.onset_horizon), and ``before_tstar``:
    whether the horizon ends before it (then the fitted exponents and ratios are not yet the asymptotic ones).
    Both None where the leading terms do not apply (``lead`` None)."""
    if lead is None:
        return {"tstar": None, "before_tstar": None}
    t = onset_horizon(s)
    return {"tstar": t, "before_tstar": steps < t}


@measure("trajectory", summary="final values at --steps, fitted tail exponents, ratios to the derived leading terms, "
         "and whether the horizon ends before the onset T*")
def trajectory(s, steps: int, options: dict) -> dict:
    """GD for ``steps`` steps: the reduced recursion in float64 (numba) when the regime reduces, else the
    full-matrix engine; Theorem 3.1's three quantities at the end, their tail exponents, their ratios to
    the derived leading terms and the onset columns (:func:`onset_columns`)."""
    ok, why = s.reducible()
    lead, lead_why = leading_terms_at(s, steps)
    cols: dict = onset_columns(s, steps, lead)
    try:
        with strict_floats():
            if ok:
                tr = iterate_fast(s, steps, log_points=60).trajectory(0)
                cols["engine"] = "reduced float64 (numba)"
            else:
                tr = iterate(s, steps, "full", "float64", None, checkpoint_steps(steps, log_points=60),
                             progress=lambda t: measurement_progress(t / max(steps, 1)))
                cols["engine"] = f"full-matrix float64 ({why})"
    except (FloatingPointError, OverflowError, RuntimeWarning) as exc:
        cols["engine"] = "reduced float64 (numba)" if ok else "full-matrix float64"
        for q in QUANTITIES:
            cols[q] = cols[f"slope_{q}"] = cols[f"slope_se_{q}"] = cols[f"ratio_{q}"] = None
            cols[f"constant_{q}"] = cols[f"derived_constant_{q}"] = None
        # the same columns as a finished row (one Parquet schema), the trouble said in the note
        return cols | {"fit_from": None, "fit_to": None, "cos_wv": None, "leading_term_note": lead_why or None,
                       "trajectory_note": f"float64 trouble (GD diverged?): {type(exc).__name__}: {exc}"}
    recs = tr.records
    T = [r.step for r in recs]
    notes = []
    for q in QUANTITIES:
        ys = [_float(getattr(r, q)) for r in recs]
        cols[q] = ys[-1]
        slope, se, why_not = tail_fit(T, ys, steps)
        cols[f"slope_{q}"], cols[f"slope_se_{q}"] = slope, se
        if why_not:
            notes.append(f"{q}: {why_not}")
        cols[f"ratio_{q}"] = (ys[-1] / lead[q]) if (lead and ys[-1] is not None and lead[q]) else None
    derived = rate_constants(lead, steps) if lead else {q: None for q in QUANTITIES}
    for q, c in rate_constants({q: cols[q] for q in QUANTITIES}, steps).items():
        cols[f"constant_{q}"], cols[f"derived_constant_{q}"] = c, derived[q]
    cols["fit_from"], cols["fit_to"] = int(math.ceil(steps / 10)), int(steps)
    cols["cos_wv"] = _float(recs[-1].cos_wv)
    cols["leading_term_note"] = lead_why or None
    cols["trajectory_note"] = "; ".join(notes) or None
    return cols


@measure("claims", summary="each per-regime claim's check in the regime: holds, fails, undecided or outside")
def claims(s, steps: int, options: dict) -> dict:
    """Every per-regime claim of lemmas/ checked in the regime at ``min(steps, claim_steps)`` steps.

    Column ``claim:<id>``: "holds", "fails", "undecided" (the check could not decide, e.g. a NaN or a float
    error) or "outside" (the regime is outside the claim's hypotheses: information, not a verdict)."""
    horizon = int(min(steps, options.get("claim_steps") or CLAIM_STEPS))
    cols: dict = {"claim_steps": horizon}
    ids = [cid for cid in sorted(CLAIMS) if CLAIMS[cid].per_regime]
    for k, cid in enumerate(ids):
        c = CLAIMS[cid]
        measurement_progress(k / len(ids))
        try:
            with strict_floats():
                out = c.regime_check(s, horizon)
        except (FloatingPointError, OverflowError, RuntimeWarning):
            cols[f"claim:{cid}"] = "undecided"
            continue
        except InvalidParameter:
            cols[f"claim:{cid}"] = "outside"
            continue
        data = getattr(out, "data", {}) or {}
        if data.get("in_hypotheses") is False:
            cols[f"claim:{cid}"] = "outside"
        else:
            cols[f"claim:{cid}"] = {True: "holds", False: "fails"}.get(out.holds, "undecided")
    return cols


def ball_bounds(x) -> tuple[float, float]:
    """Floats lo <= every point of the Arb ball ``x`` <= hi (rounded outwards, so still rigorous)."""
    if not x.is_finite():
        return -math.inf, math.inf
    q, r = to_fraction(x), rad_fraction(x)
    return math.nextafter(float(q - r), -math.inf), math.nextafter(float(q + r), math.inf)


@measure("certified", default=False, summary="Arb enclosures of the final values (reduced recursion, 128 bits)")
def certified(s, steps: int, options: dict) -> dict:
    """Certified enclosures [lo, hi] of the three quantities after exactly ``steps`` GD steps (Arb balls of the
    reduced recursion, rounded outwards to floats), when the regime reduces."""
    ok, why = s.reducible()
    bits = int(options.get("arb_bits") or ARB_BITS)
    cols: dict = {"certified_bits": bits}
    if not ok:
        cols["certified_note"] = f"no certified engine: {why}"
        for q in QUANTITIES:
            cols[f"certified_{q}_lo"] = cols[f"certified_{q}_hi"] = None
        return cols
    tr = iterate_certified(s, steps, bits, [steps], progress=lambda t: measurement_progress(t / max(steps, 1)))
    rec = tr.records[-1]
    for q in QUANTITIES:
        lo, hi = ball_bounds(getattr(rec, q))
        cols[f"certified_{q}_lo"], cols[f"certified_{q}_hi"] = _float(lo), _float(hi)
    cols["certified_state_radius"] = _float(tr.state_radii[-1])
    cols["certified_note"] = None
    return cols


# Further measurements live one per module in verify/sweep/measurements/ (each registers itself with
# @measure): importing them here makes them known wherever this module is, on every Dask worker too.
for _module in pkgutil.iter_modules(measurements.__path__):
    importlib.import_module(f"{measurements.__name__}.{_module.name}")
# ... and the plug-ins named in $VERIFY_PLUGINS (verify.run.parts), here too for the same reason.
for _module in plugin_modules():
    importlib.import_module(_module)


__all__ = ["MEASURES", "Measure", "measure", "measurement_progress", "progress_to", "check_measures", "tail_fit", "leading_terms_at", "ball_bounds",
           "QUANTITIES", "CLAIM_STEPS", "claimed_t_exponents", "rate_constants", "onset_columns"]
