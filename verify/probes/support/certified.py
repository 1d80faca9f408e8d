"""Finite-horizon facts of the probes' full-matrix regimes, decided by the certified engine's Arb balls
(verify.evidence.ball_facts): L - L_opt falls at every step t <= H, and the secant exponents of Theorem 3.1's three
quantities over [H/2, H] lie within a stated distance of the claimed T-exponents.

A secant exponent log(q(H) / q(H/2)) / log 2 is not the tail exponent: it differs from it by the next-order
corrections of q at t ~ H, so the distance allowed (``SECANT_TOL``) is part of the statement, and the
horizon (per profile) is chosen where the float64 runs' secants are already well inside it.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from ...evidence.ball_facts import (BallFact, decide_margins, exact, fact_record, falls, interval, records_of,
                                  secant_exponent, show)

from ...model.paper import claimed_exponent
from .convention import judged_hypotheses
from ...model.quantities import KEYS

# |secant - claimed| < 1/10: it separates the claimed exponents from every neighbouring simple power (-1 from
# -1/2 and -3/2 by 0.5), and the float64 runs of the probes' regimes are within 0.07 of them from H = 600 on
SECANT_TOL = Fraction(1, 10)


@lru_cache(maxsize=None)
def claimed() -> dict:
    """Theorem 3.1's claimed T-exponent of each quantity, exactly (SymPy, verify.model.paper)."""
    return {q: Fraction(str(claimed_exponent(q, "T"))) for q in KEYS}


def loss_falls(run) -> BallFact:
    """"L - L_opt(t) < L - L_opt(t - 1) for every 1 <= t <= H" decided by the balls."""
    return decide_margins(falls(run, lambda o: o["record"].excess_loss))


def secants(run) -> dict | None:
    """The balls of the secant exponents of Theorem 3.1's quantities over [H/2, H] (None short of H)."""
    H = run.horizon
    if not run.reached or H // 2 not in run.seen or H // 2 < 1:
        return None
    return {q: secant_exponent(run, lambda o, q=q: getattr(o["record"], q), H // 2, H) for q in KEYS}


def secant_fact(run) -> BallFact:
    """"|secant exponent - claimed| < SECANT_TOL for every quantity" decided by the balls."""
    sec = secants(run)
    if sec is None:
        return BallFact(None, None, 0, 0)
    with run.precision():
        return decide_margins([(run.horizon, exact(SECANT_TOL) - abs(sec[q] - exact(claimed()[q]))) for q in KEYS])


def describe_falls(run, fact: BallFact) -> str:
    first, end = run.seen[0]["record"].excess_loss, run.seen[run.last]["record"].excess_loss
    head = (f"L - L_opt falls at every step t = 1..{run.last}" if fact.holds else
            f"L - L_opt rises at t = {fact.at}" if fact.holds is False else "the balls do not order L - L_opt")
    return f"{head}: {show(first)} at t = 0, {show(end)} at t = {run.last}"


def describe_secants(run, fact: BallFact) -> str:
    sec = secants(run)
    if sec is None:
        return f"the balls do not reach H = {run.horizon}: no secant exponent"
    return (f"secant exponents over [{run.horizon // 2}, {run.horizon}]: "
            + ", ".join(f"{q} {show(sec[q], 6)} (claimed {claimed()[q]})" for q in KEYS)
            + ("" if fact.holds else f"; not all within {SECANT_TOL} of the claimed"))


def tail_records(label: str, run, hypotheses, observe=records_of, replay: str | None = None) -> list[dict]:
    """The two finite-horizon tail facts of one certified run, as evidence records (kind "arb")."""
    H, bits = run.horizon, run.bits
    return [fact_record(f"{label}: L - L_opt falls at every step, t <= {H} (certified full engine, {bits} bits)",
                        run, loss_falls, describe_falls, hypotheses=judged_hypotheses(hypotheses), observe=observe, replay=replay,
                        bound="L(t) - L_opt < L(t - 1) - L_opt for 1 <= t <= H"),
            fact_record(f"{label}: secant exponents over [H/2, H], H = {H} (certified full engine, {bits} bits)", run,
                        secant_fact, describe_secants, hypotheses=judged_hypotheses(hypotheses), observe=observe, replay=replay,
                        bound=f"|log(q(H)/q(H/2))/log 2 - claimed T-exponent| < {SECANT_TOL} for L - L_opt, "
                              "||S - S*||_F, ||W_X - V*||_F")]


def secant_numbers(run) -> dict:
    """{quantity: [lower, upper]} of the secant exponents (floats rounded outward), or {} short of H."""
    sec = secants(run)
    return {} if sec is None else {q: interval(b) for q, b in sec.items()}


__all__ = ["SECANT_TOL", "claimed", "loss_falls", "secants", "secant_fact", "tail_records", "secant_numbers",
           "describe_falls", "describe_secants"]
