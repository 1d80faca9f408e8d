"""Runs of the engines as the probes read them: GD series keyed by quantity, the checkpoints that sample both
power-law and geometric tails, the saved description of a regime, and tail classifications.

Series are dicts of float lists keyed as verify.model.quantities spells the quantities (``excess_loss`` is
L - L_opt), plus ``step``. The reduced recursion runs on the compiled float64 engine
(``verify.engines.iterate_fast``) when the probe asks for it (``fast=True``; about 10^7 steps per second), else
through ``verify.engines.iterate``.
"""
from __future__ import annotations

import numpy as np

from ...engines import iterate, iterate_fast
from ...engines.trajectory import checkpoint_steps
from ...model.quantities import KEYS
from .classify import classify, to_float

# Relative precision floor of float64 for classify(): float64 keeps ~16 digits; 1e-12 leaves four for the
# cancellation in L - L_opt (a difference of O(1) terms).
FLOAT64_EPS_REL = 1e-12
SERIES_KEYS = ("step",) + KEYS + ("offspan", "wp_norm", "alpha", "support_mass")


def dense_checkpoints(steps: int, points: int = 160) -> list[int]:
    """Every step up to 20, then ``points`` log-spaced and ``points`` evenly spaced steps: tails of
    both power laws (log-spaced) and exponentials (evenly spaced) are sampled."""
    cps = set(checkpoint_steps(steps, every=max(1, steps // points), log_points=points))
    cps.update(range(0, min(steps, 20) + 1))
    return sorted(cps)


def run_series(setting, steps: int, engine: str = "reduced", arithmetic: str = "float64", dps=None,
               checkpoints=None, fast: bool = False) -> dict:
    """GD's recorded quantities at ``checkpoints`` (default :func:`dense_checkpoints`) as float lists keyed by
    :data:`SERIES_KEYS` (``alpha`` and ``support_mass`` of the first row and column; ``offspan`` the largest
    row's). ``fast``: the compiled float64 reduced recursion (its off-span residual and W_P are 0 by the
    reduction)."""
    cps = sorted(set(checkpoints or dense_checkpoints(steps)))
    if fast:
        d = iterate_fast(setting, steps, checkpoints=cps).data
        out = {"step": [int(t) for t in cps]} | {q: [float(x) for x in d[q][0]] for q in KEYS}
        return out | {"offspan": [0.0] * len(cps), "wp_norm": [0.0] * len(cps),
                      "alpha": [float(x) for x in d["alpha"][0, :, 0]],
                      "support_mass": [float(x) for x in d["support_mass"][0]]}
    recs = iterate(setting, steps, engine, arithmetic, dps, cps).records
    out = {"step": [r.step for r in recs]} | {q: [to_float(getattr(r, q)) for r in recs] for q in KEYS}
    return out | {"offspan": [max(to_float(x) for x in r.offspan) for r in recs],
                  "wp_norm": [to_float(r.wp_norm) for r in recs], "alpha": [to_float(r.alpha[0]) for r in recs],
                  "support_mass": [to_float(r.support_mass[0]) for r in recs]}


def trimmed(series: dict, keys=KEYS) -> dict:
    """The ``step`` array and ``keys`` of a series (what a probe saves for its figure)."""
    return {k: series[k] for k in ("step",) + tuple(keys)}


def regime_entry(setting, steps: int, engine: str, arithmetic: str = "float64", label: str = "") -> dict:
    """One regime as a probe saves it: every option of the setting plus how it was run."""
    return {"label": label, "config": setting.config(), "steps": int(steps), "engine": engine,
            "arithmetic": arithmetic}


def classify_series(series: dict, eps_rel: float = FLOAT64_EPS_REL) -> dict:
    """Classification of each of Theorem 3.1's quantities of one run (limits: L_opt, S*, V*: distance 0)."""
    return {q: classify(series["step"], series[q], 0.0, eps_rel) for q in KEYS}


def labels(fits: dict) -> dict:
    """{quantity: "power:-0.5" | "exponential" | ...} of :func:`classify_series`' output."""
    return {q: fits[q].label for q in KEYS}


def fits_json(fits: dict) -> dict:
    return {q: f.as_dict() for q, f in fits.items()}


def last(series: dict, key: str) -> float:
    return float(np.asarray(series[key], dtype=float)[-1])


__all__ = ["FLOAT64_EPS_REL", "SERIES_KEYS", "dense_checkpoints", "run_series", "trimmed", "regime_entry",
           "classify_series", "labels", "fits_json", "last"]
