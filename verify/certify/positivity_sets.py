"""Lemma C.2 over a cell: the registry of invariant-set kinds, tried in order until one certifies the cell.

A kind is a name and a decision on the cell's box. "band" (verify.certify.positivity: L <= alpha <= A, delta >= 0,
the cheapest, first), "ratio" (verify.certify.positivity_ratio: 0 <= alpha <= gamma alpha*(w, rho), where no
constant band exists), "threshold" (verify.certify.positivity_threshold: 0 <= alpha <= min(gamma T, A(rho)) in a chart
regular at rho = 0, the only kind whose cell may start at rho = 0: "rho_zero") and "stair"
(verify.certify.positivity_stair: L_i <= alpha <= U_i on pieces of w = e^-delta, where kappa x is large, the
costliest, last). A certified result names its kind in "set"; the independent re-checker
(recheck.positivity.SETS) has one entry per kind and refuses a name it does not know. An open result keeps the
first kind's fields and joins every kind's reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from . import positivity as P
from . import positivity_chart as PC
from . import positivity_ratio as PR
from . import positivity_threshold as PT
from . import positivity_stair as PST


@dataclass(frozen=True)
class SetKind:
    name: str
    decide: Callable        # (cell) -> a positivity result dict (status certified / open)
    obligations: Callable   # () -> the SymPy obligations its certificate relies on
    rho_zero: bool = False  # its chart is regular at rho = 0: it may decide a cell [0, rho_hi] (members 0 < rho)


def _ratio_obligations() -> tuple:
    """The ratio set's certificate relies on the band map's obligations and its own."""
    return P.obligations() + PR.obligations()


def _with_skeleton(decide: Callable, obligations: Callable) -> Callable:
    """A set's decision on the cell's box as a full result: the skeleton every set's result shares
    (positivity.result_skeleton), with the obligations it relies on and the first step when certified."""
    def run(cell: dict) -> dict:
        box, out = P.result_skeleton(cell)
        res = decide(box)
        if res["status"] == "certified":
            out["obligations"] = [o.key for o in obligations()]
            out["first_step"] = P.first_step(box)
        return out | res
    return run


def _stair_obligations() -> tuple:
    """The staircase set's certificate relies on the band map's obligations and its own."""
    return P.obligations() + PST.obligations()


def _threshold_obligations() -> tuple:
    """The threshold set relies on the band map's obligations, the omega chart's (positivity_chart) and its own."""
    return P.obligations() + PC.obligations() + PT.obligations()


_ratio = _with_skeleton(PR.decide, _ratio_obligations)
_threshold = _with_skeleton(PT.decide, _threshold_obligations)
# the staircase's "w_pieces" is the number of its pieces of w (its result's own field replaces the skeleton's)
_stair = _with_skeleton(PST.decide, _stair_obligations)


SETS = (SetKind("band", P.decide_positivity, P.obligations), SetKind("ratio", _ratio, _ratio_obligations),
        SetKind("threshold", _threshold, _threshold_obligations, rho_zero=True),
        SetKind("stair", _stair, _stair_obligations))


def obligations_of(results: list) -> tuple:
    """The obligations the certified results rely on: those of every kind among them (each once, in order)."""
    used = {r.get("set") or "band" for r in results}
    out = []
    for kind in SETS:
        if kind.name in used:
            out += [o for o in kind.obligations() if o.key not in {p.key for p in out}]
    return tuple(out)


def kinds_named(names: tuple | None) -> tuple:
    """The kinds of :data:`SETS` with these names, in the names' order (None: all, in the registry's order). A region
    names its kinds (positivity.REGIONS "sets") where the registry's order is slow: the band and the ratio set spend
    their whole box budget on cells only the threshold set closes (docs/atlas.md)."""
    if names is None:
        return SETS
    known = {k.name: k for k in SETS}
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise ValueError(f"sets {list(names)}: each must be one of {', '.join(known)} (at least one)")
    return tuple(known[n] for n in names)


def decide_positivity(cell: dict, kinds: tuple | None = None) -> dict:
    """The first kind of :data:`SETS` (or of those named ``kinds``, in that order: :func:`kinds_named`) that certifies
    the cell (its result with "set" = its name), else an open result whose reason names each kind's failure; a cell
    outside the hypotheses raises ValueError."""
    opened = []
    at_zero = Fraction(cell["rho"][0]) == 0
    for kind in kinds_named(kinds):
        if at_zero and not kind.rho_zero:
            # a cell holding rho = 0: this kind's chart has r = 1/rho - 1, infinite there
            box, out = P.result_skeleton(cell)
            opened.append(out | {"status": "open", "set": kind.name, "failed": "rho-zero",
                                 "reason": "its chart needs rho > 0 (the cell starts at rho = 0)"})
            continue
        res = kind.decide(cell) | {"set": kind.name}
        if res["status"] == "certified":
            return res
        opened.append(res)
    return opened[0] | {"set": None, "failed": "; ".join(f"{r['set']}: {r['failed']}" for r in opened),
                        "reason": "; ".join(f"{r['set']}: {r['reason']}" for r in opened)}


__all__ = ["SETS", "SetKind", "decide_positivity", "kinds_named", "obligations_of"]
