"""The twelve reviewer questions of docs/paper.md and which parts' results answer each one.

A part answers question n when its result names the question (a probe's "question" field holding
n, "Qn" or the question's text) or when its id contains one of the question's keywords. When no
part answers a question, the report says so: verdict "not checked".
"""
from __future__ import annotations

import re

# (short text, keywords matched against part ids, built-in parts that answer it)
QUESTIONS = [
    ("Why is the rate Theta(1/T) although the loss is not strongly convex / PL? What regularity gives it?",
     ("rate", "1/t", "theorem-3.1", "thm-3.1", "thm3.1", "one-over-t", "pl-", "regularity", "slow-manifold"),
     ("convergence",)),
    ("Lemma C.2: is it true, and what do C_1, C_2, C_3 mean?",
     ("c.2", "c2", "lemma-c", "alignment", "positive-multiple"), ()),
    ("The proofs seem to break when D = K (S* is average pooling over all tokens). What happens there?",
     ("k-equals-d", "k=d", "d=k", "keqd", "k-eq-d", "d-equals-k", "full-support"), ()),
    ("They also seem to break when K = 0 (S* identically zero). What happens there?",
     ("k-zero", "k=0", "k0", "kzero", "zero-teacher", "sstar-zero"), ()),
    ("Theorem 3.1 depends on 1/||V*||^2 in-distribution but on ||V*||^2 out-of-distribution: why?",
     ("vstar", "v-norm", "vnorm", "ood", "theorem-3.2", "thm-3.2", "out-of-distribution"), ()),
    ("What are the fitted slopes of the convergence curves' tails? Will code be released?",
     ("slope", "d-exponent", "d-dependence", "exponent"), ("convergence",)),
    ("The calculations lean on Gaussian data: what if the data are t-distributed or Gumbel?",
     ("law", "student", "gumbel", "non-gaussian", "heavy-tail", "distribution"), ()),
    ("Can S* have non-uniform non-zero entries (not all 1/K)?",
     ("non-uniform", "nonuniform", "sstar-weights", "weighted"), ()),
    ("T* grows like D^2: is that real, and does it make long sequences impractical?",
     ("t-star", "tstar", "transient", "burn-in", "t*"), ()),
    ("Finite samples: what would a sample-complexity (online SGD) version look like?",
     ("sgd", "sample", "online", "finite-sample"), ()),
    ("Position-only attention makes S independent of the input; how much does the simplification matter?",
     ("input-dependent", "full-attention", "content", "wang", "position-only"), ()),
    ("Learned / sinusoidal positional encodings versus a fixed orthogonal P.",
     ("sinusoidal", "positional", "p-kind", "encoding", "p-lambda", "learned-p"), ()),
]

# The part that answers each question most directly (its verdict is the row's verdict); the others
# are listed as further evidence, with their verdicts when they differ. None: strongest verdict.
PRIMARY = {1: "certify", 2: "claim:lemma-C.2", 3: "probe:d-eq-k", 4: "probe:k-zero", 5: "claim:theorem-3.2-ood",
           6: "probe:rates", 7: "probe:non-gaussian", 8: "probe:nonuniform-s", 9: "claim:theorem-3.1-tstar",
           10: "probe:finite-sample", 11: "probe:full-attention", 12: "probe:p-scale"}

# Strength order when several parts answer a question: a counterexample is reported first.
VERDICT_ORDER = ("refuted", "proved", "certified", "supported", "inconclusive")


def question_of(field) -> int | None:
    """The question number a probe's "question" field names (1-based), or None."""
    if isinstance(field, bool) or field is None:
        return None
    if isinstance(field, int):
        return field if 1 <= field <= len(QUESTIONS) else None
    text = str(field).strip()
    m = re.match(r"^(?:Q|question\s*)?(\d{1,2})\b", text, re.IGNORECASE)
    if m and 1 <= int(m.group(1)) <= len(QUESTIONS):
        return int(m.group(1))
    low = text.lower()
    for i, (q, _, _) in enumerate(QUESTIONS, 1):
        if low and (low in q.lower() or q.lower()[:40] in low):
            return i
    return None


def answers(part_name: str, kind: str, result: dict | None, keywords: bool = True) -> list[int]:
    """Question numbers (1-based) the saved part answers: those its result names, the built-in
    parts' own, and (``keywords``) those whose keywords its id contains."""
    out = set()
    if isinstance(result, dict):
        fields = result.get("questions", result.get("question"))
        if isinstance(fields, str):
            fields = fields.split(" | ")      # "Q3: ... | Q4: ..." (verify.model.paper.question_text)
        for f in (fields if isinstance(fields, list) else [fields]):
            n = question_of(f)
            if n:
                out.add(n)
    ident = part_name.split(":", 1)[-1].lower()
    for i, (_, keys, builtin) in enumerate(QUESTIONS, 1):
        if kind in builtin and part_name == kind:
            out.add(i)
        elif keywords and kind in ("claim", "probe", "fuzz") and any(_has_word(ident, k) for k in keys):
            out.add(i)
    return sorted(out)


def _has_word(ident: str, key: str) -> bool:
    """``key`` occurs in ``ident`` not glued to other letters ("rate" is not in "iterate")."""
    return re.search(r"(?<![a-z])" + re.escape(key) + r"(?![a-z])", ident) is not None


def strongest(verdicts: list[str]) -> str:
    for v in VERDICT_ORDER:
        if v in verdicts:
            return v
    return "not checked"
