"""Entry laws of X: each standardised to mean 0 and variance 1, then shifted and scaled.

X_ab = mean + sqrt(var) * xi_ab with xi_ab i.i.d. from the named standardised law.
For sigma = identity the population loss depends on (mean, var) only (proved in verify.derive.loss).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameter
from .numbers import exact
from .spec import BY_NAME

LAW_NAMES = ("gaussian", "rademacher", "student-t", "gumbel", "exponential", "uniform")


@dataclass(frozen=True)
class Law:
    """A standardised entry law plus the (mean, var) it is moved to."""

    name: str = "gaussian"
    nu: Fraction | None = None  # degrees of freedom for student-t (> 2 for a finite variance)
    mean: Fraction = Fraction(0)
    var: Fraction = Fraction(1)

    @property
    def gaussian(self) -> bool:
        return self.name == "gaussian"

    def spec(self) -> str:
        return f"student-t:{self.nu}" if self.name == "student-t" else self.name

    def standard_sample(self, rng: np.random.Generator, shape) -> np.ndarray:
        """Draws of the standardised law (mean 0, variance 1)."""
        if self.name == "gaussian":
            return rng.standard_normal(shape)
        if self.name == "rademacher":
            return rng.choice(np.array([-1.0, 1.0]), size=shape)
        if self.name == "student-t":
            nu = float(self.nu)
            return rng.standard_t(nu, size=shape) * math.sqrt((nu - 2) / nu)
        if self.name == "gumbel":
            return (rng.gumbel(size=shape) - np.euler_gamma) / (math.pi / math.sqrt(6))
        if self.name == "exponential":
            return rng.exponential(size=shape) - 1.0
        if self.name == "uniform":
            return rng.uniform(-math.sqrt(3), math.sqrt(3), size=shape)
        raise AssertionError(self.name)

    def sample(self, rng: np.random.Generator, shape) -> np.ndarray:
        return float(self.mean) + math.sqrt(float(self.var)) * self.standard_sample(rng, shape)


def parse_law(spec: str, mean="0", var="1") -> Law:
    """``gaussian``, ``rademacher``, ``student-t:NU`` (NU > 2), ``gumbel``, ``exponential``, ``uniform``."""
    if not isinstance(spec, str):
        raise InvalidParameter("law", spec, f"must be one of {', '.join(LAW_NAMES)}")
    name, _, arg = spec.partition(":")
    if name not in LAW_NAMES:
        raise InvalidParameter("law", spec, f"must be one of {', '.join(LAW_NAMES)} (student-t takes :NU)")
    nu = None
    if name == "student-t":
        nu = exact(arg or "", "law degrees of freedom NU")
        if nu <= 2:
            raise InvalidParameter("law", spec, "must have NU > 2 for student-t (finite variance)")
    elif arg:
        raise InvalidParameter("law", spec, f"must be given without a parameter for {name}")
    m, v = BY_NAME["law_mean"].check(mean), BY_NAME["law_var"].check(var)     # their fields' ranges
    return Law(name, nu, m, v)
