"""The full-matrix population loss and its gradients, in the coordinates the engines iterate.

L depends on W_P and W_KQ only through Y = W_P P (the offsets are b = W_P P S = Y S) and the logits
Lambda = beta P^T W_KQ Q (Q = [p_q(1), ..., p_q(N)], S = column softmax of Lambda). This module computes
L and (dL/dW_X, dL/dY, dL/dLambda) from (W_X, Y, S) by the chain rule through the Gram quantities of
verify.derive.loss (||w_m||^2, <w_m, v*_m>, ||s_j||^2, <s_j, s*_j>, row and column sums) and the column
softmax (dL/dLambda_j = s_j (g_j - <s_j, g_j>), verify.derive.gradients.softmax_obligation); the kernel
and its partials are generated from SymPy (verify.engines.fullkernel). Arrays are float64 or object
arrays of mpmath numbers or Arb balls (numpy dispatches + and * to them): one chain rule for every
arithmetic. The original weights' gradients follow by the chain rule of the linear maps:
dL/dW_P = (dL/dY) P^T and dL/dW_KQ = beta P (dL/dLambda) Q^T.

Data that are not i.i.d. entries (verify.model.data) change only the first link: with a second-moment tensor
the Gram quantities become its quadratic forms (verify.engines.fullcov, the "moments" route), and for an
empirical data set under a nonlinear sigma the loss is the finite sum over its images (verify.engines.fullimages,
the "images" route, whose gradients are jax.grad's).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp
import mpmath
from flint import arb, ctx

from ..errors import InvalidParameter
from ..model.symbols import mu_u, mu_z
from ..model.setting import Setting
from . import fullcov, fullimages
from .fullkernel import KernelFunctions, centred, kernel_functions, sigma_terms
from .trajectory import Record


@lru_cache(maxsize=None)
def offset_gradient_vanishes(sigma) -> bool:
    """d ell / d mu_u = 0 at mu_u = mu_z = 0 identically (SymPy): a zero W_P then stays 0 under a centred law."""
    return sp.expand(sigma_terms(sigma).dmu.subs({mu_u: 0, mu_z: 0})) == 0


@lru_cache(maxsize=None)
def exp_function(backend: str):
    """exp of one number of an exact backend (mpmath or Arb): the library's own, called per entry."""
    if backend == "arb":
        return arb.exp
    return mpmath.exp


@lru_cache(maxsize=256)
def elementwise(f, nargs: int):
    """f as a numpy ufunc on object arrays (built once per function)."""
    return np.frompyfunc(f, nargs, 1)


@dataclass
class Fixed:
    """One setting's constants in one arithmetic: V*, S*, P and P^T P, the law's moments, the loss scale,
    the step sizes, the teacher's entry moments B and mu_z, and the compiled kernel."""

    s: Setting
    ar: object
    dtype: object
    V: np.ndarray
    Sstar: np.ndarray
    P: np.ndarray
    gram: np.ndarray | None        # P^T P for a general P; None when P^T P = lambda I (then ``lam``)
    gram_q: np.ndarray | None      # Q^T Q (the query columns' block of P^T P)
    lam: object
    q: list
    var: object
    mu: object
    c: object
    eta_v: object
    eta_kq: object
    beta: object
    zero: object
    one: object
    kf: KernelFunctions
    sq_v: np.ndarray
    sq_ss: np.ndarray
    sup_rows: np.ndarray           # K x N: the support g_j of each column j of S* (its nonzero entries)
    sup_w: np.ndarray              # K x N: S* on its support
    perm: tuple | None             # P = c Pi (a scaled permutation): (rows, inverse, c) with P[rows[j], j] = c
    B: np.ndarray
    mu_z: np.ndarray
    noise_loss: object
    centred: bool                  # mu = 0 exactly: the mean terms of the moments vanish
    route: str = "iid"             # how the loss is computed (verify.model.data.ROUTES)
    cov: fullcov.Tensor | None = None      # the data's second-moment tensor ("moments" route)
    GV: np.ndarray | None = None           # its token Gram matrices of V* (M, D, D) ("moments" route)
    images: np.ndarray | None = None       # the data's images (n, d, D) ("images" route)
    targets: np.ndarray | None = None      # sigma(V* X_i S*) per image (n, M, N) ("images" route)

    @property
    def exact_objects(self) -> bool:
        """Entries are mpmath numbers or Arb balls (object arrays), not float64."""
        return self.dtype is object

    def array(self, rows) -> np.ndarray:
        """An array of exact values (rationals, floats) rounded into the arithmetic."""
        n = self.ar.num
        return np.array([[n(x) for x in r] for r in rows], dtype=self.dtype).reshape(len(rows), -1)

    def apply(self, f, *xs) -> np.ndarray:
        """f elementwise (a compiled kernel function; constants broadcast to the shape of xs[0])."""
        out = elementwise(f, len(xs))(*xs) if self.exact_objects else f(*xs)
        if np.ndim(out) < 2:
            return np.broadcast_to(np.asarray(out, dtype=self.dtype), np.shape(xs[0])).copy()
        return out

    def kernel(self, name: str, A, C, B, mu_u, mu_z) -> np.ndarray:
        """One of the kernel functions ("ell", "dA", "dC", "dmu") at every output entry; in Arb, a function
        that is not affine in (A, C, mu_u) is evaluated in the centred form (verify.engines.fullkernel.centred)."""
        f = getattr(self.kf, name)
        slopes = (self.kf.slopes or {}).get(name)
        if slopes is None:
            return self.apply(f, A, C, B, mu_u, mu_z)
        return self.apply(centred_form(f, slopes), A, C, B, mu_u, mu_z)

    def exp(self, x) -> np.ndarray:
        return elementwise(exp_function(self.ar.backend), 1)(x) if self.exact_objects else np.exp(x)

    def apply_sigma(self, U) -> np.ndarray:
        """sigma entrywise on an array of any shape."""
        f = fullimages.sigma_function(self.s.sigma, "numpy" if self.ar.backend == "numpy" else "mpmath")
        return elementwise(f, 1)(U) if self.exact_objects else f(U)


@lru_cache(maxsize=64)
def centred_form(f, slopes):
    """f evaluated in the centred form with the partials ``slopes`` (verify.engines.fullkernel.centred)."""
    return lambda *x: centred(f, slopes, *x)


def fixed(s: Setting, ar, route: str | None = None) -> Fixed:
    """:class:`Fixed` for ``s`` in the arithmetic ``ar`` (verify.engines.arith.Arith or an Arb arithmetic),
    computed at the arithmetic's working precision (whatever the caller's) and kept for repeated runs of
    one setting (building S* and P from exact rationals costs O(D^2) Python operations, seconds at
    D = 1024); its arrays are read-only. ``route``: one of the data model's exact routes other than the engines'
    choice (verify.model.data.Data.routes; the digits under sigma linear: "images", the finite sum)."""
    routes = s.data.routes(s.sigma)
    if route is not None and route not in routes:
        raise InvalidParameter("route", route, f"must be one of {', '.join(routes)} for data = {s.data.spec()} and "
                               f"sigma = {s.sigma.spec()} (the routes that compute its loss exactly)")
    with ar.context():
        return _kept(s, ar, {"mpmath": mpmath.mp.prec, "arb": ctx.prec}.get(ar.backend), route or routes[0])


@lru_cache(maxsize=8)
def _kept(s: Setting, ar, prec, route: str) -> Fixed:
    fx = _fixed(s, ar, route)
    for v in vars(fx).values():
        if isinstance(v, np.ndarray):
            v.setflags(write=False)
    return fx


def _fixed(s: Setting, ar, route: str) -> Fixed:
    dtype = float if ar.backend == "numpy" else object
    n = ar.num
    arr = lambda rows: exact_array(rows, n, dtype)  # noqa: E731
    V = arr(s.vstar_base) * ar.sqrt(n(s.vstar_scale2))
    P_exact = s.p_exact()
    Sstar, P = arr(s.sstar()), arr(P_exact)
    q = list(s.query)
    gram = gram_q = None
    if s.p_structure != "orthogonal":
        gram = P.T @ P
        gram_q = gram[np.ix_(q, q)]
    var = n(s.law.var)
    sq_v, sq_ss = (V * V).sum(1), (Sstar * Sstar).sum(0)
    sup_rows = np.array(s.supports, dtype=int).reshape(s.N, s.K).T
    sup_w = Sstar[sup_rows, np.arange(s.N)[None, :]]
    perm = _permutation(P_exact, n)
    mu = n(s.law.mean)
    teacher_zero = s.K == 0
    fx = Fixed(s=s, ar=ar, dtype=dtype, V=V, Sstar=Sstar, P=P, gram=gram, gram_q=gram_q, lam=n(s.p_lambda), q=q,
               var=var, mu=mu, c=n(s.loss_scale), eta_v=n(s.eta_v), eta_kq=n(s.eta_kq), beta=n(s.beta),
               zero=n(0), one=n(1), kf=kernel_functions(s.sigma, ar.backend, teacher_zero), sq_v=sq_v, sq_ss=sq_ss,
               sup_rows=sup_rows, sup_w=sup_w, perm=perm,
               B=var * np.outer(sq_v, sq_ss), mu_z=mu * np.outer(V.sum(1), Sstar.sum(0)),
               noise_loss=n(s.loss_scale * s.M * s.N * s.noise_sd**2 / 2), centred=s.law.mean == 0, route=route)
    return _with_data(fx, arr)


def _with_data(fx: Fixed, arr) -> Fixed:
    """``fx`` with the data model's constants: the second-moment tensor (exact rationals rounded once into the
    arithmetic) and Var z = s*_j^T G*_m s*_j, or the images and the teacher's outputs on them. The data are
    centred (validated: the entry-law mean stays 0), so the teacher's means mu_z are 0 as for i.i.d. entries."""
    data = fx.s.data
    if fx.route == "moments":
        m = data.moments()
        d, D = data.dims
        cov = fullcov.Tensor.of(arr(m.fractions().reshape(d * D, d * D)).reshape(d, D, d, D))
        fx.cov, fx.GV = cov, fullcov.token_gram(cov, fx.V, fx.V)
        fx.B = fullcov.forms(fx.GV, fx.Sstar, fx.Sstar)
    elif fx.route == "images":
        im = data.images()
        if fx.exact_objects:
            root, n = fx.ar.sqrt(fx.ar.num(im.scale2)), fx.ar.num
            X = np.vectorize(lambda x: n(Fraction(int(x), im.n)) * root, otypes=[object])(im.numerators)
        else:
            X = im.floats()
        fx.images = X
        fx.targets = fx.apply_sigma(fullimages.outputs(fx.V, X, fx.Sstar))
    return fx


def exact_array(rows, num, dtype) -> np.ndarray:
    """A matrix of exact numbers rounded into an arithmetic; each distinct object is converted once (the zeros
    of S* and of a permutation P are one object repeated, a million times at D = 1024)."""
    done: dict = {}

    def conv(x):
        k = id(x)
        if k not in done:
            done[k] = num(x)
        return done[k]
    return np.array([[conv(x) for x in r] for r in rows], dtype=dtype).reshape(len(rows), -1)


def _permutation(P, num) -> tuple | None:
    """(rows, inverse, c) when the exact matrix P is c times a permutation matrix (P[rows[j], j] = c), else None."""
    D = len(P)
    rows = []
    for j in range(D):
        nz = [i for i in range(D) if P[i][j].numerator != 0]
        if len(nz) != 1:
            return None
        rows.append(nz[0])
    c = P[rows[0]][0]
    if len(set(rows)) != D or any(P[rows[j]][j] != c for j in range(D)):
        return None
    rows = np.array(rows)
    return rows, np.argsort(rows), num(c)


def p_times(fx: Fixed, X, transpose: bool = False) -> np.ndarray:
    """P X, or P^T X: by indexing when P is a scaled permutation (O(D^2), not O(D^3) operations)."""
    if fx.perm is None:
        return (fx.P.T if transpose else fx.P) @ X
    rows, inverse, c = fx.perm
    return c * X[rows if transpose else inverse, :]


def times_p(fx: Fixed, X, transpose: bool = False) -> np.ndarray:
    """X P, or X P^T (see :func:`p_times`)."""
    return p_times(fx, X.T, not transpose).T


def initial_weights(fx: Fixed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_X, W_P, W_KQ) at t = 0: zero, or a seeded Gaussian start scaled by init_scale. W_P stays 0 unless
    its gradient has a closed form at non-zero offsets (the kernel is exact at any means) and it is trained."""
    s, n = fx.s, fx.ar.num
    zeros = lambda r, c: np.full((r, c), fx.zero, dtype=fx.dtype)  # noqa: E731
    WX, WP, WKQ = zeros(s.M, s.d), zeros(s.M, s.D), zeros(s.D, s.D)
    if s.init == "random":
        # A stream of its own (seed, 1): the seeded random V* uses default_rng(seed), and sharing it would
        # make W_X(0) exactly proportional to V*. The float64 draws are exact binary numbers in every arithmetic.
        rng = np.random.default_rng([s.seed, 1])
        sc = n(s.init_scale)
        draw = lambda r, c: fx.array(rng.standard_normal((r, c)).tolist()) * sc  # noqa: E731
        WX, WKQ = draw(s.M, s.d), draw(s.D, s.D)
        if sigma_terms(s.sigma).with_means and s.wp_trainable:
            WP = draw(s.M, s.D)
    return WX, WP, WKQ


def attention(fx: Fixed, logits: np.ndarray) -> np.ndarray:
    """S: the column softmax of the logits. float64 subtracts each column's maximum first (no overflow); the
    softmax is invariant under that shift, and mpmath and Arb need none (no exponent range to leave)."""
    e = fx.exp(logits) if fx.exact_objects else np.exp(logits - logits.max(axis=0))
    return e * (fx.one / e.sum(axis=0))


def moments(fx: Fixed, WX, Y, S) -> dict:
    """The Gram quantities and each output entry's (A, C, B, mu_u, mu_z) (verify.derive.loss); with a
    second-moment tensor, A and C are its quadratic forms and the token Gram matrices G_m, H_m are kept
    (verify.engines.fullcov). ``Y`` None: the offsets W_P P S are 0."""
    sq_w, c_wv = (WX * WX).sum(1), (WX * fx.V).sum(1)
    sq_s, c_ss = (S * S).sum(0), on_support(fx, S).sum(0)
    mu_u = np.full((fx.s.M, fx.s.N), fx.zero, dtype=fx.dtype) if Y is None else Y @ S
    if not fx.centred:
        mu_u = mu_u + fx.mu * np.outer(WX.sum(1), S.sum(0))
    out = dict(sq_w=sq_w, c_wv=c_wv, sq_s=sq_s, c_ss=c_ss, B=fx.B, mu_u=mu_u, mu_z=fx.mu_z)
    if fx.cov is None:
        return out | dict(A=fx.var * np.outer(sq_w, sq_s), C=fx.var * np.outer(c_wv, c_ss))
    G, H = fullcov.token_gram(fx.cov, WX, WX), fullcov.token_gram(fx.cov, WX, fx.V)
    return out | dict(A=fullcov.forms(G, S, S), C=fullcov.forms(H, S, fx.Sstar), G=G, H=H)


def radial_moments(fx: Fixed, g: dict, S) -> tuple[np.ndarray, np.ndarray]:
    """(a, c) per entry (M x N): Var u and Cov(u, z) per unit alpha along the ray w_m = alpha v*_m, the arguments
    of the radial slope (with b = B): v ||v*_m||^2 ||s_j||^2 and v ||v*_m||^2 <s_j, s*_j> for i.i.d. entries,
    s_j^T G*_m s_j and s_j^T G*_m s*_j with a second-moment tensor."""
    if fx.cov is None:
        w = fx.var * fx.sq_v
        return np.outer(w, g["sq_s"]), np.outer(w, g["c_ss"])
    return fullcov.forms(fx.GV, S, S), fullcov.forms(fx.GV, S, fx.Sstar)


def wp_stays_zero(fx: Fixed) -> bool:
    """A zero W_P provably stays 0: the data are centred and dL/dY = 0 at Y = 0 for every W_X and S. With a
    kernel (i.i.d. or Gaussian data) that is d ell/d mu_u = 0 at zero means (sigma odd, by parity); over the
    images of a data set (not symmetric under X -> -X) only a linear sigma gives it."""
    if not fx.centred:
        return False
    return fx.s.sigma.linear if fx.route == "images" else offset_gradient_vanishes(fx.s.sigma)


def on_support(fx: Fixed, S) -> np.ndarray:
    """S_ij s*_ij on the support of S* (K x N; S* is 0 elsewhere), so <s_j, s*_j> costs K terms, not D."""
    return S[fx.sup_rows, np.arange(fx.s.N)[None, :]] * fx.sup_w


def kink_rows(fx: Fixed, sq_w) -> np.ndarray | None:
    """Rows m with w_m = 0 exactly where the kernel has a kink there (None when there are none)."""
    if not fx.kf.kink_at_zero:
        return None
    rows = np.array([x == 0 for x in sq_w], dtype=bool)
    return rows if rows.any() else None


def _safe_A(fx: Fixed, g: dict, rows):
    """A with the kinked rows set to 1 (any positive value: their kernel values are replaced)."""
    if rows is None:
        return g["A"]
    A = g["A"].copy()
    A[rows, :] = fx.one
    return A


def excess_loss(fx: Fixed, WX, Y, S):
    """L - L_opt = c_L/2 sum_{m,j} ell(A_mj, C_mj, B_mj, mu_u_mj, mu_z_mj); a kinked zero row contributes
    E[sigma(z)^2] (ell at A = C = 0, sigma(0) = 0). Over a data set's images: the finite sum."""
    if fx.route == "images":
        return fullimages.excess_loss(fx, WX, Y, S)
    g = moments(fx, WX, Y, S)
    rows = kink_rows(fx, g["sq_w"])
    ell = fx.kernel("ell", _safe_A(fx, g, rows), g["C"], g["B"], g["mu_u"], g["mu_z"])
    if rows is not None:
        ell[rows, :] = fx.apply(fx.kf.second, g["B"][rows, :])
    return fx.c * ell.sum() / 2


@dataclass
class Gradients:
    """dL/dW_X = a * W_X + b * V* + e * 1 (per row m: coefficients a_m, b_m, e_m), dL/dY and dL/dLambda; with a
    second-moment tensor the W_X gradient is no such combination and is held whole (``full``).

    The W_X gradient is kept in this form so that a step reads W_X (1 - eta a) - eta (b V* + e 1): in
    ball arithmetic the contraction of W_X by its own gradient is then seen, not doubled."""

    a: np.ndarray | None
    b: np.ndarray | None
    e: np.ndarray | None
    Y: np.ndarray | None
    logits: np.ndarray
    full: np.ndarray | None = None

    def wx(self, fx: Fixed, WX) -> np.ndarray:
        if self.full is not None:
            return self.full
        out = self.a[:, None] * WX + self.b[:, None] * fx.V
        return out if self.e is None else out + self.e[:, None]


def _partials(fx: Fixed, g: dict, Y, offsets: bool):
    """(lA, lC, lmu, kinked rows): the kernel's partials at every entry, zero on kinked zero rows (their ell is
    E sigma(z)^2, which W_X and S do not move); lmu None where no offset term is wanted."""
    rows = kink_rows(fx, g["sq_w"])
    args = (_safe_A(fx, g, rows), g["C"], g["B"], g["mu_u"], g["mu_z"])
    lA, lC = fx.kernel("dA", *args), fx.kernel("dC", *args)
    lmu = fx.kernel("dmu", *args) if offsets or Y is not None or not fx.centred else None
    if rows is not None:
        lA[rows, :] = fx.zero
        lC[rows, :] = fx.zero
    return lA, lC, lmu, rows


def radial_slopes(fx: Fixed, g: dict, S, rows) -> dict:
    """{m: d/dalpha ell summed over j at alpha = 0+} for the kinked zero rows m, along w_m = alpha v*_m (the
    'radial' convention, Sigma.radial_slope). K = 0: ell = E sigma(u)^2 is smooth, and the gradient at a zero
    row is 0 as computed, so there are none."""
    if rows is None or fx.s.K == 0:
        return {}
    ra, rc = radial_moments(fx, g, S)
    return {m: sum(fx.kf.radial(ra[m, j], g["B"][m, j], rc[m, j]) for j in range(fx.s.N)) for m in np.nonzero(rows)[0]}


def logit_gradient(fx: Fixed, S, dS) -> np.ndarray:
    """dL/dLambda_j = s_j (g_j - <s_j, g_j>) from g = dL/dS through the column softmax (a column constant of g
    drops out)."""
    return S * (dS - (S * dS).sum(0)[None, :])


def gradients(fx: Fixed, WX, Y, S, offsets: bool = True, scale=None) -> Gradients:
    """(dL/dW_X, dL/dY, dL/dLambda) at (W_X, Y, S); ``Y`` None: W_P P = 0; ``offsets`` False: dL/dY is not
    wanted (W_P frozen, or provably 0); ``scale``: dL/dLambda comes multiplied by it (a step's factor, applied
    to the column coefficients rather than to every entry). The chain rule of the module docstring; kinked
    zero rows take the radial slope along v*_m (Sigma.radial_slope)."""
    if fx.route == "images":
        raise InvalidParameter("arithmetic", fx.ar.name, "must be float64 on JAX here: the finite sum over the "
                               "images is differentiated by jax.grad (verify.engines.fulljax)", also=("data", "sigma"))
    if fx.cov is not None:
        return moment_gradients(fx, WX, Y, S, offsets, scale)
    s, c, var, half = fx.s, fx.c, fx.var, fx.c / 2
    g = moments(fx, WX, Y, S)
    lA, lC, lmu, rows = _partials(fx, g, Y, offsets)
    a = c * var * (lA @ g["sq_s"])
    b = half * var * (lC @ g["c_ss"])
    e = None if fx.centred else half * fx.mu * (lmu @ S.sum(0))
    for m, slope in radial_slopes(fx, g, S, rows).items():
        a[m], b[m] = fx.zero, half * slope / fx.sq_v[m]
        if e is not None:
            e[m] = fx.zero
    # dL/dS = S diag(p) + S* diag(r) + (a column constant) + o, with p_j = c v sum_m ||w_m||^2 lA_mj,
    # r_j = c/2 v sum_m <w_m, v*_m> lC_mj and the offsets' o = c/2 Y^T lmu; the column constant (the mean
    # term) drops out of dL/dLambda_j = s_j (g_j - <s_j, g_j>), and <s_j, g_j> = p_j ||s_j||^2 + r_j <s_j, s*_j>
    # + <s_j, o_j> uses the Gram quantities already at hand.
    k = fx.one if scale is None else scale
    p = k * c * var * (g["sq_w"] @ lA)
    r = k * half * var * (g["c_wv"] @ lC)
    base = S * p[None, :]
    gbar = p * g["sq_s"] + r * g["c_ss"]
    if Y is not None:
        o = (k * half) * (Y.T @ lmu)
        base = base + o
        gbar = gbar + (S * o).sum(0)
    base = base - gbar[None, :]
    cols = np.arange(s.N)[None, :]
    base[fx.sup_rows, cols] = base[fx.sup_rows, cols] + fx.sup_w * r[None, :]
    G = S * base
    gY = half * (lmu @ S.T) if offsets else None
    return Gradients(a, b, e, gY, G)


def moment_gradients(fx: Fixed, WX, Y, S, offsets: bool = True, scale=None) -> Gradients:
    """:func:`gradients` with a second-moment tensor (verify.engines.fullcov): with A_mj = w_m^T P_j w_m =
    s_j^T G_m s_j and C_mj = w_m^T Q_j v*_m = s_j^T H_m s*_j,
    dL/dw_m = c sum_j lA_mj P_j w_m + c/2 sum_j lC_mj Q_j v*_m and
    dL/ds_j = c sum_m lA_mj G_m s_j + c/2 sum_m lC_mj H_m s*_j + c/2 sum_m lmu_mj y_m (the data are centred)."""
    c, half = fx.c, fx.c / 2
    g = moments(fx, WX, Y, S)
    lA, lC, lmu, rows = _partials(fx, g, Y, offsets)
    P, Q = fullcov.feature_gram(fx.cov, S, S), fullcov.feature_gram(fx.cov, S, fx.Sstar)
    gW = c * fullcov.weighted_rows(lA, P, WX) + half * fullcov.weighted_rows(lC, Q, fx.V)
    for m, slope in radial_slopes(fx, g, S, rows).items():
        gW[m] = (half * slope / fx.sq_v[m]) * fx.V[m]
    dS = c * fullcov.weighted_columns(lA, g["G"], S) + half * fullcov.weighted_columns(lC, g["H"], fx.Sstar)
    if Y is not None:
        dS = dS + half * (Y.T @ lmu)
    k = fx.one if scale is None else scale
    gY = half * (lmu @ S.T) if offsets else None
    return Gradients(None, None, None, gY, logit_gradient(fx, S, k * dS), full=gW)


def record_of(fx: Fixed, step: int, WX, WP, S, excess) -> Record:
    """The recorded quantities of docs/setting.md at one state (square roots through the arithmetic's
    ``sqrt``, which an Arb arithmetic applies to the nonnegative part of a ball)."""
    ar, s = fx.ar, fx.s
    dS, dW = S - fx.Sstar, WX - fx.V
    alphas = list((WX * fx.V).sum(1) / fx.sq_v)
    offspan = [ar.sqrt(((WX[m] - alphas[m] * fx.V[m]) * (WX[m] - alphas[m] * fx.V[m])).sum()) for m in range(s.M)]
    nw = ar.sqrt((WX * WX).sum())
    cos = (WX * fx.V).sum() / (nw * ar.sqrt(fx.sq_v.sum())) if nw != 0 else fx.zero
    mass = [sum((S[i, j] for i in sup), fx.zero) for j, sup in enumerate(s.supports)]
    return Record(step, excess + fx.noise_loss, excess, ar.sqrt((dS * dS).sum()), ar.sqrt((dW * dW).sum()),
                  ar.sqrt((WP * WP).sum()), cos, alphas, offspan, mass)
