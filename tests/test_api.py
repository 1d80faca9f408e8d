"""The public API of verify/api.py: claims in one regime, the derived leading terms at a setting, the
trajectory figure. Second opinions: hand values of the leading terms, GD iterated to a long horizon,
the engines' own alpha for the claims' outcomes, the asymptotics module's reference-convention terms.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

import verify
from verify import (InvalidParameter, UnsupportedRegime, check_claim, claim_ids, iterate, iterate_certified,
                    leading_term_values, leading_terms, make_setting, plot_trajectory)

REF = dict(D=8, K=2, M=2, d=3, preset="cnn", vstar_norm="1", eta="1/4")


@pytest.fixture(scope="module")
def s():
    return make_setting(**REF)


def test_public_names():
    for name in ("check_claim", "claim_ids", "leading_terms", "leading_term_values", "plot_trajectory",
                 "iterate_certified", "record", "Scope", "decide", "certify", "sweep", "reconcile", "run_probe"):
        assert name in verify.__all__ and hasattr(verify, name)
    # the entry points named like modules stay functions once those modules are imported again
    import importlib
    for name in ("certify", "sweep", "reconcile"):
        importlib.import_module(f"verify.{name}")
        assert callable(getattr(verify, name)) and getattr(verify, name).__module__ == "verify.api"


def test_claim_ids_split_the_registry():
    from lemmas import CLAIMS as REGISTRY
    per, whole = claim_ids(per_regime=True), claim_ids(per_regime=False)
    assert sorted(per + whole) == sorted(claim_ids()) == sorted(REGISTRY)
    assert "lemma-C.2" in per and "theorem-3.1" in whole


def test_check_claim_agrees_with_the_engine(s):
    # lemma-C.2 (alpha_i(t) > 0) holds and neg-alpha-le-1 (alpha_i(t) <= 1) fails here; the reduced
    # engine's own alpha says the same, and the failure's replay command names this regime.
    alpha = [max(float(a) for a in r.alpha) for r in
             iterate(s, 300, "reduced", "float64", checkpoints=range(301)).records]
    assert min(alpha[1:]) > 0 and max(alpha) > 1
    c2 = check_claim("lemma-C.2", s, 300)
    assert c2.holds is True and c2.data["in_hypotheses"] is True
    neg = check_claim("neg-alpha-le-1", s, 300)
    assert neg.holds is False and "--D 8" in neg.replay and "--eta 1/4" in neg.replay
    first = next(t for t, a in enumerate(alpha) if a > 1 + 1e-9)   # well above float64 rounding
    assert f"t = {first}" in neg.detail


@pytest.mark.slow
def test_check_claim_outside_the_hypotheses():
    s = make_setting(**REF, init="random", init_scale="1/10")
    out = check_claim("lemma-C.2", s, 100)
    assert out.data["in_hypotheses"] is False and "outside" in out.detail


INVALID = [
    (lambda s: check_claim("no-such-claim", s, 10), "claim"),
    (lambda s: check_claim(3, s, 10), "claim"),
    (lambda s: check_claim("theorem-3.1", s, 10), "claim"),     # no per-regime check
    (lambda s: check_claim("lemma-C.2", {"D": 8}, 10), "setting"),
    (lambda s: check_claim("lemma-C.2", s, 0), "steps"),
    (lambda s: leading_terms({"D": 8}), "setting"),
    (lambda s: leading_term_values(s, [-1, 10]), "steps"),
    (lambda s: leading_term_values(s, [[1, 2]]), "steps"),
    (lambda s: leading_term_values(s, []), "steps"),
    (lambda s: plot_trajectory([1, 2]), "trajectory"),
    (lambda s: plot_trajectory({}), "trajectory"),
    (lambda s: plot_trajectory(iterate(s, 5), quantities=["alpha"]), "quantities"),
    (lambda s: plot_trajectory(iterate(s, 5), quantities=[]), "quantities"),
    (lambda s: plot_trajectory(iterate(s, 5), leading={"s_er": [1, 2]}), "leading"),
    (lambda s: plot_trajectory(iterate(s, 5), leading={"s_err": [1, 2, 3]}), "leading"),
    (lambda s: verify.certify({"D": 8}), "setting"),
    (lambda s: verify.certify(s.with_(eta="9")), "eta"),                   # above 2K/(c_L v N): no 1/T regime
    (lambda s: verify.sweep({"D": ["x"]}, 100, "/nonexistent"), "grid"),
    (lambda s: verify.reconcile({"loss": {"Q": 1}}, numerics=False), "claims"),
    (lambda s: verify.run_probe("no-such-probe"), "probe"),
]


@pytest.mark.slow
@pytest.mark.parametrize("call,name", INVALID)
def test_invalid_input_names_the_parameter(s, call, name):
    with pytest.raises(InvalidParameter) as e:
        call(s)
    assert e.value.name == name or e.value.name.startswith(name + "."), e.value.name      # "claims.loss": its entry


@pytest.mark.parametrize("changes,why", [
    (dict(sigma="erf"), "sigma = identity"),
    (dict(K=8, preset="sts"), "0 < K < D"),
    (dict(init="random", init_scale="1/10"), "reduced recursion"),
    (dict(law_mean="1/2"), "reduced recursion"),
])
def test_leading_terms_refuse_settings_outside_the_derivation(changes, why):
    s = make_setting(**{**REF, "preset": "sts", **changes})
    with pytest.raises(UnsupportedRegime, match=why):
        leading_terms(s)


def test_leading_terms_hand_values(s):
    # Hand values at D = 8, K = 2, N = 4, ||V*|| = 1, eta = 1/4 (reference convention):
    # L - L_opt ~ K N (D-K) / (4 D eta T) = 48 / (8 T) = 6/T; c = D eta ||V*||^2 / (K (D-K)^2) = 1/36;
    # ||S - S*|| ~ sqrt(N (D-K) / (2 eta T)) / ||V*|| = sqrt(48/T); ||W_X - V*|| ~ (D-K) sqrt(K/(2 D eta T)) = sqrt(18/T).
    T = sp.Symbol("T", positive=True)
    lt = leading_terms(s)
    free = {str(x): x for e in lt.values() for x in e.free_symbols}
    assert set(free) <= {"T"}
    T = free.get("T", T)
    assert sp.simplify(lt["excess_loss"] - 6 / T) == 0
    assert sp.simplify(lt["s_err"] - sp.sqrt(48 / T)) == 0
    assert sp.simplify(lt["w_err"] - sp.sqrt(18 / T)) == 0
    assert lt["c"] == sp.Rational(1, 36)
    vals = leading_term_values(s, [0, 1, 100])
    assert math.isnan(vals["excess_loss"][0]) and vals["excess_loss"][1:] == pytest.approx([6, 0.06])
    assert vals["w_err"][2] == pytest.approx(math.sqrt(0.18))


@pytest.mark.slow
def test_general_terms_reduce_to_the_reference_ones():
    # The reference-convention terms of verify.derive.asymptotics (derived separately, conventions fixed
    # before the expansion) equal the general ones at c_L = v = lambda = beta = 1, eta_KQ = eta.
    from verify.model import symbols as sy
    from verify.derive.asymptotics import leading_terms as reference
    gen, ref = leading_terms(), reference()
    ones = {sy.c_loss: 1, sy.var: 1, sy.lam: 1, sy.beta: 1, sy.eta_kq: sy.eta}
    for q, k in (("excess_loss", "excess_loss"), ("s_err", "s_err"), ("w_err", "w_err")):
        assert sp.simplify(gen[q].subs(ones) - ref[k]) == 0


@pytest.mark.slow
def test_gd_follows_the_leading_terms_in_another_convention():
    # Every named convention away from its reference value; GD iterated to T is within 2 u(T) of the
    # leading terms (their relative corrections are O(u), u(T) = (2 c T)^(-1/2)).
    s = make_setting(D=8, K=2, preset="sts", M=2, d=2, vstar_norm="3/2", eta="1/2", eta_kq="1/3", beta="2",
                     p_lambda="4", loss="mean", law_var="2")
    T = 50_000
    tr = iterate(s, T, "reduced", "float64", checkpoints=[0, T])
    lead = leading_term_values(s, tr.steps())
    u = 1 / math.sqrt(2 * float(leading_terms(s)["c"]) * T)
    for q in ("excess_loss", "s_err", "w_err"):
        ratio = float(getattr(tr.final, q)) / lead[q][-1]
        assert abs(ratio - 1) < 2 * u, (q, ratio, u)


@pytest.mark.slow
def test_plot_trajectory_writes_a_png(tmp_path, s):
    long = iterate(s, 2000, "reduced", "float64", checkpoints=[0, 1, 10, 100, 1000, 2000])
    other = iterate(s.with_(eta=s.eta_v / 2, eta_kq=s.eta_kq / 2), 2000, "reduced", "float64",
                    checkpoints=[0, 1, 10, 100, 1000, 2000])
    png = tmp_path / "sub" / "t.png"
    fig = plot_trajectory({"eta": long, "eta/2": other}, png, leading=leading_term_values(s, long.steps()),
                          title="t")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [len(ax.lines) for ax in fig.axes] == [3, 3, 3]        # two runs and the leading term
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in fig.axes)
    # step 0 is left out of the log axis
    assert min(fig.axes[0].lines[0].get_xdata()) == 1
    assert list(tmp_path.glob("sub/.*")) == []                      # no temporary file left behind


def test_plot_trajectory_of_zero_and_arb_quantities(s):
    # W_P stays exactly 0: drawn on a linear axis (a log axis would warn, and warnings are errors).
    tr = iterate(s, 20, "full", "float64", checkpoints=[0, 1, 5, 20])
    fig = plot_trajectory(tr, quantities=["wp_norm", "cos_wv"])
    assert fig.axes[0].get_yscale() == "linear"
    # Arb balls are drawn at their midpoints.
    cert = iterate_certified(s, 20, bits=64, checkpoints=[0, 1, 5, 20])
    fig = plot_trajectory(cert, quantities="excess_loss")
    y = fig.axes[0].lines[0].get_ydata()
    assert y == pytest.approx([float(r.excess_loss) for r in tr.records[1:]], rel=1e-12)
    assert np.all(np.isfinite(y))



# ----- the commands as functions: certify, sweep, reconcile, run_probe ------------------------------------------

def test_certify_bounds_contain_the_iteration():
    """K = D: the certificate is exact (geometric decay); its bounds at T = 10 must contain the mpmath iterate's
    values at step 10 (a second engine)."""
    from fractions import Fraction
    s = make_setting(D=4, K=4, preset="cnn", eta="1/4", vstar_norm="2")
    b = verify.certify(s).bounds_json(10)
    rec = iterate(s, 10, "reduced", "mpmath", 40, checkpoints=[10]).final
    for q in ("excess_loss", "s_err", "w_err"):
        lo, hi = (Fraction(x) for x in b[q])
        assert lo <= Fraction(str(getattr(rec, q))) <= hi or abs(float(getattr(rec, q))) < 1e-30, (q, b[q])


@pytest.mark.slow
def test_sweep_rows_agree_with_the_engine(tmp_path):
    """One row per regime, its final L - L_opt equal to the reduced mpmath iteration's (independent engine)."""
    res = verify.sweep({"D": [8, 16], "K": [2]}, steps=400, out=tmp_path / "sw", measures=["trajectory"],
                       processes=False, workers=1)
    assert [r["D"] for r in res["rows"]] == [8, 16] and all(r["status"] == "ok" for r in res["rows"])
    for r in res["rows"]:
        s = make_setting(D=r["D"], K=2, preset="cnn", eta="1/10")
        exact = float(iterate(s, 400, "reduced", "mpmath", 30, checkpoints=[400]).final.excess_loss)
        assert r["excess_loss"] == pytest.approx(exact, rel=1e-9)
    assert (tmp_path / "sw" / "sweep.parquet").is_file()


@pytest.mark.slow
def test_reconcile_states_the_reference_d_exponents():
    """Hand values from the reference convention's leading terms at fixed N and K: L - L_opt ~ K N (D - K)/(4 D T
    eta) is D^0, ||S - S*||_F ~ sqrt(N (D - K)) ... is D^(1/2), ||W_X - V*||_F ~ sqrt(K) (D - K)/sqrt(D) ... is
    D^(1/2), against the claimed D^4, D^(5/2), D^2; every verdict is one of the five."""
    from fractions import Fraction
    res = verify.reconcile(numerics=False)
    d = res["reference"]["d_exponents"]
    assert Fraction(str(d.get("excess_loss", d.get("loss")))) == 0
    assert Fraction(str(d["s_err"])) == Fraction(1, 2) and Fraction(str(d["w_err"])) == Fraction(1, 2)
    assert all(v["verdict"] in ("proved", "certified", "supported", "refuted", "inconclusive")
               for v in res["verdicts"].values())


@pytest.mark.slow
def test_run_probe_k_zero_matches_the_closed_form():
    """K = 0: S* = 0 and the teacher is 0, so W_X never moves: ||W_X - V*||_F = ||V*||_F = 3/2 and
    ||S - S*||_F = ||S(0)||_F = sqrt(N/D) = sqrt(1/5) at every step of the regime sts K = 0, D = 5 (by hand)."""
    out = verify.run_probe("k-zero")
    series = out["data"]["sts K=0 D=5"]
    assert series["w_err"] == pytest.approx([1.5] * len(series["w_err"]), rel=1e-12)
    assert series["s_err"] == pytest.approx([math.sqrt(1 / 5)] * len(series["s_err"]), rel=1e-12)
    assert out["statements"][0]["verdict"] in ("refuted", "proved", "certified", "supported", "inconclusive")
