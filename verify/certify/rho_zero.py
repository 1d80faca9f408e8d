"""The phases of a cell holding rho = 0 (every D >= K/rho_hi at once): one registry, in the order they hand over.

A member's last phases, read backwards from the 1/T rate: the trapping region R~ in the chart e = eps/s
(verify.certify.scaled), before it the drift band along the curve of fixed points (verify.certify.drift), the
landing on the curve and the approach to it (verify.certify.landing), the far approach from p near 0
(verify.certify.far), the passage from alpha of a few units (verify.certify.passage). Each runs from the checks of
the phases it hands over to, so a phase is tried only when every phase after it in time closed. What no phase
covers yet, the start from zero initialisation (before alpha reaches a few units; alpha's peak grows like
sqrt(log(D/K)/kappa), docs/atlas.md), leaves every such cell open; the reason names the entry still missing first
(a query quotes a reason's start), then what each phase certified. The atlas (verify.certify.atlas) walks PHASES
and asks it for the charts a file's map carries; the re-checker walks its own copy of the order
(recheck.atlas.CHAINED: it imports nothing of verify).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from ..model.numbers import frac_str
from . import drift, far, landing, passage, scaled
from .family import _base_C, _region, _region_at, region_record

MISSING = "the way from zero initialisation, along which alpha's peak grows like sqrt(log(D/K)/kappa), docs/atlas.md"
COUNTS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


@dataclass(frozen=True)
class Phase:
    """One phase: ``run(cell, closed, knobs)`` -> a check with ``ok`` (``closed``: the checks of the phases before
    it in PHASES, by key, all closed); ``record(check)`` -> the evidence stated under ``key`` (with "failed": why,
    when not ok); ``says(check, closed)`` -> what it certifies, a clause of the reason; ``reach(check, closed)`` ->
    where its entry set begins (", up to ..."), the reason's account of how far the missing passage must go;
    ``group``: (the name, the formulas) of the chart a file's map carries for it, or None."""

    key: str
    name: str
    progress: str
    run: Callable
    record: Callable
    says: Callable
    reach: Callable = lambda check, closed: ""
    group: tuple | None = None


@dataclass
class Trapping:
    """R~ = {u <= u0, |e| <= C~} as closed (or the last check tried): u0, the C multiple m and the region check."""

    u0: Fraction
    m: int
    rc: object
    knobs: dict

    @property
    def ok(self) -> bool:
        return self.rc.ok


def trapping(cell, closed: dict, knobs: dict) -> Trapping:
    """The largest u0 and first C~ of the family's ladders that close in e = eps/s; then, when the band's hand-over
    at u0 asks for a wider C~ (drift.region_C_for_band) and that closes too, the wider one (the band keeps its full
    width)."""
    u0, m, rc = _region(cell.invariants(), cell.hint, knobs, scaled=True)
    if rc.ok:
        m_band = math.ceil(drift.region_C_for_band(cell.box[2][1], 1 / u0 - 1) / _base_C(cell.invariants(), True))
        wide = _region_at(cell.invariants(), u0, m_band, knobs, scaled=True) if m_band > m else None
        if wide is not None and wide.ok:
            m, rc = m_band, wide
    return Trapping(u0, m, rc, knobs)


def trapping_record(tr: Trapping) -> dict:
    if not tr.ok:
        bad = next(o for o in tr.rc.obligations if not o.ok)
        return {"ok": False, "u0": frac_str(tr.u0), "C_multiple": tr.m, "failed": f"{bad.name}: {bad.detail}"[:400]}
    return {"ok": True, "C_multiple": tr.m, "min_Q": tr.rc.summary()["min_Q"]} | region_record(tr.u0, tr.rc, tr.knobs)


def trapping_says(tr: Trapping, closed: dict) -> str:
    summary = tr.rc.summary()
    return (f"R~ = {{u <= {frac_str(tr.u0)}, |alpha - alpha*(u)| <= {float(tr.rc.C):.4g} s u^3}} is mapped into "
            f"itself (the chart e = eps/s, regular at s = 0: {summary['boxes']} boxes; recheck.atlas re-checks it), "
            f"and on it u' = u - c Q u^3 with Q >= {float(Fraction(summary['min_Q'])):.4g}: from a member's entry "
            "into R~ on, the 1/T rate")


def _bits(knobs: dict) -> int:
    return knobs.get("bits", 128)


def _budget(knobs: dict) -> int:
    return knobs.get("landing_budget", landing.LANDING_BUDGET)


PHASES: tuple[Phase, ...] = (
    Phase("region_scaled", "the trapping region", "trapping region at rho = 0 (e = eps/s)", trapping,
          trapping_record, trapping_says, group=("scaled_coordinates", scaled.file_group)),
    Phase("drift_band", "the drift band", "the drift band at rho = 0 (nu = 1/omega, t = s omega^4)",
          lambda cell, c, knobs: drift.band_for_cell(cell.box, c["region_scaled"].u0, c["region_scaled"].rc.C,
                                                     _bits(knobs), knobs.get("drift_budget", drift.BAND_BUDGET)),
          drift.record, lambda band, c: drift.statement(band), group=("drift", drift.file_group)),
    Phase("landing", "the landing", "the landing on the curve at rho = 0 (eta = s h)",
          lambda cell, c, knobs: landing.landing_for_cell(cell.box, c["drift_band"], _bits(knobs), _budget(knobs)),
          landing.record, lambda land, c: landing.statement(land), lambda land, c: landing.reach(land.eps),
          group=("landing", landing.file_group)),
    Phase("approach", "the approach", "the approach to the curve at rho = 0 (eta = s h)",
          lambda cell, c, knobs: landing.approach_for_cell(cell.box, c["landing"], _bits(knobs), _budget(knobs)),
          landing.approach_record, lambda appr, c: landing.approach_statement(appr, c["landing"]),
          lambda appr, c: landing.reach(appr.eps_a), group=("landing", landing.file_group)),
    Phase("far", "the far approach", "the far approach at rho = 0 (beta = 1/alpha, varpi = alpha/omega)",
          lambda cell, c, knobs: far.far_for_cell(cell.box, c["landing"], c["approach"], _bits(knobs),
                                                  _budget(knobs)),
          far.record, lambda fa, c: far.statement(fa), lambda fa, c: far.reach(fa, c["approach"]),
          group=("far", far.file_group)),
    Phase("passage", "the passage", "the passage at rho = 0 (beta = 1/alpha, xi = s alpha omega, varpi = alpha/omega)",
          lambda cell, c, knobs: passage.passage_for_cell(cell.box, c["far"], _bits(knobs), _budget(knobs)),
          passage.record, lambda pc, c: passage.statement(pc),
          lambda pc, c: passage.reach(pc, c["approach"]), group=("passage", passage.file_group)),
)


def run(cell, knobs: dict, phase: Callable = lambda text: None) -> dict:
    """The cell's trajectory check at rho = 0: every phase of PHASES in turn, each from the one before it closed,
    up to the first that does not close; open, the reason naming the entry still missing, then what closed."""
    evidence, closed, done, failed = {}, {}, [], None
    for ph in PHASES:
        phase(ph.progress)
        check = ph.run(cell, closed, knobs)
        evidence[ph.key] = ph.record(check)
        if not check.ok:
            failed = ph
            break
        closed[ph.key] = check
        done.append(ph)
    if done:
        evidence["C_multiple"] = evidence[PHASES[0].key]["C_multiple"]     # the children's first C multiple
    reach = done[-1].reach(closed[done[-1].key], closed) if done else ""
    into = done[-1].name if done else PHASES[0].name
    why = f"; {failed.name} did not close: {evidence[failed.key]['failed']}" if failed else ""
    reason = (f"the cell holds rho = 0 (D -> infinity): open, since no entry into {into} is built there "
              f"({MISSING}{reach}{why}).")
    if done:
        says = [ph.says(closed[ph.key], closed) for ph in reversed(done)]
        n = len(done)
        reason += (f" Its last {'phase is' if n == 1 else COUNTS[n] + ' phases are'} certified for every member "
                   f"(every D >= {frac_str(1 / cell.box[0][1])} K): "
                   + ("; ".join(says[:-1]) + "; and " if n > 1 else "") + says[-1])
    return {"status": "open", "reason": reason, "evidence": evidence}


def map_groups(cells: list, stated: Callable) -> dict:
    """The charts' formula groups a file's map carries: each phase's whose evidence some cell states closed."""
    return {ph.group[0]: ph.group[1]() for ph in PHASES if ph.group and any(stated(c, ph.key) for c in cells)}


__all__ = ["MISSING", "PHASES", "Phase", "map_groups", "run"]
