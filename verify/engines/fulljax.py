"""The float64 full-matrix engine on JAX (CPU, or a GPU where one exists): jax.grad of the population loss.

The loss is built from the SymPy kernel (verify.engines.fullkernel, lambdified for JAX) summed over the
output entries as in verify.derive.loss; the kernel is a ``jax.custom_jvp`` whose derivative rules are
SymPy's partials (the numerically stable forms, so ReLU at rho = 1 stays finite), and jax.grad does the
chain rule through the Gram sums (or a data model's quadratic forms, verify.engines.fullcov) and the column
softmax. Over a data set's images under a nonlinear sigma the loss is the finite sum of
verify.engines.fullimages, written in jax.numpy, and jax.grad differentiates it. The state and the step are those of
verify.engines.full.LogitState (W_X, Y = W_P P, logits, with P^T P); steps run in ``lax.fori_loop``
between checkpoints, where the state is checked: a non-finite state is bisected to the first step that
made it so (NumericalTrouble names that step). tests/test_fulljax.py checks the gradients against SymPy's.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..derive import codegen
from ..model.sigmas import Sigma
from ..model.symbols import A, mu_u
from ..run.cache import cache_dir
from .fullimages import sigma_function
from .fullkernel import ARGS, RADIAL_ARGS, entry_terms, sigma_terms
from .guard import Boundary
from .trajectory import Trajectory, throttled

CHUNK_SECONDS = 0.5        # target wall time of one fori_loop between progress callbacks / finiteness checks
FIRST_CHUNK = 100          # steps of the first fori_loop (then sized to CHUNK_SECONDS from its time)


def available() -> bool:
    """JAX is installed (the optional extra ``fast``)."""
    try:
        import jax  # noqa: F401  # heavy: jax
    except ImportError:
        return False
    return True


@lru_cache(maxsize=None)
def _jax():
    """jax and jax.numpy, set up once per process: float64, and JAX's persistent compilation cache in the project's
    cache folder (verify.run.cache; unless the user set JAX_COMPILATION_CACHE_DIR), so a program compiled for some
    shapes by one process (a part of ``verify all``, a fuzz example) is loaded, not compiled again, by the next.
    Every compilation is kept (no minimum compile time): the parts compile many small programs of about a second."""
    import jax  # heavy: jax
    jax.config.update("jax_enable_x64", True)       # float64 everywhere (JAX's default is float32)
    if jax.config.jax_compilation_cache_dir is None:
        jax.config.update("jax_compilation_cache_dir", str(cache_dir("jax")))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_compilation_cache_max_size", 2**28)   # least recently used entries go past 256 MB
    return jax, jax.numpy


@dataclass(frozen=True)
class Program:
    """What a compiled run depends on besides array shapes: sigma and the structure of the setting."""

    sigma: Sigma
    teacher_zero: bool     # K = 0: ell = E sigma(u)^2
    kinked: bool           # zero student rows take the radial slope (kink at 0, K > 0)
    centred: bool          # mu = 0: no mean terms
    offsets: bool          # Y = W_P P enters the loss
    trains_y: bool         # Y is iterated
    general: bool          # P^T P is a general Gram matrix (else lambda I)
    route: str = "iid"     # how the loss is computed (verify.model.data.ROUTES)


def program_of(st) -> Program:
    """The :class:`Program` of a verify.engines.full.LogitState."""
    s = st.s
    # over the images a zero row cannot occur (validated: a kinked sigma there starts from a random W_X)
    kinked = sigma_terms(s.sigma).kink_at_zero and s.K > 0 and st.fx.route != "images"
    return Program(s.sigma, s.K == 0, kinked, st.fx.centred, st.offsets is not None, st.trains_y, st.general,
                   st.fx.route)


def _kernel(pr: Program):
    """ell(A, C, B, mu_u, mu_z) for JAX with SymPy's partials as its derivative rules in (A, C, mu_u); B and
    mu_z (the teacher's) are closed over, so differentiating in them is an error, not a silent 0."""
    jax, _ = _jax()
    guard = sigma_terms(pr.sigma).guard
    ell, dA, dC, dmu = (codegen.lambdify(ARGS, guard(e), "jax") for e in entry_terms(pr.sigma, pr.teacher_zero))

    def kernel(A, C, B, mu_u, mu_z):
        @jax.custom_jvp
        def k(a, c, m):
            return ell(a, c, B, m, mu_z)

        @k.defjvp
        def k_jvp(primals, tangents):
            a, c, m = primals
            ta, tc, tm = tangents
            return k(a, c, m), dA(a, c, B, m, mu_z) * ta + dC(a, c, B, m, mu_z) * tc + dmu(a, c, B, m, mu_z) * tm
        return k(A, C, mu_u)
    return kernel


def loss_function(pr: Program):
    """(W_X, Y, logits, constants) -> (L - L_opt, (a, c, ||w_m||^2)), traceable by JAX; (a, c) are the radial
    slope's arguments per entry (verify.engines.fullgrad.radial_moments)."""
    jax, jnp = _jax()
    if pr.route == "images":
        return _images_loss(pr)
    kernel = _kernel(pr)
    second = codegen.lambdify((A,), sigma_terms(pr.sigma).second_moment.subs(mu_u, 0), "jax")

    def loss(WX, Y, logits, k):
        S = jax.nn.softmax(logits, axis=0)
        sq_w = jnp.sum(WX * WX, 1)
        A_, C_, ra, rc = _second_moments(pr, WX, S, k)
        m = jnp.zeros_like(A_)
        if not pr.centred:
            m = m + k["mu"] * jnp.outer(jnp.sum(WX, 1), jnp.sum(S, 0))
        if pr.offsets:
            m = m + Y @ S
        if pr.kinked:
            zero = (sq_w == 0)[:, None]
            ell = jnp.where(zero, second(k["B"]), kernel(jnp.where(zero, 1.0, A_), C_, k["B"], m, k["mu_z"]))
        else:
            ell = kernel(A_, C_, k["B"], m, k["mu_z"])
        return k["c"] / 2 * jnp.sum(ell), (ra, rc, sq_w)
    return loss


def _second_moments(pr: Program, WX, S, k):
    """(A, C, a, c) per entry: Var u, Cov(u, z) and the radial slope's (a, c), from the Gram quantities (i.i.d.
    entries) or the data's second-moment tensor T[a, b, c, e] (verify.engines.fullcov)."""
    jnp = _jax()[1]
    if pr.route == "moments":
        T, ein = k["cov"], jnp.einsum
        G, H = ein("ma,mc,abce->mbe", WX, WX, T), ein("ma,mc,abce->mbe", WX, k["V"], T)
        quad = lambda M, R: ein("mbe,bj,ej->mj", M, S, R)  # noqa: E731
        return quad(G, S), quad(H, k["Sstar"]), quad(k["GV"], S), quad(k["GV"], k["Sstar"])
    sq_w, c_wv = jnp.sum(WX * WX, 1), jnp.sum(WX * k["V"], 1)
    sq_s, c_ss = jnp.sum(S * S, 0), jnp.sum(S * k["Sstar"], 0)
    w = k["var"] * k["sq_v"]
    return (k["var"] * jnp.outer(sq_w, sq_s), k["var"] * jnp.outer(c_wv, c_ss), jnp.outer(w, sq_s),
            jnp.outer(w, c_ss))


def _images_loss(pr: Program):
    """The finite sum over the images (verify.engines.fullimages) in jax.numpy: (c_L / 2) (1/n) sum_i
    ||sigma(W_X X_i S + Y S) - sigma(V* X_i S*)||^2, sigma generated from its SymPy form."""
    jax, jnp = _jax()
    sig = sigma_function(pr.sigma, "jax")

    def loss(WX, Y, logits, k):
        S = jax.nn.softmax(logits, axis=0)
        U = jnp.einsum("ma,iaj->imj", WX, jnp.einsum("iab,bj->iaj", k["X"], S))
        if pr.offsets:
            U = U + (Y @ S)[None, :, :]
        r = sig(U) - k["Z"]
        zeros = jnp.zeros((WX.shape[0], S.shape[1]))
        return k["c"] / 2 * jnp.sum(r * r) / k["X"].shape[0], (zeros, zeros, jnp.sum(WX * WX, 1))
    return loss


@lru_cache(maxsize=None)
def compiled(pr: Program):
    """run(state, n, constants) -> the state after n GD steps (jit-compiled once per program and shapes)."""
    jax, jnp = _jax()
    grad = jax.grad(loss_function(pr), argnums=(0, 1, 2), has_aux=True)
    t = sigma_terms(pr.sigma)
    radial = codegen.lambdify(RADIAL_ARGS, t.guard(t.radial), "jax") if pr.kinked else None

    def step(st, k):
        WX, Y, L, sumG, sumgY = st
        (gX, gY, gL), (ra, rc, sq_w) = grad(WX, Y, L, k)
        if pr.kinked:
            # the 'radial' convention at w_m = 0: the one-sided slope along v*_m (Sigma.radial_slope)
            slope = jnp.sum(radial(ra, k["B"], rc), 1)
            gX = jnp.where((sq_w == 0)[:, None], (k["c"] / 2 * slope / k["sq_v"])[:, None] * k["V"], gX)
        WX = WX - k["eta_v"] * gX
        if pr.trains_y:
            Y = Y - k["y_step"] * (gY @ k["gram"] if pr.general else gY)
            sumgY = sumgY + gY if pr.general else sumgY
        L = L - k["kq_step"] * (k["gram"] @ gL @ k["gram_q"] if pr.general else gL)
        sumG = sumG + gL if pr.general else sumG
        return WX, Y, L, sumG, sumgY

    @jax.jit
    def run(st, n, k):
        return jax.lax.fori_loop(0, n, lambda i, x: step(x, k), st)
    return run


def constants(st) -> dict:
    """The constants of a LogitState as float64 arrays for the compiled run."""
    fx = st.fx
    f = lambda x: np.asarray(x, dtype=float)  # noqa: E731
    k = {"V": f(fx.V), "Sstar": f(fx.Sstar), "var": f(fx.var), "mu": f(fx.mu), "c": f(fx.c), "B": f(fx.B),
         "mu_z": f(fx.mu_z), "sq_v": f(fx.sq_v), "sq_ss": f(fx.sq_ss), "eta_v": f(fx.eta_v),
         "y_step": f(st.y_step), "kq_step": f(st.kq_step)}
    if st.general:
        k |= {"gram": f(fx.gram), "gram_q": f(fx.gram_q)}
    if fx.cov is not None:
        k |= {"cov": f(fx.cov.dense()), "GV": f(fx.GV)}
    if fx.images is not None:
        k |= {"X": f(fx.images), "Z": f(fx.targets)}
    return k


def gradients_at(st) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dL/dW_X, dL/dY, dL/dLambda) by jax.grad at the point of a float64 LogitState (its W_X, Y, logits)."""
    jax, jnp = _jax()
    k = {key: jnp.asarray(v) for key, v in constants(st).items()}
    grads, _ = jax.grad(loss_function(program_of(st)), argnums=(0, 1, 2), has_aux=True)(
        jnp.asarray(st.WX), jnp.asarray(st.Y), jnp.asarray(st.logits), k)
    return tuple(np.asarray(g, dtype=float) for g in grads)


def state_of(st) -> tuple:
    """(W_X, Y, logits, sum of logit gradients, sum of Y gradients) of a LogitState (zeros where unused)."""
    z = np.zeros
    return (st.WX, st.Y, st.logits, st.sumG if st.sumG is not None else z((1, 1)),
            st.sumgY if st.sumgY is not None else z((1, 1)))


def load(st, arrays, step: int) -> None:
    """Put JAX results back into the LogitState ``st`` (float64 numpy arrays) at ``step``."""
    WX, Y, L, sumG, sumgY = (np.asarray(a, dtype=float) for a in arrays)
    st.WX, st.Y, st.logits, st.step_count = WX, Y, L, step
    if st.sumG is not None:
        st.sumG = sumG
    if st.sumgY is not None:
        st.sumgY = sumgY


NAMES = ("W_X", "W_P", "W_KQ")     # the state's parts as the user knows them (Y = W_P P, logits of W_KQ)


def first_bad(arrays) -> str | None:
    """The name of the first part of a state that is not finite (None when all are; checked on the device)."""
    jnp = _jax()[1]
    for name, a in zip(NAMES, arrays[:3]):
        if not bool(jnp.all(jnp.isfinite(a))):
            return name
    return None


def bisect(run, start, n: int, k) -> tuple[int, tuple]:
    """The least i <= n such that the state after i steps from ``start`` is not finite (it is after n), and
    the finite state after i - 1 steps: a state that is not finite stays so (inf and nan propagate)."""
    lo, hi, good = 0, n, start
    while hi - lo > 1:
        mid = (lo + hi) // 2
        at = run(good, mid - lo, k)
        if first_bad(at) is None:
            lo, good = mid, at
        else:
            hi = mid
    return hi, good


def iterate_full_jax(st, cps: list[int], progress=None) -> Trajectory:
    """The full-matrix recursion from the float64 verify.engines.full.LogitState ``st`` on JAX, recorded at
    the checkpoints ``cps`` (sorted)."""
    jnp = _jax()[1]
    s = st.s
    run, k = compiled(program_of(st)), {key: jnp.asarray(v) for key, v in constants(st).items()}
    traj = Trajectory("full", "float64", None, backend="jax",
                      notes=["full-matrix engine: logits iterated with P^T P, gradients by jax.grad"])
    state, done, chunk, tick = tuple(jnp.asarray(a) for a in state_of(st)), 0, FIRST_CHUNK, throttled(progress)
    for target in cps:
        while done < target:
            n = min(chunk, target - done)
            t = time.perf_counter()
            after = run(state, n, k)
            if first_bad(after) is not None:
                raise _trouble(s, st, run, state, n, k, done)
            state, done = after, done + n
            chunk = max(1, min(10 * chunk, int(n * CHUNK_SECONDS / max(time.perf_counter() - t, 1e-6))))
            if tick is not None:
                tick(done)
        load(st, state, done)
        b = Boundary(s, "full", lambda: {"W_X": st.WX, "W_KQ": st.WKQ})
        rec = st.record()
        b.finite(done, excess_loss=float(rec.excess_loss), s_err=float(rec.s_err), w_err=float(rec.w_err),
                 alpha=[float(a) for a in rec.alpha])
        traj.records.append(rec)
        if tick is not None:
            tick(done, force=True)
    return traj


def _trouble(s, st, run, start, n: int, k, done: int):
    """NumericalTrouble at the first step of the last ``n`` whose state is not finite, with the state before it."""
    i, good = bisect(run, start, n, k)
    load(st, good, done + i - 1)
    bad = first_bad(run(good, 1, k))
    b = Boundary(s, "full", lambda: {"W_X": st.WX, "W_KQ": st.WKQ})
    return b.trouble(done + i, bad, "became NaN or infinite in float64 in the GD update (3.3)-(3.4)")
