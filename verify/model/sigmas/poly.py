"""Polynomial sigma: exact Gaussian moments from the moment generating function (Hermite/Isserlis).

:class:`PolynomialSigma` is the machinery for any polynomial member (kernel, parity, SymPy form from
its coefficients); :class:`Poly` is the family ``poly:c0,c1,...`` with the coefficients written out.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from . import register
from ...errors import InvalidParameter
from ...lazy import lazy_module
from ..numbers import exact, frac_str
from .base import Kernel, Sigma

sp = lazy_module("sympy")      # loaded when a SymPy form is first asked for (a --help needs none)

MAX_COEFFS = 5          # c0..c4: the moment polynomial of degree 8 stays small


def gaussian_moment(a: int, b: int) -> sp.Expr:
    """E[x^a y^b] for (x, y) ~ N(0, [[A, C], [C, B]]), from the moment generating function."""
    from ..symbols import A, B, C  # heavy: loads flint,mpmath,sympy
    t1, t2 = sp.symbols("t1 t2")
    mgf = sp.exp((A * t1**2 + 2 * C * t1 * t2 + B * t2**2) / 2)
    return sp.expand(sp.diff(mgf, t1, a, t2, b).subs({t1: 0, t2: 0}))


def polynomial_expectation(cu, cz) -> sp.Expr:
    """E[p(mu_u + x) q(mu_z + y)] for polynomials with coefficient lists cu, cz."""
    from ..symbols import mu_u, mu_z  # heavy: loads flint,mpmath,sympy
    x, y = sp.symbols("x y")
    pu = sp.Poly(sp.expand(sum(c * (mu_u + x) ** k for k, c in enumerate(cu))), x, y)
    pz = sp.Poly(sp.expand(sum(c * (mu_z + y) ** k for k, c in enumerate(cz))), x, y)
    return sp.expand(sum(coef * gaussian_moment(i, j) for (i, j), coef in (pu * pz).terms()))


@dataclass(frozen=True, eq=False, repr=False)
class PolynomialSigma(Sigma):
    """sigma(x) = sum_k c_k x^k for the exact coefficients :meth:`coefficients` (not a family itself:
    a subclass registers one). Its kernel is exact at any means, so the law need not be centred."""

    needs_centred = False

    def coefficients(self) -> tuple[Fraction, ...]:
        raise NotImplementedError

    @property
    def odd(self) -> bool:
        return all(c == 0 for c in self.coefficients()[0::2])

    def expr(self, x):
        return sum((sp.Rational(c.numerator, c.denominator) * x**k for k, c in enumerate(self.coefficients())),
                   sp.Integer(0))

    def gaussian_kernel(self) -> Kernel:
        from ..symbols import A, B, C, mu_u, mu_z  # heavy: loads flint,mpmath,sympy
        c = [sp.Rational(x.numerator, x.denominator) for x in self.coefficients()]
        cross = polynomial_expectation(c, c)                              # E[sigma(u) sigma(z)]
        second = cross.xreplace({B: A, C: A, mu_z: mu_u})                 # E[sigma(u)^2]  (z := u)
        ell = sp.expand(second - 2 * cross + cross.xreplace({A: B, C: B, mu_u: mu_z}))   # ... + E[sigma(z)^2]
        return Kernel(self, ell, sp.expand(sp.diff(ell, mu_u).subs({mu_u: 0, mu_z: 0})),
                      "exact derivative of the Gaussian moment polynomial", second)


@register
@dataclass(frozen=True, eq=False, repr=False)
class Poly(PolynomialSigma):
    """sigma(x) = c0 + c1 x + ... + c4 x^4 with exact coefficients (trailing zeros dropped)."""

    family = "poly"
    syntax = "poly:c0,c1,..."
    fuzz_examples = ("poly:0,1,0,1/10", "poly:0,1,1/2")     # an odd and an even-part member
    coeffs: tuple[Fraction, ...]

    @classmethod
    def parse(cls, arg: str) -> "Poly":
        coeffs = tuple(exact(c, "sigma coefficient") for c in arg.split(",")) if arg else ()
        while coeffs and coeffs[-1] == 0:
            coeffs = coeffs[:-1]
        if not coeffs or len(coeffs) > MAX_COEFFS:
            raise InvalidParameter("sigma", f"poly:{arg}", f"must have 1 to {MAX_COEFFS} coefficients "
                                   f"c0..c{MAX_COEFFS - 1}, not all zero")
        return cls(coeffs)

    def coefficients(self) -> tuple[Fraction, ...]:
        return self.coeffs

    def spec(self) -> str:
        return "poly:" + ",".join(frac_str(c) for c in self.coeffs)

    def readable(self) -> str:
        """The polynomial in x, lowest power first: ``x + x^3/10``, ``1 - 3 x^2/2``."""
        terms = []
        for k, c in enumerate(self.coeffs):
            if c == 0:
                continue
            n, d = abs(c).numerator, abs(c).denominator
            mono = "" if k == 0 else "x" if k == 1 else f"x^{k}"
            body = (str(n) if n != 1 or not mono else "") + (" " if n != 1 and mono else "") + mono
            terms.append(("-" if c < 0 else "+", body + (f"/{d}" if d != 1 else "")))
        sign, first = terms[0]
        return ("-" if sign == "-" else "") + first + "".join(f" {sg} {t}" for sg, t in terms[1:])
