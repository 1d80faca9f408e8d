"""Finite-horizon facts decided by the Arb balls of the certified full-matrix engine (verify.engines.fullarb).

The engine encloses, step by step, the exact full-matrix recursion (exact real arithmetic, exact parameters, no
symmetry or reduction assumed), so a fact about the exact trajectory over t <= H is decided by its balls. A fact
is written as margins m(t) (balls) with the fact "m(t) > 0 for every t" (or ">= 0", or "for some t"):

- it holds when every margin ball lies entirely above 0 (for "some t": one does);
- it fails when a margin ball lies entirely on the wrong side (for "some t": every one does), at a step that is
  then the counterexample, replayed from scratch at ``REPLAY_FACTOR`` times that step;
- otherwise (a ball straddles 0, or the balls stopped before the horizon) the balls decide nothing.

Where the enclosure becomes unbounded before the asked horizon (the wrapping effect of ball arithmetic,
verify.engines.fullarb), the fact is decided over the steps the balls reach, and the record's scope says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
import math

from flint import arb, fmpq

from ..engines.arb import ArbArith
from ..engines.full import LogitState
from ..engines.fullarb import advance, certified_record
from ..errors import NumericalTrouble
from ..model.flags import setting_command
from ..model.hypotheses import within
from ..model.precision import arb_precision
from .recording import REPLAY_FACTOR, record
from .regime_records import regime_scope

WHY = ("each ball lies entirely on the stated side of the bound: the balls are rigorous enclosures of the exact "
       "full-matrix recursion (no symmetry assumed), so no rounding allowance is needed; a ball that straddles the "
       "bound decides nothing")


@dataclass
class BallRun:
    """Observations (balls) of the certified full-matrix state at chosen steps, up to where the balls reach."""

    setting: object
    bits: int
    horizon: int                                   # the step asked for
    seen: dict = field(default_factory=dict)       # step -> observe(state), a dict with at least "record"
    trouble: str | None = None                     # why the balls stopped before the horizon

    @property
    def last(self) -> int:
        """The last step whose balls are bounded."""
        return max(self.seen)

    @property
    def reached(self) -> bool:
        return self.last >= self.horizon

    def precision(self):
        """The working precision of the run (for arithmetic on its balls)."""
        return arb_precision(self.bits)

    def replay(self, steps: int | None = None) -> str:
        """``verify run`` of this regime with the certified full engine, to ``steps`` (default the last step)."""
        return setting_command("run", self.setting, "--steps", str(self.last if steps is None else steps), "--engine",
                               "full", "--arb", str(self.bits), "--json")


def records_of(st) -> dict:
    """The default observation: {"record": the certified Record (verify.engines.fullarb.certified_record)}; an
    observer that needs more of the state adds its own keys."""
    return {"record": certified_record(st)}


def ball_run(setting, horizon: int, bits: int, observe=records_of, steps=None) -> BallRun:
    """Step the certified full-matrix engine to ``horizon`` at ``bits`` bits, keeping ``observe(state)`` at t = 0 and
    at ``steps`` (default every step); an enclosure that becomes unbounded ends the run where it was still bounded."""
    out = BallRun(setting, bits, horizon)
    ar = ArbArith(bits)
    with ar.context():
        st = LogitState(setting, ar)
        out.seen[0] = observe(st)
        try:
            for t in sorted(set(range(1, horizon + 1) if steps is None else steps) - {0}):
                advance(st, t)
                out.seen[t] = observe(st)
        except NumericalTrouble as exc:
            out.trouble = str(exc)
    return out


@dataclass(frozen=True)
class BallFact:
    """What margins decide: ``holds`` True / False / None, the step ``at`` that decides a failure (or the witness
    of "for some t"), the last step the margins speak of (``upto``), and how many margins decided nothing."""

    holds: bool | None
    at: int | None
    undecided: int
    count: int
    upto: int | None = None


def decide_margins(margins, strict: bool = True, some: bool = False) -> BallFact:
    """Decide "m > 0" (``strict``; else "m >= 0") for every (``some``: for some) ``(t, m)`` of ``margins``."""
    margins = sorted(margins, key=lambda tm: tm[0])
    if not margins:
        return BallFact(None, None, 0, 0)
    ok = [(m.lower() > 0) if strict else (m.lower() >= 0) for _, m in margins]
    bad = [(m.upper() <= 0) if strict else (m.upper() < 0) for _, m in margins]
    undecided, n, upto = sum(1 for o, b in zip(ok, bad) if not (o or b)), len(margins), margins[-1][0]
    if some:
        wit = next((t for (t, _), o in zip(margins, ok) if o), None)
        if wit is not None:
            return BallFact(True, wit, undecided, n, upto)
        return BallFact(False, upto, undecided, n, upto) if all(bad) else BallFact(None, None, undecided, n, upto)
    first_bad = next((t for (t, _), b in zip(margins, bad) if b), None)
    if first_bad is not None:
        return BallFact(False, first_bad, undecided, n, upto)
    return BallFact(True if all(ok) else None, None, undecided, n, upto)


def both(*facts: BallFact) -> BallFact:
    """The conjunction of facts decided on one run: fails at the earliest failure, holds when all hold."""
    bad = [f for f in facts if f.holds is False]
    if bad:
        first = min(bad, key=lambda f: f.at)
        return BallFact(False, first.at, sum(f.undecided for f in facts), sum(f.count for f in facts), first.upto)
    ups = [f.upto for f in facts if f.upto is not None]
    return BallFact(True if all(f.holds for f in facts) else None, None, sum(f.undecided for f in facts),
                    sum(f.count for f in facts), max(ups) if ups else None)


def exact(x):
    """The ball of the exact rational ``x`` (a Fraction, an int, a decimal string, or a float read as the decimal
    it prints: 1e-60 is 10^-60, not the double nearest it), rounded outward."""
    q = Fraction(str(x)) if isinstance(x, float) else Fraction(x)
    return arb(fmpq(q.numerator, q.denominator))


def falls(run: BallRun, value) -> list:
    """Margins of "value(t) < value(t - 1)" for every observed step t whose predecessor is observed."""
    with run.precision():
        return [(t, value(run.seen[t - 1]) - value(run.seen[t])) for t in sorted(run.seen) if t - 1 in run.seen]


def exceeds(run: BallRun, values, bound, t_min: int = 1) -> list:
    """Margins of "x > bound" for every ball x of ``values(observation)`` at the observed steps t >= ``t_min``."""
    with run.precision():
        b = exact(bound)
        return [(t, x - b) for t in sorted(run.seen) if t >= t_min for x in values(run.seen[t])]


def below(run: BallRun, values, bound, t_min: int = 0) -> list:
    """Margins of "|x| <= bound" (``bound - |x|``) for every ball x of ``values(observation)``, t >= ``t_min``."""
    with run.precision():
        b = exact(bound)
        return [(t, b - abs(x)) for t in sorted(run.seen) if t >= t_min for x in values(run.seen[t])]


def secant_exponent(run: BallRun, value, t0: int, t1: int):
    """The ball of log(value(t1) / value(t0)) / log(t1 / t0): the slope of value on log-log axes between t0 and t1."""
    with run.precision():
        return (value(run.seen[t1]) / value(run.seen[t0])).log() / (arb(t1) / t0).log()


def fact_record(route: str, run: BallRun, fact_of, describe, *, hypotheses, bound: str, observe=records_of,
                replay: str | None = None, **data) -> dict:
    """One evidence record (kind "arb") of a finite-horizon fact, decided by the balls of the certified run ``run``.

    ``fact_of(run) -> BallFact`` computes and decides the margins; ``describe(run, fact)`` says what the balls
    found. Inside ``hypotheses`` the record tests (role "test"), outside them it reports (role "outside"). A
    failure at step t is run again from scratch to ``REPLAY_FACTOR`` * t (``replay_check``, observed with
    ``observe``): it refutes only if it fails there again. ``replay`` defaults to the ``verify run --engine full
    --arb`` command of the deciding step."""
    fact = fact_of(run)
    inside, unmet = within(run.setting, hypotheses)
    covered = fact.at if fact.holds is False else run.last if fact.upto is None else fact.upto
    result = describe(run, fact)
    if not run.reached:
        result += f" [the balls reach t = {run.last} of {run.horizon}: {run.trouble}]"
    if fact.undecided:
        result += f" [{fact.undecided} of {fact.count} balls straddle the bound]"
    kw = {"replay": replay or run.replay(covered)}
    if fact.holds is False and inside:
        kw["replay_check"] = replayed(run.setting, REPLAY_FACTOR * fact.at, run.bits, fact_of, observe)
    if not inside:
        data = data | {"outside": unmet}
    return record(route, "arb", regime_scope(run.setting, covered), result, fact.holds,
                  role="test" if inside else "outside", threshold={"value": bound, "why": WHY}, bits=run.bits,
                  horizon_asked=run.horizon, horizon_reached=run.last, **kw, **data)


def replayed(setting, horizon: int, bits: int, fact_of, observe) -> dict:
    """The fact decided again on a fresh certified run to ``horizon``, observed at every step:
    {"horizon", "holds", "detail", "replay"}."""
    run = ball_run(setting, horizon, bits, observe)
    fact = fact_of(run)
    detail = (f"fails again at t = {fact.at}" if fact.holds is False else
              "holds on the longer run" if fact.holds else "undecided on the longer run") + (
        "" if run.reached else f" (the balls reach t = {run.last})")
    return {"horizon": horizon, "holds": fact.holds, "detail": detail, "replay": run.replay()}


def show(x, digits: int = 8) -> str:
    """A ball as its midpoint to ``digits`` significant digits and its radius to two: "0.0008901446 (radius
    1.5e-311)" (Arb's decimal conversion: no float underflow)."""
    if not x.is_finite():
        return "unbounded"
    return f"{arb(x.mid()).str(digits, radius=False)} (radius {arb(x.rad()).str(2, radius=False)})"


def interval(x) -> list[float]:
    """[lower, upper] of a ball as floats rounded outward (one ulp past the nearest double): JSON-ready bounds."""
    return [math.nextafter(float(x.lower()), -math.inf), math.nextafter(float(x.upper()), math.inf)]


def upper_str(x) -> str:
    """A three-digit decimal at least as large as every point of the ball ``x``: its upper end moved up by 1% of
    itself, then rounded to nearest (a relative change of at most 0.5%)."""
    if not x.is_finite():
        return "inf"
    up = x.upper()
    return (up * arb(101 if up >= 0 else 99) / 100).str(3, radius=False)


__all__ = ["WHY", "BallRun", "ball_run", "records_of", "BallFact", "decide_margins", "both", "exact", "falls", "exceeds",
           "below", "secant_exponent", "fact_record", "replayed", "show", "interval", "upper_str"]
