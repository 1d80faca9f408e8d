"""The report's sections on the built-in parts of ``verify all``: fitted slopes (convergence), the all-time
certificates (certify), the convention reconciliation (reconcile) and the derivation (derive), as blocks of
verify.report.render, read from results.json by key."""
from __future__ import annotations

import json

from .results import short


def _frac(x) -> str:
    """An exact rational string as a short decimal (the exact value is in the part's evidence file)."""
    from fractions import Fraction
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
    return out


def reconcile_blocks(rec: dict | None) -> list:
    if not rec:
        return []
    lt, dx = rec.get("leading_terms") or {}, rec.get("d_exponents") or {}
    return [("h", 2, "Which convention? (verify reconcile)", "reconcile"),
            ("p", "Each convention is a constant times a symbolic power of D. The leading terms are derived with "
                  "SymPy; the exponent vectors reproducing every claimed dependence of Theorem 3.1 are solved for "
                  f"exactly (status: {rec.get('status')}). T*: {rec.get('tstar_definition')}. Figure: "
                  "figures/convention.png."),
            ("table", ["quantity", "leading term", "D-exponent"], [[q, str(lt.get(q, "")), str(dx.get(q, ""))] for q in dx]),
            ("table", ["solution (exponent of each quantity)", "T* exponent", "fitted D-exponents (GD)", "fit errors"],
             [[", ".join(f"{k} ~ D^{v}" for k, v in sol["exponents"].items()), str(sol.get("tstar_exponent")),
               ", ".join(f"{q} {v:.3f}" for q, v in (sol.get("fits") or {}).items()),
               ", ".join(f"{q} {v:.3f}" for q, v in (sol.get("fit_errors") or {}).items())]
              for sol in rec.get("solutions") or []]),
            ("table", ["statement", "verdict", "scope", "why"],
             [[st["text"], st["verdict"], st["scope_label"], short(st["why"], 300)] for st in rec.get("statements") or []])]


def derivation_blocks(der: dict | None) -> list:
    if not der:
        return []
    red = der.get("reduction", {})
    return [("h", 2, "Derivation", "derivation"),
            ("pre", json.dumps(der.get("asymptotics", {}), indent=1)),
            ("table", ["sigma", "verdict", "reduction proved", "obligations"],
             [[sg, (der.get("sigmas") or {}).get(sg, "—"), str(r.get("proved")),
               "; ".join(f"{o['name']}: {o['holds']}" for o in r.get("obligations", []))] for sg, r in red.items()])]


def builtin_sections(results: dict) -> list:
    return (slopes_blocks(results.get("convergence")) + certify_blocks(results.get("certify"))
            + reconcile_blocks(results.get("reconcile")) + derivation_blocks(results.get("derivation")))


__all__ = ["builtin_sections"]
