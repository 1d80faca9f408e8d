"""The discrete comparison lemma for cubic decay, its obligations, and u(T) bounds at any T.

Lemma (discrete comparison). Let x_0 > 0 and x_{t+1} = x_t - q_t x_t^3 with 0 < a <= q_t <= b and
b x_t^2 < 1. Then z_t = 1/x_t^2 satisfies

    z_t + 2a  <=  z_{t+1}  <=  z_t + 2b + 3 b^2 x_t^2 / (1 - b x_t^2)^2,                      (one step)

hence, with kappa = 1 - b x_0^2 (x_t decreases), for t >= 1

    z_t >= z_0 + 2 a t,     z_t <= z_0 + 2 b t + (3 b^2/kappa^2) (1/z_0 + ln(1 + 2a(t-1)/z_0) / (2a)).

Proof obligations (each discharged by SymPy, or by z3 and cvc5 both, in :func:`lemma_obligations`): the one-step
inequalities (SMT, nonlinear real arithmetic, after clearing the positive denominators); the step
error is increasing in x^2, so x_t^2 <= 1/(z_0 + 2at) bounds it; sum <= integral for the
decreasing 1/(z_0 + 2as), and that integral in closed form.

Shells. On {u <= u_j = u0 r^j} (r = 1/2 by default) (inside the invariant region) q_t = c Q(u_t, eps_t) lies in
[a_j, b_j] = c [the hull of the normalised decay Q over the boxes meeting the shell] (verify.certify.region;
c is the regime's exact cubic coefficient, so a hull computed once for a cell of a family serves every member). The upper bound z_lo(t) certifies u_t <= u_{j+1} from the first t_{j+1}
with z_lo(t_{j+1}) >= 1/u_{j+1}^2; from then on the lemma runs with [a_{j+1}, b_{j+1}], restarted
from the bounds at t_{j+1}. Evaluating at T costs a binary search over the shells: O(#shells), not O(T).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from ..model.precision import arb_precision
from ..run.cache import by_code_version
from .arbfun import dyadic_down, dyadic_up, exact, hi_frac, lo_frac, widened
from .obligations import Obligation, identity, sign, smt

LEMMA = ("Let x_{t+1} = x_t - q_t x_t^3 with 0 < a <= q_t <= b and b x_t^2 < 1, z_t = 1/x_t^2. Then "
         "z_t + 2a <= z_{t+1} <= z_t + 2b + 3b^2 x_t^2/(1 - b x_t^2)^2; hence z_t >= z_0 + 2at and "
         "z_t <= z_0 + 2bt + (3b^2/kappa^2)(1/z_0 + ln(1 + 2a(t-1)/z_0)/(2a)) for t >= 1, kappa = 1 - b x_0^2.")
N_TANGENT = 10**15   # tangent point (in steps) of ln for the all-time lower constant on the last shell


@lru_cache(maxsize=None)
@by_code_version("comparison-lemma")
def lemma_obligations() -> tuple:
    """The lemma's inequality obligations, discharged symbolically (SymPy) or by two SMT solvers (z3, cvc5)."""
    import sympy as sp  # heavy: sympy
    ob = []

    def step(conclusion):
        def build(lib):
            x2, a, q, b = lib.Reals("x2 a q b")
            return [x2 > 0, a > 0, a <= q, q <= b, b * x2 < 1], conclusion(x2, a, q, b, q * x2)
        return build

    def monotone(lib):
        x2, b, y2 = lib.Reals("x2 b y2")
        return ([b > 0, x2 >= 0, x2 <= y2, b * y2 < 1],
                3 * b * b * x2 * (1 - b * y2) ** 2 <= 3 * b * b * y2 * (1 - b * x2) ** 2)
    # z' = 1/(x2 (1 - y)^2), multiplied by the positive x2 (1 - y)^2 (1 - b x2)^2:
    ob.append(smt("one-step-lower", "z' >= z + 2a, i.e. 1 >= (1 + 2a x^2)(1 - q x^2)^2",
                  step(lambda x2, a, q, b, y: 1 >= (1 + 2 * a * x2) * (1 - y) ** 2)))
    ob.append(smt("one-step-upper", "z' <= z + 2b + 3b^2 x^2/(1 - b x^2)^2, cleared of the positive denominators",
                  step(lambda x2, a, q, b, y: (1 - b * x2) ** 2 <= (1 - y) ** 2 * (
                      (1 + 2 * b * x2) * (1 - b * x2) ** 2 + 3 * b * b * x2 * x2))))
    ob.append(smt("step-error-monotone", "3b^2 x^2/(1 - b x^2)^2 is increasing in x^2 on [0, 1/b)", monotone))
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
    (lo = 0 on the last shell). There q = (u - u')/u^3 in [a, b], the normalised loss ratio in Lt,
    h + eps u^2 in W; z in [Zl, Zh] at t_j."""

    j: int
    u_j: Fraction
    lo: Fraction
    a: Fraction
    b: Fraction
    Lt: tuple
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
                "b_j_u_j2": float(self.b * self.u_j**2), "Lt": [str(x) for x in self.Lt],
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


def first_true(pred, n: int) -> int:
    """The least m >= n with ``pred(m)``, for a predicate monotone in m (False ... False True ...):
    galloping (n, n + 1, n + 3, n + 7, ...) to a true point, then bisection between the last two."""
    if pred(n):
        return n
    lo, step = n, 1                     # pred(lo) is False
    while not pred(lo + step):
        lo, step = lo + step, 2 * step
    hi = lo + step                      # pred(hi) is True
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pred(mid) else (mid, hi)
    return hi


def entry_steps(Zl: Fraction, a: Fraction, need: Fraction) -> int:
    """The first n with the rounded z_lo(n) = dyadic_down(Zl + 2an) >= need (so u <= u_{j+1} is certified
    from then on). The rounding loses up to one 96-bit quantum, which on late shells (z ~ 1e31) is 1e5
    steps' worth of 2a: the predicate is monotone in n, so it is searched, not stepped."""
    return first_true(lambda n: dyadic_down(Zl + 2 * a * n) >= need, max(0, ceil_div(need - Zl, 2 * a)))


REFINE = 3   # passes of the lower-end refinement per shell


def _lemma_applies(h: dict | None, u_j: Fraction) -> bool:
    """The lemma's hypotheses on a shell: enclosures exist, a > 0 and b u_j^2 < 1."""
    return h is not None and h["a"] > 0 and h["b"] * u_j**2 < 1


def _shell_span(Zl: Fraction, Zh: Fraction, h: dict, u_j: Fraction, u_next: Fraction, bits: int):
    """(n, z_hi(n)): the steps until u <= u_next is certified, and the bound on z at that step."""
    n = entry_steps(Zl, h["a"], 1 / u_next**2)
    return n, z_hi(Zl, Zh, h["a"], h["b"], 3 * h["b"] ** 2 / (1 - h["b"] * u_j**2) ** 2, n, bits)


def _refined(hull, Zl, Zh, u_j, u_next, bits):
    """(lo, enclosures, n) on one shell after the lower-end refinement (see :func:`schedule`): each pass
    takes lo = 1/sqrt(z_hi(n)) of the previous one and is kept only if the induction's check
    z_hi(n') lo^2 <= 1 holds with its own n' (else the previous pass stands)."""
    lo, h = Fraction(0), hull(Fraction(0), u_j)
    if not _lemma_applies(h, u_j):
        return lo, h, None
    n, zh_end = _shell_span(Zl, Zh, h, u_j, u_next, bits)
    for _ in range(REFINE):
        lo_new = lo_frac(1 / exact(zh_end).sqrt())
        h_new = hull(lo_new, u_j)
        if not _lemma_applies(h_new, u_j):
            break
        n_new, zh_new = _shell_span(Zl, Zh, h_new, u_j, u_next, bits)
        if not dyadic_up(zh_new) * lo_new**2 <= 1:     # the next shell starts from Zh = dyadic_up(z_hi)
            break
        lo, h, n, zh_end = lo_new, h_new, n_new, zh_new
    return lo, h, n


def _hinted(hull, Zl, Zh, u_j, u_next, bits, lo):
    """(lo, enclosures, n) on one shell with the given lower end, or None when the lemma does not apply there or
    the induction's check z_hi(n) lo^2 <= 1 fails (see :func:`_refined`)."""
    lo = Fraction(lo)
    if not 0 <= lo < u_j:
        return None
    h = hull(lo, u_j)
    if not _lemma_applies(h, u_j):
        return None
    n, zh = _shell_span(Zl, Zh, h, u_j, u_next, bits)
    return (lo, h, n) if dyadic_up(zh) * lo**2 <= 1 else None


def schedule(hull, u0: Fraction, shells: int, z0: tuple, bits: int, ratio: Fraction, c: Fraction,
             lows: list | None = None) -> tuple[list[Shell], list[Obligation]]:
    """Shells j = 0..shells with their entry steps; ``hull(lo, hi)`` gives the enclosures over the boxes
    meeting {lo <= u <= hi} (RegionCheck.hull; its [a, b] normalised by the cubic coefficient, here scaled by
    the regime's exact ``c``), z(T0) lies in [z0[0], z0[1]] (the prefix end ball).

    Lower-end refinement: on [t_j, t_{j+1}] also u >= lo_j = 1/sqrt(z_hi(t_{j+1})) (u decreases), so Q may
    be taken over {lo_j <= u <= u_j} only. That is circular, so it is checked, by induction on t: if
    q_s in [a, b] for s < t (u_s in [lo, u_j]), then z_t <= z_hi(t) <= z_hi(t_{j+1}) <= 1/lo^2, so
    u_t >= lo. The check is an obligation on the shells as built (:func:`shell_obligations`).
    """
    # Bounds may always be loosened: z_lo rounded down and z_hi up to 96-bit dyadics keep them short.
    Zl, Zh = dyadic_down(z0[0]), dyadic_up(z0[1])
    u_j = [u0 * ratio**j for j in range(shells + 1)]
    normalised = hull

    def hull(lo, hi):
        # Stated numbers are widened (arbfun.widened) so that an independent re-check's lie inside them.
        h = normalised(lo, hi)
        if h is None:
            return None
        a, b = widened(c * h["a"], c * h["b"])
        return {"a": a, "b": b, "Lt": widened(*h["Lt"]), "W": widened(*h["W"])}
    out, t, bad = [], 0, None
    for j in range(shells + 1):
        if j == shells:
            lo, h, n = Fraction(0), hull(Fraction(0), u_j[j]), None
        else:
            hinted = _hinted(hull, Zl, Zh, u_j[j], u_j[j + 1], bits, lows[j]) if lows and j < len(lows) else None
            lo, h, n = hinted or _refined(hull, Zl, Zh, u_j[j], u_j[j + 1], bits)
        if not _lemma_applies(h, u_j[j]):
            bad = j
            break
        sh = Shell(j, u_j[j], lo, h["a"], h["b"], h["Lt"], h["W"], t, Zl, Zh)
        out.append(sh)
        if j < shells:
            t, Zl, Zh = t + n, dyadic_down(sh.z_lo(n)), dyadic_up(sh.z_hi(n, bits))
    return out, shell_obligations(out, bad, bits)


def shell_obligations(shells: list[Shell], bad: int | None = None, bits: int = 128) -> list[Obligation]:
    """The comparison lemma's inequalities on the shells as built: entry (z_lo(t_j) >= 1/u_j^2), the lemma's
    hypotheses (a_j > 0, b_j u_j^2 < 1), the chaining of z between shells, and the lower ends
    (z_hi(t_{j+1}) lo_j^2 <= 1, the induction of :func:`schedule`; Zh_{j+1} >= z_hi(t_{j+1}) is used)."""
    late = [sh.j for sh in shells if sh.Zl * sh.u_j**2 < 1]
    hyp = [sh.j for sh in shells if not (sh.a > 0 and sh.b * sh.u_j**2 < 1)]
    if bad is not None:
        hyp.append(bad)
    ends = [a.j for a, b in zip(shells, shells[1:]) if a.lo > 0 and not b.Zh * a.lo**2 <= 1]
    refined = sum(sh.lo > 0 for sh in shells)
    chain = [a.j for a, b in zip(shells, shells[1:])
             if not (b.t >= a.t and b.Zl <= a.z_lo(b.t - a.t) and b.Zh >= a.z_hi(b.t - a.t, bits))]
    return [
        Obligation("shell-entry", "z_lo(t_j) >= 1/u_j^2 for every shell j (j = 0: u(T0) <= u0 from the prefix end "
                   "ball), so u <= u_j from t_j on", "arb", not late,
                   f"{len(shells)} shells entered at steps t_j after T0" if not late else f"fails on shell {late[0]}"),
        Obligation("shell-hypotheses", "on every shell j: a_j > 0 and b_j u_j^2 < 1 (the lemma's hypotheses)",
                   "arb", not hyp, f"{len(shells)} shells" if not hyp else f"fails on shell {hyp[0]}"),
        Obligation("shell-lower-ends", "on [t_j, t_{j+1}]: z_hi(t_{j+1}) <= 1/lo_j^2, so u_t >= lo_j by induction "
                   "(the refined enclosures apply)", "arb", not ends,
                   f"{refined} shells refined, every lower end checked" if not ends else
                   f"fails on shell {ends[0]}: z_hi(t_(j+1)) lo_j^2 > 1"),
        Obligation("shell-chain", "each shell starts from the bounds the previous one gives at its end: "
                   "Zl_(j+1) <= z_lo(t_(j+1)) and Zh_(j+1) >= z_hi(t_(j+1))", "arb", not chain,
                   f"{max(len(shells) - 1, 0)} shell changes" if not chain else f"fails after shell {chain[0]}"),
    ]


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
