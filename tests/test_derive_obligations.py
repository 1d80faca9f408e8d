"""Lemma C.2's induction as solver-discharged obligations (z3 and cvc5, nonlinear real arithmetic), and the
negative controls: dropping the step-size hypothesis must give a counterexample that really is one. Every SMT
obligation records both solvers' results; a disagreement (forced here) leaves it open."""
from fractions import Fraction

import pytest

from verify.derive import obligations
from verify.derive.obligations import smt_obligation, solver_decide
from verify.derive.stability import positivity_obligations, step_hypotheses
from verify.evidence import Scope, decide


def test_lemma_c2_obligations_are_proved_and_the_controls_disproved():
    rep = positivity_obligations()
    tests = [o for o in rep.obligations if o.role == "test"]
    controls = [o for o in rep.obligations if o.role == "outside"]
    assert rep.proved and len(tests) >= 5 and all(o.status == "proved" for o in tests)
    assert {o.method for o in tests} >= {"smt", "matrix calculus"}
    assert all(set(o.solvers) == {"z3", "cvc5"} for o in rep.obligations if o.method == "smt")
    assert len(controls) == 2 and all(o.status == "disproved" and o.counterexample for o in controls)
    # the evidence they make: proved for sigma = identity in all dimensions; the controls never refute
    statement = Scope("all", ("identity",), "all", "all")
    assert decide(rep.evidence(), statement).verdict == "proved"


def _alpha_next(model: dict) -> Fraction:
    v = {k: Fraction(x) for k, x in model.items()}
    return (1 - v["eta"] * v["c_L"] * v["v"] * v["x"]) * v["alpha"] + v["eta"] * v["c_L"] * v["v"] * v["y"]


def test_dropping_the_step_size_hypothesis_gives_a_real_counterexample():
    ctl = next(o for o in positivity_obligations().obligations if "without eta" in o.name)
    cx = ctl.counterexample
    v = {k: Fraction(x) for k, x in cx.items()}
    # independent replay with exact rationals: inside every other hypothesis, and alpha' <= 0
    assert 0 <= v["x"] <= v["N"] and v["y"] > 0 and v["alpha"] >= 0 and v["eta"] > 0
    assert v["eta"] * v["c_L"] * v["v"] * v["N"] > 1
    assert _alpha_next(cx) <= 0


@pytest.mark.parametrize("solver", ["z3", "cvc5"])
def test_the_step_with_its_hypothesis_has_no_counterexample_and_each_hypothesis_matters(solver):
    lib = obligations.solver_library(solver)
    hyp, a_next, _ = step_hypotheses(lib, True)
    assert solver_decide(solver, hyp, a_next > 0)[0] is True
    # dropping alpha >= 0 also breaks it (alpha very negative): each solver says so
    weaker = hyp[:6] + hyp[7:]           # alpha >= 0 is the seventh hypothesis
    assert str(hyp[6]) == "alpha >= 0"
    holds, model = solver_decide(solver, weaker, a_next > 0)
    assert holds is False and Fraction(model["alpha"]) < 0


def test_smt_obligation_reports_false_honestly_from_both_solvers():
    ob = smt_obligation("x > 0 for every real x", lambda s: ([], s.Real("x") > 0), Scope())
    assert ob.status == "disproved" and Fraction(ob.counterexample["x"]) <= 0
    assert {k: v["status"] for k, v in ob.solvers.items()} == {"z3": "disproved", "cvc5": "disproved"}
    with pytest.raises(ValueError):
        ob.evidence(replay="")      # a disproved test obligation needs its replay command


def test_both_results_recorded_and_a_disagreement_leaves_the_obligation_open(monkeypatch):
    """x^2 >= 0 is proved by both; if one solver (forced) said "sat", the obligation is open, naming both results,
    and its evidence does not prove anything."""
    build = lambda s: ([], s.Real("x") * s.Real("x") >= 0)  # noqa: E731
    ok = smt_obligation("x^2 >= 0", build, Scope())
    assert ok.status == "proved" and {v["status"] for v in ok.solvers.values()} == {"proved"}
    assert ok.as_dict()["solvers"]["cvc5"]["status"] == "proved" and ok.evidence()["solvers"] == ok.solvers
    monkeypatch.setitem(obligations.DECIDERS, "cvc5", lambda hyp, concl, t=0: (False, {"x": "0"}))
    torn = smt_obligation("x^2 >= 0", build, Scope())
    assert torn.holds is None and torn.status == "unknown"
    assert "z3 proved" in torn.detail and "cvc5 disproved" in torn.detail and "open" in torn.detail
    assert decide([torn.evidence()], Scope()).verdict == "inconclusive"
