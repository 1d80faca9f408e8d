"""The documentation's code runs as written: every ```python block of docs/tutorial.md (and the example
of docs/verdicts.md), in order, in one namespace, in a temporary working directory.

A block that raises fails the test with the page and block number; the blocks' own asserts check
what the text says they show (engines agree, the Arb ball holds the mpmath value, GD follows the
derived leading terms, the claims' outcomes), and this file checks the figure was written.
"""
from __future__ import annotations

import ast
import re
import tempfile
from pathlib import Path

import pytest

import verify

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a Markdown page, in order."""
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def run_page(page: Path, tmp_path: Path, monkeypatch) -> dict:
    """Execute the page's python blocks in one namespace inside ``tmp_path``; returns the namespace."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # tempfile.mkdtemp() lands in tmp_path
    ns: dict = {"__name__": f"docs.{page.stem}"}
    blocks = python_blocks(page)
    for i, code in enumerate(blocks, 1):
        exec(compile(code, f"{page.relative_to(ROOT)}, python block {i}", "exec"), ns)  # noqa: S102
    ns["__blocks__"] = len(blocks)
    return ns


def imports(code: str) -> list[tuple[str, str]]:
    """(module, name) for every ``from module import name`` and ``import module`` of a block."""
    out = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom):
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, "") for a in node.names]
    return out


def test_python_blocks_are_found():
    # The block pattern itself: a page with two blocks and a non-python fence yields exactly the two.
    page = "text\n```python\nx = 1\n```\n```\nverify run\n```\n```python\ny = x + 1\n```\n"
    assert BLOCK.findall(page) == ["x = 1\n", "y = x + 1\n"]


@pytest.mark.slow
def test_tutorial_runs_and_writes_the_figure(tmp_path, monkeypatch, capsys):
    ns = run_page(ROOT / "docs" / "tutorial.md", tmp_path, monkeypatch)
    assert ns["__blocks__"] >= 7, "the tutorial's code blocks were not found"
    png = ns["png"]
    assert Path(png).is_file() and Path(tmp_path) in Path(png).parents
    assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(png).stat().st_size > 10_000          # three panels with curves, not an empty canvas
    from matplotlib.figure import Figure
    assert isinstance(ns["fig"], Figure) and len(ns["fig"].axes) == 3
    # what the narrative says it shows
    assert isinstance(ns["s"], verify.Setting)
    assert isinstance(ns["long"], verify.Trajectory) and ns["long"].final.step == ns["T"]
    assert ns["c2"].holds is True and ns["neg"].holds is False
    out = capsys.readouterr().out
    assert "[[0, 1], [2, 3], [4, 5], [6, 7]]" in out
    assert "6/T" in out                                 # the loss's leading term at this setting


def test_tutorial_uses_only_the_public_api():
    # Everything the tutorial imports from the toolkit is in verify.__all__ (docs/api.md lists them).
    used = [(m, n) for code in python_blocks(ROOT / "docs" / "tutorial.md") for m, n in imports(code)
            if m and m.split(".")[0] in ("verify", "lemmas")]
    assert used, "the tutorial imports nothing from verify"
    for module, name in used:
        assert module == "verify" and name in verify.__all__, f"tutorial imports {module}.{name}: not public API"


def test_verdicts_example_runs(tmp_path, monkeypatch, capsys):
    ns = run_page(ROOT / "docs" / "verdicts.md", tmp_path, monkeypatch)
    assert ns["__blocks__"] == 1
    assert "checked at dimensions {M=2 d=2 D=3 N=2 K=2}" in capsys.readouterr().out


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "docs").glob("*.md")))
def test_every_python_block_compiles(page):
    # Pages whose blocks are not executed above must at least be valid Python.
    for i, code in enumerate(python_blocks(ROOT / "docs" / page), 1):
        compile(code, f"docs/{page}, python block {i}", "exec")
