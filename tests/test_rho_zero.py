"""The registry of the phases of a cell holding rho = 0 (verify.certify.rho_zero, issue 27).

The atlas walks PHASES; the re-checker walks its own order (recheck.atlas.CHAINED, written without verify): the two
must agree. A phase that does not close is named in the reason after the entry it leaves missing, and what the
phases after it in time certified is stated, in full, with the charts a file's map then carries (names by hand).
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from recheck import atlas as RA
from verify.certify import atlas as A
from verify.certify import rho_zero

F = Fraction
ZERO = {"rho": (F(0), F(1, 64)), "x": (F(1, 8), F(9, 64)), "kappa": (F(1, 4), F(9, 32))}
CELL = A.AtlasCell(tuple(ZERO[n] for n in A.COORDINATES), "z:")


def test_verify_and_the_rechecker_walk_the_phases_in_one_order():
    """The pieces before R~ in the order they hand over, as verify states them and as the re-checker replays them."""
    assert [ph.key for ph in rho_zero.PHASES] == ["region_scaled"] + [c[0] for c in RA.CHAINED]
    assert len({ph.name for ph in rho_zero.PHASES}) == len(rho_zero.PHASES)


@pytest.mark.slow
def test_a_phase_that_does_not_close_is_named_and_the_phases_after_it_are_stated():
    """With a landing budget of 8 boxes the landing cannot close (it takes 1378 on this cell): the reason names the
    drift band's entry as missing and the landing as what did not close, states the band and R~ (two phases, the
    last clause complete), and the file's map carries the two charts of the closed phases only."""
    res = rho_zero.run(CELL, A.atlas_knobs({"landing_budget": 8}))
    reason, ev = res["reason"], res["evidence"]
    assert res["status"] == "open"
    assert reason.startswith("the cell holds rho = 0 (D -> infinity): open, since no entry into the drift band is "
                             "built there (the way from zero initialisation, along which alpha's peak grows like "
                             "sqrt(log(D/K)/kappa), docs/atlas.md; the landing did not close: ")
    assert "Its last two phases are certified for every member (every D >= 64 K): the drift along the curve" in reason
    assert "; and R~ = {u <= 1/2," in reason and reason.endswith("the 1/T rate")
    assert ev["region_scaled"]["ok"] is True and ev["drift_band"]["ok"] is True and ev["landing"]["ok"] is False
    assert "approach" not in ev and "far" not in ev and "passage" not in ev
    cell = {"checks": {"trajectory": {"evidence": ev}}}
    assert sorted(rho_zero.map_groups([cell], A.stated)) == ["drift", "scaled_coordinates"]
