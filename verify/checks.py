"""Claims and probes are one kind of thing: a :class:`Check` that states quantified statements as data and
returns evidence for each, from which :func:`verify.evidence.decide` derives every verdict.

A check (a claim of the paper in ``lemmas/``, a probe of a reviewer question in ``verify/probes/``) is one
module holding one :class:`Check` subclass, registered with its package's :class:`Catalogue`
(``@CLAIMS.register`` / ``@PROBES.register``). It declares:

- ``statements``: its :class:`Claimed` statements, each with an id, its text as quantified, its role
  ("claim": a part of one of the paper's claims; "control": a negative control, false by design;
  "finding": the toolkit's own finding, e.g. a sharper statement beside a claim, or an edge regime outside a
  claim's hypotheses), its hypotheses (verify.model.hypotheses objects) and its scope;
- ``hypotheses``: the hypotheses of its per-regime property (:meth:`Check.check`), used by the fuzzer and by
  ``verify check ID --regime FILE``;
- ``sizes``: its sizes per profile (verify.model.profiles).

:meth:`Check.evaluate` returns an :class:`Evaluation` (records per statement id, the numbers the README
quotes by key, the arrays behind its figure); :meth:`Check.run` decides each statement. A check may draw its
own figure (:meth:`Check.figures`), beside the computation. No check writes a verdict.
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import InvalidParameter, NumericalTrouble, suggest
from .evidence import RegimeOutcome, Scope, decide
from .run.jsonable import jsonable
from .model.hypotheses import hypotheses, within
from .model.profiles import PROFILES, check_profile
from .model.convention import Convention, active, using
from .model.flags import setting_command
from .model.validation import check_int

ROLES = ("claim", "control", "finding")
RELATIONS = (None, "sharper", "outside", "answers", "supports")


def module_name(check_id: str) -> str:
    """File (module) name of a check: ``lemma-C.2`` -> ``lemma_C_2``, ``d-eq-k`` -> ``d_eq_k``."""
    return check_id.replace("-", "_").replace(".", "_")


@dataclass(frozen=True)
class Claimed:
    """One judged statement, quantified, as data. Its scope's ``assumes`` is set to its hypotheses' ids, so
    a proof covers it only when the proof assumed no more than these."""

    id: str
    text: str
    role: str = "claim"
    hypotheses: tuple = ()
    scope: Scope = Scope()
    about: str | None = None
    relation: str | None = None
    source: str = ""

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"statement {self.id!r}: role must be one of {ROLES}, not {self.role!r}")
        if self.relation not in RELATIONS:
            raise ValueError(f"statement {self.id!r}: relation must be one of {RELATIONS}, not {self.relation!r}")
        hyps = hypotheses(self.hypotheses)
        object.__setattr__(self, "hypotheses", hyps)
        object.__setattr__(self, "scope", replace(self.scope, assumes=tuple(h.id for h in hyps)))

    def as_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "role": self.role, "about": self.about, "relation": self.relation,
                "source": self.source, "hypotheses": [h.text for h in self.hypotheses],
                "hypothesis_ids": [h.id for h in self.hypotheses], "scope": self.scope.as_dict()}


@dataclass
class Evaluation:
    """What a check's routes found: evidence records per statement id, the numbers quoted elsewhere (by key),
    the arrays behind its figure, how to replay it, the options it ran with, and per statement an optional
    one-sentence ``why``, where a statement fails the ``corrected`` statement, and ``scopes``: what a statement
    about "the regimes run, over t <= H" speaks of at this profile and convention (Scope fields by name: the
    runs' dims and convention labels, the horizon H), computed from the settings the check runs, never from
    its records."""

    evidence: dict
    numbers: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    replay: str = ""
    convention: dict = field(default_factory=dict)
    why: dict = field(default_factory=dict)
    corrected: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    scopes: dict = field(default_factory=dict)


@dataclass
class CheckResult:
    """One check's decided statements and what it reports besides (see :class:`Check`)."""

    id: str
    kind: str
    title: str
    source: str
    questions: tuple
    profile: str
    statements: list
    numbers: dict
    data: dict
    replay: str
    convention: dict
    extra: dict
    seconds: float = 0.0

    @property
    def headline(self) -> dict:
        return self.statements[0]

    @property
    def verdict(self) -> str:
        """The weakest verdict among the claim's parts (its statements of role "claim" or "control"; a check
        stating only findings: among those): a claim holds as a whole only as far as its weakest part
        (:func:`weakest`), never its first or strongest part's verdict."""
        judged = [s for s in self.statements if s["role"] != "finding"] or self.statements
        return weakest(s["verdict"] for s in judged)

    def statement(self, sid: str) -> dict:
        return next(s for s in self.statements if s["id"] == sid)

    def as_dict(self) -> dict:
        return jsonable({"id": self.id, "kind": self.kind, "title": self.title, "source": self.source,
                         "questions": list(self.questions), "profile": self.profile, "convention": self.convention,
                         "statements": self.statements, "numbers": self.numbers, "data": self.data,
                         "replay": self.replay} | self.extra)


# From the weakest to the strongest: a conjunction of parts is refuted when one part is, undecided when one part
# is, and established no further than its least established part.
STRENGTH = ("refuted", "inconclusive", "supported", "certified", "proved")


def weakest(verdicts) -> str:
    """The weakest of ``verdicts`` (:data:`STRENGTH`)."""
    return min(verdicts, key=STRENGTH.index)


def decided(st: Claimed, records: list, why: str | None = None, corrected: str | None = None) -> dict:
    """A statement as saved: its declaration, its records, and the verdict, scope label and reason the one rule
    derives from them (``why`` defaults to the rule's reason)."""
    if not records:
        raise AssertionError(f"statement {st.id!r} has no evidence record")
    d = decide(records, st.scope)
    return st.as_dict() | {"evidence": records, "verdict": d.verdict, "scope_label": d.scope, "reason": d.reason,
                           "extent": d.extent, "why": why or d.reason, "corrected": corrected}


class Check:
    """Base of every claim and probe (module docstring). Subclasses set ``title``, ``source``, ``questions``,
    ``statements``, ``sizes`` and implement :meth:`evaluate`; per-regime checks implement :meth:`check`."""

    id: str = ""
    kind: str = ""
    command: str = ""        # the verify sub-command that runs it ("check" for a claim, "probe"), set on registration
    title: str = ""
    source: str = ""
    questions: tuple = ()
    statements: tuple = ()
    hypotheses: tuple = ()
    sizes: dict = {}
    # the per-regime check iterates the reduced recursion when the setting allows it (about a microsecond a
    # step), so the fuzzer may give it long horizons; otherwise (the full-matrix engine) short ones
    long_horizon: bool = False

    # ---- what a subclass provides ------------------------------------------------------------------------
    def evaluate(self, profile: str) -> Evaluation:
        raise NotImplementedError

    def check(self, setting, steps: int) -> RegimeOutcome:
        raise NotImplementedError

    def figures(self, result: dict, folder: Path) -> list[dict]:
        """Draw this check's figures from its saved ``result`` into ``folder``: [{"file", "caption"}]."""
        return []

    # ---- derived ---------------------------------------------------------------------------------------------
    @property
    def per_regime(self) -> bool:
        return type(self).check is not Check.check

    @property
    def has_figures(self) -> bool:
        return type(self).figures is not Check.figures

    def size(self, profile: str, key: str | None = None):
        """This check's size (or sizes) at ``profile``."""
        v = self.sizes[check_profile(profile)]
        return v if key is None else v[key]

    def statement(self, sid: str) -> Claimed:
        for st in self.statements:
            if st.id == sid:
                return st
        raise KeyError(f"{self.id} has no statement {sid!r}")

    def run(self, profile: str = "ci", convention=None) -> CheckResult:
        """Run the routes at ``profile`` under ``convention`` (verify.model.convention; default: the active one)
        and decide every statement from its records. Under a convention other than the reference, each
        statement's hypotheses that pin the reference's choices are replaced by the convention's."""
        check_profile(profile)
        conv = convention if convention is not None else active()
        t0 = time.perf_counter()
        with using(conv):
            ev = self.evaluate(profile)
        judged = self.judged_in(conv)
        ids = [st.id for st in self.statements]
        if set(ev.evidence) != set(ids):
            raise AssertionError(f"{self.id}: evidence for {sorted(ev.evidence)}, statements {sorted(ids)}")
        sts = [decided(self.restated(self.under(st, judged), ev.scopes.get(st.id)), ev.evidence[st.id],
                       ev.why.get(st.id), ev.corrected.get(st.id)) for st in self.statements]
        convention = {"profile": profile, "hypotheses": [h.text for h in judged.adjust(self.hypotheses)],
                      "source": self.source, "run_convention": conv.as_dict(), **ev.convention}
        return CheckResult(self.id, self.kind, self.title, self.source, self.questions, profile, sts, ev.numbers,
                           ev.data, ev.replay or f"verify {self.command} {self.id} "
                           f"--profile {profile} --json", convention, ev.extra, time.perf_counter() - t0)

    def judged_in(self, conv):
        """The convention the statements are judged in after :meth:`evaluate` ran under ``conv`` (``conv``
        itself; a probe that could not take some keyword judges in the rest)."""
        return conv

    @staticmethod
    def restated(st: Claimed, fields: dict | None) -> Claimed:
        """``st`` with its scope's ``fields`` (Evaluation.scopes: dims, sigma, conventions, horizon, also) set; its
        hypotheses stay, and are every part's in ``also``."""
        if not fields:
            return st
        unknown = set(fields) - {"dims", "sigma", "conventions", "horizon", "also"}
        if unknown:
            raise AssertionError(f"{st.id}: a statement's scope is restated by dims, sigma, conventions, horizon or "
                                 f"also, not {sorted(unknown)}")
        also = tuple(replace(p, assumes=st.scope.assumes) for p in fields.get("also", ()))
        return replace(st, scope=replace(st.scope, **(fields | {"also": also})))

    @staticmethod
    def under(st: Claimed, conv) -> Claimed:
        """``st`` restated in the convention ``conv``: its reference-pinning hypotheses replaced, and a scope
        that spoke of the reference convention speaking of ``conv``."""
        if conv.is_reference:
            return st
        scope = st.scope
        if scope.conventions != "all" and "reference" in scope.conventions:
            scope = replace(scope, conventions=tuple(conv.label() if c == "reference" else c for c in scope.conventions))
        return replace(st, hypotheses=conv.adjust(st.hypotheses), scope=scope)

    def regime_check(self, setting, steps: int, **options) -> RegimeOutcome:
        """Whether the per-regime property holds in ``setting`` for ``steps`` GD steps (``options`` go to
        :meth:`check`, e.g. ``bits`` for a check that can run certified in Arb), with
        ``data["in_hypotheses"]``: whether ``setting`` meets :attr:`hypotheses` and the run meets the run-level
        ones :meth:`check` evaluated (``check`` sets ``in_hypotheses = False`` and ``outside``, why). Outside the
        hypotheses a failure is information, not a counterexample; a float64 overflow decides nothing."""
        if not self.per_regime:
            raise InvalidParameter("claim", self.id, "has no per-regime check")
        steps = check_int("steps", steps, 1, 10**7)
        try:
            out = self.check(setting, steps, **options)
        except NumericalTrouble as exc:
            eng = "reduced" if setting.reducible()[0] else "full"
            out = RegimeOutcome(None, f"undecided: {exc}", setting_command(
                "run", setting, "--steps", str(steps), "--engine", eng, "--arithmetic", "mpmath", "--json"),
                {"numerical_trouble": str(exc)})
        ok, why = within(setting, active().adjust(self.hypotheses))
        run_ok = out.data.get("in_hypotheses", True) is not False
        whys = [w for w in (why, "" if run_ok else out.data.get("outside", "a run-level hypothesis fails")) if w]
        out.data["in_hypotheses"] = ok and run_ok
        if whys:
            out.data["outside"] = "; ".join(whys)
            out.detail += f" [outside the hypotheses: {'; '.join(whys)}]"
        return out


class Catalogue:
    """The checks of one package (claims in ``lemmas``, probes in ``verify.probes``, each run by its ``command``,
    ``verify check`` or ``verify probe``): one module per check,
    registered with :meth:`register`; :meth:`load` imports every module of the package (not its subpackages,
    nor modules whose name starts with '_') and checks that files and registrations agree (a forgotten or misplaced registration fails
    at import)."""

    def __init__(self, kind: str, package: str, command: str = "check"):
        self.kind, self.package, self.command = kind, package, command
        self.checks: dict[str, Check] = {}
        self._loaded = False

    def register(self, id: str):
        """Class decorator: register one instance of the decorated :class:`Check` subclass as ``id``."""
        def deco(cls):
            if not (isinstance(cls, type) and issubclass(cls, Check)):
                raise TypeError(f"{cls!r} must subclass verify.checks.Check")
            if id in self.checks:
                raise AssertionError(f"{self.kind} {id!r} registered twice")
            cls.id, cls.kind, cls.command = id, self.kind, self.command
            for st in cls.statements:
                if not isinstance(st, Claimed):
                    raise TypeError(f"{id}: statements must be verify.checks.Claimed, not {st!r}")
            if not cls.statements:
                raise AssertionError(f"{self.kind} {id!r} states nothing")
            if cls.sizes and set(cls.sizes) != set(PROFILES):
                raise AssertionError(f"{id}: sizes must be given for the profiles {sorted(PROFILES)}")
            cls.hypotheses = hypotheses(cls.hypotheses)
            inst = cls()
            inst.module = cls.__module__
            self.checks[id] = inst
            return cls
        return deco

    def modules(self) -> list[str]:
        pkg = importlib.import_module(self.package)
        return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not (m.name.startswith("_") or m.ispkg))

    def load(self) -> "Catalogue":
        """Import every check module once, then check the registry against the files."""
        if self._loaded:
            return self
        files = self.modules()
        for m in files:
            importlib.import_module(f"{self.package}.{m}")
        by_module = {c.module.rsplit(".", 1)[-1]: cid for cid, c in self.checks.items()}
        for mod, cid in by_module.items():
            if mod != module_name(cid):
                raise AssertionError(f"{self.kind} {cid!r} is registered in {mod}.py, expected {module_name(cid)}.py")
        missing = set(files) - set(by_module)
        if missing:
            raise AssertionError(f"{self.kind} files registering nothing: {sorted(missing)}")
        self._loaded = True
        return self

    def part_result(self, cid: str, profile: str, convention: dict | None = None) -> dict:
        """What a ``verify all`` part of this catalogue returns: check ``cid`` at the profile under the run's
        convention (make_setting keywords; None: the reference), as the command with the convention flags."""
        return self[cid].run(profile, Convention.from_options(convention) if convention else None).as_dict()

    def __getitem__(self, cid: str) -> Check:
        self.load()
        if cid not in self.checks:
            raise InvalidParameter(self.kind, cid, f"must be one of {', '.join(self.ids())}{suggest(cid, self.ids())}")
        return self.checks[cid]

    def __contains__(self, cid) -> bool:
        self.load()
        return cid in self.checks

    def __iter__(self):
        self.load()
        return iter(self.checks)

    def __len__(self) -> int:
        self.load()
        return len(self.checks)

    def ids(self) -> list[str]:
        self.load()
        return list(self.checks)

    def items(self):
        self.load()
        return self.checks.items()

    def values(self):
        self.load()
        return self.checks.values()

    def statement_ids(self) -> dict[str, str]:
        """Every statement id -> the id of the check that states it."""
        return {st.id: cid for cid, c in self.items() for st in c.statements}


__all__ = ["Check", "Claimed", "Evaluation", "RegimeOutcome", "CheckResult", "Catalogue", "ROLES", "RELATIONS",
           "STRENGTH", "decided", "module_name", "weakest"]
