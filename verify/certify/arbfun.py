"""Arb helpers the certificate needs: exact balls, rational end points, exprel, and integer powers.

python-flint's ``arb ** n`` is nan for a ball centred at 0 (``arb(0, 1) ** 2``) and loose for
negative balls (``arb(-2, 0.1) ** 3`` gives +-9.27), so the generated code of this package computes
every integer power x^n with :func:`ipow`: the exact range of t -> t^n over the ball (monotone for
odd n, [0, max |t|^n] for even n when the ball contains 0), by multiplications of exact end points.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from ..engines.balls import to_fraction
from recheck.certificates import tight_power

_ARB = __import__("flint").arb          # the ball type, looked up once (ipow runs in every generated step)


def exact(q):
    """The Arb ball of the exact rational ``q`` (radius 0 when q is dyadic and fits the precision)."""
    from flint import arb, fmpq  # heavy: flint
    q = Fraction(q)
    return arb(fmpq(q.numerator, q.denominator))


def ball(lo: Fraction, hi: Fraction):
    """The Arb ball containing the exact interval [lo, hi] (rationals, rounded outward)."""
    a = exact(lo)
    return a if lo == hi else a.union(exact(hi))


def lo_frac(x) -> Fraction:
    """An exact rational <= every point of ball ``x``."""
    return to_fraction(x.lower())


def hi_frac(x) -> Fraction:
    """An exact rational >= every point of ball ``x``."""
    return to_fraction(x.upper())


def dyadic_down(q: Fraction, bits: int = 96) -> Fraction:
    """The largest m/2^k <= q with a ``bits``-bit m (q > 0): a short exact rational, rounded down."""
    q = Fraction(q)
    k = bits - (q.numerator.bit_length() - q.denominator.bit_length())
    return Fraction((q.numerator << k) // q.denominator, 1 << k) if k >= 0 else \
        Fraction(q.numerator // (q.denominator << -k) << -k)


def dyadic_up(q: Fraction, bits: int = 96) -> Fraction:
    """The smallest m/2^k >= q with a ``bits``-bit m (q > 0), rounded up."""
    return -dyadic_down(-Fraction(q), bits)


STATED_MARGIN = Fraction(1, 2**64)   # relative slack of every number a certificate states (see :func:`widened`)
WIDTH_MARGIN = Fraction(1, 2**20)    # ... and slack relative to an interval's width (Arb radii carry 30 bits)


def widened(lo: Fraction, hi: Fraction) -> tuple[Fraction, Fraction]:
    """[lo, hi] widened by STATED_MARGIN of its size, WIDTH_MARGIN of its width (and 2^-200 absolute), to short
    96-bit dyadics: the number a certificate states and uses. An independent re-check of the same formulas at the
    same precision differs from ours only by rounding (~2^-bits of the size, 2^-30 of a ball's radius), inside
    this margin, so its values lie in ours."""
    m = STATED_MARGIN * max(abs(lo), abs(hi)) + WIDTH_MARGIN * (hi - lo) + Fraction(1, 2**200)
    return dyadic_down(lo - m), dyadic_up(hi + m)


def ipow(x, n):
    """A tight enclosure of {t^n : t in x} for an integer n (negative n: the reciprocal): the re-checker's
    recheck.certificates.tight_power for balls (one implementation of the rule), x**n for exact numbers."""
    return tight_power(x, int(n)) if isinstance(x, _ARB) else x**int(n)


def exprel_ball(x):
    """A ball containing exprel(y) = (e^y - 1)/y (exprel(0) = 1) for every y in ball ``x``.

    exprel(y) = int_0^1 e^{y s} ds is increasing in y (obligation "exprel-integral"), so on [lo, hi]
    it lies in [exprel(lo), exprel(hi)]: evaluated at the two exact end points, never dividing by a
    ball that contains 0.
    """
    from flint import arb  # heavy: flint

    def at(p):
        return arb(1) if p.is_zero() else p.expm1() / p
    return at(x.lower()).union(at(x.upper()))


@lru_cache(maxsize=None)
def _ipow_function():
    """The SymPy function ipow (SymPy imported here: the ball helpers above need none of it)."""
    import sympy as sp  # heavy: sympy
    return sp.Function("ipow")


def with_ipow(expr):
    """``expr`` with every integer power x^n (|n| >= 2) written ipow(x, n)."""
    import sympy as sp  # heavy: sympy
    ipow_ = _ipow_function()
    return sp.sympify(expr).replace(lambda e: e.is_Pow and e.exp.is_Integer and abs(e.exp) >= 2,
                                    lambda e: ipow_(e.base, e.exp))


def lambdify_arb(args, expr):
    """verify.derive.codegen's Arb code for ``expr`` (or a tuple), with integer powers by :func:`ipow`, each
    expression as written (no common subexpressions: a shared form is another formula, whose ball can differ,
    and the re-checker evaluates the formulas as written)."""
    from ..derive import codegen  # heavy: loads mpmath,numpy,sympy
    e = tuple(with_ipow(x) for x in expr) if isinstance(expr, (tuple, list)) else with_ipow(expr)
    f = codegen.lambdify(args, e, "arb", cse=False)
    f.__globals__["ipow"] = ipow
    return f
