"""Statements and evidence records of the probes: a probe states findings (never a claim of the paper), each
with its hypotheses and the claim part it bears on; its records say which runs they cover.

A finding's scope speaks of every dimension and convention its hypotheses allow (``Scope.assumes`` = their
ids); a record's scope names the runs it covers (sizes, sigma, convention labels, horizon).
"""
from __future__ import annotations

from ...checks import Claimed
from ...evidence import Scope, dims_of
from ...model.hypotheses import REFERENCE
from ...model.setting import conventions_of


def reference(*drop: str) -> tuple:
    """The reference convention's hypotheses (verify.model.hypotheses.REFERENCE) without ``drop`` (the ones a
    probe leaves on purpose: e.g. "gaussian" for other entry laws)."""
    unknown = set(drop) - set(REFERENCE)
    if unknown:
        raise KeyError(f"not hypotheses of the reference convention: {sorted(unknown)}")
    return tuple(h for h in REFERENCE if h not in drop)


def finding(id: str, text: str, hypotheses, *, about: str | None = None, relation: str | None = None,
            sigma=("identity",), dims="all") -> Claimed:
    """A probe's statement: role "finding", in every dimension (or the ``dims`` labels of the regimes it names),
    convention and t its hypotheses allow. ``relation``: "outside" (a regime outside the hypotheses of ``about``),
    "sharper" (a sharper statement than ``about``), "supports" (numbers bearing on ``about`` inside its
    hypotheses), "answers" (an answer to a reviewer question)."""
    return Claimed(id, text, "finding", tuple(hypotheses), Scope(dims=dims, sigma=sigma, conventions="all",
                                                                horizon="all"), about=about, relation=relation)


def scope_of(*runs) -> Scope:
    """The scope a set of runs covers: each ``(setting, steps)`` adds its dimensions, sigma and convention
    label; the horizon is the longest run."""
    dims, sig, conv = [], [], []
    for s, _ in runs:
        for lst, v in ((dims, dims_of(s)), (sig, s.sigma.spec()), (conv, conventions_of(s))):
            if v not in lst:
                lst.append(v)
    return Scope(dims=tuple(dims), sigma=tuple(sig), conventions=tuple(conv), horizon=max(int(t) for _, t in runs))


def symbolic_scope(sigma, *assumes: str) -> Scope:
    """The scope of a symbolic proof step: every dimension, convention and t, for ``sigma`` (a spec or
    a tuple of specs), assuming the hypotheses ``assumes`` (the ones the step uses)."""
    return Scope(dims="all", sigma=sigma if isinstance(sigma, tuple) else (sigma,), conventions="all",
                 horizon="all", assumes=assumes)


__all__ = ["reference", "finding", "scope_of", "symbolic_scope"]
