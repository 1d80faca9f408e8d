"""index.md and index.html from one list of blocks, so both say the same thing.

Blocks: ("h", level, text, anchor), ("p", text), ("pre", text), ("table", headers, rows) where a cell
is text or (text, href), and ("img", file, caption, png_bytes). The HTML is self-contained: images
are base64 data URIs and every link is an in-page anchor or a file of the report folder.
"""
from __future__ import annotations

import base64
import html
import json

from .results import anchor, short

VERDICT_COLOURS = {"proved": "#1b7f3b", "certified": "#2e8b57", "supported": "#4a7fb5", "refuted": "#b22222",
                   "inconclusive": "#a0782c", "not checked": "#777777", "n/a": "#777777"}


def _fr(text):
    from fractions import Fraction
    return Fraction(str(text))


def _frac(x) -> str:
    """An exact rational string as a short decimal (the exact value is in the part's evidence file)."""
    from fractions import Fraction
    try:
        return f"{float(Fraction(str(x))):.6g}"
    except (TypeError, ValueError, ZeroDivisionError):
        return str(x)


def _num(x, fmt="{:.1f}"):
    return fmt.format(x) if isinstance(x, (int, float)) else "—"


def blocks(results: dict, figures: list[tuple[str, str, bytes]]) -> list:
    """The report's content, in order."""
    s, prov = results["summary"], results["provenance"]
    out = [("h", 1, "verify: report", "top"),
           ("p", f"Checks of *{results['paper']}*. Profile `{results['profile']}`, built {results['generated']}, "
                 f"commit `{prov['git_commit']}`. Parts: {s['ok']} finished, {s['not_ok']} not "
                 f"({s['reused_parts']} reused from an earlier run); wall time "
                 f"{_num(s['wall_seconds'])} s, parts' own time {_num(s['part_seconds'])} s."),
           ("p", "Verdicts: proved = exact symbolic / SMT records covering the statement's whole scope; certified = "
                 "exact or rigorous-enclosure (Arb) records over the finite scope they state; supported = numerics "
                 "agree, no counterexample; refuted = a counterexample inside the hypotheses with a replay command "
                 "(a numeric one replayed to the same conclusion at a 10x longer horizon); inconclusive; not checked "
                 "= no finished part answers it. Every verdict here is derived again from the parts' evidence "
                 "records by one rule (verify.evidence.decide), and each is shown with the scope it covers: "
                 "\"all dimensions\" and \"checked at dimensions {...}\" read differently. Conventions: "
                 + prov["reference_convention"] + "."),
           ("table", ["verdict", "parts"], [[k, str(v)] for k, v in sorted(s["verdicts"].items())]),
           ("h", 2, "Reviewer questions", "questions"),
           ("p", "One row per question of docs/paper.md. The verdict judges the statement named in the row, in the "
                 "scope shown: it is the headline statement of the part that answers the question most directly "
                 "(its further statements, with their own verdicts, follow in the finding; parts whose verdicts "
                 "differ are named after 'Also:'), or, when no such part ran, the strongest verdict among the parts "
                 "that answer it, a refutation first. Every part is linked.")]
    rows = []
    for q in results["questions"]:
        ev = [(e["part"], "#" + e["anchor"]) for e in q["evidence"]] or ["—"]
        rows.append([str(q["number"]), q["question"], q["verdict"], q.get("statement") or "—", q.get("scope") or "—",
                     q["finding"], ev])
    out.append(("table", ["#", "question", "verdict", "statement judged", "scope", "finding", "evidence"], rows))
    nums = [n for n in results.get("headline_numbers") or [] if n["value"] is not None or n["missing"]]
    if nums:
        out.append(("h", 2, "Numbers behind the findings", "numbers"))
        out.append(("p", "Each number is read from one saved part (linked); the README quotes these."))
        ran = {p["name"] for p in results["parts"]}
        out.append(("table", ["number", "value", "part"],
                    [[n["name"], short(json.dumps(n["value"]), 400) if n["value"] is not None else f"— ({n['missing']})",
                      (n["part"], "#" + anchor(n["part"])) if n["part"] in ran else n["part"]] for n in nums]))
    out.append(("h", 2, "Figures", "figures"))
    for fname, caption, png in figures:
        out.append(("img", fname, caption, png))
    errors = results.get("figure_errors") or []
    if not figures and not errors:
        out.append(("p", "No figure: the parts that provide their data did not finish."))
    if errors:
        out.append(("p", f"**{len(errors)} figure(s) failed to draw** (the data are in the parts' evidence files):"))
        out.append(("table", ["figure", "source part", "error"],
                    [[e["file"], (e["source"], "#" + anchor(e["source"])), short(e["error"], 300)] for e in errors]))
    conv = results.get("convergence")
    if conv:
        out.append(("h", 2, "Theorem 3.1: fitted slopes", "slopes"))
        out.append(("table", ["quantity", "fitted slope in T", "claimed slope", "fit range", "GD / derived leading term at T",
                              "derived leading term", "claimed order"],
                    [[q, f"{d['fitted_slope']:.4f}", f"{d['claimed_slope']:g}", f"{d['fit_range'][0]}–{d['fit_range'][1]}",
                      _num(d.get("ratio_to_leading_term_at_T"), "{:.4f}"), d.get("leading_term", ""),
                      d.get("claimed_order", "")] for q, d in conv["quantities"].items()]))
    cert = results.get("certify")
    if cert:
        out.append(("h", 2, "All-time certificates (verify certify)", "certify"))
        out.append(("p", f"**{cert['verdict']}** ({cert['scope_label']}): {cert['finding']}"))
        if cert.get("T0") is not None:
            reg = cert.get("region") or {}
            out.append(("p", f"Certificate: a certified Arb prefix from zero initialisation to T0 = {cert['T0']}; "
                             f"the trapping region {reg.get('definition')} with u0 = {reg.get('u0')}, C = {reg.get('C')}, "
                             f"mapped into itself by the exact reduced map (Arb over boxes); (u - u')/u^3 in "
                             f"[{_frac(cert.get('a'))}, {_frac(cert.get('b'))}] on the region, tightened on "
                             f"{cert.get('shells')} nested shells towards the derived cubic coefficient "
                             f"c = {cert.get('cubic_coefficient_c')}; {cert.get('obligations')} obligations discharged "
                             "(SymPy, z3 and cvc5, Arb). Figure: figures/certify.png."))
            out.append(("table", ["T", "L - L_opt", "‖S − S*‖_F", "‖W_X − V*‖_F"],
                        [[f"{b['T']:.0e}"] + [f"[{b[q][0]}, {b[q][1]}]" for q in ("excess_loss", "s_err", "w_err")]
                         for b in cert.get("bounds") or []]))
            out.append(("table", ["for every T >= T0", "c_lo", "c_hi", "limit as T -> infinity in"],
                        [[k["statement"], k["c_lo"], k["c_hi"],
                          f"[{cert['asymptotic'][q]['liminf_ge']}, {cert['asymptotic'][q]['limsup_le']}]"]
                         for q, k in (cert.get("constants") or {}).items()]))
            if cert.get("recheck"):
                out.append(("pre", cert["recheck"]))
        for lab, e in (cert.get("exact_cases") or {}).items():
            out.append(("p", f"{lab}: {e['note']} (`{e['replay']}`)"))
        fam = cert.get("family") or {}
        if fam.get("normalised_limits"):
            at = fam["limits_at_largest_D"]
            out.append(("p", f"Beside the single regime, a whole family: {fam['label']} (every integer D, every eta in "
                             f"the range, ||V*|| = 1), {fam['cells']} cells each certified for all its members "
                             "(`verify certify` with ranges). For every member, lim q(T)/leading_q(T):"))
            out.append(("table", ["quantity", "lim q/leading_q - 1, every member", f"lim (eta T)^p q at D = {at['D']}"],
                        [[q, f"[{float(_fr(lo) - 1):.2e}, {float(_fr(hi) - 1):.2e}]",
                          f"[{float(_fr(at[q][0])):.10g}, {float(_fr(at[q][1])):.10g}]"]
                         for q, (lo, hi) in fam["normalised_limits"].items()]))
    rec = results.get("reconcile")
    if rec:
        out.append(("h", 2, "Which convention? (verify reconcile)", "reconcile"))
        out.append(("p", "Each convention is a constant times a symbolic power of D: N = n D^a, g = eta_KQ lambda^2 "
                         "beta^2 = eta g0 D^b (the effective step of the attention logits; beta is the logit "
                         "temperature), h = c_L v = h0 D^c. The leading terms are derived with SymPy; the exponent "
                         f"vectors reproducing every claimed dependence of Theorem 3.1 are solved for exactly "
                         f"(status: {rec.get('status')}). T*: {rec.get('tstar_definition')}. Figure: "
                         "figures/convention.png."))
        lt = rec.get("leading_terms") or {}
        dx = rec.get("d_exponents") or {}
        out.append(("table", ["quantity", "leading term (N, g, h)", "D-exponent (a, b, c)"],
                    [[q, str(lt.get(q, "")), str(dx.get(q, ""))] for q in dx]))
        out.append(("table", ["solution (a, b, c)", "T* exponent", "fitted D-exponents (GD)", "fit errors"],
                    [[", ".join(f"{k} = {v}" for k, v in sol["exponents"].items()), str(sol.get("tstar_exponent")),
                      ", ".join(f"{q} {v:.3f}" for q, v in (sol.get("fits") or {}).items()),
                      ", ".join(f"{q} {v:.3f}" for q, v in (sol.get("fit_errors") or {}).items())]
                     for sol in rec.get("solutions") or []]))
        out.append(("table", ["statement", "verdict", "scope", "why"],
                    [[st["statement"], st["verdict"], st["scope_label"], short(st["reason"], 300)]
                     for st in rec.get("statements") or []]))
    der = results.get("derivation")
    if der:
        out.append(("h", 2, "Derivation", "derivation"))
        out.append(("pre", json.dumps(der.get("asymptotics", {}), indent=1)))
        red = der.get("reduction", {})
        out.append(("table", ["sigma", "reduction proved", "obligations"],
                    [[sg, str(r.get("proved")), "; ".join(f"{o['name']}: {o['holds']}" for o in r.get("obligations", []))]
                     for sg, r in red.items()]))
    out.append(("h", 2, "Parts", "parts"))
    out.append(("table", ["part", "status", "verdict", "scope", "seconds", "finding", "evidence"],
                [[(p["name"], "#" + p["anchor"]), p["status"], p["verdict"], short(p["scope_label"], 160),
                  f"{p['seconds']:.1f}", short(p["finding"], 160), [("json", p["evidence"])]] for p in results["parts"]]))
    for p in results["parts"]:
        out.append(("h", 3, p["name"], p["anchor"]))
        out.append(("p", f"Status **{p['status']}**, verdict **{p['verdict']}** ({p['scope_label']}), "
                         f"{p['seconds']:.2f} s" + (" (reused)" if p["reused"] else "") + f". {p['finding']}"))
        out.append(("p", f"Why: {p['reason']}"))
        if len(p["statements"]) > 1:
            out.append(("table", ["statement", "verdict", "scope", "why"],
                        [[st["statement"], st["verdict"], st["scope_label"], short(st["reason"], 300)]
                         for st in p["statements"]]))
        if p["replay"]:
            out.append(("pre", p["replay"]))
        if p["error"]:
            out.append(("pre", short(p["error"], 3000)))
        out.append(("table", ["evidence"], [[(p["evidence"], p["evidence"])]]))
    out.append(("h", 2, "Provenance", "provenance"))
    out.append(("table", ["package", "version"], [[k, v] for k, v in prov["packages"].items()]))
    out.append(("pre", json.dumps({k: prov[k] for k in ("git_commit", "python", "platform", "profile", "seeds",
                                                         "precisions", "conventions", "run_times")}, indent=1)))
    return out


# --- Markdown ------------------------------------------------------------------------------------
def _md_cell(c) -> str:
    if isinstance(c, tuple):
        return f"[{c[0]}]({c[1]})"
    if isinstance(c, list):
        return ", ".join(_md_cell(x) for x in c)
    return str(c).replace("|", "\\|").replace("\n", " ")


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
        elif b[0] == "img":
            lines += [f"![{b[2]}]({b[1]})", "", f"*{b[2]}*", ""]
    return "\n".join(lines)


# --- HTML ----------------------------------------------------------------------------------------
CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.3em .5em;
vertical-align:top;text-align:left}th{background:#f2f2f2}pre{background:#f7f7f7;padding:.6em;overflow-x:auto;
font-size:.8em;white-space:pre-wrap}img{max-width:100%}figure{margin:1em 0}.v{font-weight:600}"""


def _inline(text: str) -> str:
    """Escape, then render **bold**, *italic* and `code` (the only inline markup the blocks use)."""
    import re
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
    t = re.sub(r"(?<![*\w])\*(?!\s)(.+?)\*(?![*\w])", r"<i>\1</i>", t)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", t)


def _html_cell(c) -> str:
    if isinstance(c, tuple):
        return f'<a href="{html.escape(c[1], quote=True)}">{html.escape(c[0])}</a>'
    if isinstance(c, list):
        return ", ".join(_html_cell(x) for x in c)
    txt = str(c)
    if txt in VERDICT_COLOURS:
        return f'<span class="v" style="color:{VERDICT_COLOURS[txt]}">{html.escape(txt)}</span>'
    return _inline(txt)


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
            head = "".join(f"<th>{html.escape(h)}</th>" for h in b[1])
            rows = "".join("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>" for row in b[2])
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif b[0] == "img":
            data = base64.b64encode(b[3]).decode()
            body.append(f'<figure id="{anchor(b[1])}"><img alt="{html.escape(b[2], quote=True)}" '
                        f'src="data:image/png;base64,{data}"><figcaption>{_inline(b[2])}</figcaption></figure>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
