"""The split prefix: the Taylor-model prefix of verify.certify.prefix over a box of invariants, bisected in time.

Why. Over a wide cell the members leave u ~ 1 at very different steps (the onset scales like 1/(s y)), so the
set of their states at a step t is a long arc of the trajectory, not a thin box. The first-order Taylor model
x(t, p) in m_t + S_t (p - p_c) is exact to first order, but its remainder (the radii of S_t, whose
Jacobians are taken over the whole box of states B_t) grows like h^2 and feeds back through B_t, so the
enclosure outgrows the true spread and becomes unbounded while the arc is still moving (the cell
rho in [1/16, 1/8], x in [1/64, 1/32], kappa in [1/4, 1/2]: unbounded at step 194, with the float64 spread
of alpha 0.32 against an enclosure 0.93 wide at step 150; docs/atlas.md).

What. A node is a box of invariants with its prefix state. It is stepped in chunks of ``check_every`` steps,
keeping a checkpoint at each chunk's start; when its enclosure becomes unbounded (or its remainder outgrows its
linear part, REMAINDER_RATIO) it goes back to the last checkpoint whose remainder was small and is bisected there
across the parameter k of largest spread |S_k| h_k: each half starts from the parent's state,

    m'_t = m_t + S_t (p_c' - p_c)  (a ball: the mean-value theorem on the segment p_c -> p_c', inside the box),
    S'_t = S_t                    (an enclosure of dx/dp over the parent box holds one over its half),

which is sound for every member of the half, and continues with half the width (its remainder grows four times
slower). A leaf stops when its enclosure lies in R (checked every ``check_every`` steps); then every leaf is
continued to the common T0 (the last leaf's entry) and must lie in R there, so "every member is in R at T0" is
one statement, as for the plain prefix. Leaves whose (s, x, y) box misses the cell's kappa = y/x range are
dropped (PRUNE): their members are not the cell's.

The file states the tree (a leaf 0, a split [step, k, child0, child1], children in order lower/upper half), T0 and
the hull of the leaves' (u, eps) at T0; the independent re-checker (verify.certify.recheck.check_split_prefix)
replays the tree with its own Prefix and checks every leaf's end in the stated hull and the hull in R.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from flint import arb

from .arbfun import exact, hi_frac, lo_frac, widened
from .prefix import PrefixState

SPLIT_RADIUS = 1e-24    # a checkpoint is a split point while the halves' centres inherit radii at most this
STALL = 10_000          # checkpoints past the last split point before the node is split anyway
MAX_LEAVES = 512        # the tree's leaves at most (a cell needing more is open)


@dataclass
class Node:
    P: tuple                    # the box of invariants ((lo, hi) of s, x, y)
    state: PrefixState
    tree: list = field(default_factory=lambda: [0])    # the subtree being built (a leaf: [0])
    entered: int | None = None  # the step at which the leaf's enclosure lay in R


def clone(st: PrefixState) -> PrefixState:
    """A copy of ``st`` (balls are immutable: only S's rows are copied)."""
    out = copy_state = object.__new__(PrefixState)
    out.__dict__.update(st.__dict__)
    copy_state.S = [list(row) for row in st.S]
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
        child = PrefixState(tuple(P))
        shift = exact(child.Pc[k] - c)
        A, Dl = st.centre_box()
        a1, d1 = A + st.S[0][k] * shift, Dl + st.S[1][k] * shift
        child.a, child.ra, child.d, child.rd = arb(a1.mid()), arb(a1.rad()), arb(d1.mid()), arb(d1.rad())
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
                 kappa: tuple | None = None, max_leaves: int = MAX_LEAVES, log=None) -> SplitResult:
    """The split prefix of the module docstring over the invariants ``P`` (call inside an Arb precision);
    ``in_region(state) -> (u, eps) as exact intervals, or None`` decides a checkpoint."""
    root = Node(P, PrefixState(P))
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
    T0 = max(n.entered for n in leaves)
    us, es = [], []
    for n in leaves:
        st = n.state
        try:
            while st.step_count < T0:
                st.step(*st.balls())
                steps += 1
        except ArithmeticError as exc:
            return SplitResult(False, steps=steps, failure=f"a leaf, continued to T0 = {T0}: {exc}")
        got = in_region(st)
        if got is None:
            return SplitResult(False, steps=steps, failure=f"a leaf entered R at step {n.entered} but its enclosure "
                               f"is not in R at T0 = {T0}")
        us.append(got[0])
        es.append(got[1])
    u = widened(min(a for a, _ in us), max(b for _, b in us))
    e = widened(min(a for a, _ in es), max(b for _, b in es))
    return SplitResult(True, T0, root.tree, u, e, len(leaves), pruned, steps)


def region_test(u0: Fraction, C):
    """``in_region`` for split_prefix: the state's (u, eps) enclosures as exact intervals when they lie in
    R(u0, C) (C one value or a region Profile), else None."""
    from .certificate import _least_C

    def test(st: PrefixState):
        U, Eps = st.region_coordinates()
        if not (U.is_finite() and Eps.is_finite()):
            return None
        u, e = (lo_frac(U), hi_frac(U)), (lo_frac(Eps), hi_frac(Eps))
        if not (0 < u[0] and u[1] <= u0):
            return None
        bound = _least_C(C, u[0], u[1])
        return (u, e) if -bound <= e[0] and e[1] <= bound else None
    return test


__all__ = ["MAX_LEAVES", "SPLIT_RADIUS", "SplitResult", "misses_kappa", "region_test", "split_prefix",
           "split_state"]
