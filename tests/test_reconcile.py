"""``verify reconcile``: the logit temperature beta, the widened scaling family and its exponents, the
combination rules, the conditions, the exact solver and its certificates, the GD confirmation, the CLI.

Second routes: the full-matrix engine and central differences for beta; hand-derived leading terms and
exponents; fast-engine iteration at two D for every member's exponent; hand-solved linear systems for
the solver; an independent slope of the finite-D factor for the divided fits.
"""
import json
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

from verify.cli import main
from verify.engines import iterate
from verify.engines.fast import iterate_fast
from verify.errors import InvalidParameter
from verify.model import make_setting


def _close(x, y, digits):
    with mpmath.workdps(80):
        x, y = mpmath.mpf(x), mpmath.mpf(y)
        return abs(x - y) <= mpmath.mpf(10) ** -digits * max(abs(x), abs(y), mpmath.mpf(10) ** -30)


# ---------------------------------------------------------------------------------------------
# beta: the logit temperature
# ---------------------------------------------------------------------------------------------
BASE = dict(D=6, K=2, M=2, d=2, preset="gcn", vstar_norm="1.5", eta="0.2")


def _final(s, steps=40, engine="full"):
    return iterate(s, steps, engine, "mpmath", 30).final


def test_beta_is_recorded_and_validated():
    s = make_setting(**BASE, beta="3/2")
    assert s.config()["beta"] == "3/2" and make_setting(**BASE).config()["beta"] == "1"
    for bad in ("0", "-1"):
        with pytest.raises(InvalidParameter, match="beta"):
            make_setting(**BASE, beta=bad)
    res = CliRunner().invoke(main, ["run", "--D", "6", "--K", "2", "--preset", "gcn", "--beta", "-1"])
    assert res.exit_code == 2 and "invalid --beta" in res.output and "Traceback" not in res.output


def test_only_eta_kq_lambda2_beta2_matters():
    """Full-matrix engine: (beta = 9/4), (lambda = 9/4) and (eta_KQ = (81/16) eta) have the same g = eta_KQ lambda^2
    beta^2 and give the same trajectory; a different g gives a different one (so the test can fail)."""
    a = _final(make_setting(**BASE, beta="9/4"))
    b = _final(make_setting(**BASE, p_lambda="9/4"))
    c = _final(make_setting(**BASE, eta_kq=str(Fraction(81, 16) * Fraction(1, 5))))
    d = _final(make_setting(**BASE, beta="3", eta_kq=str(Fraction(81, 16) * Fraction(1, 5) / 9)))
    for q in ("excess_loss", "s_err", "w_err"):
        ref = getattr(a, q)
        assert all(_close(getattr(r, q), ref, 25) for r in (b, c, d)), q
    other = _final(make_setting(**BASE, beta="2"))
    assert not _close(other.excess_loss, a.excess_loss, 6)


def test_full_engine_wkq_gradient_with_beta_matches_central_differences():
    """dL/dW_KQ of the full engine (logits beta P^T W_KQ P) against central differences of its loss (50 digits)."""
    from verify.engines.arith import Arith
    from verify.engines.full import FullState
    s = make_setting(D=5, K=2, M=1, d=2, preset="gcn", vstar_norm="1", eta="0.3", beta="5/3", p_lambda="4")
    ar = Arith.make("mpmath", 50, 10)
    with ar.context():
        st = FullState(s, ar)
        for _ in range(3):
            st.step()
        # break the symmetry so that every entry of W_KQ matters
        st.WKQ = st.WKQ + np.array([[mpmath.mpf(i - 2 * j) / 50 for j in range(5)] for i in range(5)], dtype=object)
        _, _, gK = st.gradients()
        h = mpmath.mpf(10) ** -20
        for i, j in [(0, 0), (1, 3), (4, 2)]:
            W = st.WKQ.copy()
            st.WKQ = W.copy()
            st.WKQ[i, j] += h
            up = st.excess_loss()
            st.WKQ = W.copy()
            st.WKQ[i, j] -= h
            down = st.excess_loss()
            st.WKQ = W
            fd = (up - down) / (2 * h)
            assert abs(fd - gK[i, j]) <= mpmath.mpf(10) ** -30 * max(1, abs(fd)), (i, j, fd, gK[i, j])


def test_replay_command_carries_beta():
    from verify.evidence.regime_runs import replay_run
    s = make_setting(**BASE, beta="3/2")
    cmd = replay_run(s, 30)
    assert "--beta 3/2" in cmd and "--beta" not in replay_run(make_setting(**BASE), 30)
    args = cmd.split()[1:]
    res = CliRunner().invoke(main, args + ["--no-cross-check"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["config"]["beta"] == "3/2"
    # the replay runs in float64 and prints the digits it carries (11 here)
    assert _close(out["final"]["excess_loss"], iterate(s, 30, "reduced", "mpmath", 30).final.excess_loss, 9)


# ---------------------------------------------------------------------------------------------
# The widened family: leading terms, exponents, combination rules, conditions
# ---------------------------------------------------------------------------------------------
from verify.model import symbols as sy  # noqa: E402
from verify.reconcile import claims as rc_claims  # noqa: E402
from verify.reconcile import scaling_family as fam  # noqa: E402
from verify.reconcile import solve as rs  # noqa: E402
from verify.reconcile.constraints import constraints  # noqa: E402

X = {m.name: m.x for m in fam.MEMBERS}
G_FORM = X["eta_kq"] + 2 * X["p_norm"] + 2 * X["beta"]      # eta_KQ lambda^2 beta^2 ~ eta D^G
H_FORM = X["loss_avg"] + X["v"]                             # c_L v ~ D^H


def test_leading_terms_by_hand():
    """The family's terms are the slow-manifold terms written by hand in g = eta_KQ lambda^2 beta^2, h = c_L v,
    and reduce to the reference convention's (verify.derive.asymptotics.leading_terms) at g = eta, h = 1."""
    from verify.derive.asymptotics import leading_terms
    D, K, N, T, vn = sy.D, sy.K, sy.N, sy.T, sy.vnorm
    g = sy.eta_kq * sy.lam**2 * sy.beta**2
    h = sy.c_loss * sy.var
    hand = {"excess_loss": K * N * (D - K) / (4 * D * g * T), "s_err": sp.sqrt(N * (D - K) / (2 * g * h * T)) / vn,
            "w_err": (D - K) * sp.sqrt(K / (2 * D * g * h * T)), "tstar": K * D / (2 * g * h * vn**2)}
    terms = fam.leading_terms()
    for q, e in hand.items():
        assert sp.simplify(terms[q] - e) == 0, q
    ref = {sy.eta_kq: sy.eta, sy.lam: 1, sy.beta: 1, sy.c_loss: 1, sy.var: 1}
    for q, key in (("excess_loss", "excess_loss"), ("s_err", "s_err"), ("w_err", "w_err")):
        assert sp.simplify(terms[q].subs(ref) - leading_terms()[key]) == 0, q


@pytest.mark.slow
def test_d_exponents_by_hand():
    """From the hand terms: with N ~ D^a, ||V*||^2 ~ D^e, g ~ D^G, h ~ D^H: a - G, (a + 1 - G - H - e)/2,
    (1 - G - H)/2, 1 - G - H - e; the other exponents do not depend on the family."""
    a, e = X["N"], X["vstar2"]
    hand = {"excess_loss": a - G_FORM, "s_err": (a + 1 - G_FORM - H_FORM - e) / 2, "w_err": (1 - G_FORM - H_FORM) / 2,
            "tstar": 1 - G_FORM - H_FORM - e}
    table = fam.exponent_table()
    for q, form in hand.items():
        assert sp.expand(table[q]["D"] - form) == 0, q
    R = sp.Rational
    others = {"excess_loss": (1, 0, -1, -1), "s_err": (0, -1, R(-1, 2), R(-1, 2)), "w_err": (R(1, 2), 0, R(-1, 2), R(-1, 2)),
              "tstar": (1, -2, -1, 0)}
    for q, row in others.items():
        assert tuple(table[q][v] for v in ("K", "vnorm", "eta", "T")) == row, q
    # eta_V enters no term (the derived fact the report states): its coefficient is 0 everywhere
    assert all(sp.diff(table[q]["D"], X["eta_v"]) == 0 for q in table)
    assert fam.finite_d_factor("excess_loss") == (sy.D - sy.K) / sy.D and fam.finite_d_factor("tstar") == 1


def test_conditions_by_hand():
    """eta_V c_L v N / 2K, the delta block's eta_KQ lambda^2 beta^2 c_L v ||V*||^2 D/(K^2 (D-K)), the W_X
    relaxation D/(eta_V c_L v N) over T*, and 1 <= N <= D, as exponent forms (each <= 0)."""
    a, e = X["N"], X["vstar2"]
    hand = {"wx-stable": X["eta_v"] + H_FORM + a, "delta-stable": G_FORM + H_FORM + e,
            "wx-within-tstar": (1 - X["eta_v"] - H_FORM - a) - (1 - G_FORM - H_FORM - e),
            "n-at-least-1": -a, "n-at-most-d": a - 1}
    got = {c.id: c.form for c in constraints()}
    assert set(got) == set(hand)
    for k, form in hand.items():
        assert sp.expand(got[k] - form) == 0, k


@pytest.mark.slow
def test_combination_rules_are_proved_and_can_fail():
    from verify.reconcile.combinations import _only_through, combination_obligations, not_entering
    obs = combination_obligations()
    assert len(obs) == 6 and all(o.holds is True for o in obs), [o.name for o in obs if o.holds is not True]
    assert not_entering() == {"eta_V": True, "M": True, "d": True}
    # The same check fails for a wrong combination: beta without eta_KQ and lambda, or c_L v^2.
    from verify.reconcile.combinations import recursion
    rec = recursion()
    assert _only_through("beta alone", {"inc": rec["delta_increment"]}, {sy.beta: sy.beta**2}, "").holds is not True
    assert _only_through("c_L v^2", rec, {sy.c_loss: sy.c_loss * sy.var**2, sy.var: 1}, "").holds is not True


# Every member scaled alone (and N with the mean loss, which scales c_L = 1/N): iterated at D = 4 and 16, the
# D-exponent of each quantity / its finite-D factor against the symbolic one. Base: K = 2, N = 2 (circulant
# columns 0, 1), eta_V = 1/32, eta_KQ = 1/2, v = lambda = beta = ||V*|| = 1; every setting is inside both
# step-size conditions.
def _member_settings(name: str, D: int):
    R = Fraction
    base = dict(D=D, K=2, supports=[[0, 1], [1, 2]], vstar_norm="1", eta=R(1, 32), eta_kq=R(1, 2))
    root = {4: 2, 16: 4}[D]
    change = {"ref": {}, "vstar2": {"vstar_norm": root}, "v": {"law_var": D}, "beta": {"beta": root},
              "p_norm": {"p_lambda": root}, "eta_v": {"eta": R(1, 8 * D)}, "eta_kq": {"eta_kq": R(D, 8)},
              "N": {"supports": [[j, (j + 1) % D] for j in range(D)]},
              "N_mean": {"supports": [[j, (j + 1) % D] for j in range(D)], "loss": "mean", "eta_kq": 1}}[name]
    return make_setting(**(base | change))


MEMBER_VECTORS = {"ref": {}, "N": {"N": 1}, "vstar2": {"vstar2": 1}, "v": {"v": 1}, "beta": {"beta": sp.Rational(1, 2)},
                  "p_norm": {"p_norm": sp.Rational(1, 2)}, "N_mean": {"N": 1, "loss_avg": -1}, "eta_v": {"eta_v": -1},
                  "eta_kq": {"eta_kq": 1}}


@pytest.mark.slow
def test_every_member_exponent_against_iteration_at_two_d():
    """log(q(16)/q(4)) / log 4 of GD at T (finite-D factor divided out) equals the symbolic D-exponent within
    twice its change from T/4 to T (the O(T^-1/2) corrections halve per factor 4). The nine vectors span
    the family's eight exponents and the constant, so every coefficient of every form is tested."""
    T = 1_000_000
    names = list(MEMBER_VECTORS)
    settings = [_member_settings(n, D) for n in names for D in (4, 16)]
    res = iterate_fast(settings, T, checkpoints=[T // 4, T])
    fd = {q: sp.lambdify((sy.D, sy.K), fam.finite_d_factor(q)) for q in fam.QUANTITIES}
    table = fam.exponent_table()
    for i, n in enumerate(names):
        vec = {m.x: MEMBER_VECTORS[n].get(m.name, 0) for m in fam.MEMBERS}
        for q in fam.QUANTITIES:
            ys = [[res.data[q][2 * i + j, c] / fd[q](D, 2) for c in (0, 1)] for j, D in enumerate((4, 16))]
            at_T, at_quarter = (np.log(ys[1][c] / ys[0][c]) / np.log(4) for c in (1, 0))
            # floor 2e-3: far above float64 drift (the rounding check of confirm finds ~1e-11 over 10^6 steps)
            err = max(2 * abs(at_T - at_quarter), 2e-3)
            want = float(table[q]["D"].subs(vec))
            assert abs(at_T - want) <= err < 0.05, (n, q, at_T, at_quarter, want)


# ---------------------------------------------------------------------------------------------
# The solver on hand-made claims
# ---------------------------------------------------------------------------------------------
def _rows(claims: dict, quantities, with_conditions: bool):
    eqs = [rs.row_of(e.form, e.text()) for e in rs.equations(claims, quantities)]
    ineqs = [rs.row_of(c.form, c.text) for c in constraints()] if with_conditions else []
    return eqs, ineqs


RATES = fam.QUANTITIES


def test_claims_forcing_n_above_d_are_infeasible_with_a_checked_certificate():
    """L ~ D^4, ||S - S*|| ~ D^(3/2)/||V*||, ||W_X - V*|| ~ D^0: by hand a - G = 4, a - G - H = 2, G + H = 1, so
    a = 3 (N ~ D^3 > D): the equations have solutions, the conditions exclude them all."""
    cl = rc_claims.parse_claims({"excess_loss": {"D": 4}, "s_err": {"D": "3/2", "vnorm": -1}, "w_err": {"D": 0}})
    eqs, ineqs = _rows(cl, RATES, True)
    aff = rs.affine_solution(eqs)
    assert aff is not None and aff.general["N"] == 3            # the hand solution's a
    feasible, _ = rs.z3_feasible(eqs, ineqs)
    cert = rs.farkas(eqs, ineqs)
    assert feasible is False and cert is not None and cert.check(eqs, ineqs)
    used = cert.as_dict(eqs, ineqs)["multipliers"]
    assert any("N <= D" in m["row"] for m in used)
    assert rs.z3_feasible(eqs, [])[0] is True and rs.farkas(eqs, []) is None
    # a tampered certificate does not pass the exact check
    bad = rs.Certificate(cert.y, tuple(-z for z in cert.z) if any(cert.z) else (sp.Integer(-1),) + cert.z[1:])
    assert not bad.check(eqs, ineqs)


def test_a_false_identity_is_infeasible_with_a_certificate():
    """The leading L − L_opt is linear in K whatever the family: claiming K^2 has no solution."""
    cl = rc_claims.parse_claims({"excess_loss": {"D": 4, "K": 2}})
    eqs, _ = _rows(cl, RATES, False)
    assert rs.affine_solution(eqs) is None and rs.z3_feasible(eqs, [])[0] is False
    cert = rs.farkas(eqs, [])
    assert cert.check(eqs, []) and [m["row"] for m in cert.as_dict(eqs, [])["multipliers"]] == [
        "L − L_opt, exponent of K: derived 1 = claimed 2"]


def test_reference_exponents_give_zero_and_the_free_directions():
    """Claiming the reference convention's own exponents (D^0, D^(1/2)/||V*||, D^(1/2) sqrt(K)): the point is 0,
    and the directions are, by hand, vstar2, eta_v, v - loss_avg, beta - 2 eta_kq, p_norm - 2 eta_kq."""
    cl = rc_claims.parse_claims({"excess_loss": {"D": 0, "K": 1, "eta": -1, "T": -1, "vnorm": 0},
                                 "s_err": {"D": "1/2", "vnorm": -1}, "w_err": {"D": "1/2", "K": "1/2"}})
    eqs, _ = _rows(cl, RATES, False)
    aff = rs.affine_solution(eqs)
    assert all(v == 0 for v in aff.point.values()) and len(aff.directions) == 5
    unit = lambda **kw: [kw.get(n, 0) for n in rs.UNKNOWNS]  # noqa: E731
    hand = sp.Matrix([unit(vstar2=1), unit(eta_v=1), unit(v=1, loss_avg=-1), unit(beta=1, eta_kq=-2),
                      unit(p_norm=1, eta_kq=-2)])
    got = sp.Matrix([[d[n] for n in rs.UNKNOWNS] for d in aff.directions])
    assert hand.rank() == got.rank() == sp.Matrix.vstack(hand, got).rank() == 5


def test_a_claim_set_with_a_known_solution_recovers_it():
    """Claims computed by hand at x* = (N 1, vstar2 2, v -1, eta_kq -2, others 0): L ~ D^3, ||S - S*|| ~ D^(3/2),
    ||W_X - V*|| ~ D^2, T* ~ D^2. Every solution has N ~ D^1, ||V*||^2 ~ D^2, g ~ D^-2, h ~ D^-1, and x* is one."""
    cl = rc_claims.parse_claims({"excess_loss": {"D": 3}, "s_err": {"D": "3/2"}, "w_err": {"D": 2}, "tstar": {"D": 2}})
    eqs, ineqs = _rows(cl, (*RATES, "tstar"), False)
    aff = rs.affine_solution(eqs)
    gen = {X[n]: e for n, e in aff.general.items()}
    assert aff.general["N"] == 1 and aff.general["vstar2"] == 2
    assert sp.expand(G_FORM.subs(gen)) == -2 and sp.expand(H_FORM.subs(gen)) == -1
    star = {n: 0 for n in rs.UNKNOWNS} | {"N": 1, "vstar2": 2, "v": -1, "eta_kq": -2}
    assert rs.satisfies({n: sp.Integer(v) for n, v in star.items()}, eqs, [])


def test_paper_claims_over_the_widened_family():
    """Theorem 3.1's rates alone: a 5-dimensional family with T* ~ D^(4 - vstar2) (by hand: 1 - G - H - e with
    G + H = -3); T* ~ D^2 as stated then needs ||V*||_F^2 ~ D^2, and the conditions leave eta_V ~ eta D^x with
    -2 <= x <= -1. Read as D^2/(eta ||V*||^2) the T* equation is 1 - G - H = 2 against G + H = -3: no member."""
    from verify.reconcile.systems import groups_of, system_json, systems_for
    cl = rc_claims.default_claims()
    by = {s.id: s for s in systems_for(cl, "T* ~ D^2")}
    rates = system_json(by["rates"], groups_of(cl))
    assert rates["dimension"] == 5 and sp.sympify(rates["general"]["tstar_exponent"]) == 4 - sp.Symbol("t_vstar2")
    assert rates["holds"]["tstar"] == "where t_vstar2 = 2"
    joint = system_json(by["rates+tstar+conditions"], groups_of(cl))
    assert joint["feasible"] is True and joint["general"]["exponents"]["vstar2"] == {"exponent": "2"}
    assert joint["holds"]["wx-stable"] == "where t_eta_v <= -1" and joint["holds"]["wx-within-tstar"] == "where t_eta_v >= -2"
    w = joint["witness"]["exponents"]
    assert w["N"] == {"exponent": "1"} and w["eta_v"] == {"exponent": "-1"} and w["eta_kq"] == {"exponent": "-3"}
    other = systems_for(rc_claims.default_claims(rc_claims.TSTAR_READINGS[1]), "other", False)
    assert [s.id for s in other] == ["rates+tstar", "rates+tstar+conditions"]
    assert all(s.feasible is False and s.certificate.check(list(s.eqs), list(s.ineqs)) for s in other)


def test_an_unchecked_infeasibility_is_not_a_refutation():
    """z3 says empty but no certificate checks: the system is undecided and its record fails, never refutes."""
    import dataclasses
    from verify.evidence import decide
    from verify.reconcile.analysis import SCOPE, system_records
    from verify.reconcile.systems import systems_for
    s = systems_for(rc_claims.default_claims(rc_claims.TSTAR_READINGS[1]), "other", False)[1]
    assert s.feasible is False and decide(system_records(s), SCOPE).verdict == "refuted"
    forged = dataclasses.replace(s, certificate=rs.Certificate(s.certificate.y, tuple(-z - 1 for z in s.certificate.z)))
    assert forged.feasible is None
    recs = system_records(forged)
    assert recs[0]["role"] == "failed" and decide(recs, SCOPE).verdict == "inconclusive"


# ---------------------------------------------------------------------------------------------
# Numerical confirmation (small grid) and the CLI
# ---------------------------------------------------------------------------------------------
def test_confirm_fits_the_representative_on_a_small_grid():
    """The joint witness (N ~ D, ||V*||^2 ~ D^2, eta_V ~ eta/D, eta_KQ ~ eta D^-3) realised for D = 8..64: the fits
    of q / finite-D factor agree with 4, 3/2, 2; raw fit - divided fit = the slope of the factor itself."""
    from verify.engines.fits import loglog_slope
    from verify.reconcile.confirm import confirm
    from verify.reconcile.realise import K_NUM, Budget, realise
    small = Budget((8, 16, 32, 64), 100, 10**7, 60)
    vec = {"N": 1, "vstar2": 2, "v": 0, "beta": 0, "p_norm": 0, "loss_avg": 0, "eta_v": -1, "eta_kq": -3}
    target = {"excess_loss": sp.Integer(4), "s_err": sp.Rational(3, 2), "w_err": sp.Integer(2)}
    out = confirm(realise({k: Fraction(v) for k, v in vec.items()}, small), target, small, "representative")
    assert out["ran"] and out["all_agree"], out["fits"]
    factor = {"excess_loss": lambda D: 1 - K_NUM / D, "s_err": lambda D: (1 - K_NUM / D) ** 0.5,
              "w_err": lambda D: 1 - K_NUM / D}
    for q, f in out["fits"].items():
        assert abs(f["exponent"] - float(target[q])) <= f["error"] < 0.2, (q, f)
        slope = loglog_slope(small.Ds, [factor[q](D) for D in small.Ds])[0]
        assert abs(f["raw_exponent"] - f["exponent"] - slope) < 1e-9, q
        assert abs(f["exponent"] - 0.5) > 10 * f["error"]          # far from the reference's exponents
    assert out["rounding_check"]["max_relative_difference"] < 1e-6
    assert all(r["g_over_g_max"] <= 0.8 and r["eta_V_h_N_over_K"] <= 1 for r in out["regimes"])


def test_unrealisable_member_is_reported_not_run():
    from verify.reconcile.confirm import confirm
    from verify.reconcile.realise import budget, realise
    vec = {m.name: Fraction(0) for m in fam.MEMBERS} | {"N": Fraction(5, 2)}
    rz = realise(vec, budget("ci"))
    assert rz.ok is False and "not an integer" in rz.why
    res = confirm(rz, {}, budget("ci"), "N ~ D^(5/2)")
    assert res["ran"] is False and res["evidence"][0]["role"] == "failed"


def test_budgets_follow_the_profiles():
    from verify.model.profiles import PROFILES
    from verify.reconcile.realise import BUDGETS, budget
    assert set(BUDGETS) == set(PROFILES)
    with pytest.raises(InvalidParameter, match="profile"):
        budget("huge")


def _cli(args):
    return CliRunner().invoke(main, ["reconcile", *args])


MEMBER_NAMES = {m.name for m in fam.MEMBERS}


def _exponent_dicts_are_named(obj) -> int:
    """Every dict keyed by the members maps each to {"exponent": str}; returns how many were seen."""
    n = 0
    if isinstance(obj, dict):
        if set(obj) == MEMBER_NAMES:
            assert all(isinstance(v, dict) and set(v) == {"exponent"} and isinstance(v["exponent"], str)
                       for v in obj.values()), obj
            n += 1
        n += sum(_exponent_dicts_are_named(v) for v in obj.values())
    elif isinstance(obj, list):
        n += sum(_exponent_dicts_are_named(v) for v in obj)
    return n


BARE = r"\b(N|vstar2|v|beta|p_norm|loss_avg|eta_v|eta_kq|a|b|c|g|h) = -?\d"


@pytest.mark.slow
def test_cli_json_and_text_without_numerics():
    import re
    res = _cli(["--json", "--no-numerics"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["verdicts"]["rates_tstar_conditions"]["verdict"] == "proved"
    assert out["verdicts"]["with-eta-and-vnorm:rates_tstar_conditions"]["verdict"] == "refuted"
    assert out["statements"][0]["role"] == "primary" and "over the family {" in out["statements"][0]["scope_label"]
    assert out["representative"]["exponents"]["vstar2"] == {"exponent": "2"}
    assert _exponent_dicts_are_named(out) > 10 and not re.search(BARE, res.output)
    # an impossibility is stated only with its checked certificate, in the JSON and in the text
    for rd in out["readings"]:
        for s in rd["systems"]:
            assert (s["feasible"] is False) == bool(s["certificate"] and s["certificate"]["checked"]), s["id"]
    text = _cli(["--no-numerics"]).output
    lines = text.splitlines()
    impossible = [i for i, ln in enumerate(lines) if "IMPOSSIBLE" in ln]
    assert impossible and all(lines[i + 1].strip().startswith("certificate:") and "0 = -1" in lines[i + 1]
                              for i in impossible)
    assert "N ∝ D^1" in text and "η_KQ λ² β² ∝ η D^-3" in text and not re.search(BARE, text)


@pytest.mark.slow
def test_cli_claims_files(tmp_path):
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps({"excess_loss": {"D": 0, "K": "1"}, "s_err": {"D": "1/2", "vnorm": -1},
                               "w_err": {"D": "0.5"}}))
    out = json.loads(_cli(["--json", "--no-numerics", "--claims", str(ref)]).stdout)
    (rd,) = out["readings"]
    rates = rd["systems"][0]
    assert all(v == {"exponent": "0"} for v in rates["point"].values()) and rates["dimension"] == 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"excess_loss": {"D": 4, "K": 2}, "s_err": {"D": "5/2"}, "w_err": {"D": 2}}))
    res = _cli(["--json", "--no-numerics", "--claims", str(bad)])
    out = json.loads(res.stdout)
    assert out["representative"] is None and out["verdicts"]["rates"]["verdict"] == "refuted"
    s = out["readings"][0]["systems"][0]
    assert s["status"] == "empty" and s["certificate"]["checked"] and "exponent of K" in s["certificate"]["multipliers"][0]["row"]


@pytest.mark.parametrize("content,needle", [
    ("{not json", "claims"),
    ('["excess_loss"]', "claims"),
    ("{}", "claims"),
    ('{"speed": {"D": 1}}', "claims"),
    ('{"loss": {"D": 4}}', "claims"),
    ('{"excess_loss": {"X": 1}}', "claims.excess_loss"),
    ('{"excess_loss": {"D": "four"}}', "claims.excess_loss.D"),
    ('{"excess_loss": {"D": [4]}}', "claims.excess_loss.D"),
    ('{"excess_loss": 4}', "claims.excess_loss"),
    ('{"tstar": {"T": 1}}', "claims.tstar"),
    ('{"tstar": {"D": 2}}', "claims"),
])
def test_malformed_claims_file_exits_2_with_one_line(tmp_path, content, needle):
    f = tmp_path / "claims.json"
    f.write_text(content)
    res = _cli(["--json", "--no-numerics", "--claims", str(f)])
    errors = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
    # the file is named by its flag; the part of it that is wrong by its path inside the JSON
    assert res.exit_code == 2 and len(errors) == 1 and "invalid --claims" in errors[0], res.output
    assert needle == "claims" or f"({needle} " in errors[0], res.output
    assert "Traceback" not in res.output


def test_missing_claims_file_exits_2():
    res = _cli(["--claims", "/nonexistent/claims.json"])
    assert res.exit_code == 2 and "invalid --claims" in res.output and "Traceback" not in res.output


@pytest.mark.slow
def test_reconcile_part_ci_end_to_end():
    """The whole analysis at the ci budget: the joint system feasible, GD agrees, the figure and its caption
    quote the fits with the raw fits beside them."""
    import re
    from verify.reconcile.figure import convention_figure
    from verify.reconcile.reconcile_part import reconcile_part
    res = json.loads(json.dumps(reconcile_part("ci"), default=str))
    assert res["verdict"] == "proved" and res["verdicts"]["numerics_agree"]["verdict"] == "supported"
    num = res["representative"]["numerics"]
    assert num["all_agree"] and "divided out before fitting" in num["fit_note"]
    assert all("raw_exponent" in f for f in num["fits"].values())
    png, caption = convention_figure(res)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "divided out before fitting" in caption and "raw" in caption
    assert not re.search(BARE, res["finding"]) and "N ∝ D^1" in res["finding"]
