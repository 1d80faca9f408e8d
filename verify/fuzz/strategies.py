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

Given a claim's ``conditions`` (names in lemmas.support.runs.CONDITIONS) the draw stays inside them
(``HONOURED`` lists the names it knows; the runner still filters every regime by the claim itself), so
a claim is fuzzed inside its hypotheses and up to their boundaries, not mostly outside them.

Horizons, about log-uniform: when the claim's check iterates the reduced recursion (``long_horizon``,
about 3 microseconds a step and row), half of the regimes are "long": reducible by construction (zero
initialisation, centred entries, P^T P = lambda I, W_P = 0) with x < 2K (below the W_X-block threshold: GD
converges, float64 does not overflow and no check falls back to mpmath at ~1 ms a step), and up to
``max_steps`` = 2*10^4 steps; every other regime gets up to ``full_max_steps`` = 300 (the full-matrix
engine costs 0.15-0.35 ms a step for D <= 48).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from hypothesis import strategies as st

from ..model import make_setting
from ..model.numbers import frac_str
from ..model.sigmas import parse_sigma, sigma_examples

MAX_D = 48
MAX_M = 3
MAX_SMALL_D = 4          # the feature dimension d
MAX_STEPS = 20_000       # reduced-recursion checks
FULL_MAX_STEPS = 300     # full-matrix-engine checks, and regimes the reduced recursion does not cover
LAWS = ("gaussian", "rademacher", "student-t:5", "gumbel", "exponential", "uniform")
LAW_MEANS = ("0", "1/2", "-1")
LAW_VARS = ("1", "1/4", "4")
LOSSES = ("sum", "mean")
P_KINDS = ("identity", "permutation", "sinusoidal")
P_LAMBDAS = ("1", "4", "1/4")        # squares of rationals: identity / permutation P need sqrt(lambda)
INITS = ("zero", "random")
INIT_SCALES = ("1/10", "1/100", "1/2")
NOISE_SDS = ("0", "1/10", "1")
VSTAR_NORMS = ("1", "1/2", "2", "3", "1/10", "10")
ETA_KQ_RATIOS = ("1", "1/4", "1/2", "2", "4")
# Multiples of a step-size anchor: a grid n/20 (n = 1..60) and the edges of each threshold.
EDGE_MULTS = (Fraction(99, 100), Fraction(1), Fraction(101, 100), Fraction(999, 1000), Fraction(1001, 1000))
GRID_MULTS = tuple(Fraction(n, 20) for n in range(1, 61))

# The conditions (lemmas.support.runs.CONDITIONS) that valid_regimes draws inside when asked.
HONOURED = frozenset({"zero-init", "centred", "wp-zero", "odd", "identity", "K>0", "0<K<D", "orthogonal-P",
                      "uniform-S*", "one-eta", "linear-or-M1", "eta-stable", "eta-small"})


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
            if k == "wp_trainable":
                if not v:
                    parts.append("--freeze-wp")
                continue
            parts += ["--" + k.replace("_", "-") if k not in ("D", "K", "N", "M", "d") else "--" + k, str(v)]
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


@lru_cache(maxsize=4096)
def _choice(values: tuple):
    """st.sampled_from(values), built once per tuple of values (strategy construction is not free)."""
    return st.sampled_from(values)


_MULTS = tuple(sorted(set(GRID_MULTS + EDGE_MULTS)))


@lru_cache(maxsize=None)
def _allowed_mults(anchor: int, bound) -> tuple:
    """Multiples m (grid and edges, ascending) with anchor * m inside ``bound`` = (x_max, strict) or None."""
    if bound is None:
        return _MULTS
    x_max, strict = bound
    return tuple(m for m in _MULTS if anchor * m < x_max or (anchor * m == x_max and not strict))


def eta_bound(conds, K: int):
    """The largest x = eta c_L v N the conditions allow, as (x_max, strict), or None."""
    bound = None
    if "eta-stable" in conds:            # eta c_L v N < 2K
        bound = (Fraction(2 * max(K, 1)), True)
    if "eta-small" in conds:             # eta c_L v N <= 1
        if bound is None or 1 < bound[0] or (1 == bound[0] and not bound[1]):
            bound = (Fraction(1), False)
    return bound


@st.composite
def valid_regimes(draw, max_d: int = MAX_D, max_steps: int = MAX_STEPS, sigmas=None, laws=LAWS,
                  min_k: int = 0, conditions=(), long_horizon: bool = True,
                  full_max_steps: int = FULL_MAX_STEPS) -> Regime:
    """A valid regime (module docstring): every option, inside ``conditions``, steps about log-uniform.

    The horizon is drawn first, so shrinking shortens it early: a "long" regime (half of the draws when
    ``long_horizon``) is reducible with eta c_L v N < 2K by construction and gets up to ``max_steps``; any
    other gets up to ``full_max_steps``. Within each branch the cap is fixed, so simplifying another option
    never lengthens a regime's horizon (a failing regime's replay costs 10x its horizon). ``sigmas``: specs to
    draw from (default: every registered family's representatives, read now)."""
    c = set(conditions)
    long = long_horizon and max_steps > full_max_steps and draw(st.booleans(), label="long horizon")
    steps = _log_int(draw, 1, max_steps if long else min(max_steps, full_max_steps), "steps")
    if long:   # what makes the reduced recursion exact (Setting.reducible), and float64 safe at uniform S
        c |= {"orthogonal-P", "zero-init", "centred", "wp-zero"}
    sig_choices = [s for s in (sigma_examples() if sigmas is None else sigmas)
                   if ("odd" not in c or parse_sigma(s).odd) and ("identity" not in c or parse_sigma(s).is_identity)]
    sigma = draw(_choice(tuple(sig_choices) or ("identity",)), label="sigma")
    sig = parse_sigma(sigma)
    M = 1 if ("linear-or-M1" in c and not sig.linear) else draw(st.integers(1, MAX_M), label="M")
    d = draw(st.integers(1, MAX_SMALL_D), label="d")
    strict = "0<K<D" in c
    kmin = max(min_k, 1 if (strict or "K>0" in c) else 0)
    d_lo = max(kmin + 1, 2) if strict else max(kmin, 1)
    D = _log_int(draw, d_lo, max(max_d, d_lo), "D")
    kmax = D - 1 if strict else D
    preset = draw(_choice(("sts", "cnn", "gcn", "gslp")), label="preset")
    if preset == "sts":
        K = _edge_biased(draw, list(range(kmin, kmax + 1)), [kmin, kmax, 1, D - 1], "K")
    elif preset == "cnn":
        divs = [k for k in _divisors(D) if kmin <= k <= kmax]
        K = _edge_biased(draw, divs, [1, kmax], "K")
    elif preset == "gcn":
        ks = list(range(max(kmin, 1), kmax + 1))
        K = _edge_biased(draw, ks, [1, kmax], "K")
    else:
        K = 1
    N = {"sts": 1, "gslp": 1, "cnn": D // max(K, 1), "gcn": D}[preset]
    law = draw(_choice(tuple(laws)), label="law") if sig.any_law else "gaussian"
    mean_ok = "centred" not in c and not sig.needs_centred
    law_mean = draw(_choice(LAW_MEANS if mean_ok else ("0",)), label="law_mean")
    law_var = draw(_choice(LAW_VARS), label="law_var")
    loss = draw(_choice(LOSSES), label="loss")
    p_kind = draw(_choice(P_KINDS if "orthogonal-P" not in c else P_KINDS[:2]), label="p_kind")
    p_lambda = draw(_choice(P_LAMBDAS), label="p_lambda")
    init = draw(_choice(INITS if "zero-init" not in c else ("zero",)), label="init")
    kw = {"D": D, "K": K, "preset": preset, "M": M, "d": d, "sigma": sigma, "law": law, "law_mean": law_mean,
          "law_var": law_var, "loss": loss, "p_kind": p_kind,
          "p_structure": "general" if p_kind == "sinusoidal" else "orthogonal", "p_lambda": p_lambda,
          "init": init, "init_scale": draw(_choice(INIT_SCALES), label="init_scale") if init == "random" else "0",
          "noise_sd": draw(_choice(NOISE_SDS), label="noise_sd"),
          "vstar_norm": draw(_choice(VSTAR_NORMS), label="vstar_norm"),
          "seed": draw(st.integers(0, 3), label="seed")}
    # W_P: frozen when sigma's W_P gradient has no closed form (validated: relu); a sigma that is not odd
    # keeps W_P = 0 only when frozen
    if not sig.wp_gradient_closed_form or (not sig.odd and "wp-zero" in c):
        kw["wp_trainable"] = False
    elif draw(st.booleans(), label="freeze W_P"):
        kw["wp_trainable"] = False
    # step size through x = eta c_L v N (module docstring)
    c_l = Fraction(1) if loss == "sum" else Fraction(1, M * N)
    scale = c_l * Fraction(law_var) * N
    bound = eta_bound(c, K)
    if long:
        # below the W_X-block threshold x = 2K (<= 2D): GD converges, float64 does not overflow, and no check
        # falls back to mpmath (~1 ms a step). Above it the 2-cycle grows until float64 overflows within
        # ~10^3 steps (e.g. x = 1.01 * 2K, D = 2: at t = 1332), so those regimes get the short horizons.
        if bound is None or 2 * max(K, 1) <= bound[0]:
            bound = (Fraction(2 * max(K, 1)), True)
    anchors = [a for a in (2 * max(K, 1), 1) if _allowed_mults(a, bound)]
    anchor = draw(_choice(tuple(anchors)), label="eta anchor (x = eta c_L v N)")
    x = anchor * _edge_biased(draw, list(_allowed_mults(anchor, bound)), list(EDGE_MULTS), "eta multiple")
    eta = x / scale
    kw["eta"] = frac_str(eta)
    if "one-eta" not in c:
        ratio = Fraction(draw(_choice(ETA_KQ_RATIOS), label="eta_kq / eta"))
        if ratio != 1:
            kw["eta_kq"] = frac_str(eta * ratio)
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
                                   conditions=("zero-init", "orthogonal-P", "centred"))).kwargs)
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


__all__ = ["Regime", "valid_regimes", "invalid_regimes", "BREAKS", "HONOURED", "MAX_D", "MAX_STEPS",
           "FULL_MAX_STEPS", "SIGMAS", "LAWS", "eta_bound"]
