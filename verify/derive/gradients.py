"""The GD updates (3.3) and (3.4), derived by SymPy: every gradient of the loss, in symbolic dimensions.

The loss is L = c_L/2 sum_{m,j} ell(A_mj, C_mj, B_mj, mu_u_mj, mu_z_mj) (verify.derive.loss) with
  A = v ||w_m||^2 ||s_j||^2,  C = v <w_m, v*_m> <s_j, s*_j>,  B = v ||v*_m||^2 ||s*_j||^2,
  mu_u = mu (w_m . 1)(1 . s_j) + (W_P P S)_mj,  mu_z = mu (v*_m . 1)(1 . s*_j),
the attention column j is S[:, j] = softmax(Lambda[:, j]) and the logits are Lambda = c P^T W_KQ Q
with Q = [p_q(1), ..., p_q(N)] (c = 1 here; a logit temperature is a symbol passed as ``scale``).

How SymPy derives each piece (nothing below is a typed formula):
- dL/dW_X[m,q], dL/dW_P[m,k], dL/dS[i,j]: the *block* method (symbolic d, D): the entry is one
  symbol and "the rest" of each Gram sum another (||w_m||^2 = w_mq^2 + R, ...); SymPy differentiates
  the kernel term and the rest is substituted back (:func:`gradient_formulas`).
- dL/dLambda[:, j]: the column softmax in symbolic D with indexed sums; SymPy differentiates
  s_k = e^{Lambda_k} / sum_l e^{Lambda_l} and sums the chain rule over k (:func:`softmax_obligation`).
- dL/dW_KQ = c P G Q^T: SymPy's matrix calculus on the linear map W -> c P^T W Q (all dimensions), and
  at explicit dimensions for a generic loss of the logits with a general symbolic P
  (:func:`wkq_chain_explicit`).
- (3.4) on the logits: Lambda(W - eta_KQ grad) - Lambda(W) = -eta_KQ c^2 lambda^2 G when P^T P = lambda I and
  the query positions are distinct (:func:`logit_step_obligation`): the factor lambda^2 of the delta
  recursion.
Each formula is tested against central differences of the model's loss (tests/test_derive_gradients.py).
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..evidence import Scope
from ..model.symbols import A as A_, B as B_, C as C_, D, M, N, beta, c_loss, eta_kq, eta_v, lam, mu_u, mu_z, var
from .obligations import Obligation, stopwatch

mu = sp.Symbol("mu", real=True)                 # the entry law's mean
d_ = sp.Symbol("d", positive=True, integer=True)
ELL5 = sp.Function("ell")                       # ell(A, C, B, mu_u, mu_z), undefined
m, q, i, j, k, a, b = sp.symbols("m q i j k a b", integer=True, positive=True)
IB = sp.IndexedBase
# the model's matrices (1-based indices, as in the paper)
WX, V, WP, P, S, Ss, WKQ, Lam = (IB(n) for n in ("W_X", "V^*", "W_P", "P", "S", "S^*", "W_KQ", "Lambda"))
qpos = IB("q")                                  # the query position of column j
# Gram quantities of rows m and columns j, the offset, and the kernel partials at (m, j)
GRAM = {"nW": IB("nW"), "cW": IB("cW"), "sW": IB("sW"), "nV": IB("nV"), "sV": IB("sV"),
        "nS": IB("nS"), "cS": IB("cS"), "sS": IB("sS"), "nT": IB("nT"), "sT": IB("sT"),
        "b": IB("b"), "PS": IB("PS"), "WPP": IB("WPP"), "g": IB("g"), "G": IB("G")}
PARTIALS = {0: IB("ell_A"), 1: IB("ell_C"), 3: IB("ell_mu")}
LEGEND = {
    "nW[m]": "||w_m||^2 (row m of W_X)", "cW[m]": "<w_m, v*_m>", "sW[m]": "sum_q W_X[m,q]",
    "nV[m]": "||v*_m||^2", "sV[m]": "sum_q V*[m,q]", "nS[j]": "||s_j||^2 (column j of S)",
    "cS[j]": "<s_j, s*_j>", "sS[j]": "sum_i S[i,j]", "nT[j]": "||s*_j||^2", "sT[j]": "sum_i S*[i,j]",
    "b[m,j]": "(W_P P S)[m,j]", "PS[k,j]": "(P S)[k,j]", "WPP[m,i]": "(W_P P)[m,i]",
    "ell_A, ell_C, ell_mu [m,j]": "d ell/dA, d ell/dC, d ell/d mu_u at (A_mj, C_mj, B_mj, mu_u_mj, mu_z_mj)",
    "g[i,j]": "dL/dS[i,j]", "G[i,j]": "dL/dLambda[i,j] (logit gradient)", "q[j]": "query position of column j",
    "Lambda": "logits c P^T W_KQ Q (c = 1)",
}


def _kernel_term(nW, cW, sW, nS, cS, sS, nV, nT, sV, sT, b_):
    """ell of one output entry (m, j) in terms of its Gram quantities."""
    return ELL5(var * nW * nS, var * cW * cS, var * nV * nT, mu * sW * sS + b_, mu * sV * sT)


def _name_partials(expr, mm, jj):
    """Subs(Derivative(ell, slot), ...) -> ell_A[m,j] / ell_C[m,j] / ell_mu[m,j] (one entry per term)."""
    reps = {}
    for sub in expr.atoms(sp.Subs):
        der = sub.expr
        (v_, _), = der.variable_count
        slot = der.expr.args.index(v_)
        if slot not in PARTIALS:
            raise AssertionError(f"unexpected partial in slot {slot}")
        reps[sub] = PARTIALS[slot][mm, jj]
    return expr.xreplace(reps)


def loss_formula() -> sp.Expr:
    """L = c_L/2 sum_{m,j} ell(A_mj, C_mj, B_mj, mu_u_mj, mu_z_mj) in the Gram names of :data:`LEGEND`."""
    g = GRAM
    t = _kernel_term(g["nW"][m], g["cW"][m], g["sW"][m], g["nS"][j], g["cS"][j], g["sS"][j], g["nV"][m], g["nT"][j],
                     g["sV"][m], g["sT"][j], g["b"][m, j])
    return c_loss / 2 * sp.Sum(t, (m, 1, M), (j, 1, N))


def update_formulas() -> dict:
    """(3.3) and (3.4) entry by entry: the new value of each weight, from :func:`gradient_formulas`."""
    gf = gradient_formulas()
    up = lambda name, *idx: IB(name + "^+")[idx]  # noqa: E731   (the weight after one step)
    return {"(3.3) W_X[m,q]": sp.Eq(up("W_X", m, q), WX[m, q] - eta_v * gf["dL/dW_X[m,q]"]),
            "(3.3) W_P[m,k]": sp.Eq(up("W_P", m, k), WP[m, k] - eta_v * gf["dL/dW_P[m,k]"]),
            "(3.4) W_KQ[a,b]": sp.Eq(up("W_KQ", a, b), WKQ[a, b] - eta_kq * gf["dL/dW_KQ[a,b]"])}


@lru_cache(maxsize=None)
def gradient_formulas(scale=sp.Integer(1)) -> dict:
    """dL/dW_X[m,q], dL/dW_P[m,k], dL/dS[i,j], dL/dLambda[i,j] and dL/dW_KQ[a,b] as SymPy expressions in
    symbolic M, d, D, N (indexed names: :data:`LEGEND`), all derived by SymPy (module docstring)."""
    g = GRAM
    R1, R2, R3, R4 = sp.symbols("R1 R2 R3 R4", real=True)   # "the rest" of a Gram sum
    x = sp.Symbol("x", real=True)                            # the entry differentiated
    out = {}
    # W_X[m,q]: ||w_m||^2 = x^2 + R1, <w_m, v*_m> = x V[m,q] + R2, w_m . 1 = x + R3; row m's N terms
    t = _kernel_term(x**2 + R1, x * V[m, q] + R2, x + R3, g["nS"][j], g["cS"][j], g["sS"][j], g["nV"][m],
                     g["nT"][j], g["sV"][m], g["sT"][j], g["b"][m, j])
    dt = sp.diff(t, x).doit().subs({R1: g["nW"][m] - x**2, R2: g["cW"][m] - x * V[m, q], R3: g["sW"][m] - x})
    dt = _name_partials(dt.subs(x, WX[m, q]), m, j)
    out["dL/dW_X[m,q]"] = c_loss / 2 * sp.Sum(sp.expand(dt), (j, 1, N))
    # W_P[m,k]: b[m,j] = x PS[k,j] + R4
    t = _kernel_term(g["nW"][m], g["cW"][m], g["sW"][m], g["nS"][j], g["cS"][j], g["sS"][j], g["nV"][m], g["nT"][j],
                     g["sV"][m], g["sT"][j], x * g["PS"][k, j] + R4)
    dt = _name_partials(sp.diff(t, x).doit().subs(R4, g["b"][m, j] - x * g["PS"][k, j]), m, j)
    out["dL/dW_P[m,k]"] = c_loss / 2 * sp.Sum(sp.expand(dt), (j, 1, N))
    # S[i,j]: ||s_j||^2 = x^2 + R1, <s_j, s*_j> = x S*[i,j] + R2, 1 . s_j = x + R3, b[m,j] = WPP[m,i] x + R4
    t = _kernel_term(g["nW"][m], g["cW"][m], g["sW"][m], x**2 + R1, x * Ss[i, j] + R2, x + R3, g["nV"][m], g["nT"][j],
                     g["sV"][m], g["sT"][j], g["WPP"][m, i] * x + R4)
    dt = sp.diff(t, x).doit().subs({R1: g["nS"][j] - x**2, R2: g["cS"][j] - x * Ss[i, j], R3: g["sS"][j] - x,
                                    R4: g["b"][m, j] - g["WPP"][m, i] * x})
    dt = _name_partials(dt.subs(x, S[i, j]), m, j)
    out["dL/dS[i,j]"] = c_loss / 2 * sp.Sum(sp.expand(dt), (m, 1, M))
    out["dL/dLambda[i,j]"] = softmax_chain()
    out["dL/dW_KQ[a,b]"] = wkq_chain(scale)
    return out


def _in_range(expr):
    """Drop SymPy's Piecewise guard 'index within 1..D' (every index used here is in range)."""
    return expr.replace(lambda x: isinstance(x, sp.Piecewise) and len(x.args) == 2 and x.args[1].cond == sp.true,
                        lambda x: x.args[0].expr)


@lru_cache(maxsize=None)
def softmax_chain() -> sp.Expr:
    """dL/dLambda[i,j] = sum_k g[k,j] d s_k/d Lambda_i for s = softmax of column j, symbolic D (SymPy's
    derivative of e^{Lambda_k}/sum_l e^{Lambda_l}, summed over k), written back in terms of S."""
    ll = sp.Symbol("l", integer=True, positive=True)
    Z = sp.Sum(sp.exp(Lam[ll, j]), (ll, 1, D))
    Jac = sp.diff(sp.exp(Lam[k, j]) / Z, Lam[i, j])
    G = _in_range(sp.Sum(GRAM["g"][k, j] * Jac, (k, 1, D)).doit())
    Zs = sp.Symbol("Z", positive=True)
    G = G.xreplace({Z: Zs})
    G = G.replace(lambda x: isinstance(x, sp.exp) and isinstance(x.args[0], sp.Indexed) and x.args[0].base == Lam,
                  lambda x: S[x.args[0].indices] * Zs)
    return sp.factor_terms(sp.expand(G))


def softmax_obligation() -> Obligation:
    """The chain rule through the column softmax: dL/dLambda_i = s_i (g_i - sum_k s_k g_k), symbolic D."""
    with stopwatch() as t:
        want = S[i, j] * (GRAM["g"][i, j] - sp.Sum(S[k, j] * GRAM["g"][k, j], (k, 1, D)))
        holds = True if sp.simplify(sp.expand(softmax_chain() - want)) == 0 else None
    return Obligation("dL/dLambda[i,j] = S[i,j] (g[i,j] - sum_k S[k,j] g[k,j]) (column softmax, symbolic D)", holds,
                      "SymPy differentiates e^{Lambda_k}/sum_l e^{Lambda_l} with indexed sums and sums over k",
                      "sympy identity", Scope("all", "all", "all", "all"), seconds=t())


def wkq_chain(scale=sp.Integer(1)) -> sp.Expr:
    """dL/dW_KQ[a,b] = sum_{i,j} G[i,j] d Lambda[i,j]/d W_KQ[a,b], with Lambda[i,j] = c sum_{a',b'} P[a',i]
    W_KQ[a',b'] P[b',q(j)]: SymPy differentiates the indexed double sum."""
    a2, b2 = sp.symbols("a' b'", integer=True, positive=True)
    lam_ij = scale * sp.Sum(P[a2, i] * WKQ[a2, b2] * P[b2, qpos[j]], (a2, 1, D), (b2, 1, D))
    dlam = _in_range(_in_range(sp.diff(lam_ij, WKQ[a, b]).doit()).doit())
    return sp.Sum(GRAM["G"][i, j] * dlam, (i, 1, D), (j, 1, N))


@lru_cache(maxsize=None)
def matrix_level(scale=sp.Integer(1)) -> dict:
    """(3.4) at the matrix level (symbolic D, N): P = sqrt(lambda) U with U orthogonal, Q = P E with E
    the D x N selection of the query positions (E^T E = I_N: distinct positions), logits c P^T W Q.
    Returns the W_KQ gradient c P G Q^T (SymPy's derivative of tr(G^T Lambda(W))) and the logit change
    of one step, -eta_KQ c^2 lambda^2 G."""
    Dm, Nm = sp.symbols("D N", integer=True, positive=True)
    W, U = sp.MatrixSymbol("W_KQ", Dm, Dm), sp.MatrixSymbol("U", Dm, Dm)
    G, E = sp.MatrixSymbol("G", Dm, Nm), sp.MatrixSymbol("E", Dm, Nm)
    Pm = sp.sqrt(lam) * U
    Qm = Pm * E
    logits = lambda w: scale * Pm.T * w * Qm  # noqa: E731
    # the loss depends on W only through Lambda, linearly: dL/dW = d/dW tr(G^T Lambda(W)) (chain rule)
    grad = sp.diff(sp.Trace(G.T * logits(W)), W)
    step = (logits(W - eta_kq * grad) - logits(W)).expand()
    step = sp.refine(step, sp.Q.orthogonal(U)).doit()
    # E^T E = I_N (distinct query positions)
    step = step.replace(lambda x: isinstance(x, sp.MatMul) and any(
        x.args[n_] == E.T and x.args[n_ + 1] == E for n_ in range(len(x.args) - 1)),
        lambda x: _drop_pair(x, E)).doit()
    return {"grad": grad, "step": step, "G": G, "P": Pm, "Q": Qm, "E": E, "U": U}


def _drop_pair(x, E):
    args = list(x.args)
    for n_ in range(len(args) - 1):
        if args[n_] == E.T and args[n_ + 1] == E:
            return sp.MatMul(*(args[:n_] + args[n_ + 2:])).doit()
    return x


def logit_step_factor(scale=sp.Integer(1)) -> sp.Expr:
    """The scalar f with Lambda(t+1) - Lambda(t) = -f G, from :func:`matrix_level` (eta_KQ lambda^2 for c = 1)."""
    ml = matrix_level(scale)
    step, G = ml["step"], ml["G"]
    coeff = sp.simplify(-step)
    if isinstance(coeff, sp.MatMul) and coeff.args[-1] == G:
        f = sp.Mul(*coeff.args[:-1])
    elif coeff == G:
        f = sp.Integer(1)
    else:
        raise AssertionError(f"the logit step is not a multiple of G: {step}")
    if f.has(sp.MatrixSymbol) or f.has(sp.MatrixExpr):
        raise AssertionError(f"the logit step is not a scalar multiple of G: {step}")
    return f


@lru_cache(maxsize=None)
def logit_step_obligation() -> Obligation:
    """(3.4) on the logits, with the logit temperature beta (logits beta P^T W_KQ p_q): one W_KQ step
    changes the logits by -eta_KQ lambda^2 beta^2 G (P^T P = lambda I, distinct query positions); with
    the two-valued logit gradient this is the delta recursion's factor."""
    with stopwatch() as t:
        ml = matrix_level(beta)
        want = beta * ml["P"] * ml["G"] * ml["Q"].T
        grad_ok = ml["grad"] == want or sp.simplify(ml["grad"] - want) == sp.ZeroMatrix(*want.shape)
        try:
            f = logit_step_factor(beta)
            holds = True if (grad_ok and sp.simplify(f - eta_kq * lam**2 * beta**2) == 0) else None
        except AssertionError:
            holds = None
    return Obligation("(3.4): dL/dW_KQ = beta P G Q^T and Lambda(t+1) - Lambda(t) = -eta_KQ lambda^2 beta^2 G "
                      "(logits beta P^T W_KQ Q, P^T P = lambda I, distinct query positions)", holds,
                      "matrix calculus in symbolic D, N: d/dW tr(G^T beta P^T W Q) = beta P G Q^T; "
                      "beta^2 P^T P G Q^T Q = lambda^2 beta^2 G", "matrix calculus", Scope("all", "all", "all", "all"),
                      seconds=t(), assumes=("orthogonal-P", "distinct-queries"))


@lru_cache(maxsize=None)
def wkq_chain_explicit(Dn: int = 3, Nn: int = 2) -> Obligation:
    """At explicit D, N with a general symbolic P and any smooth loss F of the logits: SymPy's derivative
    of F(P^T W_KQ Q) with respect to each W_KQ entry equals (P G Q^T) with G = dF/dLambda."""
    with stopwatch() as t:
        F = sp.Function("F")
        Pm = sp.Matrix(Dn, Dn, lambda r, c: sp.Symbol(f"P_{r}{c}", real=True))
        W = sp.Matrix(Dn, Dn, lambda r, c: sp.Symbol(f"W_{r}{c}", real=True))
        Qm = Pm[:, list(range(Nn))]
        logits = Pm.T * W * Qm
        lg = sp.Matrix(Dn, Nn, lambda r, c: sp.Symbol(f"l_{r}{c}", real=True))
        Fl = F(*list(lg))
        G = sp.Matrix(Dn, Nn, lambda r, c: sp.diff(Fl, lg[r, c]))
        sub = dict(zip(list(lg), list(logits)))
        direct = sp.Matrix(Dn, Dn, lambda r, c: sp.diff(Fl.subs(sub), W[r, c]))
        chain = Pm * G.subs(sub) * Qm.T
        holds = True if all(sp.expand((x - y).doit()) == 0 for x, y in zip(direct, chain)) else None
    return Obligation(f"[D={Dn} N={Nn}] dF(P^T W_KQ Q)/dW_KQ = P G Q^T for any loss F of the logits, general P",
                      holds, "SymPy differentiates the composed function entry by entry", "sympy identity",
                      Scope((f"D={Dn} N={Nn}",), "all", "all", "all"), seconds=t())


def gradient_obligations() -> list[Obligation]:
    """The (3.4) chain, as obligations: softmax (symbolic D), W_KQ (matrix level and explicit dims)."""
    return [softmax_obligation(), logit_step_obligation(), wkq_chain_explicit()]


# ---- the whole model at explicit dimensions: SymPy differentiates the composition ------------------
def explicit_model(sigma, P, Sstar, query, M: int, d: int, scale=sp.Integer(1)) -> dict:
    """The loss of the full model at explicit dimensions as one SymPy expression in every weight:
    logits c P^T W_KQ p_q(j) (P, S* exact matrices given), column softmax, Gram quantities, sigma's
    kernel. Returns {"L", "W_X", "V", "W_P", "W_KQ"} (symbol matrices) and {"grad_<name>"}: SymPy's
    derivatives of L, nothing assembled by hand (test them against central differences)."""
    D_, N_ = len(P), len(query)
    sym = lambda name, r, c: sp.Matrix(r, c, lambda x, y: sp.Symbol(f"{name}_{x}_{y}", real=True))  # noqa: E731
    Wx, Vs, Wp, Wkq = sym("wx", M, d), sym("vs", M, d), sym("wp", M, D_), sym("wkq", D_, D_)
    Pm, Tm = sp.Matrix(P), sp.Matrix(Sstar)
    logits = scale * Pm.T * Wkq * Pm[:, list(query)]
    Sm = sp.zeros(D_, N_)
    for c_ in range(N_):
        ex = [sp.exp(logits[r, c_]) for r in range(D_)]
        for r in range(D_):
            Sm[r, c_] = ex[r] / sum(ex)
    ell = sigma.kernel.ell
    b_ = Wp * Pm * Sm
    L = 0
    for r, c_ in ((r, c_) for r in range(M) for c_ in range(N_)):
        w, v, s_, t_ = Wx[r, :], Vs[r, :], Sm[:, c_], Tm[:, c_]
        L += ell.subs({A_: var * w.dot(w) * s_.dot(s_), C_: var * w.dot(v) * s_.dot(t_), B_: var * v.dot(v) * t_.dot(t_),
                       mu_u: mu * sum(w) * sum(s_) + b_[r, c_], mu_z: mu * sum(v) * sum(t_)}, simultaneous=True)
    L = c_loss * L / 2
    out = {"L": L, "W_X": Wx, "V": Vs, "W_P": Wp, "W_KQ": Wkq}
    for name in ("W_X", "W_P", "W_KQ"):
        X = out[name]
        out["grad_" + name] = sp.Matrix(X.rows, X.cols, lambda x, y: sp.diff(L, X[x, y]))
    return out


# ---- numeric evaluation of the formulas (for tests and spot checks) ------------------------------
def evaluate(expr, env: dict, dims: dict, at: dict | None = None):
    """Evaluate an indexed formula at numbers: ``env`` maps IndexedBase names to 0-based arrays (the
    formulas are 1-based) and symbol names to numbers; ``dims`` maps "M", "d", "D", "N" to integers and
    ``at`` the free indices (e.g. {m: 1, q: 2}) to 1-based integers."""
    e = expr.subs(at or {}).subs({M: dims["M"], d_: dims["d"], D: dims["D"], N: dims["N"]}).doit()
    while True:
        ready = [x for x in e.atoms(sp.Indexed) if all(n_.is_Integer for n_ in x.indices)]
        if not ready:
            break
        e = e.xreplace({x: sp.sympify(env[x.base.label.name][tuple(int(n_) - 1 for n_ in x.indices)]) for x in ready})
    left = e.atoms(sp.Indexed)
    if left:
        raise ValueError(f"unresolved indexed names: {left}")
    return e.subs({s_: env[s_.name] for s_ in e.free_symbols if s_.name in env})


__all__ = ["loss_formula", "update_formulas", "gradient_formulas", "softmax_chain", "softmax_obligation", "wkq_chain",
           "matrix_level", "logit_step_factor", "logit_step_obligation", "wkq_chain_explicit", "gradient_obligations",
           "explicit_model", "evaluate", "LEGEND", "mu"]
