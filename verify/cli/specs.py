"""The table of the options that define a regime: (flag, keyword, click settings) of each, with the help texts of
``--sigma`` and ``--data``. Read by the shared options (verify.cli.options, which builds the click options from it)
and by the regime files (verify.cli.regime: a file's keys are the flags without their dashes), so neither imports
the other's module for it.
"""
from __future__ import annotations

import click

from ..model.data import data_models
from ..model.setting import DEFAULTS
from ..model.sigmas import family_syntax

SIGMA_HELP = " | ".join(family_syntax()) + " (the registered sigma families)"
DATA_HELP = ("what X is drawn from: gaussian (i.i.d. entries of --law), digits (sklearn's 8x8 handwritten digits, a "
             "stand-in for MNIST: D = d = 8), or a Gaussian with the digits' second moments (gaussian:digits) or one "
             "of their isotropic parts (gaussian:digits-pixels, gaussian:digits-tokens)")


def _data_kwargs(default, help_text: str) -> dict:
    """click keywords of the ``--data`` option (the registered data models)."""
    return {"type": click.Choice(data_models()), "default": default, "show_default": default is not None,
            "help": help_text}


def data_option(default=DEFAULTS["data"], help_text: str = DATA_HELP):
    """The ``--data`` option (one definition for every command that takes it)."""
    return click.option("--data", "data", **_data_kwargs(default, help_text))


def _default(key: str) -> dict:
    """click keywords giving an option make_setting's default (verify.model.setting.DEFAULTS, their one home)."""
    return {"default": DEFAULTS[key], "show_default": True}


# (flag, keyword of the command, click keywords) of every option that defines a regime. The flag without its
# dashes is also the key of a regime file (verify.cli.regime).
SETTING_SPECS = [
    ("--D", "D", {"type": int, "default": None, "help": "sequence length (number of tokens); required unless "
                  "--regime FILE gives it"}),
    ("--K", "K", {"type": int, "default": None, "help": "support size of each column of S*"}),
    ("--N", "N", {"type": int, "default": None, "help": "number of output columns (query positions)"}),
    ("--M", "M", {"type": int, **_default("M"), "help": "output dimension (rows of V*)"}),
    ("--d", "d", {"type": int, **_default("d"), "help": "feature dimension"}),
    ("--eta", "eta", {**_default("eta"), "help": "step size (read exactly: 0.07 is 7/100)"}),
    ("--eta-kq", "eta_kq", {"default": None, "help": "separate step size for W_KQ (default: --eta)"}),
    ("--supports", "supports", {"default": None, "help": "JSON file: list of 0-based index lists, one per column of S*"}),
    ("--preset", "preset", {"type": click.Choice(["cnn", "gcn", "sts", "gslp"]), "default": None}),
    ("--vstar", "vstar", {"default": None, "help": "JSON file: V* as a list of M rows of d numbers"}),
    ("--vstar-norm", "vstar_norm", {"default": None, "help": "random V* (seeded) with this Frobenius norm"}),
    ("--seed", "seed", {"type": int, **_default("seed")}),
    ("--sigma", "sigma", {**_default("sigma"), "help": SIGMA_HELP}),
    ("--data", "data", _data_kwargs(DEFAULTS["data"], DATA_HELP)),
    ("--law", "law", {**_default("law"), "help": "gaussian | rademacher | student-t:NU | gumbel | exponential | "
                                                 "uniform (standardised)"}),
    ("--law-mean", "law_mean", _default("law_mean")),
    ("--law-var", "law_var", _default("law_var")),
    ("--noise-sd", "noise_sd", _default("noise_sd")),
    ("--loss", "loss", {"type": click.Choice(["sum", "mean"]), **_default("loss")}),
    ("--p-kind", "p_kind", {"type": click.Choice(["identity", "permutation", "sinusoidal"]), **_default("p_kind")}),
    ("--p-structure", "p_structure", {"type": click.Choice(["orthogonal", "general"]), "default": None,
                                      "help": "default: what --p-kind implies (general for sinusoidal, orthogonal "
                                              "otherwise)"}),
    ("--p-lambda", "p_lambda", {**_default("p_lambda"), "help": "P^T P = lambda I"}),
    ("--beta", "beta", {**_default("beta"), "help": "logit temperature: the logits are beta P^T W_KQ p_q(j) (read "
                                                    "exactly)"}),
    ("--init", "init", {"type": click.Choice(["zero", "random"]), **_default("init")}),
    ("--init-scale", "init_scale", _default("init_scale")),
    ("--relu-at-zero", "relu_at_zero", {"type": click.Choice(["radial", "error"]), **_default("relu_at_zero")}),
    ("--freeze-wp", "freeze_wp", {"is_flag": True, "help": "keep W_P at 0 (wp_trainable = False)"}),
]


REGIME_META = "verify.regime"     # click context meta: the regime file in use and the options it gave
