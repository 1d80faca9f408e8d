"""The run's convention as the probes honour it: every probe regime is built by :func:`regime_setting`, which is
verify.model.convention.setting (the active convention, the regime's explicit keywords winning) except for a
convention keyword the regime cannot take, which is left at the reference and noted, with why.

A keyword cannot be taken when the setting it gives is invalid for the regime (make_setting's
InvalidParameter: e.g. a data model that fixes d and D against the regime's sizes), or when the probe iterates
the exact reduced recursion and the keyword leaves its hypotheses (``Setting.reducible``: a random
initialisation, a non-orthogonal P, ...), or when the probe uses on it a form derived under hypotheses the
keyword breaks (:class:`Needs`: the leading terms of verify.derive.asymptotics assume the summed loss, v = 1,
lambda = 1, ...). :func:`noting` collects these notes during one probe run; verify.probes.support.probe states
them on every finding and judges the findings in the convention without them.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

from ...errors import InvalidParameter
from ...model.convention import Convention, active, setting
from ...model.hypotheses import within
from ...model.setting import make_setting

_NOTES: contextvars.ContextVar = contextvars.ContextVar("verify_probe_convention_notes", default=None)


@contextlib.contextmanager
def noting():
    """Collect, for the block, {keyword: why} of the convention keywords a regime could not take."""
    notes: dict = {}
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


@dataclass(frozen=True)
class Needs:
    """What a probe's regime needs besides a valid setting: the exact reduced recursion (``reduced``), and the
    hypotheses ``assume`` of what the probe uses on it, named ``derived`` (e.g. the leading terms of
    verify.derive.asymptotics, derived in the reference convention only; an SGD student whose gradient omits
    beta)."""

    reduced: bool = False
    assume: tuple = ()
    derived: str = ""

    def fit(self, conv: Convention, kwargs: dict) -> tuple:
        """(the Setting of ``kwargs`` under ``conv``, None) when the probe can run it; (None, why) when not."""
        try:
            s = make_setting(**conv.apply(kwargs))
        except InvalidParameter as exc:
            return None, f"the regime is invalid with it ({exc})"
        ok, why = s.reducible()
        if self.reduced and not ok:
            return None, f"the probe iterates the exact reduced recursion, which does not apply: {why}"
        ok, why = within(s, self.assume)
        if not ok:
            return None, f"the probe uses {self.derived}, valid only under: {why}"
        return s, None

    def why_not(self, conv: Convention, kwargs: dict) -> str | None:
        """Why ``kwargs`` under ``conv`` is not a regime the probe can run (None when it is)."""
        return self.fit(conv, kwargs)[1]


def regime_setting(*, needs: Needs = Needs(), reduced: bool = False, **kwargs):
    """The Setting of ``kwargs`` (make_setting keywords) under the active convention, the regime's explicit
    keywords winning. ``reduced``: the probe runs this regime on the exact reduced recursion (short for
    ``needs=Needs(reduced=True)``); ``needs``: what else the regime needs (:class:`Needs`). A convention keyword
    the regime cannot take is left at the reference and noted (:func:`noting`)."""
    conv = active()
    needs = Needs(True, needs.assume, needs.derived) if reduced else needs
    if conv.is_reference:
        return setting(**kwargs)
    whole, why = needs.fit(conv, kwargs)            # every keyword fits: that setting, built once
    if why is None:
        return whole
    kept: dict = {}
    notes = _NOTES.get()
    for group in _groups(conv, kwargs):                  # add the keywords group by group; keep those that fit
        why = needs.why_not(Convention(tuple((kept | group).items())), kwargs)
        if why is None:
            kept |= group
        elif notes is not None:
            for key in group:
                notes.setdefault(key, why)
    return make_setting(**Convention(tuple(kept.items())).apply(kwargs))


# Keywords make_setting only takes together (a random start and its scale; a P kind and its structure).
COUPLED = (("init", "init_scale"), ("p_kind", "p_structure"))


def _groups(conv: Convention, kwargs: dict) -> list[dict]:
    """The convention's keywords the regime does not set itself, coupled ones (:data:`COUPLED`) together."""
    free = {k: v for k, v in conv.values if k not in kwargs}
    out = [{k: free.pop(k) for k in group if k in free} for group in COUPLED]
    return [g for g in out if g] + [{k: v} for k, v in free.items()]


def notes() -> dict:
    """{keyword: why} noted so far in the current :func:`noting` block ({} outside one)."""
    return dict(_NOTES.get() or {})


def honoured(conv: Convention, noted: dict) -> Convention:
    """``conv`` without the keywords ``noted`` (the convention a probe's findings are judged in)."""
    return Convention(tuple((k, v) for k, v in conv.values if k not in noted))


def judged_hypotheses(hyps) -> tuple:
    """A record's hypotheses ``hyps`` in the convention the regimes built so far ran in (the run's, less the
    keywords noted): an evidence record tests inside them, as the finding it bears on is judged in them."""
    return honoured(active(), notes()).adjust(hyps)


def note_text(conv: Convention, key: str, why: str) -> str:
    """One keyword of ``conv`` not honoured, in words."""
    flag = " ".join(Convention(((key, conv.get(key)),)).flags())       # as the convention writes it (a switch alone)
    return f"{flag} not honoured: {why}; the regimes it did not fit ran with the reference {key}"


def replay_command(probe_id: str, profile: str, detail: str = "") -> str:
    """The ``verify probe`` command that replays a probe run under the active convention (its flags)."""
    flags = " ".join(active().flags())
    return (f"verify probe {probe_id} --profile {profile}" + (f" {flags}" if flags else "") + " --json"
            + (f"  ({detail})" if detail else ""))


__all__ = ["Needs", "noting", "notes", "honoured", "regime_setting", "judged_hypotheses", "note_text", "replay_command"]
