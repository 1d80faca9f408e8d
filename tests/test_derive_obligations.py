"""Lemma C.2's induction as solver-discharged obligations (z3, nonlinear real arithmetic), and the
negative controls: dropping the step-size hypothesis must give a counterexample that really is one."""
from fractions import Fraction

import pytest
import z3

from verify.derive.obligations import z3_decide, z3_obligation
from verify.derive.stability import positivity_obligations, step_hypotheses
from verify.evidence import Scope, decide


def test_lemma_c2_obligations_are_proved_and_the_controls_disproved():
    rep = positivity_obligations()
    tests = [o for o in rep.obligations if o.role == "test"]
    controls = [o for o in rep.obligations if o.role == "outside"]
    assert rep.proved and len(tests) >= 5 and all(o.status == "proved" for o in tests)
    assert {o.method for o in tests} >= {"z3", "matrix calculus"}
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


def test_the_step_with_its_hypothesis_has_no_counterexample_and_each_hypothesis_matters():
    hyp, a_next, _ = step_hypotheses(True)
    assert z3_decide(hyp, a_next > 0)[0] is True
    # dropping alpha >= 0 also breaks it (alpha very negative): the solver says so
    alpha = z3.Real("alpha")
    weaker = [h for h in hyp if not z3.eq(h, alpha >= 0)]
    holds, model = z3_decide(weaker, a_next > 0)
    assert holds is False and Fraction(model["alpha"]) < 0


def test_z3_obligation_reports_unknown_and_false_honestly():
    x = z3.Real("x")
    ob = z3_obligation("x > 0 for every real x", [], x > 0, Scope())
    assert ob.status == "disproved" and Fraction(ob.counterexample["x"]) <= 0
    with pytest.raises(ValueError):
        ob.evidence(replay="")      # a disproved test obligation needs its replay command
