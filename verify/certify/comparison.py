"""The discrete comparison lemma for cubic decay, its obligations, and u(T) bounds at any T.

Lemma (discrete comparison). Let x_0 > 0 and x_{t+1} = x_t - q_t x_t^3 with 0 < a <= q_t <= b and
b x_t^2 < 1. Then z_t = 1/x_t^2 satisfies

    z_t + 2a  <=  z_{t+1}  <=  z_t + 2b + 3 b^2 x_t^2 / (1 - b x_t^2)^2,                      (one step)

hence, with kappa = 1 - b x_0^2 (x_t decreases), for t >= 1

    z_t >= z_0 + 2 a t,     z_t <= z_0 + 2 b t + (3 b^2/kappa^2) (1/z_0 + ln(1 + 2a(t-1)/z_0) / (2a)).

Proof obligations (each discharged by z3 or SymPy in :func:`lemma_obligations`): the one-step
inequalities (z3, nonlinear real arithmetic, after clearing the positive denominators); the step
error is increasing in x^2, so x_t^2 <= 1/(z_0 + 2at) bounds it; sum <= integral for the
decreasing 1/(z_0 + 2as), and that integral in closed form.

Shells. On {u <= u_j = u0 2^-j} (inside the invariant region) q_t = Q(u_t, eps_t) lies in [a_j, b_j]
(verify.certify.region). The upper bound z_lo(t) certifies u_t <= u_{j+1} from the first t_{j+1}
with z_lo(t_{j+1}) >= 1/u_{j+1}^2; from then on the lemma runs with [a_{j+1}, b_{j+1}], restarted
from the bounds at t_{j+1}. Evaluating at T costs a binary search over the shells: O(#shells), not O(T).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from ..engines.arb import arb_precision
from .obligations import Obligation, identity, sign, smt
from .arbfun import exact, hi_frac, lo_frac

LEMMA = ("Let x_{t+1} = x_t - q_t x_t^3 with 0 < a <= q_t <= b and b x_t^2 < 1, z_t = 1/x_t^2. Then "
         "z_t + 2a <= z_{t+1} <= z_t + 2b + 3b^2 x_t^2/(1 - b x_t^2)^2; hence z_t >= z_0 + 2at and "
         "z_t <= z_0 + 2bt + (3b^2/kappa^2)(1/z_0 + ln(1 + 2a(t-1)/z_0)/(2a)) for t >= 1, kappa = 1 - b x_0^2.")
N_TANGENT = 10**15   # tangent point (in steps) of ln for the all-time lower constant on the last shell


@lru_cache(maxsize=None)
def lemma_obligations() -> tuple:
    """The lemma's inequality obligations, discharged symbolically (SymPy) or by z3."""
    import sympy as sp
    import z3
    ob = []
    x2, a, q, b, y2 = z3.Reals("x2 a q b y2")
    hyp = [x2 > 0, a > 0, a <= q, q <= b, b * x2 < 1]
    y = q * x2
    # z' = 1/(x2 (1 - y)^2), multiplied by the positive x2 (1 - y)^2 (1 - b x2)^2:
    ob.append(smt("one-step-lower", "z' >= z + 2a, i.e. 1 >= (1 + 2a x^2)(1 - q x^2)^2", hyp,
                  1 >= (1 + 2 * a * x2) * (1 - y) ** 2))
    ob.append(smt("one-step-upper", "z' <= z + 2b + 3b^2 x^2/(1 - b x^2)^2, cleared of the positive denominators",
                  hyp, (1 - b * x2) ** 2 <= (1 - y) ** 2 * ((1 + 2 * b * x2) * (1 - b * x2) ** 2
                                                           + 3 * b * b * x2 * x2)))
    ob.append(smt("step-error-monotone", "3b^2 x^2/(1 - b x^2)^2 is increasing in x^2 on [0, 1/b)",
                  [b > 0, x2 >= 0, x2 <= y2, b * y2 < 1],
                  3 * b * b * x2 * (1 - b * y2) ** 2 <= 3 * b * b * y2 * (1 - b * x2) ** 2))
    X, Q, Z, A, s, n = sp.symbols("x q z a s n", positive=True)
    ob.append(identity("one-step-remainder", "1/x'^2 - 1/x^2 - 2q = q^2 x^2 (3 - 2 q x^2)/(1 - q x^2)^2 for "
                       "x' = x - q x^3 (the remainder the upper bound majorises)",
                       1 / (X - Q * X**3) ** 2 - 1 / X**2 - 2 * Q, Q**2 * X**2 * (3 - 2 * Q * X**2) / (1 - Q * X**2) ** 2))
    ob.append(sign("sum-le-integral", "1/(z + 2as) is decreasing in s, so sum_{i=1}^{n-1} 1/(z + 2ai) <= "
                   "int_0^{n-1} ds/(z + 2as)", sp.diff(1 / (Z + 2 * A * s), s), "negative"))
    ob.append(identity("integral-closed-form", "int_0^{n-1} ds/(z + 2as) = ln(1 + 2a(n-1)/z)/(2a)",
                       sp.integrate(1 / (Z + 2 * A * s), (s, 0, n - 1)), sp.log(1 + 2 * A * (n - 1) / Z) / (2 * A)))
    yy = sp.Symbol("y", positive=True)
    ob.append(sign("log-concave", "ln(1 + y) is concave, so it lies below its tangent at any y0 > 0",
                   sp.diff(sp.log(1 + yy), yy, 2), "negative"))
    t, al, be, ga = sp.symbols("t alpha beta gamma", positive=True)
    ob.append(identity("moebius-monotone", "d/dt (alpha + t)/(beta + gamma t) = (beta - alpha gamma)/(beta + gamma t)^2: "
                       "of one sign, so the extremes over an interval are at its ends (or the limit 1/gamma)",
                       sp.diff((al + t) / (be + ga * t), t), (be - al * ga) / (be + ga * t) ** 2))
    return tuple(ob)


@dataclass(frozen=True)
class Shell:
    """Shell j: u <= u_j holds from step t_j (after T0) on; there Q in [a, b]; z in [Zl, Zh] at t_j."""

    j: int
    u_j: Fraction
    a: Fraction
    b: Fraction
    t: int
    Zl: Fraction
    Zh: Fraction

    @property
    def kappa(self) -> Fraction:
        return 1 - self.b * self.u_j**2

    @property
    def E(self) -> Fraction:
        """3 b^2 / kappa^2, the coefficient of the summed step errors."""
        return 3 * self.b**2 / self.kappa**2

    def z_lo(self, n: int) -> Fraction:
        return self.Zl + 2 * self.a * n

    def z_hi(self, n: int, bits: int) -> Fraction:
        """An exact rational >= z at n steps after t_j (the lemma, summed)."""
        if n == 0:
            return self.Zh
        with arb_precision(bits):
            lg = (exact(1 + 2 * self.a * (n - 1) / self.Zl)).log()
            err = exact(self.E) * (exact(1 / self.Zl) + lg / exact(2 * self.a))
            return self.Zh + 2 * self.b * n + hi_frac(err)

    def as_dict(self) -> dict:
        return {"j": self.j, "u_j": str(self.u_j), "a_j": str(self.a), "b_j": str(self.b), "t_j": self.t,
                "z_lo_at_t_j": str(self.Zl), "z_hi_at_t_j": str(self.Zh), "b_j_u_j2": float(self.b * self.u_j**2)}


def ceil_div(p: Fraction, q: Fraction) -> int:
    return -((-p) // q)


def schedule(bounds: list[dict], z0: tuple, bits: int) -> tuple[list[Shell], list[Obligation]]:
    """Shells with their entry steps, from the shell enclosures ``bounds`` (RegionCheck.shell_bounds)
    and z(T0) in [z0[0], z0[1]] (from the prefix end ball)."""
    ob = []
    bad = [sb for sb in bounds if not (sb["a"] > 0 and sb["b"] * sb["u_j"] ** 2 < 1)]
    ob.append(Obligation("shell-hypotheses", "on every shell j: a_j > 0 and b_j u_j^2 < 1 (the lemma's hypotheses)",
                         "arb", not bad, f"{len(bounds)} shells" if not bad else f"fails on shell {bad[0]['j']}"))
    Zl, Zh = z0
    ok_start = Zl >= 1 / bounds[0]["u_j"] ** 2
    ob.append(Obligation("prefix-in-shell-0", "z(T0) >= 1/u0^2, i.e. u(T0) <= u0", "arb", ok_start,
                         f"z_lo(T0) = {float(Zl):.6g}, 1/u0^2 = {float(1 / bounds[0]['u_j'] ** 2):.6g}"))
    shells, t = [], 0
    for k, sb in enumerate(bounds):
        sh = Shell(sb["j"], sb["u_j"], sb["a"], sb["b"], t, Zl, Zh)
        shells.append(sh)
        if k + 1 < len(bounds):
            need = 1 / bounds[k + 1]["u_j"] ** 2
            n = max(0, ceil_div(need - Zl, 2 * sh.a))
            t, Zl, Zh = t + n, sh.z_lo(n), sh.z_hi(n, bits)
    return shells, ob


def z_range(shells: list[Shell], t: int, bits: int) -> tuple[Fraction, Fraction]:
    """[z_lo, z_hi] containing 1/u^2 at t steps after T0 (t >= 0): one binary search, then closed form."""
    k = bisect.bisect_right([s.t for s in shells], t) - 1
    sh = shells[k]
    n = t - sh.t
    return sh.z_lo(n), sh.z_hi(n, bits)


def extremes(shells: list[Shell], T0: int, bits: int) -> list[dict]:
    """Per shell interval I_j (steps after T0): sup (T0 + t)/z_lo(t) and inf (T0 + t)/z_hi(t).

    z_lo is affine on I_j and z_hi lies below an affine majorant there (ln bounded by its value at the
    interval's end; on the last, infinite, interval by its tangent at N_TANGENT steps), so both
    ratios are Moebius functions of t, monotone, with extremes at the ends of I_j or in the limit.
    """
    out = []
    with arb_precision(bits):
        for k, sh in enumerate(shells):
            last = k + 1 == len(shells)
            t1 = None if last else shells[k + 1].t
            n1 = None if last else t1 - sh.t
            # Upper ratio: (T0 + t)/(Zl + 2a (t - t_j)).
            ends = [Fraction(T0 + sh.t) / sh.Zl]
            ends.append(Fraction(1) / (2 * sh.a) if last else Fraction(T0 + t1) / sh.z_lo(n1))
            sup = max(ends)
            # Lower ratio: z_hi(t) <= A + B (t - t_j) on I_j.
            if last:
                y0 = 2 * sh.a * N_TANGENT / sh.Zl
                lg = hi_frac(exact(1 + y0).log())
                A = sh.Zh + hi_frac(exact(sh.E) * (exact(1 / sh.Zl) + (exact(lg) - exact(y0 / (1 + y0)))
                                                   / exact(2 * sh.a)))
                B = 2 * sh.b + hi_frac(exact(sh.E) / exact(sh.Zl * (1 + y0)))
            else:
                lg = hi_frac(exact(1 + 2 * sh.a * n1 / sh.Zl).log())
                A = sh.Zh + hi_frac(exact(sh.E) * (exact(1 / sh.Zl) + exact(lg) / exact(2 * sh.a)))
                B = 2 * sh.b
            inf = min(Fraction(T0 + sh.t) / A, Fraction(1) / B if last else Fraction(T0 + t1) / (A + B * n1))
            out.append({"sup_T_over_z_lo": sup, "inf_T_over_z_hi": inf, "last": last})
    return out
