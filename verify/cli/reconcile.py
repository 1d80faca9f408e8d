"""``verify reconcile``: which power-law convention makes Theorem 3.1's D-exponents true (verify.reconcile)."""
from __future__ import annotations

import json

import click

from .options import handle_errors


def _text(res: dict) -> list[str]:
    """The result as readable lines."""
    d = res["derivation"]
    out = [f"Family: {d['family']}",
           "Leading terms (sigma = identity, 0 < K < D), with g = eta_KQ lambda^2 beta^2 and h = c_L v:"]
    out += [f"  {k:6s} ~ {v}" for k, v in d["leading_terms"].items() if k != "c"]
    out.append(f"  Definition: {res['tstar']['definition']}")
    bad = [c for c in d["checks"] if not c["holds"]]
    out.append(f"Checks ({len(d['checks'])}): " + ("all hold" if not bad else "FAILED: " + "; ".join(c["name"] for c in bad))
               + f". Not entering: {d['not_entering']}.")
    out.append("D-exponents as D -> infinity at fixed K: "
               + ", ".join(f"{q} {e}" for q, e in d["d_exponents"].items()))
    out.append(f"Claims ({res['claims_source']}): "
               + "; ".join(f"{q}: " + ", ".join(f"{v}^{x}" for v, x in row.items()) for q, row in res["claims"].items()))
    out.append(f"Solution set: {res['status'].upper()}" + (f" (free: {', '.join(d['parameters'])})" if d["parameters"] else ""))
    for f in d["failed_identities"]:
        out.append(f"  cannot hold for any (a, b, c): {f}")
    for s in res["solutions"]:
        e = s["exponents"]
        out.append(f"  a (N) = {e['N']}, b (g) = {e['g']}, c (h) = {e['h']}: T* ~ D^{s['tstar_exponent']}"
                   + (f" (claimed D^{s['tstar_claimed']})" if s["tstar_claimed"] is not None else ""))
        out.append(f"    stability: {s['stability']['note']}")
        num = s["numerics"]
        if s["fits"]:
            out.append(f"    GD at T = {num['T']}, D = {num['Ds'][0]}..{num['Ds'][-1]}: fitted D-exponents of q / (1 - K/D)^kappa "
                       + ", ".join(f"{q} {s['fits'][q]:.3f} +- {s['fit_errors'][q]:.3f} (target {s['d_exponents'][q]})"
                                   for q in ("loss", "s_err", "w_err"))
                       + ("; all agree" if num.get("all_agree") else "; NOT all agree"))
            tm = num.get("tstar_measured", {}).get("fit")
            if tm:
                out.append(f"    T* measured (D = {num['tstar_measured']['fit_over_D']}): exponent {tm['slope']:.2f} "
                           f"+- {tm['error']:.2f} (local {', '.join(f'{x:.2f}' for x in tm['local_exponents'])})"
                           + ("; set by the W_X relaxation, not by T*" if num["tstar_measured"]["alpha_limited"] else ""))
        else:
            out.append(f"    numerics: {num.get('why')}")
    t = res["tstar"]
    if t["rates_and_tstar_hold_together"] is not None:
        out.append(f"Rates and T* ~ D^{t['claimed_exponent']} together: "
                   + ("possible" if t["rates_and_tstar_hold_together"] else "IMPOSSIBLE in this family")
                   + f" (joint solution set {t['joint_status']})")
    ref = res["reference"]
    out.append("Reference convention (a = b = c = 0): D-exponents "
               + ", ".join(f"{q} {x}" for q, x in ref["d_exponents"].items())
               + ("" if not ref.get("fits") else "; GD fit " + ", ".join(
                   f"{q} {ref['fits'][q]:.3f} +- {ref['fit_errors'][q]:.3f}" for q in ("loss", "s_err", "w_err"))))
    out.append("Verdicts:")
    for k, v in res["verdicts"].items():
        out.append(f"  {v['verdict'].upper():12s} {v['statement']} [{v['scope']}]")
    out.append(f"replay: {res['replay']}")
    return out


@click.command("reconcile")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--claims", "claims", default=None, metavar="FILE",
              help='JSON {quantity: {variable: exponent}}, quantities loss|s_err|w_err|tstar, variables D|K|vnorm|eta|T, '
                   'exponents such as "5/2" (default: Theorem 3.1 and T* ~ D^2)')
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="numerical budget (T in units of the slowest transient)")
@click.option("--numerics/--no-numerics", default=True, show_default=True,
              help="iterate GD under each solution and fit the D-exponents")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def reconcile_cmd(as_json, claims, profile, numerics, quiet):
    """Which convention (N ~ D^a, eta_KQ lambda^2 beta^2 ~ D^b, c_L v ~ D^c) makes Theorem 3.1's D-exponents true,
    and can the rates and T* ~ D^2 then hold together?"""
    from ..reconcile import load_claims, reconcile
    from ..jsonable import jsonable
    from .progress import progress, progress_hook
    with progress("verify reconcile", None, quiet) as bar:
        res = reconcile(None if claims is None else load_claims(claims), profile, numerics,
                        **progress_hook(reconcile, bar))
    if as_json:
        click.echo(json.dumps(jsonable(res), indent=1))
        return
    for line in _text(res):
        click.echo(line)
