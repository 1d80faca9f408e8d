"""The closed-form certificate method: K = 0 and K = D, where the exact GD iterate has a closed form for every T
(verify.certify.exact), so Theorem 3.1's 1/T rates are decided exactly (and fail: geometric decay at K = D, no
parameter convergence at K = 0)."""
from __future__ import annotations

from ..errors import InvalidParameter
from ..evidence import record
from ..model.numbers import frac_str
from .exact import ExactCertificate, exact_certificate
from .methods import Method, certificate_method


@certificate_method
class ClosedForm(Method):
    """Exact closed forms at K = 0 (constant) and K = D (exponential)."""

    name = "closed-form"
    kinds = ("exponential", "constant")
    order = 10
    status = "exact"

    def applies(self, setting) -> bool:
        return setting.K == 0 or setting.K == setting.D

    def build(self, setting, knobs, *, u0=None, C=None, T0=None, region_boxes=None) -> ExactCertificate:
        return exact_certificate(setting, knobs["bits"])

    def file(self, cert, Ts):
        raise InvalidParameter("save", cert.kind, "applies to slow-manifold certificates (0 < K < D): K = 0 and "
                               "K = D are exact closed forms, printed by --json")

    def describe(self, d):
        return [f"  rate: {d['rate']}"]

    def note(self, d):
        return (d.get("rate") or {}).get("note")

    def records(self, setting, cert, scope, replay):
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
                       False, role="outside", replay=replay, rate=d["rate"])]
