"""The trapping region at rho = 0 (issue 27): R~ = {u <= u0, |alpha - alpha*(u)| <= C~ s u^3} in the chart e = eps/s.

Second opinions: the invariant map (alpha, delta) as SymPy derives it (verify.derive.invariants, lambdified: not the
scaled chart's generated Arb code the region check evaluates) stepped at D = 10^8 K from a state written by hand
(alpha*(u) and u(delta) by hand), and the chart's limit at s = 0 worked out by hand: with c = 0 the map is R = 1,
u' = u, Q = (1 - u) G, G = (1 - e u^2 (1 - u)^3)/(1 - u)^2, DD(u, u) = 1/(1 - u)^2, so

    e' = (1 - x ((1 - u)^2 + kappa u^2)) e + y/(1 - u)^3        (kappa = y/x),

whose factor is the multiplier 1 - x(1 + kappa omega^2)/(1 + omega)^2 across the curve of fixed points (docs/atlas.md,
omega = u/(1 - u)).
Members at D/K = 10^3, 10^6 and 10^8 started on R~'s edge stay in it; a region narrower than the fixed point of e
is refused by the same check, and members leave it.
"""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

from conftest import one_cell_atlas
from test_atlas_kappa import _invariant_map, alpha_star
from recheck import atlas as RA
from recheck import certificates as RC
from verify.certify import atlas as A
from verify.certify.family import CELL_KNOBS, _base_C, _region, _region_at
from verify.certify.region import Box, evaluate_box, parameter_balls
from verify.certify import scaled
from verify.model.precision import arb_precision

F = Fraction
# every D >= 64 K at x in [1/8, 9/64], kappa in [1/4, 9/32]
ZERO = {"rho": (F(0), F(1, 64)), "x": (F(1, 8), F(9, 64)), "kappa": (F(1, 4), F(9, 32))}
CELL = A.AtlasCell(tuple(ZERO[n] for n in A.COORDINATES), "z:")


def _step(u, e, r, x, y):
    """One step of the invariant map from (u, e) (alpha = alpha*(u) + s e u^3, delta = log(r(1 - u)/u)), at 60
    digits: (u', e')."""
    import mpmath as mp
    with mp.workdps(60):
        u, e, r, x, y = (mp.mpf(v.numerator) / v.denominator if isinstance(v, Fraction) else mp.mpf(v)
                         for v in (u, e, r, x, y))
        a = alpha_star(u, r) + e * u**3 / r
        d = mp.log(r * (1 - u) / u)
        fa, fd = _invariant_map("mpmath")
        a1, d1 = fa(a, d, r, x, y), d + fd(a, d, r, x, y)
        u1 = r / (mp.exp(d1) + r)
        return u1, (a1 - alpha_star(u1, r)) * r / u1**3


def _inside(lo: Fraction, v, hi: Fraction) -> bool:
    """lo <= v <= hi for exact ends and a 60-digit mpmath value."""
    import mpmath as mp
    with mp.workdps(60):
        return mp.mpf(lo.numerator) / lo.denominator <= v <= mp.mpf(hi.numerator) / hi.denominator


def _point(u, e, P):
    """The scaled chart's enclosures at the point (u, e) for exact invariants P = (s, x, y)."""
    with arb_precision(128):
        Pb = parameter_balls(P)
        c = scaled.arb_functions().c(*Pb)[0]
        return evaluate_box(Box(u, u, e, e), Pb, c, True, scaled.arb_functions())


@pytest.mark.parametrize("u,e", [(F(1, 20), F(-3)), (F(1, 5), F(0)), (F(9, 20), F(5))])
def test_the_scaled_chart_encloses_the_map_at_D_1e8_and_has_the_hand_limit_at_s_0(u, e):
    x, kappa = F(1, 8), F(1, 4)
    y = kappa * x
    s = F(1, 10**8)
    u1, e1 = _step(u, e, 1 / s, x, y)
    res = _point(u, e, (s, x, y))
    assert res.finite and _inside(res.u_next[0], u1, res.u_next[1])
    assert _inside(res.eps_next[0], e1, res.eps_next[1])
    assert res.eps_next[1] - res.eps_next[0] < 1e-20          # a point: the enclosure is tight
    # at s = 0 (D = infinity): the hand limit, and the D = 10^8 step within O(s) of it
    hand = (1 - x * ((1 - u) ** 2 + kappa * u * u)) * e + y / (1 - u) ** 3
    res0 = _point(u, e, (F(0), x, y))
    assert res0.eps_next[0] <= hand <= res0.eps_next[1] and res0.u_next[0] <= u <= res0.u_next[1]
    assert res0.u_next[1] - res0.u_next[0] < 1e-30               # u' = u at s = 0
    assert abs(float(e1) - float(hand)) < 1e-6


def test_the_chart_is_proved_equal_to_the_eps_chart_and_regular_at_s_0():
    obs = scaled.obligations()
    names = {o.name for o in obs}
    assert all(o.ok for o in obs) and {"scaled-G", "scaled-eps-next", "scaled-regular-eps_next"} <= names
    # the (u, eps) chart itself is not regular at s = 0: its G holds eps/s
    from verify.certify.formulas import arb_functions
    with arb_precision(128):
        Pb = parameter_balls((F(0), F(1, 8), F(1, 32)))
        c = arb_functions().c(*Pb)[0]
        assert not evaluate_box(Box(F(1, 5), F(1, 5), F(1), F(1)), Pb, c).finite


def _members_stay(P_member, C, steps, start):
    """Iterate the map from ``start`` = (u, e) for ``steps`` steps at exact invariants (s, x, y); the largest |e|/C
    and u seen (floats)."""
    s, x, y = P_member
    u, e = start
    worst, top = 0.0, 0.0
    for _ in range(steps):
        u, e = _step(u, e, 1 / s, x, y)
        worst, top = max(worst, abs(float(e)) / float(C)), max(top, float(u))
    return worst, top


@pytest.mark.slow
def test_a_cell_holding_rho_0_has_an_invariant_region_and_members_at_large_D_stay_in_it():
    P = CELL.invariants()
    u0, m, rc = _region(P, 0, CELL_KNOBS, scaled=True)
    assert rc.ok and u0 >= F(1, 4), [o.detail for o in rc.obligations if not o.ok]
    C = rc.C
    # members at D/K = 10^3, 10^6, 10^8 (every one with K/D <= 1/64), at the (x, kappa) corners, started on R~'s edge
    for D in (10**3, 10**6, 10**8):
        s = F(1, D - 1)
        for x, kappa in ((F(1, 8), F(1, 4)), (F(9, 64), F(9, 32))):
            for start in ((u0, C), (u0, -C), (u0 / 3, C)):
                worst, top = _members_stay((s, x, kappa * x), C, 300, start)
                assert worst <= 1 and top <= u0, (D, x, kappa, start, worst, top)


def test_a_region_narrower_than_the_fixed_point_of_e_is_refused_and_members_leave_it():
    """Negative control: at u -> 0, s = 0 the fixed point of e is y/x = kappa (the hand limit above), so R~ with
    C~ = kappa_lo/2 is not invariant: the same check refuses it, and a member started at e = 0 leaves it."""
    P = CELL.invariants()
    narrow = ZERO["kappa"][0] / 2
    rc = _region_at(P, F(1, 8), narrow / _base_C(P, True), CELL_KNOBS, scaled=True)
    assert not rc.ok and "leaves [-C, C]" in next(o.detail for o in rc.obligations if not o.ok)
    x, kappa = ZERO["x"][0], ZERO["kappa"][0]
    worst, _ = _members_stay((F(1, 10**6), x, kappa * x), narrow, 60, (F(1, 16), F(0)))
    assert worst > 1


@pytest.fixture(scope="module")
def zero_atlas(tmp_path_factory):
    """A one-cell atlas of ZERO (open: no entry at rho = 0), saved."""
    return one_cell_atlas(ZERO, {}, tmp_path_factory.mktemp("zero") / "zero.json")


def test_the_atlas_states_the_region_of_a_rho_0_cell_keeps_it_open_and_the_rechecker_rechecks_it(zero_atlas):
    """The cell is open (no entry is built at rho = 0) and says what was certified for every D >= 64 K; the
    independent re-checker re-checks that region from the file (its own identities, every box, s = 0 included)."""
    steps = {}
    (cell,) = RA.check_file(str(zero_atlas), log=lambda step, detail: steps.setdefault(step, detail))["cells"]
    tr = cell["checks"]["trajectory"]
    # what is missing comes first (a query quotes the reason's start), then what was certified
    assert cell["status"] == "open" and tr["reason"].startswith("the cell holds rho = 0 (D -> infinity): open, since "
                                                                "no entry into the passage is built there")
    assert "certified for every member (every D >= 64 K" in tr["reason"]
    ev = tr["evidence"]
    assert all(ev[k]["ok"] is True for k in ("region_scaled", "drift_band", "landing", "approach", "far", "passage"))
    assert "for every D >= 1048576 K the far approach, from {alpha >= 64/7," in tr["reason"]
    assert "scaled-identities" in steps and "for every rho in [0, 1/64]" in steps["rho-zero-region"]
    # the drift band before R~ (tests/test_drift.py) and the landing before it (tests/test_landing.py) are re-checked
    # too: their charts' identities, then every box
    assert "drift-identities" in steps and "for every rho in" in steps["drift-band"]
    assert "landing-identities" in steps and "for every rho in" in steps["landing"]
    assert "for every rho in" in steps["approach"]
    assert "far-identities" in steps and "for every rho in" in steps["far"]
    assert "passage-identities" in steps and "for every rho in" in steps["passage"]


def _tampered(path, tmp_path, edit):
    """A copy of the atlas at ``path`` with ``edit(data)`` applied and the cells' digests recomputed (so that the
    re-checker reaches the check the edit is about)."""
    data = json.loads(path.read_text())
    edit(data)
    for c in data["cells"]:
        c["digest"] = A.cell_digest(c)
    out = tmp_path / "tampered.json"
    out.write_text(json.dumps(data))
    return str(out)


def _refused(path, tmp_path, edit) -> RC.CheckFailed:
    """The re-checker's refusal of the atlas at ``path`` tampered by ``edit`` (it must refuse)."""
    with pytest.raises(RC.CheckFailed) as exc:
        RA.check_file(_tampered(path, tmp_path, edit))
    return exc.value


def _formula_edit(group: str, name: str, old: str, new: str):
    """An edit of an atlas file replacing ``old`` (which must be there) by ``new`` once in its formula group.name."""
    def edit(data):
        g = data["map"][group]
        assert old in g[name]
        g[name] = g[name].replace(old, new, 1)
    return edit


def _one_step_shorter(key: str, count: str):
    """An edit of an atlas file stating its first cell's evidence[key][count] (a number of steps) one less."""
    def edit(data):
        data["cells"][0]["checks"]["trajectory"]["evidence"][key][count] -= 1
    return edit


def test_a_narrowed_region_or_an_edited_scaled_formula_is_refused(zero_atlas, tmp_path):
    def narrow(data):
        reg = data["cells"][0]["checks"]["trajectory"]["evidence"]["region_scaled"]
        reg["C_runs"] = [[str(Fraction(cv) / 8), n] for cv, n in reg["C_runs"]]

    exc = _refused(zero_atlas, tmp_path, narrow)
    assert exc.step == "region-invariant" and "its region for every D" in exc.detail

    edit = _formula_edit("scaled_coordinates", "eps_next", "y*(s + 1)", "y*(s + 2)")
    assert _refused(zero_atlas, tmp_path, edit).step == "scaled-identities"


@pytest.mark.slow
def test_one_region_serves_every_D_from_2K():
    """rho in [0, 1/2] (s in [0, 1]: every D >= 2K, D -> infinity included) at one (x, kappa) cell: R~ closes, and
    members at D/K = 2, 3, 10 and 10^4 started on its edge stay in it."""
    box = {"rho": (F(0), F(1, 2)), "x": (F(1, 4), F(3, 8)), "kappa": (F(1), F(2))}
    P = A.AtlasCell(tuple(box[n] for n in A.COORDINATES), "c:").invariants()
    u0, m, rc = _region(P, 0, CELL_KNOBS, scaled=True)
    assert rc.ok, [o.detail for o in rc.obligations if not o.ok]
    for D in (2, 3, 10, 10**4):
        s = F(1, D - 1)
        for x, kappa in ((F(1, 4), F(2)), (F(3, 8), F(1))):
            for start in ((u0, rc.C), (u0, -rc.C)):
                worst, top = _members_stay((s, x, kappa * x), rc.C, 200, start)
                assert worst <= 1 and top <= u0, (D, x, kappa, start, worst, top)


@pytest.mark.slow
def test_a_widened_drift_band_or_an_edited_drift_formula_is_refused(zero_atlas, tmp_path):
    """The re-checker replays the drift band the file states: the same cover claimed for a band of a quarter of its
    width (|h| <= W/4) is refused on a box ("drift-band"); one term of h' = h + x dh edited (kappa -> 2 kappa in dh's
    (rho - 1) L0/x term) is refused by the chart's exact identities ("drift-identities"); a tree with a box cut away
    ("drift-band")."""
    def narrow(data):
        band = data["cells"][0]["checks"]["trajectory"]["evidence"]["drift_band"]
        band["W"] = str(Fraction(band["W"]) / 4)

    assert _refused(zero_atlas, tmp_path, narrow).step == "drift-band"

    edit = _formula_edit("drift", "dh", "- kappa*(nu^2*t + 1)/(kappa + nu^2)", "- 2*kappa*(nu^2*t + 1)/(kappa + nu^2)")
    assert _refused(zero_atlas, tmp_path, edit).step == "drift-identities"

    def cut(data):
        band = data["cells"][0]["checks"]["trajectory"]["evidence"]["drift_band"]
        band["trees"] = [band["trees"][0][:-1]] + band["trees"][1:]

    exc = _refused(zero_atlas, tmp_path, cut)
    assert exc.step == "drift-band" and "ends before" in exc.detail


@pytest.mark.slow
def test_a_stronger_landing_or_an_edited_landing_formula_is_refused(zero_atlas, tmp_path):
    """The re-checker replays the landing the file states: the same cover claimed with a faster contraction near the
    curve (lambda_n = 1 - 2 (1 - lambda_n)) is refused on a box, a shorter count (j_f - 1) is refused by the
    recomputed count, one term of eta' edited is refused by the chart's exact identities, and the approach before
    it claimed one step shorter (N_a - 1) by its recomputed count."""
    def faster(data):
        land = data["cells"][0]["checks"]["trajectory"]["evidence"]["landing"]
        land["lambda_n"] = str(2 * Fraction(land["lambda_n"]) - 1)

    assert _refused(zero_atlas, tmp_path, faster).step == "landing"

    exc = _refused(zero_atlas, tmp_path, _one_step_shorter("landing", "j_f"))
    assert exc.step == "landing" and "below what the constants give" in exc.detail

    edit = _formula_edit("landing", "deta", "kappa*", "2*kappa*")
    assert _refused(zero_atlas, tmp_path, edit).step == "landing-identities"

    exc = _refused(zero_atlas, tmp_path, _one_step_shorter("approach", "N_a"))
    assert exc.step == "approach" and "below what d_min and c give" in exc.detail


@pytest.mark.slow
def test_a_stronger_far_approach_or_an_edited_far_formula_is_refused(zero_atlas, tmp_path):
    """The far approach before the approach: claimed with twice its progress d, with alpha's bound 1/beta_max halved
    (beta_max doubled: the boxes then fail), with half its nu room (the layer is then outside the approach's entry
    set as stated), with a nu room above the landing's nu_in_min (the hand-over), or with one of its formulas edited,
    it is refused; so is the passage before it claimed with k alpha^2 + log alpha^2 growing twice as fast (psi_min
    doubled)."""
    def field(key, f, phase="far"):
        def edit(data):
            ev = data["cells"][0]["checks"]["trajectory"]["evidence"][phase]
            ev[key] = str(f(Fraction(ev[key])))
        return edit

    exc = _refused(zero_atlas, tmp_path, field("d", lambda d: 2 * d))
    assert exc.step == "far" and "gpi" in exc.detail
    assert _refused(zero_atlas, tmp_path, field("beta_max", lambda b: 2 * b)).step == "far"
    exc = _refused(zero_atlas, tmp_path, field("nu_room", lambda r: r / 2))
    assert exc.step == "far" and "the approach's entry" in exc.detail
    exc = _refused(zero_atlas, tmp_path, field("nu_room", lambda r: 2 * r))
    assert exc.step == "far" and "hand-over" in exc.detail
    exc = _refused(zero_atlas, tmp_path, field("psi_min", lambda q: 2 * q, "passage"))
    assert exc.step == "passage" and "Psi's growth" in exc.detail
    edit = _formula_edit("far", "bdec", "varpi", "2*varpi")
    assert _refused(zero_atlas, tmp_path, edit).step == "far-identities"
