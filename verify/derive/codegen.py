"""Numeric code generated from the symbolic expressions: one source of truth for every engine.

Backends: ``numpy`` (float64 arrays), ``math`` (scalar float64 source for numba), ``mpmath``
(any precision), ``arb`` (python-flint balls; rationals become exact balls, never floats).
"""
from __future__ import annotations

import types
from functools import lru_cache

import sympy as sp

BACKENDS = ("numpy", "math", "mpmath", "arb")


def _arb_namespace():
    """An ``mpmath``-shaped namespace whose functions act on flint.arb balls."""
    from flint import arb
    ns = types.SimpleNamespace(
        mpf=arb, pi=arb.pi(), arb_pi=arb.pi, exp=lambda x: x.exp(), log=lambda x: x.log(), sqrt=lambda x: x.sqrt(),
        asin=lambda x: x.asin(), acos=lambda x: x.acos(), atan=lambda x: x.atan(),
        atan2=lambda y, x: arb.atan2(y, x), erf=lambda x: x.erf(), sin=lambda x: x.sin(),
        cos=lambda x: x.cos(), tanh=lambda x: x.tanh())
    return {"mpmath": ns, **{k: getattr(ns, k) for k in vars(ns)}}


def lambdify(args, expr, backend: str, cse: bool = True):
    """Compile ``expr`` (or a tuple of them) in ``args`` for one backend. ``cse``: share common subexpressions
    (faster; for Arb balls it can also change an enclosure's width, since the shared form is another formula)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}")
    if backend == "arb":
        # The mpmath printer writes rationals as mpf(p)/mpf(q) and pi as pi: with mpf = arb these
        # are exact or correctly rounded balls, so the generated code is a rigorous enclosure.
        # pi becomes a call, so that it is computed at the Arb precision in force at each call (a
        # constant would keep the precision of the first compilation).
        pi_call = sp.Function("arb_pi")()
        expr = tuple(sp.sympify(e).subs(sp.pi, pi_call) for e in expr) if isinstance(expr, (tuple, list)) \
            else sp.sympify(expr).subs(sp.pi, pi_call)
        f = sp.lambdify(args, expr, modules=[_arb_namespace(), "mpmath"], cse=cse)
        f.__globals__.update(_arb_namespace())
        return f
    return sp.lambdify(args, expr, modules=backend, cse=cse)


def python_source(name: str, args, expr) -> str:
    """Scalar Python source of ``expr`` using only the math module (compiled by numba)."""
    from sympy.printing.pycode import PythonCodePrinter
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
