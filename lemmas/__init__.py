"""The paper's claims as executable checks: one module per claim, registered with :func:`claim`.

Each module ``lemmas/<id with '-' and '.' replaced by '_'>.py`` defines one subclass of
:class:`Claim` decorated with ``@claim(id, statement=..., source=..., hypotheses=..., routes=...)``.
Importing this package imports every such module and checks that the registry and the files agree
(a forgotten registration, or a module registering under another id, fails at import).

Verdicts, weakest evidence first (see :func:`honest_verdict`, the one place the rules live):
  proved       exact SymPy identities (every step symbolic)
  certified    Arb ball enclosures of the property over a stated finite set of regimes and horizon
  supported    numerics (float64 / mpmath / Monte Carlo) agree with the statement
  refuted      a counterexample, with a replay command that reproduces it
  inconclusive none of the above

Example::

    >>> from lemmas import REGISTRY
    >>> REGISTRY["wp-zero"].run("ci").verdict
    'proved'
"""
from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from verify.errors import InvalidParameter

VERDICTS = ("proved", "certified", "supported", "refuted", "inconclusive")
KINDS = ("symbolic", "arb", "mpmath", "float64", "monte-carlo")
PROFILES = ("ci", "dev", "deep")

REGISTRY: dict[str, "Claim"] = {}


def module_name(claim_id: str) -> str:
    """File (module) name of a claim: ``lemma-C.2`` -> ``lemma_C_2``."""
    return claim_id.replace("-", "_").replace(".", "_")


@dataclass
class RegimeOutcome:
    """Whether a claim's property holds in one regime, why, and how to reproduce it."""

    holds: bool
    detail: str
    replay: str
    data: dict = field(default_factory=dict)


@dataclass
class ClaimResult:
    """What ``verify check`` prints for one claim."""

    id: str
    verdict: str
    statement: str
    evidence: list
    convention: dict
    replay: str
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {"id": self.id, "verdict": self.verdict, "statement": self.statement, "evidence": self.evidence,
                "convention": self.convention, "replay": self.replay}


def evidence(route: str, kind: str, regimes, result: str, holds: bool | None, **extra) -> dict:
    """One evidence record. ``holds``: True (the route confirms the statement), False (it found a
    counterexample), None (informative only, e.g. outside the claim's hypotheses)."""
    if kind not in KINDS:
        raise ValueError(f"evidence kind must be one of {KINDS}, not {kind!r}")
    return {"route": route, "kind": kind, "regimes": regimes, "result": result, "holds": holds, **extra}


def honest_verdict(ev: list[dict], requested: str) -> str:
    """The strongest verdict the evidence allows, capped at ``requested`` (the claim's own reading).

    - refuted needs an evidence record with holds = False;
    - any holds = False forbids proved / certified / supported;
    - proved needs every confirming record (holds = True) to be symbolic;
    - certified needs every confirming record to be symbolic or arb, and at least one arb record
      (so a float64-only claim can never be certified);
    - supported needs at least one confirming record.
    Records with role = "extends" (e.g. float64 runs past a certified horizon) confirm beyond what
    the verdict asserts: they do not lower its kind, but a counterexample among them still refutes.
    """
    confirming = [e for e in ev if e.get("holds") is True and e.get("role") != "extends"]
    if any(e.get("holds") is False for e in ev):
        return "refuted" if requested in ("refuted", "proved", "certified", "supported") else "inconclusive"
    if requested == "refuted" or not confirming:
        return "inconclusive"
    kinds = {e["kind"] for e in confirming}
    best = "proved" if kinds == {"symbolic"} else (
        "certified" if kinds <= {"symbolic", "arb"} and "arb" in kinds else "supported")
    order = VERDICTS.index
    return best if order(best) >= order(requested) else requested


class Claim:
    """A claim of the paper. Subclasses implement :meth:`evaluate` (and, per regime, :meth:`check`)."""

    id: str = ""
    statement: str = ""
    source: str = ""
    hypotheses: tuple = ()
    routes: tuple = ()
    negative_control: bool = False
    per_regime: bool = False
    conditions: tuple = ()       # names in lemmas._common.CONDITIONS: the hypotheses as predicates

    def evaluate(self, profile: str) -> tuple[list[dict], str, str, dict]:
        """(evidence, requested verdict, replay command, convention)."""
        raise NotImplementedError

    def run(self, profile: str = "ci") -> ClaimResult:
        """Run the claim's routes at ``profile`` (ci | dev | deep) and return its honest verdict."""
        if profile not in PROFILES:
            raise InvalidParameter("profile", profile, f"must be one of {', '.join(PROFILES)}")
        t0 = time.perf_counter()
        ev, requested, replay, convention = self.evaluate(profile)
        verdict = honest_verdict(ev, requested)
        convention = {"profile": profile, "hypotheses": list(self.hypotheses), "source": self.source,
                      "negative_control": self.negative_control, **convention}
        return ClaimResult(self.id, verdict, self.statement, ev, convention, replay, time.perf_counter() - t0)

    def regime_check(self, setting, steps: int) -> RegimeOutcome:
        """Whether the property holds in ``setting`` for ``steps`` GD steps (per-regime claims).

        The outcome's ``data["in_hypotheses"]`` says whether ``setting`` meets the claim's hypotheses
        (``conditions``, predicates on the setting) and, when :meth:`check` evaluated a run-level
        hypothesis (e.g. "the run is a descent run", or a minimum horizon), whether the run meets it:
        ``check`` then sets ``data["in_hypotheses"] = False`` and ``data["outside"]`` (why).
        Outside the hypotheses a failure is information, not a counterexample."""
        if not self.per_regime:
            raise InvalidParameter("claim", self.id, "is not a per-regime claim (no regime_check)")
        from verify.model.validation import check_int
        from lemmas._common import within
        out = self.check(setting, check_int("steps", steps, 1, 10**7))
        ok, why = within(setting, self.conditions)
        run_ok = out.data.get("in_hypotheses", True) is not False
        whys = [w for w in (why, "" if run_ok else out.data.get("outside", "a run-level hypothesis fails")) if w]
        out.data["in_hypotheses"] = ok and run_ok
        if whys:
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
           "evidence", "honest_verdict", "module_name", "check_registry", "claim_modules"]
