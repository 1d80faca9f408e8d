"""Numeric code generated from the symbolic expressions: one source of truth for every engine.

Backends: ``numpy`` (float64 arrays), ``math`` (scalar float64 source for numba), ``mpmath``
(any precision), ``arb`` (python-flint balls; rationals become exact balls, never floats), ``jax``
(jax.numpy arrays, traceable by jax.jit and jax.grad).
"""
from __future__ import annotations

import types
from functools import lru_cache

import sympy as sp
from flint import arb
from sympy.printing.pycode import PythonCodePrinter

BACKENDS = ("numpy", "math", "mpmath", "arb", "jax")


def _ball_extremum(pick: str):
    """max / min of balls: a ball containing max (min) of every choice of points, so a guard such as
    sqrt(Max(x, 0)) stays an enclosure (Python's own max would pick one operand by an uncertain comparison)."""

    def f(*xs):
        out = arb(xs[0])
        for x in xs[1:]:
            out = getattr(out, pick)(arb(x))
        return out
    return f


def _int_power(x, n: int):
    """x**n for an integer n by repeated products: a ball containing 0 stays finite (Arb's real power of
    such a ball is nan, and of a negative ball very wide)."""
    if n < 0:
        return 1 / _int_power(x, -n)
    out, base = None, x
    while n:
        if n & 1:
            out = base if out is None else out * base
        n >>= 1
        if n:
            base = base * base
    return 1 if out is None else out


def _sqrt_nonnegative(x):
    """sqrt(Max(x, 0)) of a ball whose exact value is >= 0 (a numeric guard says so): the square root of its
    nonnegative part, finite where rounding lets the ball reach below 0."""
    return x.nonnegative_part().sqrt()


def _acos_clipped(x):
    """acos(Max(-1, Min(1, x))) of a ball: acos is decreasing, so the image of the ball clipped to [-1, 1] is
    the union of acos at its two clipped endpoints (exact points), finite where the ball reaches past +-1."""
    if not x.is_finite():
        return arb.nan()
    clip = lambda e: arb(1) if e > 1 else (arb(-1) if e < -1 else e)  # noqa: E731  (e exact: certain comparisons)
    return arb.union(clip(x.upper()).acos(), clip(x.lower()).acos())


def _arb_namespace():
    """An ``mpmath``-shaped namespace whose functions act on flint.arb balls."""
    ns = types.SimpleNamespace(
        mpf=arb, pi=arb.pi(), arb_pi=arb.pi, exp=lambda x: x.exp(), log=lambda x: x.log(), sqrt=lambda x: x.sqrt(),
        asin=lambda x: x.asin(), acos=lambda x: x.acos(), atan=lambda x: x.atan(),
        atan2=lambda y, x: arb.atan2(y, x), erf=lambda x: x.erf(), sin=lambda x: x.sin(),
        cos=lambda x: x.cos(), tanh=lambda x: x.tanh(), max=_ball_extremum("max"), min=_ball_extremum("min"),
        arb_ipow=_int_power, arb_sqrt_nonneg=_sqrt_nonnegative, arb_acos_clipped=_acos_clipped)
    return {"mpmath": ns, **{k: getattr(ns, k) for k in vars(ns)}}


def _ball_guards(expr: sp.Expr) -> sp.Expr:
    """The numeric guards sqrt(Max(x, 0)) and acos(Max(-1, Min(1, x))) (Sigma.guard) as ball
    functions that clip the ball to the domain the guard asserts (see :func:`_sqrt_nonnegative`)."""
    def clamp_arg(e):
        if isinstance(e, sp.Max) and len(e.args) == 2 and sp.Integer(-1) in e.args:
            inner = [a for a in e.args if a != -1][0]
            if isinstance(inner, sp.Min) and len(inner.args) == 2 and sp.Integer(1) in inner.args:
                return [a for a in inner.args if a != 1][0]
        return None
    expr = expr.replace(lambda e: e.is_Pow and e.exp == sp.Rational(1, 2) and isinstance(e.base, sp.Max)
                        and len(e.base.args) == 2 and sp.Integer(0) in e.base.args,
                        lambda e: sp.Function("arb_sqrt_nonneg")([a for a in e.base.args if a != 0][0]))
    return expr.replace(lambda e: isinstance(e, sp.acos) and clamp_arg(e.args[0]) is not None,
                        lambda e: sp.Function("arb_acos_clipped")(clamp_arg(e.args[0])))


def _as_products(expr: sp.Expr) -> sp.Expr:
    """x**n (integer |n| >= 2) and x**(n/2) (odd |n| >= 3) written as products of x (of sqrt(x))."""
    ipow = sp.Function("arb_ipow")
    return expr.replace(
        lambda e: e.is_Pow and e.exp.is_Rational and (2 * e.exp).is_Integer and abs(e.exp) > 1,
        lambda e: ipow(e.base, e.exp) if e.exp.is_Integer else ipow(sp.sqrt(e.base), 2 * e.exp))


def lambdify(args, expr, backend: str, products: bool = False, cse: bool = True):
    """Compile ``expr`` (or a tuple of them) in ``args`` for one backend.

    ``products`` (arb only): integer powers are evaluated as products of balls (see :func:`_int_power`),
    which the full-matrix certified engine needs where a quantity such as mu_u - mu_z is a ball around 0.
    ``cse``: share common subexpressions (faster; for Arb balls it can also change an enclosure's width, since
    the shared form is another formula).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}")
    if backend == "arb":
        # The mpmath printer writes rationals as mpf(p)/mpf(q) and pi as pi: with mpf = arb these
        # are exact or correctly rounded balls, so the generated code is a rigorous enclosure.
        # pi becomes a call, so that it is computed at the Arb precision in force at each call (a
        # constant would keep the precision of the first compilation).
        pi_call = sp.Function("arb_pi")()
        prep = lambda e: (_as_products if products else (lambda x: x))(_ball_guards(sp.sympify(e)).subs(sp.pi, pi_call))  # noqa: E731
        expr = tuple(prep(e) for e in expr) if isinstance(expr, (tuple, list)) else prep(expr)
        f = sp.lambdify(args, expr, modules=[_arb_namespace(), "mpmath"], cse=cse)
        f.__globals__.update(_arb_namespace())
        return f
    if backend == "jax":
        # SymPy's jax printer has no erf: jax.scipy.special's is traceable and differentiable.
        from jax.scipy.special import erf  # heavy: jax
        return sp.lambdify(args, expr, modules=[{"erf": erf}, "jax"], cse=cse)
    return sp.lambdify(args, expr, modules=backend, cse=cse)


def python_source(name: str, args, expr) -> str:
    """Scalar Python source of ``expr`` using only the math module (compiled by numba)."""
    printer = PythonCodePrinter({"fully_qualified_modules": True})
    subs, (red,) = sp.cse([expr])
    lines = [f"def {name}({', '.join(str(a) for a in args)}):"]
    for s, e in subs:
        lines.append(f"    {s} = {printer.doprint(e)}")
    lines.append(f"    return {printer.doprint(red)}")
    return "\n".join(lines)


@lru_cache(maxsize=None)
def cached(key, builder):
    return builder()
