"""Lemma C.2's induction as solver-discharged obligations (z3, nonlinear real arithmetic), and the
negative controls: dropping the step-size hypothesis must give a counterexample that really is one."""
from fractions import Fraction

import pytest
import z3

from verify.derive.obligations import z3_decide, z3_obligation
from verify.derive.stability import (delta_increment_identity, k_equals_d_obligations, large_step_obligations,
                                     positivity_obligations, step_hypotheses)
from verify.evidence import Scope, decide


def test_lemma_c2_obligations_are_proved_and_the_controls_disproved():
    rep = positivity_obligations()
    tests = [o for o in rep.obligations if o.role == "test"]
    controls = [o for o in rep.obligations if o.role == "outside"]
    assert rep.proved and len(tests) >= 5 and all(o.status == "proved" for o in tests)
    assert {o.method for o in tests} >= {"z3", "matrix calculus"}
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


def test_the_step_with_its_hypothesis_has_no_counterexample_and_each_hypothesis_matters():
    hyp, a_next, _ = step_hypotheses(True)
    assert z3_decide(hyp, a_next > 0)[0] is True
    # dropping alpha >= 0 also breaks it (alpha very negative): the solver says so
    alpha = z3.Real("alpha")
    weaker = [h for h in hyp if not z3.eq(h, alpha >= 0)]
    holds, model = z3_decide(weaker, a_next > 0)
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


def test_z3_obligation_reports_unknown_and_false_honestly():
    x = z3.Real("x")
    ob = z3_obligation("x > 0 for every real x", [], x > 0, Scope())
    assert ob.status == "disproved" and Fraction(ob.counterexample["x"]) <= 0
    with pytest.raises(ValueError):
        ob.evidence(replay="")      # a disproved test obligation needs its replay command
