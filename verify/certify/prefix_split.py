"""The split prefix: the Taylor-model prefix of verify.certify.prefix over a box of invariants, bisected where it
blows up.

Why (measured, docs/atlas.md "The prefix over a wide cell"). The first-order Taylor model x(t, p) in m_t + S_t
(p - p_c) is not defeated by the wrapping effect here: the state Jacobian's off-diagonal entries have equal signs,
so |J| has J's spectral radius and a QR-preconditioned (Lohner) remainder gains nothing. Its linear part matches the
float64 spread of the members to three digits; what grows is the remainder, the radii of S_t (rad S times h), fed
by the Jacobians' width over the box of states B_t: a second-order term that nothing damps, since along the slow
manifold the map is nearly neutral (spectral radius 1 - 5e-5 at x = 1/64), over T0 ~ 2e4 steps. Over a wide cell
it overtakes the linear part within a few hundred steps and the enclosure becomes unbounded; halving a width
halves the remainder's growth rate, so pieces narrow enough get through.

What. A node is a box of invariants with its prefix state, stepped in chunks of ``check_every`` steps. When its
enclosure becomes unbounded it is bisected across the parameter k of largest linear spread |mid S_k| h_k (a chunk
before the failure), and each half restarts from the node's last checkpoint at which the halves' centres inherit
radii at most SPLIT_RADIUS (in practice step 0; a half's state there is

    m'_t = m_t + S_t (p_c' - p_c)  (a ball: the mean-value theorem on the segment p_c -> p_c', inside the box),
    S'_t = S_t                    (an enclosure of dx/dp over the parent box holds one over its half),

sound for every member of the half). A leaf stops when its enclosure lies in R (checked every ``check_every``
steps); then every leaf is continued to the common T0 (the last leaf's entry) and must lie in R there, so "every
member is in R at T0" is one statement, as for the plain prefix. A piece whose (s, x, y) box misses the cell's
kappa = y/x range is dropped: it holds none of the cell's members.

The file states the tree (a leaf [0], a dropped piece [-1], a split [step, k, lower half, upper half]), T0 and the
hull of the leaves' (u, eps) at T0; the independent re-checker (recheck.certificates.check_split_prefix) replays
the tree with its own Prefix, checks each dropped piece against the stated kappa (itself checked to hold the cell's
y/x), every leaf's end inside the stated hull and the hull inside R.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..engines.mean_value import recentre
from .arbfun import exact, hi_frac, lo_frac, widened
from .certificate import _least_C
from .prefix import PrefixState

SPLIT_RADIUS = 1e-24    # a checkpoint is a split point while the halves' centres inherit radii at most this
STALL = 10_000          # checkpoints past the last split point before the node is split anyway
MAX_LEAVES = 512        # the tree's leaves at most (a cell needing more is open)
LATE = 4                # a node not in R by this many times the first leaf's entry step is split (it would rarely
                        # enter later, and a capped state, verify.certify.prefix_monotone, runs long before it blows up)


@dataclass
class Node:
    P: tuple                    # the box of invariants ((lo, hi) of s, x, y)
    state: PrefixState
    tree: list = field(default_factory=lambda: [0])    # the subtree being built (a leaf: [0])
    entered: int | None = None  # the step at which the leaf's enclosure lay in R
    start: PrefixState | None = None    # its state where it began (a split point for its halves)

    def __post_init__(self):
        if self.start is None:
            self.start = clone(self.state)


def clone(st: PrefixState) -> PrefixState:
    """A copy of ``st``, of its class (balls and a monotone box are immutable: only S's rows are copied)."""
    out = object.__new__(type(st))
    out.__dict__.update(st.__dict__)
    out.S = [list(row) for row in st.S]
    return out


def inherited(st: PrefixState) -> float:
    """The largest radius a half would inherit in its centre from the parent's S: max rad(S_ik) h_k."""
    return max(float(v.rad()) * float(h) for row in st.S for v, h in zip(row, st.H))


def split_state(st: PrefixState, k: int) -> tuple:
    """The two halves of ``st``'s box across parameter k, each with the state the module docstring gives."""
    out = []
    for sign in (-1, 1):
        P = [(c - h, c + h) for c, h in zip(st.Pc, st.H)]
        c, h = st.Pc[k], st.H[k]
        P[k] = (c - h, c) if sign < 0 else (c, c + h)
        child = type(st)(tuple(P))
        child.inherit(st)
        shift = exact(child.Pc[k] - c)
        A, Dl = st.centre_box()
        a1, d1 = A + st.S[0][k] * shift, Dl + st.S[1][k] * shift
        (child.a, child.d), (child.ra, child.rd) = recentre((a1, d1))
        child.S = [list(row) for row in st.S]
        child.step_count = st.step_count
        out.append(child)
    return tuple(out)


def widest(st: PrefixState) -> int:
    """The parameter whose linear spread |mid S_k| h_k (in alpha and delta) is largest; the widest relative interval
    h_k/c_k while S is still 0 (a failure within the first chunk)."""
    spread = [sum(abs(float(st.S[i][k].mid())) * float(st.H[k]) for i in range(2)) for k in range(len(st.H))]
    if max(spread) <= 0:
        spread = [float(h / abs(c)) if c else 0.0 for h, c in zip(st.H, st.Pc)]
    return max(range(len(spread)), key=lambda k: spread[k])


def misses_kappa(P: tuple, kappa: tuple | None) -> bool:
    """The box holds no (s, x, y) with y/x in ``kappa`` (so none of the cell's members)."""
    if kappa is None:
        return False
    (_, _), (x_lo, x_hi), (y_lo, y_hi) = P
    return y_hi < kappa[0] * x_lo or y_lo > kappa[1] * x_hi


@dataclass
class SplitResult:
    ok: bool
    T0: int = 0
    tree: list = field(default_factory=list)
    u: tuple = ()
    eps: tuple = ()
    leaves: int = 0
    pruned: int = 0
    steps: int = 0              # node-steps run (the re-check's work is about this)
    failure: str = ""


def split_prefix(P: tuple, u0: Fraction, C, *, in_region, max_prefix: int, check_every: int,
                 kappa: tuple | None = None, max_leaves: int = MAX_LEAVES, log=None,
                 state: type = PrefixState) -> SplitResult:
    """The split prefix of the module docstring over the invariants ``P`` (call inside an Arb precision);
    ``in_region(state) -> (u, eps) as exact intervals, or None`` decides a checkpoint. ``state``: the prefix
    state's class (PrefixState, or verify.certify.prefix_monotone.CappedState: the same tree of capped states)."""
    root = Node(P, state(P))
    todo, leaves, steps, pruned = [root], [], 0, 0
    while todo:
        node = todo.pop()
        if misses_kappa(node.P, kappa):
            node.tree[:] = [-1]             # dropped: none of the cell's members (re-checked)
            pruned += 1
            continue
        st = node.state
        prev = good = clone(st)     # the last checkpoint a split may start from (SPLIT_RADIUS)
        failed = None
        while node.entered is None:
            if st.step_count >= max_prefix:
                failed = f"no checkpoint in R up to {max_prefix} steps"
                break
            prev = clone(st)
            try:
                for _ in range(check_every):
                    st.step(*st.balls())
                    steps += 1
            except ArithmeticError as exc:
                failed = str(exc)
                break
            if in_region(st) is not None:
                node.entered = st.step_count
                break
            if leaves and st.step_count >= LATE * min(n.entered for n in leaves):
                failed = f"not in R by {LATE} times the first leaf's entry step"
                break
            if inherited(st) <= SPLIT_RADIUS:
                good = clone(st)
            elif st.step_count - good.step_count > STALL * check_every:
                failed = f"not in R {STALL * check_every} steps after its last split point"
                break
        if node.entered is not None:
            leaves.append(node)
            if log is not None:
                log(f"leaf in R at step {node.entered}; widths {[float(2 * h) for h in st.H]}")
            continue
        if len(leaves) + len(todo) + 2 > max_leaves:
            return SplitResult(False, leaves=len(leaves), steps=steps, failure=f"more than {max_leaves} pieces "
                               f"needed (a piece of width {[float(h) for h in st.H]}: {failed} at step "
                               f"{st.step_count})")
        if log is not None:
            log(f"split at step {good.step_count} (failed at {st.step_count}: {failed}); widths "
                f"{[float(2 * h) for h in st.H]}; leaves {len(leaves)}, pending {len(todo)}")
        k = widest(prev)    # the direction that spread most a chunk before the failure (at a split point S may be 0)
        kids = [Node(tuple((p - h, p + h) for p, h in zip(c.Pc, c.H)), c) for c in split_state(good, k)]
        node.tree[:] = [good.step_count, k, kids[0].tree, kids[1].tree]
        todo.extend(reversed(kids))
    if not leaves:
        return SplitResult(False, steps=steps, pruned=pruned, failure="every piece was dropped (none holds a member)")
    T0 = max(n.entered for n in leaves)
    us, es = [], []
    while leaves:
        # every leaf stepped to T0; one whose enclosure left R since its entry (R's band narrows inwards) is split
        # again and its halves run to T0 from their split point
        n = leaves.pop()
        st = n.state
        try:
            while st.step_count < T0:
                st.step(*st.balls())
                steps += 1
            got = in_region(st)
        except ArithmeticError:
            got = None
        if got is not None:
            us.append(got[0])
            es.append(got[1])
            continue
        if len(us) + len(leaves) + 2 > max_leaves:
            return SplitResult(False, steps=steps, failure=f"a leaf entered R at step {n.entered} but its enclosure "
                               f"is not in R at T0 = {T0}, and more than {max_leaves} pieces would be needed")
        k = widest(st)
        kids = [Node(tuple((p - h, p + h) for p, h in zip(c.Pc, c.H)), c, entered=T0) for c in split_state(n.start, k)]
        n.tree[:] = [n.start.step_count, k, kids[0].tree, kids[1].tree]
        for kid in kids:
            if misses_kappa(kid.P, kappa):
                kid.tree[:] = [-1]
                pruned += 1
            else:
                leaves.append(kid)
    u = widened(min(a for a, _ in us), max(b for _, b in us))
    e = widened(min(a for a, _ in es), max(b for _, b in es))
    if not in_hull(u, e, u0, C):
        return SplitResult(False, steps=steps, failure=f"the leaves' hull at T0 = {T0}, u in [{float(u[0]):.6g}, "
                           f"{float(u[1]):.6g}], eps in [{float(e[0]):.4g}, {float(e[1]):.4g}], is not in R")
    return SplitResult(True, T0, root.tree, u, e, len(us), pruned, steps)


def in_hull(u: tuple, e: tuple, u0: Fraction, C) -> bool:
    """Whether the box u in [u_lo, u_hi], eps in [e_lo, e_hi] lies in R(u0, C): 0 < u <= u0, |eps| <= C(u)."""
    return 0 < u[0] and u[1] <= u0 and -_least_C(C, u[0], u[1]) <= e[0] and e[1] <= _least_C(C, u[0], u[1])


def region_test(u0: Fraction, C):
    """``in_region`` for split_prefix: the state's (u, eps) enclosures as exact intervals when they lie in
    R(u0, C) (C one value or a region Profile), else None."""

    def test(st: PrefixState):
        U, Eps = st.region_coordinates()
        if not (U.is_finite() and Eps.is_finite()):
            return None
        u, e = (lo_frac(U), hi_frac(U)), (lo_frac(Eps), hi_frac(Eps))
        return (u, e) if in_hull(u, e, u0, C) else None
    return test


__all__ = ["MAX_LEAVES", "SPLIT_RADIUS", "SplitResult", "in_hull", "misses_kappa", "region_test", "split_prefix",
           "split_state"]
