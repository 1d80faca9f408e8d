"""Scopes: what a statement speaks of (its quantifiers as data: sizes, sigma, conventions, horizon, hypotheses) and
what a record covers, and coverage computed from them (:func:`covered`), never read from a label."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from ..model.hypotheses import closure, hypotheses
from ..model.regions import Region, merged, union_covers
from ..model.setting import conventions_of

ALL = "all"


@dataclass(frozen=True)
class From:
    """The horizon "every t >= start": ``start`` an integer, or None for "from some T* on" (what a statement
    "there is T* such that for every T >= T*" quantifies over; a record with a named start covers it)."""

    start: int | None = None

    def __post_init__(self):
        s = self.start
        if not (s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0)):
            raise TypeError(f"From.start must be None or a step count >= 0, not {s!r}")
        if s is not None:
            object.__setattr__(self, "start", int(s))

    def label(self) -> str:
        return "every t >= some T*" if self.start is None else f"t >= {self.start}"


def horizon_covers(a, b) -> bool:
    """Whether the horizon ``a`` (of a record) covers the horizon ``b`` (of a statement)."""
    if a == ALL:
        return True
    if isinstance(a, From):
        # "t >= s" covers "t >= s'" for s' >= s, and "from some T* on" (take T* = s); nothing of the form t <= H
        return isinstance(b, From) and (b.start is None or (a.start is not None and b.start >= a.start))
    return not isinstance(b, From) and b != ALL and b <= a


def horizon_label(h) -> str:
    return "all t" if h == ALL else h.label() if isinstance(h, From) else f"t <= {h}"


def _member_key(x) -> str:
    return x if isinstance(x, str) else "\x00" + x.label()


def _dims_covered(members: list, target) -> bool:
    """Whether the union of ``members`` (dims values of records: "all", labels, Regions) covers ``target`` (one
    dims atom of a statement: "all", a label or a Region). Labels are compared as they are (a finite set of
    sizes); Regions by computed coverage (verify.model.regions.union_covers), "all" being the whole space."""
    if any(m == ALL for m in members):
        return True
    if isinstance(target, str) and target != ALL and target in members:
        return True
    regions = [m for m in members if isinstance(m, Region)]
    if target == ALL:
        return union_covers(regions, Region())
    return isinstance(target, Region) and union_covers(regions, target)


@dataclass(frozen=True)
class Scope:
    """What a statement speaks of (its quantifiers, as data), or what a record covers.

    ``dims``: ``"all"`` (every size) or a tuple of members, each a label such as ``"M=2 d=2 D=3 N=2 K=2"`` (one
    checked size: compared as it is) or a :class:`verify.model.regions.Region` (a box of sizes and parameters, e.g.
    D = 8..512 and eta in [1/16, 1/8], or "every D >= 16": compared by computed coverage). ``sigma`` and
    ``conventions``: ``"all"`` or a tuple of specs / labels (``"reference"``). ``horizon``: ``"all"`` (every t),
    an integer H (t <= H) or :class:`From` (every t >= t0, or from some T* on). ``assumes``: hypothesis ids
    (verify.model.hypotheses): the scope is restricted to settings where all of them hold -- "each regime of
    the hypotheses" is ``dims="all"`` with the statement's hypotheses assumed. ``also``: further scopes a
    statement speaks of besides this one (a union, e.g. "the regimes run", whose sizes and sigmas do not form a
    product); a record's scope has none.
    """

    dims: str | tuple = ALL
    sigma: str | tuple = ALL
    conventions: str | tuple = ALL
    horizon: object = ALL
    assumes: tuple = ()
    also: tuple = ()

    def __post_init__(self):
        for name in ("dims", "sigma", "conventions"):
            v = getattr(self, name)
            if isinstance(v, Region):
                v = (v,)
            if isinstance(v, (list, set, frozenset)):
                v = tuple(sorted(v, key=_member_key)) if name == "dims" else tuple(sorted(map(str, v)))
            elif isinstance(v, str) and v != ALL:
                v = (v,)
            elif not (v == ALL or isinstance(v, tuple)):
                raise TypeError(f"Scope.{name} must be 'all' or a tuple, not {v!r}")
            if v != ALL and not all(isinstance(x, str) or (name == "dims" and isinstance(x, Region)) for x in v):
                raise TypeError(f"Scope.{name} members must be labels{' or Regions' if name == 'dims' else ''}: {v!r}")
            object.__setattr__(self, name, v)
        h = self.horizon
        if not (h == ALL or isinstance(h, From)
                or (isinstance(h, (int, np.integer)) and not isinstance(h, bool) and h >= 0)):
            raise TypeError(f"Scope.horizon must be 'all', a step count >= 0 or a From, not {h!r}")
        if isinstance(h, np.integer):
            object.__setattr__(self, "horizon", int(h))
        object.__setattr__(self, "assumes", tuple(sorted(x.id for x in hypotheses(self.assumes))))
        if not all(isinstance(p, Scope) and not p.also for p in self.also):
            raise TypeError(f"Scope.also must be a tuple of Scopes without their own: {self.also!r}")
        object.__setattr__(self, "also", tuple(self.also))

    def covers(self, other: "Scope") -> bool:
        """Whether every point of ``other`` lies in this scope: its dims (computed for regions), sigma and
        conventions among ours, its horizon within ours, and every hypothesis this scope assumes implied by
        those ``other`` assumes."""
        return covered([self], other)

    def _covers_besides_dims(self, atom: "Scope") -> bool:
        for name in ("sigma", "conventions"):
            a, b = getattr(self, name), getattr(atom, name)
            if a != ALL and (b == ALL or not set(b) <= set(a)):
                return False
        return set(self.assumes) <= closure(atom.assumes) and horizon_covers(self.horizon, atom.horizon)

    def admits(self, setting) -> bool:
        """Whether the regime ``setting`` lies in this scope (its sizes, sigma, convention, and every
        setting-level assumption; a run-level assumption is the run's to check). A dims Region admits no
        setting by its label: a region scope admits a setting only through its other members."""
        if any(p.admits(setting) for p in self.also):
            return True
        if self.dims != ALL and not any(isinstance(d, str) and d.split()[:5] == dims_of(setting).split()
                                        for d in self.dims):
            return False
        if self.sigma != ALL and setting.sigma.spec() not in self.sigma:
            return False
        if self.conventions != ALL and conventions_of(setting) not in self.conventions:
            return False
        return all(h.holds(setting) for h in hypotheses(self.assumes) if h.holds is not None)

    def atoms(self) -> list["Scope"]:
        """The scope split into one scope per (dims, sigma, conventions) value ("all" stays whole), with the atoms
        of the scopes in ``also``."""
        vals = [getattr(self, n) if getattr(self, n) == ALL else [(x,) for x in getattr(self, n)]
                for n in ("dims", "sigma", "conventions")]
        return [Scope(d, s, c, self.horizon, self.assumes)
                for d, s, c in product(*[[v] if v == ALL else v for v in vals])] + [a for p in self.also
                                                                                   for a in p.atoms()]

    def dims_label(self) -> str:
        """How the dims read: "all dimensions", or "checked at dimensions {...}" (labels and regions)."""
        if self.dims == ALL:
            return "all dimensions"
        # boxes read merged (the same union in fewer boxes: a tiling of cells reads as its region)
        members = [x for x in self.dims if not isinstance(x, Region)] + merged(
            [x for x in self.dims if isinstance(x, Region)])
        return "checked at dimensions {" + "; ".join(_member_label(x) for x in members) + "}"

    def label(self) -> str:
        """How the scope reads in every output: "all dimensions" and "checked at dimensions {...}"
        never look alike; the assumptions are named."""
        sig = "every sigma" if self.sigma == ALL else "sigma in {" + ", ".join(self.sigma) + "}"
        conv = "every convention" if self.conventions == ALL else "conventions {" + ", ".join(self.conventions) + "}"
        out = ", ".join((self.dims_label(), sig, conv, horizon_label(self.horizon)))
        if self.assumes:
            out += ", assuming {" + "; ".join(h.text for h in hypotheses(self.assumes)) + "}"
        return "; ".join([out] + [p.label() for p in self.also])

    def short_label(self) -> str:
        """The label folded: counts instead of long lists (the full label is one click away in reports)."""
        def fold(v, one, many):
            return one if v == ALL else (", ".join(map(_member_label, v)) if len(v) <= 2 else f"{len(v)} {many}")
        # dims are sizes (labels) or boxes of variables (Regions, e.g. the atlas's (rho, x, kappa) cells)
        boxes = self.dims != ALL and all(isinstance(x, Region) for x in self.dims)
        parts = [fold(self.dims, "all dimensions", "regions" if boxes else "sizes"),
                 fold(self.sigma, "every sigma", "sigmas"),
                 fold(self.conventions, "every convention", "conventions"), horizon_label(self.horizon)]
        if self.assumes:
            parts.append(f"{len(self.assumes)} assumptions")
        return "; ".join([", ".join(parts)] + [p.short_label() for p in self.also])

    def as_dict(self) -> dict:
        enc = lambda v: v if v == ALL else [x.as_dict() if isinstance(x, Region) else x for x in v]  # noqa: E731
        hor = {"from": self.horizon.start} if isinstance(self.horizon, From) else self.horizon
        return {"dims": enc(self.dims), "sigma": enc(self.sigma), "conventions": enc(self.conventions),
                "horizon": hor, "assumes": list(self.assumes), "label": self.label(),
                "short_label": self.short_label()} | ({"also": [p.as_dict() for p in self.also]} if self.also else {})

    @classmethod
    def from_dict(cls, d: dict) -> "Scope":
        dec = lambda v: v if v == ALL else tuple(Region.from_dict(x) if isinstance(x, dict) else x  # noqa: E731
                                                  for x in v)
        h = d["horizon"]
        return cls(dec(d["dims"]), dec(d["sigma"]), dec(d["conventions"]),
                   From(h["from"]) if isinstance(h, dict) else h, tuple(d.get("assumes", ())),
                   tuple(cls.from_dict(p) for p in d.get("also", ())))


def _member_label(x) -> str:
    return x.label() if isinstance(x, Region) else x


def dims_label(M, d, D, N, K) -> str:
    """``"M=2 d=2 D=3 N=2 K=2"``: how one checked size reads in every scope."""
    return f"M={M} d={d} D={D} N={N} K={K}"


def dims_of(setting) -> str:
    """The :func:`dims_label` of a setting's sizes."""
    return dims_label(setting.M, setting.d, setting.D, setting.N, setting.K)


def _meet_horizon(a, b):
    if a == ALL:
        return b
    if b == ALL:
        return a
    if isinstance(a, From) and isinstance(b, From):
        return From(None if a.start is None or b.start is None else max(a.start, b.start))
    if isinstance(a, From) or isinstance(b, From):
        raise ValueError(f"the horizons {a!r} and {b!r} meet in a window, which a scope cannot state")
    return min(a, b)


def intersect(scopes: list[Scope]) -> Scope:
    """The scope every one of ``scopes`` covers (what a conjunction of steps covers): common values (the
    common part of regions), the shortest horizon, and every assumption of any of them."""
    def meet(a, b):
        if a == ALL:
            return b
        if b == ALL:
            return a
        out = [x for x in a if isinstance(x, str) and x in b]
        out += [m for x in a if isinstance(x, Region) for y in b if isinstance(y, Region)
                for m in [x.meet(y)] if not m.empty()]
        return tuple(out)
    out = Scope()
    for sc in scopes:
        out = Scope(meet(out.dims, sc.dims), meet(out.sigma, sc.sigma), meet(out.conventions, sc.conventions),
                    _meet_horizon(out.horizon, sc.horizon), out.assumes + sc.assumes)
    return out


def covered(scopes: list[Scope], target: Scope) -> bool:
    """Whether the union of ``scopes`` covers ``target``: for each of its atoms, the scopes that cover it in
    sigma, conventions, horizon and assumptions cover its dims together (regions by union, verify.model.regions)."""
    for atom in target.atoms():
        fit = [s for s in scopes if s._covers_besides_dims(atom)]
        members = [m for s in fit for m in ((ALL,) if s.dims == ALL else s.dims)]
        if not _dims_covered(members, atom.dims if atom.dims == ALL else atom.dims[0]):
            return False
    return True


__all__ = ["ALL", "From", "Scope", "Region", "intersect", "covered", "dims_label", "dims_of",
           "horizon_covers", "horizon_label"]
