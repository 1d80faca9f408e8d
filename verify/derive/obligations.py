"""Proof obligations as data: a statement, how it was discharged, what it covers, and its status.

Every step of a derivation that the toolkit calls a proof is one :class:`Obligation`: its statement
(in the paper's symbols), its method ("sympy identity": an expression simplified to exactly 0;
"matrix calculus": SymPy's MatrixSymbol calculus; "smt": a decision in nonlinear real arithmetic by two
independent SMT solvers, z3 and cvc5), its :class:`verify.evidence.Scope` (``dims="all"`` only when the
proof is in symbolic dimensions) and its status: ``proved``, ``disproved`` (with a counterexample) or
``unknown`` (the method could not decide: shown as open, never as proved). ``assumes`` names the hypotheses
(verify.model.hypotheses ids) the step uses; they join its scope, so a proof made of steps assumes every
hypothesis any of its steps used (verify.evidence.proof). Claims cite an obligation through
:meth:`Obligation.evidence`, which makes the :func:`verify.evidence.record` the verdict rule reads.

An SMT obligation (:func:`smt_obligation`) is built once per solver from the same function of the solver's
z3-style API (z3 itself, cvc5.pythonic), so the formula is one object, written once; each solver's result is
recorded, and the obligation is proved (or disproved) only when both say so. Any disagreement, or an
"unknown", leaves it open, naming both results.

Example::

    >>> ob = smt_obligation("x^2 >= 0", lambda s: ([], s.Real("x") * s.Real("x") >= 0), Scope(sigma="all"))
    >>> ob.status, sorted(ob.solvers)
    ('proved', ['cvc5', 'z3'])
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import sympy as sp

from ..coq.sympylib import formula
from ..evidence import Scope, proof, record

# method -> evidence kind (verify.evidence.KINDS): both are exact decisions
METHODS = {"sympy identity": "symbolic", "matrix calculus": "symbolic", "smt": "smt"}
SOLVERS = ("z3", "cvc5")                 # an SMT obligation is decided by both
SMT_TIMEOUT_MS = 20_000
STATUSES = {True: "proved", False: "disproved", None: "unknown"}
ROLES = ("test", "outside")   # outside: a negative control run outside the hypotheses (never decides a claim)
REPLAY = "verify derive --json"


@dataclass
class Obligation:
    """One proof step. ``holds``: True (proved), False (disproved), None (unknown / open).

    ``name`` is the statement. ``role="outside"`` marks a negative control: a statement with a
    hypothesis dropped, expected to be disproved (its counterexample shows the hypothesis is needed).
    """

    name: str
    holds: bool | None
    detail: str = ""
    method: str = "sympy identity"
    scope: Scope | None = None
    counterexample: dict | None = None
    role: str = "test"
    seconds: float = 0.0
    assumes: tuple = ()      # hypothesis ids the step uses (joined to its scope)
    key: str = ""            # a short identifier (e.g. "rows-share-alpha") where a certificate cites the step
    solvers: dict | None = None   # SMT: each solver's result {"status", "counterexample", "seconds"}
    # SMT: the formula (hypotheses, conclusion) as SymPy booleans, from the same build (verify.coq exports it)
    formula: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"obligation method must be one of {sorted(METHODS)}, not {self.method!r}")
        if not isinstance(self.scope, Scope):
            raise TypeError(f"obligation {self.name!r} needs a verify.evidence.Scope, not {self.scope!r}")
        if self.role not in ROLES:
            raise ValueError(f"obligation role must be one of {ROLES}, not {self.role!r}")
        if self.holds not in (True, False, None):
            raise TypeError(f"holds must be True, False or None, not {self.holds!r}")
        self.scope = replace(self.scope, assumes=self.scope.assumes + tuple(self.assumes))
        self.assumes = self.scope.assumes

    @property
    def statement(self) -> str:
        return self.name

    @property
    def status(self) -> str:
        return STATUSES[self.holds]

    @property
    def kind(self) -> str:
        return METHODS[self.method]

    def as_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "holds": self.holds, "method": self.method,
                "kind": self.kind, "role": self.role, "scope": self.scope.as_dict(), "assumes": list(self.assumes),
                "detail": self.detail,
                "counterexample": self.counterexample, "seconds": round(self.seconds, 3),
                **({"solvers": self.solvers} if self.solvers is not None else {})}

    def evidence(self, replay: str = REPLAY, **data) -> dict:
        """This obligation as a :func:`verify.evidence.record` (a claim lists it among its evidence)."""
        result = f"{self.status}: {self.name}" + (f" ({self.detail})" if self.detail else "")
        if self.counterexample:
            result += f"; counterexample {self.counterexample}"
        extra = {"solvers": self.solvers} if self.solvers is not None else {}
        return record(self.name, self.kind, self.scope, result, self.holds, role=self.role,
                      replay=replay if self.holds is False else None, method=self.method, **extra, **data)


@dataclass
class ProofReport:
    """A list of obligations about one subject (a sigma, a lemma); proved when every test obligation is."""

    sigma: str
    dims: dict
    obligations: list[Obligation] = field(default_factory=list)

    @property
    def proved(self) -> bool:
        tests = [o for o in self.obligations if o.role == "test"]
        return bool(tests) and all(o.holds is True for o in tests)

    @property
    def seconds(self) -> float:
        return sum(o.seconds for o in self.obligations)

    def evidence(self, replay: str = REPLAY) -> list[dict]:
        return [o.evidence(replay) for o in self.obligations]

    def as_dict(self) -> dict:
        return {"sigma": self.sigma, "dims": self.dims, "proved": self.proved, "seconds": round(self.seconds, 3),
                "obligations": [o.as_dict() for o in self.obligations]}


def proof_routes(name: str, obligations, replay: str = REPLAY) -> list[dict]:
    """Evidence for a statement proved by ``obligations`` (each a step, necessary together): one
    verify.evidence.proof record per route, whose scope is the intersection of its steps' scopes.

    Routes: the steps in symbolic dimensions; and each explicit size's steps (a second route) together
    with the sigma-specific lemmas in symbolic dimensions (e.g. the parity lemma) that route also needs.
    Negative controls (role "outside") are added as outside records; they never decide."""
    tests = [o for o in obligations if o.role == "test"]
    symbolic = [o for o in tests if o.scope.dims == "all"]
    sizes = []
    for o in tests:
        if o.scope.dims != "all" and o.scope.dims not in sizes:
            sizes.append(o.scope.dims)
    out = []
    if symbolic:
        out.append(proof(f"{name} (symbolic dimensions)", [o.evidence(replay) for o in symbolic], replay=replay))
    shared = [o for o in symbolic if o.scope.sigma != "all"]
    for dims in sizes:
        steps = [o for o in tests if o.scope.dims == dims] + shared
        out.append(proof(f"{name} (checked at {'; '.join(dims)})", [o.evidence(replay) for o in steps], replay=replay))
    out += [o.evidence(replay) for o in obligations if o.role == "outside"]
    return out


@contextmanager
def stopwatch():
    """``with stopwatch() as t: ...``; ``t()`` is the seconds elapsed (for Obligation.seconds)."""
    t0 = time.perf_counter()
    box = [None]
    yield lambda: (box[0] if box[0] is not None else time.perf_counter() - t0)
    box[0] = time.perf_counter() - t0


def is_zero(expr) -> bool | None:
    """True only when SymPy simplifies ``expr`` to exactly 0 (a proof); None when it cannot."""
    if isinstance(expr, sp.MatrixBase):
        parts = [is_zero(x) for x in expr]
        return True if all(p is True for p in parts) else None
    e = sp.cancel(sp.together(expr))       # a rational identity: usually decided here, without expanding
    if e == 0:
        return True
    e = sp.cancel(sp.together(sp.expand(expr)))
    if e == 0:
        return True
    e = sp.simplify(e)
    return True if e == 0 else None


def all_zero(exprs) -> bool | None:
    """True when every expression is proved 0; None as soon as one is not."""
    for e in exprs:
        if is_zero(e) is not True:
            return None
    return True


def sympy_obligation(name: str, exprs, scope: Scope, detail: str = "", method: str = "sympy identity",
                     key: str = "", assumes=()) -> Obligation:
    """An obligation 'every expression in ``exprs`` is identically 0', decided by :func:`is_zero`."""
    with stopwatch() as t:
        holds = all_zero(exprs if isinstance(exprs, (list, tuple)) else [exprs])
    return Obligation(name, holds, detail, method, scope, seconds=t(), key=key, assumes=assumes)


def solver_library(name: str):
    """The z3-style Python API of an SMT solver: z3, or cvc5's pythonic API (cvc5.pythonic)."""
    if name == "z3":
        import z3  # heavy: z3
        return z3
    if name == "cvc5":
        import cvc5.pythonic  # heavy: cvc5
        return cvc5.pythonic
    raise ValueError(f"solver must be one of {SOLVERS}, not {name!r}")


def solver_decide(name: str, hypotheses, conclusion, timeout_ms: int = SMT_TIMEOUT_MS):
    """(holds, model) from one solver: holds True when hypotheses => conclusion is valid over the reals (the
    negation is unsat), False with a counterexample model (exact values as strings), None when it gives up.
    cvc5 is told the logic (QF_NRA: quantifier-free nonlinear real arithmetic) and runs its complete procedure
    for it, cylindrical algebraic coverings."""
    lib = solver_library(name)
    if name == "z3":
        s = lib.Solver()
        s.set("timeout", timeout_ms)
    else:
        s = lib.SolverFor("QF_NRA")
        # cylindrical algebraic coverings alone (complete for QF_NRA); with cvc5's incremental linearisation
        # beside it, disjunctive goals such as the block-form column facts never return, time limit or not
        s.set("nl-cov", "true")
        s.set("nl-ext", "none")
        s.set("tlimit-per", timeout_ms)
    s.add(*hypotheses)
    s.add(lib.Not(conclusion))
    r = s.check()
    if r == lib.unsat:
        return True, None
    if r == lib.sat:
        m = s.model()
        return False, {str(d): str(m[d]) for d in sorted(m.decls(), key=str)
                       if getattr(d, "arity", lambda: 0)() == 0}
    return None, None


# Each solver's decision procedure (a test replaces one to force a disagreement).
DECIDERS = {name: (lambda hyp, concl, t=SMT_TIMEOUT_MS, _n=name: solver_decide(_n, hyp, concl, t)) for name in SOLVERS}


def _flat(f) -> str:
    return " ".join(str(f).split())     # the solvers wrap long formulas over lines


def smt_obligation(name: str, build, scope: Scope, detail: str = "", role: str = "test", key: str = "",
                   assumes=()) -> Obligation:
    """An obligation 'hypotheses => conclusion' over the reals, decided by z3 and by cvc5 (module docstring).

    ``build(lib)`` returns (hypotheses, conclusion) written with ``lib``, a solver's z3-style API (``lib.Real``,
    ``lib.Reals``, ``lib.And``, ...); it is called once per solver. Proved (disproved) only when both solvers
    prove (disprove) it; the counterexample is z3's. Otherwise open (holds None), naming both results."""
    results, stated = {}, None
    with stopwatch() as t:
        for solver in SOLVERS:
            hyp, concl = build(solver_library(solver))
            stated = stated or " and ".join(_flat(h) for h in hyp) + " => " + _flat(concl)
            with stopwatch() as ts:
                holds, model = DECIDERS[solver](hyp, concl)
            results[solver] = {"status": STATUSES[holds], "counterexample": model, "seconds": round(ts(), 3)}
    verdicts = {r["status"] for r in results.values()}
    holds = {"proved": True, "disproved": False}.get(verdicts.pop()) if len(verdicts) == 1 else None
    said = ", ".join(f"{k} {v['status']}" for k, v in results.items())
    why = said if holds is not None else f"open: not decided alike by both solvers ({said})"
    return Obligation(name, holds, (detail + "; " if detail else "") + f"{why}: {stated}", "smt", scope,
                      results["z3"]["counterexample"] if holds is False else None, role, seconds=t(), key=key,
                      solvers=results, assumes=assumes, formula=formula(build))


__all__ = ["METHODS", "SOLVERS", "STATUSES", "Obligation", "ProofReport", "stopwatch", "is_zero", "all_zero",
           "sympy_obligation", "smt_obligation", "solver_decide", "solver_library"]
