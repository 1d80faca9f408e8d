"""The kernel route (verify.coq): obligations as Coq theorems, checked by coqc.

The kernel checks skip only when coqc is missing and CI is not "true" (under CI a missing coqc fails them:
the set-up installs `coq libcoq-interval`). What the kernel does is compared with what is known about each
statement independently of the toolkit: a true statement is accepted, a statement made false by hand (a sign
flipped, a hypothesis weakened past min(K, D - K)) is rejected.
"""
import os
import re
import shutil
from pathlib import Path

import pytest
import sympy as sp
from click.testing import CliRunner

from verify.coq import sympylib
from verify.coq.groups import C2_PLANS, c2_obligations, c2_theorems, files, identity_theorem
from verify.coq.kernel import check_file, kernel_route
from verify.coq.printer import coq
from verify.coq.theorems import CoqFile, Theorem, variables_of
from verify.derive.stability import block_column, next_alpha_Z2

DATA = Path(__file__).parent / "data" / "coq"
needs_coq = pytest.mark.skipif(shutil.which("coqc") is None and os.environ.get("CI") != "true",
                               reason="coqc not installed (apt-get install -y coq libcoq-interval)")


def kernel(thms, name="T") -> dict:
    """coqc's verdict on each theorem of a file made of ``thms``."""
    f = CoqFile(name, "test", "reals", tuple(thms))
    return {n: r["status"] for n, r in check_file(f.text(), f.lines())["theorems"].items()}


def test_printer_hand_values():
    x, y, n = sp.symbols("x y N")
    assert coq(x**2 + sp.Rational(1, 32) * y) == "x ^ 2 + y / 32"      # pow on nat, exact rationals
    assert coq(sp.Rational(-3, 4) + x) == "((-3) / 4) + x"
    assert coq(x / (y + 1) ** 3) == "x / (1 + y) ^ 3"
    assert coq(n) == "N_"                                                    # N is Coq's binary naturals
    assert coq(sp.Or(sp.Eq(x, 0), sp.Ge(x, 1))) == "(x = 0) \\/ (x >= 1)"
    with pytest.raises(ValueError):
        coq(sp.Float(0.5) * x)                                                # only exact numbers


def test_sympylib_keeps_relations():
    """The z3-style builders give SymPy relations, not Python booleans (n == 0 must stay an equation)."""
    hyp, concl = sympylib.formula(lambda lib: ([lib.Or(lib.Real("n") == 0, lib.Real("n") >= 1)], lib.Real("n") > -1))
    n = sp.Symbol("n", real=True)
    assert hyp == (sp.Or(sp.Eq(n, 0), n >= 1),) and concl == (n > -1)


@pytest.fixture(scope="module")
def c2():
    return c2_theorems(c2_obligations())


def test_small_theorem_equals_hand_written_file(c2):
    (pos,) = [t for t in c2 if t.key == "c2-positive"]
    assert pos.text() == (DATA / "c2_positive.v").read_text()


def test_text_is_a_pure_function_of_the_obligation(c2):
    again = c2_theorems(c2_obligations())
    assert [t.text() for t in again] == [t.text() for t in c2]
    fs = files(("lemma-C.2", "invariants"))
    assert [f.text() for f in fs] == [f.text() for f in files.__wrapped__(("lemma-C.2", "invariants"))]


def test_every_generated_theorem_ends_in_qed():
    """A scan of every exported file: each Theorem's proof ends in Qed; nothing admitted, no axiom declared."""
    for f in files():
        text = re.sub(r"\(\*.*?\*\)", "", f.text(), flags=re.S)      # comments (the obligations' statements)
        assert not re.search(r"\b(Admitted|admit|Axiom|Parameter|Abort)\b", text), f.name
        blocks = re.split(r"(?m)^Theorem ", text)[1:]
        assert len(blocks) == len(f.theorems) > 0
        for b in blocks:
            proof = b.split("\nProof.\n", 1)[1]
            assert proof.rstrip().endswith("Qed."), f.name
            assert proof.count("Qed.") == 1


@needs_coq
@pytest.mark.slow
def test_lemma_c2_induction_accepted_and_controls_rejected(c2):
    """The induction's four steps are accepted; the two negative controls (x < 2K only; K = 0) are rejected."""
    main = [t for t in c2 if t.expect == "accepted"]
    assert [t.key for t in main] == ["c2-positive", "c2-factor", "c2-step", "c2-base"]
    assert set(kernel(main).values()) == {"accepted"}
    lemmas = [t for t in main if t.key in ("c2-positive", "c2-factor")]
    (large,) = [t for t in c2 if t.key == "c2-outside-large-x"]
    assert kernel(lemmas + [large])[large.name] == "rejected"


@needs_coq
@pytest.mark.slow
def test_x_just_above_min_k_d_minus_k_rejected(c2):
    """The step with x <= min(K, D - K) + 1/64 instead (false: at x = K + 1/64, E and alpha large, alpha' < 0) is
    rejected by the kernel, with the same proof plan as the true step."""
    h = sp.Rational(1, 64)

    def build(lib):
        c = block_column(lib)
        x, a = lib.Reals("x alpha")
        hyp = c["base"] + [a >= 0, x > 0, x <= c["K"] + h, lib.Or(c["n"] == 0, x <= c["n"] + h)]
        return hyp, next_alpha_Z2(c, x, a) > 0
    hyp, concl = sympylib.formula(build)
    # the statement is false: a hand counterexample, K = 1, n = 0, x = 65/64, E = 100, alpha = 10^4
    K, n, E, x, a = sp.symbols("K n E x alpha", real=True)
    assert concl.subs({K: 1, n: 0, E: 100, x: 1 + h, a: 10**4}) == sp.false
    lemmas = [t for t in c2 if t.key in ("c2-positive", "c2-factor")]
    cite = {t.key: f"pose proof ({t.name} {' '.join(v.name for v in t.variables)}) as H_{t.name}; "
                   f"repeat (specialize (H_{t.name} ltac:(assumption)))" for t in lemmas}
    above = Theorem("c2_step_x_above", "induction step with x <= min(K, D - K) + 1/64", variables_of(hyp, concl),
                    hyp, concl, C2_PLANS["c2-step"](cite), expect="rejected")
    got = kernel(lemmas + [above])
    assert got == {"c2_positive": "accepted", "c2_factor": "accepted", "c2_step_x_above": "rejected"}


@needs_coq
@pytest.mark.slow
def test_reduction_identity_accepted_and_sign_flip_rejected():
    """(*) for 0 < K < D as generated is accepted; with the sign of its teacher term flipped it is rejected."""
    (red,) = files(("reduction",))
    (rec,) = [t for t in red.theorems if t.name == "alpha_recursion_interior"]
    lhs, rhs = rec.conclusion.lhs, rec.conclusion.rhs
    E = sp.Symbol("E", positive=True)
    teacher = [t for t in sp.Add.make_args(rhs) if t.has(E) and not t.has(sp.Symbol("alpha", positive=True))]
    assert len(teacher) == 1
    flipped = identity_theorem("alpha_recursion_flipped", "sign flipped", lhs, rhs - 2 * teacher[0],
                               rec.hypotheses[-1:], expect="rejected")
    assert kernel([rec, flipped]) == {"alpha_recursion_interior": "accepted", "alpha_recursion_flipped": "rejected"}


@needs_coq
@pytest.mark.slow
def test_claim_record_says_kernel_checked():
    route = kernel_route("lemma-C.2", ("c2-positive", "c2-factor", "c2-step", "c2-base"))
    assert route["status"] == "kernel-checked" and route["versions"]["coq"][0].isdigit()
    assert route["why"].startswith("4 of 4 obligations accepted")


def test_prove_without_coqc_exits_2(tmp_path, monkeypatch):
    import json
    from verify.cli import main
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "verify-coq", "version": 1, "files": []}))
    monkeypatch.setenv("PATH", str(tmp_path))           # no coqc on it
    res = CliRunner().invoke(main, ["prove", "--coq", str(tmp_path)])
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and "apt-get install -y coq libcoq-interval" in res.output


def test_prove_refuses_a_folder_without_manifest_or_an_edited_file(tmp_path):
    import json
    from verify.cli import main
    res = CliRunner().invoke(main, ["prove", "--coq", str(tmp_path)])
    assert res.exit_code == 2 and "--coq" in res.output and "manifest.json" in res.output
    f = CoqFile("T", "test", "reals", ())
    (tmp_path / "T.v").write_text(f.text() + "Axiom cheat : False.\n")     # edited after export
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "verify-coq", "version": 1, "files": [
        {"file": "T.v", "group": "test", "digest": f.digest(), "lines": {}, "theorems": []}]}))
    res = CliRunner().invoke(main, ["prove", "--coq", str(tmp_path)])
    assert res.exit_code == 2 and "T.v" in res.output and "export again" in res.output


@needs_coq
@pytest.mark.slow
def test_comparison_lemma_accepted_and_reversed_inequality_rejected():
    """The comparison lemma's three inequalities are accepted; one-step-lower with its inequality reversed (false:
    at x2 = 1/2, a = q = b = 1 the left side is 1/2 < 1) is rejected with the same proof plan."""
    (f,) = files(("comparison-lemma",))
    assert [t.key for t in f.theorems] == ["one-step-lower", "one-step-upper", "step-error-monotone"]
    low = f.theorems[0]
    rev = sp.GreaterThan(low.conclusion.lhs, low.conclusion.rhs, evaluate=False)
    a, q, x2 = sp.symbols("a q x2", real=True)
    assert low.conclusion.lhs.subs({a: 1, q: 1, x2: sp.Rational(1, 2)}) == sp.Rational(1, 2)
    flipped = Theorem("one_step_lower_reversed", "reversed", low.variables, low.hypotheses, rev, low.tactic,
                      expect="rejected")
    got = kernel(list(f.theorems) + [flipped])
    assert got == {t.name: "accepted" for t in f.theorems} | {"one_step_lower_reversed": "rejected"}


def test_report_names_the_routes():
    """The claims table's routes, from hand-built records: the SMT solvers of each step, SymPy for identities, and
    the kernel route (partial, complete, or not run)."""
    from verify.report.statements import proof_routes
    smt = {"method": "smt", "solvers": {"z3": {}, "cvc5": {}}}
    steps = [smt] * 3 + [{"method": "sympy identity"}]

    def st(kernel):
        return {"evidence": [{"route": "p", "kind": "smt", "role": "test", "scope": {}, "result": "", "holds": True,
                              "steps": steps, **({"kernel": kernel} if kernel else {})}]}
    assert proof_routes(st(None)) == "Routes: z3, cvc5, SymPy."
    assert proof_routes(st({"status": "kernel-checked", "accepted": 3})) == \
        "Routes: z3, cvc5, SymPy, Coq (kernel-checked: 3 of the proof's 4 steps)."
    assert proof_routes(st({"status": "kernel-checked", "accepted": 4})) == \
        "Routes: z3, cvc5, SymPy, Coq (kernel-checked: every step)."
    assert proof_routes(st({"status": "not run"})) == "Routes: z3, cvc5, SymPy. Kernel route not run."
