"""Activation functions sigma the toolkit derives exactly, and how to name them."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..errors import InvalidParameter
from .numbers import exact, frac_str

SIGMA_NAMES = ("identity", "relu", "erf", "poly")


@dataclass(frozen=True)
class Sigma:
    """An elementwise activation; ``poly`` carries its coefficients c_0, c_1, ... (exact)."""

    name: str = "identity"
    coeffs: tuple[Fraction, ...] = ()

    def spec(self) -> str:
        return "poly:" + ",".join(frac_str(c) for c in self.coeffs) if self.name == "poly" else self.name

    @property
    def odd(self) -> bool:
        """sigma(-x) = -sigma(x): the property that keeps W_P at zero (verify.derive.reduction)."""
        if self.name in ("identity", "erf"):
            return True
        if self.name == "poly":
            return all(c == 0 for c in self.coeffs[0::2])
        return False

    @property
    def linear(self) -> bool:
        """sigma(x) = c x: the loss depends on the entry law through its first two moments only."""
        return self.name == "identity" or (self.name == "poly" and len(self.coeffs) == 2 and self.coeffs[0] == 0)

    @property
    def vanishes_at_zero(self) -> bool:
        return self.name != "poly" or (len(self.coeffs) == 0 or self.coeffs[0] == 0)


def parse_sigma(spec: str) -> Sigma:
    """``identity``, ``relu``, ``erf``, or ``poly:c0,c1,...`` (e.g. ``poly:0,1,0,1/10``)."""
    valid = "must be identity, relu, erf or poly:c0,c1,... (tanh has no closed-form Gaussian kernel)"
    if not isinstance(spec, str):
        raise InvalidParameter("sigma", spec, valid)
    name, _, arg = spec.partition(":")
    if name not in SIGMA_NAMES:
        raise InvalidParameter("sigma", spec, valid)
    if name != "poly":
        if arg:
            raise InvalidParameter("sigma", spec, valid)
        return Sigma(name)
    coeffs = tuple(exact(c, "sigma coefficient") for c in arg.split(",")) if arg else ()
    while coeffs and coeffs[-1] == 0:
        coeffs = coeffs[:-1]
    if not coeffs or len(coeffs) > 5:
        raise InvalidParameter("sigma", spec, "must have 1 to 5 coefficients c0..c4, not all zero")
    return Sigma("poly", coeffs)
