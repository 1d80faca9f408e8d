"""Certified engine: rigorous enclosures of the reduced recursion in Arb ball arithmetic (python-flint).

Why not iterate balls naively: the reduced map x -> F(x) on x = (alpha_1..alpha_M, delta) is
evaluated in interval arithmetic with every occurrence of a variable treated independently (the
dependency / wrapping effect), so the radius is multiplied by a factor > 1 every step and reaches
+-inf within a few hundred steps (D = 64, K = 4, N = 64, eta = 1/32 at 256 bits).

What we do instead: the mean-value form of verify.engines.mean_value (a centre c_k of exact dyadic numbers,
radii r_k, B_{k+1} = F([c_k]) + J(B_k) [-r_k, r_k], re-centred every step). F([c_k]) is a ball because of
rounding and because parameters such as eta = 7/100 are not dyadic (they enter as balls containing the exact
rational). In the contracting alpha directions |J| < 1 and in the neutral delta direction |J| = 1 + O(u^2), so the
radius grows only by the rounding injected per step (about 2^-prec times the state's size), i.e. linearly in the
horizon. This module states the reduced map's summands (CertifiedState._terms) and its Jacobian's enclosure.

The Jacobian is generated from the SymPy step expressions (verify.derive.reduced_map.reduced_step_exprs)
by differentiation; nothing is retyped. The recorded observables (loss, s_err, w_err, cos_wv,
support mass) are the generated ones of verify.engines.reduced_iteration evaluated on the state balls, so they
enclose the exact observables of every state in the box.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from decimal import Context, Decimal, ROUND_HALF_EVEN

import sympy as sp
from flint import arb, fmpq

from ..derive import codegen
from ..derive.reduced_map import case_of, reduced_step_exprs
from ..model.symbols import alpha, delta
from ..errors import InvalidParameter, NumericalTrouble
from ..model.setting import Setting
from ..model.sigmas import Sigma
from ..model.validation import check_int
from ..model.precision import arb_precision
from .balls import _frac_parts, to_fraction  # noqa: F401  (re-exported)
from .bits import MAX_BITS, MIN_BITS
from .mean_value import box, finite, mean_value_step
from .reduced_iteration import ARGS, ReducedState
from .trajectory import Record, Trajectory, checkpoint_steps

MAX_STEPS = 10**9         # longest certified horizon accepted (about 6 hours at 5e4 steps/s)
JAC_BITS = 64    # working precision of the Jacobian enclosure (see CertifiedState.step)
# A state this large (|alpha| or |delta|) is far off every convergent trajectory (alpha -> 1, delta ~ log T):
# an enclosure that becomes unbounded from there reports a diverging GD, not a lack of bits.
DIVERGED = 1e6
# Beyond 2^1000 (1e301) the run is stopped as diverged: a diverging recursion squares its exponents
# every few steps, and Arb arithmetic on such numbers becomes arbitrarily slow.
DIVERGED_BITS = 1000


@dataclass(frozen=True)
class ArbArith:
    """The duck-typed arithmetic ReducedState expects, acting on flint.arb balls."""

    bits: int
    name: str = "arb"
    backend: str = "arb"

    def num(self, x):
        if isinstance(x, arb):
            return x
        if isinstance(x, float):       # only exact constants reach here; a float is exact in binary
            return arb(x)
        x = Fraction(x)
        return arb(fmpq(x.numerator, x.denominator))   # the exact rational, rounded outward

    def sqrt(self, x):
        # ReducedState.record takes square roots of sums of squares only (exactly >= 0); a ball
        # around such a value may reach below 0, and its nonnegative part still contains the value.
        return x.nonnegative_part().sqrt()

    def context(self):
        return arb_precision(self.bits)


@dataclass(frozen=True)
class StepFunctions:
    """The reduced map at a point and its Jacobian entries, compiled to Arb (one row m at a time).

    centre(alpha_m, vn_m, delta, *P) -> (alpha_m', inc_m)  with  delta' = delta + sum_m inc_m;
    jac(...) -> (d alpha_m'/d alpha_m, d alpha_m'/d delta, d inc_m/d alpha_m, d inc_m/d delta).
    alpha_m' does not depend on alpha_l (l != m): the Jacobian is 'arrow' shaped.
    """

    centre: object
    jac: object


@lru_cache(maxsize=None)
def step_functions(sigma: Sigma, case: str) -> StepFunctions:
    a_next, inc = reduced_step_exprs(sigma, case)
    jac = tuple(sp.diff(e, v) for e in (a_next, inc) for v in (alpha, delta))
    return StepFunctions(codegen.lambdify(ARGS, (a_next, inc), "arb"), codegen.lambdify(ARGS, jac, "arb"))


class CertifiedState:
    """Centre (exact dyadic balls of radius 0) and radii of the state (alpha_1..alpha_M, delta)."""

    def __init__(self, s: Setting, bits: int):
        self.bits = check_int("arb bits", bits, MIN_BITS, MAX_BITS)
        self.s = s
        self.ar = ArbArith(self.bits)
        with self.ar.context():
            self.red = ReducedState(s, self.ar)          # parameters as exact-rational balls
            self.fn = step_functions(s.sigma, case_of(s.K, s.D))
            self.alpha = [arb(0)] * s.M                   # zero initialisation (exact)
            self.ralpha = [arb(0)] * s.M                  # radii, as exact balls of radius 0
            self.delta, self.rdelta = arb(0), arb(0)
        self.step_count = 0
        if s.init != "zero":
            raise InvalidParameter("init", s.init, "the certified engine starts from init = zero")

    def step(self) -> None:
        """One mean-value-form step (verify.engines.mean_value; call inside ``self.ar.context()``)."""
        c, r = mean_value_step([*self.alpha, self.delta], [*self.ralpha, self.rdelta], self._terms, self._unbounded)
        if any(_magnitude_bits(x) > DIVERGED_BITS for x in c):
            raise self._unbounded()
        self.alpha, self.delta, self.ralpha, self.rdelta = c[:-1], c[-1], r[:-1], r[-1]
        self.step_count += 1

    def _terms(self, boxes) -> list:
        """The summands of the reduced map's image over ``boxes`` (alpha_1..alpha_M, delta), in the order of
        verify.engines.mean_value.image: alpha_m' = a_m(c) + J_aa [-r_am, r_am] + J_ad [-r_d, r_d] and
        delta' = delta_c + sum_m (inc_m(c) + J_ia,m [-r_am, r_am]) + (1 + sum_m J_id,m) [-r_d, r_d], the rows'
        increments of delta and their first-order terms interleaved (the Jacobian is arrow shaped: alpha_m' does
        not depend on alpha_l, l != m)."""
        P, vn = self.red.params, self.red.vn
        d_c, d_r, d_box = self.delta, self.rdelta, boxes[-1]
        M = len(self.alpha)
        alphas, deltas, jdd = [], [d_c], arb(1)
        for m, (a_c, a_r, a_box, v) in enumerate(zip(self.alpha, self.ralpha, boxes, vn)):
            a_next, inc = self.fn.centre(a_c, v, d_c, *P)
            if a_r == 0 and d_r == 0:
                # A point box (e.g. the exact start): F(B) = F(c), no Jacobian needed (ReLU's
                # partials are 0/0 at alpha = 0, the radial convention's corner).
                alphas.append([a_next])
                deltas.append(inc)
                continue
            j_aa, j_ad, j_ia, j_id = self._jacobian(a_box, v, d_box, P)
            alphas.append([a_next, (j_aa, m), (j_ad, M)])
            deltas += [inc, (j_ia, m)]
            jdd = jdd + j_id
        return [*alphas, [*deltas, (jdd, M)]]

    def _jacobian(self, a_box, v, d_box, P) -> tuple:
        """An enclosure of one row's Jacobian entries over the box (StepFunctions.jac)."""
        # J multiplies radii ~2^-prec: a few dozen correct bits suffice, and Arb rounds outward
        # at any precision, so the enclosure J(B_k) stays rigorous when evaluated at JAC_BITS.
        with arb_precision(JAC_BITS):
            jac = self.fn.jac(a_box, v, d_box, *P)
        if not finite(jac):
            # Cancellation at JAC_BITS: evaluate at the full precision. The generated ReLU
            # kernel has a removable 0/0 at delta = 0 (Arb: nan within ~1e-70 of it); an
            # enclosure over a larger box is still an enclosure over B_k, so widen the box
            # (by 2^-bits/2, then 2^-32): J's extra width is multiplied by r_k ~ 2^-bits.
            jac = self.fn.jac(a_box, v, d_box, *P)
            for w in (self.bits // 2, 32):
                if finite(jac):
                    break
                eps = arb(0, arb(2) ** -w)
                jac = self.fn.jac(a_box + eps, v, d_box + eps, *P)
        return jac

    def _unbounded(self):
        """NumericalTrouble for an enclosure that stopped being finite: GD diverging (the state was
        already large: more bits do not help) or too few bits (a moderate state: they do)."""
        size = max((abs(x.mid()) for x in [*self.alpha, self.delta]), key=to_fraction)      # exact: any magnitude
        rad = max((arb(r.mid()) for r in [*self.ralpha, self.rdelta]), key=to_fraction)
        where = (f"(at step {self.step_count}: max |alpha|, |delta| = {size.str(3, radius=False)}, largest radius "
                 f"{rad.str(3, radius=False)})")
        if size > DIVERGED:
            return NumericalTrouble(self.step_count + 1, "the certified enclosure of (alpha, delta)",
                                    f"became unbounded: GD diverges here {where}",
                                    f"try a smaller `eta` (here eta = {self.s.eta_v})")
        return NumericalTrouble(self.step_count + 1, "the certified enclosure of (alpha, delta)",
                                f"became unbounded with {self.bits} bits {where}",
                                "try more bits (`arb` BITS) or fewer steps")

    def balls(self):
        """(alpha balls, delta ball): every state the exact recursion can be in."""
        return [box(c, r) for c, r in zip(self.alpha, self.ralpha)], box(self.delta, self.rdelta)

    def radius(self) -> float:
        """Largest radius of the state box (an upper bound, rounded up to a float)."""
        return max(_upper_float(r) for r in [*self.ralpha, self.rdelta])

    def record(self) -> Record:
        """Enclosures of every recorded quantity (generated observables on the state balls)."""
        a, d = self.balls()
        self.red.alpha, self.red.delta, self.red.step_count = a, d, self.step_count
        rec = self.red.record()
        # Constant observables (e.g. p = 0 when K = 0) come out of the generated code as Python
        # numbers; every exact constant is an exact ball.
        for k in ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv"):
            setattr(rec, k, self.ar.num(getattr(rec, k)))
        for k in ("alpha", "offspan", "support_mass"):
            setattr(rec, k, [self.ar.num(x) for x in getattr(rec, k)])
        # ReducedState.record sets cos = 0 when its denominator is not certainly nonzero; that is
        # exact only when every alpha is exactly 0 (step 0). Otherwise |cos| <= 1 is all we claim.
        if not all(x.is_zero() for x in a) and any(x.contains(0) for x in a):
            rec.cos_wv = arb(0, 1)
        return rec


def _magnitude_bits(x) -> int:
    """log2 |mid(x)|, roughly (0 for 0): the binary exponent of the midpoint's leading bit."""
    if x.mid().is_zero():
        return 0
    m, e = x.mid().man_exp()
    return int(e) + int(m).bit_length() if abs(int(e)) < 1 << 62 else 1 << 62


def _upper_float(x) -> float:
    """A float >= the largest absolute value in ball ``x``."""
    f = Fraction(*_frac_parts(x.abs_upper()))
    try:
        return math.nextafter(float(f), math.inf) if f else 0.0
    except OverflowError:          # beyond the float range: inf is still an upper bound
        return math.inf


def huge(x) -> bool:
    """True when the ball's midpoint or radius has a binary exponent beyond 2^20 (a diverged run):
    exact rationals of such numbers would take megabytes, so they are printed as unbounded."""
    return any(abs(int(b.mid().man_exp()[1])) > 1 << 20 for b in (x, arb(x.rad())) if not b.is_zero())


def rad_fraction(x) -> Fraction:
    return to_fraction(arb(x.rad()))


def round_up(q: Fraction, sig: int = 3) -> str:
    """A decimal string >= q >= 0 with ``sig`` significant digits."""
    if q <= 0:
        return "0"
    e = len(str(q.numerator)) - len(str(q.denominator))        # 10^(e-1) <= q < 10^(e+1)
    while Fraction(10) ** e <= q:
        e += 1
    while Fraction(10) ** (e - 1) > q:
        e -= 1                                                # now 10^(e-1) <= q < 10^e
    scale = Fraction(10) ** (e - sig)
    digits = str(-((-q) // scale))                             # ceil(q / scale): sig or sig+1 digits
    return f"{digits[0]}.{digits[1:]}e{e - sig + len(digits) - 1}"


def cover_radius(x, printed: str) -> str:
    """Radius (decimal, rounded up) of a ball centred at the decimal ``printed`` that contains ``x``.

    |exact - printed| <= |exact - mid(x)| + |mid(x) - printed| <= rad(x) + |mid(x) - printed|.
    """
    if not x.is_finite() or huge(x):
        return "inf"
    try:
        p = Fraction(printed)
    except (ValueError, ZeroDivisionError):
        return "inf"
    return round_up(rad_fraction(x) + abs(to_fraction(x) - p))


def ball_str(x, digits: int | None = None) -> tuple[str, str]:
    """(midpoint decimal, radius decimal) such that the printed ball contains every point of ``x``.

    The midpoint is printed with as many digits as the radius warrants (+2), at least 5.
    """
    if not x.is_finite() or huge(x):
        return "nan", "inf"
    mid, rad = to_fraction(x), rad_fraction(x)
    if digits is None:
        if mid == 0 or rad == 0:
            digits = 40
        else:
            digits = max(5, min(400, math.ceil(math.log10(abs(mid) / rad)) + 2 if rad < abs(mid) else 5))
    ctx = Context(prec=digits, rounding=ROUND_HALF_EVEN)
    s = ctx.divide(Decimal(mid.numerator), Decimal(mid.denominator))
    printed = format(s, "g") if s != 0 else "0"
    return printed, cover_radius(x, printed)


def iterate_certified(s: Setting, steps: int, bits: int = 256, checkpoints=None, progress=None) -> Trajectory:
    """Certified enclosures of the reduced recursion at ``checkpoints`` (Records of flint.arb balls).

    Claim: for every checkpoint step t and every recorded quantity q, the exact value of q after t
    exact GD steps (exact rational parameters, exact real arithmetic) lies in the returned ball.
    ``progress(step)``, if given, is called every 1000 steps and at every checkpoint.
    """
    steps = check_int("steps", steps, 0, MAX_STEPS)
    cps = sorted(set(checkpoints or checkpoint_steps(steps)))
    st = CertifiedState(s, bits)
    traj = Trajectory("reduced", f"arb{st.bits}", None)
    traj.notes.append(f"certified: Arb balls at {st.bits} bits, mean-value form re-centred every step")
    radii = []
    with st.ar.context():
        for target in cps:
            while st.step_count < target:
                st.step()
                if progress is not None and st.step_count % 1000 == 0:
                    progress(st.step_count)
            traj.records.append(st.record())
            radii.append(st.radius())
            if progress is not None:
                progress(st.step_count)
    traj.notes.append(f"max state radius {max(radii):.3e}")
    traj.state_radii = radii
    return traj
