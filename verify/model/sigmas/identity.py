"""sigma(x) = x: the linear model; its kernel uses the first two moments only, so it holds for any entry law."""
from __future__ import annotations

from . import register
from ...lazy import lazy_module
from .base import Kernel, Sigma

sp = lazy_module("sympy")      # loaded when a SymPy form is first asked for (a --help needs none)


@register
class Identity(Sigma):
    """sigma(x) = x."""

    family = "identity"
    odd = True
    any_law = True            # E[(u - z)^2] = Var u - 2 Cov + Var z + (mu_u - mu_z)^2 under any law
    needs_centred = False

    def expr(self, x):
        return x

    @property
    def is_identity(self) -> bool:
        """True by :meth:`expr` (x -> x), without asking SymPy (a member query imports none of it)."""
        return True

    def gaussian_kernel(self) -> Kernel:
        from ..symbols import A, B, C, mu_u, mu_z  # heavy: loads flint,mpmath,sympy
        ell = A - 2 * C + B + (mu_u - mu_z) ** 2
        return Kernel(self, ell, sp.diff(ell, mu_u).subs({mu_u: 0, mu_z: 0}), "exact derivative", A + mu_u**2)
