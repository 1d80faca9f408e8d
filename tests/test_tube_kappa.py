"""The entry tube over a cell wide in kappa and where the clock slows (verify.certify.entry, issue 27).

A step's direction in the (alpha, delta) plane depends on kappa = y/x (tube.linearity_obligation), so fences pushed
outward only along the centre kappa's slopes are crossed by the members at the range's ends; the fences now take the
steepest slope over the ends of both the s and the kappa range. Second opinions: float64 members at the cell's
corners (the invariant map as SymPy derives it, lambdified: not the generated Arb code the tube checks) must lie
between the certified fences at every step they spend in a graph, and in R at T0 (eps by hand); the independent
re-checker accepts the file; and the old construction, fences over the centre kappa only, is refused by the same
checks (the negative control). Above kappa = 1/2 a zeta graph started as wide as the alpha graph's end stalls (alpha
<= 0 at its lower fence, where delta falls); the retry from a narrower start closes, and without it the cell is open.
"""
from __future__ import annotations

import bisect
import json
import math
from fractions import Fraction

import pytest

from conftest import one_cell_atlas
from recheck import atlas as RA
from test_atlas_kappa import _evidence, _invariant_map, alpha_star
from verify.certify import atlas as A
from verify.certify import entry as E

F = Fraction
# rho = 1/16 (every D = 16K), x in [1/64, 9/512], kappa in [1/4, 17/64]: before the fences took kappa's ends the
# tube failed here (an alpha-graph slab's image left its lower fence) and so did the prefix (docs/atlas.md: "a cell
# of kappa width 1/64 at rho = 1/16 stays open"); measured 3.4 s of CPU to certify.
WIDE_KAPPA = {"rho": (F(1, 16), F(1, 16)), "x": (F(1, 64), F(9, 512)), "kappa": (F(1, 4), F(17, 64))}
TUBE_ONLY = {"entry": "tube"}


@pytest.fixture(scope="module")
def wide_kappa(tmp_path_factory):
    return one_cell_atlas(WIDE_KAPPA, TUBE_ONLY, tmp_path_factory.mktemp("tube") / "wide-kappa.json")


@pytest.mark.slow
def test_a_cell_wide_in_kappa_enters_through_the_tube_and_rechecks(wide_kappa):
    data = json.loads(wide_kappa.read_text())
    assert data["counts"]["certified"] == 1, data["cells"][0]["reason"]
    ev = _evidence(wide_kappa)
    assert ev["entry"]["kind"] == "tube"
    k_lo, k_hi = (F(v) for v in ev["entry"]["kappa"])
    assert k_lo <= WIDE_KAPPA["kappa"][0] and k_hi >= WIDE_KAPPA["kappa"][1]
    RA.check_file(str(wide_kappa))


def _between(graph: dict):
    """``inside(cl, tr)``: whether (cl, tr) lies between the graph's fences (linear between knots), None outside
    its clock range."""
    knots, lo, up = ([float(F(v)) for v in graph[k]] for k in ("knots", "lower", "upper"))

    def inside(cl: float, tr: float) -> bool | None:
        if not knots[0] <= cl <= knots[-1]:
            return None
        k = min(bisect.bisect_right(knots, cl) - 1, len(knots) - 2)
        t = (cl - knots[k]) / (knots[k + 1] - knots[k])
        return lo[k] + t * (lo[k + 1] - lo[k]) - 1e-12 <= tr <= up[k] + t * (up[k + 1] - up[k]) + 1e-12
    return inside


@pytest.mark.slow
@pytest.mark.parametrize("x", [WIDE_KAPPA["x"][0], WIDE_KAPPA["x"][1]])
@pytest.mark.parametrize("kappa", [WIDE_KAPPA["kappa"][0], WIDE_KAPPA["kappa"][1]])
def test_corner_members_stay_between_the_fences_and_are_in_R_at_T0(wide_kappa, x, kappa):
    """A corner member (float64, the lambdified invariant map from (0, 0)) lies between the alpha graph's fences at
    every step until its alpha reaches that graph's last slab (which the handover puts inside the zeta graph), then
    between the zeta graph's fences at every step in its clock range; at T0 it is in R (u <= u0, |eps| <= C(u), eps
    by hand)."""
    ev = _evidence(wide_kappa)
    ga, gz = ev["entry"]["graphs"]
    in_alpha, in_zeta_graph = _between(ga), _between(gz)
    prof = RA.R.Profile(ev["region"])
    T0 = int(ev["T0"])
    rho = float(WIDE_KAPPA["rho"][0])
    r, xf, y = 1 / rho - 1, float(x), float(kappa * x)
    s = 1 / r
    a_next, inc = _invariant_map("math")
    a, d, seen_alpha, seen_zeta, in_zeta = 0.0, 0.0, 0, 0, False
    last_slab = float(F(ga["knots"][-2]))
    for t in range(1, T0 + 1):
        a, d = a_next(a, d, r, xf, y), d + inc(a, d, r, xf, y)
        zeta = d + math.log(s)
        in_zeta = in_zeta or a >= last_slab
        if not in_zeta and (ok := in_alpha(a, d)) is not None:
            assert ok, ("alpha graph", t, a, d)
            seen_alpha += 1
        if in_zeta and (ok := in_zeta_graph(zeta, a)) is not None:
            assert ok, ("zeta graph", t, zeta, a)
            seen_zeta += 1
    assert seen_alpha > 10 and seen_zeta > 10, (seen_alpha, seen_zeta)
    u = r / (math.exp(d) + r)
    eps = (a - alpha_star(u, r)) / u**3
    assert u <= float(prof.u0) and abs(eps) <= float(prof.least(F(u))), (u, eps)


@pytest.mark.slow
def test_fences_over_the_centre_kappa_alone_are_refused(monkeypatch):
    """Negative control: the same cell with the fences pushed along the centre kappa's slopes only (the construction
    before) is not entered through the tube: the box checks find an image outside a fence."""
    build = E.build_graph

    def centre_only(pts, clock, w0, tau, centre, **kw):
        members, x = centre
        ks = sorted({k for _, k in members})
        mid = ks[len(ks) // 2]
        return build(pts, clock, w0, tau, (tuple(m for m in members if m[1] == mid), x), **kw)

    monkeypatch.setattr(E, "build_graph", centre_only)
    E.centre_reference.cache_clear()
    res = A.run_cell(A.AtlasCell(tuple(WIDE_KAPPA.values())), A.atlas_knobs(TUBE_ONLY))
    assert res["status"] == "open" and "fence" in res["reason"], res["reason"]


def test_a_slab_is_wider_than_a_step_from_the_slab_before_where_the_clock_slows():
    """On a clock whose steps shrink by 3% each (alpha nearing e^delta) and fences that bend everywhere (so the bend
    rule alone would cut a slab every MIN_STEPS steps), every slab is at least REACH * MIN_STEPS times the previous
    slab's first step wide, and the last slab at least MIN_STEPS steps: a step from a slab never passes the next."""
    steps = [0.97**t for t in range(400)]
    cl = [sum(steps[:t]) for t in range(401)]
    fences = ([c**3 for c in cl], [-(c**3) for c in cl])
    idx = E._knots(cl, fences, 1e-9, E.MAX_EVERY)
    assert idx[0] == 0 and idx[-1] == 400
    for prev, i, j in zip(idx, idx[1:], idx[2:]):
        if j != 400:
            assert cl[j] - cl[i] >= E.REACH * E.MIN_STEPS * steps[prev] * (1 - 1e-12), (prev, i, j)
    assert idx[-1] - idx[-2] >= E.MIN_STEPS


# rho in [1/4, 65/256], x in [1/16, 65/1024], kappa in [5/8, 81/128]: the alpha graph ends wide at this kappa, and a
# zeta graph started that wide reaches alpha <= 0, where delta falls and its clock with it; started at most half the
# reference's alpha wide it closes (measured: 2.2 s of CPU, T0 = 404).
HALF_KAPPA = {"rho": (F(1, 4), F(65, 256)), "x": (F(1, 16), F(65, 1024)), "kappa": (F(5, 8), F(81, 128))}


@pytest.mark.slow
def test_above_kappa_one_half_a_stalled_zeta_fence_is_retried_narrower_and_the_cell_rechecks(tmp_path, monkeypatch):
    """Certified through the tube, and the independent re-checker accepts the file; without the narrower retry
    (ZETA_START_CAP so large that the retry never narrows) the same cell is open with the stalled fence's reason."""
    path = one_cell_atlas(HALF_KAPPA, TUBE_ONLY, tmp_path / "half-kappa.json")
    data = json.loads(path.read_text())
    assert data["counts"]["certified"] == 1, data["cells"][0]["reason"]
    assert _evidence(path)["entry"]["kind"] == "tube"
    RA.check_file(str(path))
    monkeypatch.setattr(E, "ZETA_START_CAP", 1e9)
    E.centre_reference.cache_clear()
    res = A.run_cell(A.AtlasCell(tuple(HALF_KAPPA.values())), A.atlas_knobs(TUBE_ONLY))
    assert res["status"] == "open" and "stops advancing" in res["reason"], res["reason"]
