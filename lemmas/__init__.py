"""The paper's claims as executable checks: one module per claim, registered in :data:`CLAIMS`.

Each module ``lemmas/<id with '-' and '.' replaced by '_'>.py`` defines one :class:`verify.checks.Check`
subclass decorated with ``@register(id)``. It states its statements as data (:class:`verify.checks.Claimed`:
the parts of the paper's claim, each quantified, with its hypotheses — objects of verify.model.hypotheses —
and its scope; a negative control's statement has role "control"; the toolkit's sharper findings beside a
part have role "finding") and returns evidence records for each (:meth:`Check.evaluate`); every verdict is
derived from them by :func:`verify.evidence.decide`. Importing this package imports every claim module and
checks that the registry and the files agree. What claims and probes share (runs of the engines, records of
regimes and proofs, Arb ball facts, the leading terms as numbers) is the evidence layer's
(verify.evidence.regime_runs, regime_records, ball_facts, leading_terms); the ``claim`` parts of ``verify all``
are in ``lemmas/_claim_parts.py`` (a leading '_': not a claim, so the catalogue does not load it).

Example::

    >>> r = CLAIMS["wp-zero"].run("ci")
    >>> r.verdict, r.headline["scope_label"].split(";")[0]                     # doctest: +SKIP
    ('proved', 'all dimensions, sigma in {erf, identity, poly:0,1,0,1/10}, ...')
"""
from __future__ import annotations

from verify.checks import Catalogue, Check, Claimed, Evaluation, RegimeOutcome

CLAIMS = Catalogue("claim", "lemmas", "check")
register = CLAIMS.register
Claim = Check

CLAIMS.load()

__all__ = ["CLAIMS", "register", "Claim", "Check", "Claimed", "Evaluation", "RegimeOutcome"]
