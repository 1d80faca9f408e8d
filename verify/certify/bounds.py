"""Bounds at any T beyond the prefix, from the shells of the comparison lemma; all-time and limit constants.

For T >= T0 the lemma gives z = 1/u^2 in [z_lo, z_hi] at T - T0 steps (verify.certify.comparison), and
the observables are fixed functions of u on the region (verify.certify.coordinates):

    L - L_opt = pre_L L2(0) u^2 Lt(u, eps),   ||S - S*||_F = pre_S sqrt((1 + r)/r) u,   ||W_X - V*||_F = pre_W u |W|

with |eps| <= C. Per shell, the extremes of (eta T)^p q over the shell's steps give c_lo <= (eta T)^p q(T)
<= c_hi for all T >= T0 (p = 1 for the loss, 1/2 for the parameter errors); on the last shell the limits
T -> infinity follow, and, divided by the derived leading terms (verify.derive.asymptotics, an obligation
of verify.certify.coordinates), the normalised limits q/leading_q -> [Lt_lo c/b, Lt_hi c/a] (loss) and
[sqrt(c/b), sqrt(c/a)] times 1 or |W| (the errors), which do not depend on the regime's prefactors: a
family's table of them is uniform.
"""
from __future__ import annotations

from fractions import Fraction

from . import fmt
from ..model.precision import arb_precision
from .arbfun import exact, hi_frac, lo_frac, widened
from .comparison import extremes, z_range
from .formulas import arb_functions
from .obligations import Obligation
from .region import parameter_balls

QUANTITIES = ("excess_loss", "s_err", "w_err")
POWER = {"excess_loss": 1, "s_err": Fraction(1, 2), "w_err": Fraction(1, 2)}   # q ~ (eta T)^-power


class ObservablesNotPositive(ArithmeticError):
    """The enclosures of Lt or W on an interval of u did not stay positive (the bound would be vacuous)."""


def _prefactors(pre: dict) -> dict:
    """Balls of the prefactors pre_L (exact), pre_S^2 and pre_W (from the exact squares; inside a precision),
    as the re-checker forms them."""
    return {"excess_loss": exact(pre["excess_loss"]), "s_err2": exact(pre["s_err2"]),
            "w_err": exact(pre["w_err2"]).sqrt()}


def tail_bounds(shells, t: int, P: tuple, pre: dict, profile, bits: int) -> dict:
    """Arb balls (lo, hi) of the three quantities ``t`` steps after T0 (t >= 0); ``profile``: the region's C(u)
    (verify.certify.region.Profile)."""
    fn = arb_functions()
    zl, zh = z_range(shells, t, bits)
    with arb_precision(bits):
        Pb, pf = parameter_balls(P), _prefactors(pre)
        u_lo, u_hi = 1 / exact(zh).sqrt(), 1 / exact(zl).sqrt()
        C = profile.most(lo_frac(u_lo), hi_frac(u_hi))
        U, E = u_lo.lower().union(u_hi.upper()), exact(-C).union(exact(C))
        Lt, W = fn.loss_ratio0(U, E, *Pb)[0], fn.w_over_u0(U, E, *Pb)[0]
        if not (Lt.lower() > 0 and W.lower() > 0):
            raise ObservablesNotPositive(f"at t = {t} after T0: Lt = {Lt}, h + eps u^2 = {W}")
        pl, L0 = pf["excess_loss"], fn.loss0(*Pb)[0]
        ps, pw = (pf["s_err2"] * fn.s_over_u2(*Pb)[0]).sqrt(), pf["w_err"]
        return {"excess_loss": (pl * L0 * u_lo * u_lo * Lt.lower(), pl * L0 * u_hi * u_hi * Lt.upper()),
                "s_err": (ps * u_lo, ps * u_hi), "w_err": (pw * u_lo * W.lower(), pw * u_hi * W.upper())}


def _psi(q: str, sh, P: tuple, pre: dict) -> tuple:
    """Balls bounding q / u^(2p) on a shell: pre_L L2(0) Lt, pre_S sqrt((1 + r)/r), pre_W |W| (inside a precision;
    ``pre``: verify.derive.invariants.prefactors_of)."""
    fn, Pb, pf = arb_functions(), parameter_balls(P), _prefactors(pre)
    if q == "excess_loss":
        k = pf[q] * fn.loss0(*Pb)[0]
        return k * exact(sh.Lt[0]), k * exact(sh.Lt[1])
    if q == "s_err":
        k = (pf["s_err2"] * fn.s_over_u2(*Pb)[0]).sqrt()
        return k, k
    return pf[q] * exact(max(sh.W[0], Fraction(0))), pf[q] * exact(sh.W[1])


def constants(shells, T0: int, eta: Fraction, P: tuple, pre: dict, bits: int):
    """c_lo <= (eta T)^p q(T) <= c_hi for all T >= T0, per quantity; the T -> infinity interval of (eta T)^p q;
    and the obligation that every c_lo > 0 (the Theta lower bounds)."""
    ext = extremes(shells, T0, bits)
    out, asym = {}, {}
    with arb_precision(bits):
        for q in QUANTITIES:
            k = (lambda v: v) if POWER[q] == 1 else (lambda v: v.sqrt())
            his, los = [], []
            for sh, ex in zip(shells, ext):
                psi = _psi(q, sh, P, pre)
                his.append(psi[1] * k(exact(eta * ex["sup_T_over_z_lo"])))
                los.append(psi[0] * k(exact(eta * ex["inf_T_over_z_hi"])))
            c_hi, c_lo = max(hi_frac(v) for v in his), min(lo_frac(v) for v in los)
            pw = "" if POWER[q] == 1 else "^(1/2)"
            out[q] = {"c_lo": fmt.down(exact(c_lo), 8), "c_hi": fmt.up(exact(c_hi), 8),
                      "statement": f"c_lo <= (eta T){pw} {q}(T) <= c_hi for every T >= T0 = {T0}"}
            # Limits T -> infinity on the last shell: (eta T)^p q -> [psi_lo (eta/(2 b))^p, psi_hi (eta/(2 a))^p].
            last = shells[-1]
            psi = _psi(q, last, P, pre)
            lim_lo, lim_hi = psi[0] * k(exact(eta / (2 * last.b))), psi[1] * k(exact(eta / (2 * last.a)))
            asym[q] = {"liminf_ge": fmt.down(lim_lo, 12), "limsup_le": fmt.up(lim_hi, 12)}
    positive = all(Fraction(v["c_lo"]) > 0 for v in out.values())
    ob = Obligation("positive-lower-constants", "c_lo > 0 for all three quantities (the Theta lower bounds)", "arb",
                    positive, "; ".join(f"{q}: [{v['c_lo']}, {v['c_hi']}]" for q, v in out.items()))
    return out, asym, ob


def normalised_limits(last, c: Fraction) -> dict:
    """Exact rational intervals of lim q(T)/leading_q(T) from the last shell (module docstring), for q in
    QUANTITIES: they depend on the shell's normalised hulls only, so a family's are uniform."""
    lo, hi = c / last.b, c / last.a                # the limits of 2 c T u^2
    sq = lambda v, up: (hi_frac if up else lo_frac)(exact(v).sqrt())  # noqa: E731
    with arb_precision(128):
        out = {"excess_loss": (last.Lt[0] * lo, last.Lt[1] * hi),
               "s_err": (sq(lo, False), sq(hi, True)),
               "w_err": (lo_frac(exact(max(last.W[0], Fraction(0))) * exact(lo).sqrt()),
                         hi_frac(exact(last.W[1]) * exact(hi).sqrt()))}
    return {q: widened(*v) for q, v in out.items()}       # stated: a re-check's balls land inside


def bounds_json(balls: dict, T: int, route: str, bits: int, digits: int | None = None) -> dict:
    """{"T": T, q: [lo, hi] (decimal strings, lo rounded down, hi rounded up), "route": route}."""
    with arb_precision(bits):
        return {"T": T, **{q: fmt.interval(balls[q][0], balls[q][1], digits) for q in QUANTITIES}, "route": route}


__all__ = ["POWER", "QUANTITIES", "ObservablesNotPositive", "bounds_json", "constants", "normalised_limits",
           "tail_bounds"]
