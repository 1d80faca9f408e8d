"""Theorem 3.1's lower bound with a D-uniform constant, decided from the atlas (verify.certify.uniform_constant).

Checked against hand values: the ratios leading_q/f_q on the committed atlas's ray K = D/16, N = 1, worked out by
hand from the derived leading terms and the claimed orders; the replayed member's certified bounds against the
closed-form leading terms in plain floats; the compiled float64 recursion of a small member of the ray against
the bound's shape; and the negative control: the corrected statement (orders = the leading terms themselves) is not
refuted by the same machinery."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy as sp

from verify.evidence.leading_terms import terms
from lemmas.theorem_3_1 import HYPOTHESES
from verify.certify.uniform_constant import bounds_on_ray, uniform_constant_record
from verify.engines.fast import iterate_fast
from verify.model.paper import theorem_3_1_orders
from verify.model.setting import make_setting
from verify.model.symbols import D

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def refutation():
    return uniform_constant_record(theorem_3_1_orders(), terms(), HYPOTHESES)


def test_the_ratios_on_the_ray_are_the_hand_values():
    # by hand, K = D/16, N = 1: L: K N (D - K)/(4 D T eta) / (K D^4/(eta T)) = (15 D/16)/(4 D^5) = 15/(64 D^4);
    # S: sqrt(N (D - K)/2)/D^(5/2) = sqrt(30)/(8 D^2); W: (D - K)/(sqrt(2) D^(5/2)) = 15 sqrt(2)/(32 D^(3/2))
    B = bounds_on_ray(theorem_3_1_orders(), terms(), {q: Fraction(1) for q in theorem_3_1_orders()}, Fraction(1, 16))
    want = {"excess_loss": sp.Rational(15, 64) / D**4, "s_err": sp.sqrt(30) / (8 * D**2),
            "w_err": 15 * sp.sqrt(2) / (32 * D**sp.Rational(3, 2))}
    for q, w in want.items():
        assert sp.simplify(B[q] - w) == 0, q


def test_the_committed_atlas_refutes_every_uniform_constant(refutation):
    r = refutation
    assert r["holds"] is False and r["kind"] == "arb" and r["role"] == "test"
    m = r["member"]
    Dm, Km, N, eta, v = m["D"], m["K"], m["N"], float(sp.Rational(m["eta"])), float(sp.Rational(m["vstar_norm"]))
    assert Km * 16 == Dm and N == 1                                  # on the ray rho = 1/16
    assert eta * N / Km == pytest.approx(1 / 64) and v**2 / (Km * N) == pytest.approx(1 / 4)   # x, kappa in the cell
    T = 1e12
    claimed = {"excess_loss": Km * Dm**4 / (eta * T), "s_err": Dm**2.5 / (v * math.sqrt(eta * T)),
               "w_err": Dm**2 * math.sqrt(Km / (eta * T))}
    leading = {"excess_loss": Km * N * (Dm - Km) / (4 * Dm * T * eta),
               "s_err": math.sqrt(2 * N * (Dm - Km)) / (2 * math.sqrt(T * eta) * v),
               "w_err": math.sqrt(2 * Km) * (Dm - Km) / (2 * math.sqrt(Dm * T * eta))}
    for q in claimed:
        ratio = r["replay_ratios"][q]
        assert ratio < 1e-9                                           # below the replayed c_lo
        # the certified bound at T = 10^12 is the leading term to within the cell's relative width
        assert ratio * claimed[q] == pytest.approx(leading[q], rel=1e-3)


def test_the_float64_recursion_of_a_small_member_has_the_ray_s_ratio():
    # D = 64, K = 4, N = 1, x = eta N/K = 1/64, kappa = ||V*||^2/(K N) = 1/4: T (L - L_opt) eta/(K D^4) tends to
    # 15/(64 D^4) (hi_q = 1 + 1e-15); at T = 4e5 (32 T0) the corrections, O(T^-1/2), are a few percent
    s = make_setting(D=64, K=4, N=1, preset="sts", eta="1/16", vstar_norm="1")
    T = 400_000
    r = iterate_fast(s, T, checkpoints=[T])
    L = float(r.data["excess_loss"][0, -1])
    got = L * (1 / 16) * T / (4 * 64**4)
    assert got == pytest.approx(15 / (64 * 64**4), rel=0.05)


def test_the_corrected_statement_is_not_refuted():
    # the same machinery with f_q = leading_q: B_q = hi_q does not tend to 0, so nothing is refuted
    leading = {q: terms()[q] for q in theorem_3_1_orders()}
    r = uniform_constant_record(leading, leading, HYPOTHESES)
    assert r["holds"] is None and r["role"] == "context" and "do not tend to 0" in r["result"]


def test_a_ray_member_lands_exactly_on_its_point_for_a_rho_whose_numerator_is_no_square():
    # rho* = 3/16: K = 3 m is not a square times the kappa factor unless m carries the 3; by hand for sts (c_L = v =
    # lambda = beta = 1, N = 1): K/D = 3/16, x = eta N/K = 1/64, kappa = ||V*||^2/(K N) = 1/4, ||V*|| rational
    from verify.certify.atlas_evidence import COMMITTED_ATLAS, rechecked_atlas
    from verify.certify.uniform_constant import ray_member
    data, _ = rechecked_atlas(str(COMMITTED_ATLAS))
    rho = Fraction(3, 16)
    B = bounds_on_ray(theorem_3_1_orders(), terms(), {q: Fraction(1) for q in theorem_3_1_orders()}, rho)
    s, Dm = ray_member(data, (rho, Fraction(1, 64), Fraction(1, 4)), B, Fraction(1, 10**6), HYPOTHESES)
    assert Fraction(s.K, Dm) == rho and s.N == 1
    assert Fraction(s.eta_v) * s.N / s.K == Fraction(1, 64)
    assert Fraction(s.vstar_norm) ** 2 / (s.K * s.N) == Fraction(1, 4)
    assert all(float(b.subs(D, Dm)) < 1e-6 for b in B.values())
