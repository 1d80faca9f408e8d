"""The report folder: files, schema, self-contained HTML, the reviewer table, atomic folder swaps.

Part records here are small fakes with the shapes the real parts save (verify.pipeline); the real
parts are exercised in tests/test_all.py.
"""
from __future__ import annotations

import base64
import html.parser
import json
from pathlib import Path

import jsonschema
import pytest

from verify.report import QUESTIONS, schema, validate, write_report
from verify.report.atomic import WORK, new_folder, recover_folder, swap_folder, write_json_atomic
from verify.report.questions import answers, question_of, strongest


def _rec(part, kind, arg="", result=None, status="ok", error=None, seconds=0.5):
    return {"part": part, "kind": kind, "arg": arg, "options": {"part": part, "profile": "ci"}, "status": status,
            "seconds": seconds, "finished": "2026-01-01T00:00:00Z", "error": error, "result": result}


def fake_records() -> list[dict]:
    T = [1, 10, 100, 1000, 10000]
    probe = {"probe": "k_zero", "question": "Q4: " + QUESTIONS[3][0], "regimes": [{"label": "K=0"}],
             "findings": ["S stays uniform; W_X stays 0"], "classification": {"loss": "exact-from-start"},
             "verdict": "refuted", "statement": "Theorem 3.1 at K = 0", "replay": "verify probe k_zero --json",
             "data": {"K=0": {"step": T, "loss": [1.0 / t for t in T], "s_err": [1.0] * 5, "w_err": [2.0] * 5}}}
    claim = {"id": "lemma-C.2", "verdict": "proved", "statement": "rows of W_V are positive multiples of V*",
             "evidence": [{"kind": "symbolic"}], "convention": {"sigma": "identity", "dps": 50, "seed": 3},
             "replay": "verify claim lemma-C.2"}
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
    assert q[2]["verdict"] == "proved"                      # lemma-C.2 answers question 2
    assert q[10]["verdict"] == "not checked"                # nothing answers it: said so
    parts = {p["name"]: p for p in saved["parts"]}
    assert parts["probe:broken"]["status"] == "failed" and parts["probe:broken"]["verdict"] == "not checked"
    assert saved["provenance"]["seeds"]["claim:lemma-C.2"]["seed"] == 3
    assert set(saved["provenance"]["packages"]) >= {"sympy", "numpy", "mpmath", "python-flint", "hypothesis",
                                                     "matplotlib", "gmpy2"}
    p = check_html(out)
    assert len(p.srcs) == len(res["figures"])
    assert "#part-probe-broken" in p.hrefs or "part-probe-broken" in p.ids


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


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("built")
    save(tmp / "p", fake_records())
    return json.dumps(write_report(tmp / "rep", tmp / "p"))


@pytest.mark.parametrize("breakage", ["drop_question", "bad_verdict", "bad_status", "missing_provenance"])
def test_schema_rejects_malformed_results(built, breakage):
    res = json.loads(built)
    validate(res)
    if breakage == "drop_question":
        res["questions"].pop()
    elif breakage == "bad_verdict":
        res["questions"][0]["verdict"] = "probably"
    elif breakage == "bad_status":
        res["parts"][0]["status"] = "half-done"
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
