"""The split prefix (verify.certify.prefix_split) and its re-check (recheck.certificates.check_split_prefix).

Second opinions: float64 iterations of the invariant map as SymPy derives it (verify.derive.invariants, lambdified:
not the generated Arb code the prefix steps) at random members must lie in the enclosures; the independent
re-checker accepts a certified split cell and refuses copies whose tree, dropped pieces or stated end were changed
(digest recomputed, so only the mathematics can tell).
"""
from __future__ import annotations

import functools
import json
import math
import random
from fractions import Fraction

import pytest

from verify.certify import atlas as A
from recheck import atlas as RA
from verify.certify.arbfun import hi_frac, lo_frac, widened
from verify.certify.certificate import run_prefix
from verify.certify.family import CELL_KNOBS, _region
from verify.certify.prefix import PrefixState
from verify.certify.prefix_split import split_state
from verify.model.precision import arb_precision

F = Fraction
# A cell whose plain Taylor prefix blows up before R (step 16-ish) but whose split prefix enters R at T0 = 64 with
# about 20 leaves (measured: 2.5 s of CPU to build on a loaded machine)
SPLIT_BOX = {"rho": (F(1, 8), F(33, 256)), "x": (F(1, 2), F(65, 128)), "kappa": (F(1), F(65, 64))}
FORCE_PREFIX = {"entry": "split"}       # the split route alone (not the tube, nor the one Taylor prefix)


@functools.lru_cache(maxsize=None)
def _invariant_functions():
    """verify.derive.invariants' alpha' and delta' - delta as float functions (SymPy's lambdify), made once."""
    import sympy as sp

    from verify.derive.invariants import invariant_map, r
    from verify.derive.invariants import x as X
    from verify.derive.invariants import y as Y
    from verify.model.symbols import alpha, delta
    m = invariant_map()
    return sp.lambdify((alpha, delta, r, X), m.a_next, "math"), sp.lambdify((alpha, delta, r, Y), m.inc, "math")


def float_member(s: float, x: float, y: float, steps: int) -> tuple:
    """(alpha_steps, delta_steps) by float64 iteration of verify.derive.invariants' map from (0, 0)."""
    a_next, inc = _invariant_functions()
    a, d = 0.0, 0.0
    for _ in range(steps):
        a, d = a_next(a, d, 1 / s, x), d + inc(a, d, 1 / s, y)
        assert math.isfinite(a) and math.isfinite(d)
    return a, d


def test_a_split_state_encloses_float64_members_of_each_half():
    """A box of invariants stepped 12 times, split across each parameter in turn and stepped to 40: random members of
    each half (float64, an independent evaluation of the map) lie in that half's member box, and each half's box
    is no wider than the unsplit enclosure at step 40 (a half is a subset of the box; its S is the parent's)."""
    P = ((F(1, 7), F(1, 7) + F(1, 512)), (F(1, 2), F(1, 2) + F(1, 128)), (F(1, 2), F(1, 2) + F(1, 128)))
    rng = random.Random(7)
    with arb_precision(128):
        whole = PrefixState(P)
        for _ in range(40):
            whole.step(*whole.balls())
        Aw, Dw = whole.member_box(whole.balls()[2])
        for k in range(3):
            st = PrefixState(P)
            for _ in range(12):
                st.step(*st.balls())
            for half in split_state(st, k):
                for _ in range(28):
                    half.step(*half.balls())
                Ah, Dh = half.member_box(half.balls()[2])
                assert half.step_count == 40 and Ah.rad() <= Aw.rad() and Dh.rad() <= Dw.rad()
                for _ in range(3):
                    p = [float(c + h * F(rng.uniform(-1, 1))) for c, h in zip(half.Pc, half.H)]
                    a, d = float_member(*p, 40)
                    for v, ball in ((a, Ah), (d, Dh)):
                        slack = 1e-12 * max(1.0, abs(v))
                        assert float(lo_frac(ball)) - slack <= v <= float(hi_frac(ball)) + slack, (k, p, v, ball)


def saved_atlas(knobs: dict, path):
    """SPLIT_BOX as one cell (depth 0, in this process) with the atlas knobs and ``knobs``, saved to ``path``."""
    cells = A.run_atlas(A.seed_cells(SPLIT_BOX), depth=0, dask=False, knobs=knobs)
    A.save_atlas(A.atlas_file(SPLIT_BOX, cells, knobs=A.atlas_knobs(knobs), depth=0, seconds=0.0), path)
    return path


@pytest.fixture(scope="module")
def split_atlas(tmp_path_factory):
    return saved_atlas(FORCE_PREFIX, tmp_path_factory.mktemp("atlas") / "split.json")


def _entry(data: dict) -> dict:
    return data["cells"][0]["checks"]["trajectory"]["evidence"]["entry"]


def tampered_end(data: dict, what: str) -> None:
    """``data``'s one cell with T0 halved ("early") or the stated hull of u at T0 narrowed to its lower quarter
    ("narrow-u")."""
    ev = data["cells"][0]["checks"]["trajectory"]["evidence"]
    if what == "early":
        ev["T0"] = int(ev["T0"]) // 2
    else:
        lo, hi = F(ev["entry"]["u"][0]), F(ev["entry"]["u"][1])
        ev["entry"]["u"] = [ev["entry"]["u"][0], str(lo + (hi - lo) / 4)]


def refused(data: dict, path):
    """The re-checker's refusal of ``data`` (its one cell's digest recomputed, so only the mathematics can tell),
    written to ``path``."""
    cell = data["cells"][0]
    cell["digest"] = A.cell_digest(cell)
    path.write_text(json.dumps(data))
    with pytest.raises(RA.R.CheckFailed) as exc:
        RA.check_file(str(path))
    return exc.value


@pytest.mark.slow
def test_a_split_cell_is_certified_where_the_plain_prefix_is_not_and_rechecks(split_atlas):
    """The cell is certified through a split prefix of several leaves, the plain prefix over the same invariant box
    blows up before R (so the split is what certified it), and the independent re-checker accepts the file."""
    data = json.loads(split_atlas.read_text())
    assert data["counts"]["certified"] == 1
    ent = _entry(data)
    assert ent["kind"] == "split" and ent["leaves"] >= 2
    P = tuple(widened(lo, hi) for lo, hi in A.AtlasCell(tuple(SPLIT_BOX.values())).invariants())
    u0, _, rc = _region(P, 0, CELL_KNOBS)
    _, _, _, _, ob = run_prefix(P, 128, u0, rc.profile, max_prefix=10_000, check_every=64, snapshots=False)
    assert not ob.ok
    log = []
    RA.check_file(str(split_atlas), lambda step, detail: log.append((step, detail)))
    assert any("split Taylor prefix" in d for _, d in log), log


def _a_leaf(tree):
    """The path (indices into nested split nodes) of the first leaf [0] of a split tree."""
    if tree == [0]:
        return []
    for i in (2, 3):
        if len(tree) == 4:
            sub = _a_leaf(tree[i])
            if sub is not None:
                return [i] + sub
    return None


@pytest.mark.slow
@pytest.mark.parametrize("tamper, why", [
    ("unsplit", "became unbounded"),            # the whole box claimed to enter R unsplit: its enclosure blows up
    ("dropped", "a dropped piece"),             # a leaf holding members claimed dropped
    ("narrow-u", "is not inside the stated"),   # the stated hull of u at T0 narrowed
    ("early", "is not inside the stated"),      # T0 lowered: the leaves are not in the stated hull yet
])
def test_a_tampered_split_cell_is_refused(split_atlas, tmp_path, tamper, why):
    """Each change (digest recomputed) is refused by the re-checker at its prefix step, for the reason it plants."""
    data = json.loads(split_atlas.read_text())
    ent = _entry(data)
    if tamper == "unsplit":
        ent["tree"] = [0]
    elif tamper == "dropped":
        *path, last = _a_leaf(ent["tree"])
        node = ent["tree"]
        for i in path:
            node = node[i]
        node[last] = [-1]
    else:
        tampered_end(data, tamper)
    exc = refused(data, tmp_path / f"{tamper}.json")
    assert exc.step == "prefix" and why in exc.detail, exc
