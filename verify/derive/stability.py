"""Step-size conditions derived from the loss: positivity of alpha (Lemma C.2) and loss monotonicity.

sigma = identity, centred entries (mu = 0), W_P = 0. From the closed form of verify.derive.loss,
dL/dW_X = c_L v (||S||_F^2 W_X - <S, S*> V*) for *any* attention S, so from W_X(0) = 0 the W_X block
stays on the line through V* (every row a multiple alpha of the same row of V*) and

    alpha(t+1) = (1 - eta_V c_L v ||S(t)||_F^2) alpha(t) + eta_V c_L v <S(t), S*>.          (*)

Each column of S is a probability vector, so ||S||_F^2 <= N, and <S, S*> > 0 when K >= 1 (softmax
entries are positive). Hence, by induction on t, eta_V c_L v N <= 1 gives alpha(t) >= eta_V c_L v
<S(t-1), S*> > 0 for every t >= 1: the toolkit's sufficient condition for Lemma C.2 (identity).

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
from ..model.sigma import Sigma
from .obligations import Obligation, ProofReport, smt_obligation, stopwatch
from .reduced import reduced, reduced_step_exprs
from .symbols import D, K, N, alpha, beta, c_loss, delta, eta_v, lam, values_at, var, vn, vnorm

E = sp.Symbol("E", positive=True)       # e^delta
x = sp.Symbol("x", positive=True)       # K e^{2 delta} / (D - K)


@lru_cache(maxsize=None)
def alpha_recursion_identity() -> tuple[bool, str]:
    """(*) in the reduced coordinates: alpha' - [(1 - eta c_L v N ||s||^2) alpha + eta c_L v N <s,s*>] == 0."""
    a_next, _ = reduced_step_exprs(Sigma("identity"), "interior")
    cols = reduced(Sigma("identity"), "interior").cols
    rhs = (1 - eta_v * c_loss * var * N * cols["sq_s"]) * alpha + eta_v * c_loss * var * N * cols["c_ss"]
    ok = sp.simplify(a_next - rhs) == 0
    return ok, "alpha' = (1 - eta_V c_L v ||S||^2) alpha + eta_V c_L v <S,S*>  (||S||^2 = N ||s||^2, <S,S*> = N <s,s*>)"


@lru_cache(maxsize=None)
def wx_gradient_identity(M: int = 2, d: int = 3, Dn: int = 4, Nn: int = 2) -> tuple[bool, str]:
    """dL/dW_X = v (||S||^2 W_X - <S,S*> V*) at mu = 0 for an arbitrary S, from the closed form of
    verify.derive.loss (entry by entry at explicit dimensions: an exact polynomial identity)."""
    from .loss import matrix_form, mu
    sym = lambda name, r, c: sp.Matrix(r, c, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))  # noqa: E731
    WX, V, WP, P, S, Ss = sym("w", M, d), sym("v", M, d), sym("p", M, Dn), sym("P", Dn, Dn), sym("s", Dn, Nn), \
        sym("t", Dn, Nn)
    mf = matrix_form(M, d, Dn, Nn)
    sy = mf.symbols
    subs = {sy["W_X"]: WX, sy["V"]: V, sy["W_P"]: WP, sy["P"]: P, sy["S"]: S, sy["S_star"]: Ss,
            sy["J"]: sp.ones(d, Dn)}
    L = mf.loss.subs(subs).doit().subs(mu, 0)
    grad = sp.Matrix(M, d, lambda i, j: sp.diff(L, WX[i, j]))
    sq_s = sum(z**2 for z in S)
    c_ss = sum(a * b for a, b in zip(S, Ss))
    target = var * (sq_s * WX - c_ss * V)
    ok = all(sp.expand(g) == 0 for g in grad - target)
    return ok, (f"dL/dW_X - v(||S||^2 W_X - <S,S*> V*) expands to 0 entry by entry (M={M}, d={d}, D={Dn}, N={Nn}, "
                "mu = 0, any W_P, P, S)")


def positivity_condition() -> sp.Expr:
    """eta_V c_L v N <= 1: the sufficient condition for alpha(t) > 0 for all t >= 1 (identity)."""
    return sp.Le(eta_v * c_loss * var * N, 1)


@lru_cache(maxsize=None)
def delta_curvature() -> dict:
    """The slow-manifold curvature of the delta block, its closed form in x and its maximum."""
    red = reduced(Sigma("identity"), "interior")
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
    # lambda and beta enter the delta block only as (lambda beta)^2 (verify.derive.reduced)
    vals[lam] = vals[lam] * vals.pop(beta)
    a = sp.nsimplify(th["eta_alpha"].subs(vals))
    dl = sp.simplify(th["eta_delta"].subs(vals))
    return {"eta_alpha": a, "eta_delta": dl, "eta_c": sp.Min(a, dl)}


# ---- Lemma C.2 (sigma = identity) as solver-discharged obligations ---------------------------------
IDENTITY = Scope("all", ("identity",), "all", "all")
ANY_SIGMA = Scope("all", "all", "all", "all")
# The induction closes only under the step-size condition: its scope says so, so it covers a statement
# only when that statement assumes eta_V c_L v N <= 1 too (Lemma C.2's own hypothesis is wider).
SMALL_ETA = "eta_V c_L v N <= 1"
IDENTITY_SMALL_ETA = Scope("all", ("identity",), (SMALL_ETA,), "all")


def _counts(lib, n_on, n_off):
    """What 'n_on and n_off are numbers of entries' gives over the reals: each is 0 or at least 1."""
    return [lib.Or(n_on == 0, n_on >= 1), lib.Or(n_off == 0, n_off >= 1), n_on + n_off >= 1]


def _column_sq(lib):
    Nn, n_on, n_off, p_on, p_off = lib.Reals("N n_on n_off p_on p_off")
    col = [p_on >= 0, p_off >= 0, n_on * p_on + n_off * p_off == 1, Nn >= 1] + _counts(lib, n_on, n_off)
    sq = Nn * (n_on * p_on * p_on + n_off * p_off * p_off)
    return col, lib.And(sq >= 0, sq <= Nn)


def _entry_sq(lib):
    s_ = lib.Real("s")
    return [s_ >= 0, s_ <= 1], s_ * s_ <= s_


def _inner_positive(lib):
    # softmax: p_on = e^delta / Z, Z = K e^delta + D - K (K >= 1): <S, S*> = N K p_on (1/K) > 0
    Nn, n_on, n_off, e = lib.Reals("N n_on n_off e")
    cor = Nn * n_on * (e / (n_on * e + n_off)) / n_on
    return [e > 0, n_on >= 1, Nn >= 1] + _counts(lib, n_on, n_off), cor > 0


def column_norm_obligations() -> list[Obligation]:
    """||S||_F^2 in [0, N] and <S, S*> > 0 (K >= 1), for the columns GD produces: softmax columns,
    two-valued on/off the support (block representation: n_on = K entries p_on, n_off = D - K entries
    p_off, symbolic K, D, N). Plus the entrywise fact behind ||s||^2 <= 1 for any probability column."""
    return [smt_obligation("0 <= ||S||_F^2 <= N for N two-valued probability columns (K on, D-K off the support)",
                           _column_sq, ANY_SIGMA, "||S||_F^2 = N (K p_on^2 + (D-K) p_off^2); K, D-K are counts "
                           "(0 or >= 1)"),
            smt_obligation("any probability column: 0 <= s_i <= 1 => s_i^2 <= s_i, so ||s||^2 <= sum_i s_i = 1",
                           _entry_sq, ANY_SIGMA, "entrywise; summing the D inequalities is linear"),
            smt_obligation("<S, S*> > 0 when K >= 1 (softmax entries are positive)", _inner_positive, ANY_SIGMA,
                           "<S, S*> = N K p_on (1/K), p_on = e^delta / (K e^delta + D - K)")]


def step_hypotheses(lib, with_step_size: bool = True, k_zero: bool = False):
    """The induction step's variables and hypotheses in a solver's z3-style API ``lib``: x = ||S||^2 in [0, N],
    y = <S,S*> > 0 (y = 0 with ``k_zero``: K = 0), c_L, v, eta > 0, alpha >= 0, and (``with_step_size``)
    eta c_L v N <= 1. Returns (hypotheses, alpha_next, variables)."""
    x, y, cL, v, eta, a, Nn = lib.Reals("x y c_L v eta alpha N")
    h = cL * v
    hyp = [x >= 0, x <= Nn, y == 0 if k_zero else y > 0, cL > 0, v > 0, eta > 0, a >= 0, Nn >= 1]
    if with_step_size:
        hyp.append(eta * h * Nn <= 1)
    return hyp, (1 - eta * h * x) * a + eta * h * y, dict(x=x, y=y, alpha=a)


def _step(with_step_size: bool = True, k_zero: bool = False):
    def build(lib):
        hyp, a_next, _ = step_hypotheses(lib, with_step_size, k_zero)
        return hyp, a_next > 0
    return build


def _base(lib):
    a0 = lib.Real("alpha_0")
    return [a0 == 0], a0 >= 0


@lru_cache(maxsize=None)
def positivity_obligations() -> ProofReport:
    """Lemma C.2 for sigma = identity, as obligations (every dimension, every t >= 1):
      recursion  alpha(t+1) = (1 - eta c_L v ||S||^2) alpha(t) + eta c_L v <S,S*> (matrix calculus, SymPy);
      facts      0 <= ||S||^2 <= N and <S,S*> > 0 for K >= 1 (z3 and cvc5, block representation);
      step       x in [0, N], y > 0, eta c_L v N <= 1, alpha >= 0 => alpha' > 0 (z3 and cvc5, nonlinear reals);
      base       alpha(0) = 0 (zero initialisation), so by induction alpha(t) > 0 for all t >= 1.
    Negative controls (outside the hypotheses, expected disproved with a counterexample): the step
    without eta c_L v N <= 1, and K = 0 (<S, S*> = 0)."""
    from .reduction import prove_identity_general
    rep = ProofReport("identity", {"M": "M", "d": "d", "D": "D", "N": "N", "K": "K"})
    with stopwatch() as t:
        gx = prove_identity_general().obligations[0]
        rec_ok, rec_txt = alpha_recursion_identity()
    rep.obligations.append(Obligation(
        "alpha(t+1) = (1 - eta_V c_L v ||S||^2) alpha(t) + eta_V c_L v <S,S*> (W_X(t) = alpha(t) V*)",
        True if (gx.holds is True and rec_ok) else None,
        f"{gx.name}: {gx.status} (the loss convention c_L scales it); reduced coordinates: {rec_txt}",
        "matrix calculus", IDENTITY, seconds=gx.seconds + t()))
    rep.obligations.extend(column_norm_obligations())
    rep.obligations.append(smt_obligation("induction step: alpha >= 0 => alpha(t+1) > 0 when eta c_L v N <= 1",
                                          _step(), IDENTITY_SMALL_ETA,
                                          "x = ||S||^2, y = <S,S*>; alpha(t+1) > 0 gives the next step's alpha >= 0"))
    rep.obligations.append(smt_obligation("base: alpha(0) = 0 (W_X(0) = 0) satisfies the step's hypothesis alpha >= 0",
                                          _base, IDENTITY_SMALL_ETA, "zero initialisation"))
    # negative controls: each drops one hypothesis; the solvers must find a counterexample
    rep.obligations.append(smt_obligation("negative control: the step without eta c_L v N <= 1", _step(False),
                                          IDENTITY, "the step-size hypothesis is needed", role="outside"))
    rep.obligations.append(smt_obligation("negative control: K = 0 (<S,S*> = 0)", _step(True, k_zero=True), IDENTITY,
                                          "alpha stays 0 when S* = 0 (reviewer question 4)", role="outside"))
    return rep


__all__ = ["alpha_recursion_identity", "wx_gradient_identity", "positivity_condition", "delta_curvature",
           "loss_thresholds", "thresholds_at", "positivity_obligations", "column_norm_obligations",
           "step_hypotheses"]
