"""The monotone enclosure of a box of members' states, and the Taylor-model prefix whose box of states it caps.

Why (measured, docs/atlas.md "The monotone enclosure"). The first-order Taylor model of verify.certify.prefix fails
on wide cells because the Jacobians are taken over its own box of states B_t = m_t + S_t [-h, h], which holds the
remainder, so the remainder feeds itself over the near-neutral slow phase. A second enclosure of the same states
that does not feed on the Taylor model's remainder caps that box.

The monotonicity test. For one component F_i of the map z' = F(z, p) (z = (alpha, delta), p = (s, x, y)) over a
box Z x P: where a partial dF_i/dv, enclosed over the whole box by the generated Jacobians (prefix_functions: jac,
jac_p), has a definite sign, F_i is monotone in v on the box, so its minimum lies on the face v = v_lo (sign > 0) or
v = v_hi (sign < 0); for the variables V0 whose partial's sign is not definite, by the mean-value theorem on the
segment from their centre c (inside the box)

    min F_i >= F_i(corner, c) + sum_{v in V0} dF_i/dv(Z x P) * [v_lo - c, v_hi - c],

and likewise the maximum: a point evaluation in Arb and, only for the indefinite variables, a first-order term.
The next box is [min F, max F] per component: it holds every member's next state when the box held every member's
state. Along a member's path the partials do change sign (in the fast phase, u from about 0.8 to 0.5: five of the
ten, each once; measured), so the indefinite terms are what carries the box across them.

On a narrow piece the box's width is the members' spread up to a small factor and, unlike the Taylor model's, does
not grow by itself (measured: the piece s in [1/15, 1/15 + 1.5e-4], x in [1/64, 1/64 + 2.4e-4], y in [1/256, 1/256
+ 5.7e-6] keeps a width of 0.011-0.014 in alpha from step 8000 to 30000, where the Taylor model is unbounded at
step 28297). Alone it does not enter R: a box in (alpha, delta) forgets which parameter each state belongs to, so its
eps = (alpha - alpha*(u))/u^3 is the slow manifold's variation across the box divided by u^3. Hence the cap: the
Taylor model keeps the members' correlation for (u, eps), and its Jacobians (and gradients) are taken over
B_t intersected with the monotone box M_t, both sound enclosures of every member's state, so the remainder no longer
feeds itself past M_t's width.

The capped state is a verify.certify.prefix.PrefixState in every other respect, so the split prefix
(verify.certify.prefix_split) runs on it unchanged: a cell's entry of kind "monotone" is a split tree of capped
states, which the independent re-checker replays with its own capped Prefix (recheck.certificates.CappedPrefix). It is
a route by name (verify.certify.family.ENTRY_ROUTES): on Region A cells it needs about half the plain split's leaves
but more CPU, and certified no cell the plain split did not (docs/atlas.md).
"""
from __future__ import annotations

from dataclasses import dataclass

from flint import arb

from .arbfun import exact
from .prefix import PrefixState, _jacobian, prefix_functions


def _sign(b) -> int:
    """+1 or -1 when every point of ball ``b`` has that sign, 0 when it does not have a definite sign."""
    return 1 if b > 0 else (-1 if b < 0 else 0)


def face_bound(value, grads: list, lo: list, hi: list, want: int):
    """An exact end point below (``want`` = -1) or above (+1) every value of ``value`` over the box [lo, hi] (lists
    of exact balls, one per variable), from ``grads`` (balls of its partials over the whole box): the monotonicity
    test of the module docstring."""
    pt, term = [], arb(0)
    for g, a, b in zip(grads, lo, hi):
        sign = _sign(g)
        if sign:
            pt.append(b if sign * want > 0 else a)
        else:
            c = (a + b) / 2                     # a ball holding the exact centre
            pt.append(c)
            term = term + g * (a.union(b) - c)  # every v - c, v in [a, b]
    v = value(pt) + term
    return v.lower() if want < 0 else v.upper()


@dataclass(frozen=True)
class MonotoneBox:
    """[lo, hi] of (alpha, delta) holding every member's state, and the parameter box's ends (exact balls)."""

    lo: tuple           # (alpha_lo, delta_lo)
    hi: tuple
    p_lo: tuple         # (s, x, y) lower ends
    p_hi: tuple

    @classmethod
    def at_zero(cls, P: tuple) -> "MonotoneBox":
        """Every member starts at (alpha, delta) = (0, 0)."""
        return cls((arb(0), arb(0)), (arb(0), arb(0)), tuple(exact(lo) for lo, _ in P), tuple(exact(hi) for _, hi in P))

    def with_parameters(self, P: tuple) -> "MonotoneBox":
        """The same states for a sub-box of the parameters (its members' states lie in this box)."""
        return MonotoneBox(self.lo, self.hi, tuple(exact(lo) for lo, _ in P), tuple(exact(hi) for _, hi in P))

    @property
    def bounded(self) -> bool:
        return all(v.is_finite() for v in self.lo + self.hi)

    def states(self) -> tuple:
        """(alpha, delta) as balls."""
        return self.lo[0].union(self.hi[0]), self.lo[1].union(self.hi[1])

    def stepped(self) -> "MonotoneBox":
        """The box one step later (module docstring), partials from the generated Jacobians over box x P."""
        fn = prefix_functions()
        lo, hi = list(self.lo + self.p_lo), list(self.hi + self.p_hi)
        A, Dl = self.states()
        pb = [a.union(b) for a, b in zip(self.p_lo, self.p_hi)]
        Ee = Dl.exp()
        jaa, jad, jda, jdd = _jacobian(fn.jac(A, Ee, *pb))
        jp = fn.jac_p(A, Ee, *pb)
        n = len(pb)
        # the partials of alpha' = alpha + a_inc and delta' = delta + inc in (alpha, delta, s, x, y)
        grads = ([jaa, jad, *jp[:n]], [jda, jdd, *jp[n:]])
        new_lo, new_hi = [], []
        for i, g in enumerate(grads):
            def value(q, i=i):
                return q[i] + fn.step(q[0], q[1].exp(), *q[2:])[i]
            new_lo.append(face_bound(value, g, lo, hi, -1))
            new_hi.append(face_bound(value, g, lo, hi, 1))
        return MonotoneBox(tuple(new_lo), tuple(new_hi), self.p_lo, self.p_hi)


class CappedState(PrefixState):
    """The Taylor-model prefix of verify.certify.prefix whose box of states B_t is intersected with the monotone box
    M_t (module docstring); call its methods inside an Arb precision."""

    def __init__(self, P: tuple):
        super().__init__(P)
        self.mono = MonotoneBox.at_zero(P)

    def member_box(self, dp):
        A, Dl = super().member_box(dp)
        if not self.mono.bounded:
            return A, Dl
        Ma, Md = self.mono.states()
        return (A.intersection(Ma) if A.is_finite() else Ma), (Dl.intersection(Md) if Dl.is_finite() else Md)

    def step(self, pc, pb, dp) -> None:
        nxt = self.mono.stepped() if self.mono.bounded else self.mono
        super().step(pc, pb, dp)            # its Jacobians over B_t capped by M_t
        self.mono = nxt

    def inherit(self, parent: "CappedState") -> None:
        """A half of ``parent``'s box at its step: the parent's monotone box holds the half's members' states."""
        self.mono = parent.mono.with_parameters(tuple(zip(
            (c - h for c, h in zip(self.Pc, self.H)), (c + h for c, h in zip(self.Pc, self.H)))))


__all__ = ["CappedState", "MonotoneBox", "face_bound"]
