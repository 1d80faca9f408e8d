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

from ..errors import InvalidParameter
from ..evidence import Scope, dims_of, record
from ..model.numbers import frac_str
from .obligations import EVIDENCE_KIND

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
    from ..model.flags import setting_command
    return setting_command("certify", s, "--json")


def certificate_evidence(setting, cert=None, **knobs) -> list[dict]:
    """Evidence records for the T-rates of Theorem 3.1 in ``setting`` (module docstring).

    ``cert``: an already built certificate of this setting (else :func:`certify` is run with ``knobs``).
    """
    from .certificate import certify
    from .obligations import CertificateFailed
    from .exact import ExactCertificate
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
