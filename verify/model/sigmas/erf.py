"""sigma = erf: Williams' (1997) dual kernel E[erf(u) erf(z)] = (2/pi) asin(2C / sqrt((1 + 2A)(1 + 2B)))."""
from __future__ import annotations

import math

from . import register
from ...lazy import lazy_module
from .base import Kernel, Sigma, vectorised

sp = lazy_module("sympy")      # loaded when a SymPy form is first asked for (a --help needs none)


@register
class Erf(Sigma):
    """sigma(x) = erf(x) (odd; the dual kernel holds for centred Gaussian entries)."""

    family = "erf"
    odd = True
    numpy_functions = {"erf": vectorised(math.erf)}

    def expr(self, x):
        return sp.erf(x)

    def gaussian_kernel(self) -> Kernel:
        from ..symbols import A, B, C  # heavy: loads flint,mpmath,sympy
        euu = 2 / sp.pi * sp.asin(2 * A / (1 + 2 * A))
        ezz = 2 / sp.pi * sp.asin(2 * B / (1 + 2 * B))
        euz = 2 / sp.pi * sp.asin(2 * C / sp.sqrt((1 + 2 * A) * (1 + 2 * B)))
        # d/d mu_u E[(erf(u+mu) - erf(z))^2] at mu = 0 is 2 E[(erf(u) - erf(z)) erf'(u)]: the
        # integrand is odd under (u, z) -> (-u, -z) and the centred Gaussian law is even, so it
        # vanishes (proved symbolically in verify.derive.reduction_proof.parity_obligation).
        return Kernel(self, euu - 2 * euz + ezz, sp.Integer(0), "odd integrand (symbolic proof)", euu)
