"""Evidence records (verify.evidence) from an all-time certificate, for theorem-3.1-rates.

One regime, horizon "all". A closed certificate gives, per quantity, an upper-rate and a lower-rate
record of kind "arb" (role "test", holds True): the composite statement is certified only when every
obligation was discharged, so the obligations themselves are attached as "context" records (their
kinds: symbolic / smt / arb), never as separate confirmations -- a SymPy lemma alone proves nothing
about the rate. A certificate that does not close is a "failed" record (the verdict becomes
inconclusive, never a weaker claim); a refused regime (eta >= 2K/(c_L v N), sigma != identity, ...)
and the exact K = D / K = 0 cases lie outside Theorem 3.1's hypotheses (0 < K < D) and are "outside"
records: K = D and K = 0 report where the Theta(1/T) lower bounds fail, with a replay command.
"""
from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..cache import by_code_version
from ..errors import InvalidParameter
from ..evidence import Scope, dims_of, record
from ..model.numbers import frac_str
from .obligations import CertificateFailed, EVIDENCE_KIND
from ..model.flags import setting_command
from .certificate import certify
from .exact import ExactCertificate
from .family import FamilySpec, certify_family
from ..model.profiles import check_profile
from ..derive.asymptotics import leading_terms_general
from ..model import symbols as sy

POWER_TEXT = {"excess_loss": ("L - L_opt", "eta T"), "s_err": ("||S - S*||_F", "(eta T)^(1/2)"),
              "w_err": ("||W_X - V*||_F", "(eta T)^(1/2)")}


def regime_scope(s) -> Scope:
    """The scope of exactly this regime: its dimensions, sigma, every convention and parameter, all t."""
    c = s.config()
    dims = dims_of(s) + (f" {s.preset}" if s.preset else "")
    conv = (f"eta={c['eta_v']} eta_kq={c['eta_kq']} ||V*||^2={c['vstar_norm2']} loss={c['loss']} "
            f"law_var={c['law_var']} law_mean={c['law_mean']} p_lambda={c['p_lambda']} beta={c['beta']} init={c['init']}")
    return Scope(dims=(dims,), sigma=(s.sigma.spec(),), conventions=(conv,), horizon="all")


def replay_command(s) -> str:
    return setting_command("certify", s, "--json")


def certificate_evidence(setting, cert=None, **knobs) -> list[dict]:
    """Evidence records for the T-rates of Theorem 3.1 in ``setting`` (module docstring).

    ``cert``: an already built certificate of this setting (else :func:`certify` is run with ``knobs``).
    """
    scope = regime_scope(setting)
    replay = replay_command(setting)
    if cert is None:
        try:
            cert = certify(setting, **knobs)
        except InvalidParameter as exc:
            return [record("all-time certificate (verify certify)", "arb", scope, f"not applicable: {exc}", None,
                           role="outside", replay=replay)]
        except CertificateFailed as exc:
            return [record("all-time certificate (verify certify)", "arb", scope,
                           f"the certificate did not close, so nothing is certified: {exc}", None, role="failed",
                           failed_obligation=exc.obligation.as_dict(), replay=replay)]
    context = [record(f"obligation {o.name}", EVIDENCE_KIND[o.method], scope, f"{o.statement}: {o.status} ({o.detail})",
                      None, role="context", obligation=o.as_dict()) for o in cert.obligations]
    if isinstance(cert, ExactCertificate):
        d = cert.as_dict()
        if cert.case == "k-equals-d":
            text = (f"exact for every T (SymPy, closed form): L - L_opt = c_L v N ||V*||^2 rho^(2T)/(2D), "
                    f"||W_X - V*||_F = |rho|^T ||V*||_F, ||S - S*||_F = 0 with rho = {frac_str(cert.rho())}: "
                    "geometric decay (or exact), so the Theta lower bounds of Theorem 3.1 fail at K = D")
        else:
            text = ("exact for every T (SymPy): L - L_opt = 0, ||S - S*||_F = sqrt(N/D), ||W_X - V*||_F = ||V*||_F: "
                    "the loss bound K D^4/(eta T) = 0 holds only because K = 0; the parameter errors never decay, "
                    "so the Theta(T^(-1/2)) rates fail at K = 0")
        return [record(f"all-time closed form ({d['kind']}, K = {setting.K}, D = {setting.D})", "symbolic", scope, text,
                       False, role="outside", replay=replay, rate=d["rate"])] + context
    out = []
    for q, (name, scale) in POWER_TEXT.items():
        k = cert.constants[q]
        out.append(record(f"all-time certificate: upper rate of {name}", "arb", scope,
                          f"{scale} {name} <= {k['c_hi']} for every T >= T0 = {cert.T0}; Arb balls for T <= T0",
                          True, threshold={"value": k["c_hi"], "why": "the certified constant c_hi: prefix + invariant "
                                           "region + comparison lemma, every obligation discharged"},
                          replay=replay, constants=k, asymptotic=cert.asymptotic[q]))
        out.append(record(f"all-time certificate: lower rate of {name}", "arb", scope,
                          f"{scale} {name} >= {k['c_lo']} > 0 for every T >= T0 = {cert.T0}; Arb balls for T <= T0",
                          True, threshold={"value": k["c_lo"], "why": "the certified constant c_lo > 0 (a Theta lower "
                                           "bound): prefix + invariant region + comparison lemma"},
                          replay=replay, constants=k, asymptotic=cert.asymptotic[q]))
    return out + context


# ----- families of regimes -----------------------------------------------------------------------------------------
# The family each profile certifies (sts, K = 4, ||V*|| = 1, eta_KQ = eta), within the profile's part time (cells
# run in the part's own process): ci ~10 s (2 cells), dev ~1 min (40 cells), deep the whole eta range [1/16, 1/8]
# for D = 8..16 (hundreds of cells). The benchmark family, D = 8..512 over that eta range (TARGET_FAMILY), needs
# cells of ~2% in eta at every D with prefixes of ~1e5 steps at the large D: verify bench measures how far it
# gets within its 10-minute target.
FAMILIES = {"ci": {"D": (8, 9), "eta": (Fraction(1, 16), Fraction(51, 800))},
            "dev": {"D": (8, 12), "eta": (Fraction(1, 16), Fraction(1, 14))},
            "deep": {"D": (8, 16), "eta": (Fraction(1, 16), Fraction(1, 8))}}
TARGET_FAMILY = {"D": (8, 512), "eta": (Fraction(1, 16), Fraction(1, 8))}
FAMILY_OPTIONS = {"preset": "sts", "K": 4, "vstar_norm": "1"}
FAMILY_HYPOTHESES = ("sigma = identity", "zero initialisation", "P^T P = lambda I (orthogonal P)",
                     "centred Gaussian entries", "uniform S* weights 1/K", "eta_KQ = eta (one step size)")


def family_label(ranges: dict, options: dict = FAMILY_OPTIONS) -> str:
    """``"sts K=4 D=8..512"``: how a family's dimensions read in a scope."""
    lo, hi = ranges["D"]
    return f"{options['preset']} K={options['K']} D={lo}..{hi}"


@by_code_version("family-certificate")
def profile_family(profile: str):
    """The family certificate of ``profile`` (FAMILIES), its cells run in this process (a report's parts already
    run on Dask workers); cached on disk by code version (verify.cache), so a report reuses it until the sources
    change."""
    return certify_family(FamilySpec.of(FAMILY_OPTIONS, FAMILIES[profile]), dask=False)


def family_evidence(profile: str) -> list[dict]:
    """Evidence records for Theorem 3.1 over a whole family of regimes (FAMILIES[profile]): (a) every member has
    certified bounds for all T >= T0 of its cell (an upper bound U_member(T) ~ leading/T and a lower one), holds
    True; (b) lim q(T)/leading_q(T) lies in the certified table for every member, and the limit constants at
    the largest D, so that a claim can say how large a D-uniform lower-bound constant can be. Kind "arb"; the
    scope names the family's dimensions and, as conventions, the hypotheses the certificate uses."""
    check_profile(profile)
    ranges = FAMILIES[profile]
    scope = Scope(dims=(family_label(ranges),), sigma=("identity",), conventions=FAMILY_HYPOTHESES + (
        f"eta in [{frac_str(ranges['eta'][0])}, {frac_str(ranges['eta'][1])}]", "||V*||_F = 1"), horizon="all")
    replay = (f"verify certify --preset sts --K 4 --D {ranges['D'][0]}..{ranges['D'][1]} --eta "
              f"{frac_str(ranges['eta'][0])}..{frac_str(ranges['eta'][1])} --vstar-norm 1 --json")
    try:
        fc = profile_family(profile)
    except CertificateFailed as exc:
        return [record("family certificate (verify certify with ranges)", "arb", scope,
                       f"the family certificate did not close, so nothing is certified: {exc}", None, role="failed",
                       replay=replay)]
    table = fc.table()
    at_max = limits_at_largest_D(fc, table)
    lim_text = "; ".join(f"{q}: [{float(lo):.15g}, {float(hi):.15g}]" for q, (lo, hi) in table.items())
    return [record("family certificate: bounds for every member and every T >= T0", "arb", scope,
                   f"every member of {family_label(ranges)} (every integer D, every eta in the range) has certified "
                   f"lower and upper bounds on L - L_opt, ||S - S*||_F, ||W_X - V*||_F for all T >= T0 of its cell "
                   f"({len(fc.cells)} cells; prefix + trapping region + comparison lemma with the member's own cubic "
                   "coefficient)", True, threshold={"value": "every cell closed", "why": "each cell's region is "
                   "invariant and its prefix enters it for every member (Arb, a Taylor model over the cell)"},
                   replay=replay, cells=len(fc.cells)),
            record("family certificate: the normalised limit constants", "arb", scope,
                   f"lim q(T)/leading_q(T) for every member lies in {lim_text} (leading_q: the derived leading terms "
                   f"of verify.derive.asymptotics); at D = {ranges['D'][1]} the limits of (eta T)^p q lie in "
                   + "; ".join(f"{q}: [{float(lo):.10g}, {float(hi):.10g}]" for q, (lo, hi) in at_max.items()),
                   True, threshold={"value": "the table's intervals", "why": "the deepest shell of every cell: "
                   "Lt/Q and 1/sqrt(Q), W/sqrt(Q) there, uniform over the cell"}, replay=replay,
                   normalised_limits={q: [str(lo), str(hi)] for q, (lo, hi) in table.items()},
                   limits_at_largest_D={"D": ranges["D"][1], **{q: [str(lo), str(hi)] for q, (lo, hi) in
                                                                at_max.items()}})]


def limits_at_largest_D(fc, table: dict) -> dict:
    """[lo, hi] of lim (eta T)^p q(T) over the members with the largest D: the table times the derived leading
    constant (eta T)^p leading_q, taken at both ends of the eta range (it does not depend on eta when
    eta_KQ = eta, which the two ends confirm)."""

    lt = leading_terms_general()
    power = {"excess_loss": 1, "s_err": sp.Rational(1, 2), "w_err": sp.Rational(1, 2)}
    rng = fc.spec.range_of
    out = {}
    for q in table:
        vals = []
        for eta in sorted(set(rng["eta"])):
            s = fc.spec.setting({"D": rng["D"][1], "eta": eta})
            c = sp.nsimplify(lt[q].subs(sy.values_at(s)) * sy.T ** power[q] * sp.Rational(s.eta_v) ** power[q])
            vals.append(Fraction(str(sp.N(c, 30))))
        out[q] = (table[q][0] * min(vals) * (1 - Fraction(1, 10**20)), table[q][1] * max(vals) * (1 + Fraction(1, 10**20)))
    return out
