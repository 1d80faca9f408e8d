"""The report's first sentence: what holds, what fails, and the main finding, read from results.json by key.

What holds and what fails come from the paper's claim parts as decided again by the report (their verdicts and
whether exact or rigorous records establish the whole statement or a finite part of it:
verify.evidence.Decision.extent). The main finding comes from Theorem 3.1's numbers (the D-exponents of the
derived leading terms against the claimed orders, N fixed) and the reconciliation's representative member (the
conventions under which the claimed D-dependence holds). A clause whose numbers are missing is left out.
"""
from __future__ import annotations

from fractions import Fraction

from .numbers import MissingNumber, field, number


def _ids(sts: list[dict]) -> str:
    return ", ".join(f"`{s['id']}`" for s in sts)


def _n(n: int, singular: str, plural: str) -> str:
    """"none is", "1 is", "3 are": a count with its verb."""
    return f"none {singular}" if n == 0 else f"{n} {singular if n == 1 else plural}"


def holds_and_fails(claims: list[dict]) -> str:
    """"of the paper's N claim parts, A are established over the whole statement (...), B only on a finite part of
    what they quantify over (...), ..." from the claim parts' verdicts and extents."""
    whole = [s for s in claims if s.get("extent") == "whole"]
    part = [s for s in claims if s.get("extent") == "part"]
    numeric = [s for s in claims if s["verdict"] == "supported" and s.get("extent") != "part"]
    refuted = [s for s in claims if s["verdict"] == "refuted"]
    open_ = [s for s in claims if s["verdict"] in ("inconclusive", "not checked")]
    out = [f"of the paper's {len(claims)} claim parts, {_n(len(whole), 'is', 'are')} established over the whole "
           "statement" + (f" ({_ids(whole)})" if whole else ""),
           f"{_n(len(part), 'is', 'are')} established only on a finite part of what it quantifies over, so supported"
           + (f" ({_ids(part)})" if part else "")]
    if numeric:
        out.append(f"{_n(len(numeric), 'rests', 'rest')} on numerics or a formal expansion alone ({_ids(numeric)})")
    out.append(f"{_n(len(refuted), 'is', 'are')} refuted" + (f" ({_ids(refuted)})" if refuted else ""))
    if open_:
        out.append(f"{_n(len(open_), 'is', 'are')} undecided ({_ids(open_)})")
    return ", ".join(out[:-1]) + " and " + out[-1]


def _power(e: Fraction) -> str:
    return f"D^{e}" if e.denominator == 1 else f"D^({e})"


def main_finding(results: dict) -> str:
    """"under the reference convention the claimed D-dependence is off by D^-4, D^-2 and D^(-3/2) with N fixed;
    only conventions such as N ∝ D^1, ... make it hold"."""
    lead = number(results, "claim", "theorem-3.1", "d_exponents")
    claimed = number(results, "claim", "theorem-3.1", "claimed_d_exponents")
    qs = list(lead)
    key = next((k for k in lead[qs[0]] if "N fixed" in k), None)
    if key is None:
        raise MissingNumber("claim theorem-3.1: numbers['d_exponents'][...'N fixed']")
    off = [_power(Fraction(lead[q][key]) - Fraction(claimed[q])) for q in qs]
    text = (f"under the reference convention Theorem 3.1's claimed D-dependence is off by {', '.join(off[:-1])} and "
            f"{off[-1]} (L - L_opt, ||S - S*||_F, ||W_X - V*||_F, with N fixed)")
    try:
        rep = field(results, "reconcile", "representative")
        parts = rep["text"].split(", ")
        moved = [t for t, e in zip(parts, rep["exponents"].values()) if Fraction(e["exponent"]) != 0]
        if len(parts) == len(rep["exponents"]) and moved:
            text += f"; only conventions such as {', '.join(moved)} make it hold"
    except (MissingNumber, KeyError, TypeError, ValueError):
        pass
    return text


def first_sentence(results: dict) -> str:
    """The report's opening sentence (module docstring)."""
    claims = [s for s in results.get("statements") or [] if s.get("role") == "claim"]
    text = holds_and_fails(claims) if claims else "no claim part of the paper was judged"
    try:
        text += f"; the main finding: {main_finding(results)}"
    except (MissingNumber, KeyError, TypeError, ValueError, StopIteration):
        pass
    return "In short: " + text + "."


__all__ = ["first_sentence", "holds_and_fails", "main_finding"]
