"""The report's sections on the built-in parts of ``verify all``: fitted slopes (convergence), the all-time
certificates (certify), the convention reconciliation (reconcile) and the derivation (derive), as blocks of
verify.report.render, each from its part kind's section of results.json (verify.report.kinds says which kind
renders with which, and in which order)."""
from __future__ import annotations

import json
from fractions import Fraction

from .text import short


def _frac(x) -> str:
    """An exact rational string as a short decimal (the exact value is in the part's evidence file)."""
    try:
        return f"{float(Fraction(str(x))):.6g}"
    except (TypeError, ValueError, ZeroDivisionError):
        return str(x)


def _ratio(x) -> str:
    return f"{x:.4f}" if isinstance(x, (int, float)) else "—"


def slopes_blocks(conv: dict | None) -> list:
    if not conv:
        return []
    return [("h", 2, "Theorem 3.1: fitted slopes", "slopes"),
            ("table", ["quantity", "fitted slope in T", "claimed slope", "fit range", "GD / derived leading term at T",
                       "derived leading term", "claimed order"],
             [[q, f"{d['fitted_slope']:.4f}", f"{d['claimed_slope']:g}", f"{d['fit_range'][0]}–{d['fit_range'][1]}",
               _ratio(d.get("ratio_to_leading_term_at_T")), d.get("leading_term", ""), d.get("claimed_order", "")]
              for q, d in conv["quantities"].items()])]


def certificate_blocks(cert: dict) -> list:
    reg = cert.get("region") or {}
    out = [("p", f"Certificate: a certified Arb prefix from zero initialisation to T0 = {cert['T0']}; the trapping "
                 f"region {reg.get('definition')} with u0 = {reg.get('u0')}, C = {reg.get('C')}, mapped into itself by "
                 f"the exact reduced map (Arb over boxes); (u - u')/u^3 in [{_frac(cert.get('a'))}, "
                 f"{_frac(cert.get('b'))}] on the region, tightened on {cert.get('shells')} nested shells towards the "
                 f"derived cubic coefficient c = {cert.get('cubic_coefficient_c')}; {cert.get('obligations')} "
                 "obligations discharged (SymPy, z3, Arb). Figure: figures/certify.png."),
           ("table", ["T", "L - L_opt", "‖S − S*‖_F", "‖W_X − V*‖_F"],
            [[f"{b['T']:.0e}"] + [f"[{b[q][0]}, {b[q][1]}]" for q in ("excess_loss", "s_err", "w_err")]
             for b in cert.get("bounds") or []]),
           ("table", ["for every T >= T0", "c_lo", "c_hi", "limit as T -> infinity in"],
            [[k["statement"], k["c_lo"], k["c_hi"],
              f"[{cert['asymptotic'][q]['liminf_ge']}, {cert['asymptotic'][q]['limsup_le']}]"]
             for q, k in (cert.get("constants") or {}).items()])]
    if cert.get("recheck"):
        out.append(("pre", cert["recheck"]))
    return out


def certify_blocks(cert: dict | None) -> list:
    if not cert:
        return []
    out = [("h", 2, "All-time certificates (verify certify)", "certify"),
           ("p", f"**{cert['verdict']}** ({cert['scope_label']}): {cert['finding']}")]
    if cert.get("T0") is not None:
        out += certificate_blocks(cert)
    for lab, e in (cert.get("exact_cases") or {}).items():
        out.append(("p", f"{lab}: {e['note']} (`{e['replay']}`)"))
    return out + family_blocks(cert.get("family") or {})


def family_blocks(fam: dict) -> list:
    """The family certificate beside the single regime: every member's normalised limits, and the limits at the
    family's largest D."""
    if not fam.get("normalised_limits"):
        return []
    at = fam["limits_at_largest_D"]
    fr = lambda x: Fraction(str(x))  # noqa: E731
    return [("p", f"Beside the single regime, a whole family: {fam['label']} (every integer D, every eta in the range, "
                  f"||V*|| = 1), {fam['cells']} cells each certified for all its members (`verify certify` with "
                  "ranges). For every member, lim q(T)/leading_q(T):"),
            ("table", ["quantity", "lim q/leading_q - 1, every member", f"lim (eta T)^p q at D = {at['D']}"],
             [[q, f"[{float(fr(lo) - 1):.2e}, {float(fr(hi) - 1):.2e}]",
               f"[{float(fr(at[q][0])):.10g}, {float(fr(at[q][1])):.10g}]"]
              for q, (lo, hi) in fam["normalised_limits"].items()])]


def _fit_cells(entry: dict, q: str) -> list[str]:
    """Derived, fitted (finite-D factor divided out, with its error) and raw D-exponent of one quantity."""
    f = ((entry.get("numerics") or {}).get("fits") or {}).get(q)
    fitted = f"{f['exponent']:.3f} ± {f['error']:.3f}" if f else "—"
    return [str(entry["d_exponents"].get(q, "—")), fitted, f"{f['raw_exponent']:.3f}" if f else "—"]


def reconcile_blocks(rec: dict | None) -> list:
    """The "Which convention?" section: the family, each system's solution set, the GD fits, the statements."""
    if not rec:
        return []
    from ..reconcile.scaling_family import d_power  # heavy: loads sympy (and z3, through verify.reconcile)
    out = [("h", 2, "Which convention? (verify reconcile)", "reconcile"),
           ("p", f"Every convention a paper might scale is a power of D, {rec['family']['label']}. The leading terms "
                 "come from the slow-manifold expansion (a formal asymptotic expansion, SymPy); each claimed exponent "
                 "is a linear equation in the members' exponents and each condition a linear inequality; z3 decides "
                 "every system over the rationals and each answer is checked exactly (a witness substituted into "
                 f"every row, or a Farkas certificate). T*: {rec.get('tstar_definition')}. Figure: "
                 "figures/convention.png."),
           ("table", ["quantity", "leading term", "D-exponent (x_member: the member's exponent)"],
            [[q, str((rec.get("leading_terms") or {}).get(q, "")), str(e)] for q, e in (rec.get("d_exponents") or {}).items()])]
    rows = []
    for rd in rec.get("readings") or []:
        for s in rd["systems"]:
            found = (s["witness"]["text"] + f"; T* ∝ {d_power(s['witness']['tstar_exponent'])}" if s["feasible"] else
                     f"impossible: certificate {s['certificate']['sum']}" if s["feasible"] is False and s["certificate"]
                     else "undecided")
            rows.append([rd["id"], s["text"], f"{s['status']}, dimension {s.get('dimension', '—')}",
                         str(((s.get("general") or {}).get("tstar_exponent")) or "—"), short(found, 300)])
    out.append(("table", ["reading of T*", "system", "equations' solution set", "T* exponent there", "witness / certificate"],
                rows))
    pts = [("representative: " + rec["representative"]["text"], rec["representative"])] if rec.get("representative") else []
    pts.append(("reference convention", rec["reference"]))
    out.append(("table", ["member", "quantity", "derived D-exponent", "GD fit (finite-D factor divided out before fitting)",
                          "raw GD fit"],
                [[lab, q] + _fit_cells(e, q) for lab, e in pts for q in ("excess_loss", "s_err", "w_err")]))
    out.append(("table", ["statement", "verdict", "scope", "why"],
                [[st["text"], st["verdict"], st["scope_label"], short(st["why"], 300)]
                 for st in rec.get("statements") or []]))
    return out


def derivation_blocks(der: dict | None) -> list:
    if not der:
        return []
    red = der.get("reduction", {})
    return [("h", 2, "Derivation", "derivation"),
            ("pre", json.dumps(der.get("asymptotics", {}), indent=1)),
            ("table", ["sigma", "verdict", "reduction proved", "obligations"],
             [[sg, (der.get("sigmas") or {}).get(sg, "—"), str(r.get("proved")),
               "; ".join(f"{o['name']}: {o['holds']}" for o in r.get("obligations", []))] for sg, r in red.items()])]


__all__ = ["slopes_blocks", "certificate_blocks", "certify_blocks", "family_blocks", "reconcile_blocks",
           "derivation_blocks"]
