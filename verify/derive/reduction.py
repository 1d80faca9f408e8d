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
from functools import lru_cache

import sympy as sp

from ..model.sigma import Sigma
from .kernels import kernel
from .reduced import case_of, column_quantities
from .symbols import D as Ds, K as Ks, c_loss, delta, var


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


def _model_loss(ell_of, M, d, D, supports):
    """The full model's loss c_L/2 sum_{m,j} ell(A_mj, C_mj, B_mj, b_mj) with every weight a symbol.

    ``ell_of(A, C, B, b)`` gives the kernel; the law is centred with variance v, P = I (the dynamics
    depend on P only through P^T P). Returns (L, symbols, point) where ``point`` is a generic member
    of the symmetric set: W_X = diag(alpha) V*, W_P = 0, logits delta = log(e) on the support, 0 off it.
    """
    N, K = len(supports), len(supports[0])
    V = sp.Matrix(M, d, lambda i, j: sp.Symbol(f"v_{i}{j}", real=True))
    W = sp.Matrix(M, d, lambda i, j: sp.Symbol(f"w_{i}{j}", real=True))
    WP = sp.Matrix(M, D, lambda i, j: sp.Symbol(f"p_{i}{j}", real=True))
    a = sp.Matrix(D, N, lambda i, j: sp.Symbol(f"a_{i}{j}", real=True))
    al = [sp.Symbol(f"alpha_{m}", positive=True) for m in range(M)]
    e = sp.Symbol("e", positive=True)   # e^delta
    Ss = sp.zeros(D, N)
    for j, g in enumerate(supports):
        for i in g:
            Ss[i, j] = sp.Rational(1, K) if K else 0
    S = sp.zeros(D, N)
    for j in range(N):
        col = [sp.exp(a[i, j]) for i in range(D)]
        for i in range(D):
            S[i, j] = col[i] / sum(col)
    b = WP * S
    L = 0
    for m, j in itertools.product(range(M), range(N)):
        w, v, s_, t = W[m, :], V[m, :], S[:, j], Ss[:, j]
        L += ell_of(var * w.dot(w) * s_.dot(s_), var * w.dot(v) * s_.dot(t), var * v.dot(v) * t.dot(t), b[m, j])
    L = c_loss * L / 2
    point = {W[m, q]: al[m] * V[m, q] for m in range(M) for q in range(d)}
    point |= {WP[m, i]: 0 for m in range(M) for i in range(D)}
    point |= {a[i, j]: (sp.log(e) if i in supports[j] else 0) for i in range(D) for j in range(N)}
    syms = dict(V=V, W=W, WP=WP, a=a, alpha=al, e=e, N=N, K=K)
    return L, syms, point


class _Partials:
    """Replace each partial derivative of the undefined kernel by one symbol per (slot, arguments).

    Arguments are put in SymPy's canonical rational form (cancel), so two partials at equal points
    become the same symbol and an identity between them is a rational identity.
    """

    def __init__(self):
        self.table: dict = {}

    def table_key_slot(self, symbol) -> int:
        return next(k[0] for k, v in self.table.items() if v == symbol)

    def __call__(self, expr):
        reps = {}
        for sub in expr.atoms(sp.Subs):
            der = sub.expr
            (var_, _), = der.variable_count
            f = der.expr
            slot = f.args.index(var_)
            vals = dict(zip(sub.variables, sub.point))
            args = tuple(sp.cancel(sp.sympify(x).subs(vals)) for x in f.args)
            key = (slot, args)
            reps[sub] = self.table.setdefault(key, sp.Symbol(f"ell{slot}_{len(self.table)}"))
        return expr.xreplace(reps)


@lru_cache(maxsize=None)
def prove_reduction_generic(M: int = 2, d: int = 2, D: int = 3, supports=((0, 1), (1, 2))) -> ProofReport:
    """Obligations (i) and (iii) for an *undefined* kernel ell(A, C, B, mu): they hold for every sigma
    whose loss is a sum of per-entry kernels of the Gram quantities (centred law). (ii) is reduced to
    d ell/d mu = 0 at zero offset, the parity lemma, which each sigma discharges or fails separately."""
    N, K = len(supports), len(supports[0])
    rep = ProofReport("generic kernel ell(A, C, B, mu)",
                      {"M": M, "d": d, "D": D, "N": N, "K": K, "supports": [list(g) for g in supports]})
    ell = sp.Function("ell")
    L, sy, point = _model_loss(lambda A_, C_, B_, b_: ell(A_, C_, B_, b_), M, d, D, supports)
    V, W, WP, a, al, e = sy["V"], sy["W"], sy["WP"], sy["a"], sy["alpha"], sy["e"]
    norm = _Partials()
    at = lambda expr: norm(expr.subs(point).doit())  # noqa: E731
    cols = {k_: v_.subs({Ds: D, Ks: K}).subs(delta, sp.log(e)) for k_, v_ in column_quantities(case_of(K, D)).items()}
    vns = [sum(V[m, q] ** 2 for q in range(d)) for m in range(M)]
    rows = []
    for m in range(M):
        r = c_loss * sp.Rational(N, 2) * ell(var * al[m] ** 2 * vns[m] * cols["sq_s"], var * al[m] * vns[m] * cols["c_ss"],
                                             var * vns[m] * cols["sq_ss"], 0)
        rows.append(r)
    ok = all(_is_zero(at(sp.diff(L, W[m, q])) - norm(sp.diff(rows[m], al[m]).doit()) / vns[m] * V[m, q])
             for m in range(M) for q in range(d))
    rep.obligations.append(Obligation("dL/dW_X rows = (dr_m/dalpha_m)/||v*_m||^2 v*_m (any kernel)", True if ok else None))
    gp = [at(sp.diff(L, WP[m, i])) for m in range(M) for i in range(D)]
    only_mu = all(all(norm.table_key_slot(s_) == 3 for s_ in g.free_symbols if s_.name.startswith("ell")) for g in gp)
    rep.obligations.append(Obligation("dL/dW_P is a combination of d ell/d mu at zero offset only", True if only_mu else None,
                                      "so W_P stays 0 exactly when d ell/d mu (A, C, B, 0) = 0 (parity lemma)"))
    # the delta derivative of the reduced loss, through e = e^delta
    tot = sum(norm((sp.diff(r.subs(e, sp.exp(delta)), delta)).subs(delta, sp.log(e)).doit()) for r in rows)
    two, gap = True, True
    for j, g in enumerate(supports):
        grads = [at(sp.diff(L, a[i, j])) for i in range(D)]
        on, off = [grads[i] for i in g], [grads[i] for i in range(D) if i not in g]
        two = two and all(_is_zero(x - on[0]) for x in on[1:]) and all(_is_zero(x - off[0]) for x in off[1:])
        if 0 < K < D:
            gap = gap and _is_zero(on[0] - off[0] - sp.Rational(D, N * K * (D - K)) * tot)
        else:
            gap = gap and all(_is_zero(x) for x in on + off)
    rep.obligations.append(Obligation("each column's logit gradient is two-valued (any kernel)", True if two else None))
    rep.obligations.append(Obligation("g_on - g_off = D/(N K (D-K)) sum_m dr_m/ddelta; 0 if K in {0, D} (any kernel)",
                                      True if gap else None))
    return rep


@lru_cache(maxsize=None)   # deterministic and a few seconds each: the derive output and several claims cite it
def prove_reduction(sigma: Sigma, M: int = 2, d: int = 2, D: int = 3, supports=((0, 1), (1, 2))) -> ProofReport:
    """The reduction for one sigma: the generic-kernel obligations plus sigma's parity lemma."""
    gen = prove_reduction_generic(M, d, D, supports)
    rep = ProofReport(sigma.spec(), gen.dims, list(gen.obligations))
    rep.obligations.append(parity_obligation(sigma))
    if sigma.name == "identity":
        rep.obligations.extend(prove_identity_general().obligations)
    return rep


def _vanishes(expr) -> bool:
    """A matrix expression is 0 when every term of its expansion carries a zero factor."""
    expr = sp.expand(expr)
    terms = sp.Add.make_args(expr)
    return all(t == 0 or isinstance(t, sp.ZeroMatrix)
               or any(a == 0 or isinstance(a, sp.ZeroMatrix) for a in t.args) for t in terms)


def prove_identity_general() -> ProofReport:
    """For sigma = identity (centred law) the invariance holds in *every* dimension M, d, D, N:
    from the matrix-calculus gradients of verify.derive.loss.matrix_form (symbolic dimensions),
    at W_X = alpha V*, W_P = 0:
      dL/dW_X = (alpha v ||S||^2 - v <S, S*>) V*,   dL/dW_P = 0,   dL/dS = alpha^2 v ||V*||^2 S - alpha v ||V*||^2 S*,
    so the rows stay proportional, W_P stays 0, and dL/dS is a combination of S and S* (two-valued
    columns give a two-valued logit gradient through the softmax Jacobian)."""
    from .loss import matrix_form, mu
    mf = matrix_form()
    s = mf.symbols
    a = sp.Symbol("alpha")
    V, S, Ss, WP, WX = s["V"], s["S"], s["S_star"], s["W_P"], s["W_X"]
    at = lambda e: e.subs(mu, 0).subs(WX, a * V).subs(WP, sp.ZeroMatrix(*WP.shape))  # noqa: E731
    rep = ProofReport("identity (all dimensions)", {"M": "M", "d": "d", "D": "D", "N": "N"})
    gx = at(mf.grad_WX)
    want = (a * var * sp.Trace(S * S.T) - var * sp.Trace(S * Ss.T)) * V
    rep.obligations.append(Obligation("dL/dW_X = (alpha v ||S||^2 - v <S,S*>) V* at W_X = alpha V* (all M, d, D, N)",
                                      True if _vanishes(sp.simplify(gx - want)) else None))
    rep.obligations.append(Obligation("dL/dW_P = 0 at W_P = 0, mean 0 (all M, d, D, N)",
                                      True if _vanishes(at(mf.grad_WP)) else None))
    gs = sp.expand(at(mf.grad_S))
    rest = gs - (a**2 * var * sp.Trace(V * V.T) * S - a * var * sp.Trace(V * V.T) * Ss)
    rep.obligations.append(Obligation("dL/dS = alpha^2 v ||V*||^2 S - alpha v ||V*||^2 S* (all M, d, D, N)",
                                      True if _vanishes(rest) else None))
    return rep
