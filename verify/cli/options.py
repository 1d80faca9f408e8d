"""Shared command-line options describing one regime, and their translation into a Setting."""
from __future__ import annotations

import functools

import click

from ..model import make_setting

SETTING_OPTIONS = [
    click.option("--D", "D", type=int, required=True, help="sequence length (number of tokens)"),
    click.option("--K", "K", type=int, default=None, help="support size of each column of S*"),
    click.option("--N", "N", type=int, default=None, help="number of output columns (query positions)"),
    click.option("--M", "M", type=int, default=1, show_default=True, help="output dimension (rows of V*)"),
    click.option("--d", "d", type=int, default=1, show_default=True, help="feature dimension"),
    click.option("--eta", default="1/10", show_default=True, help="step size (read exactly: 0.07 is 7/100)"),
    click.option("--eta-kq", default=None, help="separate step size for W_KQ (default: --eta)"),
    click.option("--supports", default=None, help="JSON file: list of 0-based index lists, one per column of S*"),
    click.option("--preset", type=click.Choice(["cnn", "gcn", "sts", "gslp"]), default=None),
    click.option("--vstar", default=None, help="JSON file: V* as a list of M rows of d numbers"),
    click.option("--vstar-norm", default=None, help="random V* (seeded) with this Frobenius norm"),
    click.option("--seed", type=int, default=0, show_default=True),
    click.option("--sigma", default="identity", show_default=True, help="identity | relu | erf | poly:c0,c1,..."),
    click.option("--law", default="gaussian", show_default=True,
                 help="gaussian | rademacher | student-t:NU | gumbel | exponential | uniform (standardised)"),
    click.option("--law-mean", default="0", show_default=True),
    click.option("--law-var", default="1", show_default=True),
    click.option("--noise-sd", default="0", show_default=True),
    click.option("--loss", "loss", type=click.Choice(["sum", "mean"]), default="sum", show_default=True),
    click.option("--p-kind", type=click.Choice(["identity", "permutation", "sinusoidal"]), default="identity",
                 show_default=True),
    click.option("--p-structure", type=click.Choice(["orthogonal", "general"]), default="orthogonal", show_default=True),
    click.option("--p-lambda", default="1", show_default=True, help="P^T P = lambda I"),
    click.option("--beta", default="1", show_default=True,
                 help="logit temperature: the logits are beta P^T W_KQ p_q(j) (read exactly)"),
    click.option("--init", type=click.Choice(["zero", "random"]), default="zero", show_default=True),
    click.option("--init-scale", default="0", show_default=True),
    click.option("--relu-at-zero", type=click.Choice(["radial", "error"]), default="radial", show_default=True),
    click.option("--freeze-wp", is_flag=True, help="keep W_P at 0 (wp_trainable = False)"),
]

SETTING_KEYS = ("D", "K", "N", "M", "d", "eta", "eta_kq", "supports", "preset", "vstar", "vstar_norm", "seed",
                "sigma", "law", "law_mean", "law_var", "noise_sd", "loss", "p_kind", "p_structure", "p_lambda", "beta",
                "init", "init_scale", "relu_at_zero", "freeze_wp")


def setting_options(f):
    """Decorate a click command with every option that defines a regime."""
    for opt in reversed(SETTING_OPTIONS):
        f = opt(f)
    return f


def setting_from_options(kw: dict):
    """Pop the regime options out of ``kw`` and build the validated Setting."""
    args = {k: kw.pop(k) for k in SETTING_KEYS if k in kw}
    args["wp_trainable"] = not args.pop("freeze_wp", False)
    return make_setting(**args)


def handle_errors(f):
    """Turn the toolkit's own errors into a one-line message and exit status 2."""
    from ..errors import VerificationError

    @functools.wraps(f)
    def wrapper(*a, **k):
        try:
            return f(*a, **k)
        except VerificationError as exc:
            raise click.UsageError(str(exc)) from None
    return wrapper
