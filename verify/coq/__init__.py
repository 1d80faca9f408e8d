"""Kernel-checked proofs: obligations exported as Coq theorems (verify export --coq) and checked by coqc
(verify prove --coq). Coq is optional: nothing else in the toolkit needs it."""
