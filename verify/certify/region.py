"""The trapping region R = {0 < u <= u0, |alpha - alpha*(u)| <= C(u) u^3} and its Arb invariance check.

In the coordinates of :mod:`verify.certify.coordinates` R is {0 < u <= u0, |eps| <= C(u)}: C(u) is constant
on each annulus (one value C_i per shell, non-increasing inwards; one value for all by default). A wide C near
u0 admits the large lag of alpha behind alpha*(u) where alpha relaxes slowly (u near 1, D large), a tight one
near the manifold keeps the decay's enclosure thin.
We cover R by boxes: the annuli [u0 r^(i+1), u0 r^i] (i < J, one per shell;
r = 1/2 by default, the dyadic shells u <= u0 2^-j) and the core [0, u0 r^J], each cut into ``n_u``
slabs and ``n_eps`` eps-pieces. On each box B, with the invariants (s, x, y) given as balls (points for
one regime, intervals for a cell of a family), Arb encloses, by the generated code, G (mean-value form:
:func:`mean_value`), X = exprel(c u^2 G) (monotone), R = u/u', the normalised decay Q = (u - u')/(c u^3),
u' = u/R and eps'. The box passes when

    R > 0 (so u' > 0),   Q > 0 (so u' < u <= u0),   |eps'| <= C(u') for every u' in the image's u-range

(C non-increasing inwards: the least C_i over the annuli that range meets), and a box that does not pass is
bisected (u and eps) up to ``max_depth`` times. If every box passes and the boxes cover R (checked by a
sweep, not assumed), the exact map sends R into R.
The same boxes give the shells' enclosures: on {u <= u0 r^j} the normalised decay Q lies in [a_j, b_j]
(the hull over the boxes that meet the shell), and so do the observables' normalised ratios
Lt = (L - L_opt)/(pre_L L2(0) u^2) and W = h + eps u^2 = ||W_X - V*||_F/(u ||V*||_F).
"""
from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..errors import InvalidParameter
from ..run.cache import by_code_version
from ..model.numbers import frac_str
from ..model.precision import arb_precision
from .arbfun import ball, exact, exprel_ball, hi_frac, lo_frac  # noqa: F401  (re-exported)
from .formulas import arb_functions
from . import scaled as scaled_chart
from .obligations import Obligation
from .hulls import OverlapIndex, _merge  # noqa: F401  (re-exported)


@lru_cache(maxsize=None)
@by_code_version("exprel")
def exprel_obligation() -> Obligation:
    """exprel(y) = int_0^1 e^{y s} ds for y != 0 (SymPy): the monotonicity behind arbfun.exprel_ball."""
    y = sp.Symbol("y", nonzero=True, real=True)
    s = sp.Symbol("s", positive=True)
    integral = sp.integrate(sp.exp(y * s), (s, 0, 1))
    diff = sp.simplify(integral - (sp.exp(y) - 1) / y)
    deriv = sp.simplify(sp.diff(sp.exp(y * s), y) - s * sp.exp(y * s))
    ok = diff == 0 and deriv == 0
    return Obligation("exprel-integral", "exprel(y) = int_0^1 e^{ys} ds and d/dy e^{ys} = s e^{ys} > 0 on s in (0, 1]: "
                      "exprel is increasing, so its range on [lo, hi] is [exprel(lo), exprel(hi)]", "sympy", ok,
                      "SymPy integrates and simplifies both differences to 0" if ok else f"differences {diff}, {deriv}")


@dataclass(frozen=True)
class Box:
    """[u_lo, u_hi] x [e_lo, e_hi] (exact rationals) and its bisection depth."""

    u_lo: Fraction
    u_hi: Fraction
    e_lo: Fraction
    e_hi: Fraction
    depth: int = 0

    def split(self) -> list["Box"]:
        um, em = (self.u_lo + self.u_hi) / 2, (self.e_lo + self.e_hi) / 2
        d = self.depth + 1
        return [Box(a, b, c, e, d) for a, b in ((self.u_lo, um), (um, self.u_hi))
                for c, e in ((self.e_lo, em), (em, self.e_hi))]


@dataclass
class BoxResult:
    """Enclosures on one box (exact rational endpoints, rounded outward)."""

    box: Box
    Q: tuple          # (lo, hi) of (u - u')/(c u^3)
    eps_next: tuple   # (lo, hi) of eps'
    R_lo: Fraction    # lower bound of u/u'
    Lt: tuple         # (lo, hi) of (L - L_opt)/(pre_L L2(0) u^2)
    W: tuple          # (lo, hi) of h + eps u^2
    finite: bool
    u_next: tuple = (Fraction(0), Fraction(0))   # (lo, hi) of u'

    def passes(self, profile: "Profile") -> bool:
        if not (self.finite and self.R_lo > 0 and self.Q[0] > 0):
            return False
        C = profile.least(*self.u_next)
        return -C <= self.eps_next[0] and self.eps_next[1] <= C


def mean_value(f3, f, U, E, Uc, Ec, P):
    """An enclosure of f over the box U x E from ``f3(u, eps, *P) -> (f, f_u, f_eps)`` and ``f`` alone: the
    mean-value form f(c) + f_u(B)(U - u_c) + f_eps(B)(E - eps_c), intersected with the direct evaluation
    f(B) (both contain the range; the first loses only second-order width to the dependency effect)."""
    fB, fu, fe = f3(U, E, *P)
    mv = f(Uc, Ec, *P)[0] + fu * (U - Uc) + fe * (E - Ec)
    if not mv.is_finite():
        return fB
    if not fB.is_finite():
        return mv
    return mv.intersection(fB)


def evaluate_box(box: Box, P: tuple, c, observables: bool = True, fn=None) -> BoxResult:
    """Arb enclosures of the (u, eps) map and (``observables``) the observables' ratios on ``box``, for every
    invariant in the balls ``P`` = (s, x, y) with cubic coefficient in the ball ``c`` (call inside a precision).
    ``fn``: the chart's compiled formulas (the (u, eps) chart's by default; verify.certify.scaled's in e = eps/s)."""
    fn = fn or arb_functions()
    U, E = ball(box.u_lo, box.u_hi), ball(box.e_lo, box.e_hi)
    Uc, Ec = exact((box.u_lo + box.u_hi) / 2), exact((box.e_lo + box.e_hi) / 2)
    G = mean_value(fn.G, fn.G0, U, E, Uc, Ec, P)
    Xb = exprel_ball(c * U * U * G)
    R, Q = fn.RQ(U, G, Xb, c, *P)
    W = U / R                                   # u' = u / R; R > 0 is checked below
    en = fn.eps_next(U, E, W, Q, R, c, *P)[0]
    if observables:
        Lt = mean_value(fn.loss_ratio, fn.loss_ratio0, U, E, Uc, Ec, P)
        wq = mean_value(fn.w_over_u, fn.w_over_u0, U, E, Uc, Ec, P)
    else:
        Lt = wq = G * 0                        # not needed (coarse checks): a finite placeholder
    balls = (G, Xb, R, Q, W, en, Lt, wq)
    if not all(b.is_finite() for b in balls):
        z = (Fraction(0), Fraction(0))
        return BoxResult(box, z, z, Fraction(0), z, z, False)
    rng = lambda b: (lo_frac(b), hi_frac(b))  # noqa: E731
    return BoxResult(box, rng(Q), rng(en), lo_frac(R), rng(Lt), rng(wq), True, rng(W))


def parameter_balls(P: tuple) -> tuple:
    """Arb balls of invariants given as exact Fractions or intervals (lo, hi) (call inside a precision)."""
    return tuple(ball(*p) if isinstance(p, tuple) else exact(Fraction(p)) for p in P)


@dataclass(frozen=True)
class Profile:
    """C(u) on the region's annuli: ``values[i]`` on [u0 r^(i+1), u0 r^i] (i < shells) and ``values[shells]`` on
    the core [0, u0 r^shells]; non-increasing inwards."""

    u0: Fraction
    ratio: Fraction
    values: tuple

    @classmethod
    def constant(cls, u0, ratio, shells, C) -> "Profile":
        return cls(u0, ratio, (Fraction(C),) * (shells + 1))

    def __post_init__(self):
        if any(b > a for a, b in zip(self.values, self.values[1:])):
            raise ValueError("C(u) must be non-increasing inwards")
        # the annuli's edges u0 r^J < ... < u0 r < u0, ascending (looked up by bisection)
        J = len(self.values) - 1
        object.__setattr__(self, "_edges", tuple(self.u0 * self.ratio ** (J - k) for k in range(J + 1)))

    def annulus(self, u: Fraction) -> int:
        """The deepest annulus index whose closed interval holds u (the core for u <= u0 r^shells)."""
        J = len(self.values) - 1
        # edges[k] = u0 r^(J - k); annulus i = [u0 r^(i+1), u0 r^i] is deepest-holding u when u <= u0 r^i and
        # u > u0 r^(i+1) (or i = J for u <= u0 r^J)
        k = bisect.bisect_left(self._edges, u)        # first edge >= u
        return max(0, min(J, J - k))

    def _shallowest(self, u: Fraction) -> int:
        """The shallowest annulus whose closed interval holds u."""
        i = self.annulus(u)
        return i - 1 if i > 0 and u >= self.u0 * self.ratio**i else i

    def least(self, lo: Fraction, hi: Fraction) -> Fraction:
        """min C over the annuli meeting [lo, hi] (the deepest one's)."""
        return self.values[self.annulus(max(lo, Fraction(0)))]

    def most(self, lo: Fraction, hi: Fraction) -> Fraction:
        """max C over the annuli meeting [lo, hi] (the shallowest one's)."""
        return self.values[self._shallowest(min(hi, self.u0))]

    @property
    def C(self) -> Fraction:
        """The innermost (smallest) value: C near the manifold."""
        return self.values[-1]

    def runs(self) -> list[list]:
        """The values as a certificate file stores them ("C_runs"): [[C, count], ...] from the outermost annulus
        inwards, each exact C with the number of consecutive annuli that carry it (C(u) is mostly constant)."""
        return [[frac_str(v), len(list(same))] for v, same in itertools.groupby(self.values)]

    @classmethod
    def of_runs(cls, u0, ratio, shells: int, runs) -> "Profile":
        """The profile of a file's "C_runs" (:meth:`runs`); ValueError unless the counts (integers >= 1) add up to
        the shells' annuli and the core, shells + 1."""
        if not all(isinstance(n, int) and n >= 1 for _, n in runs) or sum(n for _, n in runs) != shells + 1:
            raise ValueError(f"C_runs must count {shells + 1} annuli in runs [C, count >= 1]")
        return cls(Fraction(u0), Fraction(ratio), tuple(c for v, n in runs for c in [Fraction(v)] * n))


def initial_boxes(profile: Profile, n_u: int, n_eps: int) -> list[Box]:
    """The annuli [u0 r^(i+1), u0 r^i] of the shells (r = the profile's ratio) and the core [0, u0 r^shells],
    each cut into n_u slabs x n_eps eps-pieces of [-C_i, C_i]."""
    J = len(profile.values) - 1
    cuts = [profile.u0 * profile.ratio**i for i in range(J + 1)] + [Fraction(0)]
    boxes = []
    for i, (hi, lo) in enumerate(zip(cuts, cuts[1:])):
        C = profile.values[i]
        eps_cuts = [-C + 2 * C * k / n_eps for k in range(n_eps + 1)]
        for k in range(n_u):
            a, b = lo + (hi - lo) * k / n_u, lo + (hi - lo) * (k + 1) / n_u
            boxes += [Box(a, b, e0, e1) for e0, e1 in zip(eps_cuts, eps_cuts[1:])]
    return boxes


def coverage_gap(boxes, profile: Profile):
    """None if the boxes cover R = {0 <= u <= u0, |eps| <= C(u)}; else a point (u-slab, eps) left uncovered.

    Sweep over u: between consecutive box edges the set of boxes spanning the slab is fixed, and
    their eps-intervals must chain from -C to C, C the largest value on the annuli the slab meets.
    """
    u0 = profile.u0
    edges = sorted({b.u_lo for b in boxes} | {b.u_hi for b in boxes} | {Fraction(0), u0})
    if edges[0] < 0 or edges[-1] > u0:
        edges = [e for e in edges if 0 <= e <= u0]
    starts = sorted(boxes, key=lambda b: b.u_lo)
    active, i = [], 0
    for lo, hi in zip(edges, edges[1:]):
        while i < len(starts) and starts[i].u_lo <= lo:
            active.append(starts[i])
            i += 1
        active = [b for b in active if b.u_hi > lo]
        spanning = sorted(((b.e_lo, b.e_hi) for b in active if b.u_lo <= lo and b.u_hi >= hi))
        C = profile.values[profile.annulus(hi)]    # the open slab lies in the annulus just below hi
        reach = -C
        for e0, e1 in spanning:
            if e0 > reach:
                break
            reach = max(reach, e1)
        if reach < C:
            return (lo, hi), reach
    return None


def _hull_of(r: BoxResult) -> dict:
    return {"a": r.Q[0], "b": r.Q[1], "Lt": r.Lt, "W": r.W}


@dataclass
class RegionCheck:
    """The outcome of the invariance check: boxes, their enclosures, obligations, shells."""

    u0: Fraction
    profile: Profile
    shells: int
    ratio: Fraction = Fraction(1, 2)
    results: list = field(default_factory=list)
    obligations: list = field(default_factory=list)

    @property
    def C(self) -> Fraction:
        """C near the manifold (the innermost value of the profile)."""
        return self.profile.C

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.obligations)

    def hull(self, lo: Fraction, hi: Fraction) -> dict | None:
        """Hulls over every box that meets {lo <= u <= hi} (u_lo <= hi and u_hi >= lo, so a box straddling
        either end counts): the normalised decay Q in [a, b], and the observables' ratios Lt and W = h + eps u^2.
        None when no box meets the range (a range outside the cover)."""
        if getattr(self, "_index_n", None) != len(self.results):
            rows = [(r.box.u_lo, r.box.u_hi, _hull_of(r)) for r in self.results]
            self._index, self._index_n = OverlapIndex(rows), len(self.results)
        return self._index.hull(lo, hi)

    def shell_bounds(self, j: int) -> dict:
        """The hulls on the whole shell {u <= u0 r^j}."""
        uj = self.u0 * self.ratio**j
        return {"j": j, "u_j": uj} | self.hull(Fraction(0), uj)

    def summary(self) -> dict:
        worst = max((max(abs(r.eps_next[0]), abs(r.eps_next[1])) / self.profile.least(*r.u_next)
                     for r in self.results), default=Fraction(0))
        return {"boxes": len(self.results), "max_depth": max((r.box.depth for r in self.results), default=0),
                "max_abs_eps_next_over_C": float(worst),
                "min_Q": str(min((r.Q[0] for r in self.results), default=Fraction(0))),
                "min_R": str(min((r.R_lo for r in self.results), default=Fraction(0)))}


def check_region(P: tuple, u0: Fraction, C, *, shells: int, n_u: int = 8, n_eps: int = 2,
                 max_depth: int = 6, bits: int = 128, boxes: list | None = None,
                 ratio: Fraction = Fraction(1, 2), observables: bool = True, scaled: bool = False) -> RegionCheck:
    """Check that the exact map sends R(u0, C) into itself (module docstring). ``C``: one value, or a
    :class:`Profile` (one per annulus).

    ``P``: the invariants (s, x, y), each an exact Fraction (one regime) or an interval (lo, hi) (a cell of a
    family: the check then holds for every invariant in the box). ``boxes``: a cover to check instead of
    :func:`initial_boxes` (a cover with a hole fails the coverage obligation). ``observables=False`` skips
    the enclosures of Lt and W (a coarse check of invariance only). ``scaled``: the boxes' second coordinate is
    e = eps/s and C bounds it (verify.certify.scaled: regular at s = 0, so s may be an interval [0, s_hi], every
    D >= K/rho_hi at once); the chart's SymPy obligations join the check's.
    """
    if not (0 < u0 < 1):
        raise InvalidParameter("u0", str(u0), "must satisfy 0 < u0 < 1 (off-support attention mass)")
    profile = C if isinstance(C, Profile) else Profile.constant(u0, ratio, shells, C)
    if profile.C <= 0:
        raise InvalidParameter("C", str(profile.C), "must be > 0")
    rc = RegionCheck(u0, profile, shells, ratio)
    fn = None
    if scaled:
        fn = scaled_chart.arb_functions()
        rc.obligations += list(scaled_chart.obligations())
    todo = list(boxes) if boxes is not None else initial_boxes(profile, n_u, n_eps)
    failed = None
    with arb_precision(bits):
        Pb = parameter_balls(P)
        c = arb_functions().c(*Pb)[0]
        while todo:
            box = todo.pop()
            res = evaluate_box(box, Pb, c, observables, fn)
            if res.passes(profile):
                rc.results.append(res)
            elif box.depth < max_depth:
                todo += box.split()
            else:
                failed = res
                break
    if failed is None:
        # Only a completed check has a cover to inspect (a failing box stops the check).
        gap = coverage_gap([r.box for r in rc.results], profile)
        rc.obligations.append(Obligation(
            "region-cover", f"the boxes cover R = {{0 <= u <= {u0}, |eps| <= C(u)}}, C = {profile.C} near u = 0",
            "arb", gap is None, "sweep over u: every slab's eps-intervals chain from -C(u) to C(u)" if gap is None else
            f"no box covers u in [{gap[0][0]}, {gap[0][1]}], eps just above {gap[1]}"))
        rc.obligations.append(Obligation(
            "region-invariant", "on every box: R = u/u' > 0, Q = (u - u')/(c u^3) > 0 and |eps'| <= C(u'), so the exact "
            "map sends R into R", "arb", True, f"{len(rc.results)} boxes at {bits} bits, bisected up to depth "
            f"{rc.summary()['max_depth']}"))
    else:
        b, why = failed.box, []
        if not failed.finite:
            why.append("an enclosure is not finite")
        else:
            if failed.R_lo <= 0:
                why.append(f"u/u' not certainly > 0 (lower bound {float(failed.R_lo):.3g})")
            if failed.Q[0] <= 0:
                why.append(f"Q not certainly > 0 (lower bound {float(failed.Q[0]):.3g})")
            C = profile.least(*failed.u_next)
            if failed.eps_next[0] < -C or failed.eps_next[1] > C:
                why.append(f"eps' in [{float(failed.eps_next[0]):.4g}, {float(failed.eps_next[1]):.4g}] leaves "
                           f"[-C, C] = [{float(-C):.4g}, {float(C):.4g}]")
        rc.obligations.append(Obligation(
            "region-invariant", "on every box: R = u/u' > 0, Q > 0 and |eps'| <= C", "arb", False,
            f"fails on u in [{float(b.u_lo):.6g}, {float(b.u_hi):.6g}], eps in [{float(b.e_lo):.4g}, "
            f"{float(b.e_hi):.4g}] after {max_depth} bisections: " + "; ".join(why)))
    return rc
