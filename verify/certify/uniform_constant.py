"""Theorem 3.1's lower bound with a D-uniform constant, decided from the atlas's certified limit constants.

The statement: one c_lo > 0, independent of D, K, eta and ||V*||, with q(T) >= c_lo f_q(T) for every T >= T* (the
claimed orders f_q, verify.model.paper). A certified cell of the atlas holds every regime at its points, every D
with K/D in its rho range; its deepest shells bound lim_T q(T)/leading_q(T) <= hi_q for all of them at once
(verify.certify.atlas_evidence), where leading_q is the derived leading term (used here only as a normaliser: the
enclosure is certified whatever the expansion). So for every member

    lim sup_T q(T)/f_q(T) <= hi_q * leading_q/f_q =: B_q(D),

an exact function of the member (T, eta and ||V*|| cancel for the reference convention's orders). Along a ray
K = rho* D of a cell (rho* > 0 rational, N fixed) there are members at every multiple of rho*'s denominator, and
if B_q(D) -> 0 as D -> oo then for every c_lo > 0 some member has q(T) < c_lo f_q(T) for every large T: the
statement fails for every c_lo, which is a certified refutation. One member, for a named c_lo, is replayed as a
query of the atlas (certified bounds at T = 10^12 below c_lo f_q). If B_q does not tend to 0 the record decides
nothing (context): a positive limit along a ray is not a uniform constant over every regime.
"""
from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..evidence import record
from ..model.hypotheses import within
from ..model.numbers import frac_str
from ..model.setting import make_setting
from ..model.symbols import D, K, N, T, values_at
from ..run.parts import source_path
from .atlas_evidence import atlas_path, atlas_scope, certified_regions, normalised_limits, rechecked_atlas
from .atlas_query import member, query

REPLAY_T = 10**12        # the horizon of the replayed member's certified bounds
REPLAY_C = Fraction(1, 10**9)   # the c_lo the replayed member refutes (any c_lo > 0 has one: see B_q)
PRESET = "sts"           # the members' preset: N = 1 fixed, the reference convention otherwise


def ray(regions) -> tuple[Fraction, Fraction, Fraction]:
    """A point (rho*, x*, kappa*) of the certified regions with rho* > 0 (the lower ends, rho's upper one), or
    None when every certified rho range is {0}."""
    for r in regions:
        b = dict(r.bounds)
        if b["rho"].hi > 0:
            return b["rho"].hi, b["x"].lo, b["kappa"].lo
    return None


def bounds_on_ray(orders: dict, leading: dict, hi: dict, rho) -> dict:
    """{q: B_q(D)} = hi_q leading_q/f_q on the ray K = rho D, N = 1, as SymPy expressions in D (exact), or raise
    ValueError naming what the ratio depends on besides (D, K, N)."""
    out = {}
    for q, f in orders.items():
        ratio = sp.simplify(leading[q] / f)
        extra = ratio.free_symbols - {D, K, N}
        if extra:
            raise ValueError(f"leading_q/f_q of {q} depends on {sorted(map(str, extra))}")
        out[q] = (sp.Rational(hi[q].numerator, hi[q].denominator)
                  * ratio.subs({K: sp.Rational(rho.numerator, rho.denominator) * D, N: 1}))
    return out


def ray_member(data: dict, point: tuple, Bs: dict, c: Fraction, hypotheses) -> tuple:
    """(setting, D) of a member of the ray at ``point`` with B_q(D) < c for every q and a rational ||V*||.

    D = q m, K = p m (rho* = p/q); eta is scaled onto x* (x is proportional to eta) and ||V*||^2 = g K onto kappa*
    (at one eta kappa is proportional to ||V*||^2/K: g = kappa*/(kappa(||V*|| = 1, K = p) p)). With g = a/b in lowest
    terms, m = a b p j^2 makes ||V*||^2 = (a p j)^2 a square; j is the least with every B_q(D) < c. The member's point
    is then read from the file's own formulas and must be ``point`` exactly (ValueError otherwise, or when the member
    is outside ``hypotheses``)."""
    rho, x_t, k_t = point
    p, q = rho.numerator, rho.denominator
    base = make_setting(D=q, K=p, N=1, preset=PRESET, eta=1, vstar_norm=1)
    g = k_t / (member(data, base)["point"][2] * p)
    step = g.numerator * g.denominator * p
    j = 1
    while any(float(B.subs(D, q * step * j * j)) >= c for B in Bs.values()):    # each B_q decreases to 0
        j *= 2
    m = step * j * j
    K_, D_, v = p * m, q * m, g.numerator * p * j
    x1 = member(data, make_setting(D=D_, K=K_, N=1, preset=PRESET, eta=1, vstar_norm=v))["point"][1]
    s = make_setting(D=D_, K=K_, N=1, preset=PRESET, eta=x_t / x1, vstar_norm=v)
    if member(data, s)["point"] != (rho, x_t, k_t):
        raise ValueError(f"the ray's member D = {D_}, K = {K_} is at {member(data, s)['point']}, not at {point}")
    ok, unmet = within(s, hypotheses)
    if not ok:
        raise ValueError(f"the ray's member D = {D_}, K = {K_} is outside the statement's hypotheses: {unmet}")
    return s, D_


def query_command(s) -> str:
    """The atlas query that replays member ``s`` (verify atlas --query)."""
    return (f"verify atlas --query D={s.D},K={s.K},N={s.N},eta={frac_str(s.eta_v)},vstar-norm="
            f"{frac_str(s.vstar_norm)},preset={PRESET} --atlas {{atlas}} --at {REPLAY_T} --json")


def uniform_constant_record(orders: dict, leading: dict, hypotheses, path=None) -> dict:
    """The record deciding "q >= c_lo f_q with one c_lo for every D" from the atlas (module docstring): refuting
    (kind arb, holds False) when the certified B_q tend to 0 along a certified ray and the replayed member's
    certified bounds at T = 10^12 lie below REPLAY_C f_q; a context record otherwise, saying why."""
    path = atlas_path() if path is None else path
    data, why = rechecked_atlas(str(path))
    name = f"atlas {path.name}: the lower bound's constant along a certified ray"

    def context(text):
        return record(name, "arb", atlas_scope([]), text, None, role="context")
    if data is None:
        return context(f"the atlas {path.name} was refused by the independent re-checker ({why})")
    regions = certified_regions(data)
    point = ray(regions)
    if point is None:
        return context(f"the atlas {path.name} has no certified cell with rho > 0")
    hi = {q: v[1] for q, v in normalised_limits(data).items()}
    try:
        Bs = bounds_on_ray(orders, leading, hi, point[0])
    except ValueError as exc:
        return context(f"the claimed orders are not a function of the member's D alone on a ray: {exc}")
    limits = {q: sp.limit(B, D, sp.oo) for q, B in Bs.items()}
    formulas = "; ".join(f"{q}: B = (1 + {float(hi[q] - 1):.3g}) {sp.sstr(B / sp.Rational(hi[q].numerator, hi[q].denominator))}"
                         for q, B in Bs.items())
    if any(v != 0 for v in limits.values()):
        return context(f"along rho = {point[0]} the certified bounds B_q(D) = hi_q leading_q/f_q do not tend to 0 "
                       f"({formulas}): the atlas does not refute a D-uniform constant")
    try:
        s, D_ = ray_member(data, point, Bs, REPLAY_C, hypotheses)
    except ValueError as exc:
        return context(f"no member to replay on the ray rho = {point[0]}: {exc}")
    (row,) = query(data, s, [REPLAY_T])["bounds"]
    vals = values_at(s) | {T: REPLAY_T}
    worst = {q: float(row[q][1]) / float(orders[q].subs(vals)) for q in orders}
    if not all(v < float(REPLAY_C) for v in worst.values()):
        return context(f"the replayed member D = {D_}, K = {s.K} has certified q/f_q at T = {REPLAY_T:.0e} of "
                       + ", ".join(f"{v:.3g}" for v in worst.values()) + f", not all below {float(REPLAY_C):.0e}")
    where = "; ".join(r.label() for r in regions)
    cmd = query_command(s).format(atlas=source_path(path))
    return record(
        name, "arb", atlas_scope(regions),
        f"every regime at a point of {where} (every D with K/D there) has lim sup_T q(T)/f_q(T) <= B_q(D) = hi_q "
        f"leading_q/f_q, hi_q the certified upper ends of the normalised limits; on the ray K = {point[0]} D, N = 1: "
        f"{formulas}, each -> 0 as D -> oo (SymPy). So for every c_lo > 0 some member has q(T) < c_lo f_q(T) for "
        f"every large T, whatever T*: no D-uniform c_lo exists. Replayed for c_lo = {float(REPLAY_C):.0e}: the member "
        f"D = {D_}, K = {s.K}, eta = {frac_str(s.eta_v)}, ||V*|| = {frac_str(s.vstar_norm)} has certified q/f_q at "
        f"T = {REPLAY_T:.0e} of " + ", ".join(f"{q} {v:.3g}" for q, v in worst.items()),
        False, replay=cmd, member={"D": D_, "K": s.K, "N": s.N, "eta": frac_str(s.eta_v),
                                   "vstar_norm": frac_str(s.vstar_norm), "preset": PRESET},
        ray={"rho": frac_str(point[0]), "x": frac_str(point[1]), "kappa": frac_str(point[2])},
        bounds={q: sp.sstr(B) for q, B in Bs.items()}, replay_ratios=worst,
        threshold={"value": f"c_lo = {float(REPLAY_C):.0e} for the replayed member; every c_lo > 0 on the ray",
                   "why": "B_q(D) -> 0: past the D where B_q < c_lo, q < c_lo f_q for every large T"})


__all__ = ["uniform_constant_record", "bounds_on_ray", "ray_member", "ray"]
