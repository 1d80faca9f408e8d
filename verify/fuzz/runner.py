"""Property-based search for counterexamples to a claim, over valid regimes (or invalid inputs).

``fuzz(claim)`` runs Hypothesis over :func:`verify.fuzz.strategies.valid_regimes`; each example builds
the Setting and asks the claim ``regime_check(setting, steps)``. The first failing regime is shrunk by
Hypothesis to a minimal one, which is reported with the claim's own replay command. Failing examples
persist in a DirectoryBasedExampleDatabase (one folder per claim under ``fuzz-db/``), so the next run
tries them first. The pseudo-claim ``invalid-parameters`` checks that every invalid regime raises
InvalidParameter (and nothing else).

Reproducibility: ``seed=S`` applies ``hypothesis.seed(S)``, so the same seed draws the same examples
(Hypothesis then neither reads nor writes the example database); without a seed the search is random
and failing examples are saved to, and replayed from, the database.
"""
from __future__ import annotations

import time
import traceback
import warnings
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, seed as hyp_seed, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import HypothesisException

from ..errors import InvalidParameter
from ..model.validation import check_int
from .strategies import invalid_regimes, valid_regimes

DEFAULT_EXAMPLES = 100
INVALID_CLAIM = "invalid-parameters"
# The example database lives at the project root (next to pyproject.toml), not in the working directory.
DEFAULT_DB = Path(__file__).resolve().parents[2] / "fuzz-db"


# Each hypothesis text a claim may declare (lemmas.Claim.hypotheses), as a predicate on (setting, steps).
# A claim is fuzzed only over regimes where all its declared hypotheses hold; an undeclared condition
# is not assumed, so a claim whose hypotheses are incomplete can be falsified (that is a finding).
HYPOTHESIS_PREDICATES = {
    "zero initialisation": lambda s: s.init == "zero",
    "centred entries": lambda s: s.law.mean == 0,
    "centred entries (law mean 0)": lambda s: s.law.mean == 0,
    "sigma = identity": lambda s: s.sigma.name == "identity",
    "sigma = identity (or M = 1)": lambda s: s.sigma.name == "identity" or s.M == 1,
    "sigma odd (identity, erf, odd polynomial)": lambda s: s.sigma.odd,
    "W_P = 0 (odd sigma or W_P frozen)": lambda s: s.sigma.odd or not s.wp_trainable,
    "W_P = 0 (odd sigma or frozen)": lambda s: s.sigma.odd or not s.wp_trainable,
    "eta_V c_L v N <= 1": lambda s: s.eta_v * s.loss_scale * s.law.var * s.N <= 1,
    "eta_V below the W_X-block stability threshold 2K/(c_L v N)":
        lambda s: s.eta_v * s.loss_scale * s.law.var * s.N < 2 * s.K,
    "eta_V = eta_KQ = eta": lambda s: s.eta_v == s.eta_kq,
    "0 < K <= D": lambda s: 0 < s.K <= s.D,
    "0 < K < D": lambda s: 0 < s.K < s.D,
    "P^T P = lambda I": lambda s: s.p_structure == "orthogonal",
    "S* with uniform weights 1/K": lambda s: s.sstar_weights is None,
}


def hypotheses_of(obj) -> list:
    """Predicates (setting -> bool) of a claim's hypotheses.

    Preferred: the claim's own machine-readable ``conditions`` (names in lemmas._common.CONDITIONS,
    checked by lemmas._common.within), the catalogue's single source of truth. Otherwise the declared
    hypothesis texts, through HYPOTHESIS_PREDICATES; an unknown text is an error, never dropped.
    """
    conds = tuple(getattr(obj, "conditions", ()) or ())
    if conds:
        from lemmas._common import within
        return [lambda s, c=conds: within(s, c)[0]]
    hyps = tuple(getattr(obj, "hypotheses", ()) or ())
    unknown = [h for h in hyps if h not in HYPOTHESIS_PREDICATES]
    if unknown:
        raise InvalidParameter("claim", getattr(obj, "id", obj),
                               f"declares hypotheses the fuzzer cannot express: {unknown}; add them to "
                               "verify.fuzz.runner.HYPOTHESIS_PREDICATES")
    return [HYPOTHESIS_PREDICATES[h] for h in hyps]


class Falsified(AssertionError):
    """Raised inside the property when a regime violates the claim."""


def claim_ids() -> list[str]:
    """Ids of the claims that can be fuzzed: per-regime claims of lemmas.REGISTRY, plus the pseudo-claim."""
    try:
        from lemmas import REGISTRY
    except ImportError:
        REGISTRY = {}
    return sorted(k for k, c in REGISTRY.items() if getattr(c, "per_regime", True)) + [INVALID_CLAIM]


def resolve(claim):
    """A claim object (anything with ``id`` and ``regime_check``) from an id or the object itself."""
    if not isinstance(claim, str):
        return claim
    if claim == INVALID_CLAIM:
        return None
    try:
        from lemmas import REGISTRY
    except ImportError as exc:
        raise InvalidParameter("claim", claim, f"the claims catalogue lemmas/ is not importable ({exc})") from None
    if claim not in REGISTRY or not getattr(REGISTRY[claim], "per_regime", True):
        raise InvalidParameter("claim", claim, f"must be one of {', '.join(claim_ids())}")
    return REGISTRY[claim]


def fuzz(claim, examples: int = DEFAULT_EXAMPLES, seed: int | None = None, database=DEFAULT_DB,
         strategy=None) -> dict:
    """Search for a regime that falsifies ``claim``; return {"claim", "examples", "falsified",
    "counterexample", "replay", ...}. ``database=None`` keeps nothing between runs."""
    examples = check_int("examples", examples, 1, 100_000)
    if seed is not None:
        seed = check_int("seed", seed, 0)
    obj = resolve(claim)
    cid = INVALID_CLAIM if obj is None else obj.id
    strat = strategy if strategy is not None else (invalid_regimes() if obj is None else valid_regimes())
    # examples: checked regimes (inside the hypotheses, evaluable in float64); generated counts every call,
    # shrinking included.
    preds = [] if obj is None else hypotheses_of(obj)
    calls = {"n": 0, "outside": 0, "float_errors": 0}
    failure: dict = {}
    first_float_error: dict = {}

    def prop(regime):
        calls["n"] += 1
        if obj is None:
            try:
                regime.setting()
            except InvalidParameter:
                return
            except Exception as exc:  # any other exception is the bug being looked for
                failure.update(regime=regime, detail=f"raised {type(exc).__name__}, not InvalidParameter: {exc}",
                               replay=regime.run_command())
                raise Falsified(failure["detail"]) from None
            failure.update(regime=regime, detail=f"accepted although it breaks: {regime.broken}",
                           replay=regime.run_command())
            raise Falsified(failure["detail"])
        setting = regime.setting()
        if not all(p(setting) for p in preds):
            calls["outside"] += 1
            assume(False)
        try:
            # Overflow (GD diverged in float64) or an invalid operation (e.g. sqrt of a rounding-negative
            # argument): the claim cannot be evaluated there. Such examples are discarded, counted in
            # "float_errors" with the first one reported, and never counted as support.
            with np.errstate(over="raise", invalid="raise", divide="raise"), warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                out = obj.regime_check(setting, regime.steps)
        except (OverflowError, FloatingPointError, RuntimeWarning) as exc:
            calls["float_errors"] += 1
            first_float_error.setdefault("regime", regime.as_dict())
            first_float_error.setdefault("error", f"{type(exc).__name__}: {exc}")
            assume(False)
        except Exception as exc:
            failure.update(regime=regime, detail=f"error: {type(exc).__name__}: {exc}",
                           trace=traceback.format_exc(limit=3), replay=regime.run_command())
            raise Falsified(failure["detail"]) from None
        if getattr(out, "data", {}).get("in_hypotheses") is False:
            # the claim itself says the regime is outside its hypotheses: information, not a counterexample
            calls["outside"] += 1
            assume(False)
        if not out.holds:
            failure.update(regime=regime, detail=out.detail, replay=out.replay)
            raise Falsified(out.detail)

    db = None if database is None else DirectoryBasedExampleDatabase(str(Path(database) / cid))
    cfg = settings(max_examples=examples, database=db, deadline=None, derandomize=False, print_blob=False,
                   report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
                   phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink))
    test = cfg(given(strat)(prop))
    if seed is not None:
        test = hyp_seed(seed)(test)
    t0 = time.perf_counter()
    try:
        test()
        falsified = False
    except Falsified:
        falsified = True
    except HypothesisException as exc:
        raise RuntimeError(f"fuzzing {cid} failed inside Hypothesis: {exc}") from exc
    out = {"claim": cid, "examples": calls["n"] - calls["outside"] - calls["float_errors"], "falsified": falsified,
           "counterexample": failure["regime"].as_dict() if falsified else None,
           "replay": failure.get("replay") if falsified else None,
           "detail": failure.get("detail") if falsified else f"no counterexample in {calls['n']} examples",
           "seed": seed, "max_examples": examples, "database": None if db is None or seed is not None else str(Path(database) / cid),
           "seconds": round(time.perf_counter() - t0, 3),
           "generated": calls["n"], "outside_hypotheses": calls["outside"], "float_errors": calls["float_errors"],
           "hypotheses": list(getattr(obj, "hypotheses", ()) or ()) if obj is not None else [],
           "first_float_error": first_float_error or None}
    if falsified and "trace" in failure:
        out["trace"] = failure["trace"]
    return out
