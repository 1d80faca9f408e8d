"""Which regimes the certificate's method covers (sigma = identity, the exact reduction, the W_X-block stability
bound): the check every certificate, family and atlas query runs first. No symbolic machinery here, so a query
(verify.certify.atlas_query) can run it without importing SymPy."""
from __future__ import annotations

from fractions import Fraction

from ..errors import InvalidParameter
from ..model.numbers import frac_str


def check_certifiable(s) -> None:
    """Refuse, naming the flag, every regime the method does not cover (see the module docstring)."""
    if not s.sigma.is_identity:
        raise InvalidParameter("sigma", s.sigma.spec(), "must be identity: the certificate needs the rational slow "
                               "manifold alpha*(u) = <s,s*>/||s||^2 of sigma = identity (for erf, relu and "
                               "polynomials alpha* is implicit, and the alpha_m differ by row)")
    checks = (("data", not s.data.iid, "must be gaussian (i.i.d. entries): the certificate is built on the exact reduced "
               "recursion, which correlated pixels or tokens leave"),
              ("supports", s.sstar_weights is not None, "S* must have uniform weights 1/K (two-valued columns)"),
              ("law_mean", s.law.mean != 0, "must be 0: a non-zero mean leaves the exact reduction"),
              ("init", s.init != "zero", "must be zero: the certificate's prefix starts from zero initialisation"),
              ("p_structure", s.p_structure != "orthogonal", "must be orthogonal (P^T P = lambda I)"))
    for name, bad, why in checks:
        if bad:
            value = {"law_mean": frac_str(s.law.mean), "data": s.data.spec()}.get(name, getattr(s, name, None))
            raise InvalidParameter(name, value, why)
    ok, why = s.reducible()
    if not ok:
        raise InvalidParameter("sigma", s.sigma.spec(), f"the exact reduced recursion does not apply: {why}")
    if s.K > 0:
        thr = Fraction(2 * s.K) / (s.loss_scale * s.law.var * s.N)
        if s.eta_v >= thr:
            raise InvalidParameter("eta", frac_str(s.eta_v), f"must be < 2K/(c_L v N) = {frac_str(thr)}: no trapping "
                                   "region: the W_X block is unstable (|rho| = |1 - eta c_L v N ||s||^2| >= 1 at the "
                                   "attractor, where ||s||^2 = 1/K)")


__all__ = ["check_certifiable"]
