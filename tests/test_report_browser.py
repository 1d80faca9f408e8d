"""The HTML report as people open it, measured in a real browser (headless Chromium).

The committed example's results.json is rendered with the current code (verify.report.render.html_page) and
laid out at a phone's width (390 px) and a wide window's (1400 px). A script in the page measures, after the
browser has laid it out: the page's scroll width against the viewport's (no sideways scrolling of the page), and
the bounding box of every verdict cell, before and after every table box is scrolled to its far right (the
verdicts stay inside the viewport). Headless Chromium's window is at least 500 px wide, so the page is laid out
in an iframe of the exact width (its own viewport); the page's viewport meta is checked as text.

Skipped only where Chromium is missing and $CI is not "true": under CI a missing browser fails the test.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from verify.report.render import blocks, html_page

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "reports" / "example" / "results.json"
WIDTHS = (390, 1400)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# The measuring page: the report in an iframe WIDTH px wide; once it has loaded, the measures are written into
# a <pre id="measure"> of the outer page, which --dump-dom prints.
OUTER = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="f" style="width:WIDTHpx;height:900px;border:0" src="report.html"></iframe>
<script>
document.getElementById('f').onload = function () {
  var w = this.contentWindow, doc = this.contentDocument, root = doc.documentElement;
  function spans() {
    return [].map.call(doc.querySelectorAll('td.verdict'), function (c) {
      var r = c.getBoundingClientRect(); return [r.left, r.right]; });
  }
  var start = spans();
  [].forEach.call(doc.querySelectorAll('div.table'), function (b) { b.scrollLeft = b.scrollWidth; });
  var m = {width: root.clientWidth, scrollWidth: root.scrollWidth, start: start, scrolled: spans(),
           tables: doc.querySelectorAll('table').length, boxed: doc.querySelectorAll('div.table > table').length};
  var p = document.createElement('pre'); p.id = 'measure'; p.textContent = JSON.stringify(m);
  document.body.appendChild(p);
};
</script></body></html>"""


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing under CI (the Debian package `chromium` runs this test)")
        pytest.skip("chromium is not installed (Debian package `chromium`); under CI=true this test fails instead")
    return path


@pytest.fixture(scope="module")
def page():
    return html_page(blocks(json.loads(EXAMPLE.read_text()), []))


def measure(browser: str, page: str, width: int, folder: Path) -> dict:
    (folder / "report.html").write_text(page)
    (folder / "outer.html").write_text(OUTER.replace("WIDTH", str(width)))
    res = subprocess.run([browser, *FLAGS, f"--user-data-dir={folder / 'profile'}", "--allow-file-access-from-files",
                          f"--window-size={max(width, 500) + 40},1000", "--virtual-time-budget=10000", "--dump-dom",
                          (folder / "outer.html").as_uri()], capture_output=True, text=True, timeout=300)
    found = re.search(r'<pre id="measure">(.*?)</pre>', res.stdout, re.S)
    assert found, (res.returncode, res.stderr[-2000:])
    return json.loads(found.group(1))


def test_the_page_declares_the_device_width():
    head = html_page([("p", "x")]).split("</head>")[0]
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in head


@pytest.mark.parametrize("width", WIDTHS)
def test_no_sideways_page_scroll_and_the_verdicts_in_view(width, page, tmp_path):
    m = measure(chromium(), page, width, tmp_path)
    # the iframe's viewport is the width asked for, less a vertical scroll bar (at most 20 px)
    assert width - 20 <= m["width"] <= width, m["width"]
    assert m["scrollWidth"] <= m["width"], (m["scrollWidth"], m["width"])          # the page never scrolls sideways
    assert m["tables"] > 5 and m["boxed"] == m["tables"]                           # every table in its own box
    assert len(m["start"]) > 50 and len(m["scrolled"]) == len(m["start"])
    for left, right in m["start"] + m["scrolled"]:                                 # every verdict cell in view
        assert 0 <= left and right <= m["width"] + 0.5, (left, right, m["width"])
