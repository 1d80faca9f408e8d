"""Text helpers of the report: a long text cut to a length at a word boundary."""
from __future__ import annotations


def short(text: str, n: int = 240) -> str:
    """``text`` in at most ``n`` characters, cut at a word boundary (never mid-word) and marked with "…"."""
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:") + "…"


__all__ = ["short"]
