"""Families of regimes: the invariant parametrisation (derived, proved, and checked on a 40-digit
example), family certificates (cells on the Dask executor, members' bounds), queries and their refusals, and
the re-checker on family files.

Second opinions: a 60-digit mpmath iteration of the generated reduced recursion (verify.engines) of each
member, independent of the invariants and of the certificate; two regimes iterated separately for the
invariance; the re-checker.
"""
from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
import zlib
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.certify.family import FamilySpec
from verify.certify.files import load_family
from verify.cli import main
from verify.derive.invariants import invariant_map, invariants_of
from verify.engines import iterate
from verify.model import make_setting

ROOT = Path(__file__).resolve().parents[1]
QUANTITIES = ("excess_loss", "s_err", "w_err")
ETA = (Fraction(1, 16), Fraction(51, 800))                     # a 2% interval of step sizes
SPEC = FamilySpec.of({"preset": "sts", "K": 4, "vstar_norm": "1"}, {"D": (8, 9), "eta": ETA})


def test_the_invariant_parametrisation_is_proved():
    """Every obligation of the derivation holds, and the three invariants are the hand values below."""
    inv = invariant_map()
    assert all(o.holds is True for o in inv.obligations), [o.name for o in inv.obligations if o.holds is not True]
    assert {o.key for o in inv.obligations} >= {"scaling-symmetries", "alpha-map-invariant", "increment-invariant"}
    s = make_setting(D=12, K=3, supports=[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], eta="0.07",
                     vstar_norm="3/2")
    # by hand: r = (D - K)/K = 3, x = eta N/K = 0.07 * 4/3, y = eta ||V*||^2/K^2 = 0.07 * (9/4)/9
    assert invariants_of(s) == (Fraction(3), Fraction(7, 100) * Fraction(4, 3), Fraction(7, 100) / 4)


def _run(s, steps):
    return iterate(s, steps, "reduced", "mpmath", 60, checkpoints=[steps]).records[-1]


@pytest.mark.slow
def test_two_regimes_with_the_same_invariants_agree_to_40_digits():
    """D = 12, K = 3, N = 4, ||V*||^2 = 9/4, eta = 0.07 and D = 4, K = 1, N = 1, ||V*||^2 = 1, eta = 0.28/3,
    eta_KQ = 0.0175 have the same invariants: alpha and the support mass agree to 40 digits after 2000 steps;
    a third regime with another y (eta_KQ = 0.02) does not."""
    a = make_setting(D=12, K=3, supports=[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], eta="0.07", vstar_norm="3/2")
    b = make_setting(D=4, K=1, preset="sts", eta="7/75", eta_kq="0.0175", vstar_norm="1")
    c = make_setting(D=4, K=1, preset="sts", eta="7/75", eta_kq="0.02", vstar_norm="1")
    assert invariants_of(a) == invariants_of(b) != invariants_of(c)
    ra, rb, rc = (_run(s, 2000) for s in (a, b, c))
    for q in ("alpha", "support_mass"):
        va, vb, vc = (mpmath.mpf(getattr(r, q)[0]) for r in (ra, rb, rc))
        assert abs(va - vb) <= mpmath.mpf(10) ** -40 * abs(va)
        assert abs(va - vc) > mpmath.mpf(10) ** -6 * abs(va)


@pytest.fixture(scope="module")
def family(small_family):
    assert small_family.spec == SPEC
    return small_family                # tests/conftest.py: made once per session


@pytest.mark.slow
def test_cells_cover_the_family_and_split_where_they_must(family):
    """The box is cut into ranges of lengths spanning at most D_SPAN of their least D: at D = 8, 9 a range holds
    one length (8/40 < 1); each cell holds the whole eta range and closes: one cell per D."""
    assert sorted(c["path"] for c in family.cells) == ["D8:", "D9:"]
    boxes = sorted(c["box"]["D"] for c in family.cells)
    assert boxes == [["8", "8"], ["9", "9"]] and all(c["status"] == "certified" for c in family.cells)


@st.composite
def members(draw):
    D = draw(st.integers(8, 9))
    eta = ETA[0] + (ETA[1] - ETA[0]) * Fraction(draw(st.integers(0, 64)), 64)
    return {"D": D, "eta": eta}


@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(members())
def test_members_bounds_contain_a_60_digit_iteration(family, values):
    """Any member of the family: its bounds (from its cell, with its own c) contain the 60-digit mpmath iteration
    of its own reduced recursion, before and after its cell's T0."""
    cell = family.cell_of(values)
    T0 = int(cell["T0"])
    Ts = [T0 // 3, T0, T0 + 1, T0 + 300, 3 * T0]
    s = SPEC.setting(values)
    tr = iterate(s, max(Ts), "reduced", "mpmath", 60, checkpoints=sorted(set(Ts)))
    got = {b["T"]: b for b in family.bounds(values, Ts)}
    for rec in tr.records:
        b = got[rec.step]
        for q in QUANTITIES:
            v = Fraction(mpmath.nstr(getattr(rec, q), 55))
            tol = abs(v) / 10**45        # the mpmath run's own rounding (60 digits)
            assert Fraction(b[q][0]) - tol <= v <= Fraction(b[q][1]) + tol, (values, rec.step, q, b[q], float(v))


@pytest.mark.slow
def test_uniform_limits_and_late_relative_width(family):
    """lim q/leading_q is within 1e-12 of 1 for every member (the derived leading terms are the limits, uniformly),
    and a member's band at T = 1e12 is narrow."""
    for q, (lo, hi) in family.table().items():
        assert 1 - Fraction(1, 10**12) < lo <= 1 <= hi < 1 + Fraction(1, 10**12), (q, float(lo), float(hi))
    b = family.bounds({"D": 9, "eta": Fraction(1, 16)}, [10**12])[0]
    assert all((Fraction(b[q][1]) - Fraction(b[q][0])) / Fraction(b[q][0]) < Fraction(1, 10) for q in QUANTITIES)


@pytest.fixture(scope="module")
def family_path(small_family_path):
    return small_family_path


@pytest.mark.slow
def test_query_in_the_one_regime_format_and_refusals(family_path):
    ok = CliRunner().invoke(main, ["certify", "--family", str(family_path), "--query", "D=9,eta=0.063",
                                   "--at", "1e6,1e12", "--json"])
    assert ok.exit_code == 0, ok.output
    out = json.loads(ok.stdout)
    assert [b["T"] for b in out["bounds"]] == [10**6, 10**12]
    # answered from a cell the independent checker re-checked in this call (the member D = 9 lies in cell D9:)
    assert out["rechecked"]["checker"] == "recheck.certificates"
    assert {"model", "regime", "cell"} <= set(out["rechecked"]["cells"]["D9:"]), out["rechecked"]
    assert all(set(b) >= {"T", *QUANTITIES} and len(b["w_err"]) == 2 for b in out["bounds"])
    # a member just outside a range is refused, naming the parameter and the range
    for query, name in (("D=10,eta=0.063", "D"), ("D=9,eta=0.06375001", "eta"), ("D=9", "eta")):
        r = CliRunner().invoke(main, ["certify", "--family", str(family_path), "--query", query])
        assert r.exit_code == 2 and "--query" in r.stderr and name in r.stderr, r.stderr
    assert "8..9" in CliRunner().invoke(main, ["certify", "--family", str(family_path), "--query",
                                               "D=10,eta=0.063"]).stderr
    # a value that is no number is named as typed in --query (not as --eta's default)
    for query, name in (("D=9,eta=nan", "eta must be a finite number"), ("D=x,eta=0.063", "D must be an integer")):
        r = CliRunner().invoke(main, ["certify", "--family", str(family_path), "--query", query])
        assert r.exit_code == 2 and f"--query {query}: {name}" in r.stderr, r.stderr
        assert "--eta (not given" not in r.stderr and "1/10" not in r.stderr, r.stderr
    # the printed table has its column headers (as the one-regime certificate's)
    text = CliRunner().invoke(main, ["certify", "--family", str(family_path), "--query", "D=9,eta=0.063",
                                     "--at", "1e6"]).stdout.splitlines()
    assert "member D=9, eta=63/1000" in text[0] and "re-checked in this call" in text[1], text
    assert text[2].split() == ["T", "L", "-", "L_opt", "||S", "-", "S*||_F", "||W_X", "-", "V*||_F"], text
    assert text[3].split()[0] == "1000000", text


def _recheck(path):
    return subprocess.run([sys.executable, "-m", "recheck", str(path)], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def _hulls(cell: dict) -> list:
    """A cell's stored slab hulls, six doubles a slab (the file format: zlib of little-endian float64, base64),
    read here with the standard library alone."""
    raw = zlib.decompress(base64.b64decode(cell["slabs"]["hulls"]))
    return list(struct.unpack(f"<{len(raw) // 8}d", raw))


def _with_hulls(cell: dict, values: list) -> None:
    cell["slabs"]["hulls"] = base64.b64encode(zlib.compress(struct.pack(f"<{len(values)}d", *values))).decode()


def _tighten_slab(d: dict) -> None:
    """Slab 10's upper end of the normalised decay b set to its lower end a: tighter than its boxes give."""
    v = _hulls(d["cells"][0])
    v[6 * 10 + 1] = v[6 * 10]
    _with_hulls(d["cells"][0], v)


def _tamper_runs(region: dict, scale, extra: int) -> None:
    """The first run of C(u) [C, count] (file format: run-length encoded) as [scale C, count + extra]: a tighter
    C than the boxes were checked with, or one annulus too few or too many."""
    (c, n), *rest = region["C_runs"]
    region["C_runs"] = [[str(Fraction(c) * scale), n + extra], *rest]


@pytest.mark.slow
def test_the_checker_verifies_the_family_and_rejects_tampering(family_path, tmp_path):
    ok = _recheck(family_path)
    assert ok.returncode == 0, ok.stdout
    for change, step in ((lambda d: d["cells"].pop(1), "family-cover"),
                         (_tighten_slab, "shells"),
                         (lambda d: d["cells"][0]["region"]["splits"].pop(7), "region-cover"),     # a box removed
                         (lambda d: d["cells"][1]["slabs"].__setitem__("count", 1), "format"),
                         # a C 64 times tighter: refused by the first check that reads it (the entry's end for a
                         # Taylor prefix, the region's boxes for a tube; which route enters is the builder's choice)
                         (lambda d: _tamper_runs(d["cells"][0]["region"], Fraction(1, 64), 0),
                          ("prefix-in-region", "region-invariant")),
                         (lambda d: _tamper_runs(d["cells"][1]["region"], 1, -1), "format"),
                         (lambda d: d.__setitem__("version", 1), "format"),
                         (lambda d: d["normalised_limits"]["s_err"].__setitem__(1, "1"), "limits"),
                         (lambda d: d["members"][0]["bounds"][1]["s_err"].__setitem__(0, d["members"][0]["bounds"][1][
                             "s_err"][1]), "bounds")):
        data = json.loads(family_path.read_text())
        change(data)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data))
        r = _recheck(bad)
        steps = step if isinstance(step, tuple) else (step,)
        assert r.returncode == 1 and any(r.stdout.splitlines()[-1].startswith(f"FAILED {s}") for s in steps), \
            (step, r.stdout[-300:])


@pytest.mark.slow
def test_family_evidence_for_the_theorem_claim():
    """family_evidence(ci): four arb records over the family's scope (its members as a region, the hypotheses as
    assumptions), checked against hand values at the largest D = 9 (K = 4, N = 1, ||V*|| = 1): the limit of
    eta T (L - L_opt) is the derived leading constant K N (D - K)/(4 D) = 20/36 = 5/9; the bound on a D-uniform
    c_lo is that limit's upper end over the claimed orders' constants K D^4 = 26244, D^(5/2)/||V*|| = 243 and
    D^2 sqrt(K) = 162; the tests certify (never prove: a finite family), the c_lo bound decides nothing."""
    from verify.certify import family_evidence
    from verify.evidence import Scope, decide
    ev = {r["use"]: r for r in family_evidence("ci")}
    assert set(ev) == {"upper", "lower", "uniform-lower-constant", "limits"}
    assert all(r["kind"] == "arb" for r in ev.values())
    from verify.model.regions import Interval
    scope = Scope.from_dict(ev["upper"]["scope"])
    (region,) = scope.dims
    assert region.label() == "sts K=4 D=8..9, eta in [1/16, 51/800], ||V*|| = 1" and scope.conventions == ("reference",)
    assert (region.interval("D"), region.interval("eta"), region.interval("K")) == (
        Interval(8, 9, integer=True), Interval(*ETA), Interval(4, 4, integer=True))
    assert {"zero-init", "orthogonal-P", "identity", "one-eta", "eta-stable", "0<K<D"} <= set(scope.assumes)
    tests = [ev[u] for u in ("upper", "lower", "limits")]
    assert all(r["role"] == "test" and r["holds"] is True for r in tests)
    assert decide(tests, scope).verdict == "certified"
    lo, hi = (Fraction(v) for v in ev["limits"]["limits_at_largest_D"]["excess_loss"])
    assert lo <= Fraction(5, 9) <= hi and hi - lo < Fraction(1, 10**12)
    c = ev["uniform-lower-constant"]
    assert c["role"] == "context" and c["holds"] is None and c["D"] == 9
    assert decide([c], scope).verdict == "inconclusive"
    for q, norm in (("excess_loss", 26244), ("s_err", 243), ("w_err", 162)):
        top = Fraction(ev["limits"]["limits_at_largest_D"][q][1])
        assert top / norm <= Fraction(c["bounds"][q]) <= top / norm * (1 + Fraction(1, 10**10)), q
    assert Fraction(5, 9) / 26244 <= Fraction(c["bounds"]["excess_loss"]) < Fraction(5, 9) / 26244 * (1 + Fraction(1, 10**10))


@pytest.mark.slow
def test_a_saved_family_is_read_only_when_it_rechecks(family_path, tmp_path, monkeypatch):
    """A saved family file (named by VERIFY_FAMILY_FILE, as `verify check --family-file` does) is read when the
    independent re-checker verifies it: its records say so and replay with the re-checker. A tampered copy (the
    table's limit of ||S - S*|| cut to 1) or a file above the ci budget is not read: the profile's own family is,
    and the records say why."""
    from verify.certify import certificate_records as mod
    monkeypatch.setenv(mod.FAMILY_FILE_VARIABLE, str(family_path))
    ev = {r["use"]: r for r in mod.family_evidence("ci")}
    src = ev["upper"]["family_source"]
    assert src["kind"] == "saved" and src["rechecked"] is True and src["path"] == str(family_path)
    assert ev["upper"]["replay"] == f"python -m recheck {family_path}"
    data = json.loads(family_path.read_text())
    data["normalised_limits"]["s_err"][1] = "1"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    monkeypatch.setenv(mod.FAMILY_FILE_VARIABLE, str(bad))
    src = mod.family_evidence("ci")[0]["family_source"]
    assert src["kind"] == "own" and "did not re-check (limits" in src["note"], src
    monkeypatch.setenv(mod.FAMILY_FILE_VARIABLE, str(family_path))
    monkeypatch.setattr(mod, "RECHECK_CI_BYTES", 10)
    src = mod.family_evidence("ci")[0]["family_source"]
    assert src["kind"] == "own" and "was not re-checked within the ci profile's budget" in src["note"], src


@pytest.mark.slow
def test_the_certify_part_reports_the_family_with_its_limits_at_the_largest_D():
    """The certify part's family summary carries the normalised limits and the limits at the largest D (the ci
    family's D = 9), where the loss limit contains the hand value K N (D - K)/(4 D) = 4 * 1 * 5/36 = 5/9."""
    from fractions import Fraction

    from verify.certify.certify_part import family_summary
    data = family_summary("ci")["data"]
    at = data["limits_at_largest_D"]
    assert at["D"] == 9
    lo, hi = (Fraction(x) for x in at["excess_loss"])
    assert lo <= Fraction(5, 9) <= hi and hi - lo < Fraction(1, 10**6)


@pytest.mark.slow
def test_a_query_from_the_file_contains_the_certificate_and_a_60_digit_iteration(family, family_path):
    """The member D = 9, eta = 0.063 answered from the saved (compact) file: its bounds contain (here equal) the
    in-memory certificate's, and contain the 60-digit mpmath iteration of its reduced recursion at T0 + 500."""
    values = {"D": 9, "eta": Fraction(63, 1000)}
    T = int(family.cell_of(values)["T0"]) + 500
    from_file = load_family(family_path).bounds(values, [T])[0]
    in_memory = family.bounds(values, [T])[0]
    rec = iterate(SPEC.setting(values), T, "reduced", "mpmath", 60, checkpoints=[T]).records[-1]
    for q in QUANTITIES:
        (flo, fhi), (mlo, mhi) = (tuple(map(Fraction, b[q])) for b in (from_file, in_memory))
        v = Fraction(mpmath.nstr(getattr(rec, q), 55))
        assert flo <= mlo <= mhi <= fhi, q
        assert flo - abs(v) / 10**45 <= v <= fhi + abs(v) / 10**45, (q, float(v), from_file[q])


@pytest.mark.slow
def test_the_stored_hulls_are_doubles_on_the_initial_grids_u_edges(family_path):
    """Every stored hull is a pair of finite doubles lo <= hi; and the decoded rows are those doubles exactly,
    on the u-edges of the region's initial grid (verify.certify.region.initial_boxes)."""
    from verify.certify.region import Profile, initial_boxes
    from verify.certify.slabs import decode_slabs
    cell = json.loads(family_path.read_text())["cells"][0]
    v = _hulls(cell)
    reg = cell["region"]
    assert len(v) == 6 * cell["slabs"]["count"] and all(lo <= hi for lo, hi in zip(v[::2], v[1::2]))
    rows = decode_slabs(cell["slabs"], reg)
    assert [x for r in rows for x in r[2:]] == [Fraction(x) for x in v]
    prof = Profile.of_runs(reg["u0"], reg["ratio"], reg["shells"], reg["C_runs"])
    grid = sorted({(b.u_lo, b.u_hi) for b in initial_boxes(prof, reg["n_u"], reg["n_eps"])})
    assert [(r[0], r[1]) for r in rows] == grid


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(*[st.fractions(-10**6, 10**6)] * 2).map(sorted), min_size=3, max_size=3))
def test_encoded_hulls_contain_the_exact_ones_within_an_ulp(pairs):
    """Rounding outward to doubles: the decoded [lo, hi] contains the exact [lo, hi], each end within one ulp
    (2^-52 of its size, and 2^-1074 absolute) of it."""
    from verify.certify.slabs import decode_slabs, encode_slabs
    region = {"u0": "1/2", "ratio": "3/4", "shells": 0, "n_u": 1}
    row = (Fraction(0), Fraction(1, 2), *(x for p in pairs for x in p))
    got = decode_slabs(encode_slabs([row]), region)[0]
    assert got[:2] == row[:2]
    for k in range(2, 8, 2):
        (lo, hi), (glo, ghi) = row[k:k + 2], got[k:k + 2]
        assert glo <= lo and hi <= ghi
        assert lo - glo <= abs(lo) / 2**52 + Fraction(1, 2**1074) and ghi - hi <= abs(hi) / 2**52 + Fraction(1, 2**1074)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.fractions(1, 64), st.integers(1, 40)), min_size=1, max_size=5))
def test_C_runs_expand_back_with_the_checkers_code(pairs):
    """A profile's C(u) as stored (run-length [C, count]) reads back, by the re-checker's own expansion, as the
    values annulus by annulus; runs of equal neighbours merge; counts that do not add up to shells + 1 are
    refused on both sides."""
    from recheck.certificates import CheckFailed, expand_runs
    from verify.certify.region import Profile
    values = tuple(c for c, n in sorted(pairs, reverse=True) for _ in range(n))      # non-increasing inwards
    prof = Profile(Fraction(1, 2), Fraction(3, 4), values)
    runs = json.loads(json.dumps(prof.runs()))                                        # as a file holds them
    assert tuple(expand_runs(runs)) == values
    assert len(runs) == len(set(values)) and all(a[0] != b[0] for a, b in zip(runs, runs[1:]))
    assert Profile.of_runs("1/2", "3/4", len(values) - 1, runs) == prof
    with pytest.raises(ValueError):
        Profile.of_runs("1/2", "3/4", len(values), runs)
    with pytest.raises(CheckFailed):
        expand_runs([[runs[0][0], 0]])


@pytest.mark.slow
def test_a_version_1_or_garbled_family_file_is_refused_naming_it(family_path, tmp_path):
    """A version-1 file (slabs as decimal rows) and a file whose slabs are garbled are refused with one line
    naming --family, the file and what is wrong; nothing is answered."""
    data = json.loads(family_path.read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data | {"version": 1}))
    garbled, miscounted = tmp_path / "garbled.json", tmp_path / "miscounted.json"
    cell = next(c for c in data["cells"] if c["box"]["D"] == ["9", "9"])
    cell["slabs"]["hulls"] = cell["slabs"]["hulls"][:-12]           # refused when the query decodes it
    garbled.write_text(json.dumps(data))
    data["cells"][0]["slabs"]["count"] -= 1                         # refused when the file is read
    miscounted.write_text(json.dumps(data))
    for path, what in ((old, "version 1"), (garbled, "cell D9:"), (miscounted, f"cell {data['cells'][0]['path']}")):
        r = CliRunner().invoke(main, ["certify", "--family", str(path), "--query", "D=9,eta=0.063", "--json"])
        assert r.exit_code == 2 and "--family" in r.stderr and str(path) in r.stderr and what in r.stderr, r.stderr
        assert not r.stdout


def test_length_cells_cover_the_lengths_in_spans_and_the_reach_is_contiguous():
    """length_cells: consecutive, disjoint ranges of D covering 8..512, each spanning at most D_SPAN of its least
    D, every other range whole; complete_through: the lengths closed from the first on, by hand."""
    from verify.certify.family import D_SPAN, Cell, complete_through, length_cells
    cells = length_cells(Cell((("D", (8, 512)), ("eta", ETA))))
    spans = [c.bounds["D"] for c in cells]
    assert spans[0][0] == 8 and spans[-1][1] == 512
    assert all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:]))
    assert all(hi - lo <= lo * D_SPAN for lo, hi in spans) and all(c.bounds["eta"] == ETA for c in cells)
    done = [{"box": {"D": [str(a), str(b)]}} for a, b in ((8, 8), (9, 10), (12, 12))]
    assert complete_through(done, 8) == 10 and complete_through(done[1:], 8) is None
