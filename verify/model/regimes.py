"""Named regimes that several parts of the toolkit share, defined once (make_setting keywords)."""
from __future__ import annotations

# The showcase regime of the all-time certificate: gcn, D = N = 64, K = 4, eta = 1/32. The report's certify part
# certifies it and verify bench times the certificate (and the engines) on it, so the two speak of one regime.
BENCHMARK_REGIME = {"D": 64, "K": 4, "preset": "gcn", "eta": "1/32"}

__all__ = ["BENCHMARK_REGIME"]
