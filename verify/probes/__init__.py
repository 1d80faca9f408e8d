"""Probes: the reviewer questions of verify.model.paper, answered in chosen regimes (``verify probe NAME``).

Each module ``verify/probes/<name with '-' replaced by '_'>.py`` defines one :class:`~.support.probe.Probe`
(a :class:`verify.checks.Check`) decorated with ``@register(name)``. Its statements are the toolkit's own
findings (role "finding"): an edge regime outside a claim's hypotheses says ``relation="outside"`` and names
the claim part it leaves (``about``), so it is reported beside the paper's claims and never counted against
them; a sharper statement says ``relation="sharper"``. Every verdict is derived from the evidence records by
:func:`verify.evidence.decide`; a probe's figure is drawn by its own :meth:`~.support.probe.Probe.draw`.
Importing this package imports every probe module and checks that the registry and the files agree. Shared
machinery is in ``verify.probes.support``.

Example::

    >>> r = PROBES["d-eq-k"].run("ci")                                          # doctest: +SKIP
    >>> r.verdict, r.headline["relation"], r.headline["about"]                  # doctest: +SKIP
    ('proved', 'outside', 'theorem-3.1-lower-T')
"""
from __future__ import annotations

from ..checks import Catalogue
from .support.probe import Probe

PROBES = Catalogue("probe", "verify.probes", "probe")


def register(id: str):
    """Class decorator: register the decorated :class:`Probe` as the probe ``id`` (every statement a finding)."""
    def deco(cls):
        if not (isinstance(cls, type) and issubclass(cls, Probe)):
            raise TypeError(f"probe {id!r}: {cls!r} must subclass verify.probes.Probe")
        bad = [st.id for st in cls.statements if st.role != "finding"]
        if bad:
            raise AssertionError(f"probe {id!r}: statements {bad} must have role 'finding' (a probe states the "
                                 "toolkit's findings, never a claim of the paper)")
        if not cls.questions:
            raise AssertionError(f"probe {id!r} names no reviewer question")
        return PROBES.register(id)(cls)
    return deco


PROBES.load()

__all__ = ["PROBES", "Probe", "register"]
