"""Certificate files: everything an independent checker needs to re-verify a certificate, as JSON.

``verify certify ... --save FILE`` writes (atomically) one object with "format": "verify-certificate",
"version": 2 and, for one regime (kind "slow-manifold"):

  map            every formula (verify.certify.formulas), as text: the reduced map in the parameters and in
                 the invariants, its Jacobians, the slow-manifold coordinates and their derivatives
  parameters     the regime's exact parameters; invariants, prefactors: what they give
  prefix         T0 and the end ball (alpha, delta, and the region's u, eps) of the Arb prefix from (0, 0)
  region         u0, C (near the manifold) and C_runs (C(u) per annulus, run-length encoded: see below), the
                 shells' ratio and count, and the boxes ("region.boxes": [u_lo, u_hi, e_lo, e_hi])
  shells         each shell's u_j, lower end, [a_j, b_j], Lt, W, entry step t_j and [Zl, Zh] at t_j
  lemma          the comparison lemma, the obligations that proved it, and the inequalities checked per shell
  bounds         [{"T", "excess_loss": [lo, hi], "s_err": [...], "w_err": [...]}] at the requested T
  constants, asymptotic, normalised_limits, obligations, trusts (what the certificate takes as proved)

For a family (kind "family", ``verify certify --D LO..HI ... --save FILE``): the map, the spec (fixed options,
ranges and, when every parameter is a monomial in the ranged names, those monomials as "parameters": e.g. eta_V
and eta_KQ both "eta"; verify.certify.family.FamilySpec.parameter_ties), the table of normalised limits, a few
members (their shells and bounds) and the cells, each with

  box, parameters, invariants   its parameter box, the parameters' and the invariants' ranges over it
  region         u0, C_runs, shells, ratio, n_u, n_eps and the boxes as bisection trees of the grid ("splits")
  T0, z_at_T0    a step by which every member is in R, and the range of z = 1/u^2 there
  entry          how the members enter R: {"kind": "tube", "kappa": [lo, hi] (y/x over the cell), "graphs":
                 [{"clock": "alpha" | "delta", "knots", "lower", "upper" (exact rationals), "trees" (one
                 quadtree per checked slab, as the region's splits)}], "handover_depths": [d, d]}
                 (verify.certify.tube), or {"kind": "taylor"} with "prefix_end", the Taylor-model prefix's end
                 ball (no "entry": taylor, as earlier files), or {"kind": "split", "tree", "kappa", "u", "eps"}: the
                 Taylor-model prefix bisected in the parameters (verify.certify.prefix_split), or the same with
                 "kind": "monotone": its states' box capped by a monotone enclosure (verify.certify.prefix_monotone)
  slabs          the hulls of the normalised decay and of Lt, W on each u-slab of the region, as
                 {"encoding": "float64-le-zlib-base64", "count": n, "hulls": "..."}: six outward-rounded doubles
                 per slab (a, b, Lt_lo, Lt_hi, W_lo, W_hi), packed little-endian in increasing u, zlib-compressed,
                 base64; the slab edges follow from the region (verify.certify.slabs)
  normalised_limits             lim q/leading_q over the cell

C_runs: C(u) is constant on each annulus [u0 r^(i+1), u0 r^i] (i < shells) and on the core [0, u0 r^shells], and
non-increasing inwards; the shells + 1 values, outermost first, are stored run-length encoded as [[C, count], ...]:
each exact rational C with the number (an integer >= 1) of consecutive annuli carrying it, the counts adding up to
shells + 1 (mostly one run: [["1183/1024", 121]]; verify.certify.region.Profile.runs).

A query (``verify certify --family FILE --query ...``) decodes the slabs of the member's cell only. Version 1
stored every slab as 8 decimal fractions (edges included), ~250 kB a cell; it is refused (re-save the family).

Every number is an exact rational (a double is one: a dyadic) or a decimal rounded outward; the stated
enclosures carry the small margin of verify.certify.arbfun.widened, and the bounds one printed digit, so that a
re-check of the same formulas at the same precision (``python -m recheck FILE``) lands inside them.
"""
from __future__ import annotations

import json
from fractions import Fraction

from . import fmt
from ..derive.invariants import PARAMETERS, parameter_values, prefactors_of
from ..errors import InvalidParameter
from ..inputs import read_json
from ..model.numbers import frac_str
from ..model.precision import arb_precision
from ..run.atomic import write_bytes_atomic
from .bounds import QUANTITIES
from .certificate import TRUSTS
from .comparison import LEMMA
from .family import Cell, FamilyCertificate, FamilySpec, parameter_box
from .formulas import VARIABLES, file_map
from .methods import method_of
from .slabs import check_stored

FORMAT, VERSION = "verify-certificate", 2
PREFIX_DIGITS = 25      # bounds inside the prefix: 25 digits (its balls are ~1e-35 wide; a re-check lands inside)
LEMMA_OBLIGATIONS = ("one-step-lower", "one-step-upper", "step-error-monotone", "one-step-remainder",
                     "sum-le-integral", "integral-closed-form", "log-concave", "moebius-monotone")
PER_SHELL = ("z_lo(t_j) = Zl_j >= 1/u_j^2 (u <= u_j from t_j on)", "a_j > 0 and b_j u_j^2 < 1 (the lemma's hypotheses)",
             "Zl_(j+1) <= Zl_j + 2 a_j n_j and Zh_(j+1) >= z_hi_j(n_j), n_j = t_(j+1) - t_j (the lemma summed)",
             "lo_j > 0 => Zh_(j+1) lo_j^2 <= 1 (u_t >= lo_j on the shell, by induction)",
             "[a_j, b_j] contains c times the normalised decay on every box meeting [lo_j, u_j]; Lt, W likewise")


def trusts(cert_trusts: dict) -> list[dict]:
    """What a certificate takes as proved elsewhere (and a re-checker cannot re-derive)."""
    return [cert_trusts,
            {"statement": "the discrete comparison lemma (see 'lemma'): its one-step inequalities and the summation",
             "proof": "SMT (z3 and cvc5) and SymPy obligations " + ", ".join(LEMMA_OBLIGATIONS) +
                      " (verify.certify.comparison.lemma_obligations)", "scope": "every a, b, x_0 satisfying its "
                      "hypotheses"},
            {"statement": "exprel(y) = (e^y - 1)/y is increasing, so its range on [lo, hi] is [exprel(lo), exprel(hi)]",
             "proof": "SymPy obligation exprel-integral (verify.certify.region.exprel_obligation)", "scope": "all y"}]


def stated_bounds(cert, Ts) -> list[dict]:
    """The bounds at each T as the file states them: prefix bounds to PREFIX_DIGITS digits, lemma bounds with
    one digit fewer than resolve them (both rounded outward)."""
    out = []
    for T in Ts:
        b = cert.bounds(T)
        with arb_precision(cert.bits):
            row = {"T": int(T)}
            for q in QUANTITIES:
                lo, hi = b[q]
                digits = PREFIX_DIGITS if T <= cert.T0 else max(3, fmt.digits_for(lo.lower(), hi.upper()) - 2)
                row[q] = fmt.interval(lo, hi, min(digits, fmt.digits_for(lo.lower(), hi.upper())))
            out.append(row | {"route": b["route"]})
    return out


def _pair(p) -> list[str]:
    return [frac_str(Fraction(p[0])), frac_str(Fraction(p[1]))]


def certificate_file(cert, Ts) -> dict:
    """The file of a certificate (module docstring), as its method writes it (verify.certify.methods): a
    slow-manifold certificate's; a method without a re-checkable file (the closed forms at K = 0, K = D) refuses."""
    return method_of(cert).file(cert, Ts)


def regime_file(cert, Ts) -> dict:
    """The file of a one-regime certificate (module docstring)."""
    s, rc = cert.setting, cert.region
    pre = prefactors_of(s)
    d = cert.as_dict()
    end = cert.prefix_end
    return {
        "format": FORMAT, "version": VERSION, "kind": "slow-manifold", "statement": d["statement"],
        "regime": s.config(), "trusts": trusts(d["trusts"]), "bits": cert.bits,
        "map": {"variables": VARIABLES, **file_map()},
        "parameters": {str(p): frac_str(v) for p, v in zip(PARAMETERS, parameter_values(s))},
        "invariants": d["invariants"],
        "prefactors": {q: frac_str(v) for q, v in pre.items()},
        "prefix": {"T0": cert.T0, "start": {"alpha": "0", "delta": "0"},
                   "end": {k: end[k] for k in ("alpha", "delta", "u", "eps")}},
        "region": {"definition": d["region"]["definition"], "u0": frac_str(rc.u0), "C": frac_str(rc.C), "k": 3,
                   "C_runs": rc.profile.runs(), "shells": rc.shells,
                   "ratio": frac_str(rc.ratio),
                   "boxes": [_pair((r.box.u_lo, r.box.u_hi)) + _pair((r.box.e_lo, r.box.e_hi)) for r in rc.results]},
        "shells": [{"j": sh.j, "u_j": frac_str(sh.u_j), "lo": frac_str(sh.lo), "a": frac_str(sh.a),
                    "b": frac_str(sh.b), "Lt": _pair(sh.Lt), "W": _pair(sh.W), "t": sh.t, "Zl": frac_str(sh.Zl),
                    "Zh": frac_str(sh.Zh)} for sh in cert.shells],
        "lemma": {"statement": LEMMA, "proved_by": [o.as_dict() for o in cert.obligations
                                                    if o.name in LEMMA_OBLIGATIONS], "per_shell": list(PER_SHELL)},
        "bounds": stated_bounds(cert, Ts),
        "constants": cert.constants, "asymptotic": cert.asymptotic, "normalised_limits": d["normalised_limits"],
        "obligations": d["obligations"],
    }


def save(data: dict, path) -> None:
    """Write a certificate file atomically (complete or absent, never half-written)."""
    write_bytes_atomic(path, (json.dumps(data, indent=1) + "\n").encode())




def family_parameters(spec, cell) -> dict:
    """{parameter: [lo, hi]} over a cell (from its corners: each parameter is monotone in the ranged options)."""
    box = Cell(tuple(sorted((n, (int(lo) if n == "D" else Fraction(lo), int(hi) if n == "D" else Fraction(hi)))
                            for n, (lo, hi) in cell["box"].items())))
    return {str(p): [frac_str(lo), frac_str(hi)] for p, (lo, hi) in zip(PARAMETERS, parameter_box(spec, box))}


def member_entry(fc, values: dict, Ts) -> dict:
    """A member of a family as the file states it (the re-checker checks it): its parameters, the cell it lies
    in, its shells (the comparison lemma with its own c over the cell's slab hulls) and its bounds."""
    s, cell, shells = fc.member_shells(values)
    return {"values": {k: frac_str(Fraction(v)) for k, v in values.items()}, "cell": cell["path"],
            "parameters": {str(p): frac_str(v) for p, v in zip(PARAMETERS, parameter_values(s))},
            "prefactors": {q: frac_str(v) for q, v in prefactors_of(s).items()},
            "shells": [{"j": sh.j, "u_j": frac_str(sh.u_j), "lo": frac_str(sh.lo), "a": frac_str(sh.a),
                        "b": frac_str(sh.b), "Lt": _pair(sh.Lt), "W": _pair(sh.W), "t": sh.t, "Zl": frac_str(sh.Zl),
                        "Zh": frac_str(sh.Zh)} for sh in shells],
            "bounds": [_loosened(b) for b in fc.bounds(values, [T for T in Ts if T >= int(cell["T0"])])]}


def _loosened(b: dict) -> dict:
    """A lemma bound as stated in a file: rounded outward to one digit fewer than resolves it (a re-check of the
    same formulas lands inside)."""
    from flint import arb  # heavy: flint
    out = {"T": b["T"], "route": b["route"]}
    with arb_precision(128):
        for q in QUANTITIES:
            lo, hi = (arb(Fraction(v).numerator) / Fraction(v).denominator for v in b[q])
            out[q] = fmt.interval(lo, hi, max(3, fmt.digits_for(lo, hi) - 2))
    return out


def family_file(fc, Ts, members: list[dict]) -> dict:
    """The file of a family certificate: the formulas, the family, every cell (with its parameter box, region as
    the grid and bisection trees, prefix end, slab hulls and normalised limits), the uniform table, and a few
    members with their shells and bounds."""
    d = fc.as_dict()
    cells = []
    for c in d["cells"]:
        cells.append({k: v for k, v in c.items() if k != "seconds"} | {"parameters": family_parameters(fc.spec, c)})
    ties = fc.spec.parameter_ties()
    spec = d["spec"] | ({"parameters": ties} if ties is not None else {})
    return {"format": FORMAT, "version": VERSION, "kind": "family", "bits": fc.knobs.get("bits", 128),
            "statement": "for every member of the family (every integer D in its range and every value of the other "
                         "ranged parameters) and every T >= T0 of the member's cell, the exact GD iterate satisfies "
                         "the bounds the comparison lemma gives with the member's own cubic coefficient over the "
                         "cell's slab hulls; and lim q/leading_q lies in normalised_limits",
            "trusts": trusts(TRUSTS), "map": {"variables": VARIABLES, **file_map()}, "spec": spec,
            "cells": cells, "normalised_limits": d["normalised_limits"],
            "normalised_limits_meaning": d["normalised_limits_meaning"],
            "members": [member_entry(fc, m, Ts) for m in members], "seconds": d["seconds"]}


def load_family(path):
    """A FamilyCertificate from its file (for queries: no re-computation), read bounded (verify.inputs)."""
    data = read_json(path, "family", what="family certificate file")
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("kind") != "family":
        raise InvalidParameter("family", str(path), "must be a family certificate file (verify certify with ranges "
                               "--save FILE)")
    if data.get("version") != VERSION:
        raise InvalidParameter("family", str(path), f"must be a family certificate file of version {VERSION}, not "
                               f"version {data.get('version')} (re-save it: verify certify with ranges --save FILE)")
    try:
        sp_ = data["spec"]
        ranges = {n: ((int(lo), int(hi)) if n == "D" else (Fraction(lo), Fraction(hi))) for n, (lo, hi) in
                  sp_["ranges"].items()}
        spec = FamilySpec.of(sp_["options"], ranges)
        for c in data["cells"]:             # the slabs' shape only: a query decodes its own cell's
            check_stored(c["slabs"], c["region"], str(path), c["path"] or "root")
        bits = data["bits"]
    except InvalidParameter:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidParameter("family", str(path), f"must be a complete family certificate file (it lacks or "
                               f"misstates {exc})") from None
    return FamilyCertificate(spec, data["cells"], {"bits": bits}, data.get("seconds", 0.0), source=str(path),
                             file=data)


__all__ = ["FORMAT", "VERSION", "certificate_file", "family_file", "load_family", "regime_file", "save",
           "stated_bounds", "trusts"]
