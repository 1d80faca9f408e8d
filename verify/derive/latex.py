"""``verify derive --format latex``: the derivation as a standalone LaTeX document.

Every formula is SymPy's own expression printed by ``sympy.latex`` (after :func:`verify.derive.tidy.tidy`);
text (obligation statements, conventions) is escaped and set in typewriter type. The document needs
only amsmath/amssymb/geometry/fontenc, so any TeX installation compiles it.
"""
from __future__ import annotations

import sympy as sp

from ..model.symbols import vn, vnorm

PREAMBLE = r"""\documentclass[10pt]{article}
\usepackage[T1]{fontenc}
\usepackage{amsmath,amssymb}
\usepackage[margin=2cm,landscape]{geometry}
\allowdisplaybreaks
\setlength{\parindent}{0pt}
\begin{document}
"""
_ESC = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "^": r"\^{}",
        "_": r"\_", "%": r"\%", "~": r"\~{}"}

# display names of the keys that are mathematical objects
LHS = {"ell": r"\ell(A, C, B, \mu_u, \mu_z)", "dell_dmu_at_zero": r"\partial_{\mu_u}\ell\,\big|_{\mu=0}",
       "L": "L", "dL/dW_X[m,q]": r"\frac{\partial L}{\partial (W_X)_{m,q}}",
       "dL/dW_P[m,k]": r"\frac{\partial L}{\partial (W_P)_{m,k}}", "dL/dS[i,j]": r"\frac{\partial L}{\partial S_{i,j}}",
       "dL/dLambda[i,j]": r"\frac{\partial L}{\partial \Lambda_{i,j}}",
       "dL/dW_KQ[a,b]": r"\frac{\partial L}{\partial (W_{KQ})_{a,b}}", "r_m": "r_m", "alpha_next": r"\alpha_m^{+}",
       "delta_increment_per_row": r"\Delta\delta_m", "support_mass": r"p = \sum_{i \in g_j} S_{i,j}",
       "delta_factor": r"c_\delta", "dL/dW_X": r"\frac{\partial L}{\partial W_X}",
       "dL/dW_P": r"\frac{\partial L}{\partial W_P}",
       "dL/dS": r"\frac{\partial L}{\partial S}", "excess_loss": r"L - L_{\mathrm{opt}}", "s_err": r"\|S - S^*\|_F",
       "w_err": r"\|W_X - V^*\|_F", "u": "u", "c": "c", "off_support_mass": "u",
       "cubic_coefficient_c": "c"}


def text(s) -> str:
    """Plain text, escaped for LaTeX."""
    return "".join(_ESC.get(ch, ch) for ch in str(s))


def tt(s) -> str:
    return r"\texttt{" + text(s) + "}"


def _names() -> dict:
    return {vnorm: r"\|V^*\|_F", vn: r"\|v^*_m\|^2"}


def math(key: str, value) -> str:
    """One display equation ``key = value`` (an Eq prints as itself); long sums split over rows."""
    body = sp.latex(value, symbol_names=_names())
    if not isinstance(value, sp.Eq):
        body = LHS.get(key, r"\text{" + text(key) + "}") + " = " + body
    rows = _split(body)
    env = "multline*" if "\\\\\n" in rows else "equation*"
    return f"\\begin{{{env}}}\n{rows}\n\\end{{{env}}}\n"


def _split(body: str, width: int = 170) -> str:
    """Break a long top-level sum into multline rows at ' + ' / ' - ' outside every brace and \\left..\\right."""
    if len(body) <= width:
        return body
    depth, out, line, i = 0, [], "", 0
    while i < len(body):
        ch = body[i]
        if body.startswith(r"\left", i):
            depth += 1
        elif body.startswith(r"\right", i):
            depth -= 1
        escaped = i > 0 and body[i - 1] == "\\"
        if ch == "{" and not escaped:
            depth += 1
        elif ch == "}" and not escaped:
            depth -= 1
        if depth == 0 and ch in "+-" and body[i - 1:i] == " " and body[i + 1:i + 2] == " " and len(line) > width:
            out.append(line)
            line = ""
        line += ch
        i += 1
    out.append(line)
    return " \\\\\n".join(out)


def _section(title: str) -> str:
    return "\\section*{" + text(title) + "}\n"


def _obligations(title: str, obs: list[dict]) -> str:
    out = ["\\subsection*{" + text(title) + "}", "\\begin{itemize}"]
    for o in obs:
        line = (r"\item \textbf{" + text(o["status"]) + "} " + tt(o["name"]) + r" \\ {\small " + text(o["method"])
                + "; " + text(o["scope"]["label"]) + f"; {o['seconds']:.2f} s")
        if o.get("role") == "outside":
            line += "; negative control (outside the hypotheses)"
        if o.get("counterexample"):
            line += "; counterexample " + tt(o["counterexample"])
        out.append(line + "}")
    out.append("\\end{itemize}")
    return "\n".join(out) + "\n"


def _block(d, depth=0) -> str:
    """Render a dict of SymPy values / text / nested dicts."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict) and v and all(isinstance(x, dict) and "status" in x for x in v.values()):
            out.append(_obligations(k, list(v.values())))
        elif isinstance(v, list) and v and all(isinstance(x, dict) and "status" in x for x in v):
            out.append(_obligations(k, v))
        elif isinstance(v, dict):
            out.append(("\\subsection*{" if depth == 0 else "\\paragraph{") + text(k) + "}\n" + _block(v, depth + 1))
        elif isinstance(v, (sp.Basic, sp.MatrixBase)) and not isinstance(v, (sp.logic.boolalg.BooleanAtom,)):
            out.append(math(k, v))
        else:
            out.append(tt(k) + ": " + text(v) + "\n\n")
    return "".join(out)


def document(sections: dict, title: str) -> str:
    """A standalone document: one section per key of ``sections`` (values: dicts as :func:`_block` reads)."""
    body = ["\\begin{center}{\\Large " + text(title) + "}\\end{center}\n"]
    for name, content in sections.items():
        body.append(_section(name))
        body.append(_block(content) if isinstance(content, dict) else text(content) + "\n")
    return PREAMBLE + "".join(body) + "\\end{document}\n"


__all__ = ["document", "math", "text", "tt"]
