"""Proof steps the edge probes cite: that GD from zero initialisation is the reduced recursion on
(alpha_1..alpha_M, delta) in one case of K (the obligations of verify.derive.reduction_proof, in symbolic
dimensions), and the probes' own symbolic steps, each with the hypotheses it uses.

A probe's proof is one :func:`verify.evidence.proof` record of these steps: its scope is the intersection of
the steps' scopes, so it names every assumption any step used (verify.evidence.Scope.assumes).
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ...derive.obligations import Obligation, smt_obligation, sympy_obligation
from ...derive.reduction_proof import (CASE_LABEL, parity_obligation, prove_reduction_symbolic,
                                 reduced_recursion_obligations)
from ...evidence import proof
from .findings import symbolic_scope

REPLAY = "verify derive --json"
# What a finding proved through the reduction assumes beyond the reference convention: the logit step (3.4)
# needs distinct query positions (verify.derive.gradients.logit_step_obligation).
REDUCTION_HYPOTHESES = ("distinct-queries",)


@lru_cache(maxsize=None)
def reduction_obligations(sigma, case: str) -> tuple[Obligation, ...]:
    """The obligations that make GD from zero initialisation the reduced recursion in ``case`` ("k-zero",
    "k-equals-d", "interior") for ``sigma``: W_P's gradient at 0 and sigma's parity lemma, the case's
    invariance steps (rows, two-valued columns, column quantities), the logit step (3.4) and the recursion."""
    others = tuple(f"[{lab}]" for c, lab in CASE_LABEL.items() if c != case)
    sym = [o for o in prove_reduction_symbolic().obligations if not o.name.startswith(others)]
    return tuple(sym) + (parity_obligation(sigma),) + tuple(reduced_recursion_obligations(sigma, (case,)))


def step_record(ob: Obligation) -> dict:
    """An obligation as a proof step (a verify.evidence record)."""
    return ob.evidence(REPLAY)


def identity_step(name: str, exprs, sigma, *assumes: str, detail: str = "") -> dict:
    """A step "every expression in ``exprs`` is 0" (SymPy), for ``sigma``, using the hypotheses ``assumes``."""
    return step_record(sympy_obligation(name, exprs, symbolic_scope(sigma, *assumes), detail))


def implication_step(name: str, build, sigma, *assumes: str, detail: str = "") -> dict:
    """A step "hypotheses => conclusion" over the reals, decided by z3 and cvc5, using the hypotheses ``assumes``;
    ``build(lib)`` writes (hypotheses, conclusion) with a solver's z3-style API (verify.derive.smt_obligation)."""
    return step_record(smt_obligation(name, build, symbolic_scope(sigma, *assumes), detail))


def reduction_proof(route: str, sigma, case: str, steps: list[dict], replay: str) -> dict:
    """One proof record: the reduction of GD in ``case`` (verify.derive) followed by the probe's ``steps``."""
    return proof(route, [step_record(o) for o in reduction_obligations(sigma, case)] + steps, replay=replay)


def fixed_point(expr, var, at=0):
    """``expr`` at ``var`` -> ``at`` from above (the reduced expressions carry sqrt(alpha^2) = alpha)."""
    return sp.simplify(sp.limit(expr, var, at, "+"))


__all__ = ["REPLAY", "REDUCTION_HYPOTHESES", "reduction_obligations", "step_record", "identity_step", "implication_step", "reduction_proof",
           "fixed_point"]
