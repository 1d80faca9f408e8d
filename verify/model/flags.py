"""A setting spelled as ``verify`` command-line options: how every replay and re-check command is written.

One spelling for every command that rebuilds a regime (``verify run`` replays of the claims, ``verify
certify`` re-checks): options only where they differ from the defaults; presets as ``--preset P --K K``;
other supports and an explicit V* through JSON files that the command line first writes with mktemp (a
POSIX shell command), with every number written exactly.
"""
from __future__ import annotations

import re
import shlex
from decimal import Decimal
from fractions import Fraction

# The order in which the options are written, and the defaults left out.
FLAGS = [("M", "--M"), ("d", "--d"), ("eta_v", "--eta"), ("eta_kq", "--eta-kq"), ("seed", "--seed"),
         ("sigma", "--sigma"), ("data", "--data"), ("law", "--law"), ("law_mean", "--law-mean"), ("law_var", "--law-var"),
         ("noise_sd", "--noise-sd"), ("loss", "--loss"), ("p_kind", "--p-kind"),
         ("p_structure", "--p-structure"), ("p_lambda", "--p-lambda"), ("beta", "--beta"), ("init", "--init"),
         ("init_scale", "--init-scale"), ("relu_at_zero", "--relu-at-zero")]
DEFAULTS = {"M": 1, "d": 1, "seed": 0, "sigma": "identity", "data": "gaussian", "law": "gaussian", "law_mean": "0", "law_var": "1",
            "noise_sd": "0", "loss": "sum", "p_kind": "identity", "p_structure": "orthogonal", "p_lambda": "1",
            "beta": "1", "init": "zero", "init_scale": "0", "relu_at_zero": "radial"}


def exact_decimal(x: Fraction) -> str | None:
    """The exact decimal spelling of a rational, or None when it has none (denominator not 2^a 5^b)."""
    q = x.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    if q != 1:
        return None
    return format(Decimal(x.numerator) / Decimal(x.denominator), "f")


def setting_command(verb: str, setting, *extra: str) -> str:
    """``verify VERB <options rebuilding setting> EXTRA...`` as one shell line (setup commands first)."""
    cfg = setting.config()
    parts = ["verify", verb, "--D", str(cfg["D"])]
    pre = []
    if cfg["preset"]:
        parts += ["--preset", cfg["preset"], "--K", str(cfg["K"])]
    else:
        pre.append(f"S=$(mktemp) && echo {shlex.quote(str(cfg['supports']))} > \"$S\"")
        parts += ["--supports", '"$S"']
    for key, flag in FLAGS:
        val = cfg[key]
        if key == "eta_kq" and val == cfg["eta_v"]:
            continue
        if key in DEFAULTS and str(val) == str(DEFAULTS[key]):
            continue
        parts += [flag, shlex.quote(str(val))]
    if cfg["vstar"] is not None:
        # exact decimals are written as JSON numbers, other rationals as "p/q" strings (read exactly)
        rows = "[" + ", ".join("[" + ", ".join(exact_decimal(Fraction(x)) or f'"{x}"' for x in r) + "]"
                               for r in cfg["vstar"]) + "]"
        pre.append(f"V=$(mktemp) && echo {shlex.quote(rows)} > \"$V\"")
        parts += ["--vstar", '"$V"']
    else:
        m = re.search(r"rescaled to norm (\S+)$", cfg["vstar_source"])
        if m and m.group(1) != "1":
            parts += ["--vstar-norm", m.group(1)]
    if not cfg["wp_trainable"]:
        parts.append("--freeze-wp")
    parts += list(extra)
    if cfg["sstar_weights"] is not None or cfg["p_kind"] == "explicit":
        parts.append("# not replayable exactly: S* weights / an explicit P have no command-line option")
    return " && ".join(pre + [" ".join(parts)])


__all__ = ["setting_command", "exact_decimal", "FLAGS", "DEFAULTS"]
