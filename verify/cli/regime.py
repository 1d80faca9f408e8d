"""The regime file of ``--regime FILE`` (``verify run``, ``verify check ID``, ``verify certify``).

One regime as a JSON object whose keys are the regime flags' names without their dashes, and whose values
are what the flags take::

    {"D": 13, "K": 3, "N": 5, "M": 2, "d": 4, "eta": "0.07", "vstar": "V.json", "supports": "S.json",
     "sigma": "identity", "freeze-wp": false, "steps": 1000}

Sizes and the seed are JSON integers (``8``, never ``"8"`` nor ``8.0``); numbers such as ``eta`` are strings or
JSON numbers, read exactly as written (``0.07`` is 7/100); ``supports`` and ``vstar`` are a file name (relative
to the regime file's folder) or the list itself; ``freeze-wp`` is true or false; ``steps`` is an integer (what
``verify check`` needs; ``verify run`` takes it in place of --steps; ``verify certify`` has none). No other key
is accepted: a close one (``vstar_norm``) is named with the right spelling (``vstar-norm``). A key given both
in the file and as a flag is an error. Keys left out take the flags' defaults.
"""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import click
from click.core import ParameterSource

from ..errors import InvalidParameter, show, suggest
from ..inputs import LIMITS, read_json
from ..model.spec import BY_KEY, BY_NAME, FIELDS
from .specs import REGIME_META

# regime-file key (the flag without its dashes) -> the command's keyword (the field's name), from the field table
KEYS = {f.key: f.name for f in FIELDS}


def _bad(path, key: str, value, valid: str) -> InvalidParameter:
    return InvalidParameter("regime", str(path), f'has "{key}": {_json(value)}, which {valid}')


ECHO = 60      # characters of a value echoed in an error (a 100 MB string is cut, not printed)


def _json(value) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, Decimal) else str(value)
    return text if len(text) <= ECHO else f"{text[:ECHO]}... ({len(text):,} characters)"


def _unknown(path, key: str) -> InvalidParameter:
    keys = list(KEYS) + ["steps"]
    near = key.replace("_", "-") if key.replace("_", "-") in keys else None
    hint = f" (did you mean {near}?)" if near else suggest(key, keys)
    return InvalidParameter("regime", str(path), f'has the unknown key "{key[:ECHO]}": the keys are the flags\' names '
                            f"without their dashes ({', '.join(keys)}){hint}")


def _flag(path, key: str, value):
    if not isinstance(value, bool):
        raise _bad(path, key, value, "must be true or false")
    return value


def _int(path, key: str, value):
    if isinstance(value, bool) or not isinstance(value, int):
        what = f"the string {_json(value)}" if isinstance(value, str) else _json(value)
        raise _bad(path, key, value, f"must be a JSON integer, not {what}")
    return value


def _choice(path, key: str, value):
    choices = BY_KEY[key].choices
    if value not in choices:
        raise _bad(path, key, value, f"must be one of {', '.join(choices)}")
    return value


def _text(path, key: str, value):
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return str(value)                     # a JSON number, read exactly as its decimal text
    if not isinstance(value, str):
        raise _bad(path, key, value, "must be a string or a number")
    return value


def _value(path, key: str, value):
    """The value of one key as the flag would hand it over (read by its field's kind), or InvalidParameter naming the
    key; its range is checked where the flag's is (make_setting), and an error there names the key too."""
    return JSON_KINDS[BY_KEY[key].kind](path, key, value)


def _table(path, key: str, value):
    """``supports`` / ``vstar``: a file name (relative to the regime file) or the list itself."""
    if isinstance(value, str):
        p = Path(value)
        return str(p if p.is_absolute() else Path(path).parent / p)
    if not isinstance(value, list) or not all(isinstance(r, list) for r in value):
        raise _bad(path, key, value, "must be a file name or a list of lists")
    if key == "supports":
        for r in value:
            for x in r:
                if isinstance(x, bool) or not isinstance(x, int):
                    raise _bad(path, key, value, f"entries must be integers (0-based token indices), not {_json(x)}")
        return value
    return [[x if isinstance(x, (int, str)) and not isinstance(x, bool) else str(x) for x in r] for r in value]


# How a JSON value of each kind of field is read (verify.model.spec.KINDS): as the flag would hand it over.
JSON_KINDS = {"flag": _flag, "int": _int, "choice": _choice, "file": _table, "number": _text, "text": _text}


def load(path) -> dict:
    """The JSON object of the regime file (numbers as exact Decimals; read bounded, every key once: verify.inputs),
    or InvalidParameter naming --regime."""
    def no_constant(c):
        raise InvalidParameter("regime", str(path), f"must hold finite numbers only (found {c})")
    spec = read_json(path, "regime", LIMITS["options"], "JSON regime file", parse_float=Decimal,
                     parse_constant=no_constant)
    if not isinstance(spec, dict):
        raise InvalidParameter("regime", str(path), "must be a JSON object whose keys are the regime flags' names "
                               "without their dashes (D, K, eta, vstar-norm, ...) and steps")
    return spec


def read_regime(path, steps: str = "required") -> tuple[dict, int | None]:
    """(the file's options as the command's keywords, e.g. {"D": 8, "vstar_norm": "2"}; its steps).

    ``steps``: "required" (verify check), "optional" (verify run) or "refused" (verify certify)."""
    spec = load(path)
    out, n = {}, None
    for key, value in spec.items():
        if key == "steps":
            if steps == "refused":
                raise _bad(path, key, value, "this command does not take (its bounds hold for every T: choose the "
                           "T printed with --at)")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise _bad(path, key, value, "must be a JSON integer >= 1")
            n = value
            continue
        if key not in KEYS:
            raise _unknown(path, key)
        out[KEYS[key]] = _value(path, key, value)
    if steps == "required" and n is None:
        raise InvalidParameter("regime", str(path), 'must give "steps" (an integer >= 1: the horizon of the check)')
    remember(path, out)
    return out, n


def remember(path, given: dict) -> None:
    """Note on the click context which options came from the file, so that an error about one of them names
    its key and the file (not the flag, whose default the command line holds)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[REGIME_META] = {"path": str(path), "keys": {n: BY_NAME[n].key for n in given}}


def defaults() -> dict:
    """Every regime option at the flag's default (what a key left out of the file means)."""
    return {f.name: f.option_default for f in FIELDS}


def merge(kw: dict, regime_file, steps: str) -> int | None:
    """Overlay the regime file's options on a command's keywords ``kw`` (in place); a key also given as a flag
    on the command line is an error. Returns the file's steps (or None)."""
    given, n = read_regime(regime_file, steps)
    ctx = click.get_current_context(silent=True)
    for name in given:
        if ctx is not None and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
            flag = BY_NAME[name].flag
            raise InvalidParameter("regime", str(regime_file), f"gives {flag[2:]} = {show(given[name])}, which "
                                   f"{flag} gives again on the command line: give it once")
    kw.update(given)
    return n


__all__ = ["KEYS", "read_regime", "merge", "defaults", "load"]
