"""Exact all-time certificates where the dynamics is not slow: K = D (exponential) and K = 0 (constant).

K = D: S* is uniform pooling, which is S(0), and the logit gradient vanishes, so S = S* for all t and
alpha' - 1 = rho (alpha - 1), rho = 1 - eta_V c_L v N / D. From alpha(0) = 0: alpha_t = 1 - rho^t,
L - L_opt = c_L v N ||V*||^2 rho^(2t) / (2D), ||W_X - V*||_F = |rho|^t ||V*||_F, ||S - S*||_F = 0.
Geometric, not 1/T: Theorem 3.1's Theta(1/T) lower bounds fail here.

K = 0: S* = 0, alpha' = alpha (1 - eta_V c_L v N / D), so alpha_t = 0 from alpha(0) = 0, S stays uniform:
L - L_opt = 0, ||S - S*||_F = sqrt(N/D), ||W_X - V*||_F = ||V*||_F for every t.

Each step is a SymPy obligation on the generated reduced recursion (verify.derive.reduced_map); the
bounds at any T are Arb evaluations of the closed forms (rho^T by binary powering: T = 10^12 costs
40 multiplications).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..run.cache import by_code_version
from ..derive.invariants import PARAMETERS, V2, parameter_values
from ..derive.reduced_map import reduced, reduced_step_exprs
from ..model.symbols import D, N, alpha, c_loss, eta_v, var, vn
from ..model.numbers import frac_str
from ..model.precision import arb_precision
from ..model.setting import Setting
from ..model.sigmas.identity import Identity
from ..model.validation import check_int
from . import fmt
from .arbfun import exact, lambdify_arb
from .bounds import QUANTITIES
from .obligations import identity, raise_first_failure

p = sp.Symbol("p", real=True)      # rho^t


@lru_cache(maxsize=None)
def closed_forms(case: str) -> dict:
    """The closed forms in p = rho^t (K = D) or constants (K = 0), their obligations, and their Arb code."""
    d = derived_closed_forms(case)
    return d | {"arb": {q: lambdify_arb((p,) + PARAMETERS, e) for q, e in d["forms"].items()}}


@by_code_version("closed-forms")
def derived_closed_forms(case: str) -> dict:
    """The closed forms and their SymPy obligations (cached on disk by code version, verify.run.cache)."""
    a_next, inc = reduced_step_exprs(Identity(), case)
    red = reduced(Identity(), case)
    cols = red.cols
    ob = [identity("rows-share-alpha", "d alpha_m'/d vn_m = 0: all rows share alpha(t)", sp.diff(a_next, vn)),
          identity("delta-frozen", "the logit gap does not move (delta increment = 0)", inc)]
    rho = 1 - eta_v * c_loss * var * N / D
    if case == "k-equals-d":
        a_t = 1 - p
        ob.append(identity("alpha-closed-form", "alpha_t = 1 - rho^t: alpha_0 = 0 and alpha'(1 - p) = 1 - rho p "
                           "(induction on t, p = rho^t)", a_next.subs(alpha, a_t), 1 - rho * p))
    else:
        a_t = sp.Integer(0)
        ob.append(identity("alpha-stays-zero", "alpha'(0) = 0, so alpha_t = 0 from alpha_0 = 0", a_next.subs(alpha, 0)))
    loss = sp.factor(red.r.subs(alpha, a_t).subs(vn, V2))
    ob.append(identity("loss-linear-in-vn", "L - L_opt = sum_m r_m = r(vn = ||V*||_F^2)", red.r - vn * sp.diff(red.r, vn)))
    s_err = sp.sqrt(N * cols["s_err2"])
    w_err = sp.sqrt(V2 * (a_t - 1) ** 2) if case == "k-equals-d" else sp.sqrt(V2)
    forms = {"excess_loss": loss, "s_err": s_err, "w_err": w_err}
    if case == "k-equals-d":
        ob.append(identity("loss-closed-form", "L - L_opt = c_L v N ||V*||^2 rho^(2t) / (2 D)", loss,
                           c_loss * var * N * V2 * p**2 / (2 * D)))
    else:
        ob.append(identity("loss-zero", "L - L_opt = 0 at alpha = 0 with S* = 0", loss))
    return {"forms": forms, "rho": rho, "obligations": tuple(ob)}


@dataclass
class ExactCertificate:
    """Bounds at any T from exact closed forms (K = D or K = 0)."""

    setting: Setting
    bits: int
    case: str
    obligations: list = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "exponential" if self.case == "k-equals-d" else "constant"

    @property
    def T0(self) -> int:
        return 0

    def rho(self) -> Fraction:
        s = self.setting
        return 1 - s.eta_v * s.loss_scale * s.law.var * s.N / s.D

    def bounds(self, T: int) -> dict:
        T = check_int("at", T, 0)
        cf = closed_forms(self.case)
        with arb_precision(self.bits):
            Pb = tuple(exact(Fraction(x)) for x in parameter_values(self.setting))
            pT = exact(self.rho()) ** T if self.case == "k-equals-d" else exact(Fraction(0))
            out = {}
            for q in QUANTITIES:
                v = cf["arb"][q](pT, *Pb)
                v = v if hasattr(v, "mid") else exact(Fraction(v))
                out[q] = (v, v)
        return out | {"route": f"exact closed form ({self.kind})"}

    def bounds_json(self, T: int, digits: int | None = None) -> dict:
        b = self.bounds(T)
        with arb_precision(self.bits):
            return {"T": T, **{q: _interval(b[q][0], b[q][1], digits) for q in QUANTITIES}, "route": b["route"]}

    def as_dict(self) -> dict:
        cf = closed_forms(self.case)
        rho = self.rho()
        rate = ({"excess_loss": "c_L v N ||V*||^2 rho^(2T) / (2 D)", "s_err": "0", "w_err": "|rho|^T ||V*||_F",
                 "rho": frac_str(rho),
                 "note": "geometric decay, not Theta(1/T): the 1/T lower bounds of Theorem 3.1 fail"
                 + (" (rho = 0: exact after one step)" if rho == 0 else "")}
                if self.case == "k-equals-d" else
                {"excess_loss": "0", "s_err": "sqrt(N/D)", "w_err": "||V*||_F",
                 "note": "the loss is 0 from the start (S* = 0, W_X stays 0, S stays uniform): no 1/T rate"})
        return {"kind": self.kind, "case": self.case, "regime": self.setting.config(), "bits": self.bits, "T0": 0,
                "statement": "for every T >= 0 the exact GD iterate equals the closed forms (enclosed in Arb)",
                "closed_forms": {q: sp.sstr(e) for q, e in cf["forms"].items()} | {"p": "rho^T",
                                                                                  "rho": sp.sstr(cf["rho"])},
                "rate": rate, "obligations": [o.as_dict() for o in self.obligations]}


def _interval(lo, hi, digits):
    if lo.is_zero() and hi.is_zero():
        return ["0", "0"]
    return fmt.interval(lo, hi, digits)


def exact_certificate(s: Setting, bits: int) -> ExactCertificate:
    """The closed-form certificate for K = 0 or K = D (raises CertificateFailed if an obligation fails)."""
    case = "k-zero" if s.K == 0 else "k-equals-d"
    obs = list(closed_forms(case)["obligations"])
    raise_first_failure(obs)
    return ExactCertificate(s, bits, case, obs)
