"""The one verdict rule (verify.evidence.decide): each branch, reached from records that could say otherwise."""
import math

import numpy as np
import pytest

from verify.evidence import Scope, compare, covered, decide, finite, record

ALL_DIMS = Scope(dims="all", sigma=("identity", "erf"), horizon="all")
SMALL = Scope(dims=("M=2 d=2 D=3 N=2 K=2",), sigma=("identity", "erf"), horizon="all")
T150 = Scope(dims=("D=8 K=2",), sigma=("identity",), horizon=150)
TH = {"value": 1e-12, "why": "float64 rounding"}


def test_proved_needs_the_whole_scope():
    ident = record("matrix calculus", "symbolic", Scope("all", ("identity",), "all", "all"), "ok", True)
    erf = record("generic kernel", "symbolic", Scope("all", ("erf",), "all", "all"), "ok", True)
    d = decide([ident], ALL_DIMS)                                    # erf not covered: proved on a part only
    assert d.verdict == "supported" and d.reason.startswith("proved only on part") and "not for sigma {erf}" in d.reason
    assert decide([ident, erf], ALL_DIMS).verdict == "proved"
    small = record("explicit dims", "symbolic", SMALL, "ok", True)
    d = decide([small], ALL_DIMS)
    assert d.verdict == "supported" and "checked at dimensions" in d.scope and "not for all dimensions" in d.reason
    assert decide([small], SMALL).verdict == "proved"
    assert decide([ident, erf], ALL_DIMS).scope.startswith("all dimensions")


def test_numerics_support_and_arb_certifies():
    f = record("float64 run", "float64", T150, "ok", True, threshold=TH)
    a = record("arb run", "arb", T150, "ok", True, threshold={"value": 0, "why": "balls above 0"})
    assert decide([f], ALL_DIMS).verdict == "supported"
    assert decide([f, a], ALL_DIMS).verdict == "supported"          # enclosed at one size up to t = 150 only
    assert decide([f, a], T150).verdict == "certified"              # ... which is all this statement speaks of


def test_refutation_needs_replay_and_a_longer_horizon():
    with pytest.raises(ValueError):
        record("run", "float64", T150, "bad", False, threshold=TH)               # no replay command
    bad = record("run", "float64", T150, "bad", False, threshold=TH, replay="verify run ...")
    assert decide([bad], ALL_DIMS).verdict == "inconclusive"                   # not replayed
    ok = record("run", "float64", T150, "bad", False, threshold=TH, replay="verify run ...",
                replay_check={"horizon": 1500, "holds": False})
    proof = record("proof", "symbolic", Scope(), "ok", True)
    assert decide([proof, ok], ALL_DIMS).verdict == "refuted"
    gone = record("run", "float64", T150, "bad", False, threshold=TH, replay="verify run ...",
                  replay_check={"horizon": 1500, "holds": True})
    assert decide([gone], ALL_DIMS).verdict == "inconclusive"


def test_outside_and_context_never_decide():
    out = record("random init", "float64", T150, "fails there", False, role="outside", replay="x")
    assert decide([out], ALL_DIMS).verdict == "inconclusive"
    with pytest.raises(ValueError):
        record("note", "float64", T150, "x", True, role="context")


def test_failed_measurement_is_inconclusive():
    f = record("run", "float64", T150, "ok", True, threshold=TH)
    miss = record("T* for D = 64", "float64", T150, "not reached", None, role="failed")
    assert decide([f, miss], ALL_DIMS).verdict == "inconclusive"
    und = record("run", "float64", T150, "nan", None)
    assert decide([f, und], ALL_DIMS).verdict == "inconclusive"


def test_holds_has_one_type():
    with pytest.raises(TypeError):
        record("x", "symbolic", Scope(), "r", "True")
    assert record("x", "symbolic", Scope(), "r", np.bool_(True))["holds"] is True


def test_non_finite_never_holds():
    assert compare(float("nan"), "<=", 1.0) is None
    assert compare(math.inf, ">", 0) is None
    assert compare(np.array([0.1, np.nan]), "<", 1) is None
    assert compare(0.5, "<=", 1.0) is True and compare(2.0, "<=", 1.0) is False
    assert not finite([1.0, float("inf")])


def test_coverage_by_union():
    a = Scope("all", ("identity",), "all", "all")
    b = Scope("all", ("erf",), "all", 100)
    assert not covered([a, b], ALL_DIMS)
    assert covered([a, Scope("all", ("erf",), "all", "all")], ALL_DIMS)
    assert Scope.from_dict(ALL_DIMS.as_dict()) == ALL_DIMS


def test_outside_records_report_but_do_not_refute():
    """A probe outside a claim's hypotheses (e.g. random init for Lemma C.2) reports what it found."""
    proof = record("induction", "symbolic", ALL_DIMS, "ok", True)
    out = record("random init", "float64", T150, "residual > 0 at t = 0", False, role="outside", replay="verify run")
    d = decide([proof, out], ALL_DIMS)
    assert d.verdict == "proved"
    assert decide([out], ALL_DIMS).verdict == "inconclusive"


def test_scope_labels_for_classes_of_dimensions():
    k_eq_d = Scope(dims=("K=D",), sigma=("identity",), horizon="all")
    assert k_eq_d.label().startswith("checked at dimensions {K=D}")
    assert decide([record("closed form", "symbolic", k_eq_d, "ok", True)], k_eq_d).verdict == "proved"
    assert decide([record("closed form", "symbolic", k_eq_d, "ok", True)], ALL_DIMS).verdict == "supported"


def test_jsonable_keeps_holds_boolean():
    from fractions import Fraction

    from verify.run.jsonable import jsonable
    out = jsonable({"holds": np.bool_(False), "x": [np.float64(1.5), np.nan, np.inf], "n": np.int64(3),
                    "q": Fraction(1, 10), "a": np.array([1, 2])})
    assert out == {"holds": False, "x": [1.5, "nan", "inf"], "n": 3, "q": "1/10", "a": [1, 2]}
    assert type(out["holds"]) is bool
