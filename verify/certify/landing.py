"""The landing on the curve of fixed points at rho = 0: from within eps of the curve into the drift band, for every D.

A member of a cell holding rho = 0 ends its passage by approaching the curve of fixed points alpha = 1 + omega, the
lag alpha - alpha*(u) shrinking by about the multiplier 1 - kappa x a step from a fraction of omega down to the
quasi-static lag, of order s omega^3, where the drift band (verify.certify.drift) holds it. Those are all the scales
between 1 and s: in the band's h (the lag over s omega, shifted) the approach starts at h ~ -1/s. In the lag over
omega, written with the band's own coordinates (written "eta", "Ghat" in the files)

    eta = s h = (alpha - alpha*(u))/omega - s (L0 - t)        (eta ~ p - 1, p = alpha/(1 + omega)),
    Ghat = s Gamma(nu, t, eta/s),   Delta = (1 + s) x u^2 Ghat,   eta' = eta + x deta,

every formula is rational in (nu, t, eta, Ghat, X, E1; x, kappa) with denominators nonzero at nu = 0 and at t = 0
(proved below, from the band's formulas: eta' = s h'(eta/s)); at nu = 0, eta' = (1 + eta) E1 - 1 with Delta =
x Ghat, Ghat = -kappa eta (1 + eta): p' = p e^{kappa x p (1 - p)}, whose fixed point p = 1 attracts with the
multiplier 1 - kappa x.

What is checked (Arb boxes over (nu, t, eta, x, kappa), nu <= nu_hi, t <= tau, -eps <= eta <= 0, s = t nu^4 <=
s_hi): on every box 0 <= d eta'/d eta <= lambda (lambda_n on the near boxes, eta >= -eps1, lambda_f on the others),
d Ghat/d eta <= 0, and at the same (nu, t, x, kappa) the band's h' and Gamma at h = 0 (verify.certify.drift):
-(1 - lambda_n) W/2 <= Q = h'(0) <= W, Gamma(0) > 0. The derivatives are mean-value forms whose gradients come from
hyper-dual numbers (recheck.hyperdual), so the file holds the three formulas only. By the mean value theorem then eta' = eta P + s Q with P in [0, lambda] and Ghat = eta P_G
+ s Gamma(0) >= 0 (exactly 0 at the corner eta = s = 0, so no box could show it directly). Hence, with C = max(-Q, 0):

    eta' >= lambda eta - C s,   eta' <= s W (h' <= W),   nu' >= nu,   t' <= t,

and by counting (no box in s is needed, so every scale of s is covered at once): from eta >= -eps the member is
within eps1 after at most j_f steps (s-free), and in the band (h >= -W) after j_f + j_n(s) steps, j_n(s) =
ceil(log(eps1/(s w))/log(1/lambda_n)), w = W - C/(1 - lambda_n) > 0. Meanwhile log nu grows by at most the sum of
Delta = (1 + s) x u^2 Ghat, bounded through Ghat <= a |eta| + b s (a, b from the boxes) by K(s) = K0 + K1 s T(s),
T(s) = j_f + j_n(s): a member that starts with nu <= nu_in(s) = nu_hi e^-K(s) enters the band with nu <= nu_hi.
Before it, the approach (check_approach) carries members from eta >= -3/4 (p >= 1/4) into that region: eta rises
every step (mean-value forms, no contraction needed there) and log(nu/(1 + eta)), which does not grow at nu = 0,
grows by at most c_max (eta' - eta). Before it, for large D, the far approach (verify.certify.far) from p near 0 and
the passage (verify.certify.passage); the start from zero initialisation is not built.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..derive.factoring import factored, seeded_sympy
from ..derive.invariants import x
from ..model.numbers import frac_str
from ..model.precision import arb_precision
from ..run.cache import by_code_version
from . import drift
from .arbfun import ball, exact, hi_frac, lo_frac
from .coordinates import X
from .formulas import compile_formulas, formula_text
from .obligations import Obligation, identity

v, t, h, kappa, Gam, E1 = drift.v, drift.t, drift.h, drift.kappa, drift.Gam, drift.E1
eta = sp.Symbol("eta", real=True)          # s h: the lag over omega, shifted (eta ~ p - 1)
Gh = sp.Symbol("Ghat", real=True)          # s Gamma, as a given ball in Delta and eta'
STATE = (v, t, eta)
PARAMS = (x, kappa)
ARGS = {"Ghat": STATE + PARAMS, "Delta": (v, t, Gh) + PARAMS, "deta": STATE + (Gh, X, E1) + PARAMS}
DIMS = ("nu", "t", "eta", "x", "kappa")
# a failing box is halved across the dimension that widens its failing enclosure most, or (h'(0) failing, or a
# gradient not finite) across these in turn: nu twice as often
SPLIT_ORDER = (0, 2, 1, 0, 3, 4)


@lru_cache(maxsize=None)
@by_code_version("landing-chart")
@seeded_sympy()
def landing_chart() -> tuple:
    """({name: SymPy expression}, obligations): the module docstring's formulas, each proved from the drift band's
    (eta' = s h'(eta/s), Ghat = s Gamma(eta/s)), and regular at nu = 0 and t = 0."""
    pc = drift.chart_pieces()
    S = pc["S"]
    sub = {h: eta / S, Gam: Gh / S}
    Ghat = factored(S * pc["Gamma"].subs(h, eta / S))
    Delta = factored(pc["Delta"].subs(Gam, Gh / S))
    # each term of s dh written so that its powers of s cancel (s h - s t = eta - s t, s Gamma = Ghat, ...)
    terms = [factored(S * term.subs(sub)) for term in pc["terms"]]
    deta = sp.Add(*terms)
    ob = [identity("landing-Ghat", "Ghat(nu, t, eta) = s Gamma(nu, t, eta/s), s = t nu^4", Ghat,
                   S * pc["Gamma"].subs(h, eta / S)),
          identity("landing-Delta", "Delta = (1 + s) x u^2 Ghat is the band's Delta at Gamma = Ghat/s", Delta,
                   pc["Delta"].subs(Gam, Gh / S)),
          identity("landing-eta-next", "eta' = eta + x deta = s h'(eta/s) with the band's h' = h + x dh (Gamma = "
                   "Ghat/s)", eta + x * deta, (S * (h + x * sp.Add(*pc["terms"]))).subs(sub))]
    # at nu = 0 (s = 0): Ghat = -kappa eta (1 + eta), Delta = x Ghat and eta' = (1 + eta) E1 - 1: p' = p e^Delta
    D0 = Delta.subs(v, 0)
    at0 = sp.factor((eta + x * deta).subs(v, 0).subs(X, (E1 - 1) / D0))
    ob += [identity("landing-Ghat-at-infinity", "at nu = 0: Ghat = -kappa eta (1 + eta) (= kappa p (1 - p))",
                    Ghat.subs(v, 0), -kappa * eta * (1 + eta)),
           identity("landing-Delta-at-infinity", "at nu = 0: Delta = x Ghat", D0, x * Gh),
           identity("landing-at-infinity", "at nu = 0 (X = (E1 - 1)/Delta): eta' = (1 + eta) E1 - 1, i.e. p' = p E1",
                    at0, (1 + eta) * E1 - 1)]
    # no partials: the check takes every derivative by hyper-dual arithmetic (recheck.hyperdual)
    out = {"Ghat": Ghat, "Delta": Delta, "deta": deta}
    ob += [drift.regular_obligation("landing", n, e) for n, e in out.items()]
    return out, tuple(ob)


def obligations() -> tuple:
    return landing_chart()[1]


@lru_cache(maxsize=None)
@by_code_version("landing-formula-text")
def file_group() -> dict:
    """The chart's formulas as text (the "landing" group of an atlas file's map)."""
    return {n: formula_text(e) for n, e in landing_chart()[0].items()}


@dataclass(frozen=True)
class LandingFunctions:
    """The chart's formulas compiled for hyper-dual numbers: each returns a 1-tuple (its value)."""

    Ghat: object
    Delta: object
    deta: object


@lru_cache(maxsize=None)
def hd_functions() -> LandingFunctions:
    """The chart's formulas (values only) compiled for hyper-dual numbers (recheck.hyperdual): evaluated at a
    state whose eta carries e1 and whose z carries e2 they give eta' with d eta'/d eta and d^2 eta'/d eta dz."""
    from recheck.hyperdual import hd_power  # heavy: flint
    texts = file_group()
    return LandingFunctions(*(compile_formulas([texts[n]], tuple(map(str, ARGS[n])), power=hd_power)
                              for n in ("Ghat", "Delta", "deta")))


def step_terms(fh: LandingFunctions, Z) -> tuple:
    """(eta', Ghat, Delta) at the state Z = (nu, t, eta, x, kappa) (balls or hyper-duals), E1 = e^Delta, X =
    exprel(Delta)."""
    from recheck.hyperdual import exprel  # heavy: flint
    V, T, H, Px, Pk = Z
    g = fh.Ghat(*Z)[0]
    D = fh.Delta(V, T, g, Px, Pk)[0]
    q = fh.deta(V, T, H, g, exprel(D), D.exp(), Px, Pk)[0]
    return H + Px * q, g, D


def eta_next(fh: LandingFunctions, Z) -> tuple:
    """(eta', Ghat) at the state Z (step_terms)."""
    return step_terms(fh, Z)[:2]


def approach_terms(fh: LandingFunctions, Z) -> tuple:
    """(eta' - eta, Ghat, eta', the growth of log(nu/(1 + eta))) at the state Z: the last is Delta - log((1 +
    eta')/(1 + eta)), 0 at nu = 0 (there 1 + eta' = (1 + eta) e^Delta: nu and p = 1 + eta grow alike)."""
    e, g, D = step_terms(fh, Z)
    H = Z[2]
    return e - H, g, e, D - ((1 + e) / (1 + H)).log()


def derivatives(fh: LandingFunctions, box) -> tuple:
    """Over ``box`` (pairs of rationals in DIMS order): (d eta'/d eta, d Ghat/d eta, widen), the first two each a
    mean-value form in all five variables (its gradient is the e1 e2 part of a hyper-dual evaluation over the box)
    intersected with the direct enclosure; widen[i]: what dimension i adds to each (|gradient| times half-width)."""
    from recheck.hyperdual import HD  # heavy: flint
    B = tuple(ball(a, b) for a, b in box)
    Cf = tuple((a + b) / 2 for a, b in box)
    C = tuple(exact(c) for c in Cf)
    at_c = eta_next(fh, tuple(HD(c, 1 if i == 2 else 0) for i, c in enumerate(C)))
    P, PG = at_c[0].b, at_c[1].b
    Pd = PGd = None
    widen = []
    for i in range(5):
        e, g = eta_next(fh, tuple(HD(b, 1 if j == 2 else 0, 1 if j == i else 0) for j, b in enumerate(B)))
        Pd = e.b if Pd is None else Pd.intersection(e.b)
        PGd = g.b if PGd is None else PGd.intersection(g.b)
        dz = B[i] - C[i]
        P, PG = P + e.d * dz, PG + g.d * dz
        r = float(box[i][1] - box[i][0]) / 2
        widen.append((float(e.d.abs_upper()) * r if e.d.is_finite() else math.inf,
                      float(g.d.abs_upper()) * r if g.d.is_finite() else math.inf))
    return drift._tight(P, Pd), drift._tight(PG, PGd), widen


def at_curve(fd, box) -> tuple:
    """(Gamma, h') at h = 0 over the (nu, t, x, kappa) of ``box`` (pairs of rationals in DIMS order; the band's
    formulas, verify.certify.drift): the drift's own push at the quasi-static lag, and the gap's growth there; h'
    None unless Gamma > 0."""
    Z = tuple(ball(a, b) for a, b in box)
    Z = Z[:2] + (exact(0),) + Z[3:]
    C = tuple(exact((a + b) / 2) for a, b in box)
    C = C[:2] + (exact(0),) + C[3:]
    G, _, hn, _, _, _ = drift.evaluate(fd, Z, C)
    return G, hn


@dataclass(kw_only=True)
class CoverCheck:
    """What every check over a cover states besides its shape: the bisection trees, the precision, the obligations."""

    trees: list = field(default_factory=list)
    bits: int = 128
    obligations: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.obligations) and all(o.ok for o in self.obligations)


@dataclass
class LandingCheck(CoverCheck):
    """The outcome of the landing's check and what it states (module docstring)."""

    eps: Fraction
    eps1: Fraction
    lam_f: Fraction
    lam_n: Fraction
    tau: Fraction
    W: Fraction
    v_hi: Fraction
    s_hi: Fraction
    x_hi: Fraction = Fraction(0)
    boxes: int = 0
    C: Fraction = Fraction(0)           # max(-h'(0), 0): the drift's push away from the curve, in h
    a: Fraction = Fraction(0)           # max(-d Ghat/d eta)
    b: Fraction = Fraction(0)           # max Gamma(0)
    n: tuple = (4, 1, 8)


def cover(starts, s_hi, judge, max_depth: int, max_boxes: int, dims=DIMS) -> tuple:
    """Bisection trees over (nu, t, third, x, kappa) (named ``dims``) from the boxes ``starts``: judge(box) -> (failure
    text or None, the dimension to halve or None); a failing box is halved there (else across SPLIT_ORDER in turn) up
    to ``max_depth`` times. (ok, failure text, trees): "." a box that passed, "x" one that holds no member (s = t nu^4
    > s_hi on all of it; none when s_hi is None), a digit the dimension halved followed by its halves
    (verify.certify.drift's marks)."""
    st = {"tried": 0, "why": ""}

    def walk(box, dep) -> str | None:
        (v0, _), (t0, _) = box[0], box[1]
        if s_hi is not None and t0 * v0**drift.T_POWER > s_hi:
            return "x"
        st["tried"] += 1
        if st["tried"] > max_boxes:
            st["why"] = f"more than {max_boxes} boxes tried (the budget)"
            return None
        why, i = judge(box)
        if why is None:
            return "."
        if dep >= max_depth:
            where = ", ".join(f"{nm} in [{float(a):.4g}, {float(b):.4g}]" for nm, (a, b) in zip(dims, box))
            st["why"] = f"on {where} after {max_depth} halvings: {why}"
            return None
        if i is None:
            i = SPLIT_ORDER[dep % len(SPLIT_ORDER)]
        a, b = box[i]
        m = (a + b) / 2
        left = walk(box[:i] + ((a, m),) + box[i + 1:], dep + 1)
        right = None if left is None else walk(box[:i] + ((m, b),) + box[i + 1:], dep + 1)
        return None if right is None else f"{i}{left}{right}"

    trees = []
    for box in starts:
        tree = walk(box, 0)
        if tree is None:
            return False, st["why"], trees
        trees.append(tree)
    return True, "", trees


def grid(v_hi, tau, third: tuple, P, n) -> list:
    """The initial boxes: n = (n_nu, n_t, n_third) equal pieces of [0, v_hi] x [0, tau] x [third], times P = (x
    range, kappa range), nu-major (as the re-checker rebuilds them)."""
    lo, hi = third
    return [((v_hi * i / n[0], v_hi * (i + 1) / n[0]), (tau * j / n[1], tau * (j + 1) / n[1]),
             (lo + (hi - lo) * k / n[2], lo + (hi - lo) * (k + 1) / n[2])) + tuple(P)
            for i, j, k in itertools.product(range(n[0]), range(n[1]), range(n[2]))]


def _widest(widen: list):
    """The dimension that adds most to an enclosure (None when that is not finite)."""
    i = max(range(5), key=lambda z: widen[z])
    return None if math.isinf(widen[i]) else i


def _landing_judge(fh, fd, lc: "LandingCheck"):
    """judge(box) for the landing's boxes (module docstring); a box that passes updates lc's C, a, b."""
    C_max = (1 - lc.lam_n) * lc.W / 2      # so that w = W - C/(1 - lambda_n) >= W/2

    def judge(box):
        lam = lc.lam_n if box[2][0] >= -lc.eps1 else lc.lam_f
        Pd, PG, widen = derivatives(fh, box)
        G0, Q = at_curve(fd, box)
        if Q is None:
            return f"Gamma at h = 0 not certainly > 0 ({G0})", None
        if not (Pd.is_finite() and lo_frac(Pd) >= 0 and hi_frac(Pd) <= lam):
            return f"d eta'/d eta = {Pd} not in [0, {float(lam):.6g}]", _widest([w[0] for w in widen])
        if not (PG.is_finite() and hi_frac(PG) <= 0):
            return f"d Ghat/d eta = {PG} not <= 0", _widest([w[1] for w in widen])
        if not (Q.is_finite() and hi_frac(Q) <= lc.W and lo_frac(Q) >= -C_max):
            return f"h'(0) = {Q} not in [-{float(C_max):.4g}, W = {lc.W}]", None
        lc.boxes += 1
        lc.C, lc.a, lc.b = max(lc.C, -lo_frac(Q)), max(lc.a, -lo_frac(PG)), max(lc.b, hi_frac(G0))
        return None, None
    return judge


COUNT_BITS = 256     # the counts' precision (the re-checker recomputes them at the same)


def _q(z: Fraction):
    from flint import arb  # heavy: flint
    return arb(z.numerator) / z.denominator


def counts(lc: LandingCheck) -> dict:
    """The statement's constants from the checked ones (module docstring), as exact rationals bounding them: w, j_f,
    and K0, K1 with log nu growing by at most K(s) = K0 + K1 s T(s) over the T(s) = j_f + j_n(s) steps of the
    landing."""
    lf, ln = lc.lam_f, lc.lam_n
    w = lc.W - lc.C / (1 - ln)
    far_room = lc.eps1 - lc.C * lc.s_hi / (1 - lf)
    out = {"w": w, "far_room": far_room, "ok": w > 0 and far_room > 0 and lc.C * lc.s_hi <= (1 - ln) * lc.eps1}
    if not out["ok"]:
        return out
    with arb_precision(COUNT_BITS):
        j_f = math.ceil(hi_frac((_q(lc.eps) / _q(far_room)).log() / (1 / _q(lf)).log()))
    # sum over the steps of |eta_j| <= eps/(1 - lambda_f) + eps1/(1 - lambda_n) + C s T (1/(1 - lambda_f) + 1/(1 -
    # lambda_n)), and Delta <= (1 + s) x (a |eta| + b s)
    grow = (1 + lc.s_hi) * lc.x_hi
    K0 = grow * lc.a * (lc.eps / (1 - lf) + lc.eps1 / (1 - ln))
    K1 = grow * (lc.a * lc.C * (1 / (1 - lf) + 1 / (1 - ln)) + lc.b)
    return out | {"j_f": j_f, "K0": K0, "K1": K1}


def steps_to_band(lc: LandingCheck, s) -> int:
    """T(s): a bound on the steps from {eta >= -eps, nu <= nu_in(s), t <= tau} into the band, for a member with s."""
    s = Fraction(s)
    w = lc.W - lc.C / (1 - lc.lam_n)
    ratio = lc.eps1 / (s * w)
    with arb_precision(COUNT_BITS):
        j_n = 0 if ratio <= 1 else math.ceil(hi_frac(_q(ratio).log() / (1 / _q(lc.lam_n)).log()))
    return counts(lc)["j_f"] + j_n


def nu_in(lc: LandingCheck, s) -> Fraction:
    """nu_hi e^-K(s): a member with s that starts the landing at nu <= nu_in(s) stays at nu <= nu_hi until it is in
    the band."""
    c = counts(lc)
    K = c["K0"] + c["K1"] * Fraction(s) * steps_to_band(lc, s)
    with arb_precision(COUNT_BITS):
        return lo_frac(_q(lc.v_hi) * (-_q(K)).exp())


def nu_in_min(lc: LandingCheck, s_max=None) -> Fraction:
    """A rational at most nu_in(s) for every 0 < s <= s_max (default s_hi): K(s) = K0 + K1 s T(s) with s T(s) <= s
    (j_f + 1) + s L(s), L(s) = max(0, log(eps1/(s w))/log(1/lambda_n)), and s L(s) is at most its value at s_max when
    s_max <= s* = eps1/(e w) (it rises up to s*), else at most its maximum over every s > 0, s*/log(1/lambda_n)."""
    c = counts(lc)
    w = lc.W - lc.C / (1 - lc.lam_n)
    sm = lc.s_hi if s_max is None else min(Fraction(s_max), lc.s_hi)
    with arb_precision(COUNT_BITS):
        ell = (1 / _q(lc.lam_n)).log()
        s_star = _q(lc.eps1 / w) / _q(Fraction(1)).exp()
        if sm <= lo_frac(s_star):
            sL = _q(sm) * (_q(lc.eps1 / (sm * w))).log() / ell
        else:
            sL = s_star / ell
        K = _q(c["K0"]) + _q(c["K1"]) * (_q(sm * (c["j_f"] + 1)) + sL)
        return lo_frac(_q(lc.v_hi) * (-K).exp())


def transverse_rate(kappa_lo, v_hi) -> Fraction:
    """The least of (1 + kappa omega^2)/(1 + omega)^2 over kappa >= kappa_lo and omega >= 1/v_hi: the curve of fixed
    points attracts with the multiplier 1 - x (1 + kappa omega^2)/(1 + omega)^2 (docs/atlas.md), which is kappa x only
    at omega = infinity. It grows with kappa; in omega it falls until omega = 1/kappa, then rises to kappa."""
    k = Fraction(kappa_lo)
    om = max(1 / Fraction(v_hi), 1 / k)
    return (1 + k * om**2) / (1 + om) ** 2


def check_landing(x_range: tuple, kappa_range: tuple, s_hi, *, tau, W, v_hi, eps=Fraction(1, 8), eps1=None,
                  lam_f=None, lam_n=None, n=(4, 1, 8), max_depth=30, max_boxes=100_000, bits=128) -> LandingCheck:
    """Check the landing (module docstring) for every x in ``x_range``, kappa in ``kappa_range``, s in [0, s_hi],
    handing over to the band {nu <= v_hi, t <= tau, |h| <= W}. eps1 defaults to eps/n_eta (the near zone is the last
    box of the initial grid in eta), lambda_n and lambda_f to 1 - m x_lo/2 and 1 - m x_lo/4 with m the least
    transverse rate (transverse_rate: the multiplier at the curve is 1 - m x, 1 - kappa x at omega = infinity; at
    eta = -1/8, i.e. p = 7/8, it is about 1 - (21/32) m x, and 1 at p = 1/2)."""
    (x0, x1), (k0, k1) = ((Fraction(a), Fraction(b)) for a, b in (x_range, kappa_range))
    kx = x0 * transverse_rate(k0, Fraction(v_hi))
    eps = Fraction(eps)
    lc = LandingCheck(eps, Fraction(eps1) if eps1 is not None else eps / n[2],
                      Fraction(lam_f) if lam_f is not None else 1 - kx / 4,
                      Fraction(lam_n) if lam_n is not None else 1 - kx / 2,
                      Fraction(tau), Fraction(W), Fraction(v_hi), Fraction(s_hi), x_hi=x1, n=tuple(n), bits=bits)
    lc.obligations += list(obligations())
    with arb_precision(bits):
        ok, why, lc.trees = cover(grid(lc.v_hi, lc.tau, (-lc.eps, Fraction(0)), ((x0, x1), (k0, k1)), lc.n), lc.s_hi,
                                  _landing_judge(hd_functions(), drift.arb_functions(), lc), max_depth, max_boxes)
        c = counts(lc) if ok else {}
    lc.obligations.append(Obligation(
        "landing-boxes", "on every box 0 <= d eta'/d eta <= lambda, d Ghat/d eta <= 0, h'(0) <= W and Gamma(0) > 0",
        "arb", ok, f"{lc.boxes} boxes at {bits} bits; C = {float(lc.C):.4g}, a = {float(lc.a):.4g}, "
        f"b = {float(lc.b):.4g}" if ok else why))
    if ok:
        lc.obligations.append(Obligation(
            "landing-count", "w = W - C/(1 - lambda_n) > 0, C s_hi <= (1 - lambda_n) eps1 and eps1 > C s_hi/(1 - "
            "lambda_f): the count reaches the band", "arb", c["ok"],
            (f"w = {float(c['w']):.4g}, j_f = {c['j_f']}, K0 = {float(c['K0']):.4g}, K1 = {float(c['K1']):.4g}")
            if c["ok"] else f"w = {float(c['w']):.4g}, eps1 - C s_hi/(1 - lambda_f) = "
            f"{float(c['far_room']):.4g}"))
    return lc


def record(lc: LandingCheck) -> dict:
    """The landing as an atlas file states it (checked in the run that wrote the file)."""
    bad = next((o for o in lc.obligations if not o.ok), None)
    c = counts(lc) if lc.ok else {}
    return {"ok": lc.ok, "eps": frac_str(lc.eps), "eps1": frac_str(lc.eps1), "lambda_f": frac_str(lc.lam_f),
            "lambda_n": frac_str(lc.lam_n), "tau": frac_str(lc.tau), "W": frac_str(lc.W), "v_hi": frac_str(lc.v_hi),
            "s_hi": frac_str(lc.s_hi), "grid": list(lc.n), "bits": lc.bits, "boxes": lc.boxes,
            "C": frac_str(lc.C), "a": frac_str(lc.a), "b": frac_str(lc.b),
            "j_f": c.get("j_f"), "K0": frac_str(c["K0"]) if c else None, "K1": frac_str(c["K1"]) if c else None,
            "trees": lc.trees if lc.ok else [],
            "failed": None if bad is None else f"{bad.name}: {bad.detail}"[:400]}


def statement(lc: LandingCheck) -> str:
    """What a closed landing certifies, as a clause of an atlas reason (its count T(s) and nu's growth K(s))."""
    c = counts(lc)
    return (f"the landing, from {{omega >= {frac_str(1 / lc.v_hi)} e^K(s), s omega^4 <= {frac_str(lc.tau)}, "
            f"-{frac_str(lc.eps)} <= eta <= 0}} (eta = s h ~ alpha/(1 + omega) - 1, verify.certify.landing; K(s) = "
            f"{float(c['K0']):.3g} + {float(c['K1']):.3g} s T(s)) into the band within T(s) = {c['j_f']} + "
            f"ceil(log({frac_str(lc.eps1)}/({float(c['w']):.3g} s))/log({frac_str(1 / lc.lam_n)})) steps "
            f"({lc.boxes} boxes; recheck.atlas re-checks it)")


def near_curve(eps) -> str:
    """An entry set within ``eps`` of the curve of fixed points, as an atlas reason says it."""
    return f"within {frac_str(eps)} of the curve of fixed points"


def reach(eps) -> str:
    """Where an entry set within ``eps`` of the curve of fixed points begins, as an atlas reason says it."""
    return f", up to {near_curve(eps)}"


LANDING_BUDGET = 20_000


def landing_for_cell(box: tuple, band, bits: int = 128, budget: int = LANDING_BUDGET) -> LandingCheck:
    """The landing into ``band`` (a closed verify.certify.drift.DriftCheck) for the cell ``box`` = ((0, rho_hi),
    (x_lo, x_hi), (kappa_lo, kappa_hi)): nu up to half the band's nu_hi (the landings lie far out on the curve), eps
    = 1/8, at most ``budget`` boxes."""
    _, xr, kr = box
    return check_landing(xr, kr, band.s_hi, tau=band.tau, W=band.W, v_hi=band.v_hi / 2, max_boxes=budget, bits=bits)


@dataclass
class ApproachCheck(CoverCheck):
    """The approach from within eps_a of the curve (p >= 1 - eps_a) into the landing's region (eta >= -eps): the
    shape, the cover and what the count rests on."""

    eps_a: Fraction
    eps: Fraction
    tau: Fraction
    v_hi: Fraction
    s_hi: Fraction
    c_max: Fraction = Fraction(1, 2)
    boxes: int = 0
    d_min: Fraction | None = None     # the least eta' - eta over the boxes
    c: Fraction = Fraction(0)         # the most log(nu/(1 + eta)) grows per unit of eta' - eta
    n: tuple = (4, 1, 10)

    def steps(self) -> int:
        """N_a: eta rises by at least d_min a step from -eps_a to -eps."""
        return math.ceil((self.eps_a - self.eps) / self.d_min)

    def log_growth(self, eta0=None) -> Fraction:
        """K_a(eta0) >= the growth of log nu over the approach from eta0 (default -eps_a, the worst): log(nu/(1 +
        eta)) grows by at most c (eta' - eta) a step, eta rises by at most |eta0| in all (it ends <= 0), and
        log(1 + eta) by at most log(1/(1 + eta0))."""
        e0 = -self.eps_a if eta0 is None else Fraction(eta0)
        with arb_precision(COUNT_BITS):
            up = hi_frac(_q(self.c * -e0) + (1 / (1 + _q(e0))).log())
        return Fraction(math.ceil(up * 2**32), 2**32)      # rounded up: a re-computation's own rounding stays below


def _approach_judge(fh, ac: ApproachCheck):
    """judge(box) for the approach's boxes: eta' - eta > 0, Ghat > 0, eta' <= 0 and the growth of log(nu/(1 + eta))
    at most c_max (eta' - eta); a box that passes updates ac's d_min and c."""
    from recheck.hyperdual import mean_values  # heavy: flint

    def judge(box):
        (d, wd), (G, wg), (en, we), (f, wf) = mean_values(lambda Z: approach_terms(fh, Z), box, ball, exact)
        if not (d.is_finite() and d > 0):
            return f"eta' - eta = {d} not certainly > 0", _widest(wd)
        if not (G.is_finite() and G > 0):
            return f"Ghat = {G} not certainly > 0", _widest(wg)
        if not (en.is_finite() and hi_frac(en) <= 0):
            return f"eta' = {en} not <= 0", _widest(we)
        if not (f.is_finite() and hi_frac(f) <= ac.c_max * lo_frac(d)):
            return f"log(nu/(1 + eta)) grows by {f}, more than {ac.c_max} (eta' - eta) = {d}", _widest(wf)
        ac.boxes += 1
        ac.d_min = lo_frac(d) if ac.d_min is None else min(ac.d_min, lo_frac(d))
        ac.c = max(ac.c, max(hi_frac(f), Fraction(0)) / lo_frac(d))
        return None, None
    return judge


def check_approach(x_range: tuple, kappa_range: tuple, s_hi, *, tau, v_hi, eps, eps_a=Fraction(3, 4),
                   c_max=Fraction(1, 2), n=(4, 1, 10), max_depth=30, max_boxes=100_000, bits=128) -> ApproachCheck:
    """Check the approach for every x in ``x_range``, kappa in ``kappa_range``, s in [0, s_hi]: on boxes over (nu,
    t, eta, x, kappa) with nu <= v_hi, t <= tau, -eps_a <= eta <= -eps (mean-value forms, recheck.hyperdual): eta
    rises by at least d_min a step (at most N_a steps to eta >= -eps, free of s), Ghat > 0 (nu grows, t falls), eta'
    <= 0, and log nu grows by at most K_a in all. A member at eta >= -eps_a, nu <= nu_in(s) e^-K_a, t <= tau enters
    the landing's region {eta >= -eps, nu <= nu_in(s), t <= tau} within N_a steps. Where p = 1 + eta is near 1/2 or
    below the map still moves p up (p' = p e^{kappa x p (1 - p)} at nu = 0), with no contraction to lean on."""
    (x0, x1), (k0, k1) = ((Fraction(a), Fraction(b)) for a, b in (x_range, kappa_range))
    ac = ApproachCheck(Fraction(eps_a), Fraction(eps), Fraction(tau), Fraction(v_hi), Fraction(s_hi), Fraction(c_max),
                       n=tuple(n), bits=bits)
    ac.obligations += list(obligations())
    with arb_precision(bits):
        ok, why, ac.trees = cover(grid(ac.v_hi, ac.tau, (-ac.eps_a, -ac.eps), ((x0, x1), (k0, k1)), ac.n), ac.s_hi,
                                  _approach_judge(hd_functions(), ac), max_depth, max_boxes)
        detail = (f"{ac.boxes} boxes at {bits} bits; d_min = {float(ac.d_min):.4g} (N_a = {ac.steps()}), c = "
                  f"{float(ac.c):.4g} (K_a = {float(ac.log_growth()):.4g})") if ok else why
    ac.obligations.append(Obligation(
        "approach-boxes", "on every box eta' - eta > 0, Ghat > 0, eta' <= 0 and log(nu/(1 + eta)) grows by at most "
        "c_max (eta' - eta)", "arb", ok, detail))
    return ac


def approach_for_cell(box: tuple, land: LandingCheck, bits: int = 128, budget: int = LANDING_BUDGET) -> ApproachCheck:
    """The approach into ``land``'s region for the cell ``box`` (as landing_for_cell), from eps_a = 3/4."""
    _, xr, kr = box
    return check_approach(xr, kr, land.s_hi, tau=land.tau, v_hi=land.v_hi, eps=land.eps, max_boxes=budget, bits=bits)


def approach_statement(ac: ApproachCheck, lc: LandingCheck) -> str:
    """What a closed approach into ``lc`` certifies, as a clause of an atlas reason."""
    return (f"the approach, from {{-{frac_str(ac.eps_a)} <= eta0 <= -{frac_str(lc.eps)}, omega >= "
            f"{frac_str(1 / lc.v_hi)} e^(K(s) + {float(ac.c):.3g} |eta0| - log(1 + eta0)), s omega^4 <= "
            f"{frac_str(lc.tau)}}} into the landing within {ac.steps()} steps ({ac.boxes} boxes; recheck.atlas "
            "re-checks it)")


def approach_record(ac: ApproachCheck) -> dict:
    """The approach as an atlas file states it (checked in the run that wrote the file)."""
    bad = next((o for o in ac.obligations if not o.ok), None)
    return {"ok": ac.ok, "eps_a": frac_str(ac.eps_a), "eps": frac_str(ac.eps), "tau": frac_str(ac.tau),
            "v_hi": frac_str(ac.v_hi), "s_hi": frac_str(ac.s_hi), "c_max": frac_str(ac.c_max), "grid": list(ac.n),
            "bits": ac.bits, "boxes": ac.boxes, "d_min": frac_str(ac.d_min) if ac.ok else None,
            "c": frac_str(ac.c), "N_a": ac.steps() if ac.ok else None,
            "K_a": frac_str(ac.log_growth()) if ac.ok else None, "trees": ac.trees if ac.ok else [],
            "failed": None if bad is None else f"{bad.name}: {bad.detail}"[:400]}
