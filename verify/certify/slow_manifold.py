"""The slow-manifold certificate method: 0 < K < D, an Arb prefix, a trapping region around the slow manifold and a
comparison lemma give Theorem 3.1's rates with certified constants for every T (verify.certify.certificate); its
file is re-checked by the independent checker and its trapping region by Coq's kernel."""
from __future__ import annotations

from fractions import Fraction

from ..evidence import record
from .certificate import Certificate, build_certificate
from .files import regime_file
from .methods import Method, certificate_method
from .certificate_records import POWER_TEXT, rate_bound


@certificate_method
class SlowManifold(Method):
    """Prefix + trapping region + comparison lemma (0 < K < D)."""

    name = "slow-manifold"
    kinds = ("slow-manifold",)
    order = 20
    rechecks = True

    def applies(self, setting) -> bool:
        return 0 < setting.K < setting.D

    def build(self, setting, knobs, *, u0=None, C=None, T0=None, region_boxes=None) -> Certificate:
        return build_certificate(setting, knobs, u0, C, T0, region_boxes)

    def file(self, cert, Ts) -> dict:
        return regime_file(cert, Ts)

    def describe(self, d):
        r = d["region"]
        out = [f"  prefix: Arb {d['bits']} bits, T0 = {d['T0']}; region {r['definition']} with u0 = {r['u0']}, "
               f"C = {r['C']} ({r['check']['boxes']} boxes)",
               f"  decay (u - u')/u^3 in [a, b] = [{float(Fraction(d['a'])):.6g}, {float(Fraction(d['b'])):.6g}] "
               f"on R, -> c = {d['cubic_coefficient_c']} on {len(d['shells'])} shells"]
        for q, v in d["constants"].items():
            out.append(f"  {v['statement']}: c_lo = {v['c_lo']}, c_hi = {v['c_hi']} "
                       f"(T -> inf: [{d['asymptotic'][q]['liminf_ge']}, {d['asymptotic'][q]['limsup_le']}])")
        return out

    def report_lines(self, res):
        c = res.get("certificate") or {}
        r = c["region"]
        lines = [f"Certificate: Arb prefix ({c['bits']} bits) to T0 = {c['T0']}; trapping region {r['definition']} "
                 f"with u0 = {r['u0']}, C = {r['C']} ({r['check']['boxes']} boxes); (u - u')/u^3 in [a, b] = "
                 f"[{float(Fraction(c['a'])):.6g}, {float(Fraction(c['b'])):.6g}] on R, tightened on {len(c['shells'])} "
                 f"shells towards c = {c['cubic_coefficient_c']}; {len(c['obligations'])} obligations discharged "
                 "(SymPy, z3 and cvc5, Arb). Re-check: `" + c["recheck"] + "`.", "",
                 "| T | L - L_opt | ‖S - S*‖_F | ‖W_X - V*‖_F |", "|---:|---|---|---|"]
        for b in res.get("bounds", []):
            lines.append(f"| {b['T']:.0e} | " + " | ".join(f"[{b[q][0]}, {b[q][1]}]" for q in
                                                            ("excess_loss", "s_err", "w_err")) + " |")
        lines.append("")
        for q, k in c["constants"].items():
            a = c["asymptotic"][q]
            lines.append(f"- {k['statement']}: [{k['c_lo']}, {k['c_hi']}]; as T -> infinity: "
                         f"[{a['liminf_ge']}, {a['limsup_le']}]")
        return lines

    def records(self, setting, cert, scope, replay):
        # Theta: an upper and a lower rate per quantity, each from its certified constant
        sides = (("upper", "c_hi", "<=", "", "the certified constant c_hi: prefix + invariant region + comparison "
                  "lemma, every obligation discharged"),
                 ("lower", "c_lo", ">=", " > 0", "the certified constant c_lo > 0 (a Theta lower bound): prefix + "
                  "invariant region + comparison lemma"))
        out = []
        for q, (name, scale) in POWER_TEXT.items():
            k = cert.constants[q]
            for direction, key, rel, positive, why in sides:
                out.append(record(f"all-time certificate: {direction} rate of {name}", "arb", scope,
                                  f"{scale} {name} {rel} {k[key]}{positive} for every T >= T0 = {cert.T0}; Arb balls "
                                  f"for T <= T0", True, threshold={"value": k[key], "why": why}, replay=replay,
                                  constants=k, asymptotic=cert.asymptotic[q], bound=rate_bound(q, direction, k[key])))
        return out
