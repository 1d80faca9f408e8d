"""Theorem 3.2 (out of distribution), sigma = identity: the exact OOD loss of the trained student.

With W_X = alpha V*, W_P = 0 (lemma-C.2, wp-zero) and columns of S summing to 1, for entries
i.i.d. with mean mu and variance v (any law with finite second moments) and no noise,
  L_ood = 1/2 [ v ||V*||^2 (alpha^2 ||S||^2 - 2 alpha <S,S*> + ||S*||^2) + mu^2 (alpha - 1)^2 ||V* 1||^2 N ],
derived from the closed form of verify.derive.loss (which uses only E x = mu, E x^2 = v + mu^2) and
checked symbolically; the teacher's OOD loss is 0 (L_opt with noise), so L_ood is the OOD excess.
Monte Carlo with exponential, Student-t and Gumbel entries checks the formula at the trained
student; iteration shows L_ood -> 0 at the in-distribution rate 1/T.
Reviewer question 5: the first term is v ||V*||^2 times a function of (alpha, S) that the
in-distribution dynamics drive to 0 like ||S - S*||^2 ~ 1/(||V*||^2 T): the ||V*||^2 in front and the
1/||V*||^2 of the rate cancel, so the OOD excess at a given T does not grow with ||V*||.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from verify.fits import loglog_slope
from verify.evidence import Scope, compare, record
from lemmas import Claim, claim
from lemmas._common import convention, fmt, reduced_float64, regime
from lemmas._records import REFERENCE, REPLAY_FACTOR, prerequisite, regime_scope

SAMPLES = {"ci": 100_000, "dev": 1_000_000, "deep": 4_000_000}
LAWS = ("exponential", "student-t:5", "gumbel", "gaussian")
MU, VAR = "1/2", "2"
Z_MAX = 4
MC_THRESHOLD = {"value": f"|z| <= {Z_MAX}", "why": "z = (Monte Carlo mean - exact) / standard error is about standard "
                                                   "normal for these sample sizes; |z| > 4 happens by chance with "
                                                   "probability 6e-5 per law"}
SLOPE_MAX = -0.9
SLOPE_THRESHOLD = {"value": f"T-exponent of L_ood < {SLOPE_MAX}",
                   "why": "the in-distribution excess falls like 1/T (derived leading term); over T = 1e3..1e5 its "
                          "O(T^-1/2) relative corrections move a fitted exponent by a few hundredths, so -0.9 separates "
                          "1/T decay from a slower one with margin"}


def ood_formula():
    """The claimed closed form as a SymPy expression in alpha, mu, v and Gram quantities."""
    a, mu, v, nV, nS, cSS, nSs, nV1, N = sp.symbols("alpha mu v nV nS cSS nSs nV1 N")
    return (sp.Rational(1, 2) * (v * nV * (a**2 * nS - 2 * a * cSS + nSs) + mu**2 * (a - 1) ** 2 * nV1 * N),
            (a, mu, v, nV, nS, cSS, nSs, nV1, N))


def prove_formula(M=2, d=2, D=3, N=2) -> tuple[bool, str]:
    """Closed form of verify.derive.loss at W_X = alpha V*, W_P = 0, column-stochastic S, S*: equals the formula."""
    from verify.derive.loss import matrix_form, mu
    from verify.model.symbols import var
    sym = lambda name, r, c: sp.Matrix(r, c, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))  # noqa: E731
    V, P = sym("v", M, d), sym("P", D, D)
    S, Ss = sym("s", D - 1, N), sym("t", D - 1, N)
    S = S.col_join(sp.Matrix(1, N, lambda i, j: 1 - sum(S[k, j] for k in range(D - 1))))
    Ss = Ss.col_join(sp.Matrix(1, N, lambda i, j: 1 - sum(Ss[k, j] for k in range(D - 1))))
    a = sp.Symbol("alpha", positive=True)
    mf = matrix_form(M, d, D, N)
    sy = mf.symbols
    L = mf.loss.subs({sy["W_X"]: a * V, sy["V"]: V, sy["W_P"]: sp.zeros(M, D), sy["P"]: P, sy["S"]: S,
                      sy["S_star"]: Ss, sy["J"]: sp.ones(d, D)}).doit()
    f, (al, m_, v_, nV, nS, cSS, nSs, nV1, Nn) = ood_formula()
    target = f.subs({al: a, m_: mu, v_: var, nV: sum(x**2 for x in V), nS: sum(x**2 for x in S),
                     cSS: sum(x * y for x, y in zip(S, Ss)), nSs: sum(x**2 for x in Ss),
                     nV1: sum(sum(V[i, j] for j in range(d)) ** 2 for i in range(M)), Nn: N})
    ok = sp.expand(L - target) == 0
    return ok, f"closed form at W_X = alpha V*, W_P = 0, columns of S and S* summing to 1 equals L_ood (M={M}, d={d}, D={D}, N={N})"


def student_state(s, T):
    """(alpha, S, S*, V*) of the trained student after T steps (reduced recursion, float64)."""
    r = reduced_float64(s, T, checkpoints=[T])
    a, dl = float(r.alpha[0, 0]), float(r.delta[0])
    Sstar = np.array([[float(x) for x in row] for row in s.sstar()])
    on = Sstar > 0
    E = math.exp(dl)
    Z = s.K * E + s.D - s.K
    S = np.where(on, E / Z, 1 / Z)
    scale = math.sqrt(float(s.vstar_scale2))
    V = np.array([[float(x) for x in row] for row in s.vstar_base]) * scale
    return a, S, Sstar, V, r


def exact_ood(a, S, Sstar, V, mu, v) -> float:
    N = S.shape[1]
    return 0.5 * (v * (V**2).sum() * (a * a * (S**2).sum() - 2 * a * (S * Sstar).sum() + (Sstar**2).sum())
                  + mu**2 * (a - 1) ** 2 * (V.sum(1) ** 2).sum() * N)


def monte_carlo(a, S, Sstar, V, law, n, seed=0):
    """Mean and standard error of 1/2 ||alpha V X S - V X S*||^2 over n draws of X."""
    rng = np.random.default_rng(seed)
    B = a * S - Sstar
    vals = []
    for chunk in range(0, n, 50_000):
        m = min(50_000, n - chunk)
        X = law.sample(rng, (m, V.shape[1], S.shape[0]))
        R = np.einsum("md,ndk,kj->nmj", V, X, B)
        vals.append(0.5 * (R**2).sum(axis=(1, 2)))
    x = np.concatenate(vals)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(n))


@claim("theorem-3.2-ood",
       statement="For sigma = identity and test entries with finite second moments (mean mu, variance v), the trained "
                 "student's OOD loss is 1/2[v ||V*||^2 (alpha^2 ||S||^2 - 2 alpha <S,S*> + ||S*||^2) + mu^2 (alpha-1)^2 "
                 "||V* 1||^2 N], within epsilon of the teacher's (0), with epsilon -> 0 as T grows.",
       source="Theorem 3.2; reviewer questions 5 and 7",
       hypotheses=["sigma = identity", "trained in distribution: reference convention, Gaussian entries",
                   "test entries i.i.d. with finite variance", "no label noise (teacher OOD loss 0)"],
       routes=["symbolic closed form", "Monte Carlo (exponential, Student-t, Gumbel, Gaussian)",
               "float64: OOD excess against T and ||V*||"])
class TheoremOOD(Claim):
    scope = Scope(dims="all", sigma=("identity",), conventions=(REFERENCE,), horizon="all")

    def evaluate(self, profile):
        from verify.model.laws import parse_law
        ev = []
        ok, txt = prove_formula()
        # an exact identity at explicit sizes: what the Monte Carlo and float64 routes evaluate (the
        # statement's epsilon -> 0 part is numeric), so it is a prerequisite, not a proof of the statement
        ev.append(prerequisite("closed form of the OOD loss (any law with mean mu, variance v)", "symbolic",
                               Scope(dims=("M=2 d=2 D=3 N=2",), sigma=("identity",),
                                     conventions="all", horizon="all"), txt, ok))
        s = regime("cnn", 6, 2, M=2, d=3, eta="1/10", vstar_norm="3/2")
        T = 500
        a, S, Sstar, V, r = student_state(s, T)
        n = SAMPLES[profile]
        mu, v = float(sp.Rational(MU)), float(sp.Rational(VAR))
        exact = exact_ood(a, S, Sstar, V, mu, v)
        for i, spec in enumerate(LAWS):
            law = parse_law(spec, MU, VAR)
            m, se = monte_carlo(a, S, Sstar, V, law, n, seed=i)
            z = (m - exact) / se
            holds = compare(abs(z), "<=", Z_MAX)
            extra = {}
            if holds is False:
                # a fixed-T statement: replayed with 10x the samples and a fresh seed
                m2, se2 = monte_carlo(a, S, Sstar, V, law, REPLAY_FACTOR * n, seed=100 + i)
                z2 = (m2 - exact) / se2
                extra["replay_check"] = {"horizon": T, "holds": compare(abs(z2), "<=", Z_MAX),
                                         "detail": f"fixed-T statement: replayed with {REPLAY_FACTOR * n} samples "
                                                   f"(seed {100 + i}): z = {z2:.2f}"}
            ev.append(record(f"Monte Carlo, {spec} entries (mean {MU}, variance {VAR})", "monte-carlo",
                             regime_scope(s, T), f"MC {fmt(m)} +- {fmt(se, 3)} vs exact {fmt(exact)} (z = {z:.2f}, "
                             f"n = {n})", holds, threshold=MC_THRESHOLD, seed=i,
                             replay=f"verify check theorem-3.2-ood --profile {profile} --json", **extra))
        # OOD excess against T, compared with the in-distribution excess epsilon_in = L - L_opt
        Ts = [10**3, 10**4, 10**5] if profile == "ci" else [10**3, 10**4, 10**5, 10**6]

        def ood_slope(times):
            rows = []
            for t in times:
                a_t, S_t, _, _, r_t = student_state(s, t)
                rows.append((t, exact_ood(a_t, S_t, Sstar, V, mu, v), float(r_t.excess[0])))
            return rows, loglog_slope([x[0] for x in rows], [x[1] for x in rows])
        rows, (slope, se) = ood_slope(Ts)
        holds = compare(slope, "<", SLOPE_MAX)
        extra = {}
        if holds is False:
            _, (slope2, _) = ood_slope([REPLAY_FACTOR * t for t in Ts])
            extra["replay_check"] = {"horizon": REPLAY_FACTOR * Ts[-1], "holds": compare(slope2, "<", SLOPE_MAX),
                                     "detail": f"T x{REPLAY_FACTOR}: exponent {slope2:.3f}"}
        ev.append(record("OOD excess against T (exact formula at the iterated student)", "float64",
                         regime_scope(s, Ts[-1]), "; ".join(f"T={t}: L_ood {fmt(o)}, eps_in {fmt(e)}, ratio {fmt(o / e)}"
                                                            for t, o, e in rows)
                         + f"; T-exponent of L_ood {slope:.3f} +- {se:.3f}", holds, threshold=SLOPE_THRESHOLD,
                         replay=f"verify check theorem-3.2-ood --profile {profile} --json",
                         note="L_ood / eps_in stays bounded: the OOD excess falls at the in-distribution rate", **extra))
        # reviewer question 5: dependence on ||V*|| at fixed T (informative)
        out = []
        for vn in ("1", "2", "4"):
            s2 = regime("cnn", 6, 2, M=2, d=3, eta="1/10", vstar_norm=vn)
            a2, S2, Ss2, V2, r2 = student_state(s2, 20000)
            vs = float((V2**2).sum()) * float(((a2 * S2 - Ss2) ** 2).sum())
            out.append(f"||V*||={vn}: L_ood {fmt(exact_ood(a2, S2, Ss2, V2, mu, v))}, "
                       f"||V*||^2 ||alpha S - S*||^2 {fmt(vs)}, ||S - S*||^2 {fmt(float(r2.s_err[0]) ** 2)}")
        ev.append(record("||V*|| dependence at T = 20000 (reviewer question 5)", "float64", regime_scope(s, 20000),
                         "; ".join(out), None, role="context",
                         note="the OOD bound carries ||V*||^2 but multiplies ||S - S*||^2 ~ 1/(||V*||^2 T): "
                              "the product does not grow with ||V*||",
                         headline="OOD excess ~ ||V*||^2 ||S - S*||^2 and ||S - S*||^2 ~ 1/(||V*||^2 T): the "
                                  "||V*||^2 cancels; at T = 20000: " + "; ".join(o.split(",")[0] for o in out)))
        return ev, f"verify check theorem-3.2-ood --profile {profile} --json", convention(s) | {
            "test_law_mean": MU, "test_law_var": VAR, "train_steps": T, "samples": n}
