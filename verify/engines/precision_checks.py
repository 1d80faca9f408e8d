"""Precision policy, in one place: what an arithmetic can carry over a horizon, and cross-checks.

Error model (the one verify.engines.arith.guard_digits uses to choose mpmath's guard digits):
the recursion contracts in alpha and is neutral in delta, so a rounding error injected at each step
survives and they add up at most linearly in the horizon T (log10(T) digits); the excess loss is a
difference of O(1) terms of size O(1/T) and loses up to another log10(T) digits to cancellation.
With w working digits (float64: w = 53 log10(2) = 15.95) a result after T steps therefore carries

    carried_digits(w, T) = w - 2 log10(T + 1) - 1      significant digits,

and two runs at w and at w' > w must agree to the relative tolerance 10^-carried_digits(w, T).
A full-matrix step also sums up to n = D N numbers (the softmax normaliser, <s_j, g_j>, ||S - S*||^2),
and a sum of n numbers in any order is within (n - 1) u sum |x_i| of the exact sum (u the unit roundoff):
up to log10(n) more digits, so there ``summed_terms`` = D N (:func:`summed_terms`) and the digits are
carried_digits(w, T, n) = w - 2 log10(T + 1) - 1 - log10(n).
Measured (float64 vs 256-bit Arb, T = 10^5, identity/erf, three regimes): the worst relative
difference was 1e-11 (excess loss), the model's tolerance 1e-5; the model is deliberately safe.

A result is cross-checked by re-running the same engine at higher precision (mpmath with 20 more
digits, or the certified Arb engine) at its checkpoints; a disagreement raises PrecisionError
(``on_disagreement="raise"``) or is recorded in the trajectory's notes and reported as a
PrecisionWarning (``"warn"``): never silent.

The reference is always strictly more precise than the run (:func:`reference_bits`: the run's working
digits plus REFERENCE_EXTRA_DIGITS plus what the horizon costs), and an Arb reference is compared
within its certified ball: a run value x agrees with a ball m +- r when (|x - m| - r) / scale is
within the run's tolerance. (A fixed 256-bit reference cannot check a run at 60 or more digits: its
own radius is then larger than the run's tolerance.)
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

from . import iterate
from ..errors import InvalidParameter, PrecisionError
from ..lazy import lazy_module
from ..model.precision import mpmath_precision
from .arith import Arith
from .trajectory import Trajectory

mpmath = lazy_module("mpmath")           # loaded when a tolerance is first asked for (a --help needs none)
FLOAT64_DIGITS = 53 * math.log10(2)      # 15.95
# Digits the reference carries beyond the run's working digits (after its own horizon loss): the
# reference's error is then 10^-20 of the run's tolerance, negligible in the comparison.
REFERENCE_EXTRA_DIGITS = 20
SCALARS = ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv")
LISTS = ("alpha", "offspan", "support_mass")


class PrecisionWarning(UserWarning):
    """A cross-check found a disagreement beyond the stated tolerance (policy 'warn')."""


def work_digits(arithmetic: str, dps: int | None = None, steps: int = 0) -> float:
    """Decimal digits carried while iterating (float64: 15.95; mpmath: Arith's work_dps)."""
    if arithmetic.startswith("float64"):
        return FLOAT64_DIGITS
    if arithmetic.startswith("arb"):
        return int(arithmetic[3:]) * math.log10(2)
    return float(Arith.make("mpmath", dps, steps).work_dps)


def summed_terms(setting, engine: str) -> int:
    """The most numbers one step of ``engine`` sums (see the module docstring): D N full-matrix, 1 reduced; a data
    model's expectation adds its own sums (a second-moment tensor's quadratic forms, the mean over images)."""
    return setting.D * setting.N + setting.data.expectation_terms() if engine == "full" else 1


def carried_digits(work: float, steps: int, summed: int = 1) -> float:
    """Significant digits a result after ``steps`` steps carries when iterated with ``work`` digits, each step
    summing up to ``summed`` numbers."""
    return work - 2 * math.log10(steps + 1) - 1 - math.log10(summed)


def tolerance(work: float, steps: int, summed: int = 1) -> float:
    """Relative tolerance of a result after ``steps`` steps at ``work`` digits (see module docstring).
    A float: 0.0 beyond 300 digits (cross_check compares with :func:`tolerance_mp`)."""
    return 10.0 ** (-carried_digits(work, steps, summed))


def tolerance_mp(work: float, steps: int, summed: int = 1) -> mpmath.mpf:
    """:func:`tolerance` as an mpmath number, representable at any number of digits (10^-1000 too)."""
    return mpmath.power(10, -mpmath.mpf(carried_digits(work, steps, summed)))


def g3(x) -> str:
    """A number (float or mpmath) in 3 significant digits, at any magnitude."""
    return mpmath.nstr(mpmath.mpf(x), 3)


def max_steps(work: float, digits: float, summed: int = 1) -> int:
    """The longest horizon at which ``work`` working digits still carry ``digits`` digits."""
    x = (work - 1 - digits - math.log10(summed)) / 2
    return int(10.0 ** x) - 1 if x > 0 else 0


def require_horizon(arithmetic: str, steps: int, digits: float, dps: int | None = None,
                    work: float | None = None, summed: int = 1) -> float:
    """Raise PrecisionError unless the arithmetic carries ``digits`` digits over ``steps`` steps (each summing
    up to ``summed`` numbers, :func:`summed_terms`).

    Returns the digits carried. ``work`` overrides the working digits (e.g. an mpmath run at a fixed
    working precision without guard digits).
    """
    if digits <= 0:
        raise InvalidParameter("digits", digits, "must be > 0")
    w = work_digits(arithmetic, dps, steps) if work is None else work
    c = carried_digits(w, steps, summed)
    if c < digits:
        if arithmetic.startswith("float64"):
            raise PrecisionError(f"`steps={steps}`: float64 carries about {max(c, 0):.1f} of the {digits} requested "
                                 f"digits at this horizon (at most {max_steps(w, digits, summed)} steps for {digits} "
                                 f"digits); use `arithmetic=mpmath` with `dps` or fewer `steps`")
        raise PrecisionError(f"`dps={dps}` (working digits {w:g}) is too low for `steps={steps}`: it carries about "
                             f"{max(c, 0):.1f} of the {digits} requested digits; raise `dps` to at least "
                             f"{math.ceil(digits + 2 * math.log10(steps + 1) + 1 + math.log10(summed))}")
    return c


@dataclass
class CrossCheck:
    """Outcome of a cross-check: each compared number with its reference and tolerance."""

    agree: bool
    reference: str
    tolerance: dict                       # step -> relative tolerance
    rows: list = field(default_factory=list)   # (step, name, value, reference, rel_diff, ok)

    def disagreements(self) -> list:
        return [r for r in self.rows if not r[5]]

    def as_dict(self) -> dict:
        return {"agree": self.agree, "reference": self.reference,
                "tolerance": {str(k): g3(v) for k, v in self.tolerance.items()},
                "compared": len(self.rows), "disagreements": [
                    {"step": s, "quantity": n, "value": str(v), "reference": str(r), "rel_diff": g3(d)}
                    for s, n, v, r, d, _ in self.disagreements()]}


# Symmetry residuals: exactly 0 in exact arithmetic on the invariant set (verify.derive.reduction_proof), so a
# run leaves rounding residue of order (unit roundoff) x ||W||; they are compared on an O(1) scale.
RESIDUALS = ("offspan", "wp_norm")


def reference_bits(work: float, steps: int, minimum: int = 256) -> int:
    """Arb bits of a reference strictly more precise than a run with ``work`` working digits over
    ``steps`` steps: it still carries work + REFERENCE_EXTRA_DIGITS digits after losing 2 log10(T+1) + 1."""
    digits = work + REFERENCE_EXTRA_DIGITS + 2 * math.log10(steps + 1) + 1
    return max(minimum, math.ceil(digits / math.log10(2)))


def rel_diff(x, y, y0, floor=0, rad=0):
    """|x - y| relative to the quantity's scale max(|y|, |y0|) (1 if both are 0); with ``rad`` (y is the
    midpoint of a certified ball of that radius) the distance from x to the ball, 0 inside it.

    Why the scale and not |y|: every recorded quantity is computed from O(scale) terms, so its
    rounding error is relative to the scale; a quantity that decays to 0 (w_err when alpha -> 1
    exactly, K = D) keeps an absolute error of a few ulps of its initial size y0.
    """
    scale = max(abs(y), abs(y0), floor)
    return max(abs(x - y) - rad, 0) / (scale if scale else 1)


def _pairs(rec):
    for k in SCALARS:
        yield k, getattr(rec, k)
    for k in LISTS:
        for i, x in enumerate(getattr(rec, k)):
            yield f"{k}[{i}]", x


def _as_mpf(x):
    from flint import arb  # heavy: flint
    if isinstance(x, arb):
        from .arb import to_fraction  # heavy: loads flint,numpy,sympy
        q = to_fraction(x)
        return mpmath.mpf(q.numerator) / q.denominator
    return mpmath.mpf(x)


def _rad(x):
    """The radius of an Arb ball (rounded up to an mpf), 0 for any other number."""
    from flint import arb  # heavy: flint
    if isinstance(x, arb):
        from .arb import rad_fraction  # heavy: loads flint,numpy,sympy
        q = rad_fraction(x)
        return mpmath.mpf(q.numerator) / q.denominator
    return 0


def _pick(steps: list[int], count: int) -> list[int]:
    """Up to ``count`` of the steps, log-spread, always including the last."""
    if len(steps) <= count:
        return list(steps)
    idx = sorted({round(i * (len(steps) - 1) / (count - 1)) for i in range(count)})
    return [steps[i] for i in idx]


def cross_check(setting, traj: Trajectory, reference: str = "mpmath", on_disagreement: str = "raise",
                checkpoints: int = 6, extra_digits: int = 20, arb_bits: int = 256, progress=None,
                summed: int | None = None) -> CrossCheck:
    """Re-run ``traj``'s regime at higher precision at (up to ``checkpoints`` of) its checkpoints and compare.

    ``traj`` comes from verify.engines.iterate (float64 or mpmath) or verify.engines.fast.
    reference: "mpmath" (the same engine with ``extra_digits`` more digits) or "arb" (the certified
    engine at reference_bits(w, steps) >= ``arb_bits`` bits; reduced only). A quantity x with
    reference y agrees when rel_diff(x, y, y0, rad=radius of y) <= tol, y0 the reference at step 0,
    tol = tolerance(w, step, summed), w the working digits of ``traj`` and ``summed`` the numbers a step sums
    (default: summed_terms of ``traj``'s engine). ``progress(step)`` follows the reference run.
    """
    if on_disagreement not in ("raise", "warn"):
        raise InvalidParameter("on_disagreement", on_disagreement, "must be raise or warn")
    if reference not in ("mpmath", "arb"):
        raise InvalidParameter("reference", reference, "must be mpmath or arb")
    arith = traj.arithmetic
    w = work_digits(arith, traj.dps, max(traj.steps()))
    summed = summed_terms(setting, traj.engine) if summed is None else summed
    cps = sorted(set(_pick(traj.steps(), checkpoints)) | {0})
    by_step = {r.step: r for r in traj.records}
    if reference == "arb":
        if traj.engine != "reduced":
            raise InvalidParameter("reference", "arb", "the certified engine encloses the reduced recursion only")
        from .arb import iterate_certified  # heavy: loads flint,numpy,sympy
        bits = reference_bits(w, max(cps), arb_bits)
        ref = iterate_certified(setting, max(cps), bits, cps, progress=progress)
        ref_name = f"arb{bits}"
    else:
        dps = math.ceil(w) + extra_digits
        ref = iterate(setting, max(cps), traj.engine, "mpmath", dps, cps, progress=progress)
        ref_name = f"mpmath dps={dps}"
    out = CrossCheck(True, ref_name, {})
    with mpmath_precision(max(60, int(w) + 30)):
        start = dict(_pairs(ref.records[0]))
        for rr in ref.records:
            if rr.step not in by_step:
                continue
            tol = tolerance_mp(w, rr.step, summed)
            out.tolerance[rr.step] = tol
            for (name, x), (_, y) in zip(_pairs(by_step[rr.step]), _pairs(rr)):
                x_, y_ = _as_mpf(x), _as_mpf(y)
                floor = 1 if name.split("[")[0] in RESIDUALS else 0
                d = rel_diff(x_, y_, _as_mpf(start[name]), floor, _rad(x) + _rad(y))
                ok = bool(d <= tol)
                out.agree &= ok
                out.rows.append((rr.step, name, x, y_, d, ok))
    if not out.agree:
        bad = out.disagreements()
        msg = (f"{len(bad)} of {len(out.rows)} numbers of the {arith} run disagree with {ref_name} beyond the "
               f"stated tolerance; first: step {bad[0][0]} {bad[0][1]} = {bad[0][2]} vs {bad[0][3]} "
               f"(relative difference {g3(bad[0][4])} > {g3(out.tolerance[bad[0][0]])})")
        if on_disagreement == "raise":
            raise PrecisionError(msg)
        traj.notes.append("PRECISION WARNING: " + msg)
        warnings.warn(msg, PrecisionWarning, stacklevel=2)
    else:
        traj.notes.append(f"cross-checked against {ref_name} at steps {cps}: agree within the stated tolerance")
    return out
