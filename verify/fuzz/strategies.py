"""Hypothesis strategies over regimes: valid ones (inside a claim's hypotheses) and invalid ones.

A :class:`Regime` is the keyword arguments of :func:`verify.model.make_setting` (exact strings, so a
regime prints and replays exactly) plus a number of GD steps.

:func:`valid_regimes` draws every option of docs/setting.md: the four teachers with D up to 48 and K at its
edges (0, 1, D - 1, D), M <= 3, d <= 4, ||V*|| from 1/10 to 10, every sigma (an even polynomial too,
with W_P trainable or frozen), every entry law with mean != 0 and variance != 1, the summed and the
mean loss, P^T P = lambda I (identity, permutation) and sinusoidal P, eta_KQ != eta_V, zero and random
initialisation, label noise. The sigmas are every registered family's fuzz representatives
(verify.model.sigmas.sigma_examples), read at each draw, so a new family is fuzzed with no other edit. The step size is drawn through x = eta c_L v N, the quantity every
step-size condition is stated in: as a multiple of the anchors x = 2K (the W_X-block stability
threshold 2K/(c_L v N)) and x = 1 (the condition eta c_L v N <= 1 of the identity proofs), with the
multiples 99/100, 1, 101/100 drawn often, so both thresholds are hit from below and from above.

Given a claim's hypotheses (verify.model.hypotheses objects or ids) the draw stays inside them by reading
each one's ``restrict`` (verify.model.hypotheses.restriction combines them with what they imply): the allowed
choices, the sigma predicate, the K range, the bounds on x, one step size, W_P frozen unless sigma is odd, M = 1
unless sigma is linear. Nothing here names a hypothesis; what validation requires of a sigma (a Gaussian law,
centred entries, W_P frozen) is asked of make_setting itself. The runner still filters every regime with
``within(setting, hypotheses)``, so a claim is fuzzed inside its hypotheses and up to their boundaries, not
mostly outside them.

Horizons, about log-uniform: when the claim's check iterates the reduced recursion (``long_horizon``,
about 3 microseconds a step and row), half of the regimes are "long": drawn inside
verify.model.hypotheses.LONG_RUN as well (the reduced recursion exact, and x < 2K, below the W_X-block
threshold: GD converges, float64 does not overflow and no check falls back to mpmath at ~1 ms a step), and up to
``max_steps`` = 2*10^4 steps; every other regime gets up to ``full_max_steps`` = 300 (the full-matrix
engine costs 0.15-0.35 ms a step for D <= 48).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from hypothesis import strategies as st

from ..errors import InvalidParameter
from ..model import make_setting
from ..model.hypotheses import LONG_RUN, REFERENCE, hypotheses as as_hypotheses, restriction, step_x
from ..model.numbers import frac_str
from ..model.sigmas import parse_sigma, sigma_examples
from ..model.spec import BY_KEYWORD, BY_NAME, with_implied

MAX_D = 48
MAX_M = 3
MAX_SMALL_D = 4          # the feature dimension d
MAX_STEPS = 20_000       # reduced-recursion checks
FULL_MAX_STEPS = 300     # full-matrix-engine checks, and regimes the reduced recursion does not cover
LAWS = ("gaussian", "rademacher", "student-t:5", "gumbel", "exponential", "uniform")
LAW_MEANS = ("0", "1/2", "-1")
LAW_VARS = ("1", "1/4", "4")
LOSSES = BY_NAME["loss"].choices
P_KINDS = BY_NAME["p_kind"].choices
P_LAMBDAS = ("1", "4", "1/4")        # squares of rationals: identity / permutation P need sqrt(lambda)
INITS = BY_NAME["init"].choices
INIT_SCALES = ("1/10", "1/100", "1/2")
NOISE_SDS = ("0", "1/10", "1")
VSTAR_NORMS = ("1", "1/2", "2", "3", "1/10", "10")
ETA_KQ_RATIOS = ("1", "1/4", "1/2", "2", "4")
# Multiples of a step-size anchor: a grid n/20 (n = 1..60) and the edges of each threshold.
EDGE_MULTS = (Fraction(99, 100), Fraction(1), Fraction(101, 100), Fraction(999, 1000), Fraction(1001, 1000))
GRID_MULTS = tuple(Fraction(n, 20) for n in range(1, 61))


@dataclass(frozen=True)
class Regime:
    """make_setting keyword arguments (exact) and a number of GD steps."""

    kwargs: tuple = ()
    steps: int = 1
    broken: str = field(default="", compare=False)   # invalid regimes: the rule that is broken

    def as_dict(self) -> dict:
        return {"setting": dict(self.kwargs), "steps": self.steps} | ({"broken": self.broken} if self.broken else {})

    @classmethod
    def from_dict(cls, d: dict) -> "Regime":
        return cls(tuple(d["setting"].items()), int(d["steps"]), d.get("broken", ""))

    def setting(self):
        return make_setting(**dict(self.kwargs))

    def with_steps(self, steps: int) -> "Regime":
        return Regime(self.kwargs, steps, self.broken)

    def run_command(self) -> str:
        """The ``verify run`` command line of this regime (for a human replay)."""
        kw = dict(self.kwargs)
        parts = ["verify", "run"]
        for k, v in kw.items():
            f = BY_KEYWORD[k]                  # the field of a make_setting keyword: its flag (verify.model.spec)
            if f.kind == "flag":                # a switch: written when the keyword has the value it sets
                if v == (not f.negated):
                    parts.append(f.flag)
                continue
            parts += [f.flag, str(v)]
        if not self.broken and not self.setting().reducible()[0]:
            parts += ["--engine", "full"]    # the reduced recursion is not exact here (Setting.reducible)
        parts += ["--steps", str(self.steps), "--json"]
        return " ".join(shlex.quote(p) for p in parts)


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


LOG_RESOLUTION = 4096


def _log_int(draw, lo: int, hi: int, label: str) -> int:
    """An integer in [lo, hi] (lo >= 1), about log-uniform: one choice u in [0, LOG_RESOLUTION] mapped
    monotonically to lo (hi/lo)^(u/LOG_RESOLUTION), so shrinking u shrinks the integer towards lo."""
    if hi <= lo:
        return lo
    u = draw(st.integers(0, LOG_RESOLUTION), label=label)
    return min(hi, max(lo, int(lo * (hi / lo) ** (u / LOG_RESOLUTION))))


def _edge_biased(draw, values: list, edges: list, label: str):
    """One of ``values``, drawing from ``edges`` (a sub-list) half of the time; shrinks to values[0]."""
    edges = [v for v in edges if v in values]
    if edges and draw(st.booleans(), label=f"{label} at an edge"):
        return draw(_choice(tuple(edges)), label=label)
    return draw(_choice(tuple(values)), label=label)


def _choice(values: tuple):
    """st.sampled_from(values), built once per tuple of values and their types (strategy construction is not free;
    the types are part of the key because 1 == Fraction(1): an integer K must not come back as a Fraction)."""
    return _sampled(tuple(values), tuple(type(v) for v in values))


@lru_cache(maxsize=4096)
def _sampled(values: tuple, types: tuple):
    return st.sampled_from(values)


_MULTS = tuple(sorted(set(GRID_MULTS + EDGE_MULTS)))


def _inside(x, lo, hi) -> bool:
    """x within the (value, strict) bounds lo and hi (either may be None)."""
    return ((lo is None or x > lo[0] or (x == lo[0] and not lo[1]))
            and (hi is None or x < hi[0] or (x == hi[0] and not hi[1])))


@lru_cache(maxsize=None)
def _allowed_mults(anchor, lo, hi) -> tuple:
    """Multiples m (grid and edges, ascending) with anchor * m inside the bounds (value, strict) lo and hi."""
    return tuple(m for m in _MULTS if _inside(anchor * m, lo, hi))


@lru_cache(maxsize=None)
def _sigma(spec: str):
    return parse_sigma(spec)


@lru_cache(maxsize=None)
def _valid(sigma: str, **kw) -> bool:
    """Whether make_setting accepts ``sigma`` with these options (validation is the one statement of what a sigma
    requires: a Gaussian law, centred entries, W_P frozen)."""
    try:
        make_setting(D=2, K=1, preset="sts", sigma=sigma, **kw)
    except InvalidParameter:
        return False
    return True


def _accepts(sigma: str, **kw) -> bool:
    return _valid(sigma, **kw) or _valid(sigma, wp_trainable=False, **kw)


def _pick(draw, r, key: str, candidates, label: str | None = None, ok=lambda v: True):
    """One of ``candidates`` allowed by the restriction's choices for ``key`` and by ``ok``."""
    allowed = r.choices.get(key)
    vals = tuple(v for v in candidates if (allowed is None or v in allowed) and ok(v))
    if not vals:
        vals = tuple(v for v in (allowed or candidates) if ok(v)) or tuple(allowed or candidates)
    return draw(_choice(vals), label=label or key)


def _teacher(draw, r, max_d: int) -> tuple:
    """(D, K, preset, N) inside the restriction's K conditions, K at its edges half of the time."""
    kmin = max(r.k_min, 1 if r.k_interior else 0)
    d_lo = max(kmin + 1, 2) if r.k_interior else max(kmin, 1)
    D = _log_int(draw, d_lo, max(max_d, d_lo), "D")
    if r.k_zero:
        return D, 0, "sts", 1
    kmax = D - 1 if r.k_interior else D
    presets = ("sts", "cnn", "gcn") + (("gslp",) if kmin <= 1 <= kmax else ())
    preset = draw(_choice(presets), label="preset")
    if r.k_equals_d:
        return D, D, preset if preset != "gslp" else "sts", {"sts": 1, "cnn": 1, "gcn": D}.get(preset, 1)
    if preset == "sts":
        K = _edge_biased(draw, list(range(kmin, kmax + 1)), [kmin, kmax, 1, D - 1], "K")
    elif preset == "cnn":
        K = _edge_biased(draw, [k for k in _divisors(D) if kmin <= k <= kmax] or [D], [1, kmax], "K")
    elif preset == "gcn":
        K = _edge_biased(draw, list(range(max(kmin, 1), kmax + 1)), [1, kmax], "K")
    else:
        K = 1
    return D, K, preset, {"sts": 1, "gslp": 1, "cnn": D // max(K, 1), "gcn": D}[preset]


def _step_size(draw, r, kw: dict) -> str:
    """eta through x = eta_V c_L v N (module docstring), inside the restriction's bounds on x; the scale x/eta is the
    setting's own (verify.model.hypotheses.step_x at eta = 1)."""
    K, D = kw["K"], kw["D"]
    lo = r.x_min(K, D) if r.x_min else None
    hi = r.x_max(K, D) if r.x_max else None
    anchors = sorted({Fraction(1)} | ({Fraction(2 * K)} if K else set())
                     | {b[0] for b in (lo, hi) if b is not None and b[0] > 0})
    anchors = [a for a in anchors if _allowed_mults(a, lo, hi)]
    anchor = draw(_choice(tuple(anchors)), label="eta anchor (x = eta c_L v N)")
    x = anchor * _edge_biased(draw, list(_allowed_mults(anchor, lo, hi)), list(EDGE_MULTS), "eta multiple")
    scale = step_x(make_setting(**kw, eta="1"))
    return frac_str(x / scale)


@st.composite
def valid_regimes(draw, max_d: int = MAX_D, max_steps: int = MAX_STEPS, sigmas=None, laws=LAWS,
                  hypotheses=(), long_horizon: bool = True, full_max_steps: int = FULL_MAX_STEPS) -> Regime:
    """A valid regime (module docstring): every option, inside ``hypotheses``, steps about log-uniform.

    The horizon is drawn first, so shrinking shortens it early: a "long" regime (half of the draws when
    ``long_horizon``) is drawn inside LONG_RUN too and gets up to ``max_steps``; any other gets up to
    ``full_max_steps``. Within each branch the cap is fixed, so simplifying another option never lengthens a
    regime's horizon (a failing regime's replay costs 10x its horizon). ``sigmas``: specs to draw from (default:
    every registered family's representatives, read at draw time)."""
    sigmas = tuple(sigma_examples() if sigmas is None else sigmas)
    hyps = as_hypotheses(hypotheses)
    long = long_horizon and max_steps > full_max_steps and draw(st.booleans(), label="long horizon")
    steps = _log_int(draw, 1, max_steps if long else min(max_steps, full_max_steps), "steps")
    r = restriction([h.id for h in hyps] + (list(LONG_RUN) if long else []))
    sig_choices = tuple(x for x in sigmas if r.sigma is None or r.sigma(_sigma(x))) or tuple(sigmas[:1])
    sigma = draw(_choice(sig_choices), label="sigma")
    sg = _sigma(sigma)
    M = 1 if (r.m_one_unless_linear and not sg.linear) else draw(st.integers(1, MAX_M), label="M")
    d = draw(st.integers(1, MAX_SMALL_D), label="d")
    D, K, preset, N = _teacher(draw, r, max_d)
    kw = {"D": D, "K": K, "preset": preset, "M": M, "d": d, "sigma": sigma,
          "law": _pick(draw, r, "law", laws, ok=lambda v: _accepts(sigma, law=v))}
    kw["law_mean"] = _pick(draw, r, "law_mean", LAW_MEANS, ok=lambda v: _accepts(sigma, law=kw["law"], law_mean=v))
    kw["law_var"] = _pick(draw, r, "law_var", LAW_VARS)
    kw["loss"] = _pick(draw, r, "loss", LOSSES)
    kw["p_kind"] = _pick(draw, r, "p_kind", P_KINDS)
    kw["p_structure"] = with_implied(kw).get("p_structure", BY_NAME["p_structure"].default)   # sinusoidal: general
    kw["p_lambda"] = _pick(draw, r, "p_lambda", P_LAMBDAS)
    kw["init"] = _pick(draw, r, "init", INITS)
    kw["init_scale"] = _pick(draw, r, "init_scale", INIT_SCALES) if kw["init"] == "random" else "0"
    kw["noise_sd"] = _pick(draw, r, "noise_sd", NOISE_SDS)
    kw["vstar_norm"] = _pick(draw, r, "vstar_norm", VSTAR_NORMS)
    kw["seed"] = draw(st.integers(0, 3), label="seed")
    # W_P: frozen where validation requires it (relu), or where the hypotheses keep W_P = 0 and sigma is not odd
    if not _valid(sigma) or (r.wp_zero and not sg.odd) or draw(st.booleans(), label="freeze W_P"):
        kw["wp_trainable"] = False
    kw["eta"] = _step_size(draw, r, kw)
    if not r.one_eta:
        ratio = Fraction(draw(_choice(ETA_KQ_RATIOS), label="eta_kq / eta"))
        if ratio != 1:
            kw["eta_kq"] = frac_str(Fraction(kw["eta"]) * ratio)
    return Regime(tuple(kw.items()), steps)


# (field, bad value or a function of the valid kwargs, rule broken)
BREAKS = (
    ("D", 0, "D >= 1"),
    ("D", -3, "D >= 1"),
    ("M", 0, "M >= 1"),
    ("d", 0, "d >= 1"),
    ("eta", "0", "eta > 0"),
    ("eta", "-1/10", "eta > 0"),
    ("eta", "abc", "eta is a number"),
    ("eta_kq", "0", "eta_kq > 0"),
    ("vstar_norm", "0", "||V*|| > 0"),
    ("vstar_norm", "-1", "||V*|| > 0"),
    ("noise_sd", "-1", "noise_sd >= 0"),
    ("law", "cauchy", "known law"),
    ("law", "student-t:2", "student-t needs NU > 2"),
    ("law_var", "0", "law variance > 0"),
    ("sigma", "tanh", "sigma with a closed-form kernel"),
    ("sigma", "poly:", "poly needs coefficients"),
    ("loss", "median", "loss in sum|mean"),
    ("p_lambda", "0", "P^T P = lambda I with lambda > 0"),
    ("p_kind", "sinusoidal", "sinusoidal P needs p_structure=general"),
    ("init", "random", "init=random needs init_scale > 0"),
    ("init_scale", "1/10", "init=zero needs init_scale = 0"),
    ("preset", "mlp", "known preset"),
    ("seed", -1, "seed >= 0"),
    ("K", "D+1", "K <= D"),
    ("N", "N+1", "N = number of S* columns"),
    ("sigma_relu_wp", None, "relu needs W_P frozen"),
    ("law_non_gaussian_sigma", None, "non-identity sigma needs the Gaussian law"),
)


@st.composite
def invalid_regimes(draw) -> Regime:
    """A valid regime (reference P, zero initialisation, centred identity) with exactly one rule of ``BREAKS``
    broken."""
    base = dict(draw(valid_regimes(max_d=6, sigmas=("identity",), laws=("gaussian",), long_horizon=False,
                                   hypotheses=REFERENCE)).kwargs)
    base["preset"], base["K"] = "sts", min(base["K"], base["D"])
    name, bad, rule = draw(_choice(BREAKS), label="break")
    if name == "K":
        base["K"] = base["D"] + 1
    elif name == "N":
        base["N"] = 2          # sts has one column
    elif name == "sigma_relu_wp":
        base["sigma"] = "relu"
        base.pop("wp_trainable", None)
    elif name == "law_non_gaussian_sigma":
        base["sigma"], base["law"] = "erf", "gumbel"
    elif name == "p_kind":
        base["p_kind"], base["p_structure"] = bad, "orthogonal"
    else:
        base[name] = bad
    return Regime(tuple(base.items()), 1, broken=rule)


__all__ = ["Regime", "valid_regimes", "invalid_regimes", "BREAKS", "MAX_D", "MAX_STEPS", "FULL_MAX_STEPS",
           "LAWS"]
