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

The package, by layer (tests/test_layers.py). The rule, low in the house (above the model only), is this package's
own names, from: ``scope`` (scopes and coverage), ``recording`` (kinds, roles, :func:`record`, :func:`proof`),
``decision`` (:func:`decide`, :class:`Statement`), ``comparisons`` (:func:`finite`, :func:`compare`) and
``regime_outcome`` (:class:`RegimeOutcome`, what a per-regime check found). The evidence the claims (lemmas/) and the
probes gather alike sits higher, above the engines and certificates it runs and below the claims, and is imported by
its module's name (this ``__init__`` does not load it): ``regime_runs`` (runs of the engines, the fixed regimes,
replay commands), ``regime_records`` (scopes of regimes and proofs, per-regime checks as records), ``ball_facts``
(finite-horizon facts decided by Arb balls) and ``leading_terms`` (the derived leading terms, the onset of the 1/T
phase and the exponents against the claimed orders, as numbers).

Example::

    >>> s = Scope(dims="all", sigma=("identity",), horizon="all")
    >>> ev = [record("matrix calculus", "symbolic", s, "dL/dW_P = 0", True)]
    >>> decide(ev, s).verdict
    'proved'
"""
from __future__ import annotations

from .scope import ALL, From, Region, Scope, covered, dims_label, dims_of, intersect
from .recording import EXACT_ALGEBRA_KINDS, KINDS, PROOF_KINDS, REPLAY_FACTOR, RIGOROUS_KINDS, ROLES, proof, record
from .decision import EXTENTS, VERDICTS, Decision, Statement, decide, headline, uncovered
from .comparisons import compare, finite
from .regime_outcome import RegimeOutcome

__all__ = ["VERDICTS", "KINDS", "PROOF_KINDS", "EXACT_ALGEBRA_KINDS", "RIGOROUS_KINDS", "ROLES", "ALL", "EXTENTS",
           "Scope", "From", "Region", "intersect", "covered", "uncovered", "record", "proof", "Decision", "decide",
           "Statement", "headline", "finite", "compare", "dims_label", "dims_of", "REPLAY_FACTOR", "RegimeOutcome"]
