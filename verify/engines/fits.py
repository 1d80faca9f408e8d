"""Least-squares fits shared by claims, probes and the report: log-log slopes are how every rate in
this toolkit is measured, so they are computed in one place."""
from __future__ import annotations

import math

import numpy as np


def ols(x: np.ndarray, y: np.ndarray):
    """Slope, intercept, slope standard error, R^2 and RMS residual of y on x."""
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    slope = float(((x - xm) * (y - ym)).sum()) / sxx
    icpt = ym - slope * xm
    res = y - (icpt + slope * x)
    ssr = float((res**2).sum())
    sst = float(((y - ym) ** 2).sum())
    se = math.sqrt(ssr / max(len(x) - 2, 1) / sxx)
    r2 = 1.0 - ssr / sst if sst > 0 else 1.0
    return slope, icpt, se, r2, math.sqrt(ssr / len(x))


def loglog_slope(x, y) -> tuple[float, float]:
    """Least-squares slope of log y against log x and its standard error (nan with two points)."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    slope, _, se, _, _ = ols(lx, ly)
    return slope, (se if len(lx) > 2 else float("nan"))
