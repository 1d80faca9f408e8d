"""sigma = ReLU: Cho & Saul's (2009) arc-cosine kernel of degree 1, for centred Gaussian entries.

ReLU is not odd (W_P leaves 0 unless frozen), its kernel at a non-zero offset has no closed form (so
W_P must be frozen), and its loss is not differentiable at W_X = 0 (the 'radial' convention).
"""
from __future__ import annotations

from functools import lru_cache

from . import register
from ...lazy import lazy_module
from .base import Kernel, Sigma

sp = lazy_module("sympy")      # loaded when a SymPy form is first asked for (a --help needs none)


@register
class Relu(Sigma):
    """sigma(x) = max(x, 0)."""

    family = "relu"
    wp_gradient_closed_form = False
    kink_at_zero = True

    def expr(self, x):
        return sp.Max(x, 0)

    def gaussian_kernel(self) -> Kernel:
        from ..symbols import A, B, C  # heavy: loads flint,mpmath,sympy
        rho_term = sp.sqrt(A * B - C**2) + (sp.pi - sp.acos(C / sp.sqrt(A * B))) * C
        ell = A / 2 + B / 2 - rho_term / sp.pi
        # 2 E[(relu(u) - relu(z)) 1{u > 0}] = 2 [sqrt(A)/sqrt(2 pi) - sqrt(B) (1 + rho) / (2 sqrt(2 pi))],
        # rho = C / sqrt(AB), using E[u 1{u>0}] = sqrt(A)/sqrt(2pi) and
        # E[z 1{z>0} 1{u>0}] = sqrt(B)(1 + rho)/(2 sqrt(2 pi)); not zero in general.
        rho = C / sp.sqrt(A * B)
        dmu = 2 * (sp.sqrt(A) / sp.sqrt(2 * sp.pi) - sp.sqrt(B) * (1 + rho) / (2 * sp.sqrt(2 * sp.pi)))
        return Kernel(self, ell, dmu, "Gaussian half-moments (checked by Monte Carlo)", A / 2)

    def guard(self, expr):
        """AB - C^2 >= 0 and |C/sqrt(AB)| <= 1 hold exactly but can fail by one rounding error when
        rho = 1 (K = D); clamp them so the generated code never takes sqrt of -1e-17."""
        from ..symbols import C  # heavy: loads flint,mpmath,sympy
        expr = expr.replace(lambda e: isinstance(e, sp.Pow) and e.exp == sp.Rational(1, 2) and e.base.has(C),
                            lambda e: sp.sqrt(sp.Max(e.base, 0)))
        return expr.replace(lambda e: isinstance(e, sp.acos), lambda e: sp.acos(sp.Max(-1, sp.Min(1, e.args[0]))))

    def stable_partial(self, x):
        """SymPy's raw derivative in A has two terms that each blow up as rho = C/sqrt(AB) -> 1 (exactly
        when K = D); rewriting C = rho sqrt(AB), simplifying and substituting back gives
        (pi A - sqrt(AB - C^2)) / (2 pi A), finite there. Equality with the raw derivative is tested."""
        return _stable_partial(self, x)


@lru_cache(maxsize=None)
def _stable_partial(sigma: Relu, x: sp.Symbol) -> sp.Expr:
    from ..symbols import A, B, C  # heavy: loads flint,mpmath,sympy
    raw = sp.diff(sigma.kernel.ell, x)
    rho = sp.Symbol("rho", positive=True)
    Ap, Bp = sp.symbols("A_p B_p", positive=True)
    d = raw.subs({A: Ap, B: Bp}, simultaneous=True).subs(C, rho * sp.sqrt(Ap * Bp))
    d = sp.simplify(sp.factor(sp.simplify(d)))
    return sp.simplify(d.subs(rho, C / sp.sqrt(Ap * Bp))).subs({Ap: A, Bp: B}, simultaneous=True)
