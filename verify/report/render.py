"""index.md and index.html from one list of blocks, so both say the same thing.

Blocks: ("h", level, text, anchor), ("p", text), ("pre", text), ("table", headers, rows) where a cell is
text, (text, href), a list of cells, or a :class:`Folded` scope (its short form, the full text one click
away: ``<details>`` in HTML, a link to the part's section in Markdown), and ("img", file, caption, alt,
png_bytes). The HTML is self-contained: images are base64 data URIs and every link is an in-page anchor or a
file of the report folder.

The report opens with the paper's claims, part by part (statements of role "claim", grouped by the result
of the paper they belong to, verify.model.paper.RESULTS); then the negative controls and the toolkit's own
findings (the edge regimes outside the claims' hypotheses in their own table), each with its counts; then
the reviewer questions, the numbers, the figures and one section per part.
"""
from __future__ import annotations

import base64
import html
import json
import re
from dataclasses import dataclass

from ..evidence import VERDICTS
from ..model.paper import RESULTS, result_of
from .results import anchor, short
from .kinds import check_entries, kind_named, section_blocks
from .statements import proof_routes
from .summary import first_sentence

VERDICT_COLOURS = {"proved": "#1b7f3b", "certified": "#2e8b57", "supported": "#4a7fb5", "refuted": "#b22222",
                   "inconclusive": "#a0782c", "not checked": "#777777", "n/a": "#777777"}
COUNT_ORDER = VERDICTS + ("not checked",)
WHY_CHARS = 500      # the full reason is in the part's section


@dataclass(frozen=True)
class Folded:
    """A long text shown short, with the full text one click away (``href``: the part's section)."""

    short: str
    full: str
    href: str


def _num(x, fmt="{:.1f}"):
    return fmt.format(x) if isinstance(x, (int, float)) else "—"


def count_text(c: dict) -> str:
    """"3 certified, 1 inconclusive, 0 refuted": every verdict present, and always the refutations."""
    shown = [v for v in COUNT_ORDER if c.get(v) or v == "refuted"]
    return ", ".join(f"{c.get(v, 0)} {v}" for v in shown)


def extent_text(summary: dict, role: str) -> str:
    """"2 established over the whole statement, 5 on a finite part only": how many statements of ``role`` exact or
    rigorous records establish over all they quantify over (proved, certified), and how many on a part of it only
    (supported, with a certified part); "" for a report without the counts."""
    e = (summary.get("extents") or {}).get(role)
    if not e:
        return ""
    return f"{e['whole']} established over the whole statement, {e['part']} on a finite part only"


def roles_line(summary: dict) -> str:
    """The verdict counts per role in one line (what ``verify all`` and ``verify report`` print)."""
    r = summary["roles"]
    ext = extent_text(summary, "claim")
    return (f"the paper's claims: {count_text(r['claim'])}" + (f" ({ext})" if ext else "")
            + f"; negative controls: {count_text(r['control'])}; the toolkit's findings: {count_text(r['finding'])}")


def scope_cell(st: dict):
    return st["short_scope"] if st["short_scope"] == st["scope_label"] else Folded(
        st["short_scope"], st["scope_label"], "#" + st["anchor"])


def statement_cell(st: dict) -> str:
    return (f"`{st['id']}`: " if st.get("id") else "") + st["text"]


def timing_text(s: dict) -> str:
    """What the run took, honestly: a fully reused run or a rebuild says whose time it quotes."""
    n, k, own = s["parts"], s["reused_parts"], _num(s["part_seconds"])
    before = s.get("computed_wall_seconds")
    if s.get("rebuilt"):
        return ("Rebuilt from saved parts by `verify report`; " + (f"the run that computed them took {_num(before)} s"
                if before is not None else "the run that computed them is not timed here") + f"; parts' own time {own} s.")
    if k and k == n:
        return (f"All {n} parts reused from an earlier run" + (f" of {_num(before)} s" if before is not None else
                " (its wall time is not known)") + f"; this run took {_num(s['wall_seconds'])} s.")
    if k:
        return (f"{k} of {n} parts reused from an earlier run; this run took {_num(s['wall_seconds'])} s for the "
                f"other {n - k}; parts' own time {own} s.")
    return f"Wall time {_num(s['wall_seconds'])} s; parts' own time {own} s."


def convention_text(results: dict) -> str:
    """The run's convention in words, and which parts it does not apply to (each record says why)."""
    c = results["convention"]
    if c["reference"]:
        return (f"**Convention**: {c['words']}, the default one (`verify all --convention FILE` or the convention "
                "flags set another).")
    text = f"**Convention**: {c['words']}."
    aside = [p["name"] for p in results["parts"] if p.get("convention_note")]
    if aside:
        text += (f" It does not apply to {len(aside)} parts ({', '.join(aside)}): they ran under the reference "
                 "convention, and each part's section says why.")
    return text


def header(results: dict) -> list:
    s, prov, roles = results["summary"], results["provenance"], results["summary"]["roles"]
    ext = {role: extent_text(s, role) for role in roles}
    return [("h", 1, "verify: report", "top"),
            ("p", first_sentence(results)),
            ("p", f"Checks of *{results['paper']}*. Profile `{results['profile']}`, built {results['generated']}, "
                  f"commit `{prov['git_commit']}`. Parts: {s['ok']} finished, {s['not_ok']} not. {timing_text(s)}"),
            ("p", convention_text(results)),
            ("p", f"**The paper's claims**: {sum(roles['claim'].values())} statements, {count_text(roles['claim'])}"
                  + (f"; {ext['claim']}" if ext["claim"] else "") + ". "
                  f"**Negative controls**: {sum(roles['control'].values())}, {count_text(roles['control'])}. "
                  f"**The toolkit's own findings**: {sum(roles['finding'].values())}, {count_text(roles['finding'])}"
                  + (f"; {ext['finding']}" if ext["finding"] else "") + ". "
                  "Each is counted apart: a finding (an edge regime outside a claim's hypotheses, a sharper statement, "
                  "an answer to a reviewer) is never a verdict on the paper."),
            ("p", "Verdicts: proved = exact symbolic / SMT records covering the statement's whole scope (every size, t "
                  "and regime it quantifies over); certified = rigorous enclosures (Arb), with exact records or alone, "
                  "covering the whole statement; supported = numerics or a formal expansion agree and no counterexample, "
                  "or exact / rigorous records establish it on a finite part only (the why names that part); refuted = "
                  "a counterexample inside the hypotheses with a replay command (an exact one, a certified bound that "
                  "contradicts, or a numeric one replayed to the same conclusion at a 10x longer horizon); "
                  "inconclusive; not checked = no finished part judged it. Every verdict here is derived again from "
                  "the parts' evidence records by one rule (verify.evidence.decide), with the scope it covers (folded: "
                  "the full scope is one click away). How to read them: docs/verdicts.md. Conventions: "
                  + prov["reference_convention"] + ".")]


def _fuzz_notes(statements: list[dict]) -> dict:
    """check id -> the fuzz statements about it (verify fuzz inside its hypotheses)."""
    out = {}
    for st in statements:
        if kind_named(st["part"]).notes_on_claims and st.get("about"):
            out.setdefault(st["about"], []).append(st)
    return out


def claim_row(st: dict, group: str, fuzz: dict) -> list:
    why = short(st["why"], WHY_CHARS)
    bad = [f for f in fuzz.get(st["check"], []) if f["verdict"] == "refuted"]
    if bad:
        why += " Fuzzing found a counterexample inside its hypotheses: " + ", ".join(f["part"] for f in bad) + "."
    # the routes are worked out where the statement's records are at hand (results.json keeps them, not the records)
    routes = st["routes"] if "routes" in st else proof_routes(st)
    if routes:
        why += " " + routes
    return [group, statement_cell(st), st["verdict"], why, scope_cell(st), st.get("corrected") or "—"]


def claims_blocks(results: dict) -> list:
    """The first table: every statement of role "claim", grouped by the result of the paper it belongs to."""
    sts = [st for st in results["statements"] if st["role"] == "claim"]
    fuzz = _fuzz_notes(results["statements"])
    order = {r.name: i for i, r in enumerate(RESULTS)}
    group = {st["check"]: (result_of(st["check"]).name if result_of(st["check"]) else "Other claims") for st in sts}
    sts.sort(key=lambda st: order.get(group[st["check"]], len(order)))   # stable: the parts' own order within
    rows, last = [], None
    for st in sts:
        g = group[st["check"]]
        rows.append(claim_row(st, g if g != last else "", fuzz))
        last = g
    c = results["summary"]["roles"]["claim"]
    ext = extent_text(results["summary"], "claim")
    out = [("h", 2, "The paper's claims, part by part", "claims"),
           ("p", f"{sum(c.values())} statements, each a part of one of the paper's claims as quantified, judged on "
                 f"its own: {count_text(c)}" + (f" ({ext})" if ext else "") + ". Nothing outside a claim's hypotheses "
                 "is judged here (those regimes are the toolkit's findings, below). Where a statement fails, the "
                 "corrected statement follows.")]
    if rows:
        out.append(("table", ["result", "statement", "verdict", "why", "scope", "corrected statement"], rows))
    else:
        out.append(("p", "No claim part ran."))
    fz = [f for fs in fuzz.values() for f in fs]
    if fz:
        out.append(("p", "Fuzzing inside the claims' hypotheses (`verify fuzz`, counted with the toolkit's findings): "
                         + ", ".join(f"{f['about']} {f['verdict']}" for f in fz) + "."))
    return out


def controls_blocks(results: dict) -> list:
    sts = [st for st in results["statements"] if st["role"] == "control"]
    fuzz = _fuzz_notes(results["statements"])
    c = results["summary"]["roles"]["control"]
    out = [("h", 2, "Negative controls", "controls"),
           ("p", f"{sum(c.values())} statements false by design, run through the same machinery to show that it can "
                 f"say so: {count_text(c)}.")]
    unrefuted = [st["id"] for st in sts if st["verdict"] != "refuted"]
    if unrefuted:
        out.append(("p", "**Not refuted: " + ", ".join(map(str, unrefuted)) + "** — a negative control that is not "
                         "refuted means the checks did not find its counterexample."))
    if sts:
        out.append(("table", ["control", "verdict", "why", "fuzzing"],
                    [[statement_cell(st), st["verdict"], short(st["why"], WHY_CHARS),
                      ", ".join(f"{f['part']} {f['verdict']}" for f in fuzz.get(st["check"], [])) or "—"]
                     for st in sts]))
    return out


def relation_text(st: dict) -> str:
    rel, about = st.get("relation"), st.get("about")
    if rel == "outside":
        return f"outside the hypotheses of {about}" if about else "outside the hypotheses"
    if rel and about:
        return f"{rel}: {about}"
    return rel or "—"


def findings_blocks(results: dict) -> list:
    """The toolkit's own findings: the edge regimes outside the claims' hypotheses first, in their own table."""
    sts = [st for st in results["statements"] if st["role"] == "finding"]
    edges = [st for st in sts if st.get("relation") == "outside"]
    rest = [st for st in sts if st.get("relation") != "outside"]
    c = results["summary"]["roles"]["finding"]
    out = [("h", 2, "The toolkit's own findings", "findings"),
           ("p", f"{len(sts)} statements of the toolkit's own — sharper statements beside a claim, answers to the "
                 f"reviewers, edge regimes outside the claims' hypotheses, and what the built-in parts find: "
                 f"{count_text(c)}. None is a verdict on the paper.")]

    def table(rows):
        return ("table", ["part", "statement", "relation", "verdict", "why", "scope"],
                [[(st["part"], "#" + st["anchor"]), statement_cell(st), relation_text(st), st["verdict"],
                  short(st["why"], WHY_CHARS), scope_cell(st)] for st in rows])
    out.append(("h", 3, "Outside the claims' hypotheses", "findings-outside"))
    cnt = {}
    for st in edges:
        cnt[st["verdict"]] = cnt.get(st["verdict"], 0) + 1
    out.append(("p", f"{len(edges)} statements about regimes the claims do not speak of (e.g. K = 0, where S* = 0 is "
                     f"not a member of the teacher class, or K = D): {count_text(cnt)}."))
    if edges:
        out.append(table(edges))
    out.append(("h", 3, "Beside the claims, and from the toolkit's parts", "findings-other"))
    if rest:
        out.append(table(rest))
    return out


def questions_blocks(results: dict) -> list:
    rows = []
    for q in results["questions"]:
        ev = [(f"{e['part']} ({e['verdict']})", "#" + e["anchor"]) for e in q["evidence"]] or ["—"]
        judged = (f"[{q['role']}] " if q.get("role") else "") + (q.get("statement") or "—")
        rows.append([str(q["number"]), q["question"], q["verdict"], judged, q["scope"], short(q["finding"], 480), ev])
    return [("h", 2, "Reviewer questions", "questions"),
            ("p", "One row per question of docs/paper.md. The verdict is the statement that answers it most directly "
                  "(named in the row with how it stands to the paper); every part that answers it is linked with its "
                  "verdict. A question no finished part answers reads 'not checked'."),
            ("table", ["#", "question", "verdict", "statement judged", "scope", "finding", "evidence"], rows)]


def numbers_blocks(results: dict) -> list:
    """Every number a claim or probe reports, by key: what the README quotes (verify.report.readme)."""
    rows = [[(f"{c['kind']} {c['id']}", "#" + anchor(c["part"])), f"`{key}`", short(json.dumps(value), 300)]
            for c in check_entries(results) for key, value in (c.get("numbers") or {}).items()]
    if not rows:
        return []
    return [("h", 2, "Numbers", "numbers"),
            ("p", "Each claim's and probe's numbers, by key (`numbers[key]` of its entry in results.json; the full "
                  "values are there and in its evidence file). The README quotes them by these keys."),
            ("table", ["check", "key", "value"], rows)]


def figures_blocks(results: dict, figures: list) -> list:
    out = [("h", 2, "Figures", "figures")]
    for fname, caption, png in figures:
        out.append(("img", fname, caption, f"figure {fname.removeprefix('figures/').removesuffix('.png')}", png))
    errors = results.get("figure_errors") or []
    if not figures and not errors:
        out.append(("p", "No figure: the parts that provide their data did not finish."))
    if errors:
        out.append(("p", f"**{len(errors)} figure(s) failed to draw** (the data are in the parts' evidence files):"))
        out.append(("table", ["figure", "source part", "error"],
                    [[e["file"], (e["source"], "#" + anchor(e["source"])), short(e["error"], 300)] for e in errors]))
    return out


def part_blocks(p: dict) -> list:
    out = [("h", 3, p["name"], p["anchor"]),
           ("p", f"Status **{p['status']}**, verdict **{p['verdict']}** ({p['scope_label']}), {p['seconds']:.2f} s"
                 + (" (reused)" if p["reused"] else "") + f". {p['finding']}"),
           ("p", f"Why: {p['reason']}")]
    if p.get("convention_note"):
        out.append(("p", f"The run's convention {p['convention_note']}."))
    for line in p.get("not_honoured") or []:
        out.append(("p", f"Convention: {line}."))
    if p["statements"]:
        out.append(("table", ["statement", "role", "verdict", "scope", "why", "corrected statement"],
                    [[statement_cell(st), st["role"] + (f" ({relation_text(st)})" if st.get("relation") else ""),
                      st["verdict"], st["scope_label"], st["why"], st.get("corrected") or "—"] for st in p["statements"]]))
    if p["replay"]:
        out.append(("pre", p["replay"]))
    if p["error"]:
        out.append(("pre", short(p["error"], 3000)))
    out.append(("table", ["evidence"], [[(p["evidence"], p["evidence"])]]))
    return out


def parts_blocks(results: dict) -> list:
    out = [("h", 2, "Parts", "parts"),
           ("table", ["part", "status", "verdict", "scope", "seconds", "finding", "evidence"],
            [[(p["name"], "#" + p["anchor"]), p["status"], p["verdict"], short(p["scope_label"], 160),
              f"{p['seconds']:.1f}", short(p["finding"], 160), [("json", p["evidence"])]] for p in results["parts"]])]
    for p in results["parts"]:
        out += part_blocks(p)
    return out


def provenance_blocks(results: dict) -> list:
    prov = results["provenance"]
    return [("h", 2, "Provenance", "provenance"),
            ("table", ["package", "version"], [[k, v] for k, v in prov["packages"].items()]),
            ("pre", json.dumps({k: prov[k] for k in ("git_commit", "python", "platform", "profile", "seeds",
                                                      "precisions", "conventions", "run_times")}, indent=1))]


def blocks(results: dict, figures: list[tuple[str, str, bytes]]) -> list:
    """The report's content, in order (module docstring)."""
    return (header(results) + claims_blocks(results) + controls_blocks(results) + findings_blocks(results)
            + questions_blocks(results) + numbers_blocks(results) + figures_blocks(results, figures)
            + section_blocks(results) + parts_blocks(results) + provenance_blocks(results))


# --- Markdown ------------------------------------------------------------------------------------
def _md_cell(c) -> str:
    if isinstance(c, Folded):
        return f"[{_md_cell(c.short)}]({c.href})"
    if isinstance(c, tuple):
        return f"[{c[0]}]({c[1]})"
    if isinstance(c, list):
        return ", ".join(_md_cell(x) for x in c)
    # a table cell is plain text: '*' (S*, V*) must not start emphasis, '|' must not end the cell
    return str(c).replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("\n", " ")


def markdown(bl: list) -> str:
    lines = []
    for b in bl:
        if b[0] == "h":
            lines += [f'<a id="{b[3]}"></a>', "", "#" * b[1] + " " + b[2], ""]
        elif b[0] == "p":
            lines += [b[1], ""]
        elif b[0] == "pre":
            lines += ["```", b[1], "```", ""]
        elif b[0] == "table":
            lines.append("| " + " | ".join(b[1]) + " |")
            lines.append("|" + "---|" * len(b[1]))
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b[2]]
            lines.append("")
        elif b[0] == "img":      # the caption once, below the image; the alt text names the figure
            lines += [f"![{b[3]}]({b[1]})", "", f"*{b[2]}*", ""]
    return "\n".join(lines)


# --- HTML ----------------------------------------------------------------------------------------
# The page fits the screen (a phone's 390 px as a 1400 px window): the viewport is the device's width; a table
# wider than the page scrolls inside its own box (div.table), never the page; a long number or name breaks
# anywhere rather than widening its column; and the verdict cells stick to the box's edges (sticky on both
# sides), so the verdict stays in view however the table is scrolled. tests/test_report_browser.py measures it.
VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'
CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222;
overflow-wrap:break-word}
div.table{max-width:100%;overflow-x:auto;margin:1em 0}table{border-collapse:collapse;font-size:.9em}
td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left;overflow-wrap:anywhere}
th{background:#f2f2f2}td.verdict,th.verdict{position:sticky;left:0;right:0;background:#fff;overflow-wrap:normal;
white-space:nowrap}th.verdict{background:#f2f2f2}pre{background:#f7f7f7;padding:.6em;overflow-x:auto;
font-size:.8em;white-space:pre-wrap;overflow-wrap:anywhere}img{max-width:100%}figure{margin:1em 0}
.v{font-weight:600}details summary{cursor:pointer}code{overflow-wrap:anywhere}"""


def _code(text: str) -> str:
    """Escape, then render `code` spans."""
    return re.sub(r"`(.+?)`", r"<code>\1</code>", html.escape(text))


def _inline(text: str) -> str:
    """Escape, then render **bold**, *italic* and `code` (the only inline markup the paragraphs use)."""
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", _code(text))
    return re.sub(r"(?<![*\w])\*(?!\s)(.+?)\*(?![*\w])", r"<i>\1</i>", t)


def _html_cell(c) -> str:
    if isinstance(c, Folded):
        return f"<details><summary>{html.escape(c.short)}</summary>{html.escape(c.full)}</details>"
    if isinstance(c, tuple):
        return f'<a href="{html.escape(c[1], quote=True)}">{html.escape(c[0])}</a>'
    if isinstance(c, list):
        return ", ".join(_html_cell(x) for x in c)
    txt = str(c)
    if txt in VERDICT_COLOURS:
        return f'<span class="v" style="color:{VERDICT_COLOURS[txt]}">{html.escape(txt)}</span>'
    return _code(txt)         # a cell is plain text: the '**' of D**4 is a power, not bold


def html_page(bl: list, title: str = "verify report") -> str:
    body = []
    for b in bl:
        if b[0] == "h":
            body.append(f'<h{b[1]} id="{html.escape(b[3], quote=True)}">{html.escape(b[2])}</h{b[1]}>')
        elif b[0] == "p":
            body.append(f"<p>{_inline(b[1])}</p>")
        elif b[0] == "pre":
            body.append(f"<pre>{html.escape(b[1])}</pre>")
        elif b[0] == "table":
            cls = [' class="verdict"' if h == "verdict" else "" for h in b[1]]
            head = "".join(f"<th{k}>{html.escape(h)}</th>" for k, h in zip(cls, b[1]))
            rows = "".join("<tr>" + "".join(f"<td{k}>{_html_cell(c)}</td>" for k, c in zip(cls, row)) + "</tr>"
                           for row in b[2])
            body.append(f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>')
        elif b[0] == "img":
            data = base64.b64encode(b[4]).decode()
            body.append(f'<figure id="{anchor(b[1])}"><img alt="{html.escape(b[3], quote=True)}" '
                        f'src="data:image/png;base64,{data}"><figcaption>{_inline(b[2])}</figcaption></figure>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{VIEWPORT}<title>{html.escape(title)}'
            f"</title><style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
