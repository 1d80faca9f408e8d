"""Per-entry kernels ell(A, C, B, mu_u, mu_z) = E[(sigma(u) - sigma(z))^2] for each supported sigma.

The population loss is a sum of these over the M x N output entries (see verify.derive.loss):
each entry pair (u, z) is jointly Gaussian under Gaussian X, with Var u = A, Cov = C, Var z = B.
- identity: any entry law; only first and second moments enter.
- erf: Williams (1997) dual kernel E[erf(u) erf(z)] = (2/pi) asin(2C / sqrt((1+2A)(1+2B))).
- relu: Cho & Saul (2009) arc-cosine kernel of degree 1.
- poly: exact Gaussian moments from the moment generating function (Hermite/Isserlis).
Each kernel is checked against quadrature and Monte Carlo in tests/test_kernels.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..errors import UnsupportedRegime
from ..model.sigma import Sigma
from ..model.symbols import A, B, C, mu_u, mu_z


@dataclass(frozen=True)
class Kernel:
    """ell and what is known of it: whether it allows non-zero means, and d ell / d mu_u at mu = 0."""

    sigma: Sigma
    ell: sp.Expr                 # E[(sigma(u) - sigma(z))^2]
    with_means: bool             # ell is exact for any mu_u, mu_z (else only at mu_u = mu_z = 0)
    dmu_at_zero: sp.Expr         # d ell / d mu_u at mu_u = mu_z = 0: the W_P gradient's kernel factor
    dmu_reason: str              # how dmu_at_zero was obtained
    second_moment: sp.Expr = sp.Integer(0)  # E[sigma(u)^2]: ell when the teacher output is sigma(0) = 0

    def partial(self, x: sp.Symbol) -> sp.Expr:
        """d ell / d x in a form fit for numerics (see :func:`stable_partial`)."""
        return stable_partial(self.sigma, x)


def _gaussian_moment(a: int, b: int) -> sp.Expr:
    """E[x^a y^b] for (x, y) ~ N(0, [[A, C], [C, B]]), from the moment generating function."""
    t1, t2 = sp.symbols("t1 t2")
    mgf = sp.exp((A * t1**2 + 2 * C * t1 * t2 + B * t2**2) / 2)
    return sp.expand(sp.diff(mgf, t1, a, t2, b).subs({t1: 0, t2: 0}))


def _poly_expectation(cu, cz) -> sp.Expr:
    """E[p(mu_u + x) q(mu_z + y)] for polynomials with coefficient lists cu, cz."""
    x, y = sp.symbols("x y")
    pu = sp.Poly(sp.expand(sum(c * (mu_u + x) ** k for k, c in enumerate(cu))) , x, y)
    pz = sp.Poly(sp.expand(sum(c * (mu_z + y) ** k for k, c in enumerate(cz))), x, y)
    prod = pu * pz
    return sp.expand(sum(coef * _gaussian_moment(i, j) for (i, j), coef in prod.terms()))


@lru_cache(maxsize=None)
def kernel(sigma: Sigma) -> Kernel:
    """The kernel of ``sigma`` (cached: derivations are deterministic)."""
    if sigma.name == "identity":
        ell = A - 2 * C + B + (mu_u - mu_z) ** 2
        return Kernel(sigma, ell, True, sp.diff(ell, mu_u).subs({mu_u: 0, mu_z: 0}), "exact derivative",
                      A + mu_u**2)
    if sigma.name == "poly":
        c = [sp.Rational(x.numerator, x.denominator) for x in sigma.coeffs]
        cross = _poly_expectation(c, c)                      # E[sigma(u) sigma(z)]
        ell = sp.expand(cross.xreplace({B: A, C: A, mu_z: mu_u})     # E[sigma(u)^2]  (z := u)
                        - 2 * cross
                        + cross.xreplace({A: B, C: B, mu_u: mu_z}))   # E[sigma(z)^2]  (u := z)
        return Kernel(sigma, ell, True, sp.expand(sp.diff(ell, mu_u).subs({mu_u: 0, mu_z: 0})),
                      "exact derivative of the Gaussian moment polynomial",
                      cross.xreplace({B: A, C: A, mu_z: mu_u}))
    if sigma.name == "erf":
        euu = 2 / sp.pi * sp.asin(2 * A / (1 + 2 * A))
        ezz = 2 / sp.pi * sp.asin(2 * B / (1 + 2 * B))
        euz = 2 / sp.pi * sp.asin(2 * C / sp.sqrt((1 + 2 * A) * (1 + 2 * B)))
        # d/d mu_u E[(erf(u+mu) - erf(z))^2] at mu = 0 is 2 E[(erf(u) - erf(z)) erf'(u)]: the
        # integrand is odd under (u, z) -> (-u, -z) and the centred Gaussian law is even, so it
        # vanishes (proved symbolically in verify.derive.reduction.odd_sigma_kills_wp_gradient).
        return Kernel(sigma, euu - 2 * euz + ezz, False, sp.Integer(0), "odd integrand (symbolic proof)", euu)
    if sigma.name == "relu":
        rho_term = sp.sqrt(A * B - C**2) + (sp.pi - sp.acos(C / sp.sqrt(A * B))) * C
        ell = A / 2 + B / 2 - rho_term / sp.pi
        # 2 E[(relu(u) - relu(z)) 1{u > 0}] = 2 [sqrt(A)/sqrt(2 pi) - sqrt(B) (1 + rho) / (2 sqrt(2 pi))],
        # rho = C / sqrt(AB), using E[u 1{u>0}] = sqrt(A)/sqrt(2pi) and
        # E[z 1{z>0} 1{u>0}] = sqrt(B)(1 + rho)/(2 sqrt(2 pi)); not zero in general.
        rho = C / sp.sqrt(A * B)
        dmu = 2 * (sp.sqrt(A) / sp.sqrt(2 * sp.pi) - sp.sqrt(B) * (1 + rho) / (2 * sp.sqrt(2 * sp.pi)))
        return Kernel(sigma, ell, False, dmu, "Gaussian half-moments (checked by Monte Carlo)", A / 2)
    raise UnsupportedRegime(f"no kernel for sigma = {sigma.spec()}")


@lru_cache(maxsize=None)
def radial_slope(sigma: Sigma) -> sp.Expr:
    """d/dalpha ell(alpha^2 a, alpha c, b, 0, 0) at alpha = 0+, in symbols a_, b_, c_.

    For ReLU the loss is not differentiable at W_X = 0 (the arc-cosine kernel is positively
    homogeneous of degree one there); the 'radial' convention uses this one-sided derivative along
    the teacher row, which is the limit of the gradient along the ray w = alpha v*_m.
    """
    al = sp.Symbol("alpha", positive=True)
    a_, b_, c_ = sp.symbols("a_ b_ c_", positive=True)
    e = kernel(sigma).ell.subs({A: al**2 * a_, C: al * c_, B: b_, mu_u: 0, mu_z: 0}, simultaneous=True)
    e = e.replace(lambda x: isinstance(x, sp.Pow) and x.exp == sp.Rational(1, 2),
                  lambda x: sp.sqrt(sp.factor(x.base)))
    return sp.limit(sp.diff(e, al), al, 0, "+")


@lru_cache(maxsize=None)
def stable_partial(sigma: Sigma, x: sp.Symbol) -> sp.Expr:
    """d ell / d x, simplified so that no two singular terms cancel numerically.

    For ReLU, SymPy's raw derivative in A has two terms that each blow up as rho = C/sqrt(AB) -> 1
    (which happens exactly when K = D); rewriting C = rho sqrt(AB), simplifying and substituting back
    gives (pi A - sqrt(AB - C^2)) / (2 pi A), finite there. Equality with the raw derivative is tested.
    """
    k = kernel(sigma)
    raw = sp.diff(k.ell, x)
    if sigma.name != "relu":
        return raw
    rho = sp.Symbol("rho", positive=True)
    Ap, Bp = sp.symbols("A_p B_p", positive=True)
    d = raw.subs({A: Ap, B: Bp}, simultaneous=True).subs(C, rho * sp.sqrt(Ap * Bp))
    d = sp.simplify(sp.factor(sp.simplify(d)))
    return sp.simplify(d.subs(rho, C / sp.sqrt(Ap * Bp))).subs({Ap: A, Bp: B}, simultaneous=True)


def guard_relu(expr: sp.Expr) -> sp.Expr:
    """Numeric guard for ReLU code: AB - C^2 >= 0 and |C/sqrt(AB)| <= 1 hold exactly but can fail by one
    rounding error when rho = 1 (K = D); clamp them so the generated code never takes sqrt of -1e-17."""
    expr = expr.replace(lambda e: isinstance(e, sp.Pow) and e.exp == sp.Rational(1, 2) and e.base.has(C),
                        lambda e: sp.sqrt(sp.Max(e.base, 0)))
    return expr.replace(lambda e: isinstance(e, sp.acos), lambda e: sp.acos(sp.Max(-1, sp.Min(1, e.args[0]))))
