"""The report's reviewer-question table: one row per question of verify.model.paper.QUESTIONS.

A part answers question n when its saved result names it (a check's ``questions``; a fuzz part answers what
its claim answers), when it is the question's ``primary`` answer, or when the question lists it among its
``parts``. The row's verdict is the primary answer's statement (its headline unless the question names one),
decided again from its records; the other parts that answer it are linked with their verdicts. A question
no finished part answers reads "not checked".
"""
from __future__ import annotations

from ..model.paper import QUESTIONS, Question
from .kinds import kind_of
from .statements import NO_SCOPE, NOT_CHECKED, anchor


def named_questions(result) -> set[int]:
    """The question numbers a saved result names (a check's ``questions``)."""
    qs = result.get("questions") if isinstance(result, dict) else None
    return {q for q in qs if isinstance(q, int) and not isinstance(q, bool)} if isinstance(qs, list) else set()


def answers(q: Question, rec: dict, saved: dict) -> bool:
    """Whether the saved part ``rec`` answers ``q`` (module docstring); a fuzz part answers what its claim
    answers (``saved``: part name -> its saved result)."""
    name, result = kind_of(rec).answers_as(rec, saved)
    return name == q.primary or name in q.parts or q.number in named_questions(result)


def answering(q: Question, records: list[dict], saved: dict) -> list[dict]:
    """The parts that answer ``q``, the primary first, then in report order."""
    return sorted((r for r in records if answers(q, r, saved)), key=lambda r: r["part"] != q.primary)


def judged(q: Question, primary: dict | None, statements: dict) -> dict | None:
    """The statement that carries the row's verdict: the primary part's named statement, else its headline."""
    if primary is None:
        return None
    sts = statements.get(primary["part"]) or []
    return next((s for s in sts if q.statement and s["id"] == q.statement), sts[0] if sts else None)


def role_note(st: dict) -> str:
    """How a judged statement stands to the paper: a part of its claims, a control, or the toolkit's finding."""
    if st["role"] == "claim":
        return "the paper's claim"
    if st["role"] == "control":
        return "negative control"
    if st.get("relation") == "outside":
        return f"finding outside the hypotheses of {st['about']}" if st.get("about") else "finding outside the hypotheses"
    return f"finding, {st['relation']} {st['about']}" if st.get("relation") and st.get("about") else "the toolkit's finding"


def question_row(q: Question, records: list[dict], statements: dict, verdicts: dict, saved: dict) -> dict:
    """One row of the table (module docstring); ``statements``: part -> its statements (report shape);
    ``verdicts``: part -> its verdict; ``saved``: part name -> saved result."""
    hits = answering(q, records, saved)
    ok = [r for r in hits if r["status"] == "ok"]
    primary = next((r for r in ok if r["part"] == q.primary), ok[0] if ok else None)
    st = judged(q, primary, statements)
    row = {"number": q.number, "question": q.text, "verdict": NOT_CHECKED, "scope": NO_SCOPE, "statement": "",
           "role": None, "finding": "", "evidence": [{"part": r["part"], "verdict": verdicts[r["part"]], "anchor": anchor(r["part"]),
                        "file": f"parts/{r['file']}"} for r in hits]}
    if st is not None:
        others = [f"{r['part']} {verdicts[r['part']]}" for r in ok if r is not primary]
        row |= {"verdict": st["verdict"], "scope": st["short_scope"], "statement": st["text"], "role": role_note(st),
                "finding": f"{primary['part']}: {st['why']}" + (f" Also: {', '.join(others)}." if others else "")}
    elif hits:
        row["finding"] = "every part that answers it did not finish: " + "; ".join(
            f"{r['part']} ({r['status']})" for r in hits)
    else:
        row["finding"] = "no part of this run answers this question (not checked)"
    return row


def questions_table(records: list[dict], statements: dict, verdicts: dict) -> list[dict]:
    """The twelve rows, in the order of verify.model.paper.QUESTIONS."""
    saved = {r["part"]: r.get("result") or {} for r in records}
    return [question_row(q, records, statements, verdicts, saved) for q in QUESTIONS]


__all__ = ["named_questions", "answers", "answering", "judged", "role_note", "question_row", "questions_table"]
