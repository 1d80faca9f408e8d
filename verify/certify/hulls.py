"""Hulls of enclosures over boxes or slabs in u: the merge of two and an index answering "the hull over every box
whose u-interval meets [lo, hi]" (what verify.certify.comparison.schedule asks of a region, per shell). Plain
exact rationals, no symbolic machinery: an atlas member query (verify.certify.atlas_query) uses it without SymPy."""
from __future__ import annotations

import bisect
from fractions import Fraction


def _merge(h: dict | None, g: dict) -> dict:
    if h is None:
        return g
    return {"a": min(h["a"], g["a"]), "b": max(h["b"], g["b"]),
            "Lt": (min(h["Lt"][0], g["Lt"][0]), max(h["Lt"][1], g["Lt"][1])),
            "W": (min(h["W"][0], g["W"][0]), max(h["W"][1], g["W"][1]))}


class OverlapIndex:
    """The hull of the enclosures over the boxes whose u-interval meets a query interval [lo, hi].

    Boxes sorted by u_lo: those with u_lo <= hi are a prefix; of these, the ones with u_hi >= lo are
    found in a segment tree whose nodes keep their hull and the least and largest u_hi below them
    (a node whose least u_hi is >= lo is taken whole). Cost: O((1 + k) log n) for k boxes that end
    below lo.
    """

    def __init__(self, rows: list):
        """``rows``: (u_lo, u_hi, hull) triples (a box's or a slab's u-interval and its enclosures)."""
        self.rows = sorted(rows, key=lambda r: (r[0], r[1]))
        self.keys = [r[0] for r in self.rows]
        n = len(self.rows)
        self.size = 1
        while self.size < max(n, 1):
            self.size *= 2
        self.tree = [None] * (2 * self.size)          # (hull, min u_hi, max u_hi) per node
        for i, (_, u_hi, h) in enumerate(self.rows):
            self.tree[self.size + i] = (h, u_hi, u_hi)
        for k in range(self.size - 1, 0, -1):
            a, b = self.tree[2 * k], self.tree[2 * k + 1]
            self.tree[k] = a if b is None else b if a is None else (_merge(a[0], b[0]), min(a[1], b[1]),
                                                                     max(a[2], b[2]))

    def hull(self, lo: Fraction, hi: Fraction) -> dict | None:
        end = bisect.bisect_right(self.keys, hi)      # rows [0, end) have u_lo <= hi
        out = None

        def visit(k: int, k_lo: int, k_hi: int) -> None:
            nonlocal out
            node = self.tree[k]
            if node is None or k_lo >= end or node[2] < lo:
                return
            if k_hi <= end and node[1] >= lo:
                out = _merge(out, node[0])
                return
            mid = (k_lo + k_hi) // 2
            visit(2 * k, k_lo, mid)
            visit(2 * k + 1, mid, k_hi)
        visit(1, 0, self.size)
        return out


__all__ = ["OverlapIndex"]
