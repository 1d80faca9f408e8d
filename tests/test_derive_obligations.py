"""Lemma C.2's induction as solver-discharged obligations (z3 and cvc5, nonlinear real arithmetic), and the
negative controls: dropping the step-size hypothesis must give a counterexample that really is one. Every SMT
obligation records both solvers' results; a disagreement (forced here) leaves it open."""
from fractions import Fraction

import pytest

from verify.derive import obligations
from verify.derive.obligations import smt_obligation, solver_decide
from verify.derive.stability import (delta_increment_identity, k_equals_d_obligations, large_step_obligations,
                                     positivity_obligations, step_hypotheses)
from verify.evidence import Scope, decide


def test_lemma_c2_obligations_are_proved_and_the_controls_disproved():
    rep = positivity_obligations()
    tests = [o for o in rep.obligations if o.role == "test"]
    controls = [o for o in rep.obligations if o.role == "outside"]
    assert rep.proved and len(tests) >= 5 and all(o.status == "proved" for o in tests)
    assert {o.method for o in tests} >= {"smt", "matrix calculus"}
    assert all(set(o.solvers) == {"z3", "cvc5"} for o in rep.obligations if o.method == "smt")
    assert len(controls) == 2 and all(o.status == "disproved" and o.counterexample for o in controls)
    # every step names what it assumes: the proof as a whole assumes the small-step range and zero initialisation
    assumed = set().union(*(o.scope.assumes for o in tests))
    assert {"eta-small-step", "zero-init", "uniform-S*", "K>0", "centred"} <= assumed
    # the evidence they make: proved for sigma = identity in all dimensions under those hypotheses only
    statement = Scope("all", ("identity",), "all", "all", assumes=tuple(assumed))
    assert decide(rep.evidence(), statement).verdict == "proved"
    assert decide(rep.evidence(), Scope("all", ("identity",), "all", "all", assumes=("eta-stable", "K>0"))).verdict \
        != "proved"


def _column(v: dict):
    """A two-valued column in exact rationals: (||s||^2, p_on) with K on, n off the support, E = e^delta."""
    Z = v["K"] * v["E"] + v["n"]
    return (v["K"] * v["E"] ** 2 + v["n"]) / Z**2, v["E"] / Z


def test_dropping_the_step_size_hypothesis_gives_a_real_counterexample():
    ctl = next(o for o in positivity_obligations().obligations if "x < 2K only" in o.name)
    v = {k: Fraction(x) for k, x in ctl.counterexample.items()}
    # independent replay with exact rationals: inside the statement's x < 2K, with counts K >= 1, n in {0} or >= 1,
    # and alpha' = (1 - x ||s||^2) alpha + x p_on <= 0
    sq, p_on = _column(v)
    assert v["K"] >= 1 and (v["n"] == 0 or v["n"] >= 1) and v["E"] > 0 and v["alpha"] >= 0
    assert 0 < v["x"] < 2 * v["K"] and v["x"] > min(v["K"], v["n"])
    assert (1 - v["x"] * sq) * v["alpha"] + v["x"] * p_on <= 0


def test_the_column_bound_by_hand():
    """||s||^2 <= max(1/K, 1/(D - K)) for two-valued columns (convex in the support mass): exact values on a grid,
    and the bound is attained in the limits (m -> 1 gives 1/K, m -> 0 gives 1/(D - K))."""
    for K in range(1, 6):
        for n in range(1, 6):
            for E in (Fraction(1, 1000), Fraction(1, 3), Fraction(1), Fraction(7, 2), Fraction(1000)):
                sq, _ = _column({"K": K, "n": n, "E": E})
                assert sq <= max(Fraction(1, K), Fraction(1, n))
            assert abs(_column({"K": K, "n": n, "E": Fraction(10**9)})[0] - Fraction(1, K)) < Fraction(1, 10**6)
            assert abs(_column({"K": K, "n": n, "E": Fraction(1, 10**9)})[0] - Fraction(1, n)) < Fraction(1, 10**6)


@pytest.mark.parametrize("solver", ["z3", "cvc5"])
def test_the_step_with_its_hypothesis_has_no_counterexample_and_each_hypothesis_matters(solver):
    lib = obligations.solver_library(solver)
    hyp, a_next, _ = step_hypotheses(True, lib)
    assert solver_decide(solver, hyp, a_next > 0)[0] is True
    # dropping alpha >= 0 also breaks it (alpha very negative): each solver says so
    at = [str(h) for h in hyp].index("alpha >= 0")
    weaker = hyp[:at] + hyp[at + 1:]
    holds, model = solver_decide(solver, weaker, a_next > 0)
    assert holds is False and Fraction(model["alpha"]) < 0


def test_k_equals_d_is_proved_over_the_whole_range_and_the_large_step_stays_open():
    """At K = D, alpha(t) = 1 - (1 - x/K)^t in closed form lies in (0, 2) for 0 < x < 2K (hand value); the proof
    says so for every t. For K < D and x above min(K, D - K) the induction is open, never proved."""
    for K in (1, 3):
        for x in (Fraction(1, 2), Fraction(K), Fraction(19 * K, 10)):
            assert all(0 < 1 - (1 - x / K) ** t < 2 for t in range(1, 50))
    kd = k_equals_d_obligations()
    assert kd.proved and {"K=D", "zero-init"} <= set().union(*(o.scope.assumes for o in kd.obligations))
    large = large_step_obligations()
    assert not large.proved
    still_open = [o for o in large.obligations if o.holds is None]
    assert len(still_open) == 2 and all(o.detail.startswith("open:") for o in still_open)
    assert not any(o.holds is False for o in large.obligations)       # open steps never read as counterexamples
    assert delta_increment_identity()[0] is True


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
