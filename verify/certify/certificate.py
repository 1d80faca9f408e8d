"""All-time certificates: prefix (Arb engine) + trapping region + comparison lemma -> bounds at every T.

A :class:`Certificate` proves, for one regime (sigma = identity, 0 < K < D) and every T >= 0,
lower and upper bounds on L(T) - L_opt, ||S(T) - S*||_F and ||W_X(T) - V*||_F:

1. prefix: the certified Arb engine (verify.engines.arb) from zero initialisation to the first
   checkpoint T0 whose state ball lies inside R (for T <= T0 the bounds are the Arb balls);
2. region: R = {0 < u <= u0, |alpha - alpha*(u)| <= C u^3} is mapped into itself (verify.certify.region);
3. comparison: on R, (u - u')/u^3 in [a_j, b_j] on shells u <= u0 2^-j, so 1/u(T)^2 lies in an
   explicit interval for every T >= T0 (verify.certify.comparison); the observables are enclosed
   over R as functions of u (verify.certify.coordinates).

Every step is an obligation; if one fails, :func:`certify` raises :class:`CertificateFailed` naming
it and returns no weaker bound. K = 0 and K = D are certified exactly by closed forms
(:mod:`verify.certify.exact`); eta >= 2K/(c_L v N) (no trapping region) and regimes outside the exact
2-dimensional reduction are refused with :class:`~verify.errors.InvalidParameter`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

from ..engines.arb import CertifiedState, arb_precision
from ..errors import InvalidParameter, PrecisionError, VerificationError
from ..model.numbers import frac_str
from ..model.flags import setting_command
from ..model.setting import Setting
from ..model.validation import check_int
from . import fmt
from .comparison import LEMMA, extremes, lemma_obligations, schedule, z_range
from .coordinates import K_EXP, arb_functions, param_values, slow_coordinates
from .obligations import Obligation, first_failure
from .arbfun import exact, hi_frac, lo_frac
from .region import RegionCheck, check_region, exprel_obligation

QUANTITIES = ("excess_loss", "s_err", "w_err")
POWER = {"excess_loss": 1, "s_err": Fraction(1, 2), "w_err": Fraction(1, 2)}   # q ~ (eta T)^-power
# Shells u <= u0 r^j with r = 3/4 (r = 1/2 is the dyadic u0 2^-j): on each shell the decay ratio Q varies
# by about (1 - r) u_j c, so r = 3/4 halves the band of r = 1/2 at the same cost (120 shells reach u0 10^-15).
DEFAULTS = {"bits": 128, "shells": 120, "ratio": Fraction(3, 4), "n_u": 4, "n_eps": 2, "max_depth": 6,
            "max_prefix": 2_000_000, "check_every": 16}
SNAPSHOT_EVERY = 256     # prefix states kept every this many steps: bounds at T <= T0 re-step at most this
C_MULTIPLES = tuple(2**k for k in range(1, 14))
U0_CAP = Fraction(1, 4)
TIGHT = 2


class CertificateFailed(VerificationError):
    """The certificate did not close: ``obligation`` failed (no weaker bound is returned)."""

    def __init__(self, obligation: Obligation):
        self.obligation = obligation
        super().__init__(f"certificate failed: obligation '{obligation.name}' ({obligation.statement}): "
                         f"{obligation.detail}")


def check_certifiable(s: Setting) -> None:
    """Refuse, naming the flag, every regime the method does not cover (see the module docstring)."""
    if not s.sigma.is_identity:
        raise InvalidParameter("sigma", s.sigma.spec(), "must be identity: the certificate needs the rational slow "
                               "manifold alpha*(u) = <s,s*>/||s||^2 of sigma = identity (for erf, relu and "
                               "polynomials alpha* is implicit, and the alpha_m differ by row)")
    checks = (("data", not s.data.iid, "must be gaussian (i.i.d. entries): the certificate is built on the exact reduced "
               "recursion, which correlated pixels or tokens leave"),
              ("supports", s.sstar_weights is not None, "S* must have uniform weights 1/K (two-valued columns)"),
              ("law_mean", s.law.mean != 0, "must be 0: a non-zero mean leaves the exact reduction"),
              ("init", s.init != "zero", "must be zero: the certificate's prefix starts from zero initialisation"),
              ("p_structure", s.p_structure != "orthogonal", "must be orthogonal (P^T P = lambda I)"))
    for name, bad, why in checks:
        if bad:
            value = {"law_mean": frac_str(s.law.mean), "data": s.data.spec()}.get(name, getattr(s, name, None))
            raise InvalidParameter(name, value, why)
    ok, why = s.reducible()
    if not ok:
        raise InvalidParameter("sigma", s.sigma.spec(), f"the exact reduced recursion does not apply: {why}")
    if s.K > 0:
        thr = Fraction(2 * s.K) / (s.loss_scale * s.law.var * s.N)
        if s.eta_v >= thr:
            raise InvalidParameter("eta", frac_str(s.eta_v), f"must be < 2K/(c_L v N) = {frac_str(thr)}: no trapping "
                                   "region: the W_X block is unstable (|rho| = |1 - eta c_L v N ||s||^2| >= 1 at the "
                                   "attractor, where ||s||^2 = 1/K)")


@dataclass
class Certificate:
    """A closed all-time certificate for one regime with 0 < K < D (module docstring)."""

    setting: Setting
    bits: int
    T0: int
    region: RegionCheck
    shells: list
    prefix_end: dict
    z0: tuple
    constants: dict
    asymptotic: dict
    obligations: list
    knobs: dict
    seconds: dict = field(default_factory=dict)
    _snapshots: list = field(default_factory=list, repr=False)
    kind: str = "slow-manifold"

    # ----- bounds ------------------------------------------------------------------------------
    def bounds(self, T: int) -> dict:
        """Arb balls {q: (lo, hi)} enclosing each quantity after T exact GD steps, and the route."""
        T = check_int("at", T, 0)
        if T <= self.T0:
            return self._prefix_bounds(T)
        return self._tail_bounds(T)

    def _prefix_bounds(self, T: int) -> dict:
        s = self.setting
        k = max(i for i, snap in enumerate(self._snapshots) if snap["step"] <= T)
        st = _restore(s, self.bits, self._snapshots[k])
        with st.ar.context():
            while st.step_count < T:
                st.step()
            rec = st.record()
            out = {q: (getattr(rec, q), getattr(rec, q)) for q in QUANTITIES}
        return out | {"route": "prefix (Arb balls)"}

    def _tail_bounds(self, T: int) -> dict:
        fn, P = arb_functions(), param_values(self.setting)
        zl, zh = z_range(self.shells, T - self.T0, self.bits)
        with arb_precision(self.bits):
            Pb = tuple(exact(Fraction(p)) for p in P)
            u_lo, u_hi = 1 / exact(zh).sqrt(), 1 / exact(zl).sqrt()
            U = u_lo.lower().union(u_hi.upper())
            C = self.region.C
            E = exact(-C).union(exact(C))
            L2, W = fn.loss_over_u2(U, E, *Pb)[0], fn.w_over_u(U, E, *Pb)[0]
            vnorm, s_coef = exact(self.setting.vstar_norm2()).sqrt(), fn.s_over_u(*Pb)
            if not (L2.lower() > 0 and W.lower() > 0):
                raise CertificateFailed(Obligation("observables-positive", "L2 > 0 and h + eps u^2 > 0 on the u-interval",
                                                   "arb", False, f"at T = {T}: L2 = {L2}, h + eps u^2 = {W}"))
            out = {"excess_loss": (u_lo * u_lo * L2.lower(), u_hi * u_hi * L2.upper()),
                   "s_err": (s_coef * u_lo, s_coef * u_hi),
                   "w_err": (vnorm * u_lo * W.lower(), vnorm * u_hi * W.upper())}
        return out | {"route": "comparison lemma on the trapping region"}

    def bounds_json(self, T: int, digits: int | None = None) -> dict:
        """{"T": T, q: [lo, hi] (decimal strings, lo rounded down, hi rounded up), "route": ...}."""
        b = self.bounds(T)
        with arb_precision(self.bits):
            return {"T": T, **{q: fmt.interval(b[q][0], b[q][1], digits) for q in QUANTITIES}, "route": b["route"]}

    # ----- the certificate as data ------------------------------------------------------------
    def as_dict(self) -> dict:
        sc = slow_coordinates()
        import sympy as sp
        R_hull = self.region.shell_bounds(0)          # (u - u')/u^3 on the whole region
        return {
            "kind": self.kind,
            "statement": "for every T >= 0 the exact GD iterate of this regime satisfies the printed bounds; for "
                         "T >= T0: c_lo <= (eta T)^p q(T) <= c_hi with p = 1 for L - L_opt and p = 1/2 for "
                         "||S - S*||_F and ||W_X - V*||_F (eta = --eta)",
            "regime": self.setting.config(),
            "bits": self.bits,
            "T0": self.T0,
            "region": {"definition": f"R = {{0 < u <= u0, |alpha - alpha*(u)| <= C u^{K_EXP}}}",
                       "u0": frac_str(self.region.u0), "C": frac_str(self.region.C), "k": K_EXP,
                       "u": sp.sstr(sc.u_of_delta), "alpha_star": sp.sstr(sc.alpha_star), "check": self.region.summary()},
            "a": frac_str(R_hull["a"]), "b": frac_str(R_hull["b"]),
            "a_b_meaning": "a <= (u - u')/u^3 <= b on all of R; per shell: shells[j].a_j, b_j",
            "cubic_coefficient_c": frac_str(_c_exact(self.setting)),
            "prefix_end": self.prefix_end,
            "z_at_T0": [frac_str(self.z0[0]), frac_str(self.z0[1])],
            "lemma": LEMMA,
            "shells": [sh.as_dict() for sh in self.shells],
            "constants": self.constants,
            "asymptotic": self.asymptotic,
            "knobs": self.knobs,
            "obligations": [o.as_dict() for o in self.obligations],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "recheck": recheck_command(self),
        }


def _c_exact(s: Setting) -> Fraction:
    """The cubic coefficient c = D c_L eta_KQ lambda^2 v ||V*||^2 / (K (D - K)^2), exactly."""
    import sympy as sp
    from .coordinates import PARAMS
    val = slow_coordinates().c.subs(dict(zip(PARAMS, (sp.Rational(p) for p in param_values(s)))))
    return Fraction(int(sp.numer(val)), int(sp.denom(val)))


def _rho0(s: Setting) -> Fraction:
    return 1 - s.eta_v * s.loss_scale * s.law.var * s.N / s.K


def _snapshot(st: CertifiedState) -> dict:
    return {"step": st.step_count, "alpha": list(st.alpha), "ralpha": list(st.ralpha), "delta": st.delta,
            "rdelta": st.rdelta}


def _restore(s: Setting, bits: int, snap: dict) -> CertifiedState:
    st = CertifiedState(s, bits)
    st.alpha, st.ralpha = list(snap["alpha"]), list(snap["ralpha"])
    st.delta, st.rdelta, st.step_count = snap["delta"], snap["rdelta"], snap["step"]
    return st


def _membership(st: CertifiedState, Pb, u0: Fraction, C: Fraction):
    """(inside R?, u ball, eps balls) for the current state ball (call inside the Arb context)."""
    fn = arb_functions()
    alphas, d = st.balls()
    U = fn.u_of_delta(d, *Pb)
    eps = [fn.eps_of_state(a, U, *Pb) for a in alphas]
    inside = (U.lower() > 0 and U.upper() <= exact(u0) and all(e.is_finite() and abs(e).upper() <= exact(C)
                                                                for e in eps))
    return inside, U, eps


def run_prefix(s: Setting, bits: int, u0: Fraction, C: Fraction, *, max_prefix: int, check_every: int,
               T0: int | None = None):
    """Certified steps from zero until the state ball lies in R (checked every ``check_every`` steps),
    or exactly ``T0`` steps. Returns (T0, snapshots, end dict, z0 range, obligation)."""
    P = param_values(s)
    st = CertifiedState(s, bits)
    snaps = [_snapshot(st)]
    with st.ar.context():
        Pb = tuple(exact(Fraction(p)) for p in P)
        limit = max_prefix if T0 is None else T0
        inside, U, eps = False, None, []
        while True:
            at_check = st.step_count == T0 if T0 is not None else (st.step_count % check_every == 0)
            if at_check and st.step_count > 0:
                inside, U, eps = _membership(st, Pb, u0, C)
                if inside or T0 is not None:
                    break
            if st.step_count >= limit:
                if T0 is None:
                    inside, U, eps = _membership(st, Pb, u0, C)
                break
            try:
                st.step()
            except PrecisionError as exc:
                return st.step_count, snaps, {"step": st.step_count}, None, Obligation(
                    "prefix-in-region", "the prefix's end ball lies in R", "arb", False,
                    f"the prefix enclosure became unbounded before entering R ({exc}); raise --bits")
            if st.step_count % SNAPSHOT_EVERY == 0:
                snaps.append(_snapshot(st))
        end = st.step_count
        if not snaps or snaps[-1]["step"] != end:
            snaps.append(_snapshot(st))
        alphas, d = st.balls()
        from ..engines.arb import ball_str
        desc = {"step": end, "alpha": [list(ball_str(a)) for a in alphas], "delta": list(ball_str(d)),
                "u": [str(lo_frac(U)), str(hi_frac(U))] if U is not None else None,
                "eps": [[float(lo_frac(e)), float(hi_frac(e))] for e in eps if e.is_finite()]}
        if not inside:
            why = (f"at step {end}: u in [{float(lo_frac(U)):.6g}, {float(hi_frac(U)):.6g}] (u0 = {float(u0):.6g}), "
                   f"eps in {desc['eps']} (C = {float(C):.6g})") if U is not None else f"no state at step {end}"
            stop = f"the prefix was stopped at T0 = {T0}" if T0 is not None else f"no checkpoint up to {limit} steps"
            return end, snaps, desc, None, Obligation("prefix-in-region", "the prefix's end ball lies in R", "arb",
                                                      False, f"{stop}: {why}")
        z0 = (1 / hi_frac(U) ** 2, 1 / lo_frac(U) ** 2)
    return end, snaps, desc, z0, Obligation("prefix-in-region", "the prefix's end ball lies in R", "arb", True,
                                            f"T0 = {end}: u in [{float(lo_frac(U)):.6g}, {float(hi_frac(U)):.6g}] <= "
                                            f"u0, |eps| <= {max(max(abs(x) for x in e) for e in desc['eps']):.4g} <= "
                                            f"C = {float(C):.4g}")


def choose_region(s: Setting, bits: int, u0: Fraction | None, C: Fraction | None) -> tuple[Fraction, Fraction]:
    """Defaults for (u0, C), by coarse checks (6 shells, few boxes): C is the smallest power-of-two multiple
    of c/(1 - |rho(0)|) (the fixed point of eps at u = 0) for which R is invariant, and u0 the largest
    candidate (so the shortest prefix) whose outer shell is tight, b_0 <= TIGHT a_0 (a loose outer shell
    delays every shell entry, and the band with it); failing that, the largest invariant one."""
    P = param_values(s)
    base = _c_exact(s) / (1 - abs(_rho0(s)))
    # u0 <= 1/4 by default: a larger u0 shortens the prefix but widens [a, b] on the outer shells (Q
    # depends on eps through eps u^2 (D - K)/K), and the prefix costs little at 1/4.
    u_start = min(Fraction(s.D - s.K, s.D) * Fraction(7, 8), U0_CAP)
    u0s = [u0] if u0 is not None else [_dyadic(u_start * Fraction(7, 8) ** k) for k in range(60)]
    Cs = [C] if C is not None else [base * m for m in C_MULTIPLES]
    fallback = None
    for u in u0s:
        if not 0 < u < 1:
            raise InvalidParameter("u0", str(u), "must satisfy 0 < u0 < 1 (off-support attention mass)")
        for c in Cs:
            rc = check_region(P, u, c, shells=6, n_u=4, n_eps=2, max_depth=1, bits=bits, observables=False)
            if rc.ok:
                sb = rc.shell_bounds(0)
                if sb["b"] <= TIGHT * sb["a"] or u0 is not None:
                    return u, c
                fallback = fallback or (u, c)
                break
    if fallback:
        return fallback
    return (u0s[-1] if u0 is None else u0), (Cs[-1] if C is None else C)


def _dyadic(x: Fraction, bits: int = 10) -> Fraction:
    """x rounded down to a rational with a ``bits``-bit numerator over a power of two (short, exact)."""
    e = 0
    while x * 2**e < 2 ** (bits - 1):
        e += 1
    return Fraction(int(x * 2**e), 2**e)


def certify(s: Setting, *, bits: int | None = None, u0=None, C=None, shells: int | None = None, ratio=None,
            n_u: int | None = None, n_eps: int | None = None, max_depth: int | None = None,
            max_prefix: int | None = None, check_every: int | None = None, T0: int | None = None,
            region_boxes=None):
    """Build and check the all-time certificate of regime ``s`` (module docstring).

    Knobs (None = the default, found automatically where it says so): ``bits`` (Arb precision),
    ``u0`` and ``C`` (the region; auto), ``shells`` and ``ratio`` (nested shells u <= u0 ratio^j,
    j <= shells; ratio 1/2: the dyadic shells),
    ``n_u``, ``n_eps`` (subdivisions of each annulus), ``max_depth`` (bisections of a failing box),
    ``max_prefix`` and ``check_every`` (prefix length limit and membership checkpoints), ``T0``
    (end the prefix exactly there instead), ``region_boxes`` (check this cover instead).
    Returns a :class:`Certificate`, or an exact certificate for K = 0 and K = D; raises
    :class:`CertificateFailed` when an obligation fails and InvalidParameter for refused regimes.
    """
    from . import exact as exact_mod
    from ..engines.arb import MAX_BITS, MIN_BITS
    from ..model.numbers import exact as exact_number
    check_certifiable(s)
    knobs = dict(DEFAULTS)
    for k, v in (("bits", bits), ("shells", shells), ("n_u", n_u), ("n_eps", n_eps), ("max_depth", max_depth),
                 ("max_prefix", max_prefix), ("check_every", check_every)):
        if v is not None:
            knobs[k] = v
    knobs["bits"] = check_int("bits", knobs["bits"], MIN_BITS, MAX_BITS)
    knobs["shells"] = check_int("shells", knobs["shells"], 1, 2000)
    if ratio is not None:
        knobs["ratio"] = exact_number(ratio, "shell_ratio")
    if not 0 < knobs["ratio"] < 1:
        raise InvalidParameter("shell_ratio", str(knobs["ratio"]), "must satisfy 0 < ratio < 1 (u_j = u0 ratio^j)")
    knobs["n_u"] = check_int("subdivisions", knobs["n_u"], 1, 4096)
    knobs["n_eps"] = check_int("subdivisions", knobs["n_eps"], 1, 4096)
    knobs["max_depth"] = check_int("max_depth", knobs["max_depth"], 0, 30)
    knobs["max_prefix"] = check_int("max_prefix", knobs["max_prefix"], 1, 10**9)
    knobs["check_every"] = check_int("check_every", knobs["check_every"], 1, 10**6)
    if T0 is not None:
        T0 = check_int("T0", T0, 1, 10**9)
    if s.K == 0 or s.K == s.D:
        return exact_mod.exact_certificate(s, knobs["bits"])
    u0 = None if u0 is None else exact_number(u0, "u0")
    C = None if C is None else exact_number(C, "C")
    if C is not None and C <= 0:
        raise InvalidParameter("C", str(C), "must be > 0")
    bits = knobs["bits"]
    secs = {}
    t = time.perf_counter()
    obligations = list(slow_coordinates().obligations) + [exprel_obligation()] + list(lemma_obligations())
    secs["symbolic"] = time.perf_counter() - t
    _raise_first(obligations)
    t = time.perf_counter()
    u0, C = choose_region(s, bits, u0, C)
    rc = check_region(param_values(s), u0, C, shells=knobs["shells"], n_u=knobs["n_u"], n_eps=knobs["n_eps"],
                      max_depth=knobs["max_depth"], bits=bits, boxes=region_boxes, ratio=knobs["ratio"])
    secs["region"] = time.perf_counter() - t
    obligations += rc.obligations
    _raise_first(obligations)
    t = time.perf_counter()
    end, snaps, desc, z0, ob = run_prefix(s, bits, u0, C, max_prefix=knobs["max_prefix"],
                                          check_every=knobs["check_every"], T0=T0)
    secs["prefix"] = time.perf_counter() - t
    obligations.append(ob)
    _raise_first(obligations)
    t = time.perf_counter()
    shells_, sob = schedule(rc.hull, u0, knobs["shells"], z0, bits, knobs["ratio"])
    obligations += sob
    _raise_first(obligations)
    consts, asym, cob = constants(s, end, shells_, bits)
    obligations.append(cob)
    _raise_first(obligations)
    secs["comparison"] = time.perf_counter() - t
    knobs |= {"u0": frac_str(u0), "C": frac_str(C), "ratio": frac_str(knobs["ratio"]),
              "T0": T0 if T0 is not None else "auto (first checkpoint in R)"}
    return Certificate(s, bits, end, rc, shells_, desc, z0, consts, asym, obligations, knobs, secs, snaps)


def _raise_first(obligations) -> None:
    bad = first_failure(obligations)
    if bad is not None:
        raise CertificateFailed(bad)


def constants(s: Setting, T0: int, shells, bits: int):
    """c_lo <= (eta T)^p q(T) <= c_hi for all T >= T0, per quantity; and the T -> infinity interval."""
    ext = extremes(shells, T0, bits)
    eta = s.eta_v
    out, asym = {}, {}
    with arb_precision(bits):
        fn = arb_functions()
        Pb = tuple(exact(Fraction(p)) for p in param_values(s))
        s_coef, vnorm = fn.s_over_u(*Pb), exact(s.vstar_norm2()).sqrt()
        for q in QUANTITIES:
            p = POWER[q]
            his, los = [], []
            for sh, ex in zip(shells, ext):
                psi = _psi(q, sh, s_coef, vnorm)
                up_r, lo_r = exact(eta * ex["sup_T_over_z_lo"]), exact(eta * ex["inf_T_over_z_hi"])
                his.append(psi[1] * (up_r if p == 1 else up_r.sqrt()))
                los.append(psi[0] * (lo_r if p == 1 else lo_r.sqrt()))
            c_hi = max(hi_frac(x) for x in his)
            c_lo = min(lo_frac(x) for x in los)
            pw = "" if p == 1 else "^(1/2)"
            out[q] = {"c_lo": fmt.down(exact(c_lo), 8), "c_hi": fmt.up(exact(c_hi), 8),
                      "statement": f"c_lo <= (eta T){pw} {q}(T) <= c_hi for every T >= T0 = {T0}"}
            # Limits T -> infinity on the last shell: (eta T)^p q -> [psi_lo (eta/(2 b))^p, psi_hi (eta/(2 a))^p].
            last = shells[-1]
            lo_r, up_r = exact(eta / (2 * last.b)), exact(eta / (2 * last.a))
            k = (lambda r: r) if p == 1 else (lambda r: r.sqrt())
            psi_last = _psi(q, last, s_coef, vnorm)
            lim_lo, lim_hi = psi_last[0] * k(lo_r), psi_last[1] * k(up_r)
            asym[q] = {"liminf_ge": fmt.down(lim_lo, 12), "limsup_le": fmt.up(lim_hi, 12)}
    positive = all(Fraction(v["c_lo"]) > 0 for v in out.values())
    ob = Obligation("positive-lower-constants", "c_lo > 0 for all three quantities (the Theta lower bounds)", "arb",
                    positive, "; ".join(f"{q}: [{v['c_lo']}, {v['c_hi']}]" for q, v in out.items()))
    return out, asym, ob


def _psi(q: str, sh, s_coef, vnorm) -> tuple:
    """Bounds of q / u^(2p) on a shell: L2 for the loss, sqrt(ND/(K(D-K))) for s_err, |h + eps u^2| ||V*|| for w_err."""
    if q == "excess_loss":
        return exact(sh.L2[0]), exact(sh.L2[1])
    if q == "s_err":
        return s_coef, s_coef
    return vnorm * exact(max(sh.W[0], Fraction(0))), vnorm * exact(sh.W[1])


def recheck_command(cert) -> str:
    """The command that rebuilds and re-checks ``cert`` with the same knobs."""
    k = getattr(cert, "knobs", {})
    knobs = [] if "u0" not in k else [
        "--u0", str(k["u0"]), "--C", str(k["C"]), "--shells", str(k["shells"]), "--shell-ratio", str(k["ratio"]),
        "--subdivisions", f"{k['n_u']},{k['n_eps']}", "--bits", str(k["bits"])]
    return setting_command("certify", cert.setting, *knobs, "--json")
