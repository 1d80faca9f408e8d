"""The ``certificate`` measurement: a regime's all-time certificate (verify certify) as sweep columns."""
from __future__ import annotations

import math
from decimal import Decimal

from ...certify import CertificateFailed, certify
from ...certify.methods import method_of
from ...errors import InvalidParameter
from ..measures import QUANTITIES, measure


@measure("certificate", default=False,
         summary="the all-time certificate (verify certify): bounds valid for every T, at --steps and at T = 1e12")
def certificate(s, steps: int, options: dict) -> dict:
    """The regime's all-time certificate: its status ("certified", "exact" for K = D or K = 0, "failed" naming
    the obligation that did not close, or "refused" with why, e.g. eta >= 2K/(c_L v N)), T0, and the certified
    [lo, hi] of the three quantities at ``steps`` and at T = 1e12 (decimal bounds rounded outwards, as floats
    rounded outwards again)."""
    cols: dict = {"certificate_status": None, "certificate_note": None, "certificate_T0": None}
    for T in ("steps", "1e12"):
        for q in QUANTITIES:
            cols[f"certificate_{q}_at_{T}_lo"] = cols[f"certificate_{q}_at_{T}_hi"] = None
    try:
        cert = certify(s)
    except CertificateFailed as exc:
        return cols | {"certificate_status": "failed", "certificate_note": str(exc)}
    except InvalidParameter as exc:
        return cols | {"certificate_status": "refused", "certificate_note": str(exc)}
    cols["certificate_status"] = method_of(cert).status
    cols["certificate_T0"] = cert.T0
    for label, T in (("steps", steps), ("1e12", 10**12)):
        b = cert.bounds_json(T)
        for q in QUANTITIES:
            # Decimal, not Fraction: an exact decimal such as 1e-868588963 (K = D at T = 1e12) converts at once
            lo, hi = (float(Decimal(x)) for x in b[q])
            cols[f"certificate_{q}_at_{label}_lo"] = math.nextafter(lo, -math.inf)
            cols[f"certificate_{q}_at_{label}_hi"] = math.nextafter(hi, math.inf)
    return cols
