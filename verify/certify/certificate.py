"""All-time certificates: prefix + trapping region + comparison lemma -> bounds at every T.

A :class:`Certificate` proves, for one regime (sigma = identity, 0 < K < D) and every T >= 0,
lower and upper bounds on L(T) - L_opt, ||S(T) - S*||_F and ||W_X(T) - V*||_F:

1. prefix: the reduced map in Arb from zero initialisation (verify.certify.prefix) to the first
   checkpoint T0 whose state ball lies inside R (for T <= T0 the bounds are the Arb balls);
2. region: R = {0 < u <= u0, |alpha - alpha*(u)| <= C u^3} is mapped into itself (verify.certify.region);
3. comparison: on R, (u - u')/u^3 in [a_j, b_j] on shells u <= u0 r^j, so 1/u(T)^2 lies in an
   explicit interval for every T >= T0 (verify.certify.comparison); the observables are enclosed
   over R as functions of u (verify.certify.coordinates, verify.certify.bounds).

The prefix iterates the reduced 2-dimensional map, which is the full GD recursion by the reduction proved
in verify.derive.reduction_proof (symbolic dimensions, any per-entry kernel; sigma = identity in every dimension):
the certificate trusts that proof, and says so (:data:`TRUSTS`). Every step is an obligation; if one fails,
:func:`certify` raises :class:`CertificateFailed` naming it and returns no weaker bound. K = 0 and K = D are
certified exactly by closed forms (:mod:`verify.certify.exact`); eta >= 2K/(c_L v N) (no trapping region),
regimes outside the exact 2-dimensional reduction, and regimes whose prefix cannot reach the region within
--max-prefix are refused with :class:`~verify.errors.InvalidParameter` before any long work.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from ..derive.invariants import prefactors_of
from ..engines.arb import MAX_BITS, MIN_BITS
from ..errors import InvalidParameter
from ..model.flags import setting_command
from ..model.numbers import exact as exact_number, frac_str
from ..model.precision import arb_precision
from ..model.setting import Setting
from ..model.validation import check_int
from .arbfun import exact, exprel_ball, hi_frac, lo_frac, widened
from .bounds import ObservablesNotPositive, bounds_json, constants, normalised_limits, tail_bounds
from .comparison import LEMMA, lemma_obligations, schedule
from .coordinates import K_EXP, PARAM_NAMES, c_exact, param_values, slow_coordinates
from .methods import method_for
from .formulas import arb_functions
from .obligations import CertificateFailed, Obligation, raise_first_failure
from .prefix import SNAPSHOT_EVERY, PrefixState
from .region import Profile, RegionCheck, check_region, exprel_obligation
from . import fmt
from .certifiable import check_certifiable  # noqa: F401  (re-exported: the regimes the method covers)

# Shells u <= u0 r^j with r = 3/4 (r = 1/2 is the dyadic u0 2^-j): on each shell the decay ratio Q varies
# by about (1 - r) u_j c, so r = 3/4 halves the band of r = 1/2 at the same cost (120 shells reach u0 10^-15).
DEFAULTS = {"bits": 128, "shells": 120, "ratio": Fraction(3, 4), "n_u": 4, "n_eps": 2, "max_depth": 6,
            "max_prefix": 2_000_000, "check_every": 16}
C_MULTIPLES = tuple(2**k for k in range(1, 14))
U0_CAP = Fraction(1, 4)
TIGHT = 2
SLABS = 64       # prefix_steps_needed samples Q at SLABS + 1 points of [u0, u(0)]
TRUSTS = {"statement": "the prefix iterates the reduced map (alpha, delta), which is exact GD of the full model "
                       "from zero initialisation (W_X = alpha V*, W_P = 0, two-valued columns of S, for every t)",
          "proof": "verify.derive.reduction_proof.prove_reduction (block method in symbolic M, d, D, N, K for any "
                   "per-entry kernel; sigma = identity in every dimension by matrix calculus; explicit sizes as a "
                   "second route); `verify derive --json` prints its obligations",
          "scope": "all dimensions, sigma in {identity}, centred entry law, P^T P = lambda I, zero initialisation, "
                   "uniform S* weights 1/K (the regimes check_certifiable admits)"}


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
    snapshots: list = field(default_factory=list, repr=False)
    kind: str = "slow-manifold"

    @property
    def invariants(self) -> tuple:
        return param_values(self.setting)

    @property
    def c(self) -> Fraction:
        return c_exact(self.invariants)

    # ----- bounds ------------------------------------------------------------------------------
    def bounds(self, T: int) -> dict:
        """Arb balls {q: (lo, hi)} enclosing each quantity after T exact GD steps, and the route."""
        T = check_int("at", T, 0)
        if T <= self.T0:
            return self._prefix_bounds(T) | {"route": "prefix (Arb balls)"}
        try:
            out = tail_bounds(self.shells, T - self.T0, self.invariants, prefactors_of(self.setting),
                              self.region.profile, self.bits)
        except ObservablesNotPositive as exc:
            raise CertificateFailed(Obligation("observables-positive", "Lt > 0 and h + eps u^2 > 0 on the "
                                               "u-interval", "arb", False, str(exc))) from None
        return out | {"route": "comparison lemma on the trapping region"}

    def _prefix_bounds(self, T: int) -> dict:
        k = max(i for i, snap in enumerate(self.snapshots) if snap["step"] <= T)
        P = self.invariants
        with arb_precision(self.bits):
            st = PrefixState.restore(P, self.snapshots[k])
            pc, pb, dp = st.balls()
            while st.step_count < T:
                st.step(pc, pb, dp)
            obs = st.observables(prefactors_of(self.setting))
        return {q: (v, v) for q, v in obs.items()}

    def bounds_json(self, T: int, digits: int | None = None) -> dict:
        """{"T": T, q: [lo, hi] (decimal strings, lo rounded down, hi rounded up), "route": ...}."""
        b = self.bounds(T)
        return bounds_json(b, T, b["route"], self.bits, digits)

    def normalised_limits(self) -> dict:
        """lim q(T)/leading_q(T) as exact intervals (verify.certify.bounds.normalised_limits)."""
        return normalised_limits(self.shells[-1], self.c)

    # ----- the certificate as data ------------------------------------------------------------
    def as_dict(self) -> dict:
        sc = slow_coordinates()
        R_hull = self.region.shell_bounds(0)          # the normalised decay on the whole region
        return {
            "kind": self.kind,
            "statement": "for every T >= 0 the exact GD iterate of this regime satisfies the printed bounds; for "
                         "T >= T0: c_lo <= (eta T)^p q(T) <= c_hi with p = 1 for L - L_opt and p = 1/2 for "
                         "||S - S*||_F and ||W_X - V*||_F (eta = --eta)",
            "regime": self.setting.config(),
            "invariants": dict(zip(PARAM_NAMES, map(frac_str, self.invariants))),
            "trusts": TRUSTS,
            "bits": self.bits,
            "T0": self.T0,
            "region": {"definition": f"R = {{0 < u <= u0, |alpha - alpha*(u)| <= C u^{K_EXP}}}",
                       "u0": frac_str(self.region.u0), "C": frac_str(self.region.C), "k": K_EXP,
                       "u": sp.sstr(sc.u_of_delta), "alpha_star": sp.sstr(sc.alpha_star), "check": self.region.summary()},
            "a": frac_str(self.c * R_hull["a"]), "b": frac_str(self.c * R_hull["b"]),
            "a_b_meaning": "a <= (u - u')/u^3 <= b on all of R; per shell: shells[j].a_j, b_j",
            "cubic_coefficient_c": frac_str(self.c),
            "prefix_end": self.prefix_end,
            "z_at_T0": [frac_str(self.z0[0]), frac_str(self.z0[1])],
            "lemma": LEMMA,
            "shells": [sh.as_dict() for sh in self.shells],
            "constants": self.constants,
            "asymptotic": self.asymptotic,
            "normalised_limits": {q: [fmt_down(v[0]), fmt_up(v[1])] for q, v in self.normalised_limits().items()},
            "knobs": self.knobs,
            "obligations": [o.as_dict() for o in self.obligations],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "recheck": recheck_command(self),
        }


def fmt_down(q: Fraction, digits: int = 12) -> str:
    with arb_precision(256):
        return fmt.down(exact(q), digits)


def fmt_up(q: Fraction, digits: int = 12) -> str:
    with arb_precision(256):
        return fmt.up(exact(q), digits)


def _rho0(P: tuple) -> Fraction:
    """rho at u = 0 (the attractor): 1 - x."""
    return 1 - P[1]


def _prefix_end(st: PrefixState, dp) -> dict:
    """The prefix's end as the certificate states it: alpha, delta (the box of every member) and the region's
    u, eps enclosures, each an exact interval widened by arbfun.STATED_MARGIN (None where not finite)."""
    A, Dl = st.member_box(dp)
    U, Eps = st.region_coordinates()
    out = {}
    for k, b in (("alpha", A), ("delta", Dl), ("u", U), ("eps", Eps)):
        out[k] = widened(lo_frac(b), hi_frac(b)) if b.is_finite() else None
    return out


def _maybe_in_region(st: PrefixState, u0: Fraction, C) -> bool:
    """A quick test (balls only) before the stated end is formed: u and |eps| below the region's bounds."""
    U, Eps = st.region_coordinates()
    if not (U.is_finite() and Eps.is_finite() and U < exact(u0) and U > 0):
        return False
    return abs(Eps) < exact(_least_C(C, lo_frac(U), hi_frac(U)))


def _least_C(C, lo: Fraction, hi: Fraction) -> Fraction:
    """C(u) on [lo, hi] at its least (C: one value or a region.Profile)."""
    return C.least(lo, hi) if isinstance(C, Profile) else C


def _in_region(end: dict, u0: Fraction, C) -> bool:
    u, e = end["u"], end["eps"]
    if u is None or e is None or not (0 < u[0] and u[1] <= u0):
        return False
    bound = _least_C(C, u[0], u[1])
    return -bound <= e[0] and e[1] <= bound


def _prefix_obligation(ok: bool, detail: str) -> Obligation:
    return Obligation("prefix-in-region", "the prefix's end ball lies in R (for every member of the box)", "arb", ok,
                      detail)


def run_prefix(P: tuple, bits: int, u0: Fraction, C: Fraction, *, max_prefix: int, check_every: int,
               T0: int | None = None, snapshots: bool = True):
    """Certified steps from zero until the state ball (of every member of the invariants' box ``P``) lies in R,
    checked every ``check_every`` steps, or exactly ``T0`` steps. Returns (T0, snapshots, end dict, z0 range,
    obligation)."""
    st = PrefixState(P)
    snaps = [st.snapshot()] if snapshots else []
    limit = max_prefix if T0 is None else T0
    with arb_precision(bits):
        pc, pb, dp = st.balls()
        end = None
        try:
            while True:
                due = st.step_count == T0 if T0 is not None else st.step_count % check_every == 0
                if (due and st.step_count > 0) or st.step_count >= limit:
                    last = T0 is not None or st.step_count >= limit
                    if last or _maybe_in_region(st, u0, C):
                        end = _prefix_end(st, dp)
                        if last or _in_region(end, u0, C):
                            break
                st.step(pc, pb, dp)
                if snapshots and st.step_count % SNAPSHOT_EVERY == 0:
                    snaps.append(st.snapshot())
        except ArithmeticError as exc:
            return st.step_count, snaps, {"step": st.step_count}, None, _prefix_obligation(
                False, f"{exc} before entering R; raise --bits")
    steps = st.step_count
    if snapshots and snaps[-1]["step"] != steps:
        snaps.append(st.snapshot())
    desc = {"step": steps, **{k: None if v is None else [str(v[0]), str(v[1])] for k, v in end.items()},
            "centre": {k: str(v) for k, v in st.snapshot().items()}}
    u, e = end["u"], end["eps"]
    if not _in_region(end, u0, C):
        why = (f"u in [{float(u[0]):.6g}, {float(u[1]):.6g}] (u0 = {float(u0):.6g}), eps in [{float(e[0]):.4g}, "
               f"{float(e[1]):.4g}] (C = {float(_least_C(C, u[0], u[1])):.6g} there)" if u and e else
               "an unbounded enclosure")
        stop = f"the prefix was stopped at T0 = {T0}" if T0 is not None else f"no checkpoint up to {limit} steps"
        return steps, snaps, desc, None, _prefix_obligation(False, f"{stop}: at step {steps}: {why}")
    z0 = (1 / u[1] ** 2, 1 / u[0] ** 2)
    return steps, snaps, desc, z0, _prefix_obligation(
        True, f"T0 = {steps}: u in [{float(u[0]):.6g}, {float(u[1]):.6g}] <= u0, eps in [{float(e[0]):.4g}, "
              f"{float(e[1]):.4g}], |eps| <= C = {float(_least_C(C, u[0], u[1])):.4g} there")


def choose_region(P: tuple, bits: int, u0: Fraction | None, C: Fraction | None, u_init: Fraction
                  ) -> tuple[Fraction, Fraction]:
    """Defaults for (u0, C), by coarse checks (6 shells, few boxes): C is the smallest power-of-two multiple
    of c/(1 - |rho(0)|) (the fixed point of eps at u = 0) for which R is invariant, and u0 the largest
    candidate (so the shortest prefix) whose outer shell is tight, b_0 <= TIGHT a_0 (a loose outer shell
    delays every shell entry, and the band with it), with the observables' ratios Lt and W positive on it
    (else a lower constant is 0); failing that, the largest invariant one with positive ratios."""
    base = c_exact(P) / (1 - abs(_rho0(P)))
    # u0 <= 1/4 by default: a larger u0 shortens the prefix but widens [a, b] on the outer shells (Q
    # depends on eps through eps u^2 (D - K)/K), and the prefix costs little at 1/4.
    u_start = min(u_init * Fraction(7, 8), U0_CAP)
    u0s = [u0] if u0 is not None else [_dyadic(u_start * Fraction(7, 8) ** k) for k in range(60)]
    Cs = [C] if C is not None else [base * m for m in C_MULTIPLES]
    fallback = None
    for u in u0s:
        if not 0 < u < 1:
            raise InvalidParameter("u0", str(u), "must satisfy 0 < u0 < 1 (off-support attention mass)")
        for c in Cs:
            rc = check_region(P, u, c, shells=6, n_u=4, n_eps=2, max_depth=1, bits=bits)
            if rc.ok:
                sb = rc.shell_bounds(0)
                positive = sb["Lt"][0] > 0 and sb["W"][0] > 0      # else a lower constant would be 0
                if (positive and sb["b"] <= TIGHT * sb["a"]) or u0 is not None:
                    return u, c
                fallback = fallback or (positive and (u, c))
                break
    if fallback:
        return fallback
    return (u0s[-1] if u0 is None else u0), (Cs[-1] if C is None else C)


def prefix_steps_needed(P: tuple, u_init: Fraction, u0: Fraction, bits: int = 64) -> float:
    """An estimate of the prefix length: the steps the off-support mass needs to fall from u(0) to u0 along the
    slow manifold (eps = 0), where z = 1/u^2 grows by at most 2 q + 3 q^2/(1 - q)^2 per step (the lemma's
    one-step bound at u <= 1) and q = (u - u')/u^3 = c Q is at most its largest value at SLABS + 1 equally
    spaced points of [u0, u(0)] (an estimate: Q is smooth in u, and the transient off the manifold is short).
    Used to refuse, before any long work, a regime that cannot enter R within --max-prefix."""
    if u0 >= u_init:
        return 0.0
    fn, c = arb_functions(), c_exact(P)
    with arb_precision(bits):
        Pb, cb = tuple(exact(p) for p in P), exact(c)
        q_max = Fraction(0)
        for k in range(SLABS + 1):
            U = exact(u0 + (u_init - u0) * k / SLABS)
            G = fn.G0(U, exact(0), *Pb)[0]
            Q = fn.RQ(U, G, exprel_ball(cb * U * U * G), cb, *Pb)[1]
            if Q.is_finite():
                q_max = max(q_max, c * hi_frac(Q))
    if not 0 < q_max < 1:
        return 0.0
    per_step = 2 * q_max + 3 * q_max * q_max / (1 - q_max) ** 2
    return float((1 / u0**2 - 1 / u_init**2) / per_step)


def check_prefix_reachable(P: tuple, u_init: Fraction, u0: Fraction | None, max_prefix: int) -> None:
    """Refuse (naming --max-prefix) a regime whose prefix needs more than ``max_prefix`` steps by the estimate
    of :func:`prefix_steps_needed` at the largest u0 tried (a larger u0 needs fewer steps)."""
    top = u0 if u0 is not None else _dyadic(min(u_init * Fraction(7, 8), U0_CAP))
    need = prefix_steps_needed(P, u_init, top)
    if need > max_prefix:
        raise InvalidParameter("max_prefix", max_prefix, f"must be >= {need:.3g}: the prefix needs about that many "
                               f"steps to bring the off-support mass from u(0) = {frac_str(u_init)} to u0 = "
                               f"{frac_str(top)} (cubic coefficient c = {float(c_exact(P)):.3g}; a small ||V*||, "
                               "eta_KQ or lambda makes c small); raise --max-prefix or use a larger ||V*||")


def _dyadic(x: Fraction, bits: int = 10) -> Fraction:
    """x rounded down to a rational with a ``bits``-bit numerator over a power of two (short, exact)."""
    e = 0
    while x * 2**e < 2 ** (bits - 1):
        e += 1
    return Fraction(int(x * 2**e), 2**e)


def certify_knobs(bits=None, shells=None, ratio=None, n_u=None, n_eps=None, max_depth=None, max_prefix=None,
                  check_every=None) -> dict:
    """The knobs of :func:`certify` with defaults filled in, each checked (InvalidParameter names the flag)."""
    given = {"bits": bits, "shells": shells, "n_u": n_u, "n_eps": n_eps, "max_depth": max_depth,
             "max_prefix": max_prefix, "check_every": check_every}
    k = DEFAULTS | {name: v for name, v in given.items() if v is not None}
    k["bits"] = check_int("bits", k["bits"], MIN_BITS, MAX_BITS)
    k["shells"] = check_int("shells", k["shells"], 1, 2000)
    if ratio is not None:
        k["ratio"] = exact_number(ratio, "shell_ratio")
    if not 0 < k["ratio"] < 1:
        raise InvalidParameter("shell_ratio", str(k["ratio"]), "must satisfy 0 < ratio < 1 (u_j = u0 ratio^j)")
    for name, lo, hi, flag in (("n_u", 1, 4096, "subdivisions"), ("n_eps", 1, 4096, "subdivisions"),
                               ("max_depth", 0, 30, "max_depth"), ("max_prefix", 1, 10**9, "max_prefix"),
                               ("check_every", 1, 10**6, "check_every")):
        k[name] = check_int(flag, k[name], lo, hi)
    return k


def symbolic_obligations() -> list[Obligation]:
    """Every SymPy / SMT step a slow-manifold certificate needs (cached by code version)."""
    return list(slow_coordinates().obligations) + [exprel_obligation()] + list(lemma_obligations())


def certify(s: Setting, *, bits: int | None = None, u0=None, C=None, shells: int | None = None, ratio=None,
            n_u: int | None = None, n_eps: int | None = None, max_depth: int | None = None,
            max_prefix: int | None = None, check_every: int | None = None, T0: int | None = None,
            region_boxes=None):
    """Build and check the all-time certificate of regime ``s`` (module docstring).

    Knobs (None = the default, found automatically where it says so): ``bits`` (Arb precision),
    ``u0`` and ``C`` (the region; auto), ``shells`` and ``ratio`` (nested shells u <= u0 ratio^j,
    j <= shells; ratio 1/2: the dyadic shells), ``n_u``, ``n_eps`` (subdivisions of each annulus),
    ``max_depth`` (bisections of a failing box), ``max_prefix`` and ``check_every`` (prefix length limit and
    membership checkpoints), ``T0`` (end the prefix exactly there instead), ``region_boxes`` (check this
    cover instead). Built by the first certificate method that applies (verify.certify.methods): a
    :class:`Certificate` for 0 < K < D, an exact certificate for K = 0 and K = D; raises
    :class:`CertificateFailed` when an obligation fails and InvalidParameter for refused regimes.
    """
    check_certifiable(s)
    knobs = certify_knobs(bits, shells, ratio, n_u, n_eps, max_depth, max_prefix, check_every)
    T0 = None if T0 is None else check_int("T0", T0, 1, 10**9)
    return method_for(s).build(s, knobs, u0=u0, C=C, T0=T0, region_boxes=region_boxes)


def build_certificate(s: Setting, knobs: dict, u0=None, C=None, T0: int | None = None, region_boxes=None):
    """The slow-manifold certificate of ``s`` (0 < K < D) with checked ``knobs`` (:func:`certify_knobs`): prefix,
    trapping region, comparison lemma (module docstring); the method verify.certify.slow_manifold builds with."""
    u0 = None if u0 is None else exact_number(u0, "u0")
    if u0 is not None and not 0 < u0 < 1:      # u is an attention mass off the support: 0 < u < 1
        raise InvalidParameter("u0", str(u0), "must satisfy 0 < u0 < 1 (off-support attention mass)")
    C = None if C is None else exact_number(C, "C")
    if C is not None and C <= 0:
        raise InvalidParameter("C", str(C), "must be > 0")
    bits, P, u_init = knobs["bits"], param_values(s), Fraction(s.D - s.K, s.D)
    secs, t = {}, time.perf_counter()
    obligations = symbolic_obligations()
    secs["symbolic"] = time.perf_counter() - t
    raise_first_failure(obligations)
    if T0 is None:
        check_prefix_reachable(P, u_init, u0, knobs["max_prefix"])
    t = time.perf_counter()
    u0, C = choose_region(P, bits, u0, C, u_init)
    rc = check_region(P, u0, C, shells=knobs["shells"], n_u=knobs["n_u"], n_eps=knobs["n_eps"],
                      max_depth=knobs["max_depth"], bits=bits, boxes=region_boxes, ratio=knobs["ratio"])
    secs["region"] = time.perf_counter() - t
    obligations += rc.obligations
    raise_first_failure(obligations)
    t = time.perf_counter()
    end, snaps, desc, z0, ob = run_prefix(P, bits, u0, rc.profile, max_prefix=knobs["max_prefix"],
                                          check_every=knobs["check_every"], T0=T0)
    secs["prefix"] = time.perf_counter() - t
    obligations.append(ob)
    raise_first_failure(obligations)
    t = time.perf_counter()
    shells_, sob = schedule(rc.hull, u0, knobs["shells"], z0, bits, knobs["ratio"], c_exact(P))
    obligations += sob
    raise_first_failure(obligations)
    consts, asym, cob = constants(shells_, end, s.eta_v, P, prefactors_of(s), bits)
    obligations.append(cob)
    raise_first_failure(obligations)
    secs["comparison"] = time.perf_counter() - t
    knobs |= {"u0": frac_str(u0), "C": frac_str(C), "ratio": frac_str(knobs["ratio"]),
              "T0": T0 if T0 is not None else "auto (first checkpoint in R)"}
    return Certificate(s, bits, end, rc, shells_, desc, z0, consts, asym, obligations, knobs, secs, snaps)


def recheck_command(cert) -> str:
    """The command that rebuilds and re-checks ``cert`` with the same knobs."""
    k = getattr(cert, "knobs", {})
    knobs = [] if "u0" not in k else [
        "--u0", str(k["u0"]), "--C", str(k["C"]), "--shells", str(k["shells"]), "--shell-ratio", str(k["ratio"]),
        "--subdivisions", f"{k['n_u']},{k['n_eps']}", "--bits", str(k["bits"])]
    return setting_command("certify", cert.setting, *knobs, "--json")
