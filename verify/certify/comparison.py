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

Shells. On {u <= u_j = u0 r^j} (r = 1/2 by default) (inside the invariant region) q_t = Q(u_t, eps_t) lies in [a_j, b_j]
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
from .arbfun import dyadic_down, dyadic_up, exact, hi_frac, lo_frac

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
    """Shell j: from step t_j (after T0) on, u <= u_j; until the next shell's entry also u >= lo
    (lo = 0 on the last shell). There Q in [a, b], L2 in L2, h + eps u^2 in W; z in [Zl, Zh] at t_j."""

    j: int
    u_j: Fraction
    lo: Fraction
    a: Fraction
    b: Fraction
    L2: tuple
    W: tuple
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
        return z_hi(self.Zl, self.Zh, self.a, self.b, self.E, n, bits)

    def as_dict(self) -> dict:
        return {"j": self.j, "u_j": str(self.u_j), "u_lower_on_interval": str(self.lo), "a_j": str(self.a),
                "b_j": str(self.b), "t_j": self.t, "z_lo_at_t_j": str(self.Zl), "z_hi_at_t_j": str(self.Zh),
                "b_j_u_j2": float(self.b * self.u_j**2), "L2": [str(x) for x in self.L2],
                "h_plus_eps_u2": [str(x) for x in self.W]}


def z_hi(Zl: Fraction, Zh: Fraction, a: Fraction, b: Fraction, E: Fraction, n: int, bits: int) -> Fraction:
    """Zh + 2bn + E (1/Zl + ln(1 + 2a(n-1)/Zl)/(2a)) rounded up (Zh at n = 0): the lemma summed over n steps."""
    if n == 0:
        return Zh
    with arb_precision(bits):
        lg = (exact(1 + 2 * a * (n - 1) / Zl)).log()
        err = exact(E) * (exact(1 / Zl) + lg / exact(2 * a))
        return Zh + 2 * b * n + hi_frac(err)


def ceil_div(p: Fraction, q: Fraction) -> int:
    return -((-p) // q)


REFINE = 3   # passes of the lower-end refinement per shell


def schedule(hull, u0: Fraction, shells: int, z0: tuple, bits: int,
             ratio: Fraction = Fraction(1, 2)) -> tuple[list[Shell], list[Obligation]]:
    """Shells j = 0..shells with their entry steps; ``hull(lo, hi)`` gives the enclosures over {lo <= u <= hi}
    (RegionCheck.hull), z(T0) lies in [z0[0], z0[1]] (the prefix end ball).

    Lower-end refinement: on [t_j, t_{j+1}] also u >= lo_j = 1/sqrt(z_hi(t_{j+1})) (u decreases), so Q may
    be taken over {lo_j <= u <= u_j} only. That is circular, so it is checked, by induction on t: if
    q_s in [a, b] for s < t (u_s in [lo, u_j]), then z_t <= z_hi(t) <= z_hi(t_{j+1}) <= 1/lo^2, so
    u_t >= lo. Each pass starts from the previous lo (0 first) and must pass that check (obligation).
    """
    ob = []
    # Bounds may always be loosened: z_lo rounded down and z_hi up to 96-bit dyadics keep them short.
    Zl, Zh = dyadic_down(z0[0]), dyadic_up(z0[1])
    u_j = [u0 * ratio**j for j in range(shells + 1)]

    def entry_steps(Zl_, a, need):
        """The first n with the rounded z_lo(n) >= need (so u <= u_{j+1} is certified from then on)."""
        n = max(0, ceil_div(need - Zl_, 2 * a))
        while dyadic_down(Zl_ + 2 * a * n) < need:
            n += 1
        return n

    out, t, bad, inconsistent = [], 0, [], []
    for j in range(shells + 1):
        last = j == shells
        lo, h, n, zh_end = Fraction(0), hull(Fraction(0), u_j[j]), None, None
        for k in range(0 if last else REFINE + 1):
            if k:
                lo_new = lo_frac(1 / exact(zh_end).sqrt()) if zh_end > 0 else Fraction(0)
                h_new = hull(lo_new, u_j[j])
                kap = 1 - h_new["b"] * u_j[j] ** 2
                if not (h_new["a"] > 0 and kap > 0):
                    break
                n_new = entry_steps(Zl, h_new["a"], 1 / u_j[j + 1] ** 2)
                zh_new = z_hi(Zl, Zh, h_new["a"], h_new["b"], 3 * h_new["b"] ** 2 / kap**2, n_new, bits)
                if not zh_new * lo_new**2 <= 1:     # the induction's check: u_t >= lo_new on the interval
                    inconsistent.append(j)
                    break
                lo, h = lo_new, h_new
            if not (h["a"] > 0 and h["b"] * u_j[j] ** 2 < 1):
                break
            if not last:
                kap = 1 - h["b"] * u_j[j] ** 2
                n = entry_steps(Zl, h["a"], 1 / u_j[j + 1] ** 2)
                zh_end = z_hi(Zl, Zh, h["a"], h["b"], 3 * h["b"] ** 2 / kap**2, n, bits)
        if not (h["a"] > 0 and h["b"] * u_j[j] ** 2 < 1):
            bad.append(j)
            break
        sh = Shell(j, u_j[j], lo, h["a"], h["b"], h["L2"], h["W"], t, Zl, Zh)
        out.append(sh)
        if not last:
            t, Zl, Zh = t + n, dyadic_down(sh.z_lo(n)), dyadic_up(sh.z_hi(n, bits))
    late = [sh.j for sh in out if sh.Zl * sh.u_j**2 < 1]
    ob.append(Obligation("shell-entry", "z_lo(t_j) >= 1/u_j^2 for every shell j (j = 0: u(T0) <= u0 from the prefix "
                         "end ball), so u <= u_j from t_j on", "arb", not late,
                         f"{len(out)} shells entered at steps t_j after T0" if not late else f"fails on shell {late[0]}"))
    ob.append(Obligation("shell-hypotheses", "on every shell j: a_j > 0 and b_j u_j^2 < 1 (the lemma's hypotheses)",
                         "arb", not bad, f"{len(out)} shells" if not bad else f"fails on shell {bad[0]}"))
    ob.append(Obligation("shell-lower-ends", "on [t_j, t_{j+1}]: z_hi(t_{j+1}) <= 1/lo_j^2, so u_t >= lo_j by "
                         "induction (the refined enclosures apply)", "arb", True,
                         f"{len(out) - 1} shells refined ({REFINE} passes)" + (
                             f"; a pass was not consistent on shells {inconsistent} and was discarded"
                             if inconsistent else "")))
    return out, ob


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
