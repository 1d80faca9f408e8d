"""Step-size conditions derived from the loss: positivity of alpha (Lemma C.2) and loss monotonicity.

sigma = identity, centred entries (mu = 0), W_P = 0. From the closed form of verify.derive.loss,
dL/dW_X = c_L v (||S||_F^2 W_X - <S, S*> V*) for *any* attention S, so from W_X(0) = 0 the W_X block
stays on the line through V* (every row a multiple alpha of the same row of V*) and

    alpha(t+1) = (1 - eta_V c_L v ||S(t)||_F^2) alpha(t) + eta_V c_L v <S(t), S*>.          (*)

On the two-valued columns GD keeps (verify.derive.reduction_proof), ||S||_F^2 <= N max(1/K, 1/(D - K)) and
<S, S*> > 0 when K >= 1 (softmax entries are positive). Hence, by induction on t, eta_V c_L v N <= min(K, D - K)
(<= K at K = D) gives alpha(t) >= eta_V c_L v <S(t-1), S*> > 0 for every t >= 1: Lemma C.2 for sigma = identity
over that part of its step-size range (positivity_obligations); the rest of the range, up to 2K, is
large_step_obligations (open) and, at K = D, k_equals_d_obligations (proved).

Loss monotonicity: two curvatures bound the admissible step along the trajectory.
- W_X block: d^2 L / d alpha^2 / ||V*||^2 = c_L v ||S||^2 -> c_L v N / K as S -> S*; GD on this
  block diverges (the loss eventually increases) when eta_V > eta_alpha = 2 K / (c_L v N).
- delta block (the on/off logit gap), along the slow manifold alpha = alpha*(delta) (the alpha
  block is fast): the effective curvature is the Schur complement
  H(delta) = lambda^2 D / (N K (D - K)) (r_dd - r_ad^2 / r_aa); with x = K e^{2 delta} / (D - K) it
  equals 2 D c_L lambda^2 v ||V*||^2 / (K^2 (D - K)) * x (x - 1) / (1 + x)^3, whose maximum over
  x > 0 is at x = 2 + sqrt(3) with value sqrt(3)/18. So eta_delta = 6 sqrt(3) K^2 (D - K) /
  (D c_L lambda^2 v ||V*||^2).
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..evidence import Scope
from ..model.hypotheses import IID_MOMENTS
from ..model.sigmas.identity import Identity
from ..model.symbols import D, K, N, alpha, beta, c_loss, delta, eta_kq, eta_v, lam, values_at, var, vn, vnorm
from ..run.cache import by_code_version
from .obligations import Obligation, ProofReport, smt_obligation, solver_library, stopwatch
from .reduced_map import reduced, reduced_step_exprs
from .reduction_proof import prove_identity_general

E = sp.Symbol("E", positive=True)       # e^delta
x = sp.Symbol("x", positive=True)       # K e^{2 delta} / (D - K)


@lru_cache(maxsize=None)
def alpha_recursion_identity(cases=("interior", "k-equals-d")) -> tuple[bool, str]:
    """(*) in the reduced coordinates, for each case of K: alpha' - [(1 - x ||s||^2) alpha + x <s,s*>] == 0 with
    x = eta_V c_L v N (verify.derive.reduced_map's step for sigma = identity)."""
    ok = True
    for case in cases:
        a_next, _ = reduced_step_exprs(Identity(), case)
        cols = reduced(Identity(), case).cols
        rhs = (1 - eta_v * c_loss * var * N * cols["sq_s"]) * alpha + eta_v * c_loss * var * N * cols["c_ss"]
        ok = ok and sp.simplify(a_next - rhs) == 0
    return ok, ("alpha' = (1 - eta_V c_L v ||S||^2) alpha + eta_V c_L v <S,S*>  (||S||^2 = N ||s||^2, "
                f"<S,S*> = N <s,s*>; cases {', '.join(cases)})")


@lru_cache(maxsize=None)
@by_code_version("delta-curvature")
def delta_curvature() -> dict:
    """The slow-manifold curvature of the delta block, its closed form in x and its maximum (a SymPy derivation of
    about two seconds, kept on disk per code version: every float64 overflow's advice quotes its threshold)."""
    red = reduced(Identity(), "interior")
    r = red.r.subs(vn, vnorm**2)
    raa, rad, rdd = sp.diff(r, alpha, 2), sp.diff(r, alpha, delta), sp.diff(r, delta, 2)
    a_star = red.cols["c_ss"] / red.cols["sq_s"]
    H = lam**2 * D / (N * K * (D - K)) * (rdd - rad**2 / raa)
    H_E = sp.factor(sp.simplify(H.subs(alpha, a_star).subs(delta, sp.log(E))))
    pref = 2 * D * c_loss * lam**2 * var * vnorm**2 / (K**2 * (D - K))
    h = x * (x - 1) / (1 + x) ** 3
    closed_ok = sp.simplify(H_E - (pref * h).subs(x, K * E**2 / (D - K))) == 0
    crit = sp.solve(sp.diff(h, x), x)
    hmax = sp.nsimplify(sp.simplify(h.subs(x, 2 + sp.sqrt(3))))
    # the maximum is global on x > 0: h is smooth there, h(0+) = h(+inf) = 0, and its only critical
    # points are 2 - sqrt(3) (where h < 0) and 2 + sqrt(3) (where h = sqrt(3)/18 > 0)
    xmax = (set(crit) == {2 - sp.sqrt(3), 2 + sp.sqrt(3)} and sp.limit(h, x, 0, "+") == 0
            and sp.limit(h, x, sp.oo) == 0 and h.subs(x, 2 - sp.sqrt(3)).is_negative and hmax.is_positive)
    return {"H_E": H_E, "closed_form_ok": closed_ok, "x_max": 2 + sp.sqrt(3), "x_max_ok": bool(xmax),
            "critical_points": crit, "h_max": hmax, "H_max": sp.simplify(pref * hmax)}


@lru_cache(maxsize=None)
def loss_thresholds() -> dict:
    """eta_alpha (W_X block, asymptotic divergence) and eta_delta (delta block) and their minimum."""
    eta_alpha = 2 * K / (c_loss * var * N)
    eta_delta = sp.simplify(2 / delta_curvature()["H_max"])
    return {"eta_alpha": eta_alpha, "eta_delta": eta_delta, "eta_c": sp.Min(eta_alpha, eta_delta)}


def thresholds_at(setting) -> dict:
    """The thresholds at one setting's exact parameters (SymPy numbers; eta_delta is irrational)."""
    th = loss_thresholds()
    vals = values_at(setting)
    # lambda and beta enter the delta block only as (lambda beta)^2 (verify.derive.reduced_map)
    vals[lam] = vals[lam] * vals.pop(beta)
    a = sp.nsimplify(th["eta_alpha"].subs(vals))
    dl = sp.simplify(th["eta_delta"].subs(vals))
    return {"eta_alpha": a, "eta_delta": dl, "eta_c": sp.Min(a, dl)}


# ---- Lemma C.2 (sigma = identity) as solver-discharged obligations ---------------------------------
# Lemma C.2 for sigma = identity rests on (*) with x = eta_V c_L v N: alpha(t+1) = (1 - x ||s||^2) alpha + x p_on
# for the two-valued columns GD keeps (p_on = e^delta / Z, Z = K e^delta + D - K). The factor 1 - x ||s||^2 is
# >= 0 when x <= min(K, D - K) (or x <= K at K = D): ||s||^2 is convex in the support mass m = K p_on, so it is at
# most max(1/K, 1/(D - K)), its values at m = 1 and m = 0. Then alpha >= 0 gives alpha' >= x p_on > 0, whatever
# delta does. For larger x (up to the statement's 2K) the factor can be negative; the induction then needs
# delta(t) >= 0 for all t (m >= K/D gives ||s||^2 <= 1/K) and an upper bound on alpha, and neither closes in one
# step (large_step_obligations shows where). Every step names the hypotheses it uses (Obligation.assumes).
IDENTITY = Scope("all", ("identity",), "all", "all")
ANY_SIGMA = Scope("all", "all", "all", "all")


# Every SMT statement below is written once, as a function of a solver's z3-style API ``lib`` (z3 itself or
# cvc5.pythonic), and decided by both solvers (verify.derive.obligations.smt_obligation).
def _counts(lib, *ns):
    """What 'n is a number of entries' gives over the reals: 0 or at least 1."""
    return [lib.Or(n == 0, n >= 1) for n in ns]


def block_column(lib=None):
    """A two-valued column in block form with symbolic counts K (on the support, >= 1) and n = D - K (off it):
    reals of ``lib`` (default z3) and the column's quantities times Z^2 (Z = K E + n > 0, E = e^delta > 0), so that
    every statement about it is polynomial: {"K", "n", "E", "Z", "sq_Z2": ||s||^2 Z^2, "p_on_Z": p_on Z, "base"}."""
    lib = lib or solver_library("z3")
    K_, n, E_ = lib.Reals("K n E")
    Z = K_ * E_ + n
    return {"K": K_, "n": n, "E": E_, "Z": Z, "sq_Z2": K_ * E_ * E_ + n, "p_on_Z": E_,
            "base": [K_ >= 1, E_ > 0] + _counts(lib, n), "lib": lib}


def small_step(col, x):
    """The step-size hypothesis of the small-step part in block form: x <= K, and x <= n unless n = 0 (K = D)."""
    return [x > 0, x <= col["K"], col["lib"].Or(col["n"] == 0, x <= col["n"])]


def next_alpha_Z2(col, x, a):
    """alpha(t+1) Z^2 by (*): alpha (Z^2 - x ||s||^2 Z^2) + x p_on Z Z."""
    return a * (col["Z"] * col["Z"] - x * col["sq_Z2"]) + x * col["p_on_Z"] * col["Z"]


def recursion_obligation(cases=("interior", "k-equals-d")) -> Obligation:
    """(*) from the matrix-calculus gradient of W_X (any S) and verify.derive.reduced_map's step (SymPy)."""
    with stopwatch() as t:
        gx = prove_identity_general().obligations[0]
        rec_ok, rec_txt = alpha_recursion_identity(cases)
    return Obligation(
        "alpha(t+1) = (1 - eta_V c_L v ||S||^2) alpha(t) + eta_V c_L v <S,S*> (W_X(t) = alpha(t) V*)",
        True if (gx.holds is True and rec_ok) else None,
        f"{gx.name}: {gx.status} (the loss convention c_L scales it); reduced coordinates: {rec_txt}",
        "matrix calculus", IDENTITY, seconds=gx.seconds + t(), assumes=IID_MOMENTS)


def column_obligations() -> list[Obligation]:
    """The column facts of the small-step induction, for two-valued softmax columns in block form (symbolic K,
    D, N, delta): <S, S*> > 0 when K >= 1, and 1 - x ||s||^2 >= 0 under the small-step hypothesis."""
    def positive(lib):
        c = block_column(lib)
        return c["base"], c["p_on_Z"] * c["Z"] > 0

    def factor(lib):
        c, x = block_column(lib), lib.Real("x")
        return c["base"] + small_step(c, x), c["Z"] * c["Z"] - x * c["sq_Z2"] >= 0
    return [smt_obligation("<S, S*> = N p_on > 0 when K >= 1 (softmax entries are positive)", positive, ANY_SIGMA,
                           "<S, S*> = N K p_on (1/K), p_on = e^delta / Z", assumes=("uniform-S*", "K>0"),
                           key="c2-positive"),
            smt_obligation("1 - x ||s||^2 >= 0 for every two-valued column when x <= K and x <= D - K (x <= K if "
                           "K = D)", factor, ANY_SIGMA, "x = eta_V c_L v N; ||s||^2 = (K E^2 + n)/Z^2 <= max(1/K, 1/n), "
                           "n = D - K", assumes=("uniform-S*", "eta-small-step"), key="c2-factor")]


def step_hypotheses(small: bool = True, lib=None):
    """The small-step induction step in block form: (hypotheses, alpha(t+1) Z^2, variables), in ``lib``'s reals
    (default z3). ``small=False`` keeps only the statement's x < 2K (the negative control)."""
    c = block_column(lib)
    x, a = c["lib"].Reals("x alpha")
    hyp = c["base"] + [a >= 0] + (small_step(c, x) if small else [x > 0, x < 2 * c["K"]])
    return hyp, next_alpha_Z2(c, x, a), dict(c, x=x, alpha=a)


@lru_cache(maxsize=None)
def positivity_obligations() -> ProofReport:
    """Lemma C.2 for sigma = identity and x = eta_V c_L v N <= min(K, D - K) (x <= K at K = D), as obligations
    (every dimension, every t >= 1):
      recursion  (*) (matrix calculus, SymPy; the two-valued columns are the reduction's, cited by the claim);
      columns    <S,S*> > 0 and 1 - x ||s||^2 >= 0 (z3, block form);
      step       alpha >= 0 => alpha(t+1) > 0 (z3, nonlinear reals);
      base       alpha(0) = 0 (zero initialisation), so by induction alpha(t) > 0 for all t >= 1.
    Negative controls (outside the hypotheses, expected disproved with a counterexample): the step under the
    statement's x < 2K only, and K = 0 (<S, S*> = 0)."""
    rep = ProofReport("identity", {"M": "M", "d": "d", "D": "D", "N": "N", "K": "K"})
    rep.obligations.append(recursion_obligation())
    rep.obligations.extend(column_obligations())

    def step(small):
        def build(lib):
            hyp, a_next, _ = step_hypotheses(small, lib)
            return hyp, a_next > 0
        return build

    def no_teacher(lib):
        hyp, _, v = step_hypotheses(True, lib)
        return hyp, v["alpha"] * (v["Z"] * v["Z"] - v["x"] * v["sq_Z2"]) > 0      # (*) with <S, S*> = 0

    def base(lib):
        a0 = lib.Real("alpha_0")
        return [a0 == 0], a0 >= 0
    rep.obligations.append(smt_obligation("induction step: alpha >= 0 => alpha(t+1) > 0 when x <= min(K, D - K) "
                                          "(x <= K if K = D)", step(True), IDENTITY,
                                          "alpha(t+1) Z^2 = alpha (Z^2 - x (K E^2 + n)) + x E Z; alpha(t+1) > 0 gives "
                                          "the next step's alpha >= 0", assumes=("uniform-S*", "K>0", "eta-small-step"),
                                          key="c2-step"))
    rep.obligations.append(smt_obligation("base: alpha(0) = 0 (W_X(0) = 0) satisfies the step's hypothesis alpha >= 0",
                                          base, IDENTITY, "zero initialisation", assumes=("zero-init",),
                                          key="c2-base"))
    # negative controls: each drops one hypothesis; the solvers must find a counterexample
    rep.obligations.append(smt_obligation("negative control: the step under x < 2K only", step(False), IDENTITY,
                                          "without x <= min(K, D - K) the factor 1 - x ||s||^2 can be negative",
                                          role="outside", key="c2-outside-large-x"))
    rep.obligations.append(smt_obligation("negative control: K = 0 (<S,S*> = 0)", no_teacher, IDENTITY,
                                          "alpha stays 0 when S* = 0 (reviewer question 4)", role="outside",
                                          key="c2-outside-k-zero"))
    return rep


@lru_cache(maxsize=None)
def k_equals_d_obligations() -> ProofReport:
    """Lemma C.2 at K = D for the whole statement's range 0 < x < 2K: S = S* stays uniform (||s||^2 = 1/K,
    p_on = 1/K), so alpha' = (1 - x/K) alpha + x/K with |1 - x/K| < 1, and [0, 2] is an invariant interval on
    which alpha' > 0 (z3)."""
    rep = ProofReport("identity, K = D", {"M": "M", "d": "d", "D": "D", "N": "N", "K": "D"})
    rep.obligations.append(recursion_obligation(("k-equals-d",)))

    def step(lib):
        Kd, x, a = lib.Reals("K x alpha")
        nxt = (1 - x / Kd) * a + x / Kd
        return [Kd >= 1, x > 0, x < 2 * Kd, a >= 0, a <= 2], lib.And(nxt > 0, nxt <= 2)

    def base(lib):
        a0 = lib.Real("alpha_0")
        return [a0 == 0], lib.And(a0 >= 0, a0 <= 2)
    rep.obligations.append(smt_obligation("[K = D] induction step: 0 <= alpha <= 2 => 0 < alpha(t+1) <= 2 when "
                                          "0 < x < 2K", step, IDENTITY, "alpha(t+1) = (1 - x/K) alpha + x/K",
                                          assumes=("K=D", "eta-stable")))
    rep.obligations.append(smt_obligation("base: alpha(0) = 0 lies in [0, 2]", base, IDENTITY, "zero initialisation",
                                          assumes=("zero-init",)))
    return rep


def delta_increment_Z3(col, kappa, a):
    """The delta step times Z^3 in block form: Delta Z^3 = kappa E alpha (Z - alpha K (E - 1)), with
    kappa = eta_KQ lambda^2 beta^2 c_L v D ||V*||^2 / K (verify.derive.reduced_map's increment for sigma = identity;
    checked by :func:`delta_increment_identity`)."""
    return kappa * col["E"] * a * (col["Z"] - a * col["K"] * (col["E"] - 1))


@lru_cache(maxsize=None)
def delta_increment_identity() -> tuple[bool, str]:
    """verify.derive.reduced_map's delta increment for sigma = identity (summed over the M rows, all alpha_m = alpha)
    equals kappa p_on p_off alpha (1 - alpha K (p_on - p_off)) with kappa = eta_KQ lambda^2 beta^2 c_L v D
    ||V*||^2 / K: the form :func:`delta_increment_Z3` states in block form (SymPy)."""
    _, inc = reduced_step_exprs(Identity(), "interior")
    Ee = sp.exp(delta)
    Z = K * Ee + D - K
    p_on, p_off = Ee / Z, 1 / Z
    kappa = eta_kq * lam**2 * beta**2 * c_loss * var * D * vn / K
    want = kappa * p_on * p_off * alpha * (1 - alpha * K * (p_on - p_off))
    ok = sp.simplify(inc - want) == 0
    return ok, "delta(t+1) - delta(t) = kappa p_on p_off alpha (1 - alpha K (p_on - p_off)) per row (||v*_m||^2 = vn)"


def open_step(name: str, attempt: Obligation, why: str, assumes) -> Obligation:
    """A proof step the solver did not close, shown as open (holds None, never proved, never a counterexample
    to the statement): ``attempt`` is the one-step implication the solvers decided, whose counterexample (a state
    the recursion need not reach) is kept in the detail."""
    return Obligation(name, None, f"open: {why}; the solvers {attempt.status} the one-step implication"
                      + (f" (counterexample {attempt.counterexample})" if attempt.counterexample else "")
                      + "; " + attempt.detail, "smt", IDENTITY, attempt.counterexample, seconds=attempt.seconds,
                      assumes=tuple(assumes), solvers=attempt.solvers)


@lru_cache(maxsize=None)
def large_step_obligations() -> ProofReport:
    """The attempt at Lemma C.2 for sigma = identity over the rest of the statement's range,
    min(K, D - K) < x < 2K with K < D. Proved: (*), that delta >= 0 (support mass >= K/D) bounds ||s||^2 by 1/K,
    and the form of the delta step. Open: that delta(t) >= 0 for all t (one step needs a bound on kappa =
    eta_KQ lambda^2 beta^2 c_L v D ||V*||^2 / K, which the statement does not give: z3 finds a state where the
    sufficient condition e^Delta >= 1 + Delta fails), and the induction step itself, which without an upper
    bound on alpha is false (z3's counterexample): an invariant region 0 <= alpha <= A(delta) is needed."""
    rep = ProofReport("identity, min(K, D - K) < x < 2K", {"M": "M", "d": "d", "D": "D", "N": "N", "K": "K"})
    rep.obligations.append(recursion_obligation(("interior",)))
    with stopwatch() as t:
        ok, txt = delta_increment_identity()
    rep.obligations.append(Obligation("delta step of the reduced recursion (sigma = identity): Delta = kappa p_on "
                                      "p_off alpha (1 - alpha K (p_on - p_off))", True if ok else None, txt,
                                      "sympy identity", IDENTITY, seconds=t(), assumes=IID_MOMENTS))
    def interior(lib):
        c = block_column(lib)
        kappa, a, x = lib.Reals("kappa alpha x")
        return c, c["base"] + [c["n"] >= 1, c["E"] >= 1], kappa, a, x

    def norm(lib):
        c, hyp, *_ = interior(lib)
        return hyp, c["K"] * c["sq_Z2"] <= c["Z"] * c["Z"]

    def sufficient(lib):
        c, hyp, kappa, a, _ = interior(lib)
        return hyp + [a >= 0, kappa > 0], c["E"] * (c["Z"] ** 3 + delta_increment_Z3(c, kappa, a)) >= c["Z"] ** 3

    def large(lib):
        c, hyp, _, a, x = interior(lib)
        return hyp + [a >= 0, x > c["K"], x < 2 * c["K"]], next_alpha_Z2(c, x, a) > 0
    rep.obligations.append(smt_obligation("delta >= 0 (support mass >= K/D) => ||s||^2 <= 1/K", norm, ANY_SIGMA,
                                          "K (K E^2 + n) <= Z^2 for E = e^delta >= 1", assumes=("uniform-S*",)))
    suff = smt_obligation("", sufficient, IDENTITY)
    rep.obligations.append(open_step(
        "delta(t) >= 0 for all t (support mass >= K/D): delta >= 0, alpha >= 0 => delta + Delta >= 0", suff,
        "the sufficient condition E (1 + Delta) >= 1 (e^Delta >= 1 + Delta) fails: kappa = eta_KQ lambda^2 beta^2 c_L "
        "v D ||V*||^2 / K is not bounded by the statement's hypotheses, and delta decreases where alpha K (p_on - "
        "p_off) > 1", ("uniform-S*",)))
    step = smt_obligation("", large, IDENTITY)
    rep.obligations.append(open_step(
        "induction step for K < x < 2K: delta >= 0, alpha >= 0 => alpha(t+1) > 0", step,
        "without an upper bound on alpha the step is false (1 - x ||s||^2 < 0 near m = 1): an invariant region "
        "0 <= alpha <= A(delta) is needed", ("uniform-S*", "eta-large-step")))
    return rep


__all__ = ["alpha_recursion_identity", "delta_curvature",
           "loss_thresholds", "thresholds_at", "positivity_obligations", "column_obligations", "step_hypotheses",
           "k_equals_d_obligations", "large_step_obligations", "delta_increment_identity", "block_column",
           "recursion_obligation"]
