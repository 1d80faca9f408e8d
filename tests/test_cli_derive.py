"""``verify derive``: a standalone LaTeX document, honest option handling, obligations in every format."""
import json
import re

import pytest
from click.testing import CliRunner

from verify.cli import main


def _run(*args):
    return CliRunner().invoke(main, ["derive", *args])


def _balanced(doc: str):
    assert doc.startswith("\\documentclass") and doc.rstrip().endswith("\\end{document}")
    assert doc.count("\\begin{document}") == 1
    envs = re.findall(r"\\(begin|end)\{([^}]*)\}", doc)
    stack = []
    for kind, name in envs:
        if kind == "begin":
            stack.append(name)
        else:
            assert stack and stack.pop() == name, name
    assert not stack
    depth = 0
    for i, ch in enumerate(doc):
        if ch in "{}" and doc[i - 1] != "\\":
            depth += 1 if ch == "{" else -1
            assert depth >= 0
    assert depth == 0


@pytest.fixture(scope="module")
def latex():
    res = _run("--format", "latex")
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.mark.slow
def test_latex_is_a_standalone_document_with_sympy_formulas(latex):
    _balanced(latex)
    # gradients are LaTeX from SymPy, not plain text
    assert "\\frac{\\partial L}{\\partial (W_{KQ})_{a,b}} = \\sum" in latex
    assert "\\frac{\\partial L}{\\partial \\Lambda_{i,j}}" in latex
    assert "dL/dW_X[m,:]" not in latex and "sum_j [" not in latex
    # obligations with their status and scope
    assert "\\textbf{proved}" in latex and "\\textbf{disproved}" in latex and "all dimensions" in latex
    assert "c_\\delta = \\frac{D \\beta^{2} \\eta_{KQ} \\lambda^{2}}{K N \\left(D - K\\right)}" in latex


def test_asymptotics_latex_is_standalone_and_simplified():
    res = _run("--asymptotics", "--format", "latex")
    assert res.exit_code == 0, res.output
    _balanced(res.stdout)
    assert "\\sqrt{\\frac{1}{D - K}}" not in res.output and "sqrt(1/(D - K))" not in res.output
    assert "\\sqrt{D - K}" in res.output
    res = _run("--asymptotics", "--json")
    assert "sqrt(1/(D - K))" not in res.output and "sqrt(D - K)" in res.output


@pytest.mark.slow
def test_asymptotics_with_another_sigma_is_refused():
    res = _run("--asymptotics", "--sigma", "relu")
    assert res.exit_code == 2 and "Traceback" not in res.output
    last = res.output.strip().splitlines()[-1]
    assert "sigma" in last and "identity" in last and "relu" in last
    assert _run("--asymptotics", "--sigma", "identity", "--json").exit_code == 0


@pytest.mark.parametrize("fmt", ["latex", "text"])
def test_json_with_another_format_is_a_usage_error(fmt):
    res = _run("--json", "--format", fmt)
    assert res.exit_code == 2 and "Traceback" not in res.output
    last = res.output.strip().splitlines()[-1]
    assert "--json" in last and f"--format {fmt}" in last


@pytest.mark.slow
def test_json_lists_every_obligation_with_status_method_and_scope():
    res = _run("--json", "--format", "json", "--sigma", "erf")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    obs = [o for group in d["obligations"].values() for o in group]
    assert len(obs) > 25 and {o["status"] for o in obs} == {"proved", "disproved"}
    assert all(o["method"] in ("sympy identity", "matrix calculus", "smt") and "label" in o["scope"] for o in obs)
    assert d["conventions"]["sigma"] == "erf" and "dL/dW_KQ[a,b]" in d["gradients"]
    assert any(o["scope"]["dims"] == "all" for o in obs) and any(o["scope"]["dims"] != "all" for o in obs)


@pytest.mark.slow
def test_text_prints_obligations_with_status():
    res = _run("--sigma", "relu")
    assert res.exit_code == 0, res.output
    assert "[proved] [0 < K < D] g_on - g_off = D/(N K (D-K))" in res.output
    assert "[disproved] W_P gradient vanishes" in res.output      # ReLU is not odd
    assert "[disproved] negative control: the step under x < 2K only" in res.output


def test_bad_sigma_is_one_line_error():
    res = _run("--sigma", "tanh")
    assert res.exit_code == 2 and "invalid --sigma" in res.output.strip().splitlines()[-1]
