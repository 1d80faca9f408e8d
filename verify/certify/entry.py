"""How a family cell enters R: the tube of verify.certify.tube, built from a float reference and checked in Arb.

The construction is a heuristic and is not trusted: a float trajectory of the cell's centre member (the
reference), and two fences started a little off it, each advanced along the steepest outward slope over the ends
and centre of the cell's ranges of s and of kappa (a step's direction depends on x only through kappa), plus tau,
plus BEND_PUSH times the slope's change over the last step where the curve turns (so every member's flow crosses
them inwards, also across a knot where the next chord is steeper), clamped at least w_min(u) from the reference in
the zeta graph (w_min shrinks like u^3, as eps = (alpha - alpha*(u))/u^3 must fit in R's band at the end), and knots
placed where the fences' chords bend by at most tau/KNOT_BEND, each slab at least REACH * MIN_STEPS times the
previous slab's first step wide (where the clock slows, a step from one slab must not pass the next); a zeta graph
whose fence stalls (started below alpha = 0 or above the delta-nullcline, where delta and its clock fall) is built
once more from a start at most ZETA_START_CAP times the reference's alpha wide. What is
certified is decided by verify.certify.tube's checks on the result: the two graphs' invariance, the start, both
handovers, and the step T0 by which every member is in R. A cell tries a few widths (ATTEMPTS) and fails when none
closes (the family then uses the Taylor-model prefix, or bisects the cell).
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from ..model.numbers import frac_str
from ..model.precision import arb_precision
from .arbfun import ball, dyadic_down, dyadic_up, exact, hi_frac, lo_frac
from .tube import Graph, box_state, check_graph, increments, inside, linearity_obligation, slab_boxes

# (w0 of the alpha graph, its push tau, w0 of the zeta graph, its push tau, w_min at the switch): tried in order
ATTEMPTS = ((0.001, 0.02, 0.01, 0.05, 0.004), (0.002, 0.04, 0.02, 0.08, 0.008), (0.0005, 0.01, 0.005, 0.03, 0.002))
MAX_EVERY = 400         # reference steps between knots at most
KNOT_BEND = 8           # consecutive chords of a fence differ in slope by at most tau/KNOT_BEND (its push is tau)
MIN_STEPS = 2           # reference steps between knots at least (a step of any member stays within one slab)
REACH = 2               # a slab is at least REACH * MIN_STEPS times the previous slab's first step (_knots)
HANDOVER_DEPTH = 6      # bisections of a last-slab box in the handover checks
STALL_PATIENCE = 16     # the reference stops when |eps| has not come within C/4 after 16 times its steps to u <= 3 u0/4
S_PIECES = 8            # a range of s is checked in this many pieces (each its own mean-value form in s)
FENCE_STEPS = 4         # a fence that needs this many times the reference's steps to reach its end is abandoned
BEND_PUSH = 8           # a fence's push grows by this many times its slope's change over the last step (_fence)
ZETA_START_CAP = 0.5    # a zeta graph whose fence stalls is tried again with its start's half-width <= this * alpha
SWITCH = 1              # the alpha graph ends (the zeta graph begins) near where delta rises 1/SWITCH as fast as alpha


@dataclass
class Entry:
    """The certified entry of every member of a cell into R, or why not."""

    ok: bool
    T0: int = 0
    z0: tuple = ()
    graphs: tuple = ()
    trees: tuple = ()
    depths: tuple = ()      # the handovers' grid depths (alpha graph -> zeta graph, zeta graph -> R)
    failure: str = ""
    boxes: int = 0

    def as_dict(self, kappa: tuple) -> dict:
        """The cell's "entry" as a family file stores it (recheck.certificates re-checks it)."""
        return {"kind": "tube", "kappa": [frac_str(kappa[0]), frac_str(kappa[1])],
                "graphs": [g.as_dict() | {"trees": list(t)} for g, t in zip(self.graphs, self.trees)],
                "handover_depths": list(self.depths), "s_pieces": S_PIECES}


def _dy(v: float) -> Fraction:
    return Fraction(round(v * 2 ** 40), 2 ** 40)


def reference(s: float, x: float, kap: float, stop, extra: float = 0.02) -> list:
    """The float trajectory [(alpha_t, delta_t)] of the member (s, x, y = kappa x) from (0, 0) until ``stop(alpha,
    delta)``, and ``extra`` of its length (at least 40 steps) past that (the generated map at 53 bits)."""
    from flint import arb  # heavy: flint

    from .prefix import prefix_functions  # heavy: loads mpmath,numpy,sympy
    fn = prefix_functions()
    with arb_precision(53):
        S, X, Y = arb(s), arb(x), arb(kap * x)
        a, d, out, end = 0.0, 0.0, [(0.0, 0.0)], None
        while (end is None or len(out) < end) and len(out) < 5_000_000:
            da, dd = fn.step(arb(a), arb(math.exp(d)), S, X, Y)
            a, d = a + float(da.mid()), d + float(dd.mid())
            out.append((a, d))
            if end is None and stop(a, d):
                end = len(out) + max(40, int(extra * len(out)))
        return out


@lru_cache(maxsize=None)
def float_increments():
    """(alpha' - alpha, delta' - delta) of the reduced map as one float64 function of numpy arrays (alpha, E, s, x,
    y), lambdified from the derivation's expressions: a fence is a heuristic, so floats suffice, and one call steps
    all of a cell's fence members at once."""
    from ..derive import codegen  # heavy: loads sympy
    a_inc, d_inc, names = increments()
    return codegen.lambdify(tuple(names[n] for n in ("alpha", "E", "s", "x", "y")), [a_inc, d_inc], "numpy")


def _fence(start: tuple, clock: str, members: tuple, x: float, tau: float, cl_end: float, sign: int,
           max_steps: int = 5_000_000) -> list:
    """A float fence from ``start`` = (cl, tr): each step advances the clock as the middle member does, and the
    other coordinate along the steepest outward slope d tr/d cl of the ``members`` (pairs (s, kappa): the cell's
    ends and centre in both) at that point, plus ``sign`` tau: so every one of them crosses it inwards. A step's
    direction depends on x only through kappa (linearity_obligation), so the slopes of a box's extreme members
    in s and kappa bound those of its interior ones to first order, and the fences hold a cell wide in kappa too."""
    import numpy as np  # heavy: numpy
    step = float_increments()
    S = np.array([s for s, _ in members])
    Y = np.array([k * x for _, k in members])
    logS = np.log(S)
    mid = len(members) // 2
    cl, tr = start
    out, last = [(cl, tr)], None
    with np.errstate(all="ignore"):
        while cl < cl_end:
            if len(out) > max_steps:
                raise ValueError(f"a fence of the {clock} graph does not reach the reference's end in {max_steps} "
                                 "steps")
            if clock == "alpha":
                da, dd = step(np.full_like(S, cl), np.full_like(S, math.exp(tr)), S, x, Y)
                icl, itr = da, dd
            else:
                de = cl - logS if clock == "zeta" else np.full_like(S, cl)
                da, dd = step(np.full_like(S, tr), np.exp(de), S, x, Y)
                icl, itr = dd, da
            if not np.all(icl > 0):
                raise ValueError(f"the clock of a fence of the {clock} graph stops advancing at {cl:.6g}")
            slopes = itr / icl
            slope = float(slopes.max() if sign > 0 else slopes.min())
            # where the curve turns, the fence bends between slabs by some steps' change of slope, and a step that
            # crosses a knot meets the next chord: the push covers BEND_PUSH steps' change as well as tau
            bend = 0.0 if last is None else abs(slope - last)
            last = slope
            icl0 = float(icl[mid])
            cl, tr = cl + icl0, tr + icl0 * (slope + sign * (tau + BEND_PUSH * bend))
            out.append((cl, tr))
    return out


def _interp(pts: list, at: list) -> list:
    import numpy as np  # heavy: numpy
    a = np.array(pts)
    return np.interp(at, a[:, 0], a[:, 1]).tolist()


def _knots(cl: list, fences: tuple, tol: float, max_every: int) -> list:
    """Indices into the clock grid so that both fences' consecutive chords differ in slope by at most ``tol`` and
    stay within tol/8 of the width of a chord from the fence at its middle (at least MIN_STEPS reference steps
    apart)."""
    idx, i, n, prev = [0], 0, len(cl), None
    while i < n - 1:
        # a slab at least REACH * MIN_STEPS times the previous slab's first step (where the clock slows down, its
        # longest), so that a step from there does not pass this slab
        least = i + MIN_STEPS
        if len(idx) > 1:
            reach = cl[i] + REACH * MIN_STEPS * (cl[idx[-2] + 1] - cl[idx[-2]])
            least = max(least, bisect.bisect_left(cl, reach, i))
        least = min(least, n - 1)
        j = max(min(i + max_every, n - 1), least)
        if n - 1 - j < MIN_STEPS:
            j = n - 1
        while j > least:
            sl = [(f[j] - f[i]) / (cl[j] - cl[i]) for f in fences]
            mid = (i + j) // 2
            dev = max(abs(f[mid] - (f[i] + q * (cl[mid] - cl[i]))) for f, q in zip(fences, sl))
            if (prev is None or max(abs(a - b) for a, b in zip(sl, prev)) <= tol) and dev <= tol * (cl[j] - cl[i]) / 8:
                break
            j = max(least, i + (j - i) // 2)
        if 0 < n - 1 - j < MIN_STEPS:
            # the last slab must be as wide as the others: a step from the slab before it must not pass it
            j = n - 1 if n - 1 - MIN_STEPS < least else n - 1 - MIN_STEPS
        prev = [(f[j] - f[i]) / (cl[j] - cl[i]) for f in fences]
        idx.append(j)
        i = j
    return idx


def build_graph(pts: list, clock: str, w0: float, tau: float, centre: tuple, floor=None, first=None) -> Graph:
    """The graph around the reference points ``pts`` [(cl, tr)] (float; module docstring). ``floor(t)``: the least
    half-width at the t-th point (zeta graph); ``first``: a smaller clock to start the fences at (the start's
    least clock: the members' first steps lie on tr = 0 from there on)."""
    members, x = centre
    end = pts[-1][0]
    c0 = float(first) if first is not None and first < pts[0][0] else pts[0][0]
    grid = ([c0] if c0 < pts[0][0] else []) + [p[0] for p in pts]
    ref = ([pts[0][1]] if c0 < pts[0][0] else []) + [p[1] for p in pts]
    most = FENCE_STEPS * len(pts)                      # a fence takes about as many steps as the reference
    U = _interp(_fence((c0, pts[0][1] + w0), clock, members, x, tau, end, +1, most), grid)
    L = _interp(_fence((c0, pts[0][1] - w0), clock, members, x, tau, end, -1, most), grid)
    if floor is not None:
        U = [max(u, r + floor(t)) for t, (u, r) in enumerate(zip(U, ref))]
        L = [min(v, r - floor(t)) for t, (v, r) in enumerate(zip(L, ref))]
    knots, lower, upper = [], [], []
    for i in _knots(grid, (U, L), tau / KNOT_BEND, MAX_EVERY):
        c = first if i == 0 and c0 < pts[0][0] else _dy(grid[i])
        if knots and c <= knots[-1]:
            continue
        knots.append(c)
        lower.append(_dy(L[i]))
        upper.append(_dy(U[i]))
    return Graph(clock, tuple(knots), tuple(lower), tuple(upper))


def _u_eps(s: float, a: float, d: float) -> tuple:
    u = 1 / (math.exp(d) * s + 1)
    return u, (a - (1 - u) / (s * u * u + (1 - u) ** 2)) / u ** 3


def reference_stop(s: float, u_stop: float, e_stop: float, patience: int = STALL_PATIENCE):
    """The reference's stopping rule (a heuristic: the tube's own checks decide, so it costs time, never soundness):
    stop once u <= u_stop and |eps| <= e_stop, or once u <= u_stop has held ``patience`` times as many steps as it
    took to get there while |eps| stays above e_stop. At large kappa eps settles near c/x, about C/2, never within
    C/4: without the second rule the reference ran to its 5·10^6-step cap (some 30 s of CPU an attempt) before
    failing."""
    first, count = None, 0

    def done(a, d):
        nonlocal first, count
        count += 1
        u, e = _u_eps(s, a, d)
        if u > u_stop:
            return False
        if first is None:
            first = count
        return abs(e) <= e_stop or count - first >= patience * first
    return done


@lru_cache(maxsize=2)
def centre_reference(s: float, x: float, kap: float, u_stop: float, e_stop: float) -> tuple:
    """The reference of a cell's centre member until ``reference_stop(s, u_stop, e_stop)``, with a margin past the
    entry (its last slab deep in R): the same for every attempt, so computed once."""
    return tuple(reference(s, x, kap, reference_stop(s, u_stop, e_stop)))


def switch_step(ref: list):
    """The reference's step where the alpha graph hands over to the zeta graph: the first where delta rises
    1/SWITCH as fast as alpha (there the curve's slope in either clock is at most SWITCH)."""
    return next((t for t in range(2, len(ref)) if SWITCH * (ref[t][1] - ref[t - 1][1]) >= ref[t][0] - ref[t - 1][0]),
                None)


def graphs_for(P: tuple, kappa: tuple, u0: Fraction, C_end: Fraction, attempt: tuple, first: Fraction) -> tuple:
    """The alpha and zeta graphs of one attempt for the invariants' box P = ((s_lo, s_hi), (x_lo, x_hi), ...)
    and kappa = (lo, hi): the reference runs until u <= 3 u0/4 and |eps| <= C_end/4 at its centre member; the
    alpha graph starts at the clock ``first`` (below every member's first step)."""
    (s_lo, s_hi), (x_lo, x_hi) = P[0], P[1]
    sc, xc, kc = float((s_lo + s_hi) / 2), float((x_lo + x_hi) / 2), float((kappa[0] + kappa[1]) / 2)
    w0a, taua, w0d, taud, wmin = attempt
    ref = centre_reference(sc, xc, kc, 0.75 * float(u0), 0.25 * float(C_end))
    sw = switch_step(ref)
    if sw is None or sw < 10:
        raise ValueError("the reference never turns from rising alpha to rising delta")
    alpha_pts = [(a, d) for a, d in ref[1:int(sw * 1.2)]]
    # the fences' members: the ends and centre of the range of s and of kappa (the middle one is the centre)
    svals = sorted({float(s_lo), sc, float(s_hi)})
    kvals = sorted({float(kappa[0]), kc, float(kappa[1])})
    members = tuple((s, k) for s in svals for k in kvals)
    ga = build_graph(alpha_pts, "alpha", w0a, taua, (members, xc), first=first)
    # the zeta graph's start must hold the alpha graph's last slab: its clock width, and its zeta width (its delta
    # width upper - lower, and log(s_hi/s_lo): zeta = delta + log s) times the curve's slope d alpha/d zeta there
    n = len(ga.knots) - 1
    last_w = float(ga.knots[n] - ga.knots[n - 1])
    spread = float(max(ga.upper[n - 1] - ga.lower[n - 1], ga.upper[n] - ga.lower[n]))
    w0d = max(w0d, 2 * (last_w + SWITCH * (2 * spread + math.log(s_hi / s_lo))))
    # the second graph over zeta = delta + log s (u = 1/(e^zeta + 1) for every s: a range of D on one curve)
    zeta_pts = [(d + math.log(sc), a) for a, d in ref[int(sw * 0.8):]]
    u_sw = _u_eps(sc, ref[int(sw * 0.8)][0], ref[int(sw * 0.8)][1])[0]
    us = [_u_eps(sc, a, d)[0] for a, d in ref[int(sw * 0.8):]]

    def floor(t: int) -> float:                 # the least half-width at the t-th point: w_min, shrinking like u^3
        return wmin * min(1.0, (us[t] / u_sw) ** 3)

    try:
        gd = build_graph(zeta_pts, "zeta", w0d, taud, (members, xc), floor=floor)
    except ValueError:
        # a fence that starts too far out stalls: below alpha = 0 or above the delta-nullcline delta falls, and the
        # zeta clock with it (at kappa >~ 1/2 the alpha graph ends wide); once more with the start's half-width at
        # most half the reference's alpha (the handover check decides whether the alpha graph's last slab still fits)
        narrow = ZETA_START_CAP * zeta_pts[0][1]
        if not narrow < w0d:
            raise
        gd = build_graph(zeta_pts, "zeta", narrow, taud, (members, xc), floor=floor)
    return ga, gd


def first_step(S, X, Y) -> tuple:
    """Balls of (alpha_1, delta_1), one step from (0, 0), over every member (the generated map)."""
    from .prefix import prefix_functions  # heavy: loads mpmath,numpy,sympy
    return prefix_functions().step(exact(0), exact(1), S, X, Y)


def start_inside(ga: Graph, S, X, Y, last: int) -> str:
    """The state after one exact step from (0, 0), for every member, lies in the alpha graph's slabs < last."""
    a1, d1 = first_step(S, X, Y)
    if not (a1.is_finite() and d1.is_finite()):
        return "the first step is unbounded"
    if not inside(ga, lo_frac(a1), hi_frac(a1), lo_frac(d1), hi_frac(d1), last=last):
        return f"the first step (alpha in [{float(lo_frac(a1)):.4g}, {float(hi_frac(a1)):.4g}], delta in " \
               f"[{float(lo_frac(d1)):.3g}, {float(hi_frac(d1)):.3g}]) is not inside the alpha graph"
    return ""


def handover(g: Graph, k: int, target, depth: int = HANDOVER_DEPTH) -> tuple:
    """Every point of slab k of ``g`` satisfies ``target(cl ball, tr ball) -> ""`` (or why not), on a grid refined
    where a box fails, up to ``depth``. Returns (why or "", the refinement depth used)."""
    for d in range(depth + 1):
        why = ""
        for box in slab_boxes(g, k, d):
            why = target(*box_state(g, k, box))
            if why:
                break
        if not why:
            return "", d
    return why, depth


def in_second_graph(gz: Graph, S):
    """The handover from the alpha graph (cl = alpha, tr = delta) into the zeta graph (zeta = delta + log s)."""
    logS = S.log()

    def target(cl, tr) -> str:
        zeta = tr + logS
        ok = inside(gz, lo_frac(zeta), hi_frac(zeta), lo_frac(cl), hi_frac(cl), last=len(gz.knots) - 2)
        return "" if ok else "the alpha graph's last slab is not inside the zeta graph"
    return target


@lru_cache(maxsize=None)
def alpha_star_function():
    """The generated Arb code of alpha*(u) = (1 - u)/(s u^2 + (1 - u)^2) (verify.certify.coordinates)."""
    from .coordinates import PARAM_NAMES  # heavy: loads mpmath,numpy,sympy
    from .formulas import compile_formulas, file_map  # heavy: loads mpmath,numpy,sympy
    return compile_formulas([file_map()["coordinates"]["alpha_star"]], ("u",) + tuple(PARAM_NAMES))


def in_region(S, u0: Fraction, profile, u_most: list):
    """The handover from the zeta graph (cl = zeta, tr = alpha) into R: u = 1/(E s + 1) = 1/(e^zeta + 1) and
    eps = (alpha - alpha*(u))/u^3 (their definitions, verify.certify.coordinates) within u <= u0, |eps| <= C(u);
    ``u_most[0]`` collects the largest u over the boxes checked (z >= 1/u_most^2 once a member has reached the
    slab: z only grows in R)."""
    a_star = alpha_star_function()

    def target(cl, tr) -> str:
        U = 1 / (cl.exp() + 1)
        eps = (tr - a_star(U, S, exact(0), exact(0))[0]) / U ** 3
        if not (U.is_finite() and eps.is_finite()):
            return "an unbounded enclosure of (u, eps)"
        u_lo, u_hi = lo_frac(U), hi_frac(U)
        C = profile.least(u_lo, u_hi)
        u_most[0] = max(u_most[0], u_hi)
        if not (u_hi <= u0 and -C <= lo_frac(eps) and hi_frac(eps) <= C):
            return f"the zeta graph's last slab is not inside R (u in [{float(u_lo):.4g}, {float(u_hi):.4g}], " \
                   f"eps in [{float(lo_frac(eps)):.3g}, {float(hi_frac(eps)):.3g}], C = {float(C):.3g})"
        return ""
    return target


def time_bound(checks: tuple, graphs: tuple) -> int:
    """1 + the steps spent in the checked slabs of both graphs, at most ceil(width / least advance) in each."""
    T = 1
    for chk, g in zip(checks, graphs):
        for k, inc in enumerate(chk.inc_lo):
            T += math.ceil((g.knots[k + 1] - g.knots[k]) / inc)
    return T


def z_at_T0(gd: Graph, S, T0: int, c_hi: Fraction, u0: Fraction, Q_max: Fraction, u_most: Fraction) -> tuple:
    """[1/u_most^2, z_end + T0 2 c_hi Q_max R_max^2]: by T0 every member has reached the zeta graph's last slab,
    where u <= u_most, and z only grows in R (Q > 0); z <= its largest value on that slab when it gets there
    (u >= 1/(e^zeta_end + 1)), then z' - z <= 2 c Q R^2 with R = 1/(1 - c u^2 Q) <= 1/(1 - c_hi u0^2 Q_max)."""
    z_end = hi_frac((exact(gd.knots[-1]).exp() + 1) ** 2)      # u = 1/(e^zeta + 1) on the zeta graph
    den = 1 - c_hi * u0 ** 2 * Q_max
    if den <= 0:
        raise ValueError("c u0^2 Q_max >= 1")
    return dyadic_down(1 / u_most ** 2), dyadic_up(z_end + T0 * 2 * c_hi * Q_max / den ** 2)


def entry(P: tuple, kappa: tuple, u0: Fraction, profile, Q_max: Fraction, c_hi: Fraction, bits: int,
          attempts=ATTEMPTS) -> Entry:
    """The certified entry of every member of the box P (invariant intervals (s, x, y)) with y/x in ``kappa``
    into R(u0, profile) (module docstring): the first attempt whose checks all pass."""
    lin = linearity_obligation()
    if not lin.ok:
        return Entry(False, failure=lin.detail)
    failures = []
    with arb_precision(bits):
        S, X, Y, KAP = (ball(*P[0]), ball(*P[1]), ball(*P[2]), ball(*kappa))
        a1 = first_step(S, X, Y)[0]
        if not (a1.is_finite() and lo_frac(a1) > 0):
            return Entry(False, failure="the first step does not raise alpha above 0 for every member")
        first = _dy(float(lo_frac(a1)) * 15 / 16)
        for i, attempt in enumerate(attempts):
            try:
                ga, gd = graphs_for(P, kappa, u0, profile.least(Fraction(0), u0), attempt, first)
            except ValueError as exc:
                failures.append(str(exc))
                continue
            why = start_inside(ga, S, X, Y, len(ga.knots) - 2)
            chks = []
            for g in (ga, gd):
                if why:
                    break
                chk = check_graph(g, P[0], X, KAP, pieces=S_PIECES)
                why = chk.failure
                chks.append(chk)
            depths, u_most = [], [Fraction(0)]
            for g, target in ((ga, in_second_graph(gd, S)), (gd, in_region(S, u0, profile, u_most))):
                if why:
                    break
                why, d = handover(g, len(g.knots) - 2, target)
                depths.append(d)
            if why:
                failures.append(f"attempt {i + 1}: {why}")
                continue
            T0 = time_bound(tuple(chks), (ga, gd))
            z0 = z_at_T0(gd, S, T0, c_hi, u0, Q_max, u_most[0])
            return Entry(True, T0, z0, (ga, gd), tuple(c.trees for c in chks), tuple(depths),
                         boxes=sum(c.boxes for c in chks))
    return Entry(False, failure="; ".join(failures))


__all__ = ["ATTEMPTS", "Entry", "build_graph", "entry", "graphs_for", "handover", "reference", "time_bound",
           "z_at_T0"]
