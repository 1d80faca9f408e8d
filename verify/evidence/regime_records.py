"""Evidence records for the checks: scopes of regimes and proofs, and per-regime checks as records.

Every record is made by :func:`verify.evidence.record`; this module only says what scope a regime or a proof
covers, and turns a :class:`verify.evidence.RegimeOutcome` into a record (with the 10x-horizon replay of a
counterexample). Shared by the claims (lemmas/) and the probes.
"""
from __future__ import annotations

import numpy as np

from ..model.setting import conventions_of
from .comparisons import compare
from .recording import REPLAY_FACTOR, record
from .regime_outcome import RegimeOutcome
from .regime_runs import replay_run
from .scope import ALL, Scope, dims_of


def regime_scope(setting, steps: int) -> Scope:
    """The scope one run covers: its dimensions, sigma, conventions, and t <= steps."""
    return Scope(dims=(dims_of(setting),), sigma=(setting.sigma.spec(),), conventions=(conventions_of(setting),),
                 horizon=int(steps))


def runs_scope(settings, horizon: int) -> dict:
    """What a statement about "the regimes run, over t <= H" speaks of (verify.checks.Evaluation.scopes): per sigma
    and convention of the settings, their dimensions, and the horizon H; the first group in the scope's own fields,
    the others in ``also`` (the runs are a union, not a product of sizes and sigmas)."""
    groups = {}
    for s in settings:
        groups.setdefault((s.sigma.spec(), conventions_of(s)), []).append(dims_of(s))
    parts = [Scope(dims=tuple(dict.fromkeys(dims)), sigma=(sig,), conventions=(conv,), horizon=int(horizon))
             for (sig, conv), dims in groups.items()]
    first = parts[0]
    return {"dims": first.dims, "sigma": first.sigma, "conventions": first.conventions, "horizon": first.horizon,
            "also": tuple(parts[1:])}


def conventions_in(settings) -> tuple:
    """The convention labels of ``settings`` (verify.model.setting.conventions_of), each once, in order: what a
    record's scope says of the runs it covers."""
    return tuple(dict.fromkeys(conventions_of(s) for s in settings))


def proof_dims(dims: dict):
    """"all" when a proof's dimensions are symbolic (no integer among M, d, D, N, K), else the label of
    the explicit sizes it was checked at (a ProofReport's ``dims``)."""
    keys = [k for k in ("M", "d", "D", "N", "K") if k in dims]
    if all(not isinstance(dims[k], int) for k in keys):
        return ALL
    return (" ".join(f"{k}={dims[k]}" for k in keys),)


def proof_scope(dims: dict, sigma, assumes=()) -> Scope:
    """Scope of a symbolic derivation: its dimensions (see :func:`proof_dims`), sigma, every convention and t, and
    the hypotheses it assumes (ids of verify.model.hypotheses: what restricts it, rather than a convention label)."""
    sig = sigma if isinstance(sigma, tuple) else (sigma,)
    return Scope(dims=proof_dims(dims), sigma=sig, conventions=ALL, horizon=ALL, assumes=tuple(assumes))


def bounded_series_outcome(x, setting, steps: int, quantity: str, key: str, tol: float, threshold: dict):
    """The outcome of "``x[t] <= tol`` for t = 0..steps" for a float64 series ``x`` measured by the full-matrix
    engine: undecided from the first non-finite value (a NaN or an overflow never holds), else holds or fails
    at the largest value, with a replay command up to the step that decides."""
    bad = np.nonzero(~np.isfinite(x))[0]
    if len(bad):
        t = int(bad[0])
        return RegimeOutcome(None, f"{quantity} is not finite from t = {t} (float64): undecided",
                             replay_run(setting, t, "full"), {"at": t}, threshold=threshold)
    at = int(np.argmax(x))
    holds = compare(x, "<=", tol)
    return RegimeOutcome(holds, f"max {quantity} = {x[at]:.3e}" + ("" if holds else f" at t = {at}"),
                         replay_run(setting, steps if holds else at, "full"), {key: float(x[at]), "at": at},
                         threshold=threshold)


def obligations_text(obligations) -> str:
    return "; ".join(f"{o.name}: {'proved' if o.holds is True else 'disproved' if o.holds is False else 'open'}"
                     for o in obligations)


def prerequisite(route: str, kind: str, scope: Scope, result: str, ok: bool | None, **data) -> dict:
    """A step other routes rely on (a closed form, a reduction, a derived threshold): informative
    ("context") when it holds, a failed measurement when it does not (the verdict is then at most
    inconclusive: the routes that use it are not backed)."""
    if isinstance(ok, np.bool_):
        ok = bool(ok)
    if ok is True:
        return record(route, kind, scope, result, None, role="context", prerequisite=True, **data)
    return record(route, kind, scope, result + " [NOT established: the routes relying on it are not backed]", None,
                  role="failed", prerequisite=True, **data)


def replay_check(run, setting, steps: int) -> dict:
    """A failed per-regime check re-run at ``REPLAY_FACTOR`` x the horizon (``run``: a claim's regime_check):
    {"horizon", "holds", "same_conclusion", "status", "detail", "replay"}. ``holds`` is False only when the
    longer run fails again inside the hypotheses (the same conclusion), so only then does the counterexample
    refute (verify.evidence.decide); a longer run that holds, is undecided or falls outside is no replay."""
    longer = run(setting, REPLAY_FACTOR * steps)
    same = longer.holds is False and longer.data.get("in_hypotheses", True) is not False
    return {"horizon": REPLAY_FACTOR * steps, "holds": False if same else (None if longer.holds is False else longer.holds),
            "same_conclusion": same, "status": longer.status, "detail": longer.detail, "replay": longer.replay}


def outcome_record(check, setting, steps: int, route: str, out=None, **data) -> dict:
    """One per-regime check as an evidence record: ``check`` is a claim (its ``regime_check``) or a
    function (setting, steps) -> RegimeOutcome.

    Inside the claim's hypotheses the record tests the statement (role "test"); outside them it
    reports what it found (role "outside", never decides). A counterexample (holds False, inside) is
    re-run at ``REPLAY_FACTOR`` x the horizon and recorded in ``replay_check``: only one that replays to
    the same conclusion refutes (verify.evidence.decide)."""
    run = getattr(check, "regime_check", check)
    out = run(setting, steps) if out is None else out
    inside = out.data.get("in_hypotheses", True) is not False
    role = "test" if inside else "outside"
    extra = {}
    if out.holds is False and inside:
        rc = replay_check(run, setting, steps)
        extra["replay_check"] = {k: rc[k] for k in ("horizon", "holds", "detail", "replay")}
    kw = {}
    if out.threshold is not None:
        kw["threshold"] = out.threshold
    if out.replay:
        kw["replay"] = out.replay
    if not inside:
        data = data | {"outside": out.data.get("outside", "")}
    return record(route, out.kind, regime_scope(setting, steps), out.detail, out.holds, role=role, **kw, **extra,
                  **data)

