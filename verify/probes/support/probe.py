"""The base class of every probe: a :class:`verify.checks.Check` whose statements are the toolkit's findings,
which also reports the question it answers, the regimes it ran, its findings in words, the classification of
Theorem 3.1's quantities, and draws its own figure beside its computation.

A probe module defines one subclass decorated ``@register("name")`` (verify.probes), implements
:meth:`Check.evaluate` (returning :meth:`Probe.evaluation`) and :meth:`Probe.draw` (its figure from its saved
result, with the helpers of verify.plotting and verify.probes.support.figures).
"""
from __future__ import annotations

from pathlib import Path

from ...checks import Check, CheckResult, Evaluation
from ...model.convention import active
from ...model.paper import question_text
from ...model.quantities import KEYS
from ...run.atomic import write_bytes_atomic
from .convention import honoured, note_text, notes, noting


class Probe(Check):
    """A probe (module docstring). ``summary`` is its one-line finding as ``verify probe --list`` prints it."""

    summary: str = ""

    def evaluation(self, evidence: dict, *, regimes: list, findings: list, classification: dict, numbers: dict,
                   data: dict, replay: str, fits: dict | None = None, convention: dict | None = None,
                   why: dict | None = None, scopes: dict | None = None) -> Evaluation:
        """The :class:`~verify.checks.Evaluation` of a probe: its records per statement id, the numbers quoted
        elsewhere (by key), the arrays behind its figure, and, besides, the quoted question, the regimes run
        (every option of each), the findings in words, the classification of Theorem 3.1's quantities in the
        headline regime and the tail fits."""
        if set(classification) != set(KEYS):
            raise AssertionError(f"{self.id}: classification must cover {KEYS}, not {sorted(classification)}")
        extra = {"question": question_text(*self.questions), "regimes": regimes, "findings": findings,
                 "classification": classification, "fits": fits or {}}
        return Evaluation(evidence, numbers, data, replay, convention or {}, why or {}, {}, extra, scopes or {})

    def run(self, profile: str = "ci", convention=None) -> CheckResult:
        """:meth:`Check.run` under ``convention`` (default: the active one), every regime built in it
        (verify.probes.support.convention.regime_setting). The result's convention records the run's convention (label
        and keywords) and the keywords some regime could not take, and each finding states those, with why."""
        conv = convention if convention is not None else active()
        with noting():
            res = super().run(profile, conv)
            noted = notes()
        said = [note_text(conv, k, why) for k, why in noted.items()]
        res.convention |= {"run_convention_label": conv.label(), "honoured": honoured(conv, noted).as_dict(),
                           "not_honoured": dict(zip(noted, said))}
        for st in res.statements:
            st["convention_not_honoured"] = said
        return res

    def judged_in(self, conv):
        """The run's convention without the keywords some regime could not take: the findings are judged in the
        convention their regimes ran in."""
        return honoured(conv, notes())

    def draw(self, result: dict):
        """This probe's figure (a verify.plotting.Drawing) from its saved ``result``, or None without data."""
        return None

    def figures(self, result: dict, folder: Path) -> list[dict]:
        """The figure of :meth:`draw`, written as FOLDER/<probe id>.png: [{"file", "caption"}] ([] without data)."""
        if not result or not result.get("data"):
            return []
        d = self.draw(result)
        if d is None:
            return []
        path = write_bytes_atomic(Path(folder) / f"{self.id}.png", d.png())
        return [{"file": path.name, "caption": d.caption}]


__all__ = ["Probe"]
