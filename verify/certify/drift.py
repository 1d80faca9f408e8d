"""The drift along the curve of fixed points: a band in a chart regular as D -> infinity and omega -> infinity.

After the passage a member lands on the curve of fixed points of the D -> infinity limit (alpha = 1 + omega,
omega = u/(1 - u) = r e^-delta) and drifts along it, log omega shrinking by about s x a step, from omega_L ~
sqrt((2/kappa) log(1/rho)) down to where the trapping region R~ (verify.certify.scaled) holds it. Its lag behind
alpha*(u) is the quasi-static one: in the scaled chart e = e0(u) + O(s omega^5), e0(u) = y/((1 - u)^3 (x (1 - u)^2
+ y u^2)) (e's fixed point at s = 0), which grows like omega^3, so no region of fixed u0 < 1 holds every landing of a
cell that contains rho = 0. In the chart (written "nu", "t", "h" in the files)

    nu = 1/omega,   t = s omega^4 = s/nu^4,   h = g + t,   g = (e - e0(u)) u^2 (1 - u)

(g is G's deviation from its value at e0, s = 0; the quasi-static point sits near g = -t) every formula is a
rational function whose denominator at nu = 0 is a power of kappa and E1 (proved below), with y = kappa x:

    Gamma = kappa G = 1 - kappa h + O(nu)                   (the delta-increment is Delta = c u^2 G)
    nu'   = nu E1,  t' = t/E1^4,  E1 = e^Delta = 1 + Delta X,  Delta = t nu^4 (1 + s) x Gamma/(1 + nu)^2
    h'    = (rho - 1) L0 + rho Delta X L0 + rho E1 (h - t) + DD (Delta/s) X + (L0(nu) - L0(nu E1)) + t/E1^4

with L0(nu) = e0 u^2 (1 - u) = kappa (1 + nu)^2/(nu^2 (nu^2 + kappa)) (the lag over s omega at g = 0, s = 0) and DD
the divided difference of alpha*(omega) = (1 + omega)/(1 + s omega^2); each term is written so that its powers of
nu cancel symbolically (e.g. (rho - 1) L0 = -kappa x (1 + t nu^2)/(nu^2 + kappa)). The identity behind h' is the
alpha-map: alpha' - alpha*(u') = rho (alpha - alpha*(u)) + alpha*(u) - alpha*(u'). At nu = 0, h' = (1 - kappa x) h
exactly (X = E1 = 1): the band |h| <= W contracts by the multiplier across the curve at omega = infinity. So the
band {0 < nu <= nu_hi, t <= tau, |h| <= W} (s = t nu^4 <= s_hi) is checked by Arb boxes over (nu, t, h, x, kappa)
once for every D >= K/rho_hi: on each box Gamma > 0 (so nu' > nu and t' < t: the member drifts towards R~, t never
grows), |h'| <= W, and where nu' can pass nu_hi = 1/u0 - 1 the image lies in R~ = {u <= u0, |e| <= C~} (R~ is
verify.certify.region's check). Landings have t_L = s omega_L^4 ~ s log(1/s)^2 -> 0, so for s small they fall in
the band; an entry into it (the passage) is what a cell holding rho = 0 still lacks (docs/atlas.md).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.factoring import factored, seeded_sympy
from ..derive.invariants import x, y
from ..errors import InvalidParameter
from ..model.numbers import frac_str
from ..model.precision import arb_precision
from ..run.cache import by_code_version
from .arbfun import ball, exact, exprel_ball, hi_frac, lo_frac
from .coordinates import X, eps, slow_coordinates, u
from .formulas import compile_formulas, formula_text, in_s, s
from .obligations import Obligation, identity
from .scaled import scaled_coordinates

v = sp.Symbol("nu", positive=True)           # nu = 1/omega = (1 - u)/u (in the files: "nu")
t = sp.Symbol("t", nonnegative=True)         # s omega^4 = s/v^4
h = sp.Symbol("h", real=True)                # G's deviation from the quasi-static point g = -t, shifted by t
kappa = sp.Symbol("kappa", positive=True)    # y/x
Gam = sp.Symbol("Gamma", real=True)          # Gamma = kappa G as a given ball in Delta and h'
E1 = sp.Symbol("E1", positive=True)          # e^Delta = 1 + Delta X as a given ball
T_POWER = 4                                  # t = s omega^T_POWER
STATE = (v, t, h)
PARAMS = (x, kappa)
# the compiled functions' arguments, in order
ARGS = {"Gamma": STATE + PARAMS, "Delta": (v, t, Gam) + PARAMS, "dh": STATE + (Gam, X, E1) + PARAMS,
        "e_of": STATE + PARAMS}


def u_of(vv):
    return 1 / (1 + vv)


def e0(uu):
    """e's fixed point at s = 0: the quasi-static lag y/((1 - u)^3 (x (1 - u)^2 + y u^2)) in units of s u^3."""
    return y / ((1 - uu) ** 3 * (x * (1 - uu) ** 2 + y * uu**2))


def L0(vv):
    """e0 u^2 (1 - u) in v: the quasi-static lag over s omega at s = 0 (grows like omega^2)."""
    return kappa * (1 + vv) ** 2 / (vv**2 * (vv**2 + kappa))


def regular_factor(f) -> bool:
    """A factor of a denominator at v = 0 that is nonzero for x, kappa, E1 > 0 and t >= 0: one of those symbols
    other than t, or a polynomial in t with positive coefficients and a nonzero constant term."""
    if f.is_Symbol:
        return f != t
    return (f.free_symbols <= {t} and f.is_polynomial(t) and f.subs(t, 0) != 0
            and all(c > 0 for c in sp.Poly(f, t).coeffs()))


def regular_obligation(prefix: str, name: str, expr, at=None) -> Obligation:
    """``{prefix}-regular-{name}``: the denominator of ``expr`` is nonzero at ``at`` (default nu = 0) for every x,
    kappa > 0 and t >= 0 (its factors there are powers of kappa, x, E1 and polynomials in t with positive coefficients
    and constant term: regular_factor), so the formula is finite as omega -> infinity (t = 0 included: s = 0), at
    every D."""
    at = {v: 0} if at is None else at
    where = ", ".join(f"{k} = {val}" for k, val in at.items())
    den = sp.fraction(sp.cancel(sp.together(expr)))[1]
    at0 = sp.factor(den.subs(at))
    _, factors = sp.factor_list(at0)
    ok = at0 != 0 and all(regular_factor(f) for f, _ in factors)
    return Obligation(f"{prefix}-regular-{name}", f"the denominator of {name} at {where} (omega -> infinity) is "
                      "nonzero for x, kappa > 0 and t >= 0 (t = 0 included: s = 0)", "sympy", ok,
                      f"at {where} it is {sp.sstr(at0)[:120]}")


@lru_cache(maxsize=None)
@seeded_sympy()
def chart_pieces() -> dict:
    """The chart's formulas before their partials (Gamma, Delta, rho, the terms of dh, the state's e), in
    (nu, t, h; x, kappa) with Gamma and E1, X as given symbols; drift_chart proves them, verify.certify.landing
    rewrites them in the lag over omega."""
    sc = slow_coordinates()
    out_s, _ = scaled_coordinates()
    U, S, Y = u_of(v), t * v**T_POWER, kappa * x
    to_k = {y: Y}
    e_of = e0(U) + (h - t) * (1 + v) ** 3 / v          # e = e0(u) + g/(u^2 (1 - u)), g = h - t
    G_scaled = out_s["G"].subs({u: U, eps: e_of, s: S}).subs(to_k)
    # Gamma = kappa G = y G/x (near 1 - kappa h): its kappa-derivative has no 1/kappa^2 to cancel against Delta's
    Gamma = factored(kappa * G_scaled)
    Delta_over_s = factored((1 + S) * x * U**2 * Gam)
    Delta = S * Delta_over_s
    rho = 1 - x * factored((v**2 + S) / (1 + v) ** 2)
    om, om_next = 1 / v, 1 / (v * E1)
    DD = factored((1 - S * (om + om_next) - S * om * om_next) / ((1 + S * om**2) * (1 + S * om_next**2)))
    # h' = h + x dh: every term of h' - h carries x (a step's direction does not depend on its length, only its
    # length does), so the enclosures' widths scale with x as the band's margin does. Written with Delta X = E1 - 1:
    # rho E1 - 1 = (rho - 1) E1 + Delta X and t/E1^4 - t = -t Delta X (1 + E1 + E1^2 + E1^3)/E1^4
    D_x, Ds_x = factored(Delta / x), factored(Delta_over_s / x)
    terms = (factored((rho - 1) * L0(v) / x), rho * X * factored(Delta * L0(v) / x),
             (factored((rho - 1) / x) * E1 + D_x * X) * (h - t), DD * Ds_x * X,
             factored(factored((L0(v) - L0(v * E1)) / (E1 - 1)) * v**T_POWER) * t * Ds_x * X,
             -t * D_x * X * (1 + E1 + E1**2 + E1**3) / E1**T_POWER)
    return {"U": U, "S": S, "to_k": to_k, "e_of": e_of, "G_scaled": G_scaled, "Gamma": Gamma, "Delta": Delta,
            "rho": rho, "terms": terms}


@lru_cache(maxsize=None)
@by_code_version("drift-chart")
@seeded_sympy()
def drift_chart() -> tuple:
    """({name: SymPy expression}, obligations): the module docstring's formulas with the partials the mean-value
    forms use, each proved from the slow coordinates (themselves proved from the model's map)."""
    sc = slow_coordinates()
    pc = chart_pieces()
    U, S, to_k, e_of, Gamma, Delta, rho, terms = (pc[k] for k in ("U", "S", "to_k", "e_of", "Gamma", "Delta", "rho",
                                                                  "terms"))
    ob = [identity("drift-Gamma", "Gamma(v, t, h) is kappa times the scaled chart's G~(u, e) at u = 1/(1 + v), "
                   "s = t v^4, e = e0(u) + (h - t)/(u^2 (1 - u)), y = kappa x", Gamma, kappa * pc["G_scaled"])]
    c = in_s(sc.c).subs(s, S).subs(to_k)
    ob.append(identity("drift-Delta", "Delta = c u^2 G with c = s (1 + s) y, G = Gamma/kappa (the delta-increment)",
                       Delta,
                       c * U**2 * Gam / kappa))
    ob.append(identity("drift-rho", "rho(u) = 1 - x ((1 - u)^2 + s u^2) at u = 1/(1 + v)", rho,
                       in_s(sc.rho).subs({u: U, s: S})))
    dh = sp.Add(*terms)
    h_next = h + x * dh
    # the alpha-map: lag' = rho lag + alpha*(u) - alpha*(u'), lag = alpha - alpha*(u) = s e u^3 = s omega (L0 + h - t);
    # u' = u/R, R = 1 + (1 - u) Delta X, so omega' = omega/E1; h' = lag'/(s omega') - L0(omega') + t'
    A = in_s(sc.alpha_star)
    Un = u_of(v * E1)
    lag = S / v * (L0(v) + h - t)
    ob.append(identity("drift-lag", "the lag alpha - alpha*(u) = s e u^3 is s omega (L0 + h - t)",
                       S * e_of.subs(to_k) * U**3, lag))
    lag_next = rho * lag + A.subs({u: U, s: S}) - A.subs({u: Un, s: S})
    ob.append(identity("drift-h-next", "h' = h + x dh = lag'/(s omega') - L0(omega') + t' with lag' = rho lag + "
                       "alpha*(u) - alpha*(u') (the alpha-map), omega' = omega/E1, E1 = 1 + Delta X, t' = t/E1^4",
                       h_next.subs(X, (E1 - 1) / Delta), lag_next * v * E1 / S - L0(v * E1) + t / E1**T_POWER))
    ob.append(identity("drift-u-next", "u' = u/R with R = 1 + (1 - u) Delta X is 1/(1 + v E1)",
                       U / (1 + (1 - U) * (E1 - 1)), Un))
    at0 = sp.factor(h_next.subs(v, 0).subs({X: 1, E1: 1, Gam: 1 - kappa * h}))
    ob.append(identity("drift-G-at-infinity", "at v = 0: G = 1/kappa - h (Gamma = 1 - kappa h)", Gamma.subs(v, 0),
                       1 - kappa * h))
    ob.append(identity("drift-at-infinity", "at v = 0 (X = E1 = 1, G = 1/kappa - h): h' = (1 - kappa x) h, the "
                       "multiplier across the curve of fixed points at omega = infinity", at0, (1 - kappa * x) * h))
    e_exit = factored(e0(U).subs(to_k)) + (h - t) * (1 + v) ** 3 / v
    out = {"Gamma": Gamma, "Delta": Delta, "dh": dh, "e_of": e_exit}
    # the partials the mean-value forms use, each factored (h' term by term): an enclosure of a factored derivative
    # wraps far less than one of the quotient rule's sum
    for name, wrt in (("Gamma", STATE + PARAMS), ("Delta", (v, t, Gam) + PARAMS)):
        out |= {f"{name}_{z}": factored(sp.diff(out[name], z)) for z in wrt}
    out |= {f"dh_{z}": sp.Add(*[factored(sp.diff(term, z)) for term in terms]) for z in STATE + (Gam, X, E1) + PARAMS}
    ob += [regular_obligation("drift", n, e) for n, e in out.items() if n != "e_of" and not n.startswith("e_of")]
    return out, tuple(ob)


def obligations() -> tuple:
    return drift_chart()[1]


@lru_cache(maxsize=None)
@by_code_version("drift-formula-text")
def file_group() -> dict:
    """The chart's formulas as text (the "drift" group of an atlas file's map)."""
    return {n: formula_text(e) for n, e in drift_chart()[0].items()}


@dataclass(frozen=True)
class DriftFunctions:
    """The chart compiled to Arb: each returns (value, its partials in the order of ARGS[name])."""

    Gamma: object
    Delta: object
    dh: object
    e_of: object


@lru_cache(maxsize=None)
def arb_functions() -> DriftFunctions:
    texts = file_group()
    f = lambda name, grads=True: compile_formulas(  # noqa: E731
        [texts[name]] + ([texts[f"{name}_{z}"] for z in ARGS[name]] if grads else []), tuple(map(str, ARGS[name])))
    return DriftFunctions(f("Gamma"), f("Delta"), f("dh"), f("e_of", grads=False))


@dataclass
class DriftCheck:
    """The outcome of the band's check: its shape, the boxes (as bisection trees), the obligations."""

    tau: Fraction
    W: Fraction
    v_hi: Fraction
    s_hi: Fraction
    boxes: int = 0
    min_G: Fraction | None = None                  # the least lower bound of Gamma = kappa G over the boxes
    exits: int = 0
    trees: list = field(default_factory=list)      # the cover: one bisection tree per box of the initial grid
    n: tuple = (8, 8, 4)
    u0: Fraction = Fraction(1, 2)
    region_C: Fraction = Fraction(0)
    bits: int = 128
    obligations: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.obligations) and all(o.ok for o in self.obligations)


def _mean_value(value, grads, B, C):
    """value(C) + sum grads_i (B_i - C_i), the mean-value form over the box B with centre C."""
    m = value
    for g, b, c in zip(grads, B, C):
        m = m + g * (b - c)
    return m


def _tight(mv, direct):
    """The mean-value enclosure intersected with the direct one (both hold the range), or the direct one alone
    when either is not finite."""
    return mv.intersection(direct) if mv.is_finite() and direct.is_finite() else direct


def _dexprel(D):
    """A ball holding exprel'(d) = int_0^1 s e^{ds} ds for every d in the ball D >= 0: [1/2, e^d_hi/2]."""
    from flint import arb  # heavy: flint
    return (arb(1) / 2).union(arb(D.upper()).exp() / 2)


def evaluate(fn, B, C):
    """Over the box B = (nu, t, h, x, kappa) (balls) with centre C: (Gamma, its partials), and when Gamma > 0 also
    (h', its partials by the chain rule through Gamma and Delta), nu' and t'; Gamma and h' are mean-value forms in all
    five variables, intersected with the direct enclosures (h' with h + x dh over the box)."""
    g = fn.Gamma(*B)
    Gc = fn.Gamma(*C)[0]
    G = _tight(_mean_value(Gc, g[1:], B, C), g[0])
    if not (G.is_finite() and G > 0):
        return G, g[1:], None, None, None, None
    V, T, H, Px, Pk = B
    d = fn.Delta(V, T, G, Px, Pk)                # (Delta, d/dv, d/dt, d/dGamma, d/dx, d/dkappa)
    D = d[0]
    Xb = exprel_ball(D)
    E = 1 + D * Xb
    dD = (d[1] + d[3] * g[1], d[2] + d[3] * g[2], d[3] * g[3], d[4] + d[3] * g[4], d[5] + d[3] * g[5])
    q = fn.dh(V, T, H, G, Xb, E, Px, Pk)      # (dh, d/dnu, d/dt, d/dh, d/dGamma, d/dX, d/dE1, d/dx, d/dkappa)
    dX, dE = _dexprel(D), D.exp()
    own = (q[1], q[2], q[3], q[7], q[8])
    dq = [o + q[4] * gz + (q[5] * dX + q[6] * dE) * dz for o, gz, dz in zip(own, g[1:], dD)]
    Dc = fn.Delta(C[0], C[1], Gc, C[3], C[4])[0]
    Xc = exprel_ball(Dc)
    qc = fn.dh(*C[:3], Gc, Xc, 1 + Dc * Xc, *C[3:])[0]
    qB = _tight(_mean_value(qc, dq, B, C), q[0])
    # h' = h + x dh: its partials are x dq, with 1 more in h and dh more in x
    grads = [Px * dq[0], Px * dq[1], 1 + Px * dq[2], qB + Px * dq[3], Px * dq[4]]
    hn = _tight(_mean_value(C[2] + C[3] * qc, grads, B, C), H + Px * qB)
    return G, g[1:], hn, grads, V * E, T / E**T_POWER


DIMS = ("nu", "t", "h", "x", "kappa")


def _widest(grads, box) -> int:
    """The dimension whose width adds most to an enclosure: |partial| times half-width (for h only the partial's
    own width counts: h' = lambda h + ..., and lambda's part of the width does not shrink at |h| = W by halving h)."""
    def part(i):
        g, r = grads[i], (box[i][1] - box[i][0]) / 2
        mag = float((g - g.mid()).abs_upper() if i == 2 else g.abs_upper())
        return mag * float(r)
    return max(range(5), key=part)


def _check_boxes(fn, P, shape, region_C, u0, n, max_depth, max_boxes):
    """The band's boxes over (nu, t, h, x, kappa), each split across the dimension that widens its failing
    enclosure most: (ok, boxes, min Gamma, exits, failure text, trees). ``trees``: per box of the initial grid
    (nu, t, h-major order) its bisection tree in preorder, "." a box that passed, "x" one that holds no member
    (s = t nu^4 > s_hi on all of it), a digit i a box halved across dimension i (DIMS) followed by its halves."""
    tau, W, v_hi, s_hi = shape
    nv, nt, nh = n
    (x0, x1), (k0, k1) = P
    st = {"done": 0, "min_G": None, "exits": 0, "tried": 0, "why": ""}

    def walk(box, dep) -> str | None:
        (v0, _), (t0, _) = box[0], box[1]
        if t0 * v0**T_POWER > s_hi:
            return "x"                             # no member: s = t nu^4 > s_hi on the whole box
        st["tried"] += 1
        if st["tried"] > max_boxes:
            st["why"] = f"more than {max_boxes} boxes tried (the budget)"
            return None
        B = tuple(ball(a, b) for a, b in box)
        C = tuple(exact((a + b) / 2) for a, b in box)
        G, gG, hn, gh, vn, tn = evaluate(fn, B, C)
        why, grads = None, gh
        if hn is None:
            why, grads = f"Gamma not certainly > 0 ({G})", gG
        elif not hn.is_finite() or hi_frac(abs(hn)) > W:
            why = f"h' = {hn} leaves [-W, W]"
        elif hi_frac(vn) > v_hi:
            # the part of the image past v_hi (u' < u0 there) must lie in R~; the rest is in the band
            en = fn.e_of(ball(max(v_hi, lo_frac(vn)), hi_frac(vn)), tn, hn, B[3], B[4])[0]
            if not (en.is_finite() and hi_frac(abs(en)) <= region_C):
                why = f"leaving through nu = {v_hi}, e' = {en} is not in R~ (|e| <= {float(region_C):.4g})"
        if why is None:
            st["done"] += 1
            st["exits"] += hi_frac(vn) > v_hi
            st["min_G"] = lo_frac(G) if st["min_G"] is None else min(st["min_G"], lo_frac(G))
            return "."
        if dep >= max_depth:
            where = ", ".join(f"{nm} in [{float(a):.4g}, {float(b):.4g}]" for nm, (a, b) in zip(DIMS, box))
            st["why"] = f"on {where} after {max_depth} halvings: {why}"
            return None
        i = _widest(grads, box) if all(z.is_finite() for z in grads) else dep % 5
        a, b = box[i]
        m = (a + b) / 2
        left = walk(box[:i] + ((a, m),) + box[i + 1:], dep + 1)
        right = None if left is None else walk(box[:i] + ((m, b),) + box[i + 1:], dep + 1)
        return None if right is None else f"{i}{left}{right}"

    trees = []
    for i, j, k in itertools.product(range(nv), range(nt), range(nh)):
        tree = walk(((v_hi * i / nv, v_hi * (i + 1) / nv), (tau * j / nt, tau * (j + 1) / nt),
                     (-W + 2 * W * k / nh, -W + 2 * W * (k + 1) / nh), (x0, x1), (k0, k1)), 0)
        if tree is None:
            return False, st["done"], st["min_G"], st["exits"], st["why"], trees
        trees.append(tree)
    return True, st["done"], st["min_G"], st["exits"], "", trees


def check_drift(x_range: tuple, kappa_range: tuple, s_hi, *, tau, W, v_hi=Fraction(1), region_C, u0=Fraction(1, 2),
                n=(8, 8, 4), max_depth=30, max_boxes=100_000, bits=128) -> DriftCheck:
    """Check that the exact map sends the band D(tau, W, v_hi) into itself or into R~ = {u <= u0, |e| <= region_C}
    for every x in ``x_range``, kappa in ``kappa_range`` and s in [0, s_hi] (module docstring): boxes over
    (v, t, h, x, kappa), a failing box halved across the dimension that widens it most, up to ``max_depth`` times."""
    shape = tuple(Fraction(z) for z in (tau, W, v_hi, s_hi))
    if not 1 / Fraction(u0) - 1 <= shape[2]:
        raise InvalidParameter("v_hi", str(v_hi), f"must be >= 1/u0 - 1 = {1 / Fraction(u0) - 1} (the band hands over "
                               "to R~ where u' = 1/(1 + v') <= u0)")
    dc = DriftCheck(*shape)
    dc.obligations += list(obligations())
    P = ((Fraction(x_range[0]), Fraction(x_range[1])), (Fraction(kappa_range[0]), Fraction(kappa_range[1])))
    with arb_precision(bits):
        ok, boxes, mg, ex, why, trees = _check_boxes(arb_functions(), P, shape, Fraction(region_C), Fraction(u0),
                                                     n, max_depth, max_boxes)
    dc.boxes, dc.min_G, dc.exits, dc.trees = boxes, mg, ex, trees
    dc.n, dc.u0, dc.region_C, dc.bits = tuple(n), Fraction(u0), Fraction(region_C), bits
    dc.obligations.append(Obligation(
        "drift-invariant", "on every box G > 0 (so v' > v, t' < t) and |h'| <= W, and an image past v_hi lies in R~: "
        "the exact map sends the band into itself or into R~", "arb", ok,
        f"{boxes} boxes at {bits} bits; min G = {float(mg):.4g}" if ok else why))
    return dc


# The band's shapes tried in turn: W = w W_max, tau = W/TAU_PARTS. W_max keeps G = 1/kappa - h + O(v) away from 0
# (W <= 1/(2 kappa_hi)) and the band's exit inside R~: at v_hi, e = e0(u) + (h - t)(1 + v)^3/v, so
# W <= 3/4 (C~ - e0) v/(1 + v)^3 there. The centre of the band sits near h = -F t with F ~ 1 (measured,
# docs/atlas.md), so tau = W/4 leaves most of the margin.
BAND_LADDER = (Fraction(1), Fraction(1, 4))
TAU_PARTS = 4
BAND_BUDGET = 50_000


def _e0_at(kappa_hi, v_hi) -> Fraction:
    """e0 at nu_hi (the band's exit), at its largest over the cell (e0 = kappa/((1 - u)^3 ((1 - u)^2 + kappa u^2))
    increases with kappa; x cancels)."""
    k, vh = sp.Rational(Fraction(kappa_hi)), sp.Rational(Fraction(v_hi))
    return Fraction(str(sp.cancel(e0(u_of(vh)).subs(y, k * x))))


def power_of_2_below(W: Fraction) -> Fraction:
    """The largest power of 2 at most W (1 when W >= 1), exactly."""
    p = Fraction(1)
    while p > W:
        p /= 2
    return p


def band_width(kappa_hi, v_hi, region_C) -> Fraction:
    """W_max of the ladder (comment above), a power of 2; 0 when R~ cannot take the exit."""
    vh = Fraction(v_hi)
    room = Fraction(3, 4) * (Fraction(region_C) - _e0_at(kappa_hi, vh)) * vh / (1 + vh) ** 3
    W = min(Fraction(1, 2), 1 / (2 * Fraction(kappa_hi)), room)
    return power_of_2_below(W) if W > 0 else Fraction(0)


def region_C_for_band(kappa_hi, v_hi) -> Fraction:
    """The C~ of R~ that leaves the band its full width min(1/2, 1/(2 kappa_hi)) at the exit (band_width's room): a
    trapping region chosen as narrow as it closes may hold e0 at the exit with little to spare."""
    vh = Fraction(v_hi)
    W = power_of_2_below(min(Fraction(1, 2), 1 / (2 * Fraction(kappa_hi))))
    return _e0_at(kappa_hi, vh) + Fraction(4, 3) * W * (1 + vh) ** 3 / vh


def band_for_cell(box: tuple, u0, region_C, bits: int = 128, budget: int = BAND_BUDGET) -> DriftCheck:
    """The first band of BAND_LADDER that closes for the cell ``box`` = ((rho_lo, rho_hi), (x_lo, x_hi),
    (kappa_lo, kappa_hi)) with rho_lo = 0, handing over to R~ = {u <= u0, |e| <= region_C}, each tried with at most
    ``budget`` boxes; else the last attempt."""
    (_, r_hi), xr, kr = box
    s_hi = Fraction(r_hi) / (1 - Fraction(r_hi))
    v_hi = 1 / Fraction(u0) - 1
    W_max = band_width(kr[1], v_hi, region_C)
    dc = DriftCheck(Fraction(0), W_max, v_hi, s_hi)
    if W_max == 0:
        dc.obligations.append(Obligation("drift-invariant", "the band's exit lies in R~", "arb", False,
                                         f"R~'s |e| <= {float(region_C):.4g} does not hold e0 at u0 = {u0}"))
        return dc
    for w in BAND_LADDER:
        W = w * W_max
        dc = check_drift(xr, kr, s_hi, tau=W / TAU_PARTS, W=W, v_hi=v_hi, region_C=region_C,
                         u0=u0, max_boxes=budget, bits=bits)
        if dc.ok:
            break
    return dc


def statement(dc: DriftCheck) -> str:
    """What a closed band certifies, as a clause of an atlas reason."""
    return (f"the drift along the curve of fixed points, the band {{omega >= {frac_str(1 / dc.v_hi)}, s omega^4 <= "
            f"{frac_str(dc.tau)}, |h| <= {frac_str(dc.W)}}} (h: the lag's deviation from the quasi-static one, "
            f"verify.certify.drift) mapped into itself or into R~ ({dc.boxes} boxes; recheck.atlas re-checks it), "
            "omega falling on it")


def record(dc: DriftCheck) -> dict:
    """The band as an atlas file states it (checked in the run that wrote the file)."""
    bad = next((o for o in dc.obligations if not o.ok), None)
    return {"ok": dc.ok, "tau": frac_str(dc.tau), "W": frac_str(dc.W), "v_hi": frac_str(dc.v_hi),
            "s_hi": frac_str(dc.s_hi), "u0": frac_str(dc.u0), "region_C": frac_str(dc.region_C), "grid": list(dc.n),
            "bits": dc.bits, "boxes": dc.boxes, "exits": dc.exits, "trees": dc.trees if dc.ok else [],
            "min_Gamma": frac_str(dc.min_G) if dc.min_G is not None else None,
            "failed": None if bad is None else f"{bad.name}: {bad.detail}"[:400]}
