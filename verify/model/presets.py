"""The paper's four teachers as S* supports: cnn, gcn, sts, gslp (docs/setting.md, 'Teacher presets')."""
from __future__ import annotations

from ..errors import InvalidParameter

PRESETS = ("cnn", "gcn", "sts", "gslp")


def preset_supports(preset: str, D: int, K: int) -> tuple[tuple[int, ...], ...]:
    """Column supports g_j (0-based) of S* for a preset; N is len of the result.

    cnn:  average pooling over non-overlapping windows of K patches (needs K | D), N = D/K.
    gcn:  S* = A/K for the circulant K-regular graph g_j = {j, j+1, ..., j+K-1} mod D, N = D.
    sts:  one fixed subset g = {0, ..., K-1}, N = 1.
    gslp: K = 1, N = 1, g = {0} (y = <v*, x_0>).
    """
    if preset not in PRESETS:
        raise InvalidParameter("preset", preset, f"must be one of {', '.join(PRESETS)}")
    if preset == "cnn":
        if K < 1 or D % K:
            raise InvalidParameter("K", K, f"must satisfy 1 <= K <= D and divide D = {D} for cnn")
        return tuple(tuple(range(j * K, (j + 1) * K)) for j in range(D // K))
    if preset == "gcn":
        if not 1 <= K <= D:
            raise InvalidParameter("K", K, f"must satisfy 1 <= K <= D = {D} for gcn")
        return tuple(tuple(sorted((j + o) % D for o in range(K))) for j in range(D))
    if preset == "sts":
        if not 0 <= K <= D:
            raise InvalidParameter("K", K, f"must satisfy 0 <= K <= D = {D} for sts")
        return (tuple(range(K)),)
    if K != 1:
        raise InvalidParameter("K", K, "must be 1 for gslp")
    return ((0,),)
