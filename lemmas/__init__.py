"""The paper's claims as executable checks: one module per claim, registered with :func:`claim`.

Each module ``lemmas/<id with '-' and '.' replaced by '_'>.py`` defines one subclass of
:class:`Claim` decorated with ``@claim(id, statement=..., source=..., hypotheses=..., routes=...)``
and declares the scope of its statement (``scope = Scope(dims=..., sigma=..., conventions=...,
horizon=...)``). Importing this package imports every such module and checks that the registry and
the files agree (a forgotten registration, or a module registering under another id, fails at import).

A claim's :meth:`Claim.evaluate` returns evidence records (:func:`verify.evidence.record`); no
claim writes its verdict. :meth:`Claim.run` derives it with the one rule,
:func:`verify.evidence.decide`, from the records and the statement's scope:
  proved       exact records (SymPy identities, SMT) that cover the statement's whole scope
  certified    exact or Arb-enclosure records over the finite scope they state
  supported    numerics (float64 / mpmath / Monte Carlo) agree, no counterexample
  refuted      a counterexample inside the hypotheses, with a replay command (a numeric one must
               replay to the same conclusion at a 10x longer horizon)
  inconclusive none of the above (a failed measurement, NaN, a counterexample that did not replay)

Example::

    >>> from lemmas import REGISTRY
    >>> r = REGISTRY["wp-zero"].run("ci")
    >>> r.verdict, r.scope_label.split(";")[0]
    ('certified', 'all dimensions, sigma in {identity}, conventions {reference}, all t')
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from verify.errors import InvalidParameter
from verify.evidence import KINDS, VERDICTS, Scope, decide
from verify.jsonable import jsonable

PROFILES = ("ci", "dev", "deep")

REGISTRY: dict[str, "Claim"] = {}


def module_name(claim_id: str) -> str:
    """File (module) name of a claim: ``lemma-C.2`` -> ``lemma_C_2``."""
    return claim_id.replace("-", "_").replace(".", "_")


def as_holds(holds) -> bool | None:
    """True / False / None: numpy booleans become bool; anything else (the string "True") is an error."""
    if holds is None or isinstance(holds, bool):
        return holds
    if isinstance(holds, np.bool_):
        return bool(holds)
    raise TypeError(f"holds must be True, False or None, not {holds!r} ({type(holds).__name__})")


@dataclass
class RegimeOutcome:
    """Whether a claim's property holds in one regime (True / False / None = undecided, e.g. NaN),
    why, how it was decided (evidence ``kind`` and ``threshold``), and how to reproduce it.

    ``data["in_hypotheses"]`` (set by :meth:`Claim.regime_check`) says whether the regime meets the
    claim's hypotheses; outside them a failure is information, not a counterexample."""

    holds: bool | None
    detail: str
    replay: str
    data: dict = field(default_factory=dict)
    kind: str = "float64"
    threshold: dict | None = None

    def __post_init__(self):
        self.holds = as_holds(self.holds)
        if self.kind not in KINDS:
            raise ValueError(f"evidence kind must be one of {KINDS}, not {self.kind!r}")

    @property
    def status(self) -> str:
        """"holds", "fails" or "undecided" (what ``verify check ID --regime FILE`` prints)."""
        return {True: "holds", False: "fails", None: "undecided"}[self.holds]


@dataclass
class ClaimResult:
    """What ``verify check`` prints for one claim: the verdict :func:`verify.evidence.decide` derived
    from ``evidence`` for a statement of scope ``scope``, the scope the verdict covers (as it reads)
    and why."""

    id: str
    verdict: str
    scope_label: str
    reason: str
    statement: str
    scope: Scope
    evidence: list
    convention: dict
    replay: str
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return jsonable({"id": self.id, "verdict": self.verdict, "scope_label": self.scope_label,
                         "reason": self.reason, "statement": self.statement, "scope": self.scope.as_dict(),
                         "evidence": self.evidence, "convention": self.convention, "replay": self.replay})


class Claim:
    """A claim of the paper. Subclasses set ``scope`` and implement :meth:`evaluate` (and, per
    regime, :meth:`check`)."""

    id: str = ""
    statement: str = ""
    source: str = ""
    hypotheses: tuple = ()
    routes: tuple = ()
    negative_control: bool = False
    per_regime: bool = False
    conditions: tuple = ()       # names in lemmas._common.CONDITIONS: the hypotheses as predicates
    scope: Scope = Scope()       # what the statement speaks of: every dimension, sigma, convention, t

    def evaluate(self, profile: str) -> tuple[list[dict], str, dict]:
        """(evidence records, replay command, convention)."""
        raise NotImplementedError

    def run(self, profile: str = "ci") -> ClaimResult:
        """Run the claim's routes at ``profile`` (ci | dev | deep); the verdict is decided from the records."""
        if profile not in PROFILES:
            raise InvalidParameter("profile", profile, f"must be one of {', '.join(PROFILES)}")
        t0 = time.perf_counter()
        records, replay, convention = self.evaluate(profile)
        d = decide(records, self.scope)
        convention = {"profile": profile, "hypotheses": list(self.hypotheses), "source": self.source,
                      "negative_control": self.negative_control, **convention}
        return ClaimResult(self.id, d.verdict, d.scope, d.reason, self.statement, self.scope, records, convention,
                           replay, time.perf_counter() - t0)

    def regime_check(self, setting, steps: int) -> RegimeOutcome:
        """Whether the property holds in ``setting`` for ``steps`` GD steps (per-regime claims).

        The outcome's ``data["in_hypotheses"]`` says whether ``setting`` meets the claim's hypotheses
        (``conditions``, predicates on the setting) and, when :meth:`check` evaluated a run-level
        hypothesis (e.g. "the run is a descent run", or a minimum horizon), whether the run meets it:
        ``check`` then sets ``data["in_hypotheses"] = False`` and ``data["outside"]`` (why).
        Outside the hypotheses a failure is information, not a counterexample."""
        if not self.per_regime:
            raise InvalidParameter("claim", self.id, "is not a per-regime claim (no regime_check)")
        from verify.errors import NumericalTrouble
        from verify.model.validation import check_int
        from lemmas._common import replay_run, within
        steps = check_int("steps", steps, 1, 10**7)
        try:
            out = self.check(setting, steps)
        except NumericalTrouble as exc:
            # float64 left the range (overflow / NaN) inside the check: nothing is decided there
            eng = "reduced" if setting.reducible()[0] else "full"
            out = RegimeOutcome(None, f"undecided: {exc}", replay_run(setting, steps, eng, "mpmath"),
                                {"numerical_trouble": str(exc)})
        ok, why = within(setting, self.conditions)
        run_ok = out.data.get("in_hypotheses", True) is not False
        whys = [w for w in (why, "" if run_ok else out.data.get("outside", "a run-level hypothesis fails")) if w]
        out.data["in_hypotheses"] = ok and run_ok
        if whys:
            out.data["outside"] = "; ".join(whys)
            out.detail += f" [outside the claim's hypotheses: {'; '.join(whys)}]"
        return out

    def check(self, setting, steps: int) -> RegimeOutcome:
        raise NotImplementedError


def claim(id: str, *, statement: str, source: str, hypotheses, routes, negative_control: bool = False):
    """Class decorator: register one instance of the decorated :class:`Claim` subclass as ``id``."""
    def deco(cls):
        if id in REGISTRY:
            raise AssertionError(f"claim {id!r} registered twice")
        if not issubclass(cls, Claim):
            raise TypeError(f"{cls.__name__} must subclass lemmas.Claim")
        if not isinstance(cls.scope, Scope):
            raise TypeError(f"{cls.__name__}.scope must be a verify.evidence.Scope")
        cls.id, cls.statement, cls.source = id, statement, source
        cls.hypotheses, cls.routes, cls.negative_control = tuple(hypotheses), tuple(routes), negative_control
        cls.per_regime = cls.check is not Claim.check
        inst = cls()
        inst._module = cls.__module__
        REGISTRY[id] = inst
        return cls
    return deco


def claim_modules() -> list[str]:
    """The claim modules on disk (every lemmas/*.py not starting with '_')."""
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))


def check_registry() -> None:
    """Each claim file registers exactly the claim its name spells, and every claim has a file."""
    files = set(claim_modules())
    by_module = {}
    for cid, c in REGISTRY.items():
        mod = c._module.rsplit(".", 1)[-1]
        if mod != module_name(cid):
            raise AssertionError(f"claim {cid!r} is registered in {mod}.py, expected {module_name(cid)}.py")
        by_module.setdefault(mod, []).append(cid)
    missing = files - set(by_module)
    if missing:
        raise AssertionError(f"claim files registering nothing: {sorted(missing)}")
    extra = set(by_module) - files
    if extra:
        raise AssertionError(f"claims without a file: {sorted(extra)}")


for _m in claim_modules():
    importlib.import_module(f"{__name__}.{_m}")
check_registry()

__all__ = ["Claim", "ClaimResult", "RegimeOutcome", "REGISTRY", "VERDICTS", "KINDS", "PROFILES", "claim",
           "as_holds", "module_name", "check_registry", "claim_modules"]
