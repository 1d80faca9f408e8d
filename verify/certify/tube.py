"""The entry tube: every member of a family cell carried from zero initialisation into the region R at once.

The prefix of one regime iterates the map; over a cell of regimes a time-indexed enclosure fails (members with
different step sizes fall at different times, and the Taylor model's remainder grows every step). But in the
plane of (alpha, delta) the members' trajectories are one curve: the increments are x A^(alpha, delta; s) and
y D^(alpha, delta; s) (:func:`linearity_obligation`), so with kappa = y/x fixed the direction of a step does not
depend on x, only its length does (measured: sts K = 4, eta in [1/16, 1/8], the curves of D = 64 and D = 512
agree to 1e-3). The tube is a neighbourhood of that curve, checked once, on boxes, for every member:

  graph       the curve as a graph over a clock, alpha while it rises steeply from 0 (the "alpha" graph), then
              zeta = delta + log s (the "zeta" graph: u = 1/(e^zeta + 1) whatever s, so that a range of lengths D
              follows nearly one curve; "delta" for one length is the same graph shifted); between two fences
              lower(cl) <= tr <= upper(cl), piecewise linear on
              knots c_0 < ... < c_n (tr: the other coordinate)
  invariance  for every box of the slabs [c_k, c_k+1], k < n - 1 (a quadtree of the slab in (cl, theta),
              tr = lower + theta (upper - lower)), and every member: the clock advances by more than 0 and less
              than the next slab, and the image lies between the fences, phi_upper = tr' - upper(cl') <= 0 and
              phi_lower = tr' - lower(cl') >= 0, each by a small margin (FENCE_MARGIN: what passes here must pass
              the re-checker's own enclosures of the same quantities). phi is enclosed in the mean-value form in
              (cl, theta): with the per-unit-x increments i_cl, i_tr and an edge of slope b,
                  phi = (theta - theta_edge) W(cl) + x (i_tr - b i_cl),  W = upper - lower,
              so the identity part is exact and interval arithmetic loses only second order in the box; a step
              that may cross into slab k + 1 is also checked against that slab's edge (slope b'):
              phi - (b' - b) [0, c_hi + x i_cl - c_k+1]
  start       one exact step from (0, 0) gives (alpha_1, delta_1) = (s x/(1 + s), 0) (as balls over the cell),
              inside the alpha graph
  handovers   the alpha graph's last slab lies inside the delta graph; the delta graph's last slab lies in R
              (u <= u0, |eps| <= C(u))
  time        in slab k the clock advances by at least inc_k a step, so at most ceil(width_k / inc_k) steps are
              spent there: T0 = 1 + the sum over both graphs bounds the step by which every member is in R, and
              z(T0) = 1/u^2 lies in [1/u0^2, z_end + T0 2 c_hi Q_max R_max^2] (z' - z <= 2 c Q R^2 in R)

Nothing here is trusted from the float construction (the reference curve, the fences' push and the knots):
the Arb checks decide, and recheck.certificates repeats them from the stored knots and quadtrees.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from ..model.numbers import frac_str
from ..run.cache import by_code_version
from flint import arb

from .arbfun import ball, exact, to_fraction
from .obligations import Obligation

CLOCKS = ("alpha", "delta", "zeta")
MAX_DEPTH = 10          # bisections of a slab's box (in the clock and in theta, together)
KNOT_BITS = 40          # knots and fence values are dyadics with this many fractional bits


def increments() -> tuple:
    """The reduced map's increments (alpha' - alpha, delta' - delta) as the derivation states them in (alpha, E, s, x,
    y), and their symbols by name."""
    from .formulas import certificate_formulas  # heavy: loads sympy
    m = certificate_formulas()["reduced_map"]
    a_inc, d_inc = m["alpha_increment"], m["delta_increment"]
    return a_inc, d_inc, {v.name: v for v in a_inc.free_symbols | d_inc.free_symbols}


@lru_cache(maxsize=None)
@by_code_version("tube-linearity")
def linearity_obligation() -> Obligation:
    """alpha' - alpha = x A^(alpha, E; s) and delta' - delta = y D^(alpha, E; s) (SymPy, on the generated map):
    the step's direction in the (alpha, delta) plane depends on x and y only through kappa = y/x."""
    import sympy as sp  # heavy: sympy

    a_inc, d_inc, names = increments()
    xa, ya = names["x"], names["y"]
    ahat, dhat = sp.cancel(a_inc / xa), sp.cancel(d_inc / ya)
    ok = not ({xa, ya} & (ahat.free_symbols | dhat.free_symbols))
    return Obligation("tube-linearity", "alpha' - alpha = x A^(alpha, E, s) and delta' - delta = y D^(alpha, E, s): "
                      "the increments divided by x and by y have no x or y left", "sympy", ok,
                      "SymPy cancels both quotients to expressions free of x and y" if ok else
                      f"free symbols {sorted(map(str, ahat.free_symbols | dhat.free_symbols))}")


@dataclass(frozen=True)
class Graph:
    """lower(cl) <= tr <= upper(cl) over the knots (exact dyadics), cl the clock ("alpha" or "delta")."""

    clock: str
    knots: tuple
    lower: tuple
    upper: tuple

    def slope(self, k: int, edge: str) -> Fraction:
        v = self.upper if edge == "upper" else self.lower
        return (v[k + 1] - v[k]) / (self.knots[k + 1] - self.knots[k])

    def as_dict(self) -> dict:
        return {"clock": self.clock, "knots": [frac_str(c) for c in self.knots],
                "lower": [frac_str(v) for v in self.lower], "upper": [frac_str(v) for v in self.upper]}


@dataclass
class GraphCheck:
    """The result of :func:`check_graph`: a quadtree per checked slab ("1": split in four, "0": a leaf), the
    least clock advance a step on each (an exact lower bound), and the first failure."""

    ok: bool
    trees: list = field(default_factory=list)
    inc_lo: list = field(default_factory=list)
    failure: str = ""
    boxes: int = 0


@lru_cache(maxsize=None)
def tube_functions() -> tuple:
    """Generated Arb code of (the increments, their (alpha, delta)-Jacobian[, their s-derivatives]) in one
    function each, so that shared subexpressions are computed once (verify.certify.formulas.compile_formulas)."""
    from .coordinates import PARAM_NAMES  # heavy: loads sympy
    from .formulas import compile_formulas, file_map  # heavy: loads sympy
    fm = file_map()
    m, j = fm["reduced_map"], fm["jacobian"]
    args = ("alpha", "E") + tuple(PARAM_NAMES)
    base = [m["alpha_increment"], m["delta_increment"], j["da_alpha"], j["da_delta"], j["dd_alpha"], j["dd_delta"]]
    return (compile_formulas(base, args), compile_formulas(base + [j["da_s"], j["dd_s"]], args),
            compile_formulas(base[:2], args))


def state_of(clock: str, cl, tr, S) -> tuple:
    """(alpha, E = e^delta) of a graph's point: clock alpha (tr = delta), delta (tr = alpha) or zeta = delta + log s
    (tr = alpha), in which u = 1/(e^zeta + 1) does not depend on s (so the members of a range of lengths D follow
    nearly one curve)."""
    if clock == "alpha":
        return cl, tr.exp()
    return tr, (cl.exp() / S if clock == "zeta" else cl.exp())


def _balls(clock: str, cl, tr, S, KAP, fn=None, with_s: bool = False, jac: bool = True):
    """(i_cl, i_tr[, d i_cl/d cl, d i_cl/d tr, d i_tr/d cl, d i_tr/d tr[, d i_cl/ds, d i_tr/ds]]): the
    per-unit-x increments at x = 1, y = kappa, from the generated map and its Jacobians (w.r.t. alpha, delta; d/d
    zeta = d/d delta, and at fixed zeta d/ds = d/ds at fixed delta - (1/s) d/d delta)."""
    full, with_ds, step = tube_functions()
    one = exact(1)
    al, E = state_of(clock, cl, tr, S)
    v = (with_ds if with_s else full if jac else step)(al, E, S, one, KAP)
    a, d = v[0], v[1]
    if clock == "alpha":
        out = (a, d) + ((v[2], v[3], v[4], v[5]) if jac or with_s else ())
        return out + ((v[6], v[7]) if with_s else ())
    out = (d, a) + ((v[5], v[4], v[3], v[2]) if jac or with_s else ())
    if with_s:
        ds_a, ds_d = (v[6] - v[3] / S, v[7] - v[5] / S) if clock == "zeta" else (v[6], v[7])
        out = out + (ds_d, ds_a)
    return out


@dataclass(frozen=True)
class Slab:
    """Slab k of a graph as exact Arb balls: its first knot, fence values and slopes, the width's slope, the next
    slab's width and the fences' bends at its end (computed once per slab)."""

    k: int
    ck: object
    Lk: object
    Wk: object
    bL: object
    bU: object
    gW: object
    top: object            # c_{k+1}
    width_next: object     # c_{k+2} - c_{k+1}
    bends: tuple           # (lower, upper) slope on slab k + 1 minus slope on slab k

    def transverse(self, C, Th):
        """tr = lower(cl) + theta (upper(cl) - lower(cl)) on the slab (balls in, ball out)."""
        return self.Lk + self.bL * (C - self.ck) + Th * (self.Wk + self.gW * (C - self.ck))

    @classmethod
    def of(cls, g: "Graph", k: int) -> "Slab":
        bL, bU = g.slope(k, "lower"), g.slope(k, "upper")
        nxt = k + 2 < len(g.knots)
        return cls(k, exact(g.knots[k]), exact(g.lower[k]), exact(g.upper[k] - g.lower[k]), exact(bL), exact(bU),
                   exact(bU - bL), exact(g.knots[k + 1]), exact(g.knots[k + 2] - g.knots[k + 1]) if nxt else None,
                   (exact(g.slope(k + 1, "lower") - bL), exact(g.slope(k + 1, "upper") - bU)) if nxt else None)


def box_phi(g: Graph, sl: Slab, box: tuple, S, X, KAP, fn, Sm=None) -> tuple:
    """(phi_lower, phi_upper, x i_cl) over the box (c_lo, c_hi, t_lo, t_hi) (exact Arb points) of the slab ``sl``
    (module docstring), for every s in S: the mean-value form in (cl, theta) and, when S is an interval (a range
    of lengths D), in s about its centre ``Sm`` as well (the dependence on s of i_tr and i_cl largely cancels in
    i_tr - b i_cl)."""
    c_lo, c_hi, t_lo, t_hi = box
    C, Th = c_lo.union(c_hi), t_lo.union(t_hi)
    cm, tm = (c_lo + c_hi) / 2, (t_lo + t_hi) / 2
    W, Wm = sl.Wk + sl.gW * (C - sl.ck), sl.Wk + sl.gW * (cm - sl.ck)
    ranged = Sm is not None
    bx = _balls(g.clock, C, sl.transverse(C, Th), S, KAP, fn, with_s=ranged)
    icl, itr, icl_c, icl_t, itr_c, itr_t = bx[:6]
    iclm, itrm = _balls(g.clock, cm, sl.transverse(cm, tm), Sm if ranged else S, KAP, jac=False)
    out = []
    for theta_e, b in ((0, sl.bL), (1, sl.bU)):
        # phi = (theta - theta_e) W(cl) + x psi(cl, theta, s), psi = i_tr - b i_cl in the mean-value form, the
        # clock's and s's shares of it times x as one product (x is one number for a member)
        # (theta's term keeps the identity and x's share together: W (1 + x psi_t) is the transverse contraction)
        psi_t, psi_c = itr_t - b * icl_t, itr_c - b * icl_c
        psi = (itrm - b * iclm) + (psi_c + psi_t * (sl.bL + Th * sl.gW)) * (C - cm)
        if ranged:
            psi = psi + (bx[7] - b * bx[6]) * (S - Sm)
        first = (tm - theta_e) * Wm + W * (1 + X * psi_t) * (Th - tm) + (Th - theta_e) * sl.gW * (C - cm)
        out.append(first + X * psi)
    return out[0], out[1], X * icl


# What the builder accepts, the re-checker (recheck.certificates) must accept from the stored numbers alone. Its
# enclosures of phi and of the clock advance are the same mean-value forms written independently, and differ from
# these by rounding (Arb's radii carry 30 bits: the ends of a ball as wide as the tube move by ~2^-30 of its width)
# and by second-order terms of the box (an audit saw 5e-12 on a tube 0.02 wide, at D = 109, where a leaf was
# accepted here with phi's lower end at 0). So a leaf must clear every test by a margin: FENCE_MARGIN (64 times
# that rounding) of the tube's width at the slab's first knot for phi, and of the next slab's width for the clock.
FENCE_MARGIN = Fraction(1, 2**24)


def gap_failure(sl: Slab, box: tuple, pL, pU, inc) -> str:
    """Why the enclosures (phi_lower, phi_upper, x i_cl) of a box of slab ``sl`` do not show that its image lies in
    the tube with the margin FENCE_MARGIN ("" if they do): the clock advances by more than m_c and less than the
    next slab's width minus m_c, phi_lower >= m and phi_upper <= -m (against slab k + 1's fences too when the step
    may cross c_(k+1)), m = FENCE_MARGIN W(c_k), m_c = FENCE_MARGIN (c_(k+2) - c_(k+1))."""
    if not (pL.is_finite() and pU.is_finite() and inc.is_finite()):
        return "an unbounded enclosure"
    m, m_c = exact(FENCE_MARGIN) * sl.Wk, exact(FENCE_MARGIN) * sl.width_next
    if not inc > m_c:
        return f"the clock may not advance (x i_cl = {inc.str(5, radius=False)})"
    if not inc < sl.width_next - m_c:
        return f"a step may pass the next slab (x i_cl = {inc.str(5, radius=False)})"
    # a step from cl <= c_hi passes c_{k+1} by at most c_hi + x i_cl - c_{k+1}: there the edge has bent by b' - b
    over = box[1] + inc.upper() - sl.top
    crossing = not over <= 0
    span = arb(0).union(over.upper()) if crossing else None
    for (name, phi, sign), bend in zip((("lower", pL, 1), ("upper", pU, -1)), sl.bends):
        for v in [phi] + ([phi - bend * span] if crossing else []):
            if not (v >= m if sign > 0 else v <= -m):
                return f"the image may leave the {name} fence (phi in [{float(v.lower()):.3g}, " \
                       f"{float(v.upper()):.3g}], margin {float(m.mid()):.3g})"
    return ""


def leaf_failure(g: Graph, sl: Slab, box: tuple, S, X, KAP, fn, Sm=None) -> tuple:
    """("", the step's least clock advance) when every member's image of the box lies in the tube with the margin
    of :func:`gap_failure` (module docstring), else (why, None)."""
    pL, pU, inc = box_phi(g, sl, box, S, X, KAP, fn, Sm)
    why = gap_failure(sl, box, pL, pU, inc)
    return (why, None) if why else ("", inc.lower())


def s_pieces(s_range: tuple, n: int) -> list:
    """The range of s cut into ``n`` equal pieces, as (ball, exact centre ball) (one point: [(ball, None)])."""
    lo, hi = s_range
    if lo == hi:
        return [(exact(lo), None)]
    cuts = [lo + (hi - lo) * Fraction(j, n) for j in range(n + 1)]
    return [(ball(a, b), exact((a + b) / 2)) for a, b in zip(cuts, cuts[1:])]


def check_graph(g: Graph, s_range: tuple, X, KAP, *, pieces: int = 1, max_depth: int = MAX_DEPTH,
                trees: list | None = None) -> GraphCheck:
    """Every box of every slab but the last maps into the tube (module docstring), for every s in ``s_range``
    (exact (lo, hi)): over the whole range, or else over each of its ``pieces`` (each its own mean-value form in
    s: the s-derivative's enclosure narrows with the piece); bisected up to ``max_depth`` (or, with ``trees``,
    exactly the stated quadtrees). Call inside an Arb precision."""
    from .prefix import prefix_functions  # heavy: loads sympy
    fn = prefix_functions()
    whole, parts = s_pieces(s_range, 1), s_pieces(s_range, pieces)
    res = GraphCheck(True)
    n = len(g.knots) - 1
    for k in range(n - 1):
        sl = Slab.of(g, k)
        least = [None]

        def passes(*box) -> str:
            # the whole s range first; when that fails, each of its pieces (a leaf holds if either way holds)
            why = ""
            for split in ((whole, parts) if pieces > 1 and s_range[0] < s_range[1] else (whole,)):
                lows = []
                for S, Sm in split:
                    why, lo = leaf_failure(g, sl, box, S, X, KAP, fn, Sm)
                    if why:
                        break
                    lows.append(lo)
                if not why:
                    lo = min(lows)
                    least[0] = lo if least[0] is None else min(least[0], lo)
                    return ""
            return why

        root = (exact(g.knots[k]), sl.top, exact(0), exact(1))
        tree = _walk(passes, root, max_depth, None if trees is None else trees[k])
        if isinstance(tree, tuple):
            res.ok, res.failure = False, f"{g.clock} graph, slab {k} of {n} (clock in [{float(g.knots[k]):.6g}, " \
                                         f"{float(g.knots[k + 1]):.6g}]): {tree[1]}"
            return res
        res.trees.append(tree)
        res.inc_lo.append(to_fraction(least[0]))
        res.boxes += tree.count("0")
    return res


def _walk(passes, box: tuple, max_depth: int, tree: str | None):
    """The quadtree of ``box`` whose leaves pass (a string; depth-first, "1" = split in four in (cl, theta)),
    or (False, why) for the first leaf that fails at ``max_depth``; with ``tree`` given, exactly its leaves."""
    out: list = []
    pos = [0]

    def rec(b, depth):
        if tree is not None:
            if pos[0] >= len(tree):
                return "the stated quadtree ends early"
            bit = tree[pos[0]]
            pos[0] += 1
            if bit == "0":
                why = passes(*b)
                out.append("0")
                return why
            if bit != "1" or depth >= max_depth:
                return "the stated quadtree is malformed or too deep"
        else:
            why = passes(*b)
            if not why:
                out.append("0")
                return ""
            if depth >= max_depth:
                return why
        out.append("1")
        c_lo, c_hi, t_lo, t_hi = b
        cm, tm = (c_lo + c_hi) / 2, (t_lo + t_hi) / 2      # exact: dyadic endpoints, far inside the precision
        for q in ((c_lo, cm, t_lo, tm), (c_lo, cm, tm, t_hi), (cm, c_hi, t_lo, tm), (cm, c_hi, tm, t_hi)):
            why = rec(q, depth + 1)
            if why:
                return why
        return ""

    why = rec(box, 0)
    if not why and tree is not None and pos[0] != len(tree):
        why = "the stated quadtree has leaves left over"
    return (False, why) if why else "".join(out)


def fence_value(g: Graph, edge: str, cl: Fraction) -> tuple:
    """(k, value) of the fence ``edge`` at the clock ``cl`` (exact; k its slab)."""
    k = min(max(bisect.bisect_right(g.knots, cl) - 1, 0), len(g.knots) - 2)
    v = g.upper if edge == "upper" else g.lower
    return k, v[k] + g.slope(k, edge) * (cl - g.knots[k])


def inside(g: Graph, cl_lo: Fraction, cl_hi: Fraction, tr_lo: Fraction, tr_hi: Fraction, *, last: int) -> bool:
    """Every point of [cl_lo, cl_hi] x [tr_lo, tr_hi] lies in the tube's slabs 0..last - 1 (the fences are linear
    on each slab, so their extremes over a clock range are at its ends and at the knots inside it)."""
    if not (g.knots[0] <= cl_lo and cl_hi <= g.knots[last]):
        return False
    pts = [cl_lo, cl_hi] + [c for c in g.knots[1:last] if cl_lo < c < cl_hi]
    return all(fence_value(g, "lower", c)[1] <= tr_lo and tr_hi <= fence_value(g, "upper", c)[1] for c in pts)


def slab_boxes(g: Graph, k: int, depth: int) -> list:
    """The slab's (cl, theta) grid of 2^depth x 2^depth boxes, as (c_lo, c_hi, t_lo, t_hi)."""
    n = 2 ** depth
    c0, c1 = g.knots[k], g.knots[k + 1]
    return [(c0 + (c1 - c0) * i / n, c0 + (c1 - c0) * (i + 1) / n, Fraction(j, n), Fraction(j + 1, n))
            for i in range(n) for j in range(n)]


def box_state(g: Graph, k: int, box: tuple) -> tuple:
    """(cl ball, tr ball) of a (cl, theta) box of slab k, exact rationals rounded outward (call inside a
    precision)."""
    c_lo, c_hi, t_lo, t_hi = box
    C = ball(c_lo, c_hi)
    return C, Slab.of(g, k).transverse(C, ball(t_lo, t_hi))


__all__ = ["CLOCKS", "FENCE_MARGIN", "Graph", "GraphCheck", "Slab", "box_phi", "box_state", "check_graph",
           "fence_value", "increments", "inside", "gap_failure", "leaf_failure", "linearity_obligation", "s_pieces",
           "slab_boxes", "state_of"]
