"""The example report's verdicts and headline numbers against a committed snapshot (tests/data/example_verdicts.json).

The snapshot is the independent value: it was read off a report the team checked, and it changes only when someone
updates it on purpose (``python tests/test_example_snapshot.py --update`` after regenerating reports/example, then
the diff is reviewed and committed with the change that moved a verdict or a number). A verdict or a headline
number that moves silently (a refactoring, a cheaper profile) fails here, naming what moved.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "reports" / "example" / "results.json"
SNAPSHOT = Path(__file__).resolve().parent / "data" / "example_verdicts.json"
# Floats of the headline numbers are compared to this relative tolerance (a last-digit change from another BLAS is
# not a change of the report); verdict words and counts exactly.
REL = 1e-6
NOTE = ("The example report's verdicts and headline numbers (reports/example/results.json). Update deliberately: "
        "python tests/test_example_snapshot.py --update, then review the diff (tests/README.md).")


def snapshot_of(report: dict) -> dict:
    """What the snapshot keeps of a report: every part's verdict word, the verdict of each of its statements (by
    id, or by position when a statement has no id), the summary's counts, and the headline numbers: the all-time
    certificate's T0, constants and widths at T = 1e12, and the convergence run's fitted slopes."""
    parts = {p["name"]: {"verdict": p.get("verdict"),
                         "statements": {s.get("id") or f"#{i}": s.get("verdict")
                                        for i, s in enumerate(p.get("statements", []))}}
             for p in report["parts"]}
    summary = report["summary"]
    cert, conv = report["certify"], report["convergence"]
    numbers = {"summary": {k: summary[k] for k in ("parts", "ok", "verdicts", "roles", "extents")},
               "certify": {"T0": cert["T0"],
                           "constants": {q: [c["c_lo"], c["c_hi"]] for q, c in cert["constants"].items()},
                           "relative_width_at_1e12": cert["relative_width_at_1e12"]},
               "convergence": {q: c["fitted_slope"] for q, c in conv["quantities"].items()}}
    return {"note": NOTE, "profile": report["profile"], "parts": parts, "numbers": numbers}


def differences(want, got, path="$") -> list[str]:
    """Where two JSON values differ (floats to REL relative), as readable lines."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = [f"{path}.{k}: missing in the report" for k in want if k not in got]
        out += [f"{path}.{k}: new in the report ({got[k]!r})" for k in got if k not in want]
        return out + [d for k in want if k in got for d in differences(want[k], got[k], f"{path}.{k}")]
    if isinstance(want, float) or isinstance(got, float):
        ok = isinstance(got, (int, float)) and isinstance(want, (int, float)) and \
            math.isclose(want, got, rel_tol=REL, abs_tol=0.0)
        return [] if ok else [f"{path}: snapshot {want!r}, report {got!r}"]
    return [] if want == got else [f"{path}: snapshot {want!r}, report {got!r}"]


@pytest.fixture(scope="module")
def report() -> dict:
    return json.loads(REPORT.read_text())


def test_the_example_reports_verdicts_and_numbers_are_the_snapshots(report):
    want = json.loads(SNAPSHOT.read_text())
    diff = differences({k: v for k, v in want.items() if k != "note"},
                       {k: v for k, v in snapshot_of(report).items() if k != "note"})
    assert not diff, "the example report moved from tests/data/example_verdicts.json (update it on purpose if " \
                     "meant):\n" + "\n".join(diff)


def test_the_snapshot_names_every_claim_and_its_hand_derived_verdict():
    """The snapshot itself against the hand-derived verdict of every claim statement (conftest.CLAIM_EXPECTED,
    worked out from what each statement quantifies over), so an update cannot quietly accept a wrong verdict."""
    from conftest import CLAIM_EXPECTED
    want = json.loads(SNAPSHOT.read_text())
    claims = {sid: v for name, p in want["parts"].items() if name.startswith("claim:")
              for sid, v in p["statements"].items()}
    assert claims == {sid: e[0] for sid, e in CLAIM_EXPECTED.items()}
    counts: dict = {}
    for p in want["parts"].values():
        counts[p["verdict"] or "n/a"] = counts.get(p["verdict"] or "n/a", 0) + 1
    assert counts == want["numbers"]["summary"]["verdicts"]


def test_a_moved_verdict_or_number_is_named():
    """The comparison itself: a verdict word changed, a float moved past the tolerance, a part added."""
    base = {"parts": {"a": {"verdict": "proved"}}, "numbers": {"x": 1.0}}
    assert differences(base, base) == []
    assert differences(base, {"parts": {"a": {"verdict": "supported"}}, "numbers": {"x": 1.0}}) == [
        "$.parts.a.verdict: snapshot 'proved', report 'supported'"]
    assert differences(base, {"parts": {"a": {"verdict": "proved"}}, "numbers": {"x": 1.0 + 1e-9}}) == []
    assert differences(base, {"parts": {"a": {"verdict": "proved"}}, "numbers": {"x": 1.001}}) == [
        "$.numbers.x: snapshot 1.0, report 1.001"]
    assert differences(base, {"parts": {"a": {"verdict": "proved"}, "b": {}}, "numbers": {"x": 1.0}}) == [
        "$.parts.b: new in the report ({})"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_example_snapshot.py --update  (rewrites tests/data/example_verdicts.json "
                 "from reports/example/results.json)")
    sys.path.insert(0, str(ROOT))
    from verify.run.atomic import write_bytes_atomic
    write_bytes_atomic(SNAPSHOT, (json.dumps(snapshot_of(json.loads(REPORT.read_text())), indent=1,
                                             ensure_ascii=False) + "\n").encode())
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}")
