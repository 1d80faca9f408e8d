"""A setting spelled as ``verify`` command-line options: how every replay and re-check command is written.

One spelling for every command that rebuilds a regime (``verify run`` replays of the claims, ``verify
certify`` re-checks): options only where they differ from the defaults; presets as ``--preset P --K K``;
other supports and an explicit V* through JSON files that the command line first writes with mktemp (a
POSIX shell command), with every number written exactly.
"""
from __future__ import annotations

import shlex
from decimal import Decimal
from fractions import Fraction

from .spec import BY_NAME, REPLAYED

# The order in which the options are written, and the defaults left out: both from the field table
# (verify.model.spec), keyed by Setting.config()'s names.
FLAGS = [(f.config, f.flag) for f in REPLAYED]
DEFAULTS = {f.config: f.default for f in REPLAYED if f.replay == "changed" and f.follows is None}
FOLLOWS = {f.config: f.follows for f in REPLAYED if f.follows is not None}
# The flags of the fields written by their own rules below (sizes, supports, V*, the switch), from the same table.
FLAG = {name: BY_NAME[name].flag for name in ("D", "K", "preset", "supports", "vstar", "vstar_norm", "freeze_wp")}


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
    parts = ["verify", verb, FLAG["D"], str(cfg["D"])]
    pre = []
    if cfg["preset"]:
        parts += [FLAG["preset"], cfg["preset"], FLAG["K"], str(cfg["K"])]
    else:
        pre.append(f"S=$(mktemp) && echo {shlex.quote(str(cfg['supports']))} > \"$S\"")
        parts += [FLAG["supports"], '"$S"']
    for key, flag in FLAGS:
        val = cfg[key]
        if key in FOLLOWS and val == cfg[FOLLOWS[key]]:       # eta_kq = eta: implied
            continue
        if key in DEFAULTS and str(val) == str(DEFAULTS[key]):
            continue
        parts += [flag, shlex.quote(str(val))]
    if cfg["vstar"] is not None:
        # exact decimals are written as JSON numbers, other rationals as "p/q" strings (read exactly)
        rows = "[" + ", ".join("[" + ", ".join(exact_decimal(Fraction(x)) or f'"{x}"' for x in r) + "]"
                               for r in cfg["vstar"]) + "]"
        pre.append(f"V=$(mktemp) && echo {shlex.quote(rows)} > \"$V\"")
        parts += [FLAG["vstar"], '"$V"']
    elif cfg["vstar_norm"] is not None and cfg["vstar_norm"] != "1":      # a random V*: its norm, when not 1
        parts += [FLAG["vstar_norm"], cfg["vstar_norm"]]
    if not cfg["wp_trainable"]:
        parts.append(FLAG["freeze_wp"])
    parts += list(extra)
    if cfg["sstar_weights"] is not None or cfg["p_kind"] == "explicit":
        parts.append("# not replayable exactly: S* weights / an explicit P have no command-line option")
    return " && ".join(pre + [" ".join(parts)])


def family_command(verb: str, options: dict, ranges: dict, *extra: str) -> str:
    """``verify VERB`` with the fixed ``options`` (make_setting keywords and values) and the ranged fields of
    ``ranges`` (keyword -> (lo, hi), written LO..HI, the family syntax of ``verify certify``), each by its
    field's flag."""
    parts = ["verify", verb]                       # str of a Fraction is p/q (or p): read back exactly
    for name, value in options.items():
        parts += [BY_NAME[name].flag, shlex.quote(str(value))]
    for name, (lo, hi) in ranges.items():
        parts += [BY_NAME[name].flag, f"{lo}..{hi}"]
    return " ".join(parts + list(extra))


__all__ = ["setting_command", "family_command", "exact_decimal", "FLAGS", "DEFAULTS"]
