"""The far approach at rho = 0: from p -> 0 up to p ~ 5/16, where the approach (verify.certify.landing) takes over.

Before a member of a cell holding rho = 0 comes within 3/4 of the curve of fixed points it has p = alpha/(1 + omega)
near 0: its peak alpha grows like sqrt(log(D/K)/kappa) while omega is still of order (D/K)^(1/4) when t = s omega^4
falls to tau. Near p = 0 the landing's chart is neutral (p' = p e^{kappa x p (1 - p)} at nu = 0: progress of order p^2)
and nu/p ~ 1/alpha is the quantity the approach's entry needs small. In

    beta = 1/alpha,   varpi = alpha nu (= p (1 + nu)),   t = s/nu^4   (nu = beta varpi = 1/omega, the band's nu),

the omega chart's exact map (verify.certify.positivity_chart: alpha' = (1 - x a) alpha + b, omega' = omega e^-inc,
tied to the generated map) reads, with inc = varpi incp and ratio = alpha'/alpha = 1 + x beta^2 varpi bdec,

    beta' = beta/ratio,   varpi' = varpi ratio e^inc,   t' = t e^(-4 inc),
    incp = kappa x (1 + s)(1 - varpi + nu + s alpha)/(1 + nu)^3,   bdec = (1 - varpi + nu - s alpha/nu)/(1 + nu)^2

(s alpha = t beta^3 varpi^4, s alpha/nu = t beta^2 varpi^3): polynomial numerators, denominators powers of 1 + nu,
regular at beta = varpi = t = 0 (SymPy obligations below; eta(beta, varpi, t) is the landing's s h, tied to the
drift band's lag e_of). So (varpi' - varpi)/varpi^2 = gpi = incp X ratio + x beta^2 bdec (X =
exprel(inc)) is x (kappa + beta^2) > 0 at the corner: uniform progress where the landing's chart had none.

What is checked (Arb boxes over (beta, t, varpi, x, kappa), beta <= beta_max, t <= tau, varpi <= pi_h; mean-value
forms from hyper-dual numbers, recheck.hyperdual): gpi >= d > 0, bdec >= 0 (alpha never falls: beta' <= beta), incp
>= 0 (omega falls: t' <= t); and on the layer pi_h <= varpi <= PI_X the landing's eta lies in [-eps_a, -eps]. Then
1/varpi falls by at least d/(1 + d pi_h) a step, so a member at t <= tau, beta <= beta_max, varpi0 <= pi_h leaves the
region within ceil((1/varpi0 - 1/pi_h)(1 + d pi_h)/d) + 1 steps into the layer (varpi' <= pi_h (1 + pi_h g_max) <=
PI_X), where the layer's boxes also show nu e^(c |eta|)/(1 + eta) <= nu_in_min (nu = beta varpi, c the approach's):
that is the approach's entry set itself, nu <= nu_in(s) e^-K_a(eta0) with K_a(eta0) = c |eta0| - log(1 + eta0), for
every s <= FAR_S_HI (the statement's s_hi; the landing's nu_in(s) is smallest at large s). On the layer 1 + eta ~ p
~ varpi, so that quotient is about beta e^(c |eta|): beta_max need not pay for the worst eta and the worst varpi at
once (the product beta_max PI_X <= nu_in_min e^-K_a(-eps_a) asked alpha >= 16 on docs/atlas.md's example cell, this
alpha >= 64/7).
Before it, the passage (verify.certify.passage) carries members from alpha of a few units into this entry set.
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
from ..model.symbols import alpha
from ..run.cache import by_code_version
from . import drift, landing
from .arbfun import ball, exact, hi_frac, lo_frac
from .coordinates import X
from .formulas import chart_texts, hyperdual_functions
from .obligations import Obligation, identity
from .positivity import kappa, rho
from .positivity_chart import CLOSED, omega
from .positivity_chart import obligations as omega_obligations

beta = sp.Symbol("beta", positive=True)      # 1/alpha
varpi = sp.Symbol("varpi", positive=True)    # alpha nu = alpha/omega
t, v = drift.t, drift.v
STATE = (beta, t, varpi)
ARGS = STATE + (x, kappa)
DIMS = ("beta", "t", "varpi", "x", "kappa")
PI_H = Fraction(5, 16)     # the region's upper end in varpi (p ~ 0.31)
PI_X = Fraction(3, 8)      # the layer's upper end: no step from varpi <= PI_H goes beyond it (checked)
FAR_GRID = (2, 1, 8)
LAYER_GRID = (2, 1, 2)
BETA_DENOMINATOR = 64     # beta_max is a multiple of 1/64
# the far approach is stated for s <= FAR_S_HI (D >= 2^20 K): members with larger s meet t <= tau nearer the curve
# (measured: p = 0.65 at D/K = 10^5), and over small s the landing's nu_in(s) is near nu_hi e^-K0
FAR_S_HI = Fraction(1, 2**20)


def _alpha_star(nu, S):
    """alpha*(u) at u = 1/(1 + nu), r = 1/s (verify.certify.coordinates)."""
    u_ = drift.u_of(nu)
    return (1 - u_) / ((1 - u_) ** 2 + S * u_**2)


def eta_of(al, nu, tt):
    """The landing's eta = s h = (alpha - alpha*(u)) nu - s (L0(nu) - t), s = t nu^4 (verify.certify.landing)."""
    S = tt * nu**drift.T_POWER
    return (al - _alpha_star(nu, S)) * nu - S * (drift.L0(nu) - tt)


@lru_cache(maxsize=None)
@by_code_version("far-chart")
@seeded_sympy()
def far_chart() -> tuple:
    """({name: SymPy expression}, obligations): incp, ratio, bdec and eta in (beta, varpi, t; x, kappa), each proved
    from the omega chart's closed forms (themselves the generated map's: the obligation omega-chart), eta tied to the
    drift band's lag e_of (s u^3 e(nu, t, eta/s) = alpha - alpha*(u))."""
    nu = beta * varpi
    S = t * nu**drift.T_POWER
    to_w = {alpha: 1 / beta, omega: (1 + S) / nu, rho: S / (1 + S)}   # omega = 1/((1 - rho) nu), rho = s/(1 + s)
    inc, a, b = (CLOSED[k].subs(to_w) for k in ("inc", "a", "b"))
    out = {"incp": factored(inc / varpi), "ratio": factored(1 - x * a + b * beta),
           "bdec": factored((1 - x * a + b * beta - 1) / (x * beta**2 * varpi)),
           "eta": factored(eta_of(1 / beta, nu, t))}
    pc = drift.chart_pieces()
    oc = next(o for o in omega_obligations() if o.key == "omega-chart")
    ob = [Obligation("far-omega-chart", oc.name, "sympy", bool(oc.holds), oc.detail)]
    ob += [identity("far-incp", "inc = varpi incp: the omega chart's inc at alpha = 1/beta, omega = (1 + s)/nu, "
                    "rho = s/(1 + s), s = t nu^4, nu = beta varpi", varpi * out["incp"], inc),
           identity("far-ratio", "ratio = alpha'/alpha = 1 - x a + b/alpha", out["ratio"], 1 - x * a + b * beta),
           identity("far-bdec", "ratio - 1 = x beta^2 varpi bdec", out["ratio"] - 1, x * beta**2 * varpi * out["bdec"]),
           identity("far-eta", "s u^3 e(nu, t, eta/s) = alpha - alpha*(u) at alpha = 1/beta, with the drift band's "
                    "e_of (so eta is the landing's s h)", S * drift.u_of(nu) ** 3
                    * pc["e_of"].subs(pc["to_k"])
                    .subs({v: nu, drift.h: out["eta"] / S}, simultaneous=True),
                    1 / beta - _alpha_star(nu, S))]
    # the step in the chart: inc = varpi incp, E = e^inc = 1 + inc X; (varpi'/varpi - 1)/varpi = gpi
    E = 1 + varpi * out["incp"] * X
    gpi = out["incp"] * X * out["ratio"] + x * beta**2 * out["bdec"]
    ob.append(identity("far-gpi", "(varpi' - varpi)/varpi^2 = incp X ratio + x beta^2 bdec, with varpi' = varpi ratio "
                       "E, E = 1 + inc X", (varpi * out["ratio"] * E - varpi) / varpi**2, gpi))
    ob += [drift.regular_obligation("far", n, e, at={beta: 0, varpi: 0}) for n, e in out.items()]
    return out, tuple(ob)


def obligations() -> tuple:
    return far_chart()[1]


def file_group() -> dict:
    """The chart's formulas as text (the "far" group of an atlas file's map)."""
    return chart_texts(far_chart()[0])


@lru_cache(maxsize=None)
def hd_functions() -> dict:
    """The chart's formulas compiled for hyper-dual numbers (recheck.hyperdual), each of ARGS."""
    return hyperdual_functions(file_group(), ARGS)


def step_terms(fh: dict, Z) -> tuple:
    """(gpi, bdec, incp) at the state Z = (beta, t, varpi, x, kappa) (balls or hyper-duals)."""
    from recheck.hyperdual import exprel  # heavy: flint
    B, _, P, Px, _ = Z
    ip, r, bd = (fh[n](*Z)[0] for n in ("incp", "ratio", "bdec"))
    return ip * exprel(P * ip) * r + Px * B * B * bd, bd, ip


def steps_past(varpi0, level: Fraction, d: Fraction) -> int:
    """Steps from varpi0 <= level until varpi is past level, when (varpi' - varpi)/varpi^2 >= d on the way: 1/varpi
    falls by gpi/(1 + gpi varpi) >= d/(1 + d level) a step."""
    w0 = Fraction(varpi0)
    return max(0, math.ceil((1 / w0 - 1 / level) * (1 + d * level) / d)) + 1


@dataclass
class FarCheck(landing.CoverCheck):
    """The far approach's outcome and what it states (module docstring)."""

    beta_max: Fraction
    tau: Fraction
    s_hi: Fraction
    eps_a: Fraction
    eps: Fraction
    nu_room: Fraction                  # nu_in_min: the approach's entry bound on nu e^(c|eta|)/(1 + eta), s <= s_hi
    c: Fraction = Fraction(0)          # the approach's c: log(nu/(1 + eta)) grows by at most c (eta' - eta) a step
    pi_h: Fraction = PI_H
    pi_x: Fraction = PI_X
    boxes: int = 0
    layer_boxes: int = 0
    layer_trees: list = None
    d: Fraction | None = None          # the least gpi
    g_max: Fraction = Fraction(0)      # the most gpi
    n: tuple = FAR_GRID
    layer_ok: bool = False
    layer_why: str = ""

    def steps(self, varpi0) -> int:
        """Steps from varpi0 <= pi_h until the member is past pi_h."""
        return steps_past(varpi0, self.pi_h, self.d)


def _far_judge(fh, fc: FarCheck):
    from recheck.hyperdual import mean_values  # heavy: flint

    def judge(box):
        (g, wg), (bd, wb), (ip, wi) = mean_values(lambda Z: step_terms(fh, Z), box, ball, exact)
        if not (g.is_finite() and g > 0):
            return f"gpi = {g} not certainly > 0", landing._widest(wg)
        if not (bd.is_finite() and lo_frac(bd) >= 0):
            return f"bdec = {bd} not >= 0 (alpha could fall)", landing._widest(wb)
        if not (ip.is_finite() and lo_frac(ip) >= 0):
            return f"incp = {ip} not >= 0 (omega could grow)", landing._widest(wi)
        fc.boxes += 1
        fc.d = lo_frac(g) if fc.d is None else min(fc.d, lo_frac(g))
        fc.g_max = max(fc.g_max, hi_frac(g))
        return None, None
    return judge


def entry_quotient(nu, eta, c):
    """nu e^(c |eta|)/(1 + eta) for eta <= 0 (balls): the approach's entry set is this quotient <= nu_in(s)
    (verify.certify.landing.ApproachCheck.log_growth: nu <= nu_in(s) e^-K_a(eta0))."""
    return nu * (-c * eta).exp() / (1 + eta)


def _layer_judge(fh, fc: FarCheck):
    from recheck.hyperdual import mean_values  # heavy: flint

    def judge(box):
        ((e, we),) = mean_values(lambda Z: fh["eta"](*Z), box, ball, exact)
        if not (e.is_finite() and lo_frac(e) >= -fc.eps_a and hi_frac(e) <= -fc.eps):
            return f"eta = {e} not in [-{fc.eps_a}, -{fc.eps}]", landing._widest(we)
        # the approach's entry: nu e^(c |eta|)/(1 + eta) <= nu_in(s) (decreasing in eta, so at eta's lower end)
        q = entry_quotient(ball(*box[0]) * ball(*box[2]), e, exact(fc.c))
        if not (q.is_finite() and hi_frac(q) <= fc.nu_room):
            return f"nu e^(c |eta|)/(1 + eta) = {q} not <= nu_in_min = {float(fc.nu_room):.4g}", landing._widest(we)
        fc.layer_boxes += 1
        return None, None
    return judge


def check_far(x_range: tuple, kappa_range: tuple, s_hi, *, tau, eps_a, eps, nu_room, c, beta_max=None, n=FAR_GRID,
              max_depth=30, max_boxes=100_000, bits=128) -> FarCheck:
    """Check the far approach (module docstring) for every x in ``x_range``, kappa in ``kappa_range``, into the
    approach's entry set {nu e^(c |eta|)/(1 + eta) <= nu_room}; beta_max defaults to the largest multiple of
    1/BETA_DENOMINATOR up to nu_room/PI_X whose layer closes (a bisection on the multiple: the layer is cheap)."""
    (x0, x1), (k0, k1) = ((Fraction(a), Fraction(b)) for a, b in (x_range, kappa_range))
    nu_room = Fraction(nu_room)
    P = ((x0, x1), (k0, k1))
    fh = hd_functions()

    def layer(bm: Fraction) -> FarCheck:
        fc = FarCheck(beta_max=bm, tau=Fraction(tau), s_hi=Fraction(s_hi), eps_a=Fraction(eps_a), eps=Fraction(eps),
                      nu_room=nu_room, c=Fraction(c), n=tuple(n), bits=bits, layer_trees=[])
        with arb_precision(bits):
            fc.layer_ok, fc.layer_why, fc.layer_trees = landing.cover(
                landing.grid(bm, fc.tau, (fc.pi_h, fc.pi_x), P, LAYER_GRID), None, _layer_judge(fh, fc), max_depth,
                max_boxes, dims=DIMS)
        return fc
    if beta_max is not None:
        fc = layer(Fraction(beta_max))
    else:
        # nu = beta varpi <= nu e^(c|eta|)/(1 + eta) on the layer, so no beta_max above nu_room/PI_X can close
        # the largest multiple that closes, by bisection; fc the check at the largest that closed so far
        fc = layer(Fraction(1, BETA_DENOMINATOR))
        lo, hi = 1, math.floor(nu_room / PI_X * BETA_DENOMINATOR)
        while fc.layer_ok and lo < hi:
            mid = (lo + hi + 1) // 2
            tried = layer(Fraction(mid, BETA_DENOMINATOR))
            if tried.layer_ok:
                lo, fc = mid, tried
            else:
                hi = mid - 1
    ok_l, why_l, bm = fc.layer_ok, fc.layer_why, fc.beta_max
    fc.obligations += list(obligations())
    fc.obligations.append(Obligation(
        "far-layer", f"on the layer {frac_str(fc.pi_h)} <= varpi <= {frac_str(fc.pi_x)} the landing's eta lies in "
        f"[-{frac_str(fc.eps_a)}, -{frac_str(fc.eps)}] and nu e^(c |eta|)/(1 + eta) <= nu_in_min (the approach's "
        "entry set)", "arb", ok_l, f"{fc.layer_boxes} boxes, beta_max = {frac_str(fc.beta_max)}" if ok_l else why_l))
    if not ok_l:
        return fc
    with arb_precision(bits):
        ok, why, fc.trees = landing.cover(landing.grid(bm, fc.tau, (Fraction(0), fc.pi_h), P, fc.n), None,
                                          _far_judge(fh, fc), max_depth, max_boxes, dims=DIMS)
    fc.obligations.append(Obligation(
        "far-boxes", "on every box gpi > 0, bdec >= 0 and incp >= 0", "arb", ok,
        f"{fc.boxes} boxes at {bits} bits; d = {float(fc.d):.4g}, g_max = {float(fc.g_max):.4g}" if ok else why))
    if ok:
        exit_hi = fc.pi_h * (1 + fc.pi_h * fc.g_max)
        fc.obligations.append(Obligation(
            "far-handover", "a step from varpi <= pi_h ends on the layer: varpi <= pi_h (1 + pi_h g_max) <= PI_X",
            "arb", exit_hi <= fc.pi_x, f"pi_h (1 + pi_h g_max) = {float(exit_hi):.4g}"))
    return fc


def record(fc: FarCheck) -> dict:
    """The far approach as an atlas file states it (checked in the run that wrote the file)."""
    bad = next((o for o in fc.obligations if not o.ok), None)
    return {"ok": fc.ok, "beta_max": frac_str(fc.beta_max), "tau": frac_str(fc.tau), "s_hi": frac_str(fc.s_hi),
            "eps_a": frac_str(fc.eps_a), "eps": frac_str(fc.eps), "nu_room": frac_str(fc.nu_room),
            "c": frac_str(fc.c), "pi_h": frac_str(fc.pi_h), "pi_x": frac_str(fc.pi_x), "grid": list(fc.n),
            "layer_grid": list(LAYER_GRID),
            "bits": fc.bits, "boxes": fc.boxes, "layer_boxes": fc.layer_boxes,
            "d": frac_str(fc.d) if fc.ok else None, "g_max": frac_str(fc.g_max),
            "trees": fc.trees if fc.ok else [], "layer_trees": fc.layer_trees if fc.ok else [],
            "failed": None if bad is None else f"{bad.name}: {bad.detail}"[:400]}


def statement(fc: FarCheck) -> str:
    """What a closed far approach certifies, as a clause of an atlas reason (its count from varpi0 = alpha0/omega0)."""
    return (f"for every D >= {frac_str(1 / fc.s_hi)} K the far approach, from {{alpha >= {frac_str(1 / fc.beta_max)}, "
            f"alpha/omega <= {frac_str(fc.pi_h)}, s omega^4 <= {frac_str(fc.tau)}}} (p near 0, where the landing's "
            f"chart is neutral; verify.certify.far) into the approach within ceil((omega0/alpha0 - "
            f"{frac_str(1 / fc.pi_h)}) {float((1 + fc.d * fc.pi_h) / fc.d):.4g}) + 1 steps ({fc.boxes} boxes; "
            "recheck.atlas re-checks it)")


def reach(fc: FarCheck, appr: landing.ApproachCheck) -> str:
    """Where the far approach's entry set begins for large D, and the approach's for the others."""
    return (f", up to alpha >= {frac_str(1 / fc.beta_max)} when s omega^4 falls to {frac_str(fc.tau)} for D >= "
            f"{frac_str(1 / fc.s_hi)} K, {landing.near_curve(appr.eps_a)} for smaller D")


def far_for_cell(box: tuple, land: landing.LandingCheck, appr: landing.ApproachCheck, bits: int = 128,
                 budget: int = landing.LANDING_BUDGET) -> FarCheck:
    """The far approach into ``appr``'s entry set for the cell ``box``, for s <= FAR_S_HI: nu_room = nu_in_min (the
    landing's nu_in over s <= FAR_S_HI) and the approach's c."""
    _, xr, kr = box
    s_f = min(land.s_hi, FAR_S_HI)
    return check_far(xr, kr, s_f, tau=land.tau, eps_a=appr.eps_a, eps=appr.eps, nu_room=landing.nu_in_min(land, s_f),
                     c=appr.c, max_boxes=budget, bits=bits)
