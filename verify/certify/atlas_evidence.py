"""The atlas read by the claims: its certified cells as regions of (rho = K/D, x, kappa) that records cover.

A certified cell of an atlas (verify.certify.atlas) holds for every regime whose point (rho, x, kappa) lies in
its box: every D with K/D in the rho range, D -> infinity included when rho_lo = 0, integers or not. So each
record made here has for ``dims`` the cells' boxes as :class:`verify.model.regions.Region` s (one box when the certified
cells tile the atlas's box), and the verdict rule (verify.evidence.decide) computes what they cover: a statement
over every D is certified only where the boxes cover it and supported elsewhere, the reason naming the boxes.

Which atlas: the file named by the environment variable VERIFY_ATLAS_FILE, else the small atlas committed with the
toolkit (COMMITTED_ATLAS: one cell, rho = 1/16, x in [1/64, 1/32], kappa = 1/4, the bench family's D = 16 K slab,
every D = 16 K). Either is re-checked in the run by the independent re-checker (recheck.atlas,
which imports nothing of the toolkit) before a record is made from it; a file that does not re-check gives one
context record saying why, and nothing else.
"""
from __future__ import annotations

import os
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from ..evidence import From, Scope, record
from ..model.numbers import frac_str
from ..model.regions import Interval, Region, union_covers
from ..run.parts import source_path
from .atlas import COORDINATES

ATLAS_FILE_VARIABLE = "VERIFY_ATLAS_FILE"
COMMITTED_ATLAS = Path(__file__).parent / "data" / "atlas-ci.json"
# What the atlas's map rests on (ids of verify.model.hypotheses): sigma = identity, 0 < K < D (rho in (0, 1)),
# x < 2, and the reduction of full GD to the invariant map (zero initialisation, centred i.i.d. entries,
# P^T P = lambda I, uniform S* weights: verify.derive.reduction_proof and verify.derive.invariants). Each is implied by
# Theorem 3.1's and by Lemma C.2's large-step hypotheses, so a record assuming them may cover either.
ATLAS_ASSUMES = ("identity", "0<K<D", "eta-stable", "zero-init", "centred", "iid-entries", "orthogonal-P",
                 "uniform-S*")
USES = ("upper", "lower", "limits", "tstar")


def atlas_path() -> Path:
    """The atlas the claims read (module docstring)."""
    named = os.environ.get(ATLAS_FILE_VARIABLE)
    return Path(named) if named else COMMITTED_ATLAS


def cell_region(box: dict) -> Region:
    """A cell's box {"rho": [lo, hi], "x": .., "kappa": ..} (exact strings) as a Region of the invariants."""
    return Region({n: Interval(Fraction(box[n][0]), Fraction(box[n][1])) for n in COORDINATES})


def certified_regions(data: dict, check: str | None = None) -> list[Region]:
    """The certified cells of an atlas (``check``: those whose result for that check is certified, whatever the
    cell's status) as Regions; one Region, the atlas's box, when they tile it (verify.model.regions.union_covers)."""
    cells = [c for c in data["cells"] if (c["status"] == "certified" if check is None else
                                          c.get("checks", {}).get(check, {}).get("status") == "certified")]
    regions = [cell_region(c["box"]) for c in cells]
    whole = cell_region(data["spec"]["ranges"])
    if regions and union_covers(regions, whole):
        return [whole]
    return regions


def atlas_scope(regions: list[Region], horizon=From()) -> Scope:
    """What records on these regions cover: their regimes (sigma = identity, every convention, ATLAS_ASSUMES)."""
    return Scope(dims=tuple(regions), sigma=("identity",), conventions="all", horizon=horizon, assumes=ATLAS_ASSUMES)


@lru_cache(maxsize=4)
def rechecked_atlas(path: str) -> tuple:
    """(atlas data, "") when the independent re-checker verifies the file at ``path``, else (None, why)."""
    from recheck import atlas as RA  # heavy: loads flint
    try:
        return RA.check_file(path), ""
    except RA.R.CheckFailed as exc:
        return None, f"{exc.step}: {exc.detail}"
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        return None, f"format: {type(exc).__name__}: {exc}"


def normalised_limits(data: dict) -> dict:
    """{q: (lo, hi)}: the enclosure of lim_T q(T)/leading_q(T) over every member of the atlas's certified cells
    (each cell's trajectory check certifies its own; the union's ends)."""
    evs = [c["checks"]["trajectory"]["evidence"] for c in data["cells"] if c["status"] == "certified"]
    return {q: (min(Fraction(e["normalised_limits"][q][0]) for e in evs),
                max(Fraction(e["normalised_limits"][q][1]) for e in evs)) for q in evs[0]["normalised_limits"]}


def regions_text(regions: list[Region]) -> str:
    return "; ".join(r.label() for r in regions)


def theorem_records(path: Path | None = None) -> dict:
    """{use: record} for Theorem 3.1 from the atlas (USES): "upper" and "lower" (every member of a certified cell has
    certified upper and positive lower bounds of the 1/T, 1/sqrt(T) shape for every T >= T0 of its cell), "limits"
    (lim q/leading_q over the cells contains 1), "tstar" (T0 <= C D for every member: D = K/rho >= 1/rho_hi since
    K >= 1, so C = max over cells of T0 rho_hi). An atlas that does not re-check, or has no certified cell, gives a
    context record under every use (it decides nothing)."""
    path = Path(path or atlas_path())
    replay = f"python -m recheck.atlas {source_path(path)}"
    data, why = rechecked_atlas(str(path))
    cells = [] if data is None else [c for c in data["cells"] if c["status"] == "certified"]
    if not cells:
        text = (f"the atlas {path.name} was refused by the independent re-checker ({why}), so it certifies nothing"
                if data is None else f"the atlas {path.name} has no certified cell")
        return {u: record(f"atlas {path.name}", "arb", Scope(sigma=("identity",)), text, None, role="context",
                          use=u, replay=replay) for u in USES}
    regions = certified_regions(data)
    scope, where = atlas_scope(regions), regions_text(regions)
    evs = [c["checks"]["trajectory"]["evidence"] for c in cells]
    limits = normalised_limits(data)
    T0s = [(int(e["T0"]), Fraction(c["box"]["rho"][1])) for c, e in zip(cells, evs)]
    C = max(t * r for t, r in T0s)
    common = dict(replay=replay, atlas=source_path(path), cells=len(cells), regions=[r.as_dict() for r in regions],
                  normalised_limits={q: [frac_str(lo), frac_str(hi)] for q, (lo, hi) in limits.items()})
    how = (f"{len(cells)} certified cells of the atlas {path.name}, re-checked in this run by the independent "
           "re-checker (trapping region, entry tube or prefix, slab hulls; the comparison lemma with each member's own "
           "cubic coefficient)")
    ends = lambda k: ", ".join(f"1 + {float(v[k] - 1):.3g}" for v in limits.values())  # noqa: E731
    return {
        "upper": record(f"atlas: upper bounds for every regime at a point of {where}", "arb", scope,
                        f"every regime (every D, K, eta, ||V*||, any convention of the assumptions) whose (rho = K/D, x, "
                        f"kappa) lies in {where} has certified upper bounds U_q(T) on L - L_opt, ||S - S*||_F, "
                        f"||W_X - V*||_F for every T >= T0 of its cell, with U_q/leading_q -> at most {ends(1)} ({how})",
                        True, threshold={"value": "every cell certified", "why": "a cell's bounds hold for every member "
                                         "only when its region, entry and lemma obligations are all discharged"},
                        use="upper", **common),
        "lower": record(f"atlas: positive lower bounds for every regime at a point of {where}", "arb", scope,
                        f"every regime at a point of {where} has certified lower bounds on the three quantities for "
                        f"every T >= T0 of its cell, with lim q/leading_q >= {ends(0)} > 0: the T-rates of the lower "
                        f"bound hold ({how})", all(lo > 0 for lo, _ in limits.values()),
                        threshold={"value": "lim q/leading_q > 0 for every member", "why": "a positive lower limit of "
                                   "(eta T)^p q is a lower rate constant from some T on"}, use="lower", **common),
        "limits": record(f"atlas: the normalised limit constants over {where}", "arb", scope,
                         "lim q(T)/leading_q(T) for every regime at a point of the cells lies in " + "; ".join(
                             f"{q}: 1 + [{float(lo - 1):.3g}, {float(hi - 1):.3g}]" for q, (lo, hi) in limits.items()),
                         all(lo <= 1 <= hi for lo, hi in limits.values()),
                         threshold={"value": "each enclosure contains 1", "why": "the cells' deepest shells bound the "
                                    "normalised limits uniformly; 1 outside would contradict the derived leading terms"},
                         use="limits", **common),
        "tstar": record(f"atlas: a certified sufficient time T0 <= C D over {where}", "arb", scope,
                        f"every regime at a point of {where} has its rates (certified bounds of the 1/T shape) from T0 "
                        f"of its cell on, T0 in {sorted({t for t, _ in T0s})}; since D = K/rho >= 1/rho_hi, T0 <= C D "
                        f"with C = max T0 rho_hi = {float(C):.6g} for every such D: within O(D^2) (and O(D))", True,
                        threshold={"value": "T0 certified for every member of every cell", "why": "the cell's entry "
                                   "tube or prefix bounds every member's entry into the trapping region by T0"},
                        use="tstar", C=frac_str(C), **common)}


def positivity_scope(boxes: list[dict]) -> Scope:
    """The scope of Lemma C.2's invariant bands certified on ``boxes`` (Region B cells: {"rho", "x", "kappa"} as
    exact strings): their regions, every t."""
    regions = [cell_region(b) for b in boxes]
    return atlas_scope(regions, horizon="all")


__all__ = ["ATLAS_ASSUMES", "ATLAS_FILE_VARIABLE", "COMMITTED_ATLAS", "atlas_path", "atlas_scope", "cell_region",
           "certified_regions", "positivity_scope", "rechecked_atlas", "theorem_records"]
