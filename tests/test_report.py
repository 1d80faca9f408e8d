"""The report folder: files, schema, self-contained HTML, atomic folder swaps; the report opens with the paper's
claims part by part, counts the verdicts of the paper's claims, the negative controls and the toolkit's findings
apart, and derives every verdict again from the saved evidence records (never copied from a saved "verdict").

Part records here are small fakes with the shapes the real parts save: claims and probes as
verify.checks.CheckResult.as_dict (statements made with verify.checks.decided), the built-in parts as
verify.evidence.headline dicts, their evidence made with verify.evidence.record. The real parts are exercised
in tests/test_all.py and tests/test_docs.py.
"""
from __future__ import annotations

import base64
import html
import html.parser
import json
import re
from pathlib import Path

import jsonschema
import pytest

from verify.checks import Claimed, decided
from verify.evidence import Scope, Statement, headline, record
from verify.model.paper import QUESTIONS, RESULTS
from verify.report import schema, validate, write_report
from verify.run.atomic import WORK, new_folder, recover_folder, swap_folder, write_json_atomic
from verify.report.questions import answers, named_questions
from verify.report.statements import short_scope
from conftest import holds_values

EVERY = Scope(dims="all", sigma=("identity",), conventions=("reference",), horizon="all")
SMALL = Scope(dims=("M=1 d=1 D=8 N=1 K=2",), sigma=("identity",), conventions=("reference",), horizon=1000)
K0 = Scope(dims=("K=0",), sigma=("identity",), conventions=("reference",), horizon="all")
MANY = Scope(dims=tuple(f"M=1 d=1 D={d} N=1 K=2" for d in (8, 16, 32, 64, 128)), sigma=("identity",),
             conventions=("reference",), horizon=5000)
TH = {"value": 0.02, "why": "test threshold"}
T = [1, 10, 100, 1000, 10000]


def _rec(part, kind, arg="", result=None, status="ok", error=None, seconds=0.5):
    return {"part": part, "kind": kind, "arg": arg, "options": {"part": part, "profile": "ci"}, "status": status,
            "seconds": seconds, "finished": "2026-01-01T00:00:00Z", "error": error, "result": result}


def check(cid, kind, statements, numbers=None, questions=(), **extra):
    """A saved claim or probe (verify.checks.CheckResult.as_dict)."""
    return {"id": cid, "kind": kind, "title": f"{cid} (test)", "source": "test", "questions": list(questions),
            "profile": "ci", "convention": {"seed": 3}, "statements": statements, "numbers": numbers or {},
            "data": {}, "replay": f"verify check {cid} --json"} | extra


def proof(scope=EVERY, holds=True):
    return record("exact proof", "symbolic", scope, "identity" if holds else "counterexample", holds,
                  replay=None if holds else "verify run --D 5 --K 0 --preset sts --steps 3 --json")


def theorem_3_1() -> dict:
    formal_false = record("D-exponents of the leading terms", "formal", EVERY, "D^0 vs claimed D^4", False,
                          replay="verify derive --asymptotics --json")
    sts = [decided(Claimed("theorem-3.1-upper", "L - L_opt <= c_hi D**4*K/(T*eta), ||S - S*||_F <= ...", "claim", (), EVERY),
                   [record("all-time certificate: upper rate", "arb", SMALL, "ok", True, threshold=TH)]),
           decided(Claimed("theorem-3.1-lower", "q >= c_lo f_q, c_lo uniform in D", "claim", (), EVERY), [formal_false],
                   why="a hidden constant is not refuted by finitely many sizes", corrected="q ~ the leading terms"),
           decided(Claimed("theorem-3.1-tstar", "T* <= C D^2", "claim", (), EVERY),
                   [record("onset against C D^2", "float64", MANY, "exponent 1.03", True, threshold=TH)]),
           decided(Claimed("theorem-3.1.onset-linear", "the onset grows like K D/(2 eta ||V*||^2)", "finding", (), EVERY,
                           about="theorem-3.1-tstar", relation="sharper"),
                   [record("onset exponent", "float64", MANY, "1.03", True, threshold=TH)])]
    return check("theorem-3.1", "claim", sts, questions=(1, 6, 9),
                 numbers={"t_exponents": {"excess_loss": [-1.01, 0.01, -1.0]}, "tstar": {"exponent": 1.03}})


def k_zero() -> dict:
    """A probe in the shape of a check: an edge regime outside Theorem 3.1's hypotheses (K = 0), refuted there."""
    edge = decided(Claimed("k-zero.parameters", "at K = 0 the parameter errors never decrease", "finding", (), K0,
                           about="theorem-3.1-lower-T", relation="outside"), [proof(K0, False)])
    loss = decided(Claimed("k-zero.loss", "at K = 0 the loss is optimal from step 0", "finding", (), K0,
                           about=None, relation="answers"), [proof(K0)])
    return check("k-zero", "probe", [edge, loss], questions=(4,), question="Q4", regimes=[{"label": "K=0"}],
                 findings=["S stays uniform"], classification={"loss": "exact-from-start"},
                 fits={}, numbers={"sts K=0 D=5": {"max_loss": 0.0}})


def rates_old_shape() -> dict:
    """A probe as probes save it before they are checks (verify.evidence.headline, roles primary/further)."""
    return headline([Statement("Theorem 3.1's T-exponents", SMALL, [record("tail fit", "float64", SMALL, "-1.00", True,
                                                                           threshold=TH)]),
                     Statement("Theorem 3.1's D-dependence", EVERY, [proof(EVERY, False)], role="further")]) | {
        "probe": "rates", "question": "Q6", "questions": [6], "regimes": [], "findings": ["slopes -1, -1/2"],
        "classification": {"loss": "power:-1"}, "replay": "verify probe rates --json"}


def fake_records() -> list[dict]:
    c2 = check("lemma-C.2", "claim", [decided(Claimed("lemma-C.2", "rows of W_V are positive multiples of V*", "claim",
                                                      (), EVERY), [proof()])])
    control = check("neg-alpha-le-1", "claim", [decided(Claimed("neg-alpha-le-1", "alpha <= 1", "control", (), EVERY),
                                                        [proof(SMALL, False)])])
    conv = headline([Statement("tail slopes", SMALL, [record("fit", "float64", SMALL, "ok", True, threshold=TH)])]) | {
        "finding": "slopes -1, -1/2, -1/2", "steps": T, "regime": {"D": 16},
        "series": {q: [1.0 / t for t in T] for q in ("excess_loss", "s_err", "w_err")},
        "alpha": [[1.0, 1.0] for _ in T], "support_mass": [[0.5] for _ in T],
        "quantities": {q: {"fitted_slope": -1.0, "claimed_slope": -1.0, "fit_range": [1000, 10000],
                           "leading_term": "1/T", "claimed_order": "1/T", "ratio_to_leading_term_at_T": 1.0,
                           "leading_term_values": [1.0 / t for t in T]} for q in ("excess_loss", "s_err", "w_err")},
        "replay": "verify run ..."}
    probe = k_zero() | {"data": {"K=0": {"step": T, "loss": [0.0] * 5, "s_err": [1.0] * 5, "w_err": [2.0] * 5}}}
    fuzz = {"claim": "lemma-C.2", "verdict": "supported", "examples": 25, "falsified": False, "counterexample": None,
            "replay": "verify fuzz", "evidence": [record("fuzz lemma-C.2", "float64", SMALL, "25 regimes", True,
                                                         threshold=TH)]}
    return [_rec("convergence", "convergence", result=conv),
            _rec("claim:lemma-C.2", "claim", "lemma-C.2", c2),
            _rec("claim:neg-alpha-le-1", "claim", "neg-alpha-le-1", control),
            _rec("claim:theorem-3.1", "claim", "theorem-3.1", theorem_3_1()),
            _rec("probe:k-zero", "probe", "k-zero", probe),
            _rec("probe:rates", "probe", "rates", rates_old_shape()),
            _rec("probe:broken", "probe", "broken", status="failed", error="ValueError: boom\ntraceback"),
            _rec("fuzz:lemma-C.2", "fuzz", "lemma-C.2", fuzz)]


def save(pdir: Path, records):
    for r in records:
        write_json_atomic(pdir / (r["part"].replace(":", "--") + ".json"), r)


class LinkParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.srcs = set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        if tag in ("img", "script", "link") and ("src" in a or "href" in a):
            self.srcs.append(a.get("src") or a.get("href"))


def check_html(folder: Path) -> LinkParser:
    """Every image is an embedded PNG; every link is an in-page anchor or a file of the folder."""
    p = LinkParser()
    p.feed((folder / "index.html").read_text())
    for src in p.srcs:
        assert src.startswith("data:image/png;base64,"), src
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    for href in p.hrefs:
        if href.startswith("#"):
            assert href[1:] in p.ids, f"dangling anchor {href}"
        else:
            assert "://" not in href, f"external link {href}"
            assert (folder / href).is_file(), f"missing file {href}"
    return p


def section(folder: Path, heading: str) -> str:
    """The Markdown of one '## heading' section of index.md."""
    return (folder / "index.md").read_text().split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def table_rows(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("|---")][1:]


def question_rows(folder: Path) -> list[str]:
    return table_rows(section(folder, "Reviewer questions"))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One report of the fakes, with figures, read by the tests that do not write."""
    tmp = tmp_path_factory.mktemp("report")
    save(tmp / "p", fake_records())
    return tmp / "rep", write_report(tmp / "rep", tmp / "p", profile="ci", wall_seconds=3.0)


@pytest.fixture
def no_figures(monkeypatch):
    """Reports whose figures do not matter to the test are written without drawing them (seconds each)."""
    import verify.report
    monkeypatch.setattr(verify.report, "make_figures", lambda records: ([], []))


@pytest.mark.slow
def test_report_folder_from_saved_parts(report):
    out, res = report
    for f in ("index.md", "index.html", "results.json", "figures/convergence.png", "figures/alpha.png"):
        assert (out / f).is_file(), f
    saved = json.loads((out / "results.json").read_text())
    validate(saved)
    assert len(saved["questions"]) == 12 and len(question_rows(out)) == 12
    q = {r["number"]: r for r in saved["questions"]}
    assert [r["question"] for r in saved["questions"]] == [x.text for x in QUESTIONS]
    assert q[4]["verdict"] == "refuted" and q[4]["evidence"][0]["part"] == "probe:k-zero"
    assert q[4]["role"] == "finding outside the hypotheses of theorem-3.1-lower-T"
    assert q[2]["verdict"] == "proved" and q[2]["role"] == "the paper's claim"
    assert q[9]["verdict"] == "supported" and q[9]["statement"] == "T* <= C D^2"   # the primary's named statement
    assert q[10]["verdict"] == "not checked"                   # nothing answers it: said so
    parts = {p["name"]: p for p in saved["parts"]}
    assert parts["probe:broken"]["status"] == "failed" and parts["probe:broken"]["verdict"] == "not checked"
    assert saved["provenance"]["seeds"]["claim:lemma-C.2"]["seed"] == 3
    p = check_html(out)
    assert len(p.srcs) == len(res["figures"])
    assert "#part-probe-broken" in p.hrefs or "part-probe-broken" in p.ids
    found = list(holds_values(saved))
    assert found and all(v is None or isinstance(v, bool) for _, v in found)


@pytest.mark.slow
def test_verdicts_are_counted_per_role(report):
    """The paper's claims, the negative controls and the toolkit's findings are counted apart, from the
    statements themselves (a hand count of the fakes above)."""
    out, res = report
    roles = res["summary"]["roles"]
    # by hand: lemma-C.2 proved (a proof over EVERY); theorem-3.1-upper supported (an Arb record at one size, t <= 1000,
    # of a statement for every size and t: a finite part); tstar supported (numerics); lower inconclusive (formal)
    assert roles["claim"] == {"proved": 1, "inconclusive": 1, "supported": 2}
    assert res["summary"]["extents"]["claim"] == {"whole": 1, "part": 1}
    assert roles["control"] == {"refuted": 1}
    # findings: onset-linear, k-zero's two, the rates probe's two (old shape), convergence, fuzz
    assert roles["finding"] == {"supported": 4, "refuted": 2, "proved": 1}
    head = (out / "index.md").read_text().split("## ", 1)[0]
    assert ("**The paper's claims**: 4 statements, 1 proved, 2 supported, 0 refuted, 1 inconclusive; 1 established over "
            "the whole statement, 1 on a finite part only") in head
    # the first sentence, before any table: what holds, what fails (by hand from the four parts above)
    first = head.split("# verify: report", 1)[1].strip().split("\n\n", 1)[0]
    assert first == ("In short: of the paper's 4 claim parts, 1 is established over the whole statement (`lemma-C.2`), "
                     "1 is established only on a finite part of what it quantifies over, so supported "
                     "(`theorem-3.1-upper`), 1 rests on numerics or a formal expansion alone (`theorem-3.1-tstar`), "
                     "none is refuted and 1 is undecided (`theorem-3.1-lower`).")


def test_an_edge_refutation_is_never_a_refuted_paper_claim(tmp_path, no_figures):
    """K = 0 is outside Theorem 3.1's hypotheses: its refutation is the toolkit's finding, listed among the
    regimes outside the hypotheses; the paper's claims show zero refutations (the part count still sees a
    refuted part: the old headline "N refuted" counted parts)."""
    recs = [r for r in fake_records() if r["part"] not in ("probe:rates", "claim:neg-alpha-le-1")]
    save(tmp_path / "p", recs)
    res = write_report(tmp_path / "rep", tmp_path / "p")
    assert res["summary"]["verdicts"]["refuted"] == 1                  # the k-zero part's headline
    assert "refuted" not in res["summary"]["roles"]["claim"] and res["summary"]["roles"]["finding"]["refuted"] == 1
    claims = section(tmp_path / "rep", "The paper's claims, part by part")
    assert "0 refuted" in claims and "| refuted |" not in claims
    outside = (tmp_path / "rep" / "index.md").read_text().split("### Outside the claims' hypotheses", 1)[1]
    outside = outside.split("\n### ", 1)[0]
    row = next(r for r in table_rows(outside) if "k-zero.parameters" in r)
    assert "| outside the hypotheses of theorem-3.1-lower-T | refuted |" in row


@pytest.mark.slow
def test_the_first_table_holds_only_the_paper_claims_grouped_by_result(report):
    out, res = report
    claim_ids = {st["id"] for st in res["statements"] if st["role"] == "claim"}
    md = (out / "index.md").read_text()
    first = md.split("\n## ", 2)[1]               # the first section after the header
    assert first.startswith("The paper's claims, part by part")
    rows = table_rows(first)
    ids = [re.search(r"`([^`]+)`", r).group(1) for r in rows]
    assert sorted(ids) == sorted(claim_ids) and len(ids) == 4
    groups = [r.split(" | ")[0].strip("| ") for r in rows]
    order = [r.name for r in RESULTS]
    named = [g for g in groups if g]
    assert named == sorted(named, key=order.index) == ["Lemma C.2", "Theorem 3.1"]
    # cells are plain text: the powers of SymPy's strings stay powers (no emphasis, no bold), '|' stays in its cell
    upper = next(r for r in rows if "`theorem-3.1-upper`" in r)
    assert r"D\*\*4\*K/(T\*eta), \|\|S - S\*\|\|_F" in upper
    assert "L - L_opt &lt;= c_hi D**4*K/(T*eta), ||S - S*||_F" in (out / "index.html").read_text()
    lower = next(r for r in rows if "`theorem-3.1-lower`" in r)
    assert "| inconclusive | a hidden constant is not refuted by finitely many sizes |" in lower
    assert lower.rstrip(" |").endswith("q ~ the leading terms")            # the corrected statement


def test_statements_are_decided_again_from_records(tmp_path, no_figures):
    """A saved verdict is never copied: a statement saved "proved" on float64 records reads "supported", flagged
    (saved_verdict, reason) with the rule's reason as its why; no records give inconclusive; a numeric
    refutation needs a replay at a longer horizon."""
    recs = fake_records()
    c2 = recs[1]["result"]["statements"][0]
    c2 |= {"evidence": [record("float64 run", "float64", SMALL, "ok", True, threshold=TH)], "why": "a proof"}
    unreplayed = record("run", "float64", SMALL, "alpha < 0", False, threshold=TH, replay="verify run x")
    recs.append(_rec("claim:wp-zero", "claim", "wp-zero", check("wp-zero", "claim", [
        decided(Claimed("wp-zero", "W_P stays 0", "claim", (), EVERY), [unreplayed]) | {"verdict": "refuted"}])))
    recs.append(_rec("claim:theorem-3.2-ood", "claim", "theorem-3.2-ood", check("theorem-3.2-ood", "claim", [
        {"id": "theorem-3.2-ood", "text": "s", "role": "claim", "verdict": "proved"}])))
    save(tmp_path / "p", recs)
    res = write_report(tmp_path / "rep", tmp_path / "p")
    st = {s["id"]: s for s in res["statements"]}
    assert st["lemma-C.2"]["verdict"] == "supported" and st["lemma-C.2"]["saved_verdict"] == "proved"
    assert "the part saved 'proved'" in st["lemma-C.2"]["reason"] and st["lemma-C.2"]["why"] == st["lemma-C.2"]["reason"]
    assert st["lemma-C.2"]["scope_label"].startswith("checked at dimensions {M=1 d=1 D=8 N=1 K=2}")
    assert st["wp-zero"]["verdict"] == "inconclusive"                     # no replay at a longer horizon
    assert st["theorem-3.2-ood"]["verdict"] == "inconclusive" and st["theorem-3.2-ood"]["scope_label"] == "no evidence records"
    assert "saved_verdict" not in st["theorem-3.1-upper"]
    claims = {c["id"]: c for c in res["claims"]}
    assert claims["lemma-C.2"]["statements"][0]["verdict"] == "supported"
    assert claims["lemma-C.2"]["statements"][0]["evidence"][0]["route"] == "float64 run"
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "verdict **supported** (checked at dimensions {M=1 d=1 D=8 N=1 K=2}" in md


@pytest.mark.slow
def test_long_scopes_are_folded_with_the_details_one_click_away(report):
    out, res = report
    tstar = next(s for s in res["statements"] if s["id"] == "theorem-3.1-tstar")
    assert tstar["scope_label"] == MANY.label() and tstar["short_scope"] == MANY.short_label()
    assert tstar["short_scope"].startswith("5 sizes") and len(tstar["short_scope"]) < len(tstar["scope_label"]) / 2
    row = next(r for r in table_rows(section(out, "The paper's claims, part by part")) if "theorem-3.1-tstar" in r)
    assert f"[{tstar['short_scope']}](#part-claim-theorem-3-1)" in row and "D=128" not in row
    assert "D=128" in section(out, "Parts")                                  # the full scope, in the part's section
    page = (out / "index.html").read_text()
    assert f"<details><summary>{html.escape(tstar['short_scope'])}</summary>" in page and "M=1 d=1 D=128 N=1 K=2" in page


def test_short_scope_reads_a_union_of_record_labels():
    a = record("a", "float64", SMALL, "ok", True, threshold=TH)
    b = record("b", "float64", MANY, "ok", True, threshold=TH)
    union = SMALL.label() + "; " + MANY.label()
    assert short_scope([a, b], union, EVERY) == SMALL.short_label() + "; " + MANY.short_label()
    assert short_scope([a, b], EVERY.label(), EVERY) == EVERY.short_label()
    assert short_scope([a], "something else", EVERY) == "something else"   # not read back: shown whole


def test_each_figure_caption_appears_once_in_index_md(report):
    out, res = report
    md = (out / "index.md").read_text()
    assert res["figures"]
    for f in res["figures"]:
        assert md.count(f["caption"]) == 1, f["file"]
        assert f"]({f['file']})" in md


def test_a_failed_claim_part_leaves_not_checked_rows(tmp_path, no_figures):
    """The statements a claim would have judged are listed from its registry, "not checked", and counted."""
    recs = fake_records()
    recs[3] = _rec("claim:theorem-3.1", "claim", "theorem-3.1", status="timeout", error="time limit")
    save(tmp_path / "p", recs)
    res = write_report(tmp_path / "rep", tmp_path / "p")
    from lemmas import CLAIMS
    want = [st.id for st in CLAIMS["theorem-3.1"].statements]
    got = [s for s in res["statements"] if s["part"] == "claim:theorem-3.1"]
    assert [s["id"] for s in got] == want and {s["verdict"] for s in got} == {"not checked"}
    assert res["summary"]["roles"]["claim"]["not checked"] == sum(st.role == "claim" for st in CLAIMS["theorem-3.1"].statements)
    assert "not checked" in section(tmp_path / "rep", "The paper's claims, part by part")


@pytest.mark.slow
def test_a_figure_that_fails_is_reported(tmp_path, monkeypatch):
    from verify.report import figures

    def broken(name, res):
        raise ValueError(f"cannot draw {name}")
    monkeypatch.setattr(figures, "probe_figure", broken)
    save(tmp_path / "p", fake_records())
    res = write_report(tmp_path / "rep", tmp_path / "p")
    errs = {e["source"]: e for e in res["figure_errors"]}
    assert "probe:k-zero" in errs and "cannot draw k-zero" in errs["probe:k-zero"]["error"]
    assert not any(f["source"] == "probe:k-zero" for f in res["figures"])
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "figure(s) failed to draw" in md and "cannot draw k-zero" in md
    check_html(tmp_path / "rep")


def test_a_figure_drawn_by_its_part_is_taken_from_the_record(tmp_path, monkeypatch):
    """A record that carries its figures (drawn in the part's own process, verify.report.part_figures) is not drawn
    again: with the drawing broken afterwards, the report still holds the figure, byte for byte the PNG decoded
    from the record, and the report's copy of the record leaves the PNG out."""
    import base64
    from verify.report import figures, part_figures
    recs = fake_records()
    conv = next(r for r in recs if r["part"] == "convergence")
    conv["figures"] = part_figures(conv)
    png = base64.b64decode(conv["figures"]["figures/convergence.png"]["png_base64"])
    assert png.startswith(b"\x89PNG")

    def broken(res):
        raise ValueError("cannot draw convergence")
    monkeypatch.setattr(figures, "convergence", broken)
    save(tmp_path / "p", recs)
    res = write_report(tmp_path / "rep", tmp_path / "p")
    assert not any(e["file"] == "figures/convergence.png" for e in res["figure_errors"])
    assert (tmp_path / "rep" / "figures" / "convergence.png").read_bytes() == png
    assert "figures" not in json.loads((tmp_path / "rep" / "parts" / "convergence.json").read_text())


def test_rebuild_keeps_saved_parts_and_replaces_report(tmp_path, no_figures):
    out = tmp_path / "rep"
    save(out / WORK / "parts", fake_records())
    write_report(out)
    (out / "stale.txt").write_text("from the old report")
    write_report(out)
    assert (out / WORK / "parts" / "fuzz--lemma-C.2.json").is_file()
    assert not (out / "stale.txt").exists()        # the folder was replaced as a whole
    assert not list(tmp_path.glob(".rep.*"))         # no temporary sibling left
    # Without the scratch folder, the evidence copies under parts/ are enough to rebuild.
    import shutil
    shutil.rmtree(out / WORK)
    res = write_report(out)
    assert {p["name"] for p in res["parts"]} == {r["part"] for r in fake_records()}


def header(out: Path) -> str:
    """The header's paragraph on where the report comes from (after the opening sentence)."""
    return next(p for p in (out / "index.md").read_text().split("\n\n") if p.startswith("Checks of"))


def test_the_header_says_whose_wall_time_it_quotes(tmp_path, no_figures):
    """A run that computed its parts quotes its wall time; a run that reused every part says so and quotes the
    run that computed them (not its own 0.2 s); a partly reused run says how many; a rebuild times no run."""
    out = tmp_path / "rep"
    names = [r["part"] for r in fake_records()]
    save(out / WORK / "parts", fake_records())
    s = write_report(out, wall_seconds=135.0)["summary"]
    assert (s["computed_wall_seconds"], s["reused_parts"]) == (135.0, 0) and "Wall time 135.0 s" in header(out)
    s = write_report(out, wall_seconds=0.2, reused=names)["summary"]
    assert (s["wall_seconds"], s["computed_wall_seconds"], s["reused_parts"]) == (0.2, 135.0, len(names))
    assert f"All {len(names)} parts reused from an earlier run of 135.0 s; this run took 0.2 s." in header(out)
    assert "Wall time 0.2" not in header(out)
    s = write_report(out)["summary"]                             # verify report: the same parts again
    assert s["rebuilt"] and s["computed_wall_seconds"] == 135.0
    assert "the run that computed them took 135.0 s" in header(out)
    s = write_report(out, wall_seconds=40.0, reused=names[:3])["summary"]
    assert s["computed_wall_seconds"] is None
    assert f"3 of {len(names)} parts reused from an earlier run; this run took 40.0 s" in header(out)


def test_rebuild_from_other_parts_does_not_quote_a_stale_time(tmp_path, no_figures):
    out = tmp_path / "rep"
    save(out / WORK / "parts", fake_records())
    assert write_report(out, wall_seconds=12.5)["summary"]["wall_seconds"] == 12.5
    assert write_report(out)["summary"]["wall_seconds"] == 12.5
    recs = fake_records()
    recs[0]["seconds"] += 1.0      # a part finished differently
    save(out / WORK / "parts", recs)
    s = write_report(out)["summary"]
    assert s["wall_seconds"] is None and s["computed_wall_seconds"] is None


def test_numbers_are_listed_by_key(report):
    out, res = report
    nums = section(out, "Numbers")
    assert "`t_exponents`" in nums and "`tstar`" in nums and "`sts K=0 D=5`" in nums
    th = next(c for c in res["claims"] if c["id"] == "theorem-3.1")
    assert th["numbers"]["tstar"] == {"exponent": 1.03} and "data" not in th


def test_questions_answered_by_primary_named_and_listed_parts():
    q4, q2, q1 = QUESTIONS[3], QUESTIONS[1], QUESTIONS[0]
    assert named_questions({"questions": [4, True, "5"]}) == {4}
    assert answers(q4, _rec("probe:other", "probe", "other", {"questions": [4]}), {})
    assert answers(q4, _rec(q4.primary, "probe", "k-zero", {}), {})
    assert not answers(q4, _rec("probe:other", "probe", "other", {"questions": [3]}), {})
    # a fuzz part answers what its claim answers: lemma-C.2 is Q2's primary
    assert answers(q2, _rec("fuzz:lemma-C.2", "fuzz", "lemma-C.2", {}), {"claim:lemma-C.2": {}})
    assert answers(q1, _rec("fuzz:theorem-3.1", "fuzz", "theorem-3.1", {}), {"claim:theorem-3.1": {"questions": [1]}})


@pytest.fixture(scope="module")
def built(report) -> str:
    return json.dumps(report[1])


@pytest.mark.parametrize("breakage", ["drop_question", "bad_verdict", "bad_status", "missing_provenance",
                                      "string_holds", "no_scope", "old_role", "no_roles", "formal_is_a_kind"])
def test_schema_rejects_malformed_results(built, breakage):
    res = json.loads(built)
    validate(res)
    if breakage == "drop_question":
        res["questions"].pop()
    elif breakage == "bad_verdict":
        res["questions"][0]["verdict"] = "probably"
    elif breakage == "bad_status":
        res["parts"][0]["status"] = "half-done"
    elif breakage == "string_holds":
        res["claims"][0]["statements"][0]["evidence"][0]["holds"] = "True"
    elif breakage == "no_scope":
        del res["questions"][0]["scope"]
    elif breakage == "old_role":
        res["statements"][0]["role"] = "primary"
    elif breakage == "no_roles":
        del res["summary"]["roles"]
    elif breakage == "formal_is_a_kind":
        assert any(e["kind"] == "formal" for c in res["claims"] for st in c["statements"] for e in st["evidence"])
        res["claims"][0]["statements"][0]["evidence"][0]["kind"] = "guess"
    else:
        del res["provenance"]["git_commit"]
    with pytest.raises(jsonschema.ValidationError):
        validate(res)


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(schema())


def test_schema_and_colours_name_the_verdicts_the_rule_names():
    """The schema's enums and the report's colours are checked against the one list of each (verify.evidence
    VERDICTS and KINDS, verify.checks ROLES), so a verdict, kind or role added there cannot be rejected here."""
    from verify.checks import ROLES
    from verify.evidence import KINDS, VERDICTS
    from verify.report.render import VERDICT_COLOURS
    d = schema()["$defs"]
    assert d["verdict"]["enum"] == list(VERDICTS)
    assert d["statement_verdict"]["enum"] == list(VERDICTS) + ["not checked"]
    assert d["question_verdict"]["enum"] == list(VERDICTS) + ["not checked"]
    assert d["part_verdict"]["enum"] == list(VERDICTS) + ["not checked", "n/a"]
    assert d["role"]["enum"] == list(ROLES) and d["record"]["properties"]["kind"]["enum"] == list(KINDS)
    assert set(VERDICT_COLOURS) == set(VERDICTS) | {"not checked", "n/a"}


def test_swap_recovers_from_a_crash_between_renames(tmp_path):
    out = tmp_path / "rep"
    (out / WORK).mkdir(parents=True)
    (out / WORK / "keep").write_text("parts")
    new = new_folder(out)
    (new / "index.md").write_text("new")
    # Simulate a crash after moving out aside but before renaming new into place.
    (new / ".complete").write_text("")
    (out / WORK).rename(new / WORK)
    out.rename(tmp_path / ".rep.old")
    assert not out.exists()
    recover_folder(out)
    assert (out / "index.md").read_text() == "new" and (out / WORK / "keep").is_file()
    assert not (tmp_path / ".rep.old").exists() and not (tmp_path / ".rep.new").exists()


def test_unfinished_new_folder_is_discarded(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "index.md").write_text("old")
    new = new_folder(out)
    (new / "index.md").write_text("half")            # no .complete marker: a crash while building
    recover_folder(out)
    assert (out / "index.md").read_text() == "old" and not new.exists()
    swap_folder(new_folder(out), out)
    assert not (out / "index.md").exists()


def test_the_claims_table_names_the_routes_that_decided_a_proved_statement():
    """Lemma C.2's small step is proved by SymPy's reduction and an SMT induction that z3 and cvc5 both decide
    (docs/claims.md): results.json keeps its routes although it keeps no records, and the claims table prints them
    (before, the table worked them out from records results.json had dropped, and printed none)."""
    results = json.loads(Path("reports/example/results.json").read_text())
    st = next(s for s in results["statements"] if s["id"] == "lemma-C.2-small-step")
    assert st["routes"].startswith("Routes: SymPy, z3, cvc5") and "by z3 + cvc5" in st["routes"]
    assert st["routes"] in Path("reports/example/index.md").read_text()
    assert all(s["routes"] == "" for s in results["statements"] if s["id"] == "theorem-3.2-ood")


def test_files_in_records_are_named_from_the_toolkit_root_not_the_machine(tmp_path):
    """A file under the toolkit's folder reads relative to it (a committed report names no machine's prefix); one
    elsewhere reads as given; the committed example's certificate records hold no absolute path."""
    from verify.run.parts import source_path, source_root
    assert source_path(source_root() / ".cache" / "verify" / "c.json") == ".cache/verify/c.json"
    assert source_path(tmp_path / "c.json") == str(tmp_path / "c.json")
    text = Path("reports/example/parts/certify.json").read_text()
    assert str(source_root()) not in text and '"certificate": "/' not in text
