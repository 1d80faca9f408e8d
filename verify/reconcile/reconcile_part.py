"""The ``reconcile`` part of ``verify all``: the reconciliation under Theorem 3.1's claims at the profile's budget."""
from __future__ import annotations

from ..run import part
from .reconciliation import reconcile


def finding(res: dict) -> str:
    """One line: where the headline system is feasible (a member by name) or why not (its certificate)."""
    head = res["statements"][0]
    rep = res.get("representative")
    main = res["readings"][0]["systems"][-1]
    if main["feasible"] and rep:
        return f"{head['verdict']}: {main['text']} hold together at {rep['text']} ({rep['combinations_text']})"
    cert = main.get("certificate")
    return (f"{head['verdict']}: {main['text']} cannot hold together {res['family']['label']}"
            + (f" (certificate: {cert['sum']})" if cert else ""))


@part("reconcile", order=20, convention_why="it solves over the whole family of conventions (each scaled as a "
      "power of D) itself")
def reconcile_part(profile: str) -> dict:
    """Data for ``verify all``: the reconcile result with its headline verdict and statement."""
    res = reconcile(None, profile)
    head = res["statements"][0]
    return res | {k: head[k] for k in ("verdict", "scope_label", "reason", "statement", "scope", "evidence")} | {
        "finding": finding(res)}


__all__ = ["finding", "reconcile_part"]
