"""Proof obligations as data: what is claimed, how it was discharged, and whether it was.

Every step of an all-time certificate is one :class:`Obligation` (CAPD / mathlib style: nothing is
asserted in prose). ``method`` says what discharged it: ``sympy`` (an exact identity simplified to 0,
or an exact sign), ``smt`` (a nonlinear real-arithmetic formula whose negation both z3 and cvc5 find
unsatisfiable: verify.derive.obligations.smt_obligation, the one place of that decision), or
``arb`` (a rigorous ball enclosure over a stated finite set). A failed obligation keeps its detail,
and the certificate that needed it fails with that name.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import VerificationError

METHODS = ("sympy", "smt", "arb")
EVIDENCE_KIND = {"sympy": "symbolic", "smt": "smt", "arb": "arb"}
ROUTE = {"sympy": "SymPy", "arb": "Arb"}      # the route that decides a method's obligations (smt: its solvers)


@dataclass(frozen=True)
class Obligation:
    """One step of a certificate: ``statement`` holds, discharged by ``method`` (``ok``)."""

    name: str
    statement: str
    method: str
    ok: bool
    detail: str = ""
    solvers: dict | None = None     # smt: each solver's result (verify.derive.obligations.smt_obligation)
    formula: tuple | None = field(default=None, repr=False, compare=False)   # (hypotheses, conclusion), SymPy: smt's
    # formula, or an identity's lhs = rhs (no hypotheses: it holds as rational functions, wherever both sides are
    # defined), which verify.coq exports

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"obligation method must be one of {METHODS}, not {self.method!r}")

    @property
    def status(self) -> str:
        return "discharged" if self.ok else "failed"

    def routes(self, kernel_keys=()) -> list[str]:
        """The routes that decided this obligation: SymPy, z3 and cvc5 (an SMT obligation's solvers) or Arb, and Coq
        when its name is among ``kernel_keys`` (the obligations Coq's kernel accepted, verify.coq)."""
        base = [ROUTE[self.method]] if self.method in ROUTE else list(self.solvers or ())
        return base + (["Coq"] if self.name in kernel_keys else [])

    def as_dict(self) -> dict:
        return {"name": self.name, "statement": self.statement, "method": self.method, "status": self.status,
                "detail": self.detail, **({"solvers": self.solvers} if self.solvers is not None else {})}


def identity(name: str, statement: str, lhs, rhs=0) -> Obligation:
    """``lhs == rhs`` as an exact SymPy identity (the difference simplifies to 0)."""
    import sympy as sp          # heavy: sympy;  here, not at the top: a query that only reads obligations needs no SymPy
    diff = sp.sympify(lhs) - sp.sympify(rhs)
    if diff.free_symbols and diff.is_rational_function():
        # A rational function is 0 iff the numerator of its sum over a common denominator is the zero
        # polynomial: expanded in the polynomial ring (fast), not by simplify.
        num = sp.fraction(sp.together(diff))[0]
        if sp.Poly(num, *sorted(diff.free_symbols, key=str)).is_zero:
            diff = sp.Integer(0)
    if diff != 0:
        # exp, log, sqrt: cancel first, simplify only what cancel leaves.
        diff = sp.cancel(sp.together(diff))
        if diff != 0:
            diff = sp.simplify(diff)
    return Obligation(name, statement, "sympy", diff == 0, "difference simplifies to 0" if diff == 0
                      else f"difference does not simplify to 0: {sp.sstr(diff)[:300]}",
                      formula=((), sp.Eq(sp.sympify(lhs), sp.sympify(rhs), evaluate=False)))


def sign(name: str, statement: str, expr, want: str) -> Obligation:
    """``expr`` is positive / negative / nonzero for every value of its (assumption-carrying) symbols."""
    import sympy as sp  # heavy: sympy
    prop = {"positive": "is_positive", "negative": "is_negative", "nonzero": "is_nonzero",
            "nonnegative": "is_nonnegative"}[want]
    got = getattr(sp.factor(sp.simplify(expr)), prop)
    return Obligation(name, statement, "sympy", got is True, f"SymPy decides {prop} = {got} for {sp.sstr(expr)[:200]}")


def smt(name: str, statement: str, build) -> Obligation:
    """``hypotheses => conclusion`` over the reals, decided by z3 and cvc5 (``build(lib)`` returns them written
    in a solver's z3-style API; verify.derive.obligations.smt_obligation): discharged only when both prove it."""
    from ..derive.obligations import smt_obligation  # heavy: loads flint,mpmath,numpy,sympy
    from ..evidence import Scope  # heavy: loads numpy
    o = smt_obligation(statement, build, Scope(), key=name)
    return Obligation(name, statement, "smt", o.holds is True, o.detail, o.solvers, o.formula)


def cited(o) -> Obligation:
    """A step proved in verify.derive (a verify.derive.obligations.Obligation with a ``key``), as a step of a
    certificate."""
    method = {"symbolic": "sympy", "smt": "smt"}[o.kind]
    return Obligation(o.key, o.name, method, o.holds is True, o.detail, o.solvers, o.formula)


def first_failure(obligations) -> Obligation | None:
    return next((o for o in obligations if not o.ok), None)


class CertificateFailed(VerificationError):
    """The certificate did not close: ``obligation`` failed (no weaker bound is returned)."""

    def __init__(self, obligation: Obligation):
        self.obligation = obligation
        super().__init__(f"certificate failed: obligation '{obligation.name}' ({obligation.statement}): "
                         f"{obligation.detail}")


def raise_first_failure(obligations) -> None:
    """Raise :class:`CertificateFailed` for the first obligation that was not discharged, if any."""
    bad = first_failure(obligations)
    if bad is not None:
        raise CertificateFailed(bad)
