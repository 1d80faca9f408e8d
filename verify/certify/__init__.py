"""All-time certificates of Theorem 3.1's rates: ``verify certify``.

For sigma = identity and 0 < K < D, :func:`certify` proves lower and upper bounds on L(T) - L_opt,
||S(T) - S*||_F and ||W_X(T) - V*||_F for every T >= 0 by a certified Arb prefix, a trapping region
around the slow manifold (checked with Arb) and a discrete comparison lemma for the cubic decay of the
off-support attention mass; K = D (geometric) and K = 0 (zero loss) are certified by exact closed forms.

    >>> from verify.model import make_setting
    >>> cert = certify(make_setting(D=4, K=2, preset="cnn", eta="1/4", vstar_norm="2"))  # doctest: +SKIP
    >>> cert.bounds_json(10**12)["excess_loss"]                                          # doctest: +SKIP
"""
from ..lazy import lazy_exports

# Public names and their modules, imported on first use (PEP 562): a command that needs one certify module does
# not load the others (and their Arb, SymPy and solver imports).
_EXPORTS = {"Certificate": ".certificate", "certify": ".certificate", "check_certifiable": ".certificate",
            "CertificateFailed": ".obligations", "ExactCertificate": ".exact", "certificate_evidence": ".certificate_records",
            "family_evidence": ".certificate_records", "certify_family": ".family", "FamilySpec": ".family",
            "certified_band_figure": ".figure", "certify_part": ".certify_part", "report_section": ".certify_part"}

__all__ = ["Certificate", "CertificateFailed", "ExactCertificate", "FamilySpec", "certify", "certify_family",
           "check_certifiable", "certificate_evidence", "family_evidence", "certified_band_figure", "certify_part", "report_section"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
