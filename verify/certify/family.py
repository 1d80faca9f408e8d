"""Certificates for families of regimes: ``verify certify --D 8..512 --eta 1/16..1/8 ...``.

The reduced map sees a regime only through its invariants (s, x, y) (verify.derive.invariants: r = 1/s =
(D - K)/K, x = eta_V c_L v N/K, y = eta_KQ c_L v lambda^2 beta^2 ||V*||^2/K^2); the observables carry exact
prefactors. A family is a box of parameters (D over integers, eta, eta_KQ and ||V*|| over intervals, the
rest fixed); its image is covered by cells, each a box of invariants, and each cell is certified once for all
its members (verify.certify.region with interval invariants; every member's entry into the region through the
tube of verify.certify.entry, or else a first-order Taylor model of the prefix over the box, verify.certify.prefix,
or, in an atlas, that model split into pieces (on states capped by a monotone enclosure if asked): ENTRY_ROUTES):

  cell        a parameter box; its invariant box (exact: each invariant is a monomial in the parameters, so its
              extremes over the box are at the corners); a region R(u0, C) invariant for every member; a step
              T0 by which every member is in R and the range of z = 1/u^2 there; the normalised decay and
              observables' hulls on every slab of the region (uniform over the cell)
  member      any point of the family: its bounds at any T >= T0 of its cell come from the comparison lemma
              run with its own exact cubic coefficient c over the cell's slab hulls (verify.certify.comparison:
              a few milliseconds), in the same ``bounds`` format as one regime's certificate

The family's box is cut into ranges of consecutive lengths D (each spanning at most D_SPAN of its least D, the
other ranges whole: the entry tube holds them, verify.certify.entry); a cell that does not close is bisected
(D first, then the widest relative interval), up to a depth; cells run on the Dask executor (verify.run.execute).
The uniform consequence: lim q(T)/leading_q(T) over the whole
family, from each cell's deepest shell (verify.certify.bounds.normalised_limits), as a table.
"""
from __future__ import annotations

import bisect
import contextlib
import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

from ..errors import InvalidParameter
from ..model.numbers import frac_str
from ..model.spec import BY_NAME
from ..model.precision import arb_precision
from ..run.execute import Executor
from .arbfun import widened
from .hulls import OverlapIndex
from .obligations import CertificateFailed, Obligation, raise_first_failure
from .slabs import decode_slabs, encode_slabs, slab_edges
from recheck.certificates import CheckFailed, check_query_cell

MAX_SPLITS = 24         # bisections of a cell that does not close, before the family certificate fails
# C = m c/(1 - |rho(0)|) for the first m in C_MULTIPLES whose region is invariant (a neighbour's m first: the
# region check is most of a cell's time, and neighbouring cells close with the same m)
C_MULTIPLES = (2, 4, 8, 16, 32)
# The region's top u0, largest first (at most 7/8 of u(0)). The prefix must bring every member of a cell into R;
# while u falls from near 1 the members part (their fall times differ with eta), and the first-order Taylor
# model's remainder grows by ~0.2% a step, so an earlier entry (u0 = 1/2 rather than 1/4) lets wider cells close:
# at D = 32 a cell of 2% in eta enters at u0 = 1/2 after 3072 steps, while at u0 = 1/4 even 1% becomes unbounded
# at step 44755. R(1/2, C) is invariant with C up to 32 c/(1 - |rho(0)|); above 1/2 no C_MULTIPLES closes.
# 1/8 and 1/16 are for a large c/x = (1 + r) kappa/r^2 (large kappa, rho near 1/2): there no constant C is
# invariant on u <= 1/4, not even at one point of the cell in float64 (docs/atlas.md, "Region A, measured"): at the
# top of R eps = (alpha - alpha*)/u^3 grows by rho(u) R^3 > 1 a step (u falls by a large factor R = u/u' while
# alpha - alpha* shrinks only by rho(u) = 1 - x K||s||^2), and a C large enough to absorb it reaches past the
# root of the increment (alpha > (r + E)/(E - 1): delta falls, Q < 0). Both effects scale with c u^2/x.
U0_CAPS = (Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 16))
D_SPAN = Fraction(1, 50)    # a cell's lengths span at most this fraction of its least D (length_cells)
CELL_KNOBS = {"bits": 128, "shells": 120, "ratio": Fraction(3, 4), "n_u": 4, "n_eps": 2, "max_depth": 6,
              "max_prefix": 400_000, "check_every": 64, "entry": "auto", "split_leaves": 0, "widen": False}


@dataclass(frozen=True)
class FamilySpec:
    """The fixed options (make_setting keywords) and the ranges {name: (lo, hi)} of a family."""

    options: tuple          # sorted (key, value) pairs of the fixed options
    ranges: tuple           # sorted (name, (lo, hi)) pairs

    @classmethod
    def of(cls, options: dict, ranges: dict) -> "FamilySpec":
        return cls(tuple(sorted(options.items())), tuple(sorted(ranges.items())))

    @property
    def range_of(self) -> dict:
        return dict(self.ranges)

    def setting(self, values: dict):
        """The member at ``values`` (a value for every ranged name) as a validated Setting."""
        from ..model import make_setting  # heavy: loads numpy
        kw = dict(self.options)
        for name, v in values.items():
            kw[name] = v if BY_NAME[name].kind == "int" else frac_str(Fraction(v))     # a number as exact text
        if "eta_kq" not in self.range_of and kw.get("eta_kq") is None:
            kw["eta_kq"] = None
        return make_setting(**kw)

    def check_member(self, values: dict) -> None:
        """Refuse a member outside the family, naming the parameter and its range (InvalidParameter "member": the member of a query)."""
        for name, (lo, hi) in self.ranges:
            if name not in values:
                raise InvalidParameter("member", f"no {name}", f"must give {name}: the family ranges over {name} in "
                                       f"{_range_text(name, lo, hi)}")
            v = values[name]
            integer = BY_NAME[name].kind == "int"
            if not lo <= v <= hi or (integer and Fraction(v).denominator != 1):
                raise InvalidParameter("member", f"{name}={frac_str(Fraction(v))}", f"{name} must lie in the "
                                       f"family's range {_range_text(name, lo, hi)}" + (" (an integer)" if integer
                                                                                       else ""))
        fixed = dict(self.options)
        extra = {n for n in set(values) - set(self.range_of) if str(fixed.get(n)) != str(values[n])}
        if extra:
            raise InvalidParameter("member", sorted(extra)[0], f"{sorted(extra)[0]} is fixed in this family (it ranges "
                                   f"over {', '.join(self.range_of)})")

    def parameter_ties(self) -> dict | None:
        """{parameter: a monomial in the ranged names, as formula text} (e.g. eta_V and eta_KQ both "eta"): how a
        member's parameters follow from its ranged values, when every parameter is such a monomial, found from the
        family box's corners and checked exactly at every corner and the box's centre; None otherwise. A file
        states them so that the re-checker can take kappa = y/x over the cell's corners (recheck.certificates)."""
        from ..derive.invariants import PARAMETERS, parameter_values  # heavy: loads flint,mpmath,numpy,sympy
        ranged = [(n, lo, hi) for n, (lo, hi) in self.ranges if lo != hi]
        base = {n: lo for n, (lo, _) in self.ranges}
        at = lambda v: parameter_values(self.setting(v))  # noqa: E731
        p0 = at(base)
        exps = {}
        for n, lo, hi in ranged:
            p1, r = at(base | {n: hi}), Fraction(hi) / Fraction(lo)
            for k, (a, b) in enumerate(zip(p0, p1)):
                e = next((e for e in range(-4, 5) if a != 0 and Fraction(b) == Fraction(a) * r**e), None)
                if e is None:
                    return None
                exps[(k, n)] = e
        const = [Fraction(a) / math.prod(Fraction(base[n]) ** exps[(k, n)] for n, _, _ in ranged) if a else Fraction(0)
                 for k, a in enumerate(p0)]
        mid = {n: ((lo + hi) // 2 if n == "D" else (Fraction(lo) + Fraction(hi)) / 2) for n, (lo, hi) in self.ranges}
        for v in Cell(self.ranges).corners() + [mid]:
            got = at(v)
            if any(Fraction(g) != c * math.prod(Fraction(v[n]) ** exps[(k, n)] for n, _, _ in ranged)
                   for k, (g, c) in enumerate(zip(got, const))):
                return None
        return {str(p): _monomial_text(const[k], [(n, exps[(k, n)]) for n, _, _ in ranged])
                for k, p in enumerate(PARAMETERS)}

    def as_dict(self) -> dict:
        return {"options": {k: v for k, v in self.options}, "ranges": {k: [frac_str(Fraction(lo)), frac_str(
            Fraction(hi))] for k, (lo, hi) in self.ranges}}


def _monomial_text(c: Fraction, powers: list) -> str:
    """c * n1^e1 * ... as formula text ("eta", "4", "1/2*D^-1")."""
    terms = [n if e == 1 else f"{n}^{e}" if e > 0 else f"{n}^({e})" for n, e in powers if e]
    if c != 1 or not terms:
        terms.insert(0, frac_str(c) if c >= 0 else f"({frac_str(c)})")
    return "*".join(terms)


def _range_text(name, lo, hi) -> str:
    return f"{frac_str(Fraction(lo))}..{frac_str(Fraction(hi))}"


@dataclass(frozen=True)
class Cell:
    """A box of parameters: {name: (lo, hi)} for the ranged names (D as integers)."""

    box: tuple              # sorted (name, (lo, hi)) pairs
    path: str = ""          # its place in the bisection tree ("" = the whole family, then "0"/"1" per split)
    hint: int = 0           # the multiple of C that closed (or was tried last) in a neighbouring cell: tried first

    @property
    def bounds(self) -> dict:
        return dict(self.box)

    def corners(self) -> list[dict]:
        names = [n for n, _ in self.box]
        out = [{}]
        for n in names:
            lo, hi = self.bounds[n]
            out = [c | {n: v} for c in out for v in ({lo, hi})]
        return out

    def contains(self, values: dict) -> bool:
        return all(lo <= values[n] <= hi for n, (lo, hi) in self.box)

    def split(self) -> tuple["Cell", "Cell"] | None:
        """Two halves: D first while the cell holds several lengths, then the widest relative interval."""
        b = self.bounds
        if "D" in b and b["D"][0] < b["D"][1]:
            lo, hi = b["D"]
            mid = (lo + hi) // 2
            return (self._with("D", (lo, mid), "0"), self._with("D", (mid + 1, hi), "1"))
        wide = [(Fraction(hi - lo) / hi, n) for n, (lo, hi) in self.box if n != "D" and hi > lo]
        if not wide:
            return None
        n = max(wide)[1]
        lo, hi = b[n]
        mid = (lo + hi) / 2
        return (self._with(n, (lo, mid), "0"), self._with(n, (mid, hi), "1"))

    @property
    def depth(self) -> int:
        """Bisections since the cell's seed (the bits after a length's seed label "D<len>.<k>:")."""
        return len(self.path.rsplit(":", 1)[-1])

    @classmethod
    def of_result(cls, res: dict) -> "Cell":
        """The cell of a certify_cell result (its JSON box and path)."""
        return cls(tuple(sorted((n, (_num(n, lo), _num(n, hi))) for n, (lo, hi) in res["box"].items())), res["path"],
                   res.get("C_multiple", 0))

    def _with(self, name, pair, bit) -> "Cell":
        return Cell(tuple(sorted((self.bounds | {name: pair}).items())), self.path + bit, self.hint)

    def as_dict(self) -> dict:
        return {"path": self.path, "box": {n: [frac_str(Fraction(lo)), frac_str(Fraction(hi))] for n, (lo, hi) in
                                           self.box}}


def invariant_box(spec: FamilySpec, cell: Cell) -> tuple:
    """The exact box of (s, x, y) over the cell: each invariant is a monomial in positive parameters (so
    monotone in each), and its extremes are at the cell's corners."""
    from .coordinates import param_values  # heavy: loads flint,mpmath,numpy,sympy
    pts = [param_values(spec.setting(c)) for c in cell.corners()]
    return tuple((min(p[k] for p in pts), max(p[k] for p in pts)) for k in range(3))


def _base_C(P: tuple, scaled: bool = False) -> Fraction:
    """c/(1 - |rho(0)|) at its largest over the box: the fixed point of eps at u = 0 for the fastest decay and
    the weakest contraction (rho(0) = 1 - x); ``scaled``: the same over s_hi, for e = eps/s (verify.certify.scaled:
    (c/s)/(1 - |rho(0)|) with c/s = (1 + s) y, which has a limit as s -> 0)."""
    from .coordinates import c_exact  # heavy: loads flint,mpmath,numpy,sympy
    (s_lo, s_hi), (x_lo, x_hi), (y_lo, y_hi) = P
    base = c_exact((s_hi, x_lo, y_hi)) / min(abs(x_lo), abs(2 - x_hi))
    return base / s_hi if scaled else base


def _slabs(rc, knobs: dict) -> list:
    """The hull of the normalised decay Q and the observables' ratios Lt, W over the boxes of each slab of the
    region's initial grid (each box lies in one slab: bisection stays inside its grid box), widened as stated."""

    from .arbfun import widened  # heavy: loads flint
    from .region import _hull_of, _merge  # heavy: loads flint,mpmath,numpy,sympy
    edges = slab_edges(rc.u0, knobs["ratio"], knobs["shells"], knobs["n_u"])
    hulls = [None] * (len(edges) - 1)
    for res in rc.results:
        k = bisect.bisect_right(edges, res.box.u_lo) - 1
        hulls[k] = _merge(hulls[k], _hull_of(res))
    out = []
    for (lo, hi), h in zip(zip(edges, edges[1:]), hulls):
        a, b = widened(h["a"], h["b"])
        out.append((lo, hi, a, b, *widened(*h["Lt"]), *widened(*h["W"])))
    return out


def slab_hull(slabs: list):
    """``hull(lo, hi)`` (as verify.certify.comparison.schedule takes it) over the slabs meeting [lo, hi]."""
    index = OverlapIndex([(sl[0], sl[1], {"a": sl[2], "b": sl[3], "Lt": (sl[4], sl[5]), "W": (sl[6], sl[7])})
                          for sl in slabs])
    return index.hull


def _region(P: tuple, hint: int, knobs: dict, scaled: bool = False) -> tuple:
    """(u0, m, the region check) for the cell's invariants: the largest u0 of U0_CAPS (at most 7/8 of the
    smallest u(0) = (D - K)/D) for which a region R(u0, m c/(1 - |rho(0)|)) is invariant, m the first of
    C_MULTIPLES that closes (the neighbouring cell's first); the last check tried when none closes. ``scaled``: in
    e = eps/s (verify.certify.scaled; C over s too), where s may run down to 0."""
    from .certificate import _dyadic  # heavy: loads flint,mpmath,numpy,sympy
    u_init = 1 / (1 + P[0][1])                  # u(0) = r/(1 + r) = 1/(1 + s): smallest at the largest s
    rc = None
    for u0 in sorted({_dyadic(min(u_init * Fraction(7, 8), cap)) for cap in U0_CAPS}, reverse=True):
        for m in sorted(C_MULTIPLES, key=lambda k: (k != hint, k < hint, k)):
            rc = _region_at(P, u0, m, knobs, scaled)
            if rc.ok:
                return u0, m, rc
    return u0, m, rc


def _region_at(P: tuple, u0: Fraction, m: int, knobs: dict, scaled: bool = False):
    """The check of R(u0, m c/(1 - |rho(0)|)) for the cell's invariants, on the knobs' grid (``scaled``: of
    R~(u0, m (c/s)/(1 - |rho(0)|)) in e = eps/s)."""
    from .region import check_region  # heavy: loads flint,mpmath,numpy,sympy
    return check_region(P, u0, _base_C(P, scaled) * m, shells=knobs["shells"], n_u=knobs["n_u"],
                        n_eps=knobs["n_eps"], max_depth=knobs["max_depth"], bits=knobs["bits"], ratio=knobs["ratio"],
                        scaled=scaled)


def _wider(P: tuple, u0: Fraction, m: int, knobs: dict):
    """The regions a failed entry is tried into once more, as (u0', m', region check): the widest invariant
    R(u0, m' c/(1 - |rho(0)|)) with m' > m of C_MULTIPLES, then the widest invariant R(u0/2, ...) (u0/2 not below
    U0_CAPS' least). Every member must land in |eps| <= C at u <= u0, and at large kappa the split prefix's leaves
    land near eps ~ c/x with widths of alpha's over u^3: a wider C admits them, and a lower top admits a wider C (near
    u = 1/4 eps is expanded by rho(u) R^3 ~ 1 a step and no wide C is invariant)."""
    for top, above in ((u0, m), (u0 / 2, 0)):
        if top < min(U0_CAPS):
            return
        for wide in sorted((k for k in C_MULTIPLES if k > above), reverse=True):
            rc = _region_at(P, top, wide, knobs)
            if rc.ok:
                yield top, wide, rc
                break


def parameter_box(spec: FamilySpec, cell: Cell) -> list:
    """[(lo, hi)] of each parameter of verify.derive.invariants.PARAMETERS over the cell (from its corners: each
    parameter is monotone in the ranged options)."""
    from ..derive.invariants import PARAMETERS, parameter_values  # heavy: loads flint,mpmath,numpy,sympy
    vals = [parameter_values(spec.setting(c)) for c in cell.corners()]
    return [(min(v[k] for v in vals), max(v[k] for v in vals)) for k in range(len(PARAMETERS))]


def kappa_box(spec: FamilySpec, cell: Cell) -> tuple:
    """The exact range of kappa = y/x over the cell, as the re-checker can verify it: at the cell's corners when
    the spec's parameter ties hold (FamilySpec.parameter_ties: y/x is then a monomial in the ranged names), else
    at the corners of the cell's box of parameters (y/x is a monomial in the parameters)."""

    import sympy as sp  # heavy: sympy

    from ..derive.invariants import MONOMIALS, PARAMETERS, x, y  # heavy: loads flint,mpmath,numpy,sympy
    from .coordinates import param_values  # heavy: loads flint,mpmath,numpy,sympy
    if spec.parameter_ties() is not None:
        ks = [p[2] / p[1] for p in (param_values(spec.setting(c)) for c in cell.corners())]
        return min(ks), max(ks)
    ratio = MONOMIALS[y] / MONOMIALS[x]
    box = [sorted({lo, hi}) for lo, hi in parameter_box(spec, cell)]
    ks = [Fraction(str(ratio.subs({p: sp.Rational(str(v)) for p, v in zip(PARAMETERS, corner)})))
          for corner in itertools.product(*box)]
    return min(ks), max(ks)


def _tube_route(kappa: tuple, P: tuple, u0: Fraction, rc, knobs: dict) -> dict:
    """Every member enters R through the tube (verify.certify.entry)."""
    from .coordinates import c_exact  # heavy: loads flint,mpmath,numpy,sympy
    from .entry import entry  # heavy: loads flint
    kappa = tuple(widened(*kappa))
    Q_max = max(r.Q[1] for r in rc.results)
    ent = entry(P, kappa, u0, rc.profile, Q_max, c_exact((P[0][1], P[1][1], P[2][1])), knobs["bits"])
    if not ent.ok:
        return {"why": ent.failure}
    return {"T0": ent.T0, "z_at_T0": [frac_str(ent.z0[0]), frac_str(ent.z0[1])], "entry": ent.as_dict(kappa),
            "entry_boxes": ent.boxes}


def _taylor_route(kappa: tuple, P: tuple, u0: Fraction, rc, knobs: dict) -> dict:
    """Every member enters R through one first-order Taylor model over the whole box (verify.certify.prefix)."""
    from .certificate import run_prefix  # heavy: loads flint,mpmath,numpy,sympy
    T0, _, end, z0, ob = run_prefix(P, knobs["bits"], u0, rc.profile, max_prefix=knobs["max_prefix"],
                                    check_every=knobs["check_every"], snapshots=False)
    if not ob.ok:
        return {"why": ob.detail, "obligation": ob}
    return {"T0": T0, "z_at_T0": [frac_str(z0[0]), frac_str(z0[1])], "entry": {"kind": "taylor"},
            "prefix_end": {k: end[k] for k in ("alpha", "delta", "u", "eps")}}


def _tree_route(kind: str, state: Callable):
    """Every member of P enters R through the split prefix (verify.certify.prefix_split: the Taylor-model prefix
    bisected in the parameters where it blows up, pieces whose y/x misses ``kappa`` dropped, at most
    knobs["split_leaves"] leaves) on states of the class ``state()`` gives, stored as entry ``kind``."""

    def run(kappa: tuple, P: tuple, u0: Fraction, rc, knobs: dict) -> dict:
        from .prefix_split import region_test, split_prefix  # heavy: loads mpmath,numpy,sympy
        kappa = tuple(widened(*kappa))
        with arb_precision(knobs["bits"]):
            res = split_prefix(P, u0, rc.profile, in_region=region_test(u0, rc.profile),
                               max_prefix=knobs["max_prefix"], check_every=knobs["check_every"], kappa=kappa,
                               max_leaves=knobs["split_leaves"], state=state())
        if not res.ok:
            return {"why": res.failure}
        return {"T0": res.T0, "z_at_T0": [frac_str(1 / res.u[1] ** 2), frac_str(1 / res.u[0] ** 2)],
                "entry": {"kind": kind, "kappa": [frac_str(k) for k in kappa], "tree": res.tree,
                          "u": [frac_str(v) for v in res.u], "eps": [frac_str(v) for v in res.eps],
                          "leaves": res.leaves, "pruned": res.pruned, "node_steps": res.steps}}
    return run


def _plain_state():
    from .prefix import PrefixState  # heavy: loads flint,mpmath,numpy,sympy
    return PrefixState


def _capped_state():
    from .prefix_monotone import CappedState  # heavy: loads flint,mpmath,numpy,sympy
    return CappedState


def _splits(knobs: dict) -> bool:
    return knobs.get("split_leaves", 0) > 0


@dataclass(frozen=True)
class EntryRoute:
    """One way every member of a cell's box enters R: ``run(kappa, P, u0, rc, knobs)`` -> the record's "T0",
    "z_at_T0" and "entry" (the file's entry kind, checked by recheck.certificates.ENTRY_CHECKS), or {"why": text}
    (and the failed "obligation" when the route has one); ``applies(knobs)``; ``auto``: tried when knob "entry" is
    "auto" (or "prefix": the auto routes that step the members from (0, 0), ``steps``); a route's name as the knob
    runs it alone."""

    name: str
    run: Callable
    applies: Callable = lambda knobs: True
    auto: bool = True
    steps: bool = True


# The routes in the order a cell tries them, the cheap first: the tube (no stepping of the members at all), one Taylor
# model over the whole box, the split prefix; the split prefix on capped states (verify.certify.prefix_monotone) only
# when asked for by name: measured on Region A cells it needs about half the leaves where both certify, but costs more
# CPU per cell and certified no cell the plain split did not (docs/atlas.md, "The monotone enclosure").
ENTRY_ROUTES = (EntryRoute("tube", _tube_route, steps=False), EntryRoute("taylor", _taylor_route),
                EntryRoute("split", _tree_route("split", _plain_state), _splits),
                EntryRoute("monotone", _tree_route("monotone", _capped_state), _splits, auto=False))


def entry_routes(knobs: dict) -> list:
    """The routes knob "entry" selects (EntryRoute), in ENTRY_ROUTES' order."""
    want = knobs.get("entry", "auto")
    names = [r.name for r in ENTRY_ROUTES]
    if want not in ("auto", "prefix", *names):
        raise InvalidParameter("entry", str(want), f"must be auto, prefix or one of {', '.join(names)}")
    chosen = {"auto": lambda r: r.auto, "prefix": lambda r: r.auto and r.steps}.get(want, lambda r: r.name == want)
    return [r for r in ENTRY_ROUTES if chosen(r) and r.applies(knobs)]


def _entry(kappa: tuple, P: tuple, u0: Fraction, rc, knobs: dict) -> dict:
    """How every member of the box P (kappa = y/x in ``kappa``) enters R: the first of entry_routes(knobs) that
    closes; the record's "T0", "z_at_T0" and "entry", or its "failed_obligation" (the first failed route's
    obligation, its detail followed by the later routes' reasons; "routes": every route's reason)."""
    failed = []
    for route in entry_routes(knobs):
        got = route.run(kappa, P, u0, rc, knobs)
        if "T0" in got:
            return got
        failed.append((route.name, got))
    names = ", ".join(n for n, _ in failed)
    k = next((i for i, (_, f) in enumerate(failed) if f.get("obligation") is not None), None)
    ob = failed[k][1]["obligation"] if k is not None else Obligation(
        "family-entry", f"every member enters R ({names})", "arb", False, "")
    later = failed[k + 1:] if k is not None else failed
    detail = "; ".join([ob.detail] * bool(ob.detail) + [f"{n}: {f['why']}" for n, f in later])
    return {"failed_obligation": Obligation(ob.name, ob.statement, ob.method, False, detail).as_dict() | {
        "routes": {n: f["why"][:400] for n, f in failed}}}


def certify_cell(spec: FamilySpec, cell: Cell, knobs: dict) -> dict:
    """One cell: its invariant box, region, Taylor-model prefix and slab hulls (module docstring); a JSON-ready
    dict with "status" "certified" or "failed" (and the failed obligation). A Dask task: pure, small in and out."""
    return cell.as_dict() | certify_box(invariant_box(spec, cell), kappa_box(spec, cell), cell.hint, knobs)


def certify_box(box: tuple, kappa: tuple, hint: int, knobs: dict, phase: Callable | None = None) -> dict:
    """Every member of a box of invariants ((s, x, y) ranges, kappa = y/x in ``kappa``): region, entry and slab
    hulls (module docstring), as certify_cell's record without the cell's own fields (path, box). Shared by the
    family cells and the atlas's (verify.certify.atlas). ``phase(text)``, when given, is told as each phase
    starts (a long cell's progress)."""
    from .arbfun import widened  # heavy: loads flint
    phase = phase or (lambda text: None)
    t = time.perf_counter()
    # widened: the box as stated, containing the re-checker's (outward-rounded) enclosure of the cell's image
    P = tuple(widened(lo, hi) for lo, hi in box)
    phase("trapping region")
    u0, m, rc = _region(P, hint, knobs)
    out = {"invariants": [[frac_str(lo), frac_str(hi)] for lo, hi in P], "C_multiple": m}
    if not rc.ok:
        bad = next(o for o in rc.obligations if not o.ok)
        return out | {"status": "failed", "failed_obligation": bad.as_dict(), "seconds": time.perf_counter() - t}
    phase("entry into the region (tube or prefix)")
    entered = _entry(kappa, P, u0, rc, knobs)
    # knob "widen" (an atlas run's): where the entry fails, once more into the widest invariant R of the same u0,
    # then of u0/2 (_wider)
    for u0w, mw, rcw in (_wider(P, u0, m, knobs) if knobs.get("widen") and "failed_obligation" in entered else ()):
        phase(f"entry into the widest invariant region of u0 = {frac_str(u0w)}")
        again = _entry(kappa, P, u0w, rcw, knobs)
        if "failed_obligation" not in again:
            u0, m, rc, entered = u0w, mw, rcw, again
            out["C_multiple"] = m
            break
        entered["failed_obligation"]["detail"] += (f" (and into R(u0 = {frac_str(u0w)}, C multiple {mw}): "
                                                   f"{again['failed_obligation'].get('detail', '')[:120]})")
    if "failed_obligation" in entered:
        return out | entered | {"status": "failed", "seconds": time.perf_counter() - t}
    phase("slab hulls and limits")
    from .bounds import normalised_limits  # heavy: loads flint,mpmath,numpy,sympy
    region = region_record(u0, rc, knobs)
    # the hulls as stored (rounded outward, verify.certify.slabs), and the limits from what is stored
    stored = encode_slabs(_slabs(rc, knobs))
    deep = slab_hull(decode_slabs(stored, region))(Fraction(0), u0 * knobs["ratio"] ** knobs["shells"])
    limits = normalised_limits(_Last(deep), Fraction(1))
    return out | entered | {"status": "certified", "region": region, "slabs": stored,
                  "normalised_limits": {q: [frac_str(lo), frac_str(hi)] for q, (lo, hi) in limits.items()},
                  "seconds": time.perf_counter() - t}


@dataclass(frozen=True)
class _Last:
    """A shell-like view of a normalised hull (a, b, Lt, W), for bounds.normalised_limits with c = 1."""

    h: dict

    def __getattr__(self, name):
        if name in ("a", "b", "Lt", "W"):
            return self.h[name]
        raise AttributeError(name)


def region_record(u0: Fraction, rc, knobs: dict) -> dict:
    """A closed region check as a file states it (the re-checker rebuilds the boxes from it and checks each)."""
    return {"u0": frac_str(u0), "C_runs": rc.profile.runs(), "shells": knobs["shells"],
            "ratio": frac_str(knobs["ratio"]), "n_u": knobs["n_u"], "n_eps": knobs["n_eps"],
            "box_count": len(rc.results), "splits": _splits(rc, knobs)}


def _splits(rc, knobs: dict) -> list[str]:
    """The region's boxes as bisection trees of the initial grid boxes ("1": split in four, "0": a leaf), in the
    grid's order (verify.certify.region.initial_boxes; the re-checker expands them)."""
    from .region import initial_boxes  # heavy: loads flint,mpmath,numpy,sympy
    leaves = {(r.box.u_lo, r.box.u_hi, r.box.e_lo, r.box.e_hi) for r in rc.results}

    def tree(b) -> str:
        if (b.u_lo, b.u_hi, b.e_lo, b.e_hi) in leaves:
            return "0"
        if b.depth > knobs["max_depth"]:
            raise ValueError("a grid box is not covered by the region's leaves")
        parts = b.split()
        return "1" + "".join(tree(q) for q in (parts[0], parts[1], parts[2], parts[3]))
    return [tree(b) for b in initial_boxes(rc.profile, knobs["n_u"], knobs["n_eps"])]


@dataclass
class FamilyCertificate:
    """The cells of a family, each closed (module docstring), and the uniform table of normalised limits."""

    spec: FamilySpec
    cells: list                         # certify_cell results (JSON-ready dicts), every one "certified"
    knobs: dict = field(default_factory=dict)
    seconds: float = 0.0
    kind: str = "family"
    source: str = ""                    # the file it was read from (verify.certify.files.load_family), if any
    file: dict | None = None            # that file's content: a query re-checks the cells it uses from it
    rechecked: dict = field(default_factory=dict)   # cell path -> the re-checker's log of it, in this process

    def __repr__(self) -> str:
        return f"FamilyCertificate({dict(self.spec.ranges)}, {len(self.cells)} cells)"

    def cell_of(self, values: dict) -> dict:
        """The certified cell holding the member ``values`` (refused, naming the parameter, outside the family)."""
        self.spec.check_member(values)
        for c in self.cells:
            box = {n: (Fraction(lo), Fraction(hi)) for n, (lo, hi) in c["box"].items()}
            if all(lo <= Fraction(values[n]) <= hi for n, (lo, hi) in box.items()):
                return c
        raise InvalidParameter("member", str(values), "lies in no cell of the family (an incomplete file)")

    def entries(self) -> dict:
        """{"tube": n, "taylor": m}: how many cells' members enter R through the tube, and through the prefix."""
        tubes = sum(c.get("entry", {}).get("kind") == "tube" for c in self.cells)
        return {"tube": tubes, "taylor": len(self.cells) - tubes}

    def table(self) -> dict:
        """lim q(T)/leading_q(T) over every member of the family: the hull of the cells' intervals (exact)."""
        return {q: (min(Fraction(c["normalised_limits"][q][0]) for c in self.cells),
                    max(Fraction(c["normalised_limits"][q][1]) for c in self.cells))
                for q in ("excess_loss", "s_err", "w_err")}

    def member_shells(self, values: dict):
        """(setting, cell, shells): the comparison lemma for one member, with its own exact cubic coefficient over
        its cell's slab hulls and z(T0) range (raises CertificateFailed if the lemma's inequalities fail)."""
        from .coordinates import param_values  # heavy: loads flint,mpmath,numpy,sympy
        cell = self.cell_of(values)
        self.recheck(cell, values)
        s = self.spec.setting(values)
        return s, cell, cell_shells(cell, param_values(s), self.knobs.get("bits", 128), self.source or "the family")

    def recheck(self, cell: dict, values: dict) -> None:
        """Before answering for a member from a family file: the independent re-checker's check of the cell it
        uses (recheck.certificates.check_query_cell: the file's formulas against the model, the family's
        parameters, the member inside the cell and its invariants inside the cell's, and the cell in full),
        once per cell in this process; a file that does not re-check is refused (InvalidParameter "family",
        naming the failed step). A certificate computed in this process (no file) needs none."""
        if self.file is None:
            return
        try:
            lines = check_query_cell(self.file, cell, values)
        except CheckFailed as exc:
            raise InvalidParameter("family", self.source or "the family", f"must re-check: the independent re-checker "
                                   f"refused cell {cell['path'] or 'root'} at step {exc.step}: {exc.detail}") from None
        self.rechecked.setdefault(cell["path"], lines)

    def profile(self, cell: dict):
        """The region's C(u) of a cell (cell_profile)."""
        return cell_profile(cell, self.source or "the family")

    def bounds(self, values: dict, Ts, digits: int | None = None) -> list[dict]:
        """The member's bounds at each T, in the one-regime ``bounds`` format: for T >= T0 of its cell from the
        family certificate; for T < T0 from the member's own Arb prefix (computed now: T steps)."""
        from ..derive.invariants import prefactors_of  # heavy: loads flint,mpmath,numpy,sympy
        from .coordinates import param_values  # heavy: loads flint,mpmath,numpy,sympy
        cell = self.cell_of(values)
        self.recheck(cell, values)          # a file's cell is re-checked before any bound is read from it
        s = self.spec.setting(values)
        return cell_bounds(cell, param_values(s), prefactors_of(s), Ts, self.knobs.get("bits", 128),
                           self.source or "the family", digits)

    def as_dict(self) -> dict:
        from .bounds import QUANTITIES  # heavy: loads flint,mpmath,numpy,sympy
        table = self.table()
        return {"kind": "family", "spec": self.spec.as_dict(), "cells": self.cells, "knobs": {
            k: frac_str(v) if isinstance(v, Fraction) else v for k, v in self.knobs.items()},
            "normalised_limits": {q: [frac_str(lo), frac_str(hi)] for q, (lo, hi) in table.items()},
            "normalised_limits_meaning": "lim_{T -> inf} q(T)/leading_q(T) for every member, leading_q the derived "
                                         "leading term of verify.derive.asymptotics (e.g. K N (D - K)/(4 D eta T) "
                                         "for L - L_opt with eta_KQ = eta, lambda = beta = 1)",
            "quantities": list(QUANTITIES), "seconds": round(self.seconds, 2)}


def cell_shells(cell: dict, P: tuple, bits: int, source: str, c: Fraction | None = None) -> list:
    """The comparison lemma's shells for the member with invariants P (exact) in a certified cell (a record with
    "region", "slabs", "z_at_T0"): its own cubic coefficient over the cell's slab hulls (raises CertificateFailed
    if the lemma's inequalities fail). Used by family and atlas queries. A cell's "lows" (an atlas cell's stored lower
    ends, verify.certify.atlas.cell_lows) are tried first: a hint that saves the refinement, checked like any shell.
    ``c``: the member's cubic coefficient when the caller has it exactly (else verify.certify.coordinates.c_exact)."""
    from .comparison import schedule  # heavy: loads flint
    if c is None:
        from .coordinates import c_exact  # heavy: loads flint,mpmath,numpy,sympy
        c = c_exact(P)
    reg = cell["region"]
    u0, ratio, J = Fraction(reg["u0"]), Fraction(reg["ratio"]), int(reg["shells"])
    # this cell's hulls only: the other cells' stay encoded
    slabs = decode_slabs(cell["slabs"], reg, source, cell["path"] or "root")
    z0 = tuple(Fraction(v) for v in cell["z_at_T0"])
    shells, obs = schedule(slab_hull(slabs), u0, J, z0, bits, ratio, c, cell.get("lows"))
    raise_first_failure(obs)
    return shells


def cell_profile(cell: dict, source: str):
    """The region's C(u) of a certified cell (verify.certify.region.Profile, from its runs; refused naming the file
    and the cell when they do not count its annuli)."""
    from .region import Profile  # heavy: loads flint,mpmath,numpy,sympy
    reg = cell["region"]
    try:
        return Profile.of_runs(reg["u0"], reg["ratio"], int(reg["shells"]), reg["C_runs"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidParameter("family", source, f"must state cell {cell['path'] or 'root'}'s C(u) as runs "
                               f"[C, count] ({exc})") from None


def cell_bounds(cell: dict, P: tuple, pre: dict, Ts, bits: int, source: str, digits: int | None = None) -> list:
    """A member's bounds at each T (invariants P, prefactors pre, exact) in the one-regime ``bounds`` format: for
    T >= T0 of its certified cell from the comparison lemma on the cell's region; below T0 from the member's own
    Arb prefix (computed now: T steps)."""
    from .bounds import ObservablesNotPositive, bounds_json, tail_bounds  # heavy: loads flint,mpmath,numpy,sympy
    shells = cell_shells(cell, P, bits, source)
    T0, prof = int(cell["T0"]), cell_profile(cell, source)
    out = []
    for T in Ts:
        if T >= T0:
            try:
                b = tail_bounds(shells, T - T0, P, pre, prof, bits)
            except ObservablesNotPositive as exc:      # a vacuous enclosure: refused as a failed obligation
                raise CertificateFailed(Obligation("observables-positive", f"Lt > 0 and h + eps u^2 > 0 at T = {T}",
                                                   "arb", False, str(exc))) from None
            out.append(bounds_json(b, T, "family certificate: comparison lemma on the cell's region", bits, digits))
        else:
            out.append(bounds_json(_own_prefix(P, pre, T, bits), T, "prefix of this member (Arb balls)", bits,
                                   digits))
    return out


def _own_prefix(P: tuple, pre: dict, T: int, bits: int) -> dict:
    from .prefix import PrefixState  # heavy: loads flint,mpmath,numpy,sympy
    with arb_precision(bits):
        st = PrefixState(P)
        pc, pb, dp = st.balls()
        while st.step_count < T:
            st.step(pc, pb, dp)
        return {q: (v, v) for q, v in st.observables(pre).items()}


def check_family(spec: FamilySpec) -> None:
    """Refuse, before any work, a family with a member the certificate does not cover: every corner of the box
    must pass verify.certify.certificate.check_certifiable (the stability bound is monotone in each
    parameter) and have 0 < K < D."""
    from .certificate import check_certifiable  # heavy: loads flint,mpmath,numpy,sympy
    whole = Cell(spec.ranges)
    for corner in whole.corners():
        s = spec.setting(corner)
        if not 0 < s.K < s.D:
            raise InvalidParameter("D", frac_str(Fraction(corner.get("D", s.D))), f"must exceed K = {s.K} for a "
                                   "family certificate (K = D and K = 0 are exact closed forms: one regime each)")
        check_certifiable(s)


class FamilyIncomplete(Exception):
    """The family's cells did not all close within the time given (``done`` cells certified, ``pending`` left)."""

    def __init__(self, done: int, pending: int, seconds: float):
        self.done, self.pending, self.seconds = done, pending, seconds
        self.complete_through = None        # the largest D up to which every length had closed (None: not known)
        super().__init__(f"{done} cells certified and {pending} still to do after {seconds:.0f} s")


def certify_family(spec: FamilySpec, *, scheduler=None, workers=None, knobs: dict | None = None,
                   progress=None, processes: bool = True, dask: bool = True,
                   deadline: float | None = None) -> FamilyCertificate:
    """Certify every member of the family (module docstring): cells run on the Dask executor (``dask=False``: in
    this process, e.g. inside a part that already runs on a Dask worker). The box is cut into cells of
    consecutive lengths (length_cells), all run at once; a cell that fails is bisected (Cell.split: D first, then
    the widest relative interval), up to MAX_SPLITS times, after which the certificate fails (CertificateFailed
    naming the cell). ``progress(done, pending)`` is called as cells finish; past ``deadline`` seconds
    FamilyIncomplete is raised, with the largest D through which every length has closed."""

    check_family(spec)
    knobs = CELL_KNOBS | (knobs or {})
    t = time.perf_counter()
    done: list = []
    with (Executor(scheduler=scheduler, workers=workers, processes=processes) if dask
          else contextlib.nullcontext()) as ex:
        def settle(cells: list, bisect: bool = True) -> list:
            return _settle(ex if dask else None, cells, spec, knobs, done, bisect, (deadline, t, progress))
        lo = spec.range_of.get("D", (None, None))[0]
        try:
            settle(length_cells(Cell(spec.ranges)))
        except FamilyIncomplete as exc:
            exc.complete_through = complete_through(done, lo) if lo is not None else None
            raise
    done.sort(key=lambda c: c["path"])
    return FamilyCertificate(spec, done, knobs, time.perf_counter() - t)


def length_cells(root: Cell) -> list:
    """The family's box cut into cells of consecutive lengths D = d..d + floor(d D_SPAN) (the other ranges whole):
    the tube closes on a range of lengths whose s = K/(D - K) varies by a few per cent; a cell that does not
    close is bisected (Cell.split: D first). Each starts with the largest C multiple (the tube's handover into R
    needs a wide band)."""
    b = root.bounds
    if "D" not in b or b["D"][0] == b["D"][1]:
        return [root]
    lo, hi = b["D"]
    out, d = [], lo
    while d <= hi:
        top = min(hi, d + int(d * D_SPAN))
        out.append(Cell(tuple(sorted((b | {"D": (d, top)}).items())), f"D{d}:", max(C_MULTIPLES)))
        d = top + 1
    return out


def complete_through(done: list, lo: int) -> int | None:
    """The largest D such that every length from ``lo`` to it lies in a certified cell (None: not even ``lo``)."""
    spans = sorted((int(c["box"]["D"][0]), int(c["box"]["D"][1])) for c in done)
    reach = lo - 1
    for a, b in spans:
        if a > reach + 1:
            break
        reach = max(reach, b)
    return reach if reach >= lo else None


def _settle(ex, cells: list, spec, knobs: dict, done: list, bisect: bool, watch: tuple) -> list:
    """Run ``cells`` (and, with ``bisect``, the halves of those that fail, until every one closes): certified
    results go to ``done``; returns the cells that failed unsplit (empty with ``bisect``)."""
    pending, failed = list(cells), []
    while pending:
        batch, pending = pending, []
        tasks = [(c.path or "root", (spec, c, knobs)) for c in batch]
        runs = ex.stream(certify_cell, tasks) if ex is not None else ((n, certify_cell(*a)) for n, a in tasks)
        with contextlib.closing(runs):          # closed (its tasks cancelled) before the cluster goes
            for res in _collect(runs, done, watch, len(batch) + len(pending)):
                if bisect:
                    pending += list(_halves(res))
                else:
                    failed.append(res)
    return failed


def _collect(runs, done: list, watch: tuple, outstanding: int):
    """Certified results of one batch into ``done``; yields the failed ones."""
    deadline, t0, progress = watch
    for _, res in runs:
        if deadline is not None and time.perf_counter() - t0 > deadline:
            raise FamilyIncomplete(len(done), outstanding, time.perf_counter() - t0)
        if isinstance(res, Exception):
            raise res
        outstanding -= 1
        if res["status"] == "certified":
            done.append(res)
        else:
            yield res
        if progress is not None:
            progress(len(done), outstanding)


def _halves(res: dict) -> tuple:
    """The two halves of a failed cell (CertificateFailed past MAX_SPLITS bisections, or when it cannot split)."""
    cell = Cell.of_result(res)
    halves = cell.split() if cell.depth < MAX_SPLITS else None
    if halves is None:
        raise CertificateFailed(Obligation(
            "family-cell", f"the cell {res['box']} closes", "arb", False,
            f"after {cell.depth} splits: {res['failed_obligation']['detail']}"))
    return halves


def _num(name: str, text: str):
    return int(Fraction(text)) if name == "D" else Fraction(text)


__all__ = ["Cell", "FamilyCertificate", "FamilySpec", "certify_cell", "certify_family", "check_family",
           "cell_bounds", "cell_shells", "certify_box", "invariant_box", "slab_hull"]
