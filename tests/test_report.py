"""The report folder: files, schema, self-contained HTML, the reviewer table, atomic folder swaps, and
verdicts derived again from the saved evidence records (never copied from a saved "verdict").

Part records here are small fakes with the shapes the real parts save (verify.run.pipeline); their evidence
is made with verify.evidence.record. The real parts are exercised in tests/test_all.py.
"""
from __future__ import annotations

import base64
import html.parser
import json
from pathlib import Path

import jsonschema
import pytest

from verify.evidence import Scope, record
from verify.report import QUESTIONS, schema, validate, write_report
from verify.run.atomic import WORK, new_folder, recover_folder, swap_folder, write_json_atomic
from verify.report.questions import answers, question_of, strongest
from conftest import holds_values

EVERY = Scope(dims="all", sigma=("identity",), conventions=("reference",), horizon="all")
SMALL = Scope(dims=("M=1 d=1 D=8 N=1 K=2",), sigma=("identity",), conventions=("reference",), horizon=1000)
TH = {"value": 0.02, "why": "test threshold"}


def statement(text, evidence, scope=EVERY, role="primary", verdict=None):
    st = {"statement": text, "role": role, "scope": scope.as_dict(), "evidence": evidence}
    return st | ({"verdict": verdict} if verdict else {})


def _rec(part, kind, arg="", result=None, status="ok", error=None, seconds=0.5):
    return {"part": part, "kind": kind, "arg": arg, "options": {"part": part, "profile": "ci"}, "status": status,
            "seconds": seconds, "finished": "2026-01-01T00:00:00Z", "error": error, "result": result}


def fake_records() -> list[dict]:
    T = [1, 10, 100, 1000, 10000]
    proof = record("exact reduced recursion", "symbolic", Scope(dims=("K=0",), sigma=("identity",)), "fixed point",
                   False, replay="verify run --D 5 --K 0 --preset sts --steps 3 --json")
    probe = {"probe": "k_zero", "question": "Q4: " + QUESTIONS[3][0], "regimes": [{"label": "K=0"}],
             "findings": ["S stays uniform; W_X stays 0"], "classification": {"loss": "exact-from-start"},
             "verdict": "refuted", "statement": "Theorem 3.1 at K = 0",
             "statements": [statement("Theorem 3.1 at K = 0", [proof], Scope(dims=("K=0",), sigma=("identity",)))],
             "replay": "verify probe k_zero --json",
             "data": {"K=0": {"step": T, "loss": [1.0 / t for t in T], "s_err": [1.0] * 5, "w_err": [2.0] * 5}}}
    rates = {"probe": "rates", "question": "Q6: " + QUESTIONS[5][0], "regimes": [], "findings": ["slopes -1, -1/2"],
             "classification": {"loss": "power:-1"}, "replay": "verify probe rates --json",
             "statements": [statement("Theorem 3.1's T-exponents", [record("tail fit", "float64", SMALL, "-1.00", True,
                                                                           threshold=TH)]),
                            statement("Theorem 3.1's D-dependence (K D^4)", [record(
                                "D-exponents of the exact leading terms", "symbolic", EVERY, "D^0 vs claimed D^4", False,
                                replay="verify derive --asymptotics --json")], role="further")]}
    claim = {"id": "lemma-C.2", "verdict": "proved", "statement": "rows of W_V are positive multiples of V*",
             "scope": EVERY.as_dict(), "scope_label": EVERY.label(), "reason": "r",
             "evidence": [record("induction", "symbolic", EVERY, "ok", True)],
             "convention": {"sigma": "identity", "dps": 50, "seed": 3}, "replay": "verify claim lemma-C.2"}
    conv = {"verdict": "supported", "finding": "slopes -1, -1/2, -1/2", "steps": T,
            "series": {q: [1.0 / t for t in T] for q in ("excess_loss", "s_err", "w_err")},
            "alpha": [[1.0, 1.0] for _ in T], "support_mass": [[0.5] for _ in T], "regime": {"D": 16},
            "quantities": {q: {"fitted_slope": -1.0, "claimed_slope": -1.0, "fit_range": [1000, 10000],
                               "leading_term": "1/T", "claimed_order": "1/T", "ratio_to_leading_term_at_T": 1.0,
                               "leading_term_values": [1.0 / t for t in T]} for q in ("excess_loss", "s_err", "w_err")},
            "replay": "verify run ..."}
    return [_rec("convergence", "convergence", result=conv),
            _rec("claim:lemma-C.2", "claim", "lemma-C.2", claim),
            _rec("probe:k_zero", "probe", "k_zero", probe),
            _rec("probe:rates", "probe", "rates", rates),
            _rec("probe:broken", "probe", "broken", status="failed", error="ValueError: boom\ntraceback"),
            _rec("fuzz", "fuzz", result={"claims": [{"claim": "lemma-C.2", "examples": 25, "falsified": False,
                                                     "counterexample": None, "replay": "verify fuzz"}]})]


def save(pdir: Path, records):
    for r in records:
        write_json_atomic(pdir / (r["part"].replace(":", "--") + ".json"), r)


class LinkParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.srcs, self.rows = set(), [], [], 0
        self._table = 0

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


def question_rows(folder: Path) -> list[str]:
    md = (folder / "index.md").read_text().split("## Reviewer questions", 1)[1].split("\n## ", 1)[0]
    return [ln for ln in md.splitlines() if ln.startswith("| ") and not ln.startswith("| #")]


def test_report_folder_from_saved_parts(tmp_path):
    pdir = tmp_path / "src" / WORK / "parts"
    save(pdir, fake_records())
    out = tmp_path / "rep"
    res = write_report(out, pdir, profile="ci", wall_seconds=3.0)
    for f in ("index.md", "index.html", "results.json", "figures/convergence.png", "figures/alpha.png"):
        assert (out / f).is_file(), f
    assert any(f.startswith("figures/probe--k_zero") for f in (x["file"] for x in res["figures"]))
    saved = json.loads((out / "results.json").read_text())
    validate(saved)
    assert len(saved["questions"]) == 12
    assert len(question_rows(out)) == 12
    q = {r["number"]: r for r in saved["questions"]}
    assert q[4]["verdict"] == "refuted" and q[4]["evidence"][0]["part"] == "probe:k_zero"
    assert q[4]["scope"] == "checked at dimensions {K=0}, sigma in {identity}, every convention, all t"
    assert q[2]["verdict"] == "proved" and q[2]["scope"].startswith("all dimensions")   # lemma-C.2 answers Q2
    assert q[10]["verdict"] == "not checked"                # nothing answers it: said so
    # the convergence fake saved a verdict but no evidence records: the report does not take its word
    assert q[1]["verdict"] == "inconclusive" and q[1]["scope"] == "no evidence records"
    parts = {p["name"]: p for p in saved["parts"]}
    assert parts["probe:broken"]["status"] == "failed" and parts["probe:broken"]["verdict"] == "not checked"
    assert saved["provenance"]["seeds"]["claim:lemma-C.2"]["seed"] == 3
    assert set(saved["provenance"]["packages"]) >= {"sympy", "numpy", "mpmath", "python-flint", "hypothesis",
                                                     "matplotlib", "gmpy2"}
    p = check_html(out)
    assert len(p.srcs) == len(res["figures"])
    assert "#part-probe-broken" in p.hrefs or "part-probe-broken" in p.ids
    found = list(holds_values(saved))
    assert found and all(v is None or isinstance(v, bool) for _, v in found)


def test_q6_row_says_what_was_refuted(tmp_path):
    """Issue 9: the table must not show "refuted" next to numbers that agree with the question's premise.
    The rates probe's headline (T-exponents) is supported; its refuted D-dependence is named in the row."""
    save(tmp_path / "p", fake_records())
    res = write_report(tmp_path / "rep", tmp_path / "p")
    q6 = next(r for r in res["questions"] if r["number"] == 6)
    assert q6["verdict"] == "supported" and q6["statement"] == "Theorem 3.1's T-exponents"
    assert "[refuted] Theorem 3.1's D-dependence (K D^4)" in q6["finding"]
    row = next(r for r in question_rows(tmp_path / "rep") if r.startswith("| 6 |"))
    assert "| supported | Theorem 3.1's T-exponents |" in row
    part = next(p for p in res["parts"] if p["name"] == "probe:rates")
    assert [st["verdict"] for st in part["statements"]] == ["supported", "refuted"]


def test_report_derives_verdicts_from_records(tmp_path):
    """A saved verdict is never copied: records that back less give less, no records give inconclusive,
    and a refutation needs a replayed counterexample."""
    recs = fake_records()
    claim = recs[1]["result"]
    numeric = record("float64 run", "float64", SMALL, "ok", True, threshold=TH)
    recs[1]["result"] = claim | {"evidence": [numeric]}                        # saved "proved", float64 only
    unreplayed = record("run", "float64", SMALL, "alpha < 0", False, threshold=TH, replay="verify run x")
    recs.append(_rec("claim:wp-zero", "claim", "wp-zero", {"id": "wp-zero", "verdict": "refuted", "statement": "s",
                                                            "scope": EVERY.as_dict(), "evidence": [unreplayed]}))
    recs.append(_rec("claim:theorem-3.2-ood", "claim", "theorem-3.2-ood", {"id": "theorem-3.2-ood",
                                                                           "verdict": "proved", "statement": "s"}))
    save(tmp_path / "p", recs)
    res = write_report(tmp_path / "rep", tmp_path / "p")
    parts = {p["name"]: p for p in res["parts"]}
    c2 = parts["claim:lemma-C.2"]
    assert c2["verdict"] == "supported" and "the part saved 'proved'" in c2["reason"]
    assert c2["scope_label"].startswith("checked at dimensions {M=1 d=1 D=8 N=1 K=2}")
    assert parts["claim:wp-zero"]["verdict"] == "inconclusive"                # no replay at a longer horizon
    ood = parts["claim:theorem-3.2-ood"]
    assert ood["verdict"] == "inconclusive" and ood["scope_label"] == "no evidence records"
    claims = {c["id"]: c for c in res["claims"]}
    assert claims["lemma-C.2"]["verdict"] == "supported"
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "verdict **supported** (checked at dimensions {M=1 d=1 D=8 N=1 K=2}" in md


def test_a_figure_that_fails_is_reported(tmp_path, monkeypatch):
    from verify.report import figures

    def broken(name, res):
        raise ValueError(f"cannot draw {name}")
    monkeypatch.setattr(figures, "probe_figure", broken)
    save(tmp_path / "p", fake_records())
    res = write_report(tmp_path / "rep", tmp_path / "p")
    errs = {e["source"]: e for e in res["figure_errors"]}
    assert "probe:k_zero" in errs and "cannot draw k_zero" in errs["probe:k_zero"]["error"]
    assert not any(f["source"] == "probe:k_zero" for f in res["figures"])
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "figure(s) failed to draw" in md and "cannot draw k_zero" in md
    check_html(tmp_path / "rep")


def test_rebuild_keeps_saved_parts_and_replaces_report(tmp_path):
    out = tmp_path / "rep"
    save(out / WORK / "parts", fake_records())
    write_report(out)
    (out / "stale.txt").write_text("from the old report")
    write_report(out)
    assert (out / WORK / "parts" / "fuzz.json").is_file()
    assert not (out / "stale.txt").exists()        # the folder was replaced as a whole
    assert not list(tmp_path.glob(".rep.*"))         # no temporary sibling left
    # Without the scratch folder, the evidence copies under parts/ are enough to rebuild.
    import shutil
    shutil.rmtree(out / WORK)
    res = write_report(out)
    assert {p["name"] for p in res["parts"]} == {r["part"] for r in fake_records()}


def test_rebuild_from_the_same_parts_keeps_the_run_wall_time(tmp_path):
    """`verify report` does not time a run: rebuilt from the same parts it keeps the wall time the run
    recorded; from other parts it says it does not know (null), never a stale number."""
    out = tmp_path / "rep"
    save(out / WORK / "parts", fake_records())
    assert write_report(out, wall_seconds=12.5)["summary"]["wall_seconds"] == 12.5
    assert write_report(out)["summary"]["wall_seconds"] == 12.5
    recs = fake_records()
    recs[0]["seconds"] = (recs[0].get("seconds") or 0.0) + 1.0      # a part finished differently
    save(out / WORK / "parts", recs)
    assert write_report(out)["summary"]["wall_seconds"] is None


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("built")
    save(tmp / "p", fake_records())
    return json.dumps(write_report(tmp / "rep", tmp / "p"))


@pytest.mark.parametrize("breakage", ["drop_question", "bad_verdict", "bad_status", "missing_provenance",
                                      "string_holds", "no_scope"])
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
        res["claims"][0]["evidence"][0]["holds"] = "True"
    elif breakage == "no_scope":
        del res["questions"][0]["scope"]
    else:
        del res["provenance"]["git_commit"]
    with pytest.raises(jsonschema.ValidationError):
        validate(res)


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(schema())


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


@pytest.mark.parametrize("field,number", [(3, 3), ("Q4: They also", 4), ("question 12", 12), (13, None),
                                          (True, None), ("", None), (QUESTIONS[6][0], 7)])
def test_question_of(field, number):
    assert question_of(field) == number


def test_answers_by_keyword_and_field():
    assert answers("claim:lemma-C.2", "claim", {}) == [2]
    assert answers("probe:d_eq_k", "probe", {"questions": [3]}) == [3]
    assert answers("probe:interior", "probe", {"question": "Q1: a | Q6: b"}) == [1, 6]
    assert answers("claim:iterate-bound", "claim", {}) == []      # "rate" is not matched inside "iterate"
    assert strongest(["supported", "refuted"]) == "refuted" and strongest([]) == "not checked"


def test_headline_numbers_come_from_the_saved_parts(tmp_path):
    """The numbers the findings quote are read from the parts; one that is missing says why."""
    recs = fake_records()
    fits = {q: {"exponent": p, "uncertainty": 0.01, "last_decade": p} for q, p in
            (("s_err", -0.49), ("w_err", -0.5), ("loss", -1.02))}
    rates = {"id": "theorem-3.1-rates", "statement": "s", "scope": EVERY.as_dict(),
             "evidence": [record("T-exponents, log-log fit", "float64", SMALL, "ok", True, threshold=TH, fits=fits)]}
    recs.append(_rec("claim:theorem-3.1-rates", "claim", "theorem-3.1-rates", rates))
    save(tmp_path / "p", recs)
    res = write_report(tmp_path / "rep", tmp_path / "p")
    nums = {n["name"]: n for n in res["headline_numbers"]}
    t = nums["Theorem 3.1: fitted T-exponents (exponent, uncertainty, last decade)"]
    assert t["value"]["loss"] == [-1.02, 0.01, -1.02] and t["missing"] is None
    ratio = nums["Theorem 3.1: iterate / exact leading term at the horizon"]
    assert ratio["value"] is None and "not in the saved result" in ratio["missing"]
    assert "did not run" in nums["T*: D-exponent at fixed K (exponent, uncertainty)"]["missing"]
    assert "Numbers behind the findings" in (tmp_path / "rep" / "index.md").read_text()
    check_html(tmp_path / "rep")
