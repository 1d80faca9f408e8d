"""A family cell's slab hulls as its file stores them: outward-rounded IEEE doubles, packed, deflated, base64.

A cell's region is cut in u into slabs: the annuli [u0 r^(i+1), u0 r^i] of its shells (i < shells) and the
core [0, u0 r^shells], each in n_u equal pieces (verify.certify.region.initial_boxes). Every slab carries six
enclosures, the hulls over the region's boxes inside it: [a, b] of the normalised decay Q, [Lt_lo, Lt_hi] and
[W_lo, W_hi] of the observables' ratios. The edges follow from (u0, ratio, shells, n_u), so they are not
stored; each lower end is rounded down and each upper end up to a double (an exact dyadic rational: rounding
outward only widens an enclosure), and the rows, in increasing u, are packed as little-endian float64 (six
per slab), compressed with zlib (neighbouring slabs share their leading bytes: about half the size) and written
as one base64 string:

  {"encoding": "float64-le-zlib-base64", "count": <slabs>, "hulls": "<base64 of zlib of 48 * count bytes>"}

A reader decodes one cell's hulls only when it bounds a member of that cell. The independent re-checker
(recheck.certificates.decode_slabs) reads the same layout with its own code.
"""
from __future__ import annotations

import base64
import math
import struct
import zlib
from fractions import Fraction

from ..errors import InvalidParameter

ENCODING = "float64-le-zlib-base64"
PER_SLAB = 6            # a, b, Lt_lo, Lt_hi, W_lo, W_hi


def slab_edges(u0: Fraction, ratio: Fraction, shells: int, n_u: int) -> list[Fraction]:
    """The u-edges of a cell's slabs, increasing from 0 to u0: (shells + 1) n_u slabs."""
    cuts = [u0]
    for _ in range(shells):
        cuts.append(cuts[-1] * ratio)
    cuts = [Fraction(0)] + cuts[::-1]                   # 0, u0 r^shells, ..., u0 r, u0
    return [lo + (hi - lo) * k / n_u for lo, hi in zip(cuts, cuts[1:]) for k in range(n_u)] + [u0]


def region_edges(region: dict) -> list[Fraction]:
    """slab_edges of a cell's "region" entry (u0, ratio, shells, n_u)."""
    return slab_edges(Fraction(region["u0"]), Fraction(region["ratio"]), int(region["shells"]), int(region["n_u"]))


def slab_count(region: dict) -> int:
    """How many slabs a cell's region has: n_u in each of its shells' annuli and in the core."""
    return (int(region["shells"]) + 1) * int(region["n_u"])


def double_down(x: Fraction) -> float:
    """The largest double <= x (exact: a double is a dyadic rational)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def double_up(x: Fraction) -> float:
    """The least double >= x."""
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def encode_slabs(slabs: list) -> dict:
    """The stored form of rows (u_lo, u_hi, a, b, Lt_lo, Lt_hi, W_lo, W_hi) in increasing u (module docstring):
    the edges dropped, each (lo, hi) pair rounded outward to doubles."""
    values = []
    for sl in slabs:
        for lo, hi in zip(sl[2::2], sl[3::2]):
            values += [double_down(Fraction(lo)), double_up(Fraction(hi))]
    packed = struct.pack(f"<{len(values)}d", *values)
    return {"encoding": ENCODING, "count": len(slabs), "hulls": base64.b64encode(zlib.compress(packed, 9)).decode(
        "ascii")}


def check_stored(stored, region: dict, source: str, cell: str) -> None:
    """Refuse (InvalidParameter "family" naming the file ``source`` and the cell) a stored entry that is not of
    this encoding or does not count the region's slabs: a cheap check of its shape, without decoding it."""
    n = slab_count(region)
    if not (isinstance(stored, dict) and stored.get("encoding") == ENCODING and stored.get("count") == n
            and isinstance(stored.get("hulls"), str)):
        raise InvalidParameter("family", source, f"must store the {n} slabs of cell {cell} as {{'encoding': "
                               f"'{ENCODING}', 'count': {n}, 'hulls': '...'}} (a garbled file)")


def decode_slabs(stored: dict, region: dict, source: str = "the family", cell: str = "root") -> list[tuple]:
    """The rows (u_lo, u_hi, a, b, Lt_lo, Lt_hi, W_lo, W_hi) as exact Fractions, the edges from the region
    (refused naming the file and the cell when garbled)."""
    check_stored(stored, region, source, cell)
    edges = region_edges(region)
    try:
        values = struct.unpack(f"<{PER_SLAB * (len(edges) - 1)}d", zlib.decompress(base64.b64decode(
            stored["hulls"], validate=True)))
    except (ValueError, struct.error, zlib.error) as exc:
        raise InvalidParameter("family", source, f"must store the slabs of cell {cell} as base64 of deflated "
                               f"float64, {PER_SLAB} per slab ({exc})") from None
    if not all(map(math.isfinite, values)) or any(
            lo > hi for lo, hi in zip(values[::2], values[1::2])):
        raise InvalidParameter("family", source, f"must store finite slab hulls lo <= hi in cell {cell} (a "
                               "garbled file)")
    rows = [values[k:k + PER_SLAB] for k in range(0, len(values), PER_SLAB)]
    return [(lo, hi, *map(Fraction, row)) for lo, hi, row in zip(edges, edges[1:], rows)]


__all__ = ["ENCODING", "check_stored", "decode_slabs", "double_down", "double_up", "encode_slabs", "region_edges",
           "slab_count", "slab_edges"]
