"""What the full-matrix engines need of sigma: its per-entry kernel ell, the partials, and the conventions
at its non-smooth points, as SymPy expressions and compiled for one backend.

Every sigma-specific fact the full-matrix engines use is read in :func:`sigma_terms` and nowhere else;
the engines ask the returned :class:`SigmaTerms`. The kernel ell(A, C, B, mu_u, mu_z) =
E[(sigma(u) - sigma(z))^2] and its derivation are the sigma object's (verify.model.sigmas).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import sympy as sp

from ..derive import codegen
from ..model.sigmas import Sigma
from ..model.symbols import A, B, C, mu_u, mu_z

ARGS = (A, C, B, mu_u, mu_z)
# The radial slope d/dalpha ell(alpha^2 a, alpha c, b) at alpha = 0+ (Sigma.radial_slope) is written in
# A, B, C for (a, b, c): a = Var u and c = Cov(u, z) per unit alpha along v*_m, b = Var z, so that sigma's
# numeric guard (which clamps AB - C^2 >= 0 and |C / sqrt(AB)| <= 1) applies to it as to the kernel.
RADIAL_ARGS = (A, B, C)


@dataclass(frozen=True)
class SigmaTerms:
    """sigma as the full-matrix engines see it (SymPy expressions in A, C, B, mu_u, mu_z)."""

    ell: sp.Expr                      # E[(sigma(u) - sigma(z))^2]
    second_moment: sp.Expr            # E[sigma(u)^2]: ell when the teacher output is sigma(0) = 0
    with_means: bool                  # ell is exact at any means (else only at mu_u = mu_z = 0)
    dA: sp.Expr                       # d ell / dA, in a form fit for numerics (no cancelling singular terms)
    dC: sp.Expr                       # d ell / dC, likewise
    dmu: sp.Expr                      # d ell / d mu_u where W_P is trained (0 where its gradient is never used)
    kink_at_zero: bool                # ell is not differentiable at a zero student row (A = C = 0)
    radial: sp.Expr | None            # the one-sided slope used there (the 'radial' convention), in RADIAL_ARGS
    guard: Callable[[sp.Expr], sp.Expr]   # rewrites an expression so rounding cannot leave its domain


@lru_cache(maxsize=None)
def sigma_terms(sigma: Sigma) -> SigmaTerms:
    """The one place the full-matrix engines read sigma-specific facts (from the sigma object).

    A kink at W_X = 0 (ReLU: the arc-cosine kernel is positively homogeneous there): a zero row takes the
    radial one-sided derivative. Without a closed-form W_P gradient, W_P is frozen (validated) and, the law
    being centred, the offset derivative only ever multiplies zeros: it is taken as 0.
    """
    k = sigma.kernel
    kink = sigma.kink_at_zero
    dmu = (sp.diff(k.ell, mu_u) if k.with_means else
           (sp.Integer(0) if not sigma.wp_gradient_closed_form else k.dmu_at_zero))
    radial = None
    if kink:
        a_, b_, c_ = sp.symbols("a_ b_ c_", positive=True)     # radial_slope's own symbols
        radial = sigma.radial_slope().subs({a_: A, b_: B, c_: C}, simultaneous=True)
    return SigmaTerms(ell=k.ell, second_moment=k.second_moment, with_means=k.with_means, dA=k.partial(A),
                      dC=k.partial(C), dmu=dmu, kink_at_zero=kink, radial=radial, guard=sigma.guard)


@dataclass(frozen=True)
class KernelFunctions:
    """ell, its partials (A, C, B, mu_u, mu_z) -> value, the radial slope (A, B, C) -> value (None when sigma
    is smooth at 0) and E[sigma(z)^2] as a function of Var z, compiled for one backend. ``slopes`` (Arb only):
    for each of "ell", "dA", "dC", "dmu" that is not affine in (A, C, mu_u), its partials in A, C and mu_u,
    for the centred form f(X) in f(mid X) + f'(X) (X - mid X) (:func:`centred`)."""

    ell: object
    dA: object
    dC: object
    dmu: object
    radial: object | None
    second: object
    kink_at_zero: bool
    slopes: dict | None = None


def entry_terms(sigma: Sigma, teacher_zero: bool) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    """(ell, dA, dC, dmu) of one output entry. ``teacher_zero`` (K = 0, S* = 0): the teacher output is
    sigma(0) = 0, so ell = E[sigma(u)^2] (the kernel's C / sqrt(AB) would be 0/0 there)."""
    t = sigma_terms(sigma)
    if teacher_zero and not t.with_means:
        e = t.second_moment
        return e, sp.diff(e, A), sp.diff(e, C), t.dmu
    return t.ell, t.dA, t.dC, t.dmu


VARYING = (A, C, mu_u)      # what the student's weights move (B and mu_z are the teacher's)


def _slopes(exprs: dict, guard, compile_) -> dict:
    """{name: (d/dA, d/dC, d/dmu_u) compiled} for the expressions that are not affine in A, C, mu_u."""
    out = {}
    for name, e in exprs.items():
        parts = [sp.diff(e, x) for x in VARYING]
        if any(p.free_symbols & set(VARYING) for p in parts):
            out[name] = tuple(compile_(guard(p)) for p in parts)
    return out


@lru_cache(maxsize=None)
def kernel_functions(sigma: Sigma, backend: str, teacher_zero: bool = False) -> KernelFunctions:
    """:class:`KernelFunctions` for ``backend`` (verify.derive.codegen; Arb: integer powers as products)."""
    t = sigma_terms(sigma)
    opts = {"products": True} if backend == "arb" else {}
    f = lambda e: codegen.lambdify(ARGS, t.guard(e), backend, **opts)  # noqa: E731
    exprs = dict(zip(("ell", "dA", "dC", "dmu"), entry_terms(sigma, teacher_zero)))
    rad = None if t.radial is None else codegen.lambdify(RADIAL_ARGS, t.guard(t.radial), backend, **opts)
    second = codegen.lambdify((A,), t.second_moment.subs(mu_u, 0), backend, **opts)
    slopes = _slopes(exprs, t.guard, f) if backend == "arb" else None
    return KernelFunctions(*(f(exprs[k]) for k in ("ell", "dA", "dC", "dmu")), rad, second, t.kink_at_zero, slopes)


def centred(f, slopes, a, c, b, m, z):
    """f(a, c, b, m, z) on balls in the centred (mean-value) form: f at the midpoints of (a, c, m) plus the
    partials over the whole balls times the radii. Naive ball evaluation treats each occurrence of a variable
    independently and can widen a ball by the ratio of the sum of |terms| to |f|; the centred form's width is
    |f'| times the radius, up to O(radius^2). Falls back to the naive form where a partial is unbounded."""
    from flint import arb  # heavy: flint
    radii = [x.rad() for x in (a, c, m)]
    if all(r == 0 for r in radii):
        return f(a, c, b, m, z)
    mids = [arb(x.mid()) for x in (a, c, m)]
    out = f(mids[0], mids[1], b, mids[2], z)
    for g, r in zip(slopes, radii):
        if r != 0:
            out = out + g(a, c, b, m, z) * arb(0, r)
    return out if out.is_finite() else f(a, c, b, m, z)
