"""The mean-value (centred) step of a map in Arb ball arithmetic: the one Arb prefix step of every certified iteration.

Why not iterate balls naively: evaluating a map F on a box treats every occurrence of a variable independently (the
dependency / wrapping effect), so a box's radius is multiplied by a factor > 1 every step. Instead a state is a centre
c (exact dyadic balls, radius 0) and radii r, the box B = c + [-r, r]; for every z in B the mean-value theorem gives
F(z) in F(c) + J(B) (z - c), J(B) an enclosure of F's Jacobian over the whole box, so

    F(B)  is contained in  F(c) + J(B) [-r, r]        (every operation outward-rounded by Arb),

and the next state is that ball re-centred: its midpoint (exact) the new centre, its radius the new radius. Where F
contracts (|J| < 1) the radius shrinks, where F is neutral (|J| = 1) it grows only by the rounding of F(c), so a
horizon of T steps costs radii of about T ulps: the first-order part of Lohner's method (as in CAPD).

The order of additions. A term J_ij [-r_j, r_j] has midpoint exactly 0 (arb(0, r) times a ball), so adding it never
moves a midpoint: the centres do not depend on the order. Radii are added rounded up to 30 bits (Arb's mag_t), so
the order fixes their last bits; each user therefore lists the summands of each component in its own order (the
reduced engine interleaves its rows' increments of delta with their first-order terms), and this module adds them in
exactly that order.

Users: verify.engines.arb.CertifiedState (the reduced recursion, M rows alpha_1..alpha_M and delta, its Jacobian at
JAC_BITS with ReLU's 0/0 widening), verify.certify.prefix.PrefixState (the invariant map, one row, with its Taylor
model's sensitivities) and through it verify.certify.prefix_monotone.CappedState, and the bench's plain baseline
(verify.bench.timings.arb_baseline_seconds). A new certified iteration states its map's summands
(:func:`mean_value_step`'s ``terms``) and writes no step of its own. (The independent re-checker, recheck/, keeps its
own step: it imports nothing of verify.)
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from flint import arb


def spread(r):
    """[-r, r] as a ball (midpoint exactly 0): the box's deviation z - c in one coordinate; exact 0 when r = 0."""
    return arb(0, r) if r != 0 else arb(0)


def box(c, r):
    """c + [-r, r] (a point, c itself, when r = 0): every state the centre c and radius r stand for."""
    return c + spread(r) if r != 0 else c


def finite(balls) -> bool:
    """True when every ball is finite (a Python number, the generated code's exact constant, counts as finite)."""
    return all(isinstance(b, int) or b.is_finite() for b in balls)


def recentre(balls) -> tuple[list, list]:
    """(midpoints, radii) of ``balls`` as exact balls: the centre and radii of a state whose box holds them."""
    return [arb(b.mid()) for b in balls], [arb(b.rad()) for b in balls]


def image(summands: Sequence, spreads: Sequence):
    """One component of F(c) + J(B) [-r, r]: the sum, left to right, of ``summands``, each either a ball (a part of
    F_i(c); the first summand is one) or a pair (J_ij, j) standing for J_ij [-r_j, r_j] (``spreads[j]``)."""
    total = summands[0]
    for t in summands[1:]:
        total = total + (t[0] * spreads[t[1]] if type(t) is tuple else t)
    return total


def mean_value_step(centre: Sequence, radii: Sequence, terms: Callable, unbounded: Callable) -> tuple[list, list]:
    """The centres and radii of the state one step later (module docstring): the ball F(c) + J(B) [-r, r] of each
    component, re-centred.

    ``centre`` holds exact balls and ``radii`` exact balls >= 0, one per coordinate. ``terms(B)`` is given the boxes
    B = c + [-r, r] (:func:`box`) and returns, for each component i of the map, its summands in the order they are to
    be added (:func:`image`): parts of F_i(c) evaluated at the centre, and pairs (J_ij, j) with J_ij an enclosure of
    dF_i/dz_j over B (a coordinate of radius 0 needs none: its deviation is exactly 0). When an image ball is not
    finite the exception ``unbounded()`` returns is raised (the state is unchanged: the caller's message can report
    it)."""
    e = [spread(r) for r in radii]
    balls = [image(t, e) for t in terms([box(c, r) for c, r in zip(centre, radii)])]
    if not finite(balls):
        raise unbounded()
    return recentre(balls)


__all__ = ["box", "finite", "image", "mean_value_step", "recentre", "spread"]
