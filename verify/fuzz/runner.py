"""Property-based search for counterexamples to a claim (Hypothesis), with its evidence and verdict.

``fuzz(claim)``:

1. *replay*: every regime saved for the claim in the counterexample database (verify.fuzz.store) is
   judged again; one that still fails is a *replayed* counterexample ("replayed": true), one that no
   longer fails is deleted;
2. *search*: Hypothesis draws regimes from the claim's strategy (verify.fuzz.strategies, inside the
   claim's hypotheses) under a seed, drawn and recorded when not given, so every run replays with
   ``--seed``; a failure is shrunk to a minimal regime, saved to the database, and reported as *new*;
3. every generated example is judged by :func:`judge`: checked (the property holds), failing, or
   discarded for a counted reason: outside the claim's hypotheses (``within(setting, hypotheses)``, or a run-level
   hypothesis the check reports), float errors (overflow, invalid operation), undecided (the check's
   ``holds`` is None, e.g. NaN), not replayed (it failed at T but not again at 10 T), or rejected by
   Hypothesis itself (strategy filters);
4. the result carries evidence records (verify.evidence.record) and the verdict ``decide`` derives
   from them: a counterexample that replays at 10x the horizon refutes; a search without one is a
   float64 test record that holds, unless more than ``MAX_DISCARDED`` of the generated examples were
   discarded: then the record is "failed" and the verdict inconclusive, never supported.

The pseudo-claim ``invalid-parameters`` checks that every invalid regime raises InvalidParameter (and
nothing else).
"""
from __future__ import annotations

import contextlib
import secrets
import time
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, assume, given, seed as hyp_seed, settings
from hypothesis.errors import HypothesisException, Unsatisfiable

try:
    from hypothesis.statistics import collector
except ImportError:  # pragma: no cover - statistics are a convenience, not needed for the verdict
    collector = None

from ..errors import InvalidParameter, PrecisionError, suggest
from ..evidence import REPLAY_FACTOR, Scope, decide, record
from ..model.hypotheses import hypothesis, within
from ..model.validation import check_int
from .store import DEFAULT_DB, CounterexampleStore
from .strategies import FULL_MAX_STEPS, MAX_D, MAX_STEPS, Regime, invalid_regimes, valid_regimes

DEFAULT_EXAMPLES = 100
INVALID_CLAIM = "invalid-parameters"
MAX_SEED = 2**32 - 1
# A search confirms a claim only when at most this fraction of its generated examples was discarded:
# beyond it, most of what Hypothesis drew never tested the claim inside its hypotheses.
MAX_DISCARDED = 0.5
DISCARD_REASONS = ("outside_hypotheses", "float_errors", "undecided", "not_replayed", "hypothesis_filter")
FLOAT_ERRORS = (OverflowError, FloatingPointError, RuntimeWarning, PrecisionError)


class Falsified(AssertionError):
    """Raised inside the property when a regime violates the claim (and the violation replays)."""


class Crashed(AssertionError):
    """Raised inside the property when the claim's check itself raised an unexpected exception."""


def hypotheses_of(obj) -> list:
    """Predicates (setting -> bool) of a claim's hypotheses (verify.model.hypotheses objects: the one place each
    hypothesis is written; run-level ones are the claim's check's to evaluate)."""
    hyps = tuple(getattr(obj, "hypotheses", ()) or ())
    return [lambda s, hs=hyps: within(s, hs)[0]]


def claim_ids() -> list[str]:
    """Ids of the claims that can be fuzzed: per-regime claims of lemmas.REGISTRY, plus the pseudo-claim."""
    # lemmas imports every claim module (and through them the engines and derivations): imported on first use,
    # so that the strategies and the store of this package load without the whole catalogue
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    return sorted(k for k, c in CLAIMS.items() if c.per_regime) + [INVALID_CLAIM]


def resolve(claim):
    """A claim object (anything with ``id`` and ``regime_check``) from an id or the object itself."""
    if not isinstance(claim, str):
        return claim
    if claim == INVALID_CLAIM:
        return None
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    if claim not in CLAIMS or not CLAIMS[claim].per_regime:
        raise InvalidParameter("claim", claim, f"must be one of {', '.join(claim_ids())}{suggest(claim, claim_ids())}")
    return CLAIMS[claim]


def strategy_for(obj):
    """The default strategy of a claim: valid regimes inside its hypotheses, long horizons when its check
    iterates the reduced recursion (the claim's ``long_horizon``); invalid regimes for the pseudo-claim."""
    if obj is None:
        return invalid_regimes()
    return valid_regimes(hypotheses=tuple(getattr(obj, "hypotheses", ())),
                         long_horizon=bool(getattr(obj, "long_horizon", False)))


# ----- judging one regime --------------------------------------------------------------------------
@dataclass
class Judgement:
    """What one regime says about the claim: ``status`` is "holds", "fails", "crash" or a discard reason."""

    status: str
    detail: str
    replay: str = ""
    replay_check: dict | None = None
    trace: str = ""
    data: dict = field(default_factory=dict)


def _guarded_check(obj, setting, steps):
    """The claim's regime_check with float64 errors raised (never silently NaN): (outcome, float error text)."""
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            return obj.regime_check(setting, steps), None
    except FLOAT_ERRORS as exc:
        return None, f"{type(exc).__name__}: {exc}"


def _decided(out):
    """The outcome's holds (True / False / None), or None when the check says the run is outside the claim."""
    if getattr(out, "data", {}).get("in_hypotheses") is False:
        return None
    h = out.holds
    return None if h is None else bool(h)


def judge(obj, regime: Regime, preds) -> Judgement:
    """Judge ``regime`` against claim ``obj`` (None: the pseudo-claim invalid-parameters).

    A failure at T counts only if the check fails again at REPLAY_FACTOR * T (a counterexample must replay
    to the same conclusion at a longer horizon); otherwise it is discarded as not replayed.
    """
    if obj is None:
        return _judge_invalid(regime)
    setting = regime.setting()
    if not all(p(setting) for p in preds):
        return Judgement("outside_hypotheses", "outside the claim's hypotheses")
    try:
        out, ferr = _guarded_check(obj, setting, regime.steps)
    except Exception as exc:  # a crash of the check is a bug to report, never a verdict on the claim
        return Judgement("crash", f"the check raised {type(exc).__name__}: {exc}", regime.run_command(),
                         trace=traceback.format_exc(limit=4))
    if ferr:
        return Judgement("float_errors", ferr)
    if getattr(out, "data", {}).get("in_hypotheses") is False:
        return Judgement("outside_hypotheses", out.detail, out.replay)
    if out.holds is None:
        return Judgement("undecided", out.detail, out.replay)
    if bool(out.holds):
        return Judgement("holds", out.detail, out.replay)
    horizon = REPLAY_FACTOR * regime.steps
    try:
        out2, ferr2 = _guarded_check(obj, setting, horizon)
    except Exception as exc:
        return Judgement("crash", f"the check raised {type(exc).__name__}: {exc} at the replay horizon {horizon}",
                         regime.with_steps(horizon).run_command(), trace=traceback.format_exc(limit=4))
    again = None if ferr2 else _decided(out2)
    check = {"horizon": horizon, "holds": again, "detail": ferr2 or out2.detail}
    if again is False:
        return Judgement("fails", out.detail, out.replay, check, data=dict(getattr(out, "data", {})))
    return Judgement("not_replayed", out.detail, out.replay, check)


def _judge_invalid(regime: Regime) -> Judgement:
    def attempt():
        try:
            regime.setting()
        except InvalidParameter:
            return None
        except Exception as exc:  # any other exception is the bug being looked for
            return f"raised {type(exc).__name__}, not InvalidParameter: {exc}"
        return f"accepted although it breaks: {regime.broken}"

    bad = attempt()
    if bad is None:
        return Judgement("holds", f"InvalidParameter ({regime.broken})")
    # deterministic construction: replaying is building the setting once more
    again = attempt()
    return Judgement("fails" if again else "not_replayed", bad, regime.run_command(),
                     {"horizon": 1, "holds": False if again else True, "detail": again or "built once more: accepted"})


# ----- scopes of what was checked ----------------------------------------------------------------------
_CONVENTIONS = ("law", "law_mean", "law_var", "loss", "p_kind", "p_lambda", "init", "init_scale", "noise_sd")


def _conventions(s) -> dict:
    cfg = s.config()
    out = {k: str(cfg[k]) for k in _CONVENTIONS}
    out["eta_kq/eta"] = str(s.eta_kq / s.eta_v)
    out["W_P"] = "trainable" if s.wp_trainable else "frozen"
    return out


def regimes_scope(regimes: list[Regime]) -> Scope:
    """The scope a set of checked regimes covers: ranges of the dimensions, the sigmas, the convention values
    seen (as "option=v1|v2"), the longest horizon. Scope.label reads "checked at dimensions {...}"."""
    if not regimes:
        return Scope(dims=("none checked",), sigma=("none",), conventions=("none",), horizon=0)
    ss = [r.setting() for r in regimes]
    if len(ss) == 1:
        s = ss[0]
        dims = (f"{s.preset or 'supports'} D={s.D} K={s.K} N={s.N} M={s.M} d={s.d}",)
    else:
        def rng(name):
            vals = [getattr(s, name) for s in ss]
            return f"{name} {min(vals)}..{max(vals)}"
        dims = (", ".join(rng(n) for n in ("D", "K", "N", "M", "d")) + f" ({len(ss)} sampled regimes)",)
    seen: dict = {}
    for s in ss:
        for k, v in _conventions(s).items():
            seen.setdefault(k, set()).add(v)
    x = [float(s.eta_v * s.loss_scale * s.law.var * s.N) for s in ss]
    convs = tuple(f"{k}={'|'.join(sorted(v))}" for k, v in seen.items())
    convs += (f"eta c_L v N in [{min(x):.4g}, {max(x):.4g}]",)
    return Scope(dims=dims, sigma=tuple(sorted({s.sigma.spec() for s in ss})), conventions=convs,
                 horizon=max(r.steps for r in regimes))


def invalid_scope(regimes: list[Regime]) -> Scope:
    """The scope of invalid inputs checked: the rules broken (one per regime); no GD step is run."""
    rules = tuple(sorted({r.broken for r in regimes})) or ("none checked",)
    return Scope(dims=(f"invalid inputs ({len(regimes)} regimes, one rule broken each)",), sigma=("identity",),
                 conventions=tuple(f"broken: {r}" for r in rules), horizon=0)


THRESHOLD = {"value": MAX_DISCARDED,
             "why": "each regime is decided by the claim's own regime_check (its tolerances); a failure counts only "
                    f"if it fails again at {REPLAY_FACTOR}x the horizon; the search confirms only if at most half of "
                    "the generated examples were discarded (beyond that it has mostly not tested the claim)"}


# ----- the search ----------------------------------------------------------------------------------
def _hypothesis_invalid_counts(stats: dict) -> int | None:
    """Test cases Hypothesis marked invalid or overrun before any failure (generate and target phases)."""
    try:
        n = 0
        for phase in ("generate-phase", "target-phase"):
            for tc in stats.get(phase, {}).get("test-cases", []):
                n += tc.get("status") in ("invalid", "overrun")
        return n
    except (AttributeError, TypeError):
        return None


def _replayed(store, obj, preds) -> tuple[list, int]:
    """The database regimes that still fail or crash, as (regime, judgement) pairs, and how many were cleared:
    a saved regime that no longer fails (or is no longer valid) is deleted, so the database holds open cases."""
    replayed, cleared = [], 0
    for entry in store.load() if store else ():
        reg = Regime.from_dict(entry["regime"])
        try:
            j = judge(obj, reg, preds)
        except InvalidParameter:
            j = Judgement("outside_hypotheses", "no longer a valid regime")
        if j.status in ("fails", "crash"):
            replayed.append((reg, j))
        else:
            with contextlib.suppress(OSError):      # a read-only database keeps it: replayed again next time
                store.delete(entry["regime"])
            cleared += 1
    return replayed, cleared


@dataclass
class Search:
    """What one Hypothesis search saw: counts by judgement status and discard reason, the first example of
    each discard reason, the regimes that held (for the scope), the failure it stopped at (shrunk)."""

    counts: dict = field(default_factory=lambda: {r: 0 for r in DISCARD_REASONS} | {"holds": 0, "fails": 0,
                                                                                       "crash": 0})
    first: dict = field(default_factory=dict)
    checked: list = field(default_factory=list)
    failure: tuple | None = None  # the first failure: counting stops there (later calls are shrinking)
    shrunk: dict = field(default_factory=dict)   # "fails" / "crash": the last (regime, judgement) of that kind
    shrink_calls: int = 0
    slowest: float = 0.0
    tick: object = None           # progress: called as tick(examples judged, shrinking) after each example

    def property_of(self, obj, preds):
        """The property Hypothesis tests: judges a regime, counts it (until the first failure; later calls
        are shrinking), raises on a failure and rejects (``assume``) every discarded example."""
        def prop(regime):
            t = time.perf_counter()
            try:
                j = judge(obj, regime, preds)
            except InvalidParameter as exc:
                raise RuntimeError(f"the strategy drew an invalid regime {regime.as_dict()}: {exc}") from None
            self.slowest = max(self.slowest, time.perf_counter() - t)
            if self.failure is None:
                self.counts[j.status] += 1
                if j.status == "holds":
                    self.checked.append(regime)
                elif j.status not in ("fails", "crash"):
                    self.first.setdefault(j.status, {"regime": regime.as_dict(), "detail": j.detail}
                                          | ({"replay_check": j.replay_check} if j.replay_check else {}))
            else:
                self.shrink_calls += 1
            if self.tick is not None:
                self.tick(sum(self.counts.values()), self.failure is not None)
            if j.status in ("fails", "crash"):
                # kept by kind: a crash met while shrinking a counterexample must not replace it (Hypothesis
                # shrinks towards whichever it finds simpler), and the crash is reported beside it
                self.failure = self.failure or (regime, j)
                self.shrunk[j.status] = (regime, j)
                raise (Falsified if j.status == "fails" else Crashed)(j.detail)
            if j.status != "holds":
                assume(False)
        return prop


def _searched(obj, strat, preds, examples: int, seed: int, cid: str, tick=None) -> Search:
    """Run the Hypothesis search under ``seed`` (generate, target, shrink; no Hypothesis database: ours is
    verify.fuzz.store) and return what it saw, with Hypothesis's own rejections counted as a discard reason.
    ``tick(judged, shrinking)`` is called after each example (progress)."""
    search = Search(tick=tick)
    cfg = settings(max_examples=examples, database=None, deadline=None, derandomize=False, print_blob=False,
                   report_multiple_bugs=False, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                   phases=(Phase.generate, Phase.target, Phase.shrink))
    test = hyp_seed(seed)(cfg(given(strat)(search.property_of(obj, preds))))
    stats: list = []
    try:
        if collector is not None:
            with collector.with_value(stats.append):
                test()
        else:  # pragma: no cover
            test()
    except (Falsified, Crashed):
        pass
    except Unsatisfiable:
        pass   # every generated example was discarded: counted below, and the verdict says so
    except HypothesisException as exc:
        raise RuntimeError(f"fuzzing {cid} failed inside Hypothesis: {exc}") from exc
    ours = sum(search.counts[r] for r in DISCARD_REASONS if r != "hypothesis_filter")
    inv = _hypothesis_invalid_counts(stats[0]) if stats else None
    search.counts["hypothesis_filter"] = max(0, inv - ours) if inv is not None else 0
    return search


def _search_evidence(search: Search, scope_of, seed: int, rerun: str, new_fail, replay_fail, crash) -> list:
    """The evidence records of a search: the search itself when it found nothing ("failed" when more than
    MAX_DISCARDED of the examples were discarded), each counterexample (new or replayed), a crash of the check,
    and the first failure that did not replay at the longer horizon."""
    counts, ev = search.counts, []
    discards = {r: counts[r] for r in DISCARD_REASONS}
    n_disc = sum(discards.values())
    generated = counts["holds"] + counts["fails"] + counts["crash"] + n_disc
    frac = n_disc / generated if generated else 1.0
    if search.failure is None:      # the search itself found nothing: what it checked, and what it discarded
        disc_text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in discards.items() if v) or "none"
        text = (f"no counterexample in {counts['holds']} checked regimes (seed {seed}); {n_disc} of {generated} "
                f"generated examples discarded ({disc_text})")
        if frac > MAX_DISCARDED or counts["holds"] == 0:
            ev.append(record(f"Hypothesis search (seed {seed})", "float64", scope_of(search.checked),
                             text + f": more than {MAX_DISCARDED:.0%} discarded, so the search did not test the claim",
                             None, role="failed", threshold=THRESHOLD, rerun=rerun))
        else:
            ev.append(record(f"Hypothesis search (seed {seed})", "float64", scope_of(search.checked), text, True,
                             threshold=THRESHOLD, rerun=rerun))
    for origin, pair in (("new", new_fail), ("replayed", replay_fail)):
        if pair is None:
            continue
        reg, j = pair
        ev.append(record(f"Hypothesis search (seed {seed}): counterexample" if origin == "new" else
                         "counterexample replayed from the database", "float64", scope_of([reg]), j.detail,
                         False, threshold=THRESHOLD, replay=j.replay or reg.run_command(), replay_check=j.replay_check,
                         regime=reg.as_dict(), replayed=origin == "replayed"))
    if crash is not None:
        reg, j = crash
        ev.append(record(f"Hypothesis search (seed {seed}): the check crashed", "float64", scope_of([reg]),
                         j.detail, None, role="failed", regime=reg.as_dict(), trace=j.trace))
    if "not_replayed" in search.first:
        nr = search.first["not_replayed"]
        reg = Regime.from_dict(nr["regime"])
        ev.append(record("a failure that did not replay at the longer horizon", "float64", scope_of([reg]),
                         nr["detail"], False, threshold=THRESHOLD, replay=reg.run_command(),
                         replay_check=nr["replay_check"], regime=nr["regime"]))
    return ev


def fuzz(claim, examples: int = DEFAULT_EXAMPLES, seed: int | None = None, database=DEFAULT_DB,
         strategy=None, progress=None) -> dict:
    """Search for a regime that falsifies ``claim`` (an id or a claim object); the result dict (module
    docstring): verdict, evidence, counterexample (with "replayed"), discards by reason, seed, database.
    ``database=None`` keeps nothing between runs; ``seed=None`` draws a seed and records it. ``progress(judged,
    shrinking)`` is called after each example judged (the count includes discarded ones)."""
    examples = check_int("examples", examples, 1, 100_000)
    seed_drawn = seed is None
    seed = secrets.randbelow(MAX_SEED + 1) if seed is None else check_int("seed", seed, 0, MAX_SEED)
    obj = resolve(claim)
    cid = INVALID_CLAIM if obj is None else obj.id
    preds = [] if obj is None else hypotheses_of(obj)
    store = None if database is None else CounterexampleStore(database, cid)
    t0 = time.perf_counter()
    replayed, cleared = _replayed(store, obj, preds)
    search = _searched(obj, strategy if strategy is not None else strategy_for(obj), preds, examples, seed, cid,
                       progress)
    new_fail, crash = search.shrunk.get("fails"), search.shrunk.get("crash")
    found = new_fail or crash
    save_error = None
    if found is not None and store is not None:
        try:
            store.save(found[0].as_dict(), seed=seed, detail=found[1].detail, status=found[1].status,
                       found=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        except OSError as exc:      # the failure is still reported (its regime and replay) and says it was not saved
            save_error = f"could not be saved to {store.path}: {exc.strerror or exc}"
    rerun = f"verify fuzz --claim {cid} --seed {seed} --examples {examples}" + (" --no-db" if store is None else "")
    if crash is None:
        crash = next(((r, j) for r, j in replayed if j.status == "crash"), None)
    replay_fail = next(((r, j) for r, j in replayed if j.status == "fails"), None)
    ev = _search_evidence(search, invalid_scope if obj is None else regimes_scope, seed, rerun, new_fail,
                          replay_fail, crash)
    dec = decide(ev, Scope())
    show = new_fail or replay_fail
    discards = {r: search.counts[r] for r in DISCARD_REASONS}
    n_disc = sum(discards.values())
    generated = search.counts["holds"] + search.counts["fails"] + search.counts["crash"] + n_disc
    hyps = [hypothesis(h) for h in getattr(obj, "hypotheses", ())] if obj is not None else []
    return {"claim": cid, "verdict": dec.verdict, "decision": dec.as_dict(), "evidence": ev,
            "falsified": show is not None,
            "replayed": None if show is None else show is not new_fail,
            "counterexample": show[0].as_dict() if show else None,
            "replay": (show[1].replay or show[0].run_command()) if show else None,
            "replay_check": show[1].replay_check if show else None,
            "detail": show[1].detail if show else (crash[1].detail if crash else ev[0]["result"]),
            "crash": None if crash is None else {"regime": crash[0].as_dict(), "detail": crash[1].detail,
                                                 "trace": crash[1].trace},
            "examples": search.counts["holds"], "max_examples": examples, "generated": generated,
            "discarded": discards, "discarded_total": n_disc,
            "discarded_fraction": round(n_disc / generated if generated else 1.0, 4),
            "max_discarded_fraction": MAX_DISCARDED, "first_discarded": search.first,
            "shrink_calls": search.shrink_calls,
            "seed": seed, "seed_drawn": seed_drawn, "rerun": rerun,
            "database": {"path": None if store is None else str(store.path), "loaded": len(replayed) + cleared,
                         "still_failing": len(replayed), "cleared": cleared,
                         "saved": found is not None and store is not None and save_error is None,
                         "save_error": save_error},
            "strategy": _describe(strategy, obj),
            "hypotheses": [h.text for h in hyps], "hypothesis_ids": [h.id for h in hyps],
            "seconds": round(time.perf_counter() - t0, 3), "slowest_example_seconds": round(search.slowest, 4)}


def _describe(strategy, obj) -> dict | str:
    if strategy is not None:
        return repr(strategy)[:300]
    if obj is None:
        return {"kind": "invalid regimes", "breaks": "verify.fuzz.strategies.BREAKS"}
    long = bool(getattr(obj, "long_horizon", False))
    return {"kind": "valid regimes inside the claim's hypotheses", "D": [1, MAX_D],
            "steps": [1, MAX_STEPS if long else FULL_MAX_STEPS],
            "long_horizon": "half the regimes: reducible, eta c_L v N < 2K" if long else "no (the check runs the full engine)"}


__all__ = ["fuzz", "judge", "Judgement", "claim_ids", "resolve", "strategy_for", "hypotheses_of", "regimes_scope",
           "Falsified", "Crashed", "DEFAULT_EXAMPLES", "INVALID_CLAIM", "MAX_DISCARDED", "DISCARD_REASONS",
           "REPLAY_FACTOR", "THRESHOLD"]
