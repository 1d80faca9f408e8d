"""The README tells the truth about the report: its numbers are generated from the committed example, read by key.

The findings and speed blocks of README.md are written by verify.report.readme from
reports/example/results.json and reports/example-bench/bench.json; a README edited by hand, or a report
regenerated without the README, fails here. Prose outside those blocks carries no measured number. The
generator reads a check's ``numbers[key]``, a statement by its id and a built-in part's saved field, never
a route label: the tests below build reports from synthetic saved parts whose values are written by hand.
"""
import json
import re
from pathlib import Path

import pytest

from verify.checks import Claimed, decided
from verify.evidence import Scope, Statement, headline, record
from verify.report import readme, write_report
from verify.run.atomic import write_json_atomic
from verify.report.numbers import MissingNumber, number

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "README.md").read_text(encoding="utf-8")
# Numbers the hand-written prose may contain: the paper's arXiv id and year, its equation and theorem
# numbers, exit statuses, and the worked decimal 0.07 = 7/100 of the exact-input remark.
ALLOWED = {"0", "1", "2", "3", "7", "100", "2026", "2603.22801", "3.1", "3.2", "3.3", "3.4"}

ALL = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all")
FEW = Scope(dims=("M=1 d=1 D=8 N=1 K=2",), sigma=("identity",), conventions=("reference",), horizon=400)
TH = {"value": 0.01, "why": "test"}


def test_generated_blocks_match_the_committed_report():
    now = readme.current_blocks(TEXT)
    want = readme.example_blocks()
    for name in readme.BLOCKS:
        assert now[name] is not None, f"README.md lost its {name} block"
        assert now[name] == want[name], f"README.md's {name} block is stale: run python -m verify.report.readme"


def test_the_example_report_was_generated_from_the_code_it_ships_with():
    """reports/example is the output of this tree's code: every saved part records the code version it ran with
    (verify.run.version.code_version: a hash of the sources of verify/ and lemmas/ and of the schemas), and each is
    the tree's. After any source change it fails until the example is regenerated (`verify all --profile ci --out
    reports/example`, then `python -m verify.report.readme`)."""
    from verify.run.version import code_version
    parts = sorted((ROOT / "reports" / "example" / "parts").glob("*.json"))
    assert parts, "reports/example has no saved parts"
    mine = code_version()
    stale = {p.name: v for p in parts for v in [json.loads(p.read_text(encoding="utf-8")).get("code_version")]
             if v != mine}
    assert not stale, (f"{len(stale)} of {len(parts)} parts of reports/example ran with another code version than "
                       f"this tree's {mine} (e.g. {next(iter(stale.items()))}): regenerate reports/example")


def test_prose_outside_the_blocks_quotes_no_measured_number():
    t = re.sub(r"```.*?```", "", TEXT, flags=re.S)
    t = re.sub(r"<!-- (\w+):begin.*?<!-- \1:end -->", "", t, flags=re.S)
    t = re.sub(r"`[^`]*`", "", t)
    t = re.sub(r"\]\([^)]*\)", "]", t)
    # numbers standing alone (not the 64 of "float64"), trailing punctuation dropped
    found = {m.rstrip(".,") for m in re.findall(r"(?<![A-Za-z_\d.])\d[\d.,]*", t)}
    assert found <= ALLOWED, f"numbers in README prose outside the generated blocks: {sorted(found - ALLOWED)}"


# ---- synthetic saved parts, every value written by hand ------------------------------------------------------
def proof(holds=True, scope=ALL):
    return record("exact proof", "symbolic", scope, "ok" if holds else "counterexample", holds,
                  replay=None if holds else "verify run --D 5 --K 0 --preset sts --steps 3 --json")


def numeric(route="float64 run", holds=True):
    return record(route, "float64", FEW, "ok", holds, threshold=TH)


def claimed(sid, role="claim", records=None, **kw):
    return decided(Claimed(sid, f"statement {sid}", role, (), ALL, **{k: v for k, v in kw.items()
                                                                     if k in ("about", "relation")}),
                   records or [proof()], why=kw.get("why"))


def check(cid, kind, statements, numbers=None):
    return {"id": cid, "kind": kind, "title": cid, "source": "test", "questions": [], "profile": "ci",
            "convention": {}, "statements": statements, "numbers": numbers or {}, "data": {}, "replay": "verify"}


QS = ("excess_loss", "s_err", "w_err")
THEOREM_NUMBERS = {
    "t_exponents": {"excess_loss": [-1.0167, 0.0296, -1.0045], "s_err": [-0.4896, 0.0058, -0.4926],
                    "w_err": [-0.5017, 0.0072, -0.4990]},
    "lower_constant_bounds": {q: {"bound": b, "D": 8, "K": 2} for q, b in zip(QS, (7.05e-05, 0.00957, 0.0268))},
    "leading_ratio": {"horizon": 396200, "excess_loss": 1.0016, "s_err": 0.9903, "w_err": 0.9972},
    "sweep_d_exponents": {"sts": {"excess_loss": 0.16, "s_err": 0.58, "w_err": 0.66},
                          "cnn": {"excess_loss": 1.16, "s_err": 1.08, "w_err": 0.66}},
    "d_exponents": {"excess_loss": {"D (N fixed)": "0", "D (N = D/K)": "1"},
                    "s_err": {"D (N fixed)": "1/2", "D (N = D/K)": "1"},
                    "w_err": {"D (N fixed)": "1/2", "D (N = D/K)": "1/2"}},
    "claimed_d_exponents": {"excess_loss": "4", "s_err": "5/2", "w_err": "2"},
    "leading_terms": {"excess_loss": "K*N*(D - K)/(4*D*T*eta)", "s_err": "S-TERM", "w_err": "W-TERM"},
    "tstar": {"exponent": 1.0345, "uncertainty": 0.0324, "over_D2": {"8": 61.9, "16": 32.4, "64": 8.35}},
    # the atlas gave no refuting ray here (holds None): the lower bound stays inconclusive
    "uniform_constant": {"holds": None, "ray": None, "bounds": None, "member": None, "replay_ratios": None,
                         "replay": None},
}


def claims() -> list:
    th = check("theorem-3.1", "claim", [
        claimed("theorem-3.1-upper", records=[record("all-time certificate", "arb", FEW, "ok", True, threshold=TH)]),
        claimed("theorem-3.1-lower", records=[record("D-exponents", "formal", ALL, "D^0 vs D^4", False,
                                                     replay="verify derive --asymptotics --json")]),
        claimed("theorem-3.1-lower-T", records=[record("lower certificate", "arb", FEW, "ok", True, threshold=TH)]),
        claimed("theorem-3.1-tstar", records=[numeric("onset against C D^2")]),
        claimed("theorem-3.1.onset-linear", "finding", [numeric("onset exponent")], about="theorem-3.1-tstar",
                relation="sharper")], THEOREM_NUMBERS)
    c2 = check("lemma-C.2", "claim", [claimed("lemma-C.2", records=[proof(), numeric("interpretation of C_1")])],
               {"alpha_overshoot": [1.3505, 1.4958], "outside_step_size": {"regime": "sigma = x + x^3/10, eta = 1/20",
                                                                           "t": 5, "alpha": -1.7734}})
    out = [th, c2] + [check(c, "claim", [claimed(c)]) for c in ("wp-zero", "two-level-attention")]
    out.append(check("theorem-3.2-ood", "claim", [claimed("theorem-3.2-ood", records=[numeric()])]))
    return out + [check(c, "claim", [claimed(c, "control", [proof(False, FEW)])])
                  for c in ("neg-alpha-le-1", "neg-loss-monotone-any-eta")]


def probes() -> list:
    edge = lambda p: [claimed(f"{p}.edge", "finding", [proof(False, FEW)], about="theorem-3.1-lower-T",  # noqa: E731
                              relation="outside")]
    nums = {"rates": {"cnn": {"excess_loss": {"fitted_exponent": -1.0031, "claimed_exponent": -1.0}},
                      "gcn": {"s_err": {"fitted_exponent": -0.4931, "claimed_exponent": -0.5}}, "D_scan": [1, 2],
                      "worst_tail_deviation": 0.0069},
            "tstar": {"A: K = 2": {"fit": {"exponent_t_cross": 1.0297}},
                      "B: K = D/2": {"fit": {"local_exponent_t_cross_last_pair": 1.9324}}},
            "large-eta": {"boundaries": {"derived_near_optimum_2K_over_N": 4.0,
                                         "convergence": {"1000": [4.4282, 4.4302], "10000": [4.1089, 4.1109]}}},
            "full-attention": {"x_block_peak": {"sts": {"n": 2, "mean": 0.4997}},
                               "x_block": {"sts": {"n": 2, "mean": 0.0037}}}}
    out = [check(p, "probe", edge(p)) for p in ("d-eq-k", "k-zero")]
    return out + [check(p, "probe", [claimed(f"{p}.finding", "finding", [numeric()])], nums.get(p))
                  for p in ("rates", "tstar", "large-eta", "full-attention", "non-gaussian", "nonuniform-s",
                            "p-scale", "finite-sample")]


def builtins() -> dict:
    derive = headline([Statement(f"sigma = {s}: the reduction is exact", Scope(dims="all", sigma=(s,)),
                                 [proof(s != "relu", Scope(dims="all", sigma=(s,)))]) for s in ("identity", "erf", "relu")]) | {
        "asymptotics": {"cubic_coefficient_c": "D*eta*vnorm**2/(K*(D - K)**2)"}, "reduction": {}}
    cert = headline([Statement("certified bounds", FEW, [record("certificate", "arb", FEW, "ok", True, threshold=TH)])]) | {
        "finding": "certified", "certificate": {"T0": 39728, "constants": {"excess_loss": {"c_lo": "55.58", "c_hi": "80.36",
                                                                                         "statement": "s"}},
                                                "asymptotic": {"excess_loss": {"liminf_ge": "59.9999999999",
                                                                               "limsup_le": "60.0000000001"}}},
        "relative_width_at_1e12": {"excess_loss": 5.7e-5, "s_err": 2.8e-5, "w_err": 2.86e-5}}
    # the reconciliation over the widened family (verify.reconcile), in the shape its part saves
    recon = headline([Statement("the rates, T* as stated and every condition hold together", ALL, [proof(True)]),
                      Statement("read as D^2/(eta ||V*||^2) they cannot", ALL, [proof(False)], "further")]) | {
        "family": {"label": "every convention a power of D"},
        "readings": [{"id": "as-stated", "text": "T* ~ D² as stated", "systems": [
            {"id": "rates", "text": "the rates", "feasible": True, "dimension": 5, "status": "family",
             "general": {"tstar_exponent": "4 - t_vstar2"}, "witness": {"text": "N ∝ D^1", "tstar_exponent": "4"}},
            {"id": "rates+tstar+conditions", "text": "the rates, T* and every condition", "feasible": True,
             "status": "family", "witness": {"text": "N ∝ D^1, ‖V*‖_F² ∝ D^2", "tstar_exponent": "2"}}]},
            {"id": "with-eta-and-vnorm", "text": "T* ~ D²/(η ‖V*‖_F²)", "systems": [
                {"id": "rates+tstar+conditions", "text": "the rates, T* and every condition", "feasible": False,
                 "status": "empty", "certificate": {"sum": "0 = -1"}}]}],
        "representative": {"text": "N ∝ D^1, ‖V*‖_F² ∝ D^2", "combinations_text": "η_KQ λ² β² ∝ η D^-3",
                           "d_exponents": {"excess_loss": "4", "s_err": "3/2", "w_err": "2"},
                           "numerics": {"fits": {"excess_loss": {"exponent": 4.002, "error": 0.01, "raw_exponent": 4.176},
                                                 "s_err": {"exponent": 1.483, "error": 0.042, "raw_exponent": 1.57}}}},
        "reference": {"d_exponents": {"excess_loss": "0", "s_err": "1/2", "w_err": "1/2", "tstar": "1"}},
        "verdicts": {"rates_tstar_conditions": {}, "with-eta-and-vnorm:rates_tstar_conditions": {}}}
    fuzz = {c: {"claim": c, "examples": 5, "falsified": c.startswith("neg"), "counterexample": None, "replay": "verify fuzz",
                "evidence": [record(f"fuzz {c}", "float64", FEW, "x", not c.startswith("neg"), threshold=TH,
                                    replay="verify run" if c.startswith("neg") else None,
                                    replay_check={"horizon": 4000, "holds": False} if c.startswith("neg") else None)]}
            for c in ("lemma-C.2", "neg-alpha-le-1")}
    return {"derive": derive, "certify": cert, "reconcile": recon, **{f"fuzz:{c}": v for c, v in fuzz.items()}}


def saved_parts(pdir: Path) -> None:
    recs = [(f"{c['kind']}:{c['id']}", c["kind"], c["id"], c) for c in claims() + probes()]
    recs += [(name, name.split(":")[0], name.partition(":")[2], res) for name, res in builtins().items()]
    for name, kind, arg, res in recs:
        write_json_atomic(pdir / (name.replace(":", "--") + ".json"),
                          {"part": name, "kind": kind, "arg": arg, "options": {}, "status": "ok", "seconds": 1.0,
                           "finished": "2026-01-01T00:00:00Z", "error": None, "result": res})


@pytest.fixture
def results(tmp_path, monkeypatch):
    import verify.report
    monkeypatch.setattr(verify.report, "make_figures", lambda records: ([], []))   # the README quotes no figure
    saved_parts(tmp_path / "p")
    return write_report(tmp_path / "rep", tmp_path / "p", wall_seconds=135.2)


def rebuilt(tmp_path, edit) -> dict:
    """The report of the synthetic parts after ``edit(saved record)`` on each of them."""
    pdir = tmp_path / "edited"
    saved_parts(pdir)
    for f in pdir.glob("*.json"):
        rec = json.loads(f.read_text())
        edit(rec)
        f.write_text(json.dumps(rec))
    return write_report(tmp_path / "rep2", pdir, wall_seconds=135.2)


def test_findings_quote_the_report_by_key(results):
    """Every number below was written by hand into the synthetic parts; the D-drops are claimed minus derived
    exponents (4 - 0, 5/2 - 1/2, 2 - 1/2 with N fixed)."""
    text = readme.findings(results)
    assert readme.missing(results) == [] and "not in this report" not in text
    # by hand: lemma-C.2, wp-zero, two-level-attention proved (proofs over every size); upper, lower-T supported
    # (Arb records at one size, t <= 400, of statements for every size: a finite part); tstar, ood supported
    # (numerics); lower inconclusive (a formal record alone never refutes); both controls refuted
    assert ("**The paper's claims**, part by part: 8 statements, 3 proved, 4 supported, 0 refuted, 1 inconclusive "
            "(3 established over the whole statement, 2 on a finite part only); negative controls: 2, 2 refuted") in text
    assert "upper bound: *supported*; lower bound with D-uniform constants: *inconclusive*" in text
    assert "T-rate of the lower bound: *supported*; sufficient time T* = O(D²): *supported*" in text
    assert "at most 7.05e-05 for L − L_opt, 0.00957 for ‖S − S*‖_F, 0.0268 for ‖W_X − V*‖_F at D = 8, K = 2" in text
    assert "D^-4, D^-2, D^(-3/2) with N fixed; D^-3, D^(-3/2), D^(-3/2) with N = D/K" in text
    assert "T*/D² = 8.35…61.9 over D = 8…64" in text
    assert "statement theorem-3.1.onset-linear (*supported*; onset exponent 1.03 ± 0.03)." in text
    assert "-1.017 ± 0.030 for L − L_opt (claimed -1)" in text and "-0.490 ± 0.006 for ‖S − S*‖_F (claimed -1/2)" in text
    assert "within 0.0069 of the claimed exponents" in text                  # the probe's worst_tail_deviation, = max(|-1.0031+1|, |-0.4931+0.5|)
    assert "1.002, 0.990, 0.997 at T = 396200" in text
    assert "α rises to 1.35–1.5" in text and "sigma = x + x^3/10, eta = 1/20: α(5) = -1.77" in text
    assert "55.58 ≤ ηT·(L − L_opt) ≤ 80.36" in text and "T0 = 39728" in text and "2.9·10⁻⁵" in text
    assert "the claimed rates hold on a 5-dimensional family of conventions, where T* grows like D^(4 - t_vstar2)" in text
    # the reconciliation's verdict says it rests on the formal slow-manifold expansion
    assert ("the rates, T* and every condition hold together (*proved*, for the leading terms of the formal "
            "slow-manifold expansion, which it assumes) at, for example, N ∝ D^1, ‖V*‖_F² ∝ D^2") in text
    assert "4.002 ± 0.010, 1.483 ± 0.042 after dividing out the finite-D factors (raw fits 4.18, 1.57" in text
    assert "Read as T* ~ D²/(η ‖V*‖_F²), they cannot (certificate: 0 = -1) (*refuted*)" in text
    assert "grows like D^1.03 at fixed K and like D^1.93" in text and "η < 2K/N = 4 (bisected boundary ≤ 4.43)" in text
    assert "peaks at 0.5 and ends at 0.0037" in text
    assert "neg-alpha-le-1 *refuted*, neg-loss-monotone-any-eta *refuted*" in text
    assert "fuzzing (2 searches inside the claims' hypotheses: neg-alpha-le-1 refuted; the rest supported)" in text
    assert "*proved* for σ ∈ {identity, erf} in every dimension" in text
    assert "For σ ∈ {relu} it is *refuted*: W_P leaves 0 unless frozen (σ not odd)." in text
    assert "The ci profile ran in 135 s" in text


def test_renaming_a_route_label_changes_no_number(results, tmp_path, monkeypatch):
    """The generator reads numbers by key: every evidence route relabelled, the findings are the same."""
    import verify.report
    monkeypatch.setattr(verify.report, "make_figures", lambda records: ([], []))

    def relabel(rec):
        for st in rec["result"].get("statements") or []:
            for e in st.get("evidence") or []:
                e["route"] = "renamed: " + e["route"][::-1]
        for e in rec["result"].get("evidence") or []:
            e["route"] = "renamed"
    again = rebuilt(tmp_path, relabel)
    assert readme.findings(again) == readme.findings(results)


def test_a_changed_report_number_changes_the_readme(results):
    before = readme.findings(results)
    th = next(c for c in results["claims"] if c["id"] == "theorem-3.1")
    th["numbers"]["tstar"]["exponent"] += 0.5
    assert readme.findings(results) != before and "onset exponent 1.53 ± 0.03" in readme.findings(results)


def test_a_refuting_atlas_ray_is_quoted(results):
    th = next(c for c in results["claims"] if c["id"] == "theorem-3.1")
    th["numbers"]["uniform_constant"] = {"holds": False, "ray": {"rho": "1/16", "x": "1/64", "kappa": "1/4"},
                                         "member": {"D": 1048576}, "replay_ratios": dict(zip(QS, (1.9e-25, 6.2e-13,
                                                                                                  6.2e-10)))}
    text = readme.findings(results)
    assert ("over every D of the atlas's certified ray K = 1/16 D, lim sup of q/f_q is certified below a bound that "
            "tends to 0 as D grows, so no D-uniform constant exists (one member replayed, D = 1048576: certified q/f_q "
            "at T = 10¹² of 1.9e-25, 6.2e-13, 6.2e-10)") in text


def test_a_number_missing_from_the_report_is_named_never_zero(results):
    c2 = next(c for c in results["claims"] if c["id"] == "lemma-C.2")
    del c2["numbers"]["alpha_overshoot"]
    with pytest.raises(MissingNumber, match="alpha_overshoot"):
        number(results, "claim", "lemma-C.2", "alpha_overshoot")
    text = readme.findings(results)
    assert "[not in this report: claim lemma-C.2: numbers['alpha_overshoot']]" in text
    assert readme.missing(results) == ["claim lemma-C.2: numbers['alpha_overshoot']"]
    assert "α(5) = -1.77" in text                          # the rest of the bullet is still written
    results["reconcile"] = None                            # a bullet that cannot be written keeps its title
    assert "- **Which convention?**: [not in this report: reconcile: the part did not run]" in readme.findings(results)


def test_an_edge_refutation_leaves_the_paper_claims_unrefuted(results):
    """The only refutations besides the controls are the edge probes (K = 0, K = D) and the toolkit's
    reconciliation: the README's count of the paper's claims says 0 refuted."""
    text = readme.findings(results)
    rule = text.splitlines()[0]
    assert "0 refuted" in rule.split("negative controls")[0]
    # d-eq-k and k-zero (outside the hypotheses), reconcile's headline, derive's relu row, fuzzing a control
    assert results["summary"]["roles"]["finding"]["refuted"] == 5
    assert "**Outside the hypotheses** (the toolkit's findings, never counted against the paper): **D = K** (Q3, *refuted*)" in text


def test_ci_runs_the_readmes_test_command_verbatim():
    """.ci/run's command line is the README's second set-up command, character for character, so a green CI means
    the documented command works on a fresh machine (apt for Coq and Chromium included)."""
    blocks = re.findall(r"```\n(.*?)\n```", TEXT.split("## Set-up", 1)[1].split("\n## ", 1)[0], flags=re.S)
    assert len(blocks) == 2, blocks
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert blocks[1] in script, (blocks[1], script)
    assert "apt-get install" in blocks[1] and "coq" in blocks[1] and "pytest" in blocks[1]
