"""The base of every activation family: what a sigma is, and its Gaussian kernel.

A family (one module of this package, registered with :func:`verify.model.sigmas.register`) declares,
once: its SymPy form :meth:`Sigma.expr`, its Gaussian kernel :meth:`Sigma.gaussian_kernel`, its parity
:attr:`Sigma.odd` and the requirements it puts on a setting (class attributes, read by
verify.model.setting, the engines, the fuzzer and the CLI). The NumPy form, sigma(0), the radial slope
and "sigma is the identity map" are derived here from those, so each fact is written once.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from ...errors import InvalidParameter
from ...lazy import lazy_module
from ...run.cache import by_code_version

sp = lazy_module("sympy")      # loaded when a SymPy form is first asked for (a --help needs none)


def x_symbol():
    """The argument of sigma in every SymPy form (also ``X``: SymPy symbols of one name and assumptions are one)."""
    return sp.Symbol("x", real=True)


def __getattr__(name: str):
    """``X`` (:func:`x_symbol`), made on first use so that importing this module does not load SymPy."""
    if name == "X":
        return x_symbol()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Kernel:
    """ell(A, C, B, mu_u, mu_z) = E[(sigma(u) - sigma(z))^2] for (u, z) jointly Gaussian with Var u = A,
    Cov(u, z) = C, Var z = B and means mu_u, mu_z, and what is known of it."""

    sigma: "Sigma"
    ell: sp.Expr                 # E[(sigma(u) - sigma(z))^2]
    dmu_at_zero: sp.Expr         # d ell / d mu_u at mu_u = mu_z = 0: the W_P gradient's kernel factor
    dmu_reason: str              # how dmu_at_zero was obtained
    second_moment: sp.Expr       # E[sigma(u)^2] (in A, mu_u): ell when the teacher output is sigma(0) = 0

    @property
    def with_means(self) -> bool:
        """ell is exact for any mu_u, mu_z (else only at mu_u = mu_z = 0, so the law must be centred)."""
        return not self.sigma.needs_centred

    def partial(self, x: sp.Symbol) -> sp.Expr:
        """d ell / d x in a form fit for numerics (:meth:`Sigma.stable_partial`)."""
        return self.sigma.stable_partial(x)


@dataclass(frozen=True, eq=False)
class Sigma:
    """An elementwise activation sigma; a subclass per family, an instance per member (immutable,
    hashable, equal when of the same family with the same spec, so usable as a cache key)."""

    family: ClassVar[str] = ""                 # the name a spec starts with ("poly" in "poly:0,1")
    syntax: ClassVar[str] = ""                 # how a spec is written (help texts); default: the family name
    fuzz_examples: ClassVar[tuple[str, ...]] = ()   # specs the fuzzer draws; default: the family name
    odd: ClassVar[bool] = False                # sigma(-x) = -sigma(x): W_P stays 0 (verify.derive.reduction_proof)
    # Requirements on a setting (verify.model.setting validates them, with the messages it prints):
    any_law: ClassVar[bool] = False            # the kernel holds for any entry law (else Gaussian entries only)
    needs_centred: ClassVar[bool] = True       # the kernel is exact at zero means only: law mean 0, W_P = 0
    wp_gradient_closed_form: ClassVar[bool] = True   # False: the W_P gradient has no closed form, W_P frozen
    kink_at_zero: ClassVar[bool] = False       # the loss is not differentiable at W_X = 0 (radial convention)
    numpy_functions: ClassVar[dict] = {}       # SymPy function name -> vectorised NumPy function (lambdify)

    # ----- what a family defines -----------------------------------------------------------
    @classmethod
    def parse(cls, arg: str) -> "Sigma":
        """The member of this family written ``family:arg`` (``arg`` empty: ``family`` alone)."""
        if arg:
            raise InvalidParameter("sigma", f"{cls.family}:{arg}", f"must be `{cls.family}` alone (no arguments)")
        return cls()

    def spec(self) -> str:
        """How this member is written on the command line and in every record."""
        return self.family

    def readable(self) -> str:
        """How a statement's prose names this member (``x + x^3/10`` for ``poly:0,1,0,1/10``); default the spec."""
        return self.spec()

    def expr(self, x: sp.Expr) -> sp.Expr:
        """sigma(x) as a SymPy expression."""
        raise NotImplementedError(f"the sigma family {self.family!r} defines no SymPy form")

    def gaussian_kernel(self) -> Kernel:
        """The kernel of this sigma under Gaussian entries (derived once; see :attr:`kernel`)."""
        raise NotImplementedError(f"the sigma family {self.family!r} defines no Gaussian kernel")

    def guard(self, expr: sp.Expr) -> sp.Expr:
        """``expr`` made safe for float64 code (no square root of a rounding error below 0); default unchanged."""
        return expr

    def stable_partial(self, x: sp.Symbol) -> sp.Expr:
        """d ell / d x in a form whose terms do not cancel numerically; default SymPy's derivative."""
        return sp.diff(self.kernel.ell, x)

    # ----- derived, cached -----------------------------------------------------------------
    @property
    def kernel(self) -> Kernel:
        """The Gaussian kernel (cached: derivations are deterministic)."""
        return _kernel_of(self)

    @property
    def at_zero(self) -> sp.Expr:
        """sigma(0), exactly (the teacher output at K = 0; the reduction needs it to be 0)."""
        return _at_zero(self)

    @property
    def is_identity(self) -> bool:
        """sigma(x) = x: the derivations made for the linear model (matrix form, any entry law, the
        Lemma C.2 proofs, the leading terms, the certificates) apply."""
        return _is_identity(self)

    @property
    def linear(self) -> bool:
        """sigma(x) = c x: every row of W_X moves with the same multiple (the alpha recursion does not depend on
        the row's norm), and the loss depends on the entry law through its first two moments only."""
        return _is_linear(self)

    def numpy(self, z):
        """sigma applied entrywise to a float64 array, generated from :meth:`expr` by lambdify."""
        return _numpy_of(self)(z)

    def radial_slope(self) -> sp.Expr:
        """d/dalpha ell(alpha^2 a, alpha c, b, 0, 0) at alpha = 0+, in symbols a_, b_, c_.

        Where the loss is not differentiable at W_X = 0 (:attr:`kink_at_zero`: the ReLU kernel is
        positively homogeneous of degree one there) the 'radial' convention uses this one-sided
        derivative along the teacher row, the limit of the gradient along the ray w = alpha v*_m."""
        return _radial_slope(self)

    # ----- identity --------------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.spec() == self.spec()

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, self.spec()))

    def __repr__(self) -> str:
        return f"<sigma {self.spec()}>"


@lru_cache(maxsize=None)
def _kernel_of(sigma: Sigma) -> Kernel:
    """The Gaussian kernel, kept per process; for the toolkit's own sigma families also derived once per code version
    on this machine (verify.run.cache, keyed by the sigma's spec): a SymPy derivation of about a second that every part
    process needing it would repeat. A family defined elsewhere is not in the code version, so it is not kept."""
    if not type(sigma).__module__.startswith("verify."):
        return sigma.gaussian_kernel()
    return by_code_version("sigma-kernel")(type(sigma).gaussian_kernel)(sigma)


@lru_cache(maxsize=None)
def _at_zero(sigma: Sigma) -> sp.Expr:
    return sp.sympify(sigma.expr(sp.Integer(0)))


@lru_cache(maxsize=None)
def _is_identity(sigma: Sigma) -> bool:
    X = x_symbol()
    return sp.simplify(sigma.expr(X) - X) == 0


@lru_cache(maxsize=None)
def _is_linear(sigma: Sigma) -> bool:
    X = x_symbol()
    e = sp.expand(sigma.expr(X))
    return e.is_polynomial(X) and sp.degree(e, X) == 1 and e.subs(X, 0) == 0


@lru_cache(maxsize=None)
def _numpy_of(sigma: Sigma):
    X = x_symbol()
    return sp.lambdify(X, sigma.expr(X), modules=[dict(sigma.numpy_functions), "numpy"])


@lru_cache(maxsize=None)
def _radial_slope(sigma: Sigma) -> sp.Expr:
    from ..symbols import A, B, C, mu_u, mu_z  # heavy: loads flint,mpmath,sympy
    al = sp.Symbol("alpha", positive=True)
    a_, b_, c_ = sp.symbols("a_ b_ c_", positive=True)
    e = sigma.kernel.ell.subs({A: al**2 * a_, C: al * c_, B: b_, mu_u: 0, mu_z: 0}, simultaneous=True)
    e = e.replace(lambda x: isinstance(x, sp.Pow) and x.exp == sp.Rational(1, 2),
                  lambda x: sp.sqrt(sp.factor(x.base)))
    return sp.limit(sp.diff(e, al), al, 0, "+")


def vectorised(f):
    """A scalar float function applied entrywise to float64 arrays (for :attr:`Sigma.numpy_functions`)."""
    return np.vectorize(f, otypes=[float])


__all__ = ["Sigma", "Kernel", "vectorised"]
