"""Hypothesis strategies over regimes: valid ones (each cheap to run) and invalid ones.

A :class:`Regime` is the keyword arguments of :func:`verify.model.make_setting` (exact strings, so
a regime prints and replays exactly) plus a number of GD steps. Valid regimes stay inside the
reference hypotheses of SETTING.md (zero initialisation, orthogonal P, uniform S*) and small
(D <= 6, M <= 2, d <= 3, steps <= 60) so a claim check costs milliseconds. Invalid regimes take a
valid one and break exactly one rule; building them must raise InvalidParameter.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from hypothesis import strategies as st

from ..model import make_setting

MAX_D = 6
MAX_STEPS = 60
SIGMAS = ("identity", "erf", "poly:0,1,0,1/10", "relu")
LAWS = ("gaussian", "rademacher", "student-t:5", "gumbel", "exponential", "uniform")
VSTAR_NORMS = ("1", "1/2", "2", "3")


@dataclass(frozen=True)
class Regime:
    """make_setting keyword arguments (exact) and a number of GD steps."""

    kwargs: tuple = ()
    steps: int = 1
    broken: str = field(default="", compare=False)   # invalid regimes: the rule that is broken

    def as_dict(self) -> dict:
        return {"setting": dict(self.kwargs), "steps": self.steps} | ({"broken": self.broken} if self.broken else {})

    def setting(self):
        return make_setting(**dict(self.kwargs))

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
        parts += ["--steps", str(self.steps), "--json"]
        return " ".join(shlex.quote(p) for p in parts)


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


@st.composite
def valid_regimes(draw, max_d: int = MAX_D, max_steps: int = MAX_STEPS, sigmas=SIGMAS, laws=LAWS,
                  min_k: int = 0) -> Regime:
    """A valid regime: preset teacher, dimensions, step size 1/20..3, ||V*||, sigma, law, steps."""
    D = draw(st.integers(1, max_d), label="D")
    preset = draw(st.sampled_from(("sts", "cnn", "gcn", "gslp")), label="preset")
    if preset == "sts":
        K = draw(st.integers(min(max(min_k, 0), D), D), label="K")
    elif preset == "cnn":
        K = draw(st.sampled_from(_divisors(D)), label="K")
    elif preset == "gcn":
        K = draw(st.integers(1, D), label="K")
    else:
        K = 1
    sigma = draw(st.sampled_from(sigmas), label="sigma")
    law = draw(st.sampled_from(laws), label="law") if sigma == "identity" else "gaussian"
    kw = {"D": D, "K": K, "preset": preset,
          "M": draw(st.integers(1, 2), label="M"), "d": draw(st.integers(1, 3), label="d"),
          # eta = n/20 for n = 1..60: shrinking moves towards the smallest step size.
          "eta": f"{draw(st.integers(1, 60), label='eta*20')}/20",
          "vstar_norm": draw(st.sampled_from(VSTAR_NORMS), label="vstar_norm"),
          "seed": draw(st.integers(0, 3), label="seed"), "sigma": sigma, "law": law}
    if sigma == "relu":
        kw["wp_trainable"] = False   # SETTING: ReLU's W_P gradient has no closed form (validated)
    steps = draw(st.integers(1, max_steps), label="steps")
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
    """A valid regime with exactly one rule of the table ``BREAKS`` broken."""
    base = dict(draw(valid_regimes(sigmas=("identity",), laws=("gaussian",))).kwargs)
    base["preset"], base["K"] = "sts", min(base["K"], base["D"])
    name, bad, rule = draw(st.sampled_from(BREAKS), label="break")
    if name == "K":
        base["K"] = base["D"] + 1
    elif name == "N":
        base["N"] = 2          # sts has one column
    elif name == "sigma_relu_wp":
        base["sigma"] = "relu"
        base.pop("wp_trainable", None)
    elif name == "law_non_gaussian_sigma":
        base["sigma"], base["law"] = "erf", "gumbel"
    else:
        base[name] = bad
    return Regime(tuple(base.items()), 1, broken=rule)
