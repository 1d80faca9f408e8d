"""Certified full-matrix engine: Arb balls (python-flint) for every entry of W_X, Y = W_P P and the logits.

It is verify.engines.full.LogitState run in ball arithmetic. The parameters enter as balls containing the
exact rationals (V* as a ball around base * sqrt(scale^2)); the softmax, the kernel and its partials
(generated from SymPy with integer powers as products of balls, verify.derive.codegen) and the chain rule
of verify.engines.fullgrad are evaluated by Arb, every operation rounded outward. So, by induction over
the steps, each ball contains the value the exact recursion (exact real arithmetic, exact parameters)
has after t steps, and every recorded quantity computed from those balls contains the exact quantity.

Why the balls stay narrow without a Jacobian (the mean-value form of verify.engines.arb would need a
(Md + MD + DN)^2 matrix per step): the W_X step is evaluated as W_X (1 - eta a) - eta (b v* + e), so
its contraction by its own gradient is seen; in the logits, a step adds eta_KQ beta^2 lambda^2 times the
radius of dL/dLambda, which is O(s_ij |g_ij|) times the radius of the logits. Measured at 256 bits,
D = N = 64, K = 4, eta = 1/32 (verify bench): the largest relative radius after 1000 steps is recorded
there; tests/test_fullarb.py checks that the balls contain a 60-digit mpmath iteration.

Possible issues: ball arithmetic bounds the image of a box by a box, so a step multiplies the radii by
(about) the entrywise absolute value |I - eta H| of the step's Jacobian, not by I - eta H (the wrapping
effect): a large logit step eta_KQ beta^2 lambda^2 (above 10, say) makes |I - eta H| exceed 1 by a lot
although GD contracts, and 256 bits then certify some tens of steps (more bits, proportionally more).
Where the kernel is not Lipschitz the radius is not multiplied but raised to a power
below 1 each step: ReLU at rho = C / sqrt(AB) = 1 (K = D, W_X on the line of V*) has sqrt(AB - C^2) = 0,
so a radius r becomes about sqrt(r) and the enclosure is unbounded within ~20 steps at 256 bits (reported
as NumericalTrouble; the reduced engine's K = D case is exact there).
"""
from __future__ import annotations

from flint import arb

from ..errors import NumericalTrouble
from ..model.setting import Setting
from ..model.validation import check_int
from .arb import DIVERGED, DIVERGED_BITS, MAX_BITS, MIN_BITS, ArbArith, _magnitude_bits, _upper_float
from .full import LogitState, require_route
from .trajectory import Record, Trajectory, checkpoint_steps, throttled

MAX_STEPS = 10**7          # longest certified full-matrix horizon accepted
CHECK_EVERY = 20           # steps between two checks that every ball is finite (a non-finite ball stays so)


def entries(st: LogitState):
    """Every ball of the iterated state."""
    yield from st.WX.flat
    yield from st.Y.flat
    yield from st.logits.flat


def snapshot(st: LogitState) -> tuple:
    """The iterated state (its arrays are replaced, never changed in place, by a step)."""
    return st.WX, st.Y, st.logits, st.sumG, st.sumgY, st.step_count


def restore(st: LogitState, snap: tuple) -> None:
    st.WX, st.Y, st.logits, st.sumG, st.sumgY, st.step_count = snap


def trouble(st: LogitState) -> NumericalTrouble | None:
    """NumericalTrouble when a ball is not finite or the state has diverged (None when all is well)."""
    bad = [x for x in entries(st) if not x.is_finite()]
    size = max((_magnitude_bits(x) for x in entries(st) if x.is_finite()), default=0)
    if not bad and size <= DIVERGED_BITS:
        return None
    s, where = st.s, f"(after step {st.step_count})"
    big = max((abs(float(x.mid())) for x in st.WX.flat if x.is_finite()), default=0.0)
    if size > DIVERGED_BITS or big > DIVERGED:
        return NumericalTrouble(st.step_count, "the certified enclosure of (W_X, W_P, W_KQ)",
                                f"became unbounded: GD diverges here {where}", f"try a smaller `eta` (here eta = {s.eta_v})")
    return NumericalTrouble(st.step_count, "the certified enclosure of (W_X, W_P, W_KQ)",
                            f"became unbounded with {st.ar.bits} bits {where}", "try more bits (`arb` BITS) or fewer steps")


def advance(st: LogitState, target: int, tick=None) -> None:
    """Step ``st`` to ``target``, checking the balls every CHECK_EVERY steps; on a failed check, the steps
    since the last good one are run again one at a time, so the error names the first bad step."""
    while st.step_count < target:
        good = snapshot(st)
        n = min(CHECK_EVERY, target - st.step_count)
        for _ in range(n):
            st.step()
        if trouble(st) is not None:
            restore(st, good)
            while True:
                st.step()
                found = trouble(st)
                if found is not None:
                    raise found
        if tick is not None:
            tick(st.step_count)


def certified_record(st: LogitState) -> Record:
    """Enclosures of every recorded quantity. cos(W_X, V*) is [-1, 1] where ||W_X|| is a ball around 0 that
    is not exactly 0 (the record's ratio is then not defined on the whole ball)."""
    rec = st.record()
    num = st.ar.num
    for k in ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv"):
        setattr(rec, k, num(getattr(rec, k)))
    for k in ("alpha", "offspan", "support_mass"):
        setattr(rec, k, [num(x) for x in getattr(rec, k)])
    nw = sum((x * x for x in st.WX.flat), arb(0))
    if not nw.is_zero() and nw.contains(0):
        rec.cos_wv = arb(0, 1)
    return rec


def state_radius(st: LogitState) -> float:
    """The largest radius of a state ball (an upper bound, as a float)."""
    return max((_upper_float(arb(x.rad())) for x in entries(st)), default=0.0)


def relative_radius(rec: Record) -> float:
    """The largest radius / |midpoint| over a record's quantities that are not exactly 0 (an upper bound)."""
    out = 0.0
    for x in [rec.loss, rec.excess_loss, rec.s_err, rec.w_err, rec.wp_norm, *rec.alpha, *rec.support_mass]:
        if x.is_zero():
            continue
        low = abs(x).lower()
        out = max(out, float("inf") if low <= 0 else _upper_float(arb(x.rad()) / low))
    return out


def iterate_certified_full(s: Setting, steps: int, bits: int = 256, checkpoints=None, progress=None) -> Trajectory:
    """Certified enclosures of the full-matrix recursion at ``checkpoints`` (Records of flint.arb balls).

    Claim: for every checkpoint step t and every recorded quantity q, the exact value of q after t exact
    full-matrix GD steps (exact real arithmetic, exact rational parameters; sinusoidal P as the float64
    matrix the setting defines) lies in the returned ball. ``traj.state_radii`` holds the largest state
    radius at each checkpoint. ``progress(step)`` follows the run.
    """
    steps = check_int("steps", steps, 0, MAX_STEPS)
    bits = check_int("arb bits", bits, MIN_BITS, MAX_BITS)
    require_route(s, "arb")
    cps = sorted(set(checkpoints or checkpoint_steps(steps)))
    ar = ArbArith(bits)
    traj = Trajectory("full", f"arb{bits}", None)
    traj.notes.append(f"certified: Arb balls at {bits} bits for every entry of W_X, W_P P and the logits")
    tick, radii = throttled(progress), []
    with ar.context():
        st = LogitState(s, ar)
        for target in cps:
            advance(st, target, tick)
            traj.records.append(certified_record(st))
            radii.append(state_radius(st))
            if tick is not None:
                tick(st.step_count, force=True)
    traj.notes.append(f"max state radius {max(radii):.3e}")
    traj.state_radii = radii
    return traj
