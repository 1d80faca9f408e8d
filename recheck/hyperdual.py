"""Hyper-dual numbers of Arb balls: a + b e1 + c e2 + d e1 e2 with e1^2 = e2^2 = 0, for exact second derivatives.

A formula evaluated at (z + e1 u + e2 w) returns f, its derivatives along u and w, and the mixed second derivative
along u and w in the four parts, each an enclosure over the balls given (no truncation error: the arithmetic of
e1, e2 is exact). Over a box, the e1 part of f is then a direct enclosure of a first derivative and the e1 e2 part
one of its derivative, which a mean-value form of that first derivative needs (verify.certify.landing; the
re-checker's recheck.drift uses the same class). Formulas compiled by recheck.certificates.compile_arb run on these
with ``power=hd_power``.
"""
from __future__ import annotations

from flint import arb

from recheck.certificates import _exprel, tight_power


class HD:
    """a + b e1 + c e2 + d e1 e2 over Arb balls."""

    __slots__ = ("a", "b", "c", "d")

    def __init__(self, a, b=0, c=0, d=0):
        self.a, self.b, self.c, self.d = a, b, c, d

    @staticmethod
    def _o(o):
        return o if isinstance(o, HD) else HD(o)

    def __add__(self, o):
        o = HD._o(o)
        return HD(self.a + o.a, self.b + o.b, self.c + o.c, self.d + o.d)

    __radd__ = __add__

    def __neg__(self):
        return HD(-self.a, -self.b, -self.c, -self.d)

    def __sub__(self, o):
        return self + (-HD._o(o))

    def __rsub__(self, o):
        return HD._o(o) + (-self)

    def __mul__(self, o):
        if not isinstance(o, HD):
            return HD(self.a * o, self.b * o, self.c * o, self.d * o)
        return HD(self.a * o.a, self.a * o.b + self.b * o.a, self.a * o.c + self.c * o.a,
                  self.a * o.d + self.b * o.c + self.c * o.b + self.d * o.a)

    __rmul__ = __mul__

    def unary(self, f0, f1, f2) -> "HD":
        """g(self) for g with g(a) in f0, g'(a) in f1, g''(a) in f2 (balls over the ball a)."""
        return HD(f0, f1 * self.b, f1 * self.c, f1 * self.d + f2 * self.b * self.c)

    def __truediv__(self, o):
        if not isinstance(o, HD):
            return HD(self.a / o, self.b / o, self.c / o, self.d / o)
        inv = 1 / o.a
        return self * o.unary(inv, -inv * inv, 2 * inv * inv * inv)

    def __rtruediv__(self, o):
        return HD._o(o) / self

    def exp(self) -> "HD":
        e = self.a.exp()
        return self.unary(e, e, e)

    def log(self) -> "HD":
        inv = 1 / self.a
        return self.unary(self.a.log(), inv, -inv * inv)


def hd_power(x, n: int):
    """x^n for a ball or a hyper-dual x: the value part by tight_power (Arb's power of a ball around 0 is not
    finite), the derivatives n x^(n-1), n (n - 1) x^(n-2) likewise."""
    if not isinstance(x, HD):
        return tight_power(x, n)
    if n == 0:
        return HD(arb(1))
    if n < 0:
        return 1 / hd_power(x, -n)
    return x.unary(tight_power(x.a, n), n * tight_power(x.a, n - 1),
                   n * (n - 1) * tight_power(x.a, n - 2) if n >= 2 else arb(0))


def _exprel_k(lo: arb, hi: arb, k: int) -> arb:
    """A ball holding the k-th derivative of exprel, int_0^1 s^k e^{d s} ds = 1F1(k + 1; k + 2; d)/(k + 1), for
    every d in [lo, hi] (exact end points): it increases with d, so its range is that of the end points."""
    at = lambda p: p.hypgeom_1f1(k + 1, k + 2) / (k + 1)  # noqa: E731
    return at(lo).union(at(hi))


def exprel(x):
    """exprel(y) = (e^y - 1)/y = int_0^1 e^{y s} ds (1 at y = 0) of a ball or a hyper-dual; its k-th derivative is
    int_0^1 s^k e^{y s} ds."""
    if not isinstance(x, HD):
        return _exprel(x)
    lo, hi = arb(x.a.lower()), arb(x.a.upper())
    return x.unary(_exprel(x.a), _exprel_k(lo, hi, 1), _exprel_k(lo, hi, 2))


def mean_values(terms, box: tuple, ball, point) -> list:
    """Each value of ``terms(Z)`` over ``box`` (pairs of rationals, five dimensions) as (a mean-value form in all five
    variables intersected with the direct enclosure, what each dimension adds to it: |partial| times half-width).
    The partials are the e1 and e2 parts of three hyper-dual evaluations over the box, two dimensions each; ``ball``
    makes the ball of an interval (lo, hi), ``point`` the ball of a rational."""
    B = tuple(ball(a, b) for a, b in box)
    C = tuple(point((a + b) / 2) for a, b in box)
    out = [[v, None, [0.0] * len(box)] for v in terms(C)]
    for i, j in ((0, 1), (2, 3), (4, None)):
        vals = terms(tuple(HD(b, 1 if q == i else 0, 1 if q == j else 0) for q, b in enumerate(B)))
        for o, v in zip(out, vals):
            o[1] = v.a if o[1] is None else o[1].intersection(v.a)
            for z, part in ((i, v.b), (j, v.c)):
                if z is not None:
                    o[0] = o[0] + part * (B[z] - C[z])
                    o[2][z] = (float(part.abs_upper()) * float(box[z][1] - box[z][0]) / 2 if part.is_finite()
                               else float("inf"))
    return [(mv.intersection(direct) if mv.is_finite() and direct.is_finite() else direct, widen)
            for mv, direct, widen in out]
