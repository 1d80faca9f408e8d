"""The hypotheses the paper's statements and the toolkit's proofs assume, each defined once, as an object.

A :class:`Hypothesis` carries its text (what the report prints), its predicate on a
:class:`~verify.model.setting.Setting`, what it implies, how the fuzzer draws settings inside it
(:class:`Restriction`), and a nearby setting that breaks it (``violate``, used to test that a proved scope
excludes every regime outside one of its assumptions). Claims list hypotheses; a proof step declares the
hypotheses it uses (``verify.evidence.Scope.assumes``); the fuzzer draws from ``restrict``; the report
prints ``text``. Nothing else writes a hypothesis down.

Example::

    >>> from verify.model import make_setting
    >>> s = make_setting(D=8, K=2, preset="cnn", eta="1/4")
    >>> hypothesis("eta-stable").holds(s), within(s, ("eta-small", "0<K<D"))
    (True, (True, ''))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

from ..errors import InvalidParameter
from .sigmas import parse_sigma, sigma_examples


def step_x(s) -> Fraction:
    """x = eta_V c_L v N: the one combination every step-size condition of the W_X block is stated in (the
    W_X-block curvature is c_L v ||S||_F^2 ||V*||^2 with ||S||_F^2 between N/D and N/K)."""
    return s.eta_v * s.loss_scale * s.law.var * s.N


@dataclass(frozen=True)
class Restriction:
    """How the fuzzer (verify.fuzz.strategies) draws settings inside a hypothesis. A closed vocabulary, so the
    strategy reads fields, never hypothesis ids:

    ``choices``: make_setting keyword -> the values allowed (e.g. ``{"init": ("zero",)}``);
    ``sigma``: a predicate on a Sigma (which families are allowed);
    ``k_min``: smallest K; ``k_interior``: K < D; ``k_equals_d`` / ``k_zero``: the edge regimes;
    ``x_max`` / ``x_min``: (K, D) -> (largest / smallest x = eta c_L v N, strict?); ``one_eta``: eta_KQ = eta_V;
    ``wp_zero``: W_P frozen unless sigma is odd; ``m_one_unless_linear``: M = 1 unless sigma is linear.
    """

    choices: dict = field(default_factory=dict)
    sigma: Callable | None = None
    k_min: int = 0
    k_interior: bool = False
    k_equals_d: bool = False
    k_zero: bool = False
    x_max: Callable | None = None
    x_min: Callable | None = None
    one_eta: bool = False
    wp_zero: bool = False
    m_one_unless_linear: bool = False


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis (module docstring). ``holds`` is None for a run-level hypothesis (checked on the run,
    e.g. "GD is a descent run"); ``violate`` is None when the setting's validation already enforces it."""

    id: str
    text: str
    holds: Callable | None
    implies: tuple = ()
    restrict: Restriction = Restriction()
    violate: Callable | None = None
    run_level: bool = False
    pins: tuple = ()        # (convention keyword, value) this hypothesis fixes: the reference convention's choice

    def __repr__(self) -> str:
        return f"Hypothesis({self.id!r})"


HYPOTHESES: dict[str, Hypothesis] = {}


def _define(id: str, text: str, holds, *, implies=(), restrict=Restriction(), violate=None, run_level=False,
            pins=None):
    if id in HYPOTHESES:
        raise AssertionError(f"hypothesis {id!r} defined twice")
    HYPOTHESES[id] = Hypothesis(id, text, holds, tuple(implies), restrict, violate, run_level,
                                tuple((pins or {}).items()))


def convention_hypothesis(key: str, value) -> Hypothesis:
    """The hypothesis "the convention keyword ``key`` is ``value``" (the run's convention replacing a reference
    one), defined once per (key, value) on first use."""
    hid = f"convention:{key}={value}"
    if hid not in HYPOTHESES:
        if key == "wp_trainable":
            holds, text = (lambda s: s.wp_trainable is bool(value)), ("W_P trainable" if value else "W_P frozen")
        elif key == "eta_kq_ratio":
            holds, text = (lambda s: s.eta_kq == Fraction(value) * s.eta_v), f"eta_KQ = {value} eta_V"
        else:
            holds, text = (lambda s: str(s.kwargs().get(key, getattr(s, key, None))) == str(value)
                           or (key == "sigma" and s.sigma.spec() == str(value))), f"{key} = {value}"
        HYPOTHESES[hid] = Hypothesis(hid, text + " (the run's convention)", holds)
    return HYPOTHESES[hid]


def _at_x(s, x: Fraction):
    """``s`` with the step size that puts x = eta_V c_L v N at ``x`` (eta_KQ moved with it when they were tied)."""
    eta = x / (s.loss_scale * s.law.var * s.N)
    return s.with_(eta=eta, eta_kq=eta if s.eta_kq == s.eta_v else s.eta_kq)


def small_step_bound(K: int, D: int) -> Fraction:
    """The largest x = eta_V c_L v N for which 1 - x ||s||^2 >= 0 for every two-valued column of S: min(K, D - K),
    or K when K = D (||s||^2 <= max(1/K, 1/(D - K)); verify.derive.stability)."""
    return Fraction(K if K == D else min(K, D - K))


def _small_step(s) -> bool:
    return s.K > 0 and step_x(s) <= small_step_bound(s.K, s.D)


def _weighted(s):
    """``s`` with S* weighted 2/(K+1), 1/(K+1), ... on each support (K >= 2; a K = 1 support is widened to 2)."""
    if s.K < 2:
        s = s.with_(preset="sts", K=2)
    w = [Fraction(2, s.K + 1)] + [Fraction(1, s.K + 1)] * (s.K - 1)
    return s.with_(sstar_weights=[w] * s.N)


def _on_digits(s):
    """``s`` on sklearn's 8 x 8 digits (D = d = 8; a cnn teacher with K = 2 where the old teacher does not fit)."""
    kw = {"data": "digits", "D": 8, "d": 8, "law": "gaussian", "law_mean": "0", "law_var": "1"}
    if s.preset is None or s.K > 8 or (s.preset == "cnn" and s.K and 8 % s.K):
        kw |= {"preset": "cnn", "K": 2}
    if s.vstar_source == "explicit":
        kw["vstar_norm"] = "1"
    return s.with_(**kw)


def _linear(sigma) -> bool:
    return sigma.linear


def _odd(sigma) -> bool:
    return sigma.odd


# ---- initialisation, data, teacher ---------------------------------------------------------------------
_define("zero-init", "zero initialisation (W_V = W_KQ = 0)", lambda s: s.init == "zero",
        restrict=Restriction(choices={"init": ("zero",)}), violate=lambda s: s.with_(init="random", init_scale="1/10"), pins={'init': 'zero'})
_define("centred", "centred entries (law mean 0)", lambda s: s.law.mean == 0,
        restrict=Restriction(choices={"law_mean": ("0",)}),
        violate=lambda s: s.with_(law_mean="1/2"), pins={'law_mean': '0'})
_define("gaussian", "Gaussian entries", lambda s: s.law.gaussian, implies=("gaussian-or-linear",),
        restrict=Restriction(choices={"law": ("gaussian",)}),
        violate=lambda s: s.with_(law="rademacher"), pins={'law': 'gaussian'})
_define("iid-entries", "i.i.d. entries (data = gaussian: no correlation across pixels or tokens)", lambda s: s.data.iid,
        violate=lambda s: _on_digits(s), pins={'data': 'gaussian'})
_define("gaussian-or-linear", "Gaussian entries, or sigma linear (sigma's Gaussian kernel; a linear sigma sees only "
        "the first two moments of the law)", lambda s: s.law.gaussian or s.sigma.any_law)
_define("unit-variance", "entry variance v = 1", lambda s: s.law.var == 1,
        restrict=Restriction(choices={"law_var": ("1",)}),
        violate=lambda s: s.with_(law_var="4"), pins={'law_var': '1'})
_define("noise-free", "no label noise", lambda s: s.noise_sd == 0,
        restrict=Restriction(choices={"noise_sd": ("0",)}),
        violate=lambda s: s.with_(noise_sd="1/10"), pins={'noise_sd': '0'})
_define("uniform-S*", "S* with uniform weights 1/K on its support", lambda s: s.sstar_weights is None,
        violate=_weighted)
_define("K>0", "K >= 1 (S* != 0: a member of the teacher class)", lambda s: s.K > 0,
        restrict=Restriction(k_min=1), violate=lambda s: s.with_(preset="sts", K=0))
_define("0<K<D", "0 < K < D", lambda s: 0 < s.K < s.D, implies=("K>0",),
        restrict=Restriction(k_min=1, k_interior=True), violate=lambda s: s.with_(preset="sts", K=s.D))
_define("K=D", "K = D (S* is average pooling over all tokens)", lambda s: s.K == s.D, implies=("K>0",),
        restrict=Restriction(k_equals_d=True), violate=lambda s: s.with_(preset="sts", K=s.D - 1))
_define("K=0", "K = 0 (S* = 0)", lambda s: s.K == 0,
        restrict=Restriction(k_zero=True), violate=lambda s: s.with_(preset="sts", K=1))

# ---- sigma ------------------------------------------------------------------------------------------------
_define("identity", "sigma = identity", lambda s: s.sigma.is_identity, implies=("odd", "linear"),
        restrict=Restriction(sigma=lambda sg: sg.is_identity), violate=lambda s: s.with_(sigma="erf"), pins={'sigma': 'identity'})
_define("linear", "sigma linear", lambda s: s.sigma.linear, implies=("gaussian-or-linear",),
        restrict=Restriction(sigma=_linear),
        violate=lambda s: s.with_(sigma="erf"))
_define("odd", "sigma odd (sigma(-x) = -sigma(x))", lambda s: s.sigma.odd, restrict=Restriction(sigma=_odd),
        violate=lambda s: s.with_(sigma="poly:0,1,1/2"))
_define("wp-zero", "W_P = 0 (sigma odd, or W_P frozen)", lambda s: s.sigma.odd or not s.wp_trainable,
        restrict=Restriction(wp_zero=True), violate=lambda s: s.with_(sigma="poly:0,1,1/2"))
_define("linear-or-M1", "sigma linear, or M = 1", lambda s: s.sigma.linear or s.M == 1,
        restrict=Restriction(m_one_unless_linear=True),
        violate=lambda s: s.with_(sigma="erf", M=2))

# ---- positions and attention ------------------------------------------------------------------------------
_define("orthogonal-P", "P^T P = lambda I", lambda s: s.p_structure == "orthogonal",
        restrict=Restriction(choices={"p_kind": ("identity", "permutation")}),
        violate=lambda s: s.with_(p_kind="sinusoidal", p_structure="general"), pins={'p_structure': 'orthogonal'})
_define("unit-lambda", "lambda = 1 (P^T P = I)", lambda s: s.p_lambda == 1, implies=(),
        restrict=Restriction(choices={"p_lambda": ("1",)}), violate=lambda s: s.with_(p_lambda="4"), pins={'p_lambda': '1'})
_define("unit-beta", "logit temperature beta = 1", lambda s: s.beta == 1,
        restrict=Restriction(choices={"beta": ("1",)}), violate=lambda s: s.with_(beta="2"), pins={'beta': '1'})
_define("distinct-queries", "distinct query positions q(j)", lambda s: len(set(s.query)) == len(s.query))

# ---- loss and step sizes ------------------------------------------------------------------------------------
_define("sum-loss", "summed loss (c_L = 1)", lambda s: s.loss == "sum",
        restrict=Restriction(choices={"loss": ("sum",)}), violate=lambda s: s.with_(loss="mean"), pins={'loss': 'sum'})
_define("one-eta", "eta_V = eta_KQ = eta", lambda s: s.eta_v == s.eta_kq, restrict=Restriction(one_eta=True),
        violate=lambda s: s.with_(eta_kq=2 * s.eta_v), pins={'eta_kq_ratio': '1'})
_define("eta-stable", "eta_V < 2K/(c_L v N) (W_X-block stability)", lambda s: step_x(s) < 2 * s.K, implies=("K>0",),
        restrict=Restriction(k_min=1, x_max=lambda K, D: (Fraction(2 * K), True)),
        violate=lambda s: _at_x(s, Fraction(2 * s.K)))
_define("eta-le-K", "eta_V c_L v N <= K", lambda s: step_x(s) <= s.K, implies=("eta-stable",),
        restrict=Restriction(x_max=lambda K, D: (Fraction(K), False)),
        violate=lambda s: _at_x(s, Fraction(3 * s.K, 2)))
_define("eta-small-step", "eta_V c_L v N <= min(K, D - K), or <= K when K = D (1 - eta_V c_L v ||S||_F^2 >= 0 for "
        "two-valued columns)", _small_step, implies=("eta-stable", "K>0"),
        restrict=Restriction(k_min=1, x_max=lambda K, D: (small_step_bound(K, D), False)),
        violate=lambda s: _at_x(s, Fraction(3, 2) * small_step_bound(s.K, s.D)))
_define("eta-large-step", "min(K, D - K) < eta_V c_L v N < 2K (K < eta_V c_L v N < 2K when K = D)",
        lambda s: step_x(s) < 2 * s.K and not _small_step(s), implies=("eta-stable", "K>0"),
        restrict=Restriction(k_min=1, x_min=lambda K, D: (small_step_bound(K, D), True),
                             x_max=lambda K, D: (Fraction(2 * K), True)),
        violate=lambda s: _at_x(s, small_step_bound(s.K, s.D) / 2))
_define("eta-small", "eta_V c_L v N <= 1", lambda s: step_x(s) <= 1,
        restrict=Restriction(x_max=lambda K, D: (Fraction(1), False)),
        violate=lambda s: _at_x(s, Fraction(3, 2)))
_define("eta-geometric", "0 < eta_V c_L v N < 2D (the K = D recursion contracts)", lambda s: step_x(s) < 2 * s.D,
        restrict=Restriction(x_max=lambda K, D: (Fraction(2 * D), True)),
        violate=lambda s: _at_x(s, Fraction(2 * s.D)))

# ---- run-level (checked on the run, or on what the run is compared with) ------------------------------------
_define("descent", "sigma = identity, or GD is a descent run: L(t+1) <= L(t) along it (checked on the run; Lemma C.2's "
        "step-size conditions are derived for sigma = identity only)", None, run_level=True)
_define("asymptotic-phase", "the run reaches the asymptotic phase: T >= 16 and T/16 >= T* (checked per run)", None,
        run_level=True)
_define("slow-manifold", "the slow-manifold expansion gives the leading terms (a formal expansion: alpha tracks "
        "alpha*(u), Delta u = -c u^3 + O(u^4); checked against GD, not proved)", None, run_level=True)
_define("test-law-finite-variance", "test entries i.i.d. with finite mean and variance (the OOD law)", None,
        run_level=True)

# the moment rule E[X_ab X_ce] = v 1{a = c, b = e} of centred i.i.d. entries, on which the matrix form of the loss
# (verify.derive.loss) and every step derived from it rest
IID_MOMENTS = ("iid-entries", "centred")

# what makes a long float64 run of the reduced recursion exact and safe: the reduced recursion applies
# (Setting.reducible) and GD converges in the W_X block (so float64 does not overflow)
LONG_RUN = ("zero-init", "centred", "orthogonal-P", "wp-zero", "uniform-S*", "eta-stable")

# the reference convention of docs/setting.md, as the hypotheses it consists of
REFERENCE = ("sum-loss", "unit-variance", "unit-lambda", "unit-beta", "one-eta", "noise-free", "iid-entries", "gaussian",
             "centred", "orthogonal-P", "zero-init", "uniform-S*")


def hypothesis(id: str) -> Hypothesis:
    """The hypothesis ``id``; an unknown id is an error naming the known ones."""
    if isinstance(id, Hypothesis):
        return id
    if id not in HYPOTHESES:
        raise InvalidParameter("hypothesis", id, f"must be one of {', '.join(HYPOTHESES)}")
    return HYPOTHESES[id]


def hypotheses(ids) -> tuple[Hypothesis, ...]:
    """Hypothesis objects for ids (or objects), in order, without repeats."""
    out = []
    for h in ids:
        h = hypothesis(h)
        if h not in out:
            out.append(h)
    return tuple(out)


def closure(ids) -> frozenset[str]:
    """Every hypothesis id implied by ``ids`` (including themselves)."""
    seen, todo = set(), [hypothesis(i).id for i in ids]
    while todo:
        h = todo.pop()
        if h not in seen:
            seen.add(h)
            todo.extend(HYPOTHESES[h].implies)
    return frozenset(seen)


def _tightest(bounds, upper: bool):
    """The tightest of (value, strict) bounds: the least (upper) or greatest (lower) value; strict wins a tie."""
    if not bounds:
        return None
    best = min if upper else max
    v = best(b[0] for b in bounds)
    return v, any(b[1] for b in bounds if b[0] == v)


def _all(preds):
    return None if not preds else (lambda sg: all(p(sg) for p in preds))


def restriction(ids) -> Restriction:
    """The one :class:`Restriction` that draws inside every hypothesis of ``ids`` and every hypothesis they imply:
    the allowed choices intersected, the sigma predicates and step-size bounds combined (the tightest wins), the
    K and eta conditions joined."""
    rs = [HYPOTHESES[h].restrict for h in sorted(closure(ids))]
    choices: dict = {}
    for r in rs:
        for k, vals in r.choices.items():
            choices[k] = tuple(v for v in choices[k] if v in vals) if k in choices else tuple(vals)
    ups = [r.x_max for r in rs if r.x_max is not None]
    los = [r.x_min for r in rs if r.x_min is not None]
    flags = {f: any(getattr(r, f) for r in rs) for f in ("k_interior", "k_equals_d", "k_zero", "one_eta", "wp_zero",
                                                           "m_one_unless_linear")}
    return Restriction(choices=choices, sigma=_all([r.sigma for r in rs if r.sigma is not None]),
                       k_min=max([r.k_min for r in rs], default=0),
                       x_max=(lambda K, D: _tightest([f(K, D) for f in ups], True)) if ups else None,
                       x_min=(lambda K, D: _tightest([f(K, D) for f in los], False)) if los else None, **flags)


def admitted_sigmas(ids) -> tuple[str, ...]:
    """The registered sigma families' representatives (verify.model.sigmas.sigma_examples, in registry order) that
    the hypotheses ``ids`` admit: those every sigma restriction of their closure accepts. A claim's sigma list is
    this, so a newly registered family is tested by every claim whose hypotheses admit it."""
    test = restriction(ids).sigma
    return tuple(spec for spec in sigma_examples() if test is None or test(parse_sigma(spec)))


def sigmas_text(specs, ids) -> str:
    """The sigma list ``specs`` in a statement's prose under the hypotheses ``ids``: each sigma's readable name
    (verify.model.sigmas.Sigma.readable) with what those hypotheses require of it beyond the setting, e.g.
    ``{identity, erf, relu with W_P frozen}`` (W_P = 0 asked, sigma not odd) or ``erf with M = 1``."""
    r = restriction(ids)
    out = []
    for spec in specs:
        sig = parse_sigma(spec)
        notes = (["W_P frozen"] if r.wp_zero and not sig.odd else []) + (
            ["M = 1"] if r.m_one_unless_linear and not sig.linear else [])
        out.append(sig.readable() + (" with " + " and ".join(notes) if notes else ""))
    return "{" + ", ".join(out) + "}"


def within(s, ids) -> tuple[bool, str]:
    """Whether setting ``s`` satisfies the setting-level hypotheses ``ids``, and the unmet ones' texts."""
    unmet = [h.text for h in hypotheses(ids) if h.holds is not None and not h.holds(s)]
    return not unmet, "; ".join(unmet)


__all__ = ["admitted_sigmas", "sigmas_text", "Hypothesis", "Restriction", "HYPOTHESES", "REFERENCE", "LONG_RUN", "IID_MOMENTS", "hypothesis", "hypotheses", "closure",
           "within", "restriction", "step_x", "small_step_bound", "convention_hypothesis"]
