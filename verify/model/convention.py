"""A convention: the choices a paper might make differently, set once for a whole run of the toolkit.

A :class:`Convention` holds values for the convention keywords of :func:`verify.model.make_setting` (the entry
law and its moments, label noise, the loss averaging, P and its scale, the logit temperature, the
initialisation, sigma and its conventions, W_P frozen, eta_KQ as a multiple of eta, and the data model). Every check builds
its regimes through :func:`setting` (or ``verify.evidence.regime_runs.regime``), which starts from the active
convention and lets the regime's own explicit choices win: a probe of the Gumbel law keeps its law under any
convention, everything it leaves at the default follows the convention.

A statement of the paper, as the toolkit reconstructs it, assumes the reference convention through hypotheses
that pin a convention keyword (``sum-loss`` pins ``loss = sum``). Under another convention those hypotheses are
replaced by the convention's own (``loss = mean``): the statement is judged in the reader's convention, and a
proof that assumed the reference no longer covers it.

Example::

    >>> c = Convention.from_options({"loss": "mean", "law_var": "1/4"})
    >>> c.label()
    'law_var=1/4, loss=mean'
    >>> with using(c):
    ...     setting(D=8, K=2, preset="cnn").loss
    'mean'
"""
from __future__ import annotations

import contextlib
import contextvars
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ..errors import InvalidParameter, suggest
from ..inputs import LIMITS, parse_json, read_text
from .data import parse_data
from .hypotheses import convention_hypothesis, hypotheses
from .numbers import exact, frac_str
from .setting import make_setting
from .spec import BY_KEY, BY_KEYWORD, BY_NAME, CONVENTION_FLAGS, DEFAULTS, OF_KIND, with_implied

# The convention keywords (make_setting's names) with the flag each is given by: the setting's convention fields
# (verify.model.spec), and eta_kq_ratio (eta_KQ / eta, a run's own option).
KEYWORDS = CONVENTION_FLAGS | {"eta_kq_ratio": "--eta-kq-ratio"}
FLAG_KEYS = {flag.lstrip("-"): key for key, flag in KEYWORDS.items()}
NUMERIC = tuple(k for k in KEYWORDS if k in OF_KIND["number"]) + ("eta_kq_ratio",)


def _switch(keyword: str) -> bool:
    """Whether a convention keyword is set by a switch (``--freeze-wp``: written without a value)."""
    return keyword in BY_KEYWORD and BY_KEYWORD[keyword].kind == "flag"


@dataclass(frozen=True)
class Convention:
    """Values for some convention keywords; the others stay at the reference (make_setting's defaults)."""

    values: tuple = field(default=())

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(sorted(dict(self.values).items())))

    # ----- building ---------------------------------------------------------------------------------
    @classmethod
    def from_options(cls, options: dict) -> "Convention":
        """From keyword -> value (make_setting's names, or the flags' names without dashes; None means
        "not set"); values are checked by building a setting with them."""
        vals = {}
        for name, value in options.items():
            f = BY_NAME.get(name) or BY_KEY.get(name)
            if f is not None and f.negated:                  # a switch: set means its keyword False (W_P frozen)
                name, value = f.setting_keyword, (False if value else None)
            key = FLAG_KEYS.get(name, FLAG_KEYS.get(name.replace("_", "-"), name))
            if key not in KEYWORDS:
                raise InvalidParameter("convention", name, "is not a convention option; the options are "
                                       + ", ".join(sorted(FLAG_KEYS)) + suggest(name, FLAG_KEYS))
            if value is None:
                continue
            # a field's number read and checked by its field (verify.model.spec); eta_kq_ratio by its own rule
            vals[key] = frac_str(BY_KEYWORD[key].check(value) if key in BY_KEYWORD else exact(value, key)) \
                if key in NUMERIC else value
            if key == "eta_kq_ratio" and exact(value, key) <= 0:
                raise InvalidParameter(key, value, "must be > 0 (eta_KQ as a multiple of eta)")
        conv = cls(tuple(vals.items()))
        conv.validate()
        return conv

    def validate(self) -> None:
        """Raise InvalidParameter when the convention cannot describe any regime (e.g. sinusoidal P with an
        orthogonal structure), naming the flags."""
        dims = parse_data(self.get("data", "gaussian")).dims      # a data model may fix d and D
        make_setting(**self.apply({"D": 4, "K": 2, "preset": "cnn"} | ({"d": dims[0], "D": dims[1]} if dims else {})))

    # ----- reading ------------------------------------------------------------------------------------
    def get(self, key: str, default=None):
        return dict(self.values).get(key, default)

    @property
    def is_reference(self) -> bool:
        return not self.values

    def apply(self, kwargs: dict) -> dict:
        """make_setting keywords: the convention's values, then ``kwargs`` (a regime's explicit choices win);
        a sinusoidal P brings its general structure with it, and eta_KQ follows eta by the ratio."""
        vals = dict(self.values)
        ratio = vals.pop("eta_kq_ratio", None)
        out = with_implied(vals) | dict(kwargs)
        if ratio is not None and out.get("eta_kq") is None:
            out["eta_kq"] = BY_NAME["eta"].check(out.get("eta", DEFAULTS["eta"])) * Fraction(ratio)
        return out

    def adjust(self, hyps) -> tuple:
        """``hyps`` (hypothesis objects or ids) with every hypothesis that pins a keyword this convention sets to
        another value replaced by the convention's own (``sum-loss`` -> ``loss = mean``)."""
        vals = with_implied(dict(self.values))
        out = []
        for h in hypotheses(hyps):
            moved = [(k, vals[k]) for k, v in h.pins if k in vals and str(vals[k]) != str(v)]
            out += [convention_hypothesis(k, v) for k, v in moved] if moved else [h]
        return hypotheses(out)

    def label(self) -> str:
        """"reference", or the options set, as ``key=value`` pairs."""
        return ", ".join(f"{k}={v}" for k, v in self.values) or "reference"

    def words(self) -> str:
        """The convention in words, as a report header states it."""
        if self.is_reference:
            return "the reference convention (docs/setting.md)"
        return "the reference convention (docs/setting.md) except " + ", ".join(
            f"{KEYWORDS[k]} {('(W_P frozen)' if _switch(k) else v)}" for k, v in self.values)

    def as_dict(self) -> dict:
        return dict(self.values)

    def flags(self) -> list[str]:
        """The command-line flags that set this convention (for replay commands)."""
        out = []
        for k, v in self.values:
            out += [KEYWORDS[k]] if _switch(k) else [KEYWORDS[k], str(v)]
        return out


FORMATS = {".toml": "TOML", ".json": "JSON"}     # a convention file's suffix -> its format (any other: JSON)
UNSUPPORTED = {".yaml": "YAML", ".yml": "YAML", ".ini": "INI", ".cfg": "INI"}


def read_file(path) -> dict:
    """The table of a convention file (TOML by its ``.toml`` suffix, else JSON; read bounded, every key once:
    verify.inputs), numbers as their decimal text (read exactly later), or InvalidParameter naming the file."""
    p = Path(path)
    fmt = UNSUPPORTED.get(p.suffix.lower())
    if fmt is not None:
        raise InvalidParameter("convention", str(path), f"is a {fmt} file by its name, and {fmt} is not supported: "
                               "write the same table as TOML (.toml) or JSON (.json)")
    fmt = FORMATS.get(p.suffix.lower(), "JSON")
    text = read_text(path, "convention", LIMITS["options"], "TOML or JSON convention file")
    if fmt == "TOML":
        try:
            data = tomllib.loads(text)
        except ValueError as exc:
            raise InvalidParameter("convention", str(path), f"must be valid TOML ({exc})") from None
    else:
        data = parse_json(text, "convention", path, "JSON file (a .toml name is read as TOML)")
    if not isinstance(data, dict):
        raise InvalidParameter("convention", str(path), "must hold a table of option = value")
    return {k: (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in data.items()}


REFERENCE = Convention()
_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("verify_convention", default=REFERENCE)


def active() -> Convention:
    """The convention checks build their regimes in (the reference unless a run set one)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def using(convention: Convention | None):
    """Make ``convention`` the active one inside the block (None: leave it as it is)."""
    if convention is None:
        yield active()
        return
    token = _ACTIVE.set(convention)
    try:
        yield convention
    finally:
        _ACTIVE.reset(token)


def setting(**kwargs):
    """make_setting under the active convention (the regime's explicit keywords win)."""
    return make_setting(**active().apply(kwargs))


__all__ = ["Convention", "REFERENCE", "KEYWORDS", "FLAG_KEYS", "read_file", "active", "using", "setting"]
