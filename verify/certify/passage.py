"""The passage at rho = 0: from alpha of a few units with p = alpha/(1 + omega) near 0 into the far approach.

Before the far approach (verify.certify.far) a member of a cell holding rho = 0 climbs from the start's alpha of a
few units to alpha ~ sqrt((2/kappa) log(D/K)), while omega falls from order D/K; no chart regular at rho = 0 in
(alpha, delta) follows it (docs/atlas.md). The far approach's chart does, with t = s omega^4 (which is of order
(D/K)^3 here) replaced by

    xi = s alpha omega = t beta^2 varpi^3      (beta = 1/alpha, varpi = alpha/omega, nu = beta varpi),

in which (SymPy below: far's formulas at t = xi/(beta^2 varpi^3))

    incp = kappa x (1 + xi beta^2 varpi)(1 - varpi + nu + xi nu)/(1 + nu)^3,   bdec = (1 - varpi + nu - xi)/(1 + nu)^2,

regular at beta = varpi = xi = 0; the map is beta' = beta/ratio, varpi' = varpi ratio E, xi' = xi ratio/E (ratio =
1 + x beta^2 varpi bdec, E = e^(varpi incp)). Over a member's passage varpi runs from about s alpha E1 (-> 0 as D ->
infinity) to order 1 and xi varpi = s alpha^2 is fixed: every member runs into the corner varpi = xi = 0 as D grows,
and there the step is uniform: (varpi' - varpi)/varpi^2 -> x (kappa + beta^2).

What is checked (Arb boxes over (beta, xi, varpi, x, kappa), beta <= beta_a, xi <= xi_a, varpi <= pi_h, mean-value
forms from hyper-dual numbers as far's): gpi = (varpi' - varpi)/varpi^2 >= d > 0; bdec >= 0 (alpha never falls);
incp - x beta^2 bdec >= 0 (xi never grows: log ratio <= x beta^2 varpi bdec <= varpi incp); and, with A = alpha^2,
Psi = k A + log A (k = the cell's kappa_hi) grows by at least psi_min per unit of log varpi and A by at most q_max.
With z = x beta^2 varpi bdec: A' - A = x varpi bdec (2 + z) and log(A'/A) = 2 log(1 + z) >= 2 (z - z^2/2) exactly, and
log(varpi'/varpi) = log(1 + z) + varpi incp lies between varpi (incp + x beta^2 bdec (1 - z/2)) and varpi (incp +
x beta^2 bdec): rational quotients regular at the corner, where Psi's is 2 (1 - xi)(k + beta^2)/(kappa + beta^2) >=
2 (1 - xi) (the first integral's alpha^2 - (2/kappa) log omega, docs/atlas.md, with the log A term carrying the
beta^2 of the denominator). Hence a member in the region stays in it until varpi passes pi_h, 1/varpi falling by at
least d/(1 + d pi_h) a step, and at every step

    Psi(A) >= Psi(A0) + psi_min log(varpi/varpi0),   A <= A0 + q_max log(varpi/varpi0),   t = s A^2/varpi^4.

At the first step with varpi >= varpi_e (<= pi_h: varpi_e (1 + varpi_e g_max) <= pi_h) the member is in the far
approach's entry set {alpha >= 1/beta_max, t <= tau, varpi <= pi_h} when Psi(A0) + psi_min log(varpi_e/varpi0) >=
Psi(1/beta_max^2) and s (A0 + q_max log(pi_h/varpi0))^2 <= tau varpi_e^4. Where members come from (the start from
zero initialisation to alpha >= 1/beta_a, s alpha omega <= xi_a) is not built.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.factoring import factored, seeded_sympy
from ..derive.invariants import x
from ..model.numbers import frac_str
from ..model.precision import arb_precision
from ..run.cache import by_code_version
from . import drift, far, landing
from .arbfun import ball, exact, hi_frac, lo_frac
from .formulas import chart_texts, hyperdual_functions
from .obligations import Obligation, identity
from .positivity import kappa

xi = sp.Symbol("xi", positive=True)      # s alpha omega = t beta^2 varpi^3
beta, varpi = far.beta, far.varpi
STATE = (beta, xi, varpi)
ARGS = STATE + (x, kappa)
DIMS = ("beta", "xi", "varpi", "x", "kappa")
VARPI_E = Fraction(1, 4)      # the hand-over level into the far approach (its pi_h above it)
XI_A = Fraction(1, 16)        # the region's end in xi (Psi grows by about 2 (1 - xi) per unit of log varpi)
PASSAGE_GRID = (2, 2, 4)
BETA_DENOMINATOR = 64         # beta_a is a multiple of 1/64


@lru_cache(maxsize=None)
@by_code_version("passage-chart")
@seeded_sympy()
def passage_chart() -> tuple:
    """({name: SymPy expression}, obligations): incp, ratio and bdec in (beta, xi, varpi; x, kappa), each proved equal
    to the far approach's at t = xi/(beta^2 varpi^3) and regular at beta = xi = varpi = 0."""
    fc = far.far_chart()[0]
    to_t = {far.t: xi / (beta**2 * varpi**3)}
    out = {n: factored(fc[n].subs(to_t)) for n in ("incp", "ratio", "bdec")}
    ob = [identity(f"passage-{n}", f"{n} is the far approach's at t = xi/(beta^2 varpi^3) (xi = s alpha omega)",
                   out[n], fc[n].subs(to_t)) for n in out]
    ob += [drift.regular_obligation("passage", n, e, at={beta: 0, varpi: 0, xi: 0}) for n, e in out.items()]
    return out, tuple(ob)


def obligations() -> tuple:
    return passage_chart()[1]


def file_group() -> dict:
    """The chart's formulas as text (the "passage" group of an atlas file's map)."""
    return chart_texts(passage_chart()[0])


@lru_cache(maxsize=None)
def hd_functions() -> dict:
    """The chart's formulas compiled for hyper-dual numbers (recheck.hyperdual), each of ARGS."""
    return hyperdual_functions(file_group(), ARGS)


def step_terms(fh: dict, Z, k) -> tuple:
    """(gpi, bdec, incp - x beta^2 bdec, psi_lo, q_hi) at Z = (beta, xi, varpi, x, kappa) (balls or hyper-duals), k
    the weight of Psi = k alpha^2 + log alpha^2: psi_lo and q_hi bound Psi's growth below and alpha^2's above, each
    over log varpi's (module docstring)."""
    B, _, P, Px, _ = Z
    g, bd, ip = far.step_terms(fh, Z)      # the same step as far's, in xi for t: gpi, bdec, incp
    xb = Px * B * B * bd                   # x beta^2 bdec
    num = Px * bd * (2 + P * xb)           # (alpha'^2 - alpha^2)/varpi
    lin = 1 - P * xb / 2                   # log(1 + z) >= z (1 - z/2)
    return g, bd, ip - xb, (k * num + 2 * xb * lin) / (ip + xb), num / (ip + xb * lin)


@dataclass
class PassageCheck(landing.CoverCheck):
    """The passage's outcome and what it states (module docstring)."""

    beta_a: Fraction
    xi_a: Fraction
    pi_h: Fraction                     # the far approach's: the region's end in varpi
    varpi_e: Fraction
    beta_max: Fraction                 # the far approach's entry: alpha >= 1/beta_max, t <= tau
    tau: Fraction
    s_hi: Fraction
    boxes: int = 0
    d: Fraction | None = None          # the least gpi
    g_max: Fraction = Fraction(0)      # the most gpi
    k: Fraction = Fraction(0)          # Psi = k alpha^2 + log alpha^2
    psi_min: Fraction | None = None    # the least growth of Psi per unit of log varpi
    q_max: Fraction = Fraction(0)      # the most growth of alpha^2 per unit of log varpi
    psi_floor: Fraction = Fraction(0)  # boxes are halved until psi_lo >= psi_floor on each
    n: tuple = PASSAGE_GRID

    def steps(self, varpi0) -> int:
        """Steps from varpi0 <= varpi_e until the member is past varpi_e."""
        return far.steps_past(varpi0, self.varpi_e, self.d)


def _judge(fh, pc: PassageCheck):
    from recheck.hyperdual import mean_values  # heavy: flint

    def judge(box):
        (g, wg), (bd, wb), (xd, wx), (pl, wl), (qh, wh) = mean_values(lambda Z: step_terms(fh, Z, exact(pc.k)), box,
                                                                      ball, exact)
        # (value, its gradients, whether 0 itself is allowed, what fails)
        for val, grad, zero, why in ((g, wg, False, "gpi not certainly > 0"),
                                     (bd, wb, True, "bdec not >= 0 (alpha could fall)"),
                                     (xd, wx, True, "incp - x beta^2 bdec not >= 0 (xi could grow)"),
                                     (pl, wl, False, "Psi's growth over log varpi's not certainly > 0"),
                                     (qh, wh, False, "alpha^2's growth over log varpi's not bounded above")):
            if not (val.is_finite() and (lo_frac(val) >= 0 if zero else val > 0)):
                return f"{why}: {val}", landing._widest(grad)
        if lo_frac(pl) < pc.psi_floor:      # a box that passes, halved until psi_min is what the cell is asked
            return f"Psi's growth over log varpi's {pl} not >= {float(pc.psi_floor):.4g}", landing._widest(wl)
        pc.boxes += 1
        pc.d = lo_frac(g) if pc.d is None else min(pc.d, lo_frac(g))
        pc.g_max = max(pc.g_max, hi_frac(g))
        pc.psi_min = lo_frac(pl) if pc.psi_min is None else min(pc.psi_min, lo_frac(pl))
        pc.q_max = max(pc.q_max, hi_frac(qh))
        return None, None
    return judge


def check_passage(x_range: tuple, kappa_range: tuple, *, beta_a, beta_max, tau, s_hi, pi_h=far.PI_H, xi_a=XI_A,
                  varpi_e=VARPI_E, k=None, psi_floor=0, n=PASSAGE_GRID, max_depth=30, max_boxes=100_000,
                  bits=128) -> PassageCheck:
    """Check the passage (module docstring) for every x in ``x_range``, kappa in ``kappa_range`` into the far
    approach's entry set (beta_max, tau, pi_h, s_hi); k defaults to kappa_hi."""
    P = tuple((Fraction(a), Fraction(b)) for a, b in (x_range, kappa_range))
    pc = PassageCheck(beta_a=Fraction(beta_a), xi_a=Fraction(xi_a), pi_h=Fraction(pi_h), varpi_e=Fraction(varpi_e),
                      beta_max=Fraction(beta_max), tau=Fraction(tau), s_hi=Fraction(s_hi),
                      psi_floor=Fraction(psi_floor),
                      k=P[1][1] if k is None else Fraction(k),
                      n=tuple(n), bits=bits)
    pc.obligations += list(obligations())
    with arb_precision(bits):
        ok, why, pc.trees = landing.cover(landing.grid(pc.beta_a, pc.xi_a, (Fraction(0), pc.pi_h), P, pc.n), None,
                                          _judge(hd_functions(), pc), max_depth, max_boxes, dims=DIMS)
    pc.obligations.append(Obligation(
        "passage-boxes", "on every box gpi > 0, bdec >= 0, incp - x beta^2 bdec >= 0, Psi's growth over log varpi's >= "
        "psi_min > 0 and alpha^2's <= q_max", "arb", ok,
        f"{pc.boxes} boxes at {bits} bits; d = {float(pc.d):.4g}, psi_min = {float(pc.psi_min):.4g}, q_max = "
        f"{float(pc.q_max):.4g}" if ok else why))
    if ok:
        exit_hi = pc.varpi_e * (1 + pc.varpi_e * pc.g_max)
        pc.obligations.append(Obligation(
            "passage-handover", "a step from varpi < varpi_e ends at varpi <= varpi_e (1 + varpi_e g_max) <= pi_h "
            "(inside the far approach's region)", "arb", exit_hi <= pc.pi_h,
            f"varpi_e (1 + varpi_e g_max) = {float(exit_hi):.4g}"))
    return pc


def record(pc: PassageCheck) -> dict:
    """The passage as an atlas file states it (checked in the run that wrote the file)."""
    bad = next((o for o in pc.obligations if not o.ok), None)
    return {"ok": pc.ok, "beta_a": frac_str(pc.beta_a), "xi_a": frac_str(pc.xi_a), "pi_h": frac_str(pc.pi_h),
            "varpi_e": frac_str(pc.varpi_e), "beta_max": frac_str(pc.beta_max), "tau": frac_str(pc.tau),
            "s_hi": frac_str(pc.s_hi), "grid": list(pc.n), "bits": pc.bits, "boxes": pc.boxes,
            "d": frac_str(pc.d) if pc.ok else None, "g_max": frac_str(pc.g_max),
            "k": frac_str(pc.k), "psi_min": frac_str(pc.psi_min) if pc.ok else None, "q_max": frac_str(pc.q_max),
            "psi_floor": frac_str(pc.psi_floor),
            "trees": pc.trees if pc.ok else [], "failed": None if bad is None else f"{bad.name}: {bad.detail}"[:400]}


def _g(q: Fraction) -> str:
    return f"{float(q):.4g}"


def entry_text(pc: PassageCheck) -> str:
    """The passage's entry set, as a reason states it (alpha0, omega0: the member's there)."""
    a = frac_str(1 / pc.beta_max)
    return (f"{{alpha >= {frac_str(1 / pc.beta_a)}, s alpha omega <= {frac_str(pc.xi_a)}, alpha/omega <= "
            f"{frac_str(pc.varpi_e)}, {frac_str(pc.k)} alpha^2 + log(alpha^2) + {_g(pc.psi_min)} log(omega/("
            f"{frac_str(1 / pc.varpi_e)} alpha)) >= {frac_str(pc.k)} ({a})^2 + log(({a})^2), s (alpha^2 + "
            f"{_g(pc.q_max)} log(({frac_str(pc.pi_h)}) omega/alpha))^2 <= {frac_str(pc.tau * pc.varpi_e ** 4)}}}")


def statement(pc: PassageCheck) -> str:
    """What a closed passage certifies, as a clause of an atlas reason."""
    return (f"for every D >= {frac_str(1 / pc.s_hi)} K the passage, from {entry_text(pc)} (xi = s alpha omega, where "
            f"the far approach's s omega^4 is large; verify.certify.passage) into the far approach within "
            f"ceil((omega0/alpha0 - {frac_str(1 / pc.varpi_e)}) {float((1 + pc.d * pc.varpi_e) / pc.d):.4g}) + 1 "
            f"steps ({pc.boxes} boxes; recheck.atlas re-checks it)")


def reach(pc: PassageCheck, appr: landing.ApproachCheck) -> str:
    """Where the passage's entry set begins for large D, and the approach's for the others."""
    return (f", up to {entry_text(pc)} for D >= {frac_str(1 / pc.s_hi)} K, "
            f"{landing.near_curve(appr.eps_a)} for smaller D")


PSI_FLOOR_LADDER = (Fraction(15, 16), Fraction(7, 8), Fraction(3, 4), Fraction(1, 2))


def corner_growth(xi_a) -> Fraction:
    """2 (1 - xi_a): the least over the region's corner varpi = 0 (xi <= xi_a, kappa <= k) of Psi's growth over log
    varpi's there to first order, 2 (1 - xi)(k + beta^2)/(kappa + beta^2)."""
    return 2 * (1 - Fraction(xi_a))


BETA_CAP = Fraction(3, 4)      # the second beta_a tried: where nu = beta varpi is large, (1 + nu)^-3 in incp bites


def passage_for_cell(box: tuple, fa: far.FarCheck, bits: int = 128, budget: int = landing.LANDING_BUDGET
                     ) -> PassageCheck:
    """The passage into ``fa``'s entry set for the cell ``box``: beta_a the largest multiple of 1/64 with beta_a^2 <=
    3/4 kappa_lo (xi falls where x beta^2 bdec <= incp, about kappa x), then no more than BETA_CAP; for each, psi_min
    asked of the boxes the first fraction of PSI_FLOOR_LADDER of corner_growth that closes within ``budget`` boxes."""
    _, xr, kr = box
    beta_k = Fraction(max(1, math.isqrt(int(Fraction(3, 4) * Fraction(kr[0]) * BETA_DENOMINATOR**2))),
                      BETA_DENOMINATOR)
    pc = None
    for beta_a in dict.fromkeys((beta_k, min(beta_k, BETA_CAP))):
        for f in PSI_FLOOR_LADDER:
            pc = check_passage(xr, kr, beta_a=beta_a, beta_max=fa.beta_max, tau=fa.tau, s_hi=fa.s_hi, pi_h=fa.pi_h,
                               psi_floor=f * corner_growth(XI_A), max_boxes=budget, bits=bits)
            if pc.ok:
                return pc
    return pc
