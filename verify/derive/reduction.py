"""Symbolic proof that GD maps the symmetric set into itself, and that the reduced recursion is exact.

The set: {W_X = diag(alpha) V*, W_P = 0, each column of S two-valued on/off its support}.
For explicit small dimensions, with every entry of V* a free symbol, we differentiate the
per-entry kernel loss of the *full* model (every weight, every logit) with SymPy, evaluate at a
generic point of the set, and check exactly (simplification to 0) that
  (i)   each row of dL/dW_X is (d r_m / d alpha_m) / ||v*_m||^2 times v*_m   (rows stay proportional);
  (ii)  dL/dW_P = 0                                                          (W_P stays 0);
  (iii) the logit gradient of each column is two-valued (on / off), and
        g_on - g_off = D / (N K (D - K)) * sum_m d r_m / d delta             (delta recursion).
(ii) needs d ell / d mu_u = 0 at zero offset: for the identity kernel it is part of ell; for other
sigma it is the parity lemma :func:`parity_obligation`, proved for odd sigma and shown to fail
(with the non-zero gradient) otherwise.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy as sp

from ..model.sigma import Sigma
from .kernels import kernel
from .reduced import case_of, reduced
from .symbols import A, B, C, D as Ds, K as Ks, N as Ns, alpha, c_loss, delta, mu_u, mu_z, var, vn


@dataclass
class Obligation:
    name: str
    holds: bool | None      # True: proved (simplifies to 0); False: disproved; None: undecided
    detail: str = ""


@dataclass
class ProofReport:
    sigma: str
    dims: dict
    obligations: list[Obligation] = field(default_factory=list)

    @property
    def proved(self) -> bool:
        return all(o.holds is True for o in self.obligations)

    def as_dict(self) -> dict:
        return {"sigma": self.sigma, "dims": self.dims, "proved": self.proved,
                "obligations": [{"name": o.name, "holds": o.holds, "detail": o.detail} for o in self.obligations]}


def _is_zero(expr) -> bool | None:
    """True only when SymPy simplifies ``expr`` to exactly 0 (a proof); None when it cannot."""
    e = sp.cancel(sp.together(sp.expand(expr)))
    if e == 0:
        return True
    e = sp.simplify(e)
    return True if e == 0 else None


def parity_obligation(sigma: Sigma) -> Obligation:
    """d/d mu_u E[(sigma(u + mu_u) - sigma(z))^2] at 0 equals 2 E[(sigma(u) - sigma(z)) sigma'(u)];
    for a centred Gaussian (u, z) this vanishes when the integrand is odd under (u, z) -> (-u, -z)."""
    x, y = sp.symbols("x y", real=True)
    sig = {"identity": lambda t: t, "erf": sp.erf, "relu": lambda t: sp.Max(t, 0),
           "poly": lambda t: sum(sp.Rational(c.numerator, c.denominator) * t**k for k, c in enumerate(sigma.coeffs))}[sigma.name]
    f = (sig(x) - sig(y)) * sp.diff(sig(x), x)
    odd = sp.simplify(f + f.subs({x: -x, y: -y}, simultaneous=True))
    if odd == 0:
        return Obligation("W_P gradient vanishes at W_P = 0 (parity)", True,
                          "(sigma(u)-sigma(z)) sigma'(u) is odd under (u,z)->(-u,-z); the centred Gaussian law is even")
    dmu = kernel(sigma).dmu_at_zero
    return Obligation("W_P gradient vanishes at W_P = 0 (parity)", False,
                      f"sigma = {sigma.spec()} is not odd: d ell/d mu_u at 0 = {sp.sstr(sp.simplify(dmu))}, "
                      "so W_P leaves 0 unless frozen (wp_trainable = False)")


def prove_reduction(sigma: Sigma, M: int = 2, d: int = 2, D: int = 3, supports=((0, 1), (1, 2))) -> ProofReport:
    """Run obligations (i)-(iii) for one sigma at explicit dimensions (supports fix N and K)."""
    N, K = len(supports), len(supports[0])
    rep = ProofReport(sigma.spec(), {"M": M, "d": d, "D": D, "N": N, "K": K, "supports": [list(g) for g in supports]})
    k = kernel(sigma)
    V = sp.Matrix(M, d, lambda i, j: sp.Symbol(f"v_{i}{j}", real=True))
    W = sp.Matrix(M, d, lambda i, j: sp.Symbol(f"w_{i}{j}", real=True))
    WP = sp.Matrix(M, D, lambda i, j: sp.Symbol(f"p_{i}{j}", real=True))
    a = sp.Matrix(D, N, lambda i, j: sp.Symbol(f"a_{i}{j}", real=True))
    al = [sp.Symbol(f"alpha_{m}", positive=True) for m in range(M)]
    e = sp.Symbol("e", positive=True)   # e^delta
    Ss = sp.zeros(D, N)
    for j, g in enumerate(supports):
        for i in g:
            Ss[i, j] = sp.Rational(1, K)
    S = sp.zeros(D, N)
    for j in range(N):
        col = [sp.exp(a[i, j]) for i in range(D)]
        Z = sum(col)
        for i in range(D):
            S[i, j] = col[i] / Z
    b = WP * S     # P = I: the dynamics depend on P only through P^T P (verify.derive.loss)
    L = 0
    for m, j in itertools.product(range(M), range(N)):
        w, v, s, t = W[m, :], V[m, :], S[:, j], Ss[:, j]
        L += k.ell.subs({A: var * w.dot(w) * s.dot(s), C: var * w.dot(v) * s.dot(t), B: var * v.dot(v) * t.dot(t),
                         mu_u: b[m, j], mu_z: 0}, simultaneous=True)
    L = c_loss * L / 2
    point = {W[m, q]: al[m] * V[m, q] for m in range(M) for q in range(d)}
    point |= {WP[m, i]: 0 for m in range(M) for i in range(D)}
    point |= {a[i, j]: (sp.log(e) if i in supports[j] else 0) for i in range(D) for j in range(N)}
    red = reduced(sigma, case_of(K, D))
    vns = [sum(V[m, q] ** 2 for q in range(d)) for m in range(M)]
    rsub = lambda expr, m: expr.subs({Ds: D, Ks: K, Ns: N, vn: vns[m], alpha: al[m]}).subs(delta, sp.log(e))  # noqa: E731
    # (i) rows of dL/dW_X proportional to rows of V*, with the reduced coefficient
    ok = True
    for m in range(M):
        coef = rsub(red.dr_dalpha, m) / vns[m]
        for q in range(d):
            r = _is_zero(sp.diff(L, W[m, q]).subs(point) - coef * V[m, q])
            ok = ok and r
    rep.obligations.append(Obligation("dL/dW_X rows = (dr_m/dalpha_m)/||v*_m||^2 v*_m", bool(ok) if ok else None))
    # (ii) W_P
    if k.with_means:
        okp = all(_is_zero(sp.diff(L, WP[m, i]).subs(point)) for m in range(M) for i in range(D))
        rep.obligations.append(Obligation("dL/dW_P = 0 at W_P = 0", True if okp else None, "kernel exact at offsets"))
    else:
        rep.obligations.append(parity_obligation(sigma))
    # (iii) logits: two-valued and the gap recursion
    grads = [[sp.diff(L, a[i, j]).subs(point) for i in range(D)] for j in range(N)]
    two = True
    gap_ok = True
    total = sum(rsub(red.dr_ddelta, m) for m in range(M))
    for j, g in enumerate(supports):
        on = [grads[j][i] for i in g]
        off = [grads[j][i] for i in range(D) if i not in g]
        two = two and all(_is_zero(x - on[0]) for x in on[1:]) and all(_is_zero(x - off[0]) for x in off[1:])
        if 0 < K < D:
            gap_ok = gap_ok and _is_zero(on[0] - off[0] - sp.Rational(D, N * K * (D - K)) * total)
        else:
            gap_ok = gap_ok and all(_is_zero(x) for x in on + off)
    rep.obligations.append(Obligation("each column's logit gradient is two-valued", True if two else None))
    rep.obligations.append(Obligation("g_on - g_off = D/(N K (D-K)) sum_m dr_m/ddelta (0 if K in {0, D})",
                                      True if gap_ok else None))
    return rep
