"""Evidence records, their scopes, and the one rule that turns them into a verdict.

No verdict in this toolkit is written by hand. A claim (lemmas/), a probe (verify.probes) or a
built-in part of ``verify all`` returns a list of evidence records made by :func:`record`, and
:func:`decide` derives the verdict, the scope it covers and the reason from them:

  refuted       a record inside the statement's hypotheses found a counterexample, with a replay
                command; an exact one, or a certified bound (Arb) that contradicts the statement, must
                assume nothing the statement's hypotheses do not imply, a numeric one must also have replayed to the same conclusion at a longer horizon
                (``replay_check``)
  inconclusive  a counterexample that did not replay, a measurement that failed or could not
                decide (NaN, not reached, ...), or no record that bears on the statement
  proved        exact records (SymPy identities, SMT decisions) whose scopes together cover the
                statement's whole scope (every dimension, sigma, convention and t it speaks of); a
                proof made of several steps is one record (:func:`proof`) whose scope is the
                intersection of its steps', so a general lemma among them never widens it
  certified     rigorous enclosures (Arb), or exact records and enclosures together, whose scopes
                cover the statement's whole scope
  supported     numerics (float64, mpmath, Monte Carlo) or a formal asymptotic expansion confirm it,
                with no counterexample; or exact / rigorous records confirm it on a part of its scope
                only (a statement for every D enclosed at D in {8, 9}), and the reason says which
                part was certified and what the rest rests on

A statement's scope carries its quantifiers as data: which sizes (``dims``: "all", checked sizes, or
boxes of sizes and parameters, :class:`verify.model.regions.Region`), which sigma and conventions, which
horizon (every t, t <= H, or every t >= T* via :class:`From`) and which hypotheses (``assumes``: "each
regime of the hypotheses"). Coverage is computed (:func:`covered`, :meth:`Scope.covers`), never read
from a label. A refutation comes from an exact counterexample, a certified bound (Arb) that contradicts
the statement inside its hypotheses, or a numeric counterexample that replayed; the reason says which.

A scope names the hypotheses it assumes (``Scope.assumes``, ids of verify.model.hypotheses): a proof
whose steps assumed more than the statement's hypotheses guarantee does not cover the statement. A
formal expansion (kind "formal": e.g. the slow-manifold expansion, which assumes that alpha tracks
alpha*(u)) may support a statement but never decides "proved" or "refuted" on its own.

Example::

    >>> s = Scope(dims="all", sigma=("identity",), horizon="all")
    >>> ev = [record("matrix calculus", "symbolic", s, "dL/dW_P = 0", True)]
    >>> decide(ev, s).verdict
    'proved'
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from .model.hypotheses import closure, hypotheses
from .model.regions import Region, union_covers
from .model.setting import conventions_of

VERDICTS = ("proved", "certified", "supported", "refuted", "inconclusive")
KINDS = ("symbolic", "smt", "arb", "mpmath", "float64", "monte-carlo", "formal")
# formal: exact algebra on a formal (not proved) asymptotic expansion: it decides no comparison by a
# numeric threshold, yet it is not a proof, so it supports at most and never refutes alone.
EXACT_ALGEBRA_KINDS = ("symbolic", "smt", "formal")
PROOF_KINDS = ("symbolic", "smt")       # exact: an identity simplified to 0, a formula an SMT solver decided
RIGOROUS_KINDS = PROOF_KINDS + ("arb",)  # ... or a rigorous enclosure over a finite range
# test: bears on the statement, inside its hypotheses (True confirms, False refutes, None undecided);
# outside: run outside the statement's hypotheses: reported with what it found, never decides;
# context: informative only (an interpretation, a closed form), holds must be None;
# failed: a measurement that could not be made (holds None): the verdict is at most inconclusive.
ROLES = ("test", "outside", "context", "failed")
ALL = "all"
# A numeric counterexample refutes only if it fails again, to the same conclusion, at this many times its horizon.
REPLAY_FACTOR = 10


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


def _horizon_covers(a, b) -> bool:
    """Whether the horizon ``a`` (of a record) covers the horizon ``b`` (of a statement)."""
    if a == ALL:
        return True
    if isinstance(a, From):
        # "t >= s" covers "t >= s'" for s' >= s, and "from some T* on" (take T* = s); nothing of the form t <= H
        return isinstance(b, From) and (b.start is None or (a.start is not None and b.start >= a.start))
    return not isinstance(b, From) and b != ALL and b <= a


def _horizon_label(h) -> str:
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
        return set(self.assumes) <= closure(atom.assumes) and _horizon_covers(self.horizon, atom.horizon)

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
        return "checked at dimensions {" + "; ".join(_member_label(x) for x in self.dims) + "}"

    def label(self) -> str:
        """How the scope reads in every output: "all dimensions" and "checked at dimensions {...}"
        never look alike; the assumptions are named."""
        sig = "every sigma" if self.sigma == ALL else "sigma in {" + ", ".join(self.sigma) + "}"
        conv = "every convention" if self.conventions == ALL else "conventions {" + ", ".join(self.conventions) + "}"
        out = ", ".join((self.dims_label(), sig, conv, _horizon_label(self.horizon)))
        if self.assumes:
            out += ", assuming {" + "; ".join(h.text for h in hypotheses(self.assumes)) + "}"
        return "; ".join([out] + [p.label() for p in self.also])

    def short_label(self) -> str:
        """The label folded: counts instead of long lists (the full label is one click away in reports)."""
        def fold(v, one, many):
            return one if v == ALL else (", ".join(map(_member_label, v)) if len(v) <= 2 else f"{len(v)} {many}")
        parts = [fold(self.dims, "all dimensions", "sizes"), fold(self.sigma, "every sigma", "sigmas"),
                 fold(self.conventions, "every convention", "conventions"), _horizon_label(self.horizon)]
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


def _as_holds(holds):
    """True / False / None, nothing else (numpy booleans are converted; strings are an error)."""
    if holds is None or isinstance(holds, bool):
        return holds
    if isinstance(holds, np.bool_):
        return bool(holds)
    raise TypeError(f"holds must be True, False or None, not {holds!r} ({type(holds).__name__})")


def record(route: str, kind: str, scope: Scope, result: str, holds, *, role: str = "test",
           threshold: dict | None = None, replay: str | None = None, replay_check: dict | None = None,
           **data) -> dict:
    """One evidence record (a JSON-ready dict), validated.

    ``holds``: True (confirms), False (a counterexample), None (undecided or informative).
    ``threshold``: ``{"value": ..., "why": "..."}``, required when a non-exact route decides by a
    comparison (which bound, and why that bound). ``replay``: the command that reproduces a
    counterexample (required with holds = False). ``replay_check``: ``{"horizon": H, "holds": ...}``,
    the same check re-run at a longer horizon (a numeric counterexample refutes only if it replays).
    """
    if kind not in KINDS:
        raise ValueError(f"evidence kind must be one of {KINDS}, not {kind!r}")
    if role not in ROLES:
        raise ValueError(f"evidence role must be one of {ROLES}, not {role!r}")
    if not isinstance(scope, Scope):
        raise TypeError(f"scope must be a Scope, not {type(scope).__name__}")
    if scope.also:
        raise ValueError(f"{route!r}: a record states one scope (no 'also')")
    holds = _as_holds(holds)
    if role in ("context", "failed") and holds is not None:
        raise ValueError(f"a {role} record has holds = None, not {holds!r}")
    if role == "test" and holds is not None and kind not in EXACT_ALGEBRA_KINDS:
        if not (isinstance(threshold, dict) and "value" in threshold and threshold.get("why")):
            raise ValueError(f"{route!r}: a {kind} record that decides needs threshold={{'value', 'why'}}")
    if role == "test" and holds is False and not replay:
        raise ValueError(f"{route!r}: a counterexample needs a replay command")
    if replay_check is not None:
        if not (isinstance(replay_check, dict) and "horizon" in replay_check and "holds" in replay_check):
            raise ValueError("replay_check must be {'horizon': H, 'holds': True/False/None, ...}")
        replay_check = dict(replay_check, holds=_as_holds(replay_check["holds"]))
    out = {"route": route, "kind": kind, "role": role, "scope": scope.as_dict(), "result": result, "holds": holds}
    if threshold is not None:
        out["threshold"] = threshold
    if replay is not None:
        out["replay"] = replay
    if replay_check is not None:
        out["replay_check"] = replay_check
    return out | data


def proof(route: str, steps: list[dict], *, replay: str | None = None, **data) -> dict:
    """One complete proof as a single record: the conjunction of its ``steps`` (records of exact kinds).

    A proof covers only what every step covers, so its scope is the intersection of the steps' scopes
    (a general lemma among the steps cannot widen it); it holds when every step is proved. A proof with
    a step open or disproved is not a counterexample to anything (the method failed, not the statement):
    it is recorded as context, naming the steps that did not close. The steps are kept inside the
    record ("steps"), where :func:`decide` does not read them one by one."""
    if not steps:
        raise ValueError(f"{route!r}: a proof needs at least one step")
    kinds = {st["kind"] for st in steps}
    if not kinds <= set(RIGOROUS_KINDS):
        raise ValueError(f"{route!r}: proof steps must be exact or enclosures, not {sorted(kinds - set(RIGOROUS_KINDS))}")
    kind = "arb" if "arb" in kinds else ("smt" if "smt" in kinds else "symbolic")
    scope = intersect([Scope.from_dict(st["scope"]) for st in steps])
    open_ = [st for st in steps if st["holds"] is not True]
    if open_:
        result = f"{len(open_)} of {len(steps)} steps not proved: " + "; ".join(
            f"{st['route']} ({'disproved' if st['holds'] is False else 'open'})" for st in open_)
        return record(route, kind, scope, result, None, role="context", steps=steps, **data)
    result = f"all {len(steps)} steps proved ({', '.join(sorted(kinds))})"
    return record(route, kind, scope, result, True, replay=replay, steps=steps, **data)


EXTENTS = ("whole", "part", "")


@dataclass(frozen=True)
class Decision:
    """A verdict, the scope it covers (as it reads), and why; ``extent``: "whole" when exact or rigorous records
    establish the whole statement (proved, certified), "part" when they establish a part of it only (supported,
    with a certified part), "" otherwise."""

    verdict: str
    scope: str
    reason: str
    extent: str = ""

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "scope": self.scope, "reason": self.reason, "extent": self.extent}


def _scope(rec: dict) -> Scope:
    return Scope.from_dict(rec["scope"])


def _union_label(recs: list[dict]) -> str:
    seen = []
    for r in recs:
        lab = r["scope"]["label"]
        if lab not in seen:
            seen.append(lab)
    return "; ".join(seen)


def _refutes(r: dict, statement: Scope) -> bool:
    """Whether a counterexample record refutes the statement: an exact one or a certified bound (Arb) only when
    it assumed nothing the statement's hypotheses do not imply; a numeric one only when it replayed; a formal
    one never alone."""
    if r["kind"] in RIGOROUS_KINDS:
        return set(r["scope"].get("assumes", ())) <= closure(statement.assumes)
    if r["kind"] == "formal":
        return False
    rc = r.get("replay_check")
    return isinstance(rc, dict) and rc.get("holds") is False


def _refutation(r: dict) -> str:
    """Which kind of refutation ``r`` is, in words."""
    if r["kind"] in PROOF_KINDS:
        return "an exact counterexample"
    if r["kind"] == "arb":
        return "a certified bound (rigorous enclosure) contradicts it"
    return f"a counterexample that failed again at t = {r['replay_check']['horizon']}"


def _routes(recs: list[dict]) -> str:
    return "; ".join(dict.fromkeys(r["route"] for r in recs))


def _field_covers(a, b) -> bool:
    return a == ALL or (b != ALL and set(b) <= set(a))


def uncovered(scopes: list[Scope], statement: Scope) -> list[str]:
    """What of ``statement`` the union of ``scopes`` leaves uncovered, as it reads ("all dimensions", "all t",
    "sigma {erf}", ...): per atom of the statement (one sigma, convention and dims value) that is not covered, the
    quantifiers the scopes of its sigma miss; atoms missing the same ones are named together ("(sigma erf, relu)")."""
    out = {}
    for atom in statement.atoms():
        if covered(scopes, atom):
            continue
        fit = [s for s in scopes if _field_covers(s.sigma, atom.sigma)]
        gaps = []
        if not fit:
            gaps.append("every sigma" if atom.sigma == ALL else f"sigma {{{', '.join(atom.sigma)}}}")
        else:
            if not covered([Scope(s.dims) for s in fit], Scope(atom.dims)):
                gaps.append(atom.dims_label())
            if not any(_horizon_covers(s.horizon, atom.horizon) for s in fit):
                gaps.append(_horizon_label(atom.horizon))
            if not any(_field_covers(s.conventions, atom.conventions) for s in fit):
                gaps.append("every convention" if atom.conventions == ALL else
                            f"conventions {{{', '.join(atom.conventions)}}}")
            if not any(set(s.assumes) <= closure(atom.assumes) for s in fit):
                gaps.append("the statement's hypotheses alone (it assumed more)")
        sig = atom.sigma[0] if fit and atom.sigma != ALL and statement.sigma != ALL and len(statement.sigma) > 1 else ""
        out.setdefault(", ".join(gaps) or "all of it at once", []).append(sig)
    return [text + (f" (sigma {', '.join(dict.fromkeys(s for s in sigs if s))})" if any(sigs) else "")
            for text, sigs in out.items()]


def _certified_part(rigorous: list[dict], statement: Scope) -> str:
    """What the rigorous records certify of a statement they do not cover: where, and what they leave."""
    several = statement.sigma == ALL or len(statement.sigma) > 1
    where = list(dict.fromkeys(_where(_scope(r), several) for r in rigorous))
    gaps = uncovered([_scope(r) for r in rigorous], statement)
    word = "proved" if all(r["kind"] in PROOF_KINDS for r in rigorous) else "certified"
    return (f"{word} only on part of the statement: " + "; ".join(where) + f" ({_routes(rigorous)})"
            + (", not for " + "; ".join(gaps) if gaps else ""))


def _where(sc: Scope, sigma: bool) -> str:
    """Where a record certified, in a reason: its sizes, its sigma (with ``sigma``: the statement names several) and
    horizon ("at {D=8 ...}, t <= 150")."""
    sig = ", sigma " + "/".join(sc.sigma) if sigma and sc.sigma != ALL else ""
    return f"{sc.dims_label().replace('checked at dimensions', 'at')}{sig}, {_horizon_label(sc.horizon)}"


def decide(records: list[dict], statement: Scope) -> Decision:
    """The verdict the records allow for a statement of scope ``statement`` (module docstring)."""
    for r in records:
        if r.get("role") not in ROLES or r.get("kind") not in KINDS or "scope" not in r:
            raise ValueError(f"not an evidence record (use verify.evidence.record): {r!r}")
        _as_holds(r.get("holds"))
    tests = [r for r in records if r["role"] == "test"]
    counter = [r for r in tests if r["holds"] is False]
    refuting = [r for r in counter if _refutes(r, statement)]
    if refuting:
        first = refuting[0]
        return Decision("refuted", _union_label(refuting), f"{_refutation(first)}: {first['route']}: {first['result']} "
                        f"(replay: {first['replay']})")
    if counter:
        first = counter[0]
        why = ("a formal asymptotic expansion contradicts it, and a formal expansion cannot refute on its own"
               if first["kind"] == "formal" else
               "an exact counterexample or certified bound assumes more than the statement's hypotheses"
               if first["kind"] in RIGOROUS_KINDS else "a counterexample did not replay at a longer horizon")
        return Decision("inconclusive", _union_label(counter), f"{why}: {first['route']}: {first['result']}")
    undecided = [r for r in records if r["role"] == "failed" or (r["role"] == "test" and r["holds"] is None)]
    if undecided:
        first = undecided[0]
        return Decision("inconclusive", _union_label(undecided),
                        f"a measurement failed or could not decide: {first['route']}: {first['result']}")
    confirming = [r for r in tests if r["holds"] is True]
    proofs = [r for r in confirming if r["kind"] in PROOF_KINDS]
    if proofs and covered([_scope(r) for r in proofs], statement):
        return Decision("proved", statement.label(), "exact proofs cover the whole statement: " + _routes(proofs),
                        "whole")
    rigorous = [r for r in confirming if r["kind"] in RIGOROUS_KINDS]
    if rigorous and covered([_scope(r) for r in rigorous], statement):
        return Decision("certified", statement.label(), "rigorous enclosures" + (" and exact proofs" if proofs else "")
                        + " cover the whole statement: " + _routes(rigorous), "whole")
    if rigorous:
        rest = [r for r in confirming if r["kind"] not in RIGOROUS_KINDS]
        return Decision("supported", _union_label(rigorous + rest), _certified_part(rigorous, statement) + "; "
                        + (f"the rest rests on {_routes(rest)}" if rest else "nothing else covers the rest"), "part")
    if confirming:
        return Decision("supported", _union_label(confirming), "numerics or a formal expansion agree, no "
                        "counterexample: " + _routes(confirming))
    return Decision("inconclusive", statement.label(), "no record inside the statement's hypotheses decides it")


@dataclass(frozen=True)
class Statement:
    """One statement a claim, probe or part tests: its text, its scope (what it speaks of), its evidence
    records, and whether it is the headline ("primary") or a further one."""

    text: str
    scope: Scope
    evidence: list
    role: str = "primary"

    def __post_init__(self):
        if not isinstance(self.scope, Scope):
            raise TypeError("Statement.scope must be a verify.evidence.Scope")
        if not self.evidence:
            raise AssertionError(f"statement {self.text!r} has no evidence record")

    def decided(self) -> dict:
        """The statement as saved: text, role, scope, records, and the verdict, scope label and reason
        that :func:`decide` derives from the records."""
        d = decide(self.evidence, self.scope)
        return {"statement": self.text, "role": self.role, "scope": self.scope.as_dict(), "evidence": self.evidence,
                "verdict": d.verdict, "scope_label": d.scope, "reason": d.reason, "extent": d.extent}


def headline(statements: list[Statement]) -> dict:
    """The result fields of something whose first statement is its headline: the decided statements,
    and the headline's verdict, scope label, reason, text, scope and records at the top level."""
    decided = [st.decided() for st in statements]
    head = decided[0]
    return {k: head[k] for k in ("verdict", "scope_label", "reason", "statement", "scope", "evidence")} | {
        "statements": decided}


def finite(*values) -> bool:
    """Whether every value (numbers or arrays of them) is a finite real number."""
    for v in values:
        a = np.asarray(v, dtype=float)
        if not np.all(np.isfinite(a)):
            return False
    return True


def compare(x, op: str, bound) -> bool | None:
    """``x op bound`` as True / False, or None when either side is NaN or infinite.

    Every numeric 'holds' goes through here (or :func:`finite`), so a NaN or an overflow never
    counts as the property holding: ``worst > x`` style loops silently skip NaN, this does not.
    """
    if not finite(x, bound):
        return None
    x, bound = np.asarray(x, dtype=float), np.asarray(bound, dtype=float)
    res = {"<": x < bound, "<=": x <= bound, ">": x > bound, ">=": x >= bound}[op]
    return bool(np.all(res))


__all__ = ["VERDICTS", "KINDS", "PROOF_KINDS", "EXACT_ALGEBRA_KINDS", "RIGOROUS_KINDS", "ROLES", "ALL", "EXTENTS", "Scope", "From",
           "Region", "intersect", "covered", "uncovered",
           "record", "proof",
           "Decision", "decide", "Statement", "headline", "finite", "compare", "dims_label", "dims_of",
           "REPLAY_FACTOR"]
