"""All-time certificates of Theorem 3.1's rates (issue 10): ``verify certify``.

For sigma = identity and 0 < K < D, :func:`certify` proves lower and upper bounds on L(T) - L_opt,
||S(T) - S*||_F and ||W_X(T) - V*||_F for every T >= 0 by a certified Arb prefix, a trapping region
around the slow manifold (checked with Arb) and a discrete comparison lemma for the cubic decay of the
off-support attention mass; K = D (geometric) and K = 0 (zero loss) are certified by exact closed forms.

    >>> from verify.model import make_setting
    >>> cert = certify(make_setting(D=4, K=2, preset="cnn", eta="1/4", vstar_norm="2"))  # doctest: +SKIP
    >>> cert.bounds_json(10**12)["excess_loss"]                                          # doctest: +SKIP
"""
from .certificate import Certificate, certify, check_certifiable
from .records import certificate_evidence
from .exact import ExactCertificate
from .obligations import CertificateFailed
from .figure import certified_band_figure
from .part import certify_part, report_section

__all__ = ["Certificate", "CertificateFailed", "ExactCertificate", "certify", "check_certifiable",
           "certificate_evidence", "certified_band_figure", "certify_part", "report_section"]
