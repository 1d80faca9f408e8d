"""``verify reconcile``: which members of the widened scaling family make Theorem 3.1's D-dependence true
(verify.reconcile)."""
from __future__ import annotations

import json

import click

from ..model.profiles import PROFILES
from ..run.jsonable import jsonable
from .options import handle_errors
from .progress import progress, progress_hook


def _derivation(d: dict) -> list[str]:
    from ..reconcile.scaling_family import TEXT  # heavy: loads flint,mpmath,sympy,z3
    out = [f"Family: {d['family']}"] + [f"  {m['reads']}: {m['what']}" for m in d["members"]]
    out.append("Leading terms (slow-manifold expansion, a formal asymptotic expansion; σ = identity, 0 < K < D):")
    out += [f"  {TEXT[q]} ~ {t}" for q, t in d["leading_terms"].items()]
    out.append("D-exponents as D -> oo (affine in the members' exponents x_<name>): "
               + "; ".join(f"{TEXT[q]}: {e}" for q, e in d["d_exponents"].items()))
    rules = d["combination_rules"]
    out.append(f"Combination rules ({sum(r['status'] == 'proved' for r in rules)} of {len(rules)} proved): "
               + "; ".join(r["name"] for r in rules))
    out.append("Not in any leading term: " + ", ".join(k for k, v in d["not_entering"].items() if v))
    out.append("Conditions (a D-exponent <= 0 each):")
    out += [f"  {c['id']}: {c['text']}: {c['inequality']}" for c in d["conditions"]]
    return out


def _system(s: dict) -> list[str]:
    """One solution set: its general element, where the rest holds, and a witness or a certificate."""
    from ..reconcile.scaling_family import d_power  # heavy: loads flint,mpmath,sympy,z3
    cert = s.get("certificate")
    if s["feasible"]:
        head = "FEASIBLE"
    elif s["feasible"] is False and cert and cert["checked"]:
        head = "IMPOSSIBLE " + "(proved: certificate below)"
    else:
        head = "UNDECIDED"
    out = [f"  [{s['id']}] {s['text']}: {head}"]
    if "general" in s:
        g = s["general"]
        out.append(f"    equations alone: {s['status']} of dimension {s['dimension']}"
                   + (f" (parameters {', '.join(s['parameters'])})" if s["parameters"] else "")
                   + f": {g['text']}; {g['combinations_text']}; T* ∝ D^({g['tstar_exponent']})")
        out.append("    there: " + "; ".join(f"{k} {v}" for k, v in s["holds"].items()))
    if s["witness"]:
        w = s["witness"]
        out.append(f"    witness: {w['text']} ({w['combinations_text']}); T* ∝ {d_power(w['tstar_exponent'])}")
    if head.startswith("IMPOSSIBLE"):
        out.append("    certificate: " + " + ".join(f"({m['multiplier']}) x [{m['row']}]" for m in cert["multipliers"])
                   + f" gives {cert['sum']}: {cert['reads']}")
    return out


def _fits(num: dict, tstar: str) -> list[str]:
    from ..reconcile.scaling_family import TEXT  # heavy: loads flint,mpmath,sympy,z3
    if not num or not num.get("fits"):
        return [f"    numerics: {(num or {}).get('why', 'not run')}"]
    fits = num["fits"]
    out = [f"    GD at T = {num['T']}, D = {num['Ds'][0]}..{num['Ds'][-1]}: fitted D-exponents with the finite-D "
           "factors divided out before fitting (raw fits beside): "
           + ", ".join(f"{TEXT[q]} {f['exponent']:.3f} +- {f['error']:.3f} (raw {f['raw_exponent']:.3f}; derived "
                       f"{f['target']})" for q, f in fits.items() if f)
           + ("; all agree" if num.get("all_agree") else "; NOT all agree")]
    tm = (num.get("tstar_measured") or {}).get("fit")
    if tm:
        out.append(f"    T*_cross measured over D = {num['tstar_measured']['fit_over_D']}: exponent {tm['slope']:.2f} "
                   f"+- {tm['error']:.2f} (derived {tstar})" + ("; set by the W_X relaxation, not by T*"
                                              if num["tstar_measured"]["alpha_limited"] else ""))
    return out


def _text(res: dict) -> list[str]:
    """The result as readable lines."""
    from ..reconcile.scaling_family import TEXT  # heavy: loads flint,mpmath,sympy,z3
    out = _derivation(res["derivation"])
    out.append(f"Claims ({res['claims_source']}):")
    for rid, cl in res["claims"].items():
        out.append(f"  {rid}: " + "; ".join(f"{TEXT[q]} ~ {c['order']} (D-exponent under the family "
                                            f"{c['d_exponent_under_family']})" for q, c in cl.items()))
    for rd in res["readings"]:
        out.append(f"Reading {rd['id']}" + (f" ({rd['text']})" if rd["text"] else "") + ":")
        for s in rd["systems"]:
            out += _system(s)
    rep = res["representative"]
    if rep:
        out.append(f"Representative (from {rep['from_system']}): {rep['text']} ({rep['combinations_text']}); derived "
                   "D-exponents " + ", ".join(f"{TEXT[q]} {e}" for q, e in rep["d_exponents"].items()))
        out += _fits(rep["numerics"], rep["tstar_exponent"])
    ref = res["reference"]
    out.append("Reference convention (every exponent 0): derived D-exponents "
               + ", ".join(f"{TEXT[q]} {e}" for q, e in ref["d_exponents"].items()))
    if "numerics" in ref:
        out += _fits(ref["numerics"], ref["tstar_exponent"])
    out.append("Verdicts:")
    out += [f"  {v['verdict'].upper():12s} {v['statement']} [{v['scope_label']}]" for v in res["statements"]]
    out.append(f"replay: {res['replay']}")
    return out


@click.command("reconcile")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--claims", "claims", default=None, metavar="FILE",
              help='JSON {quantity: {variable: exponent}}, quantities excess_loss|s_err|w_err|tstar, variables '
                   'D|K|vnorm|eta|T (tstar: D|K|vnorm|eta), exponents such as "5/2" (default: Theorem 3.1, and '
                   'T* ~ D^2 under each reading)')
@click.option("--profile", type=click.Choice(list(PROFILES)), default="ci", show_default=True,
              help="numerical budget (T in units of the slowest transient)")
@click.option("--numerics/--no-numerics", default=True, show_default=True,
              help="iterate GD under the representative member and the reference convention and fit the D-exponents")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def reconcile_cmd(as_json, claims, profile, numerics, quiet):
    """Which members of the family {N, ‖V*‖_F², v, β, λ, c_L, η_V, η_KQ each ∝ a power of D} make Theorem 3.1's
    rates true, and can T* ~ D^2 and the step-size conditions then hold too?"""
    from ..reconcile import load_claims, reconcile  # heavy: loads flint,mpmath,sympy,z3
    with progress("verify reconcile", None, quiet) as bar:
        res = reconcile(None if claims is None else load_claims(claims), profile, numerics,
                        **progress_hook(reconcile, bar))
    if as_json:
        click.echo(json.dumps(jsonable(res), indent=1))
        return
    for line in _text(res):
        click.echo(line)
