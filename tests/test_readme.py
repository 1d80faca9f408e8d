"""The README tells the truth about the report: its numbers are generated from the committed example.

The findings and speed blocks of README.md are written by verify.report.readme from
reports/example/results.json and reports/example-bench/bench.json; a README edited by hand, or a report
regenerated without the README, fails here. Prose outside those blocks carries no measured number.
"""
import json
import re
from pathlib import Path

import pytest

from verify.report import readme

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "README.md").read_text(encoding="utf-8")
# Numbers the hand-written prose may contain: the paper's arXiv id and year, its equation and theorem
# numbers, exit statuses, and the worked decimal 0.07 = 7/100 of the exact-input remark.
ALLOWED = {"0", "1", "2", "3", "7", "100", "2026", "2603.22801", "3.1", "3.2", "3.3", "3.4"}


def test_generated_blocks_match_the_committed_report():
    now = readme.current_blocks(TEXT)
    want = readme.example_blocks()
    for name in readme.BLOCKS:
        assert now[name] is not None, f"README.md lost its {name} block"
        assert now[name] == want[name], f"README.md's {name} block is stale: run python -m verify.report.readme"


def test_prose_outside_the_blocks_quotes_no_measured_number():
    t = re.sub(r"```.*?```", "", TEXT, flags=re.S)
    t = re.sub(r"<!-- (\w+):begin.*?<!-- \1:end -->", "", t, flags=re.S)
    t = re.sub(r"`[^`]*`", "", t)
    t = re.sub(r"\]\([^)]*\)", "]", t)
    # numbers standing alone (not the 64 of "float64"), trailing punctuation dropped
    found = {m.rstrip(".,") for m in re.findall(r"(?<![A-Za-z_\d.])\d[\d.,]*", t)}
    assert found <= ALLOWED, f"numbers in README prose outside the generated blocks: {sorted(found - ALLOWED)}"


def test_a_changed_report_number_changes_the_readme():
    """The blocks follow the report: change one number in the report and the generated text differs."""
    results = json.loads((readme.EXAMPLE / "results.json").read_text())
    bench = json.loads((readme.EXAMPLE_BENCH / "bench.json").read_text())
    before = readme.blocks(results, bench)["findings"]
    for n in results["headline_numbers"]:
        if n["name"].startswith("T*: D-exponent"):
            n["value"] = [n["value"][0] + 0.5, n["value"][1]]
    assert readme.blocks(results, bench)["findings"] != before


def test_a_number_missing_from_the_report_is_an_error():
    results = json.loads((readme.EXAMPLE / "results.json").read_text())
    results["headline_numbers"] = [n for n in results["headline_numbers"] if not n["name"].startswith("T*: D-exp")]
    with pytest.raises(readme.MissingNumber):
        readme.findings(results)
