"""How a recorded quantity approaches its limit: exact from the start, exponentially, as a power of T, or not at all.

Given steps t_i and distances y_i = |q(t_i) - q_limit| >= 0 (excess loss, ||S - S*||_F, ||W_X - V*||_F),
the classifier fits two models over the tail window W = {i : t_i >= t_end / 10, y_i above the precision floor}:

  exponential:  log y = a - b t        (ordinary least squares in t)
  power:        log y = a + p log t    (ordinary least squares in log t)

and keeps the one with the smaller root-mean-square residual in log units; a coefficient of
determination R^2 below ``R2_GOOD`` is reported in ``reason`` (e.g. a geometric decay whose rate drifts). On one decade of t the two models are told apart easily:
a power law is concave in t and an exponential is convex in log t. The power exponent is reported
with its OLS standard error and with the local exponent over the last third of the window (the two
differ by the bias of finite T: Theorem 3.1's quantities carry relative corrections of order u(T)).

``exact-from-start``: y_i <= floor for every recorded step t_i >= 1, where floor = eps_rel * scale and
eps_rel is the working precision (float64: 1e-12 leaves 4 digits for cancellation in L - L_opt).
``none``: the quantity does not approach the limit, i.e. the tail's log-log slope p is not significantly
below -``MIN_DECAY`` (p + 3 se(p) > -MIN_DECAY: less than a 1.2% drop per decade, or an oscillation with
no trend), or it is not finite (divergence).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import mpmath
import numpy as np

from ...engines.fits import ols

# A fit is "good" when it explains this fraction of the variance of log y over the window.
R2_GOOD = 0.999
# A tail log-log slope above -MIN_DECAY counts as not approaching the limit: over a decade of T the
# distance falls by less than 10^-0.005 ~ 1.2%, i.e. the quantity stays where it is.
MIN_DECAY = 0.005
# Fewest points a fit uses; fewer points leave the residual meaningless.
MIN_POINTS = 6

KINDS = ("exact-from-start", "exponential", "power", "none")


@dataclass(frozen=True)
class Classification:
    """The verdict of :func:`classify` and the numbers behind it."""

    kind: str
    label: str                     # "power:-0.5", "exponential", "exact-from-start", "none"
    exponent: float | None = None  # power: fitted p in y ~ C t^p
    exponent_se: float | None = None
    local_exponent: float | None = None  # power: slope over the last third of the window
    rate: float | None = None      # exponential: b in y ~ C e^{-b t}
    rate_se: float | None = None
    r2: float | None = None
    rms_power: float | None = None
    rms_exponential: float | None = None
    window: tuple[int, int] | None = None
    points: int = 0
    floor: float = 0.0
    reason: str = ""

    def as_dict(self) -> dict:
        d = asdict(self)
        d["window"] = list(self.window) if self.window else None
        return d


def to_float(x) -> float:
    """A recorded number (float, numpy or mpmath) as a float; +inf beyond the float range."""
    if isinstance(x, mpmath.mpf):
        return float(x) if mpmath.isfinite(x) else math.inf
    return float(x)


def power_label(p: float) -> str:
    """``power:<p>`` with p rounded to two decimals (the fit's systematic error is larger)."""
    v = round(p, 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"power:{v:g}"


def classify(steps, values, limit=0.0, eps_rel: float = 1e-12, scale: float | None = None) -> Classification:
    """Classify how ``values`` (at ``steps``) approach ``limit``; see the module docstring.

    Examples
    --------
    >>> classify(range(1, 1001), [t ** -0.5 for t in range(1, 1001)]).label
    'power:-0.5'
    >>> classify(range(0, 200), [0.9 ** t for t in range(0, 200)]).kind
    'exponential'
    """
    t = np.array([int(s) for s in steps], dtype=float)
    y = np.array([abs(to_float(v) - to_float(limit)) for v in values], dtype=float)
    if not np.all(np.isfinite(y)):
        return Classification("none", "none", reason="the quantity is not finite (GD diverged)")
    sc = float(np.max(y)) if scale is None else float(scale)
    floor = eps_rel * max(sc, 0.0)
    after = t >= 1
    if not after.any():
        raise ValueError("classify needs at least one recorded step t >= 1")
    if np.all(y[after] <= floor):
        return Classification("exact-from-start", "exact-from-start", floor=floor,
                              reason=f"|q - q_limit| <= {floor:.3g} at every recorded step t >= 1")
    # A finite quantity that grows without approaching the limit (divergence under way, or a fixed offset).
    valid = after & (y > 100 * floor)
    t_end = float(t[valid].max())
    win = valid & (t >= t_end / 10)
    if win.sum() < MIN_POINTS:
        # Too few distinct points in the last decade: use every valid point after step 0.
        win = valid
    if win.sum() < MIN_POINTS:
        return Classification("none", "none", points=int(win.sum()), floor=floor,
                              reason=f"only {int(win.sum())} points above the precision floor: cannot fit")
    tw, lw = t[win], np.log(y[win])
    p, _, p_se, p_r2, p_rms = ols(np.log(tw), lw)
    b, _, b_se, b_r2, b_rms = ols(tw, lw)
    third = tw >= tw[0] + (tw[-1] - tw[0]) * 2 / 3
    loc = ols(np.log(tw[third]), lw[third])[0] if third.sum() >= 3 else p
    window = (int(tw[0]), int(tw[-1]))
    common = dict(window=window, points=int(win.sum()), floor=floor, rms_power=p_rms, rms_exponential=b_rms)
    if p + 3 * p_se > -MIN_DECAY:
        return Classification("none", "none", exponent=p, exponent_se=p_se, local_exponent=loc, r2=p_r2, **common,
                              reason=f"tail log-log slope {p:.3g} +- {p_se:.2g} is not significantly below "
                                     f"-{MIN_DECAY}: the quantity does not approach its limit")
    if b_rms < p_rms:
        reason = f"log-linear fit, rate {-b:.6g} per step, R^2 = {b_r2:.6f}"
        if b_r2 < R2_GOOD:
            reason += (f"; the rate varies over the window (R^2 < {R2_GOOD}), but log-linear fits "
                       f"{p_rms / b_rms:.1f}x better than log-log")
        return Classification("exponential", "exponential", rate=-b, rate_se=b_se, r2=b_r2, **common, reason=reason)
    reason = f"log-log fit, exponent {p:.4f} +- {p_se:.1e} (last third {loc:.4f}), R^2 = {p_r2:.6f}"
    if p_r2 < R2_GOOD:
        reason += f"; poor fit (R^2 < {R2_GOOD}): neither model describes the tail well"
    return Classification("power", power_label(p), exponent=p, exponent_se=p_se, local_exponent=loc, r2=p_r2,
                          **common, reason=reason)
