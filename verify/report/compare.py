"""Two report folders side by side (``verify compare A B``): the statements whose verdicts differ, those whose
verdict agrees but whose evidence summary (the counterexample, the fitted number) differs, and the headline
numbers of the claims and probes that differ, with each report's convention in the header.

What is compared is each folder's results.json: a statement by its id, a number by its part and its key path
in the part's ``numbers`` (e.g. ``probe:d-eq-k / sts D=K=6 / fitted_rate_w_err``). Two numbers differ when
they are not equal to 9 significant digits (math.isclose, rel_tol 1e-9): what float64 runs of one code
version agree to when nothing changed.
"""
from __future__ import annotations

import math
from pathlib import Path

from ..errors import InvalidParameter
from ..inputs import read_json
from .kinds import check_entries

REL_TOL = 1e-9


def load_results(flag: str, path) -> dict:
    """results.json of a report folder (or the file itself), or InvalidParameter naming ``flag``."""
    p = Path(path)
    f = p / "results.json" if p.is_dir() else p
    if not f.is_file():
        raise InvalidParameter(flag, str(path), "must be a report folder holding results.json (written by "
                               "`verify all` or `verify report`)")
    res = read_json(f, flag, what="results.json")
    if not isinstance(res, dict) or "statements" not in res or "parts" not in res:
        raise InvalidParameter(flag, str(path), "must hold a results.json of `verify all` (statements, parts)")
    return res


def _scalars(prefix: str, obj, out: dict) -> None:
    if isinstance(obj, bool) or obj is None:
        return
    if isinstance(obj, (int, float)):
        out[prefix] = float(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _scalars(f"{prefix} / {k}", v, out)


def numbers_of(results: dict) -> dict[str, float]:
    """{"part / key / ...": value} of every numeric headline of the claims and probes (their ``numbers``)."""
    out: dict[str, float] = {}
    for entry in check_entries(results):
        if isinstance(entry, dict) and entry.get("part"):
            _scalars(entry["part"], entry.get("numbers") or {}, out)
    return out


def convention_words(results: dict) -> str:
    c = results.get("convention")
    return c["words"] if isinstance(c, dict) else "not recorded (a report older than the convention field)"


def _differ(x: float, y: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return not (math.isnan(x) and math.isnan(y))
    return not math.isclose(x, y, rel_tol=REL_TOL, abs_tol=0.0)


def differences(a: dict, b: dict) -> dict:
    """{"verdicts": [...], "reasons": [...], "numbers": [...], "only": [...]}: statements (by id) whose verdicts
    differ, statements with the same verdict and another evidence summary ("why"), numbers that differ, and
    statements one report has and the other has not."""
    sa, sb = ({st["id"]: st for st in r["statements"]} for r in (a, b))
    verdicts, reasons = [], []
    for sid in [s for s in sa if s in sb]:
        x, y = sa[sid], sb[sid]
        row = {"id": sid, "part": x["part"], "a": x["verdict"], "b": y["verdict"], "why_a": x.get("why") or "",
               "why_b": y.get("why") or ""}
        if x["verdict"] != y["verdict"]:
            verdicts.append(row)
        elif row["why_a"] != row["why_b"]:
            reasons.append(row)
    na, nb = numbers_of(a), numbers_of(b)
    numbers = [{"name": k, "a": na[k], "b": nb[k]} for k in na if k in nb and _differ(na[k], nb[k])]
    only = [{"id": s, "in": "A"} for s in sa if s not in sb] + [{"id": s, "in": "B"} for s in sb if s not in sa]
    return {"verdicts": verdicts, "reasons": reasons, "numbers": numbers, "only": only}


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown(path_a, path_b, a: dict, b: dict, diff: dict) -> str:
    """The comparison as Markdown: the header (each report, its profile and convention), then one table per kind
    of difference."""
    out = ["# verify compare", "",
           f"- **A**: `{path_a}` (profile {a.get('profile')}): {convention_words(a)}",
           f"- **B**: `{path_b}` (profile {b.get('profile')}): {convention_words(b)}", ""]
    n = sum(len(diff[k]) for k in ("verdicts", "reasons", "numbers", "only"))
    if not n:
        return "\n".join(out + ["No statement's verdict or evidence summary and no headline number differs.", ""])
    if diff["verdicts"]:
        out += [f"## Verdicts that differ ({len(diff['verdicts'])})", "", "| statement | part | A | B | why (A) | why (B) |",
                "|---|---|---|---|---|---|"]
        out += [f"| `{r['id']}` | {r['part']} | {r['a']} | {r['b']} | {_cell(r['why_a'])} | {_cell(r['why_b'])} |"
                for r in diff["verdicts"]]
        out.append("")
    if diff["reasons"]:
        out += [f"## Same verdict, other evidence ({len(diff['reasons'])})", "",
                "| statement | verdict | why (A) | why (B) |", "|---|---|---|---|"]
        out += [f"| `{r['id']}` | {r['a']} | {_cell(r['why_a'])} | {_cell(r['why_b'])} |" for r in diff["reasons"]]
        out.append("")
    if diff["numbers"]:
        out += [f"## Headline numbers that differ ({len(diff['numbers'])})", "", "| number | A | B | B / A |",
                "|---|---|---|---|"]
        out += [f"| {_cell(r['name'])} | {r['a']:.10g} | {r['b']:.10g} | "
                f"{(r['b'] / r['a']):.6g} |" if r["a"] else f"| {_cell(r['name'])} | {r['a']:.10g} | {r['b']:.10g} | — |"
                for r in diff["numbers"]]
        out.append("")
    if diff["only"]:
        out += [f"## In one report only ({len(diff['only'])})", ""]
        out += [f"- `{r['id']}`: only in {r['in']}" for r in diff["only"]]
        out.append("")
    return "\n".join(out)


__all__ = ["load_results", "numbers_of", "differences", "markdown", "convention_words", "REL_TOL"]
