"""Regions of the parameter space a statement quantifies over, or a piece of evidence covers, as data.

A :class:`Region` is a box: one :class:`Interval` per named coordinate (``D``, ``K``, ``eta``, ``rho`` = K/D,
...; the registry :data:`COORDINATES` says whether each is an integer and its domain). A coordinate the
region does not name ranges over its whole domain, so ``Region()`` is the whole space ("every D, every K,
...") and ``Region(D=Interval(16))`` is "every D >= 16". Coverage is computed, never read from a label:
:meth:`Region.covers` for one box, :func:`union_covers` for a union of boxes (a box subtracted piece by
piece), so a family certificate over D = 8..512 and eta in [1/16, 1/8] covers exactly those members, and
boxes rho in [0, 1/2] and rho in [1/2, 1] together cover every rho in [0, 1].

The coordinates may be dependent (rho = K/D): a box is then a superset description, and box coverage stays
sound (a statement's box covered in the product space is covered on its members), if not complete.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

from .numbers import frac_str


def _num(x):
    """An exact endpoint: int or Fraction (a float or a string such as "1/16" is converted exactly)."""
    if x is None or isinstance(x, int) and not isinstance(x, bool):
        return x
    if isinstance(x, (Fraction, str, float)):
        f = Fraction(x)
        return f.numerator if f.denominator == 1 else f
    raise TypeError(f"an interval endpoint must be a number, not {x!r}")


@dataclass(frozen=True)
class Interval:
    """The values ``lo <= x <= hi`` of one coordinate (``None``: unbounded on that side; ``lo_open`` /
    ``hi_open``: strict), integers only when ``integer``. Integer intervals are kept closed."""

    lo: object = None
    hi: object = None
    integer: bool = False
    lo_open: bool = False
    hi_open: bool = False

    def __post_init__(self):
        lo, hi = _num(self.lo), _num(self.hi)
        lo_open, hi_open = self.lo_open and lo is not None, self.hi_open and hi is not None
        if self.integer:
            # an integer interval is closed: (a, b) -> [floor(a) + 1, ceil(b) - 1]
            if lo is not None:
                lo = math.floor(lo) + 1 if lo_open else math.ceil(lo)
            if hi is not None:
                hi = math.ceil(hi) - 1 if hi_open else math.floor(hi)
            lo_open = hi_open = False
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "lo_open", lo_open)
        object.__setattr__(self, "hi_open", hi_open)

    @classmethod
    def point(cls, x, integer: bool = False) -> "Interval":
        return cls(x, x, integer)

    def empty(self) -> bool:
        if self.lo is None or self.hi is None:
            return False
        return self.lo > self.hi or (self.lo == self.hi and (self.lo_open or self.hi_open))

    def _above_lo(self, x, open_: bool) -> bool:
        """Whether every value above ``x`` (strictly when ``open_``) ... lies above our lower end."""
        if self.lo is None:
            return True
        if x is None:
            return False
        return x > self.lo or (x == self.lo and (open_ or not self.lo_open))

    def _below_hi(self, x, open_: bool) -> bool:
        if self.hi is None:
            return True
        if x is None:
            return False
        return x < self.hi or (x == self.hi and (open_ or not self.hi_open))

    def covers(self, other: "Interval") -> bool:
        """Whether every value of ``other`` lies in this interval."""
        if other.empty():
            return True
        if self.integer and not other.integer and not (other.lo == other.hi and other.lo is not None
                                                      and Fraction(other.lo).denominator == 1):
            return False             # a real interval wider than one integer point has non-integers
        return self._above_lo(other.lo, other.lo_open) and self._below_hi(other.hi, other.hi_open)

    def meet(self, other: "Interval") -> "Interval":
        """The values in both."""
        integer = self.integer or other.integer
        if self.lo is None or (other.lo is not None and (other.lo > self.lo or (other.lo == self.lo and other.lo_open))):
            lo, lo_open = other.lo, other.lo_open
        else:
            lo, lo_open = self.lo, self.lo_open
        if self.hi is None or (other.hi is not None and (other.hi < self.hi or (other.hi == self.hi and other.hi_open))):
            hi, hi_open = other.hi, other.hi_open
        else:
            hi, hi_open = self.hi, self.hi_open
        return Interval(lo, hi, integer, lo_open, hi_open)

    def minus(self, other: "Interval") -> list["Interval"]:
        """This interval without ``other``: at most two intervals (below and above it)."""
        out = []
        if other.lo is not None:
            out.append(self.meet(Interval(None, other.lo, self.integer, hi_open=not other.lo_open)))
        if other.hi is not None:
            out.append(self.meet(Interval(other.hi, None, self.integer, lo_open=not other.hi_open)))
        return [iv for iv in out if not iv.empty()]

    def label(self, name: str) -> str:
        """How the interval reads: "D = 8", "D = 8..512", "D >= 16", "eta in [1/16, 1/8]"."""
        f = lambda x: frac_str(Fraction(x))  # noqa: E731
        if self.lo is not None and self.lo == self.hi:
            return f"{name} = {f(self.lo)}"
        if self.lo is None and self.hi is None:
            return f"every {name}"
        if self.hi is None:
            return f"{name} {'>' if self.lo_open else '>='} {f(self.lo)}"
        if self.lo is None:
            return f"{name} {'<' if self.hi_open else '<='} {f(self.hi)}"
        if self.integer:
            return f"{name} = {f(self.lo)}..{f(self.hi)}"
        return f"{name} in {'(' if self.lo_open else '['}{f(self.lo)}, {f(self.hi)}{')' if self.hi_open else ']'}"

    def as_dict(self) -> dict:
        enc = lambda x: None if x is None else frac_str(Fraction(x))  # noqa: E731
        return {"lo": enc(self.lo), "hi": enc(self.hi), "integer": self.integer, "lo_open": self.lo_open,
                "hi_open": self.hi_open}

    @classmethod
    def from_dict(cls, d: dict) -> "Interval":
        return cls(d.get("lo"), d.get("hi"), d.get("integer", False), d.get("lo_open", False), d.get("hi_open", False))


# The coordinates a region may name: whether each is an integer, and its domain (what an unnamed coordinate
# ranges over). Sizes as in docs/setting.md; rho = K/D, x = eta_V c_L v N / K (the step-size invariant) and
# kappa (verify.derive.invariants) are the invariants of the reduced recursion.
COORDINATES = {
    "M": Interval(1, None, True), "d": Interval(1, None, True), "D": Interval(1, None, True),
    "N": Interval(1, None, True), "K": Interval(0, None, True),
    "eta": Interval(0, None, lo_open=True), "vnorm": Interval(0, None, lo_open=True),
    "rho": Interval(0, 1), "x": Interval(0, None), "kappa": Interval(None, None),
}


def domain(name: str) -> Interval:
    """The whole range of coordinate ``name`` (:data:`COORDINATES`)."""
    if name not in COORDINATES:
        raise ValueError(f"unknown region coordinate {name!r}: one of {', '.join(COORDINATES)}")
    return COORDINATES[name]


@dataclass(frozen=True)
class Region:
    """A box of the parameter space: ``bounds`` maps coordinate names (:data:`COORDINATES`) to intervals; an
    unnamed coordinate ranges over its domain. ``text`` is an optional name it reads as (e.g. a family's
    label); it never enters a comparison."""

    bounds: tuple = ()
    text: str = field(default="", compare=False)

    def __init__(self, bounds=(), text: str = "", **coords):
        items = dict(bounds.items() if isinstance(bounds, dict) else bounds)
        items.update(coords)
        norm = {}
        for name, iv in items.items():
            dom = domain(name)
            if not isinstance(iv, Interval):
                iv = (Interval(iv[0], iv[1], dom.integer) if isinstance(iv, tuple)
                      else Interval.point(iv, dom.integer))
            iv = dom.meet(replace(iv, integer=dom.integer))
            if iv != dom:
                norm[name] = iv
        object.__setattr__(self, "bounds", tuple(sorted(norm.items())))
        object.__setattr__(self, "text", text)

    def interval(self, name: str) -> Interval:
        return dict(self.bounds).get(name, domain(name))

    def empty(self) -> bool:
        return any(iv.empty() for _, iv in self.bounds)

    def covers(self, other: "Region") -> bool:
        """Whether every point of ``other`` lies in this box."""
        return other.empty() or all(iv.covers(other.interval(n)) for n, iv in self.bounds)

    def meet(self, other: "Region") -> "Region":
        names = dict(self.bounds).keys() | dict(other.bounds).keys()
        return Region({n: self.interval(n).meet(other.interval(n)) for n in names})

    def minus(self, other: "Region") -> list["Region"]:
        """This box without ``other``: disjoint boxes (one coordinate cut at a time)."""
        out, rest = [], dict(self.bounds)
        for n, iv in other.bounds:
            mine = rest.get(n, domain(n))
            out += [Region({**rest, n: part}) for part in mine.minus(iv)]
            rest[n] = mine.meet(iv)
            if rest[n].empty():
                break
        return [r for r in out if not r.empty()]

    def label(self) -> str:
        if self.text:
            return self.text
        return ", ".join(iv.label(n) for n, iv in self.bounds) or "every dimension"

    def __str__(self) -> str:
        # how a region reads in a finding's text or a saved label: its name, never the dataclass's repr
        return self.label()

    def as_dict(self) -> dict:
        return {"region": {n: iv.as_dict() for n, iv in self.bounds}, "text": self.text, "label": self.label()}

    @classmethod
    def from_dict(cls, d: dict) -> "Region":
        return cls({n: Interval.from_dict(iv) for n, iv in d["region"].items()}, text=d.get("text", ""))


def _joined(a: Interval, b: Interval) -> Interval | None:
    """The union of two intervals of one coordinate when it is an interval (they overlap or touch), else None."""
    if a.integer != b.integer:
        return None
    lo_first, hi_first = (a, b) if a._above_lo(b.lo, b.lo_open) else (b, a)      # lo_first starts no later
    if lo_first.hi is not None and hi_first.lo is not None:
        gap = hi_first.lo - lo_first.hi
        if gap > (1 if a.integer else 0) or (gap == 0 and lo_first.hi_open and hi_first.lo_open):
            return None
    hi_last = hi_first if hi_first._below_hi(lo_first.hi, lo_first.hi_open) else lo_first
    return Interval(lo_first.lo, hi_last.hi, a.integer, lo_first.lo_open, hi_last.hi_open)


def merged(boxes: list[Region]) -> list[Region]:
    """The same union of boxes in fewer boxes, for reading: two boxes equal in every coordinate but one, whose
    intervals there overlap or touch, become one, until no pair does (a named box keeps its name and is never
    merged). Exact: the result covers exactly the points of ``boxes``."""
    out = list(dict.fromkeys(boxes))
    changed = True
    while changed:
        changed = False
        names = sorted({n for b in out if not b.text for n, _ in b.bounds})
        for name in names:
            groups: dict = {}
            for b in out:
                key = None if b.text else tuple((n, iv) for n, iv in b.bounds if n != name)
                groups.setdefault(key, []).append(b)
            nxt = []
            for key, members in groups.items():
                if key is None:
                    nxt += members
                    continue
                members.sort(key=lambda b: (b.interval(name).lo is not None, b.interval(name).lo or 0))
                run = members[0]
                for b in members[1:]:
                    j = _joined(run.interval(name), b.interval(name))
                    if j is None:
                        nxt.append(run)
                        run = b
                    else:
                        run, changed = Region({**dict(run.bounds), name: j}), True
                nxt.append(run)
            out = nxt
    return out


def union_covers(pieces: list[Region], target: Region) -> bool:
    """Whether the union of the boxes ``pieces`` covers ``target``: remove one piece that meets it and check
    what is left against the others."""
    if target.empty():
        return True
    if any(p.covers(target) for p in pieces):
        return True
    for i, p in enumerate(pieces):
        if not p.meet(target).empty():
            others = pieces[:i] + pieces[i + 1:]
            return all(union_covers(others, r) for r in target.minus(p))
    return False


__all__ = ["Interval", "Region", "COORDINATES", "domain", "merged", "union_covers"]
