"""Symbolic proof that GD maps the symmetric set into itself, and that the reduced recursion is exact.

The set: {W_X = diag(alpha) V*, W_P = 0, every column of S two-valued: logit delta on its support,
0 off it (the same delta in every column)}. The loss is L = c_L/2 sum_{m,j} ell(A_mj, C_mj, B_mj, mu_mj)
for an *undefined* per-entry kernel ell (centred law: A = v ||w_m||^2 ||s_j||^2, C = v <w_m,v*_m>
<s_j,s*_j>, B = v ||v*_m||^2 ||s*_j||^2, mu = (W_P P S)_mj), so what is proved holds for every sigma.

Route 1, symbolic dimensions M, d, D, N, K (:func:`prove_reduction_symbolic`): the "block" method.
A partial derivative only sees the function along one coordinate line, so to differentiate with
respect to one logit a_i of a column we write that column as the entry a_i plus K-1 (or K) other
on-support entries at delta and D-K (or D-K-1) off-support entries at 0: Z = e^{a_i} + (K-1) e^delta
+ (D-K), and ||s||^2, <s,s*> and the offset are explicit in symbolic D, K. Likewise one coordinate
w_mq of a row plus "the rest" of the row (symbolic d), and N identical columns summed by SymPy.
Obligations, for each case (0 < K < D, K = 0, K = D):
  (i)   dL/dW_X[m,q] = (dr_m/dalpha_m)/||v*_m||^2 * v*_mq     (rows stay on the line of v*_m);
  (ii)  dL/dW_P involves d ell/d mu at zero offset only            (W_P = 0 stays iff that vanishes);
  (iii) the logit gradient of each column is two-valued, K g_on + (D-K) g_off = 0 and
        g_on - g_off = D/(N K (D-K)) sum_m dr_m/ddelta (0 for K in {0, D});
  (iv)  the column quantities are those of verify.derive.reduced_map.column_quantities;
and, with (3.4) on logits (verify.derive.gradients.logit_step_obligation: Delta logits = -eta_KQ
lambda^2 G), the reduced recursion of verify.derive.reduced_map is the GD step exactly
(:func:`reduced_recursion_obligations`, per sigma, substituting its kernel).
Route 2, explicit dimensions (:func:`prove_reduction_generic`): the full model with every weight and
logit a symbol, differentiated by SymPy, at a generic point of the set. It is an independent second
route, and its scope says "checked at dimensions {...}". One of its sizes has D - K >= 2, where
D/(N K) and D/(N K (D - K)) differ.
(ii) is reduced to d ell/d mu = 0 at zero offset; :func:`parity_obligation` proves it for odd sigma
and shows it fails (with the non-zero derivative) otherwise.
"""
from __future__ import annotations

import itertools
from functools import lru_cache

import sympy as sp

from ..run.cache import by_code_version
from ..evidence import Scope, dims_label
from ..model.hypotheses import IID_MOMENTS
from ..model.sigmas import Sigma, X
from .obligations import Obligation, ProofReport, is_zero, stopwatch
from .reduced_map import column_quantities, reduced, reduced_step_exprs
from ..model.symbols import A, B, C, D as Ds, K as Ks, M as Ms, N as Ns, alpha, c_loss, delta, eta_v, mu_u, \
    mu_z, var, vn, beta
from .gradients import logit_step_factor, logit_step_obligation
from .loss import matrix_form, mu

_is_zero = is_zero          # kept under its old name (tests and claims import it)
CASE_LABEL = {"interior": "0 < K < D", "k-zero": "K = 0", "k-equals-d": "K = D"}
ELL = sp.Function("ell")    # the undefined per-entry kernel ell(A, C, B, mu)
SLOTS = ("A", "C", "B", "mu")
e_sym = sp.Symbol("e", positive=True)     # e^delta
ALL_SIGMA = Scope(dims="all", sigma="all", conventions="all", horizon="all")
# What the steps use (verify.model.hypotheses ids), declared on each obligation:
# the loss is c_L/2 sum ell(A, C, B, mu) of the Gram quantities (i.i.d. entries) with the offset mu = (W_P P S)_mj
# only (centred entries) and ell sigma's Gaussian kernel (a linear sigma sees the first two moments only, so any law);
KERNEL_FORM = IID_MOMENTS + ("gaussian-or-linear",)
# ... evaluated on the symmetric set, whose two-valued columns are those of S* with weights 1/K;
ON_THE_SET = KERNEL_FORM + ("uniform-S*",)
# ... and GD starts in the set (W = 0: alpha = 0, W_P = 0, S uniform).
FROM_ZERO = ("zero-init",)


class _Partials:
    """Replace each partial derivative of the undefined kernel by one symbol per (slot, arguments).

    Arguments are put in SymPy's canonical rational form (cancel), so two partials at equal points
    become the same symbol and an identity between them is a rational identity.
    """

    def __init__(self):
        self.table: dict = {}

    def table_key_slot(self, symbol) -> int:
        return next(k[0] for k, v in self.table.items() if v == symbol)

    def key(self, symbol):
        return next(k for k, v in self.table.items() if v == symbol)

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


# ---- route 1: symbolic dimensions (the block method) --------------------------------------------
def _block_column(case: str, own: str):
    """One column at a two-valued point with one logit ``a`` free, the others in blocks.

    ``own`` is "on" or "off" (where the free entry sits). Returns the column's quantities as
    functions of a: ||s||^2, <s, s*>, ||s*||^2, the offset mu = sum_i b_i s_i (b_own for the free
    entry, B_on / B_off the sums of b over the other entries of each block: all 0 at W_P = 0), the
    value of a at the point, and the support mass.
    """
    a = sp.Symbol("a", real=True)
    b_own, B_on, B_off = sp.symbols("b_own B_on B_off", real=True)
    E = e_sym                                               # e^delta: the on-support entries' exp(logit)
    # (number of other on-support entries, of other off-support entries, support size, own on support?)
    if case == "interior":
        n_on, n_off, ksup, on = ((Ks - 1, Ds - Ks, Ks, True) if own == "on" else (Ks, Ds - Ks - 1, Ks, False))
    elif case == "k-zero":
        n_on, n_off, ksup, on = sp.Integer(0), Ds - 1, sp.Integer(0), False
    else:   # k-equals-d: every entry is on the support, S* uniform 1/D
        n_on, n_off, ksup, on = Ds - 1, sp.Integer(0), Ds, True
    Z = sp.exp(a) + n_on * E + n_off
    s_own, s_on, s_off = sp.exp(a) / Z, E / Z, 1 / Z
    w = 1 / ksup if ksup != 0 else sp.Integer(0)            # the entries of s* on the support
    sq = s_own**2 + n_on * s_on**2 + n_off * s_off**2
    corr = w * ((s_own if on else 0) + n_on * s_on)
    tsq = ksup * w**2
    mass = (s_own if on else 0) + n_on * s_on
    err2 = ((s_own - w) ** 2 if on else s_own**2) + n_on * (s_on - w) ** 2 + n_off * s_off**2
    mu = b_own * s_own + B_on * s_on + B_off * s_off
    at = sp.log(e_sym) if on else sp.Integer(0)
    return {"a": a, "sq": sq, "corr": corr, "tsq": tsq, "mu": mu, "at": at, "mass": mass, "err2": err2,
            "offsets": (b_own, B_on, B_off)}


def _at_point(col: dict, x):
    """Evaluate a column expression at the two-valued point (a at its value, W_P = 0)."""
    return sp.sympify(x).subs({o: 0 for o in col["offsets"]}).subs(col["a"], col["at"])


def _point_quantities(case: str) -> dict:
    """||s||^2, <s,s*>, ||s*||^2, support mass, ||s - s*||^2 of a column at the two-valued point."""
    col = _block_column(case, "on" if case != "k-zero" else "off")
    return {k: sp.factor(sp.cancel(_at_point(col, col[k]))) for k in ("sq", "corr", "tsq", "mass", "err2")}


def _row_loss(case: str, al, vn_):
    """r_m: the loss of row m on the set, c_L/2 times the N identical column terms (SymPy sums them)."""
    pq = _point_quantities(case)
    j = sp.Symbol("j", integer=True, positive=True)
    term = ELL(var * al**2 * vn_ * pq["sq"], var * al * vn_ * pq["corr"], var * vn_ * pq["tsq"], 0)
    return c_loss / 2 * sp.Sum(term, (j, 1, Ns)).doit()


def _row_obligation(case: str, scope: Scope) -> Obligation:
    """(i): d/dw_mq of the loss, one coordinate plus the rest of the row, equals (dr_m/dalpha)/vn v*_mq."""
    with stopwatch() as t:
        w, vq = sp.symbols("w v_q", real=True)
        R_ww, R_wv = sp.symbols("R_ww R_wv", real=True)          # sum over the other d - 1 coordinates
        pq = _point_quantities(case)
        j = sp.Symbol("j", integer=True, positive=True)
        mu_j = sp.Symbol("mu_j", real=True)                       # the offset (independent of W_X: centred law)
        term = ELL(var * (w**2 + R_ww) * pq["sq"], var * (w * vq + R_wv) * pq["corr"], var * vn * pq["tsq"], mu_j)
        L_row = c_loss / 2 * sp.Sum(term, (j, 1, Ns))             # + the other rows, which do not contain w
        g = sp.diff(L_row, w).doit()
        point = {w: alpha * vq, R_ww: alpha**2 * (vn - vq**2), R_wv: alpha * (vn - vq**2), mu_j: 0}
        norm = _Partials()
        g = norm(g.subs(point).doit())
        want = norm(sp.diff(_row_loss(case, alpha, vn), alpha).doit()) / vn * vq
        holds = is_zero(g - want)
    return Obligation(f"[{CASE_LABEL[case]}] dL/dW_X[m,q] = (dr_m/dalpha_m)/||v*_m||^2 v*_mq (any kernel)", holds,
                      "block method: one coordinate w_mq plus the rest of the row (symbolic d), N identical "
                      "columns summed by SymPy; rows stay on the line of v*_m", "sympy identity", scope, seconds=t(),
                      assumes=ON_THE_SET)


def _wp_obligation(scope: Scope) -> Obligation:
    """(ii): d/dW_P[m,k] of the loss at W_P = 0 is sum_j (PS)_kj d ell/d mu (A_mj, C_mj, B_mj, 0)."""
    with stopwatch() as t:
        p = sp.Symbol("p", real=True)                            # W_P[m, k]
        j = sp.Symbol("j", integer=True, positive=True)
        x, R, Aj, Cj, Bj = (sp.IndexedBase(n) for n in ("PS_k", "R", "A", "C", "B"))
        L_row = c_loss / 2 * sp.Sum(ELL(Aj[j], Cj[j], Bj[j], p * x[j] + R[j]), (j, 1, Ns))
        g = sp.diff(L_row, p).doit()
        g = g.subs(p, 0)
        g = g.replace(lambda e: isinstance(e, sp.Indexed) and e.base == R, lambda e: sp.Integer(0)).doit()
        norm = _Partials()
        gn = norm(g)
        used = [norm.key(s_) for s_ in gn.free_symbols if s_.name.startswith("ell")]
        only_mu = bool(used) and all(slot == 3 and args[3] == 0 for slot, args in used)
        # and if d ell/d mu (A, C, B, 0) = 0 for all A, C, B (parity), the gradient is 0:
        vanishes = gn.xreplace({norm.table[k]: 0 for k in norm.table}).doit() == 0
    return Obligation("dL/dW_P[m,k] = c_L/2 sum_j (P S)_kj d ell/d mu (A_mj, C_mj, B_mj, 0) at W_P = 0 (any kernel)",
                      True if (only_mu and vanishes) else None,
                      "only the offset partial at zero offset appears, so W_P stays 0 exactly when it vanishes "
                      "(parity lemma)", "sympy identity", scope, seconds=t(), assumes=KERNEL_FORM)


def _logit_gradient(case: str, own: str, m):
    """Row m's part of the logit gradient of one entry (block method), per column (no sum over m)."""
    col = _block_column(case, own)
    al, vn_ = sp.IndexedBase("alpha")[m], sp.IndexedBase("vn")[m]
    Lc = c_loss / 2 * ELL(var * al**2 * vn_ * col["sq"], var * al * vn_ * col["corr"], var * vn_ * col["tsq"], col["mu"])
    return _at_point(col, sp.diff(Lc, col["a"])).doit(), col


_ROW = sp.Symbol("m", integer=True, positive=True)


@lru_cache(maxsize=None)
def logit_gradients(case: str) -> dict:
    """Row m's part of the logit gradient of a free on-support ("on") and off-support ("off") entry at the
    two-valued point, and d r_m/d delta ("dr", interior only), with the kernel's partials replaced by
    shared symbols (so identities between them are rational identities). Row quantities alpha[m], vn[m]."""
    m = _ROW
    owns = ("on", "off") if case == "interior" else (("on",) if case == "k-equals-d" else ("off",))
    norm = _Partials()
    out = {own: norm(_logit_gradient(case, own, m)[0]) for own in owns}
    if case == "interior":
        r = _row_loss(case, sp.IndexedBase("alpha")[m], sp.IndexedBase("vn")[m])
        out["dr"] = norm(e_sym * sp.diff(r, e_sym).doit())       # d r_m / d delta = e d r_m / d e
    return out


def _logit_obligations(case: str, scope: Scope) -> list[Obligation]:
    """(iii) for one case, summed over the M rows (SymPy Sum over m; the identities hold term by term)."""
    out = []
    m = _ROW
    with stopwatch() as t:
        allowed = {e_sym, c_loss, var, Ds, Ks, Ns}
        lg = logit_gradients(case)
        gn = {k: v for k, v in lg.items() if k in ("on", "off")}
        rows = {e for v in gn.values() for e in v.atoms(sp.Indexed)}
        free = set().union(*(v.xreplace({e: 1 for e in rows}).free_symbols for v in gn.values()))
        two = all(s_ in allowed or s_.name.startswith("ell") for s_ in free) and all(
            e.base.label.name in ("alpha", "vn") and e.indices == (m,) for e in rows)
    out.append(Obligation(f"[{CASE_LABEL[case]}] every column's logit gradient is two-valued (one value on the support, "
                          "one off it; any kernel)", True if two else None,
                          "block method: the gradient of a free logit at the point depends only on (alpha_m, "
                          "||v*_m||^2, delta, D, K, N), not on which entry it is", "sympy identity", scope,
                          seconds=t(), assumes=ON_THE_SET))
    with stopwatch() as t:
        if case == "interior":
            gon, goff, dr = lg["on"], lg["off"], lg["dr"]
            gap = sp.Sum(gon - goff - Ds / (Ns * Ks * (Ds - Ks)) * dr, (m, 1, Ms))
            bal = sp.Sum(Ks * gon + (Ds - Ks) * goff, (m, 1, Ms))
            h_gap, h_bal = is_zero(gap.function), is_zero(bal.function)
            name = ("[0 < K < D] g_on - g_off = D/(N K (D-K)) sum_m dr_m/ddelta and K g_on + (D-K) g_off = 0 "
                    "(any kernel)")
            holds = True if (h_gap and h_bal) else None
        else:
            gz = sp.Sum(next(iter(gn.values())), (m, 1, Ms))
            holds = is_zero(gz.function)
            name = f"[{CASE_LABEL[case]}] the logit gradient vanishes: delta is frozen, S stays uniform (any kernel)"
    out.append(Obligation(name, holds, "summed over rows m = 1..M by SymPy (the identity holds term by term); "
                          "d r_m/d delta from the reduced row loss r_m = c_L N/2 ell(v alpha^2 vn ||s||^2, "
                          "v alpha vn <s,s*>, v vn ||s*||^2, 0)", "sympy identity", scope, seconds=t(),
                          assumes=ON_THE_SET))
    return out


def _column_obligation(case: str, scope: Scope) -> Obligation:
    """(iv): the block column at the point has the quantities verify.derive.reduced_map uses."""
    with stopwatch() as t:
        pq = _point_quantities(case)
        cq = {k: v.subs(delta, sp.log(e_sym)) for k, v in column_quantities(case).items()}
        pairs = [(pq["sq"], cq["sq_s"]), (pq["corr"], cq["c_ss"]), (pq["tsq"], cq["sq_ss"]), (pq["mass"], cq["p"]),
                 (pq["err2"], cq["s_err2"])]
        holds = all(is_zero(a - b) for a, b in pairs) or None
        # both block representations (free entry on / off the support) describe the same column
        if case == "interior":
            off = _block_column(case, "off")
            holds = holds and is_zero(_at_point(off, off["sq"]) - pq["sq"]) and is_zero(
                _at_point(off, off["corr"]) - pq["corr"]) or None
    return Obligation(f"[{CASE_LABEL[case]}] ||s||^2, <s,s*>, ||s*||^2, support mass and ||s-s*||^2 of a two-valued "
                      "column equal verify.derive.reduced_map.column_quantities", holds, "", "sympy identity", scope,
                      seconds=t(), assumes=("uniform-S*",))


def initial_point_obligation(scope: Scope) -> Obligation:
    """GD from zero initialisation starts in the set: W_X(0) = 0 = 0 V*, W_P(0) = 0, and W_KQ(0) = 0 gives zero
    logits, so every column of S(0) is uniform (two-valued with delta = 0): the block column at a = 0, e = 1 has
    every entry 1/D (SymPy)."""
    with stopwatch() as t:
        col = _block_column("interior", "on")
        Z = sp.exp(col["a"]) + (Ks - 1) * e_sym + (Ds - Ks)
        entries = [sp.exp(col["a"]) / Z, e_sym / Z, 1 / Z]
        holds = True if all(is_zero(x.subs({col["a"]: 0, e_sym: 1}) - 1 / Ds) for x in entries) else None
    return Obligation("initial point: W_X(0) = 0 = 0 V*, W_P(0) = 0 and S(0) uniform (two-valued, delta = 0) at zero "
                      "initialisation", holds, "W_KQ(0) = 0 gives zero logits; the softmax of D zeros is 1/D",
                      "sympy identity", scope, seconds=t(), assumes=FROM_ZERO)


@lru_cache(maxsize=None)
def prove_reduction_symbolic(cases=("interior", "k-zero", "k-equals-d")) -> ProofReport:
    """The reduction for an undefined kernel in symbolic M, d, D, N, K (block method; module docstring).

    Scope: every dimension, every sigma whose loss is a sum of per-entry kernels of the Gram
    quantities (centred law), every value of c_L, v, lambda, eta (kept symbolic), every t (the set
    is invariant, so induction on t). Each obligation records its case of K in its statement.

    >>> prove_reduction_symbolic().proved
    True
    """
    rep = ProofReport("generic kernel ell(A, C, B, mu), symbolic dimensions",
                      {"M": "M", "d": "d", "D": "D", "N": "N", "K": "K"})
    rep.obligations.append(initial_point_obligation(ALL_SIGMA))
    rep.obligations.append(_wp_obligation(ALL_SIGMA))
    for case in cases:
        rep.obligations.append(_row_obligation(case, ALL_SIGMA))
        rep.obligations.extend(_logit_obligations(case, ALL_SIGMA))
        rep.obligations.append(_column_obligation(case, ALL_SIGMA))
    rep.obligations.append(logit_step_obligation())
    return rep


def delta_step_factor(case: str) -> sp.Expr:
    """The derived coefficient c with delta' - delta = -c sum_m dr_m/ddelta: (3.4) on logits
    (Delta logits = -eta_KQ lambda^2 G, verify.derive.gradients) times g_on - g_off per unit of
    sum_m dr_m/ddelta (obligation (iii)); 0 when K is 0 or D."""
    if case != "interior":
        return sp.Integer(0)
    return logit_step_factor(beta) * Ds / (Ns * Ks * (Ds - Ks))


# ---- the reduced recursion is the GD step, per sigma --------------------------------------------
def canonical_roots(expr, e=e_sym):
    """A canonical form for comparing kernels that contain roots and arc functions (identities on
    the domain alpha > 0, e = e^delta > 0): e^delta -> e; sqrt(x) -> sqrt(factor(cancel(x)));
    acos(x) -> atan2(sqrt(1 - x^2), x); atan2(y, x) -> atan(y/x) when x is provably positive."""
    root = lambda y: sp.sqrt(sp.factor(sp.cancel(sp.expand(y))))  # noqa: E731
    x = sp.sympify(expr).subs(sp.exp(delta), e).subs(delta, sp.log(e))
    x = x.replace(lambda y: isinstance(y, sp.Pow) and y.exp == sp.Rational(1, 2), lambda y: root(y.base))
    x = x.replace(lambda y: isinstance(y, sp.acos), lambda y: sp.atan2(root(1 - y.args[0] ** 2), y.args[0]))
    return x.replace(lambda y: isinstance(y, sp.atan2) and y.args[1].is_positive,
                     lambda y: sp.atan(sp.factor(sp.cancel(y.args[0] / y.args[1]))))


def kernel_at_zero_teacher(sigma: Sigma) -> Obligation:
    """K = 0 (S* = 0, B = C = 0): ell(A, 0, 0, 0) = E[sigma(u)^2], the kernel verify.derive.reduced_map uses
    there. ell is taken as its limit B -> 0+ (the ReLU kernel has C/sqrt(AB) = 0/0 at B = 0)."""
    with stopwatch() as t:
        k = sigma.kernel
        Bp = sp.Symbol("B_p", positive=True)
        Ap = sp.Symbol("A_p", positive=True)
        e = k.ell.subs({mu_u: 0, mu_z: 0, C: 0}).subs({B: Bp, A: Ap})
        lim = sp.limit(e, Bp, 0, "+")
        vanishes = sigma.at_zero == 0
        holds = is_zero(lim - k.second_moment.subs(mu_u, 0).subs(A, Ap)) if vanishes else False
    return Obligation("[K = 0] ell(A, 0, 0, 0) = E[sigma(u)^2] (the teacher output is sigma(0) = 0)", holds,
                      "" if vanishes else f"sigma(0) != 0 for {sigma.spec()}: the K = 0 reduction "
                      "does not apply", "sympy identity", Scope("all", (sigma.spec(),), "all", "all"),
                      None if holds is not False else {"sigma(0)": str(sigma.at_zero)},
                      seconds=t(), assumes=("gaussian-or-linear",))


@lru_cache(maxsize=None)
def reduced_recursion_obligations(sigma: Sigma, cases=("interior", "k-zero", "k-equals-d")) -> list[Obligation]:
    """verify.derive.reduced_map's step is the GD step of the proof, for sigma's kernel, in symbolic dimensions.

    For each case: reduced's row loss equals r_m of the proof with ell = sigma's kernel (compared in
    :func:`canonical_roots` form), alpha_next = alpha - eta_V (dr/dalpha)/vn (obligation (i) and (3.3)),
    and the per-row delta increment is -(derived factor) dr_m/ddelta (obligation (iii) and (3.4))."""
    out = []
    sc = Scope("all", (sigma.spec(),), "all", "all")
    kz = kernel_at_zero_teacher(sigma)
    for case in cases:
        with stopwatch() as t:
            red = reduced(sigma, case)
            a_next, inc = reduced_step_exprs(sigma, case)
            # r_m of the proof, c_L N/2 ell(v alpha^2 vn ||s||^2, v alpha vn <s,s*>, v vn ||s*||^2, 0), with the
            # column quantities of obligation (iv) (proved equal to verify.derive.reduced_map.column_quantities)
            cq = column_quantities(case)
            r = _row_loss(case, alpha, vn).subs(e_sym, sp.exp(delta))
            (call,) = [f for f in r.atoms(sp.Function) if f.func == ELL]
            want = (var * alpha**2 * vn * cq["sq_s"], var * alpha * vn * cq["c_ss"], var * vn * cq["sq_ss"], 0)
            same_args = is_zero(r / call - c_loss * Ns / 2) and all(is_zero(x - y) for x, y in zip(call.args, want))
            if case == "k-zero":
                ker = sigma.kernel.second_moment.subs(mu_u, 0).subs(A, want[0])
            else:
                ker = sigma.kernel.ell.subs({A: want[0], C: want[1], B: want[2], mu_u: 0, mu_z: 0}, simultaneous=True)
            r = c_loss * Ns / 2 * ker
            dr = canonical_roots(r) - canonical_roots(red.r)
            same_r = True if dr == 0 else is_zero(dr)
            same_a = is_zero(a_next - (alpha - eta_v * sp.diff(red.r, alpha) / vn))
            same_d = is_zero(inc + delta_step_factor(case) * sp.diff(red.r, delta))
            holds = True if (same_args and same_r and same_a and same_d) else None
        detail = f"row loss: {same_args and same_r}, alpha step: {same_a}, delta step: {same_d}"
        cex = None
        if case == "k-zero" and kz.holds is not True:
            # reduced uses E[sigma(u)^2] at K = 0, which is ell(A, 0, 0, 0) only when sigma(0) = 0
            holds, cex = kz.holds, kz.counterexample
            detail += f"; but {kz.name}: {kz.status}"
        out.append(Obligation(f"[{CASE_LABEL[case]}] verify.derive.reduced_map's step (alpha_m, delta) is the GD step "
                              f"(3.3)-(3.4) on the set, sigma = {sigma.spec()}", holds, detail, "sympy identity", sc,
                              cex, seconds=t(), assumes=ON_THE_SET))
    if "k-zero" in cases:
        out.append(kz)
    return out


# ---- route 2: explicit dimensions ---------------------------------------------------------------
def parity_obligation(sigma: Sigma) -> Obligation:
    """d/d mu_u E[(sigma(u + mu_u) - sigma(z))^2] at 0 equals 2 E[(sigma(u) - sigma(z)) sigma'(u)];
    for a centred Gaussian (u, z) this vanishes when the integrand is odd under (u, z) -> (-u, -z)."""
    sc = Scope("all", (sigma.spec(),), "all", "all")
    with stopwatch() as t:
        x, y = X, sp.Symbol("y", real=True)
        f = (sigma.expr(x) - sigma.expr(y)) * sp.diff(sigma.expr(x), x)
        odd = sp.simplify(f + f.subs({x: -x, y: -y}, simultaneous=True))
    name = "W_P gradient vanishes at W_P = 0 (parity: d ell/d mu (A, C, B, 0) = 0)"
    if odd == 0:
        return Obligation(name, True, "(sigma(u)-sigma(z)) sigma'(u) is odd under (u,z)->(-u,-z); the centred "
                          "Gaussian law is even", "sympy identity", sc, seconds=t(), assumes=KERNEL_FORM)
    dmu = sp.simplify(sigma.kernel.dmu_at_zero)
    return Obligation(name, False, f"sigma = {sigma.spec()} is not odd: d ell/d mu_u at 0 = {sp.sstr(dmu)}, "
                      "so W_P leaves 0 unless frozen (wp_trainable = False)", "sympy identity", sc,
                      {"d ell/d mu_u at 0": sp.sstr(dmu)}, seconds=t(), assumes=KERNEL_FORM)


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
    e = e_sym
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


@lru_cache(maxsize=None)
def prove_reduction_generic(M: int = 2, d: int = 2, D: int = 3, supports=((0, 1), (1, 2))) -> ProofReport:
    """Obligations (i)-(iii) for an undefined kernel at explicit dimensions (route 2; module docstring).
    The scope of every obligation is these dimensions only."""
    N, K = len(supports), len(supports[0])
    label = dims_label(M, d, D, N, K)
    sc = Scope(dims=(label,), sigma="all", conventions="all", horizon="all")
    rep = ProofReport("generic kernel ell(A, C, B, mu)",
                      {"M": M, "d": d, "D": D, "N": N, "K": K, "supports": [list(g) for g in supports]})
    with stopwatch() as t:
        L, sy, point = _model_loss(lambda A_, C_, B_, b_: ELL(A_, C_, B_, b_), M, d, D, supports)
    build = t()
    V, W, WP, a, al, e = sy["V"], sy["W"], sy["WP"], sy["a"], sy["alpha"], sy["e"]
    norm = _Partials()


    def partial(x):
        """dL/dx at the point: a partial derivative only sees L along the line through the point in
        direction x, so every other variable is put at its value first (smaller expressions)."""
        line = L.xreplace({k_: v_ for k_, v_ in point.items() if k_ != x})
        return norm(sp.diff(line, x).xreplace({x: point[x]}).doit())
    cols = {k_: v_.subs({Ds: D, Ks: K}).subs(delta, sp.log(e)) for k_, v_ in column_quantities(
        "k-zero" if K == 0 else ("k-equals-d" if K == D else "interior")).items()}
    vns = [sum(V[m, q] ** 2 for q in range(d)) for m in range(M)]
    rows = [c_loss * sp.Rational(N, 2) * ELL(var * al[m] ** 2 * vns[m] * cols["sq_s"], var * al[m] * vns[m] * cols["c_ss"],
                                             var * vns[m] * cols["sq_ss"], 0) for m in range(M)]
    with stopwatch() as t:
        ok = all(is_zero(partial(W[m, q]) - norm(sp.diff(rows[m], al[m]).doit()) / vns[m] * V[m, q])
                 for m in range(M) for q in range(d))
    rep.obligations.append(Obligation(f"[{label}] dL/dW_X rows = (dr_m/dalpha_m)/||v*_m||^2 v*_m (any kernel)",
                                      True if ok else None, "", "sympy identity", sc, seconds=t() + build,
                                      assumes=ON_THE_SET))
    with stopwatch() as t:
        gp = [partial(WP[m, i]) for m in range(M) for i in range(D)]
        only_mu = all(all(norm.table_key_slot(s_) == 3 for s_ in g.free_symbols if s_.name.startswith("ell")) for g in gp)
    rep.obligations.append(Obligation(f"[{label}] dL/dW_P is a combination of d ell/d mu at zero offset only",
                                      True if only_mu else None,
                                      "so W_P stays 0 exactly when d ell/d mu (A, C, B, 0) = 0 (parity lemma)",
                                      "sympy identity", sc, seconds=t(), assumes=ON_THE_SET))
    with stopwatch() as t:
        # the delta derivative of the reduced loss, through e = e^delta
        tot = sum(norm((sp.diff(r.subs(e, sp.exp(delta)), delta)).subs(delta, sp.log(e)).doit()) for r in rows)
        two, gap = True, True
        for j, g in enumerate(supports):
            grads = [partial(a[i, j]) for i in range(D)]
            on, off = [grads[i] for i in g], [grads[i] for i in range(D) if i not in g]
            two = two and all(is_zero(x - on[0]) for x in on[1:]) and all(is_zero(x - off[0]) for x in off[1:])
            if 0 < K < D:
                gap = gap and is_zero(on[0] - off[0] - sp.Rational(D, N * K * (D - K)) * tot)
            else:
                gap = gap and all(is_zero(x) for x in on + off)
    rep.obligations.append(Obligation(f"[{label}] each column's logit gradient is two-valued (any kernel)",
                                      True if two else None, "", "sympy identity", sc, seconds=t() / 2,
                                      assumes=ON_THE_SET))
    rep.obligations.append(Obligation(f"[{label}] g_on - g_off = D/(N K (D-K)) sum_m dr_m/ddelta; 0 if K in {{0, D}} "
                                      "(any kernel)", True if gap else None,
                                      f"D/(N K (D-K)) = {sp.Rational(D, N * K * (D - K)) if 0 < K < D else '-'}, "
                                      f"D/(N K) = {sp.Rational(D, N * K) if K else '-'}", "sympy identity", sc,
                                      seconds=t() / 2, assumes=ON_THE_SET))
    return rep


# The explicit sizes of route 2: the original one (D - K = 1) and one with D - K = 3, where the
# factors D/(N K) = 5/4 and D/(N K (D - K)) = 5/12 differ, so a wrong D-dependence cannot pass.
EXPLICIT_SIZES = ((2, 2, 3, ((0, 1), (1, 2))), (1, 2, 5, ((0, 1), (1, 3))))


def explicit_routes() -> list[ProofReport]:
    """Route 2 at every size of :data:`EXPLICIT_SIZES` (cached per size)."""
    return [prove_reduction_generic(M, d, D, sup) for M, d, D, sup in EXPLICIT_SIZES]


@lru_cache(maxsize=None)   # deterministic: the derive output and several claims cite it
def prove_reduction(sigma: Sigma, M: int | None = None, d: int | None = None, D: int | None = None,
                    supports=None) -> ProofReport:
    """The reduction for one sigma: the symbolic-dimension proof for any kernel, sigma's parity lemma,
    the reduced recursion for sigma's kernel, and the explicit-dimension routes (second opinion).

    With explicit ``M, d, D, supports`` only that explicit size is used as the second route. Kept on disk per
    code version (verify.run.cache; about 3 s of SymPy for sigma = identity, which the derive part and several
    claims of ``verify all`` each asked for in their own process)."""
    return _prove_reduction(sigma, M, d, D, None if supports is None else tuple(map(tuple, supports)))


@by_code_version("reduction-proof")
def _prove_reduction(sigma: Sigma, M, d, D, supports) -> ProofReport:
    """:func:`prove_reduction`, computed (``supports`` as a tuple of tuples: its repr names the cache entry)."""
    sym = prove_reduction_symbolic()
    routes = [prove_reduction_generic(M, d, D, supports)] if M is not None else explicit_routes()
    rep = ProofReport(sigma.spec(), {"symbolic": sym.dims, "explicit": [r.dims for r in routes]},
                      list(sym.obligations))
    rep.obligations.append(parity_obligation(sigma))
    rep.obligations.extend(reduced_recursion_obligations(sigma))
    for r in routes:
        rep.obligations.extend(r.obligations)
    if sigma.is_identity:
        rep.obligations.extend(prove_identity_general().obligations)
    return rep


TOPICS = {
    "rows": lambda o: "W_X" in o.name,                                   # rows of W_X stay on the line of v*_m
    "wp": lambda o: "W_P" in o.name,                                     # W_P stays 0 (with sigma's parity lemma)
    "two-valued": lambda o: "two-valued" in o.name or "g_on" in o.name or "logit gradient vanishes" in o.name
    or o.name.startswith("(3.4)"),                                        # columns of S stay two-valued; delta step
    "recursion": lambda o: "verify.derive.reduced_map's step" in o.name or "ell(A, 0, 0, 0)" in o.name,
    "all": lambda o: True,
}


def obligations_for(sigma: Sigma, topic: str = "all", explicit: bool = True) -> list[Obligation]:
    """The obligations of :func:`prove_reduction` that a claim about ``topic`` cites (see :data:`TOPICS`):
    "rows", "wp", "two-valued", "recursion" or "all"; ``explicit=False`` drops the explicit-dimension
    second route. Cite them with ``[o.evidence() for o in obligations_for(sigma, "wp")]``."""
    if topic not in TOPICS:
        raise ValueError(f"topic must be one of {sorted(TOPICS)}, not {topic!r}")
    obs = [o for o in prove_reduction(sigma).obligations if TOPICS[topic](o)]
    return [o for o in obs if explicit or o.scope.dims == "all"]


def _vanishes(expr) -> bool:
    """A matrix expression is 0 when every term of its expansion carries a zero factor."""
    expr = sp.expand(expr)
    terms = sp.Add.make_args(expr)
    return all(t == 0 or isinstance(t, sp.ZeroMatrix)
               or any(a == 0 or isinstance(a, sp.ZeroMatrix) for a in t.args) for t in terms)


@lru_cache(maxsize=None)
def prove_identity_general() -> ProofReport:
    """For sigma = identity (centred law) the invariance holds in *every* dimension M, d, D, N:
    from the matrix-calculus gradients of verify.derive.loss.matrix_form (symbolic dimensions),
    at W_X = alpha V*, W_P = 0:
      dL/dW_X = (alpha v ||S||^2 - v <S, S*>) V*,   dL/dW_P = 0,   dL/dS = alpha^2 v ||V*||^2 S - alpha v ||V*||^2 S*,
    so the rows stay proportional, W_P stays 0, and dL/dS is a combination of S and S* (two-valued
    columns give a two-valued logit gradient through the softmax Jacobian)."""
    sc = Scope("all", ("identity",), "all", "all")
    rep = ProofReport("identity (all dimensions)", {"M": "M", "d": "d", "D": "D", "N": "N"})
    with stopwatch() as t:
        mf = matrix_form()
    build = t()
    s = mf.symbols
    a = sp.Symbol("alpha")
    V, S, Ss, WP, WX = s["V"], s["S"], s["S_star"], s["W_P"], s["W_X"]
    at = lambda e: e.subs(mu, 0).subs(WX, a * V).subs(WP, sp.ZeroMatrix(*WP.shape))  # noqa: E731
    with stopwatch() as t:
        gx = at(mf.grad_WX)
        want = (a * var * sp.Trace(S * S.T) - var * sp.Trace(S * Ss.T)) * V
        ok = _vanishes(sp.simplify(gx - want))
    rep.obligations.append(Obligation("dL/dW_X = (alpha v ||S||^2 - v <S,S*>) V* at W_X = alpha V* (all M, d, D, N)",
                                      True if ok else None, "", "matrix calculus", sc, seconds=t() + build,
                                      assumes=IID_MOMENTS))
    with stopwatch() as t:
        ok = _vanishes(at(mf.grad_WP))
    rep.obligations.append(Obligation("dL/dW_P = 0 at W_P = 0, mean 0 (all M, d, D, N)", True if ok else None, "",
                                      "matrix calculus", sc, seconds=t(), assumes=IID_MOMENTS))
    with stopwatch() as t:
        gs = sp.expand(at(mf.grad_S))
        rest = gs - (a**2 * var * sp.Trace(V * V.T) * S - a * var * sp.Trace(V * V.T) * Ss)
        ok = _vanishes(rest)
    rep.obligations.append(Obligation("dL/dS = alpha^2 v ||V*||^2 S - alpha v ||V*||^2 S* (all M, d, D, N)",
                                      True if ok else None, "", "matrix calculus", sc, seconds=t(), assumes=IID_MOMENTS))
    return rep


__all__ = ["Obligation", "ProofReport", "prove_reduction", "prove_reduction_symbolic", "prove_reduction_generic",
           "explicit_routes", "parity_obligation", "reduced_recursion_obligations", "prove_identity_general",
           "initial_point_obligation", "KERNEL_FORM", "ON_THE_SET", "FROM_ZERO",
           "delta_step_factor", "canonical_roots", "logit_gradients", "obligations_for", "TOPICS", "EXPLICIT_SIZES"]
