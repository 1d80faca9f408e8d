"""The one table of a setting's user-level fields: for each, its make_setting keyword, its flag, how it is read, its
valid values, its default, its help text and how a replay command writes it.

Everything that spells, reads or checks a field for the user is derived from this table: the click options of every
command that builds a regime (verify.cli.specs), the keys of a ``--regime`` file (verify.cli.regime: the flag without
its dashes), make_setting's defaults and its one-field checks (verify.model.setting: :meth:`Field.check`, one error
text per field), the ranges ``LO..HI`` of a family (``verify certify --D 8..512 --eta 1/16..1/8``: a field's range
syntax is its kind's, :meth:`Field.read_range`), the replay command (verify.model.flags), the error-to-flag mapping
(verify.cli.options reads :data:`API_NAMES`) and the options table of docs/setting.md (docs/generate.py). Adding a
field is one row here (CONTRIBUTING.md, "How to add a setting field"). The table is plain data (no click), so the
model layer owns it; the help texts that list a registry (``--sigma``, ``--data``) are added by verify.cli.specs,
which may read the registries.

Each field has three spellings and no other: its flag (``--eta``, whose name without the dashes is the regime-file
key ``eta``), its make_setting keyword (``eta``) and its Setting.config() key (``eta_v``, the Setting's field).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from ..errors import InvalidParameter
from .numbers import exact, frac_str
from .regions import Interval
from .validation import check_int

# Largest M and d: V* is stored as M x d exact entries; also the largest D of a computation that builds D x D arrays
# (verify.model.setting.Setting.check_full_dims), while the reduced recursion takes any D.
MAX_DIM = 4096
RANGE_SEP = ".."            # a family's range of a field: LO..HI (verify certify)


# ----- kinds: how a field is read ----------------------------------------------------------------------------------

def _int_text(name: str, text) -> int:
    """An integer written on the command line (``8``; ``+8``); ``8.0``, ``1e3`` and ``1_6`` are refused (Python's
    int() would read 1_6 as 16)."""
    t = str(text).strip()
    if not re.fullmatch(r"[+-]?[0-9]+", t):
        raise InvalidParameter(name, text, "must be an integer")
    return int(t)


def _number(name: str, value) -> Fraction:
    """A number read exactly (verify.model.numbers.exact: ``0.07`` is 7/100)."""
    return exact(value, name)


@dataclass(frozen=True)
class Kind:
    """How the fields of one kind are read: ``from_text`` reads what the user typed (a flag's value, a member of a
    family query, an end of a range), ``from_value`` what a program or a JSON file gives (make_setting's keyword:
    an int must be an int, not the string "8"); None where the field's own parser reads it in make_setting (a sigma
    or law spec, a JSON file, a choice: the value is handed over as it is). ``example``: a range ``LO..HI`` of this
    kind, for its error text (empty: the kind has no ranges)."""

    name: str
    from_text: Callable | None = None
    from_value: Callable | None = None
    example: str = ""

    def read_range(self, name: str, text) -> tuple:
        """``"8..512"`` -> (8, 512); one value -> (v, v); each end read by ``from_text``."""
        parts = str(text).split(RANGE_SEP)
        if not self.example or len(parts) > 2 or not all(p.strip() for p in parts):
            raise InvalidParameter(name, text, f"must be a value or a range LO{RANGE_SEP}HI (such as {self.example})")
        lo, hi = (self.from_text(name, p.strip()) for p in (parts * 2)[:2])
        if not lo <= hi:
            raise InvalidParameter(name, text, "must have LO <= HI")
        return lo, hi


KINDS = {k.name: k for k in (
    Kind("int", _int_text, check_int, example="8..512"),
    Kind("number", _number, _number, example="1/16..1/8"),     # a rational read exactly (0.07 is 7/100)
    Kind("text"), Kind("file"), Kind("choice"), Kind("flag"))}
REPLAY = ("", "always", "changed")


def is_range(text) -> bool:
    """Whether a typed value is a range LO..HI (a family) rather than one value."""
    return text is not None and RANGE_SEP in str(text)


def bound_text(name: str, iv: Interval) -> str:
    """An interval as a condition on ``name``: "D >= 1", "1 <= M <= 4096", "eta > 0" ("" when unbounded)."""
    f = lambda x: frac_str(Fraction(x))  # noqa: E731
    lo = None if iv.lo is None else f"{f(iv.lo)} {'<' if iv.lo_open else '<='} "
    hi = None if iv.hi is None else f" {'<' if iv.hi_open else '<='} {f(iv.hi)}"
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f"{name} {'>' if iv.lo_open else '>='} {f(iv.lo)}"
    return f"{lo or ''}{name}{hi}"


# ----- fields ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Field:
    """One user-level field of a setting.

    ``name``: the make_setting keyword and the click parameter name. ``flag``: the command-line flag (its name without
    the dashes is the regime-file key; None: a keyword of the Python API only). ``kind``: how it is read
    (:data:`KINDS`): "int", "number" (a rational, read exactly), "text" (a spec such as a sigma or a law), "file" (a
    JSON file or, from Python, the list itself), "choice" (one of ``choices``) or "flag" (a boolean switch).
    ``default``: make_setting's default. ``cli_default``: the option's default when it differs (None: implied by
    another option, said in ``help``). ``valid``: the values a number or an integer may take, an Interval checked by
    :meth:`check` (None: any), ``at_most`` the field that caps it (K <= D), ``why`` what the range means (said in the
    error). ``config``: the key of Setting.config() recording the field (None: not recorded as one value).
    ``replay``: how verify.model.flags writes it: "always", "changed" (when it differs from the default, or from the
    ``follows`` field's value) or "" (written by its own rule: sizes, supports, V*). ``convention``: whether it is a
    convention option (verify.model.convention: a whole run's, ``--convention FILE``). ``keyword``: the make_setting
    keyword when it is not ``name`` (``negated``: the flag sets it False). ``ranged``: a family may give it as a
    range LO..HI (verify certify), with ``family_help`` as the option's help there. ``what``, ``note`` and
    ``shown_default``: the row of docs/setting.md's options table (what the field is, what its values mean beyond
    ``valid`` and ``choices``, the default column when ``default`` alone does not say it). ``implied``: (another
    field, its values -> this field's value) when left out (:func:`with_implied`: a sinusoidal P is general).
    """

    name: str
    flag: str | None
    kind: str = "text"
    default: object = None
    help: str | None = None
    choices: tuple[str, ...] = ()
    cli_default: object = ...
    config: str | None = None
    replay: str = ""
    follows: str | None = None
    convention: bool = False
    keyword: str | None = None
    negated: bool = False
    valid: Interval | None = None
    at_most: str | None = None
    why: str = ""
    ranged: bool = False
    family_help: str | None = None
    what: str = ""
    note: str = ""
    shown_default: str | None = None
    implied: tuple = ()

    @property
    def setting_keyword(self) -> str:
        """The make_setting keyword the field sets (``wp_trainable`` for ``--freeze-wp``, else its name)."""
        return self.keyword or self.name

    @property
    def key(self) -> str | None:
        """The field's key in a regime file or a convention file: the flag without its dashes."""
        return None if self.flag is None else self.flag[2:]

    @property
    def option_default(self):
        """The click option's default (make_setting's unless ``cli_default`` says otherwise)."""
        return self.default if self.cli_default is ... else self.cli_default

    @property
    def shows_default(self) -> bool:
        """Whether ``--help`` shows the default: a field with a default of its own shows it."""
        return self.option_default is not None and self.kind != "flag"

    def interval(self, bounds: dict | None = None) -> Interval | None:
        """The valid values, with the cap ``at_most`` resolved from ``bounds`` (the other fields' values) when given."""
        iv = self.valid
        if iv is not None and self.at_most is not None and (bounds or {}).get(self.at_most) is not None:
            iv = iv.meet(Interval(None, bounds[self.at_most], iv.integer))
        return iv

    def range_text(self, bounds: dict | None = None) -> str:
        """The field's range as a condition ("0 <= K <= D", "eta > 0 (the GD step size)"; "" for any value), the cap
        ``at_most`` shown by its value when ``bounds`` gives it ("0 <= K <= 9")."""
        iv = self.interval(bounds)
        if iv is None:
            return ""
        if self.at_most is not None and (bounds or {}).get(self.at_most) is None:      # the cap named, not its value
            cond = f"{frac_str(Fraction(iv.lo))} <= {self.setting_keyword} <= {self.at_most}"
        else:
            cond = bound_text(self.setting_keyword, iv)
        return cond + (f" ({self.why})" if self.why else "")

    def valid_text(self, bounds: dict | None = None) -> str:
        """The one error text of a value outside the field's range: "must satisfy 0 <= K <= 9", "must satisfy eta > 0
        (the GD step size)"."""
        return f"must satisfy {self.range_text(bounds)}"

    def check(self, value, bounds: dict | None = None):
        """``value`` read by the field's kind (make_setting's keyword: an int, a rational) and checked against its
        range; InvalidParameter naming the make_setting keyword and the range otherwise. ``bounds``: the values of
        the fields that cap it (K <= D)."""
        read = KINDS[self.kind].from_value
        v = value if read is None else read(self.setting_keyword, value)
        iv = self.interval(bounds)
        if iv is not None and not iv.covers(Interval.point(v, iv.integer)):
            raise InvalidParameter(self.setting_keyword, value, self.valid_text(bounds))
        return v

    def read_text(self, text, bounds: dict | None = None):
        """A value as the user typed it (``--D 8`` for verify certify, a member ``D=8`` of a family query), read by
        the field's kind and checked against its range."""
        read = KINDS[self.kind].from_text
        return self.check(text if read is None else read(self.setting_keyword, text), bounds)

    def read_range(self, text) -> tuple:
        """A range ``LO..HI`` (or one value) of a family, each end read and checked as one value of the field."""
        lo, hi = KINDS[self.kind].read_range(self.setting_keyword, text)
        try:
            return self.check(lo), self.check(hi)
        except InvalidParameter as exc:         # an end out of range: echo the range as typed
            raise InvalidParameter(self.setting_keyword, text, exc.problems[0].valid) from None


POSITIVE = Interval(0, None, lo_open=True)
NON_NEGATIVE = Interval(0, None)


def counts(lo: int, hi: int | None = None) -> Interval:
    """The integers lo..hi (hi None: unbounded)."""
    return Interval(lo, hi, integer=True)


# The rows in the order of the options in --help, of a regime file's keys and of a replay command's flags; a row
# with no flag is a keyword of the Python API only (listed in docs/setting.md).
ROWS = (
    Field("D", "--D", "int", help="sequence length (number of tokens); required unless --regime FILE gives it",
          valid=counts(1), ranged=True, family_help="sequence length (number of tokens), or a range LO..HI: every "
          "integer length in it (a family)", what="sequence length D", shown_default="required",
          note=f"1 … {MAX_DIM} where a D × D array is built (the full-matrix engines)"),
    Field("K", "--K", "int", help="support size of each column of S*", valid=counts(0), at_most="D",
          what="support size K", shown_default="from the supports"),
    Field("N", "--N", "int", help="number of output columns (query positions)", valid=counts(1), at_most="D",
          what="output columns N", shown_default="from the supports", note="the number of S\\* columns"),
    Field("M", "--M", "int", 1, "output dimension (rows of V*)", config="M", replay="changed",
          valid=counts(1, MAX_DIM), what="output dimension M"),
    Field("d", "--d", "int", 1, "feature dimension", config="d", replay="changed", valid=counts(1, MAX_DIM),
          what="feature dimension d"),
    Field("eta", "--eta", "number", "1/10", "step size (read exactly: 0.07 is 7/100)", config="eta_v",
          replay="always", valid=POSITIVE, why="the GD step size", ranged=True, what="step size η_V (and η)"),
    Field("eta_kq", "--eta-kq", "number", None, "separate step size for W_KQ (default: --eta)", config="eta_kq",
          replay="changed", follows="eta_v", valid=POSITIVE, why="the W_KQ step size", ranged=True,
          what="step size of W_KQ", shown_default="η"),
    Field("query", None, "file", what="query positions q(j)", shown_default="q(j) = j", note="N distinct positions"),
    Field("supports", "--supports", "file", help="JSON file: list of 0-based index lists, one per column of S*",
          what="supports of S\\*", shown_default="— (give this or a preset)", note="list of index lists"),
    Field("preset", "--preset", "choice", choices=("cnn", "gcn", "sts", "gslp"), what="teacher preset"),
    Field("sstar_weights", None, "file", what="non-uniform weights of S\\*", shown_default="uniform 1/K",
          note="per column, K positive weights summing to 1"),
    Field("vstar", "--vstar", "file", help="JSON file: V* as a list of M rows of d numbers", what="V\\* given",
          note="M rows of d numbers (list or JSON file)"),
    Field("vstar_norm", "--vstar-norm", "number", help="random V* (seeded) with this Frobenius norm",
          config="vstar_norm", valid=POSITIVE, why="the Frobenius norm of the random V*", ranged=True,
          what="V\\* drawn", shown_default="`1` when `vstar` is not given",
          note="a seeded Gaussian M×d matrix rescaled to this ‖V\\*‖_F"),
    Field("seed", "--seed", "int", 0, config="seed", replay="changed", valid=counts(0), what="seed",
          note="seeds the random V\\*, a random P permutation and a random initialisation"),
    Field("sigma", "--sigma", "text", "identity", config="sigma", replay="changed", convention=True, what="σ",
          note="a registered family ([Sigma families](#sigma-families))"),
    Field("data", "--data", "text", "gaussian", config="data", replay="changed", convention=True, what="data model",
          note="`gaussian` (i.i.d. entries of the entry law), `digits`, `gaussian:digits`, `gaussian:digits-pixels`, "
               "`gaussian:digits-tokens` ([Data models](#data-models))"),
    Field("law", "--law", "text", "gaussian", "gaussian | rademacher | student-t:NU | gumbel | exponential | uniform "
          "(standardised)", config="law", replay="changed", convention=True, what="entry law",
          note="`gaussian`, `rademacher`, `student-t:NU` (NU > 2), `gumbel`, `exponential`, `uniform`, each "
               "standardised"),
    Field("law_mean", "--law-mean", "number", "0", config="law_mean", replay="changed", convention=True,
          what="entry mean μ", note="any"),
    Field("law_var", "--law-var", "number", "1", config="law_var", replay="changed", convention=True,
          valid=POSITIVE, why="the variance of an entry", what="entry variance v"),
    Field("noise_sd", "--noise-sd", "number", "0", config="noise_sd", replay="changed", convention=True,
          valid=NON_NEGATIVE, why="the standard deviation of the label noise", what="label noise σ_ε"),
    Field("loss", "--loss", "choice", "sum", choices=("sum", "mean"), config="loss", replay="changed",
          convention=True, what="loss normalisation c_L", shown_default="`sum` (c_L = 1)",
          note="`sum`, `mean` (c_L = 1/(M N))"),
    Field("p_kind", "--p-kind", "choice", "identity", choices=("identity", "permutation", "sinusoidal"),
          config="p_kind", replay="changed", convention=True, what="kind of P",
          note="`identity`, `permutation` (seeded), `sinusoidal` (unnormalised, needs `p_structure=general`), "
               "`explicit` (Python only, with `p_matrix`)"),
    Field("p_matrix", None, "file", what="explicit P", note="a D×D matrix, with `p_kind=\"explicit\"`"),
    Field("p_structure", "--p-structure", "choice", "orthogonal", "default: what --p-kind implies (general for "
          "sinusoidal, orthogonal otherwise)", choices=("orthogonal", "general"), cli_default=None,
          config="p_structure", replay="changed", convention=True, what="structure of P",
          shown_default="`orthogonal` (PᵀP = λI)", implied=("p_kind", (("sinusoidal", "general"),))),
    Field("p_lambda", "--p-lambda", "number", "1", "P^T P = lambda I", config="p_lambda", replay="changed",
          convention=True, valid=POSITIVE, why="P^T P = lambda I", what="scale of P"),
    Field("beta", "--beta", "number", "1", "logit temperature: the logits are beta P^T W_KQ p_q(j) (read exactly)",
          config="beta", replay="changed", convention=True, valid=POSITIVE,
          why="the logit temperature: logits beta P^T W_KQ p_q", what="logit temperature β"),
    Field("init", "--init", "choice", "zero", choices=("zero", "random"), config="init", replay="changed",
          convention=True, what="initialisation",
          note="`zero`, `random` (seeded Gaussian W_X, W_KQ and, where its kernel allows, W_P)"),
    Field("init_scale", "--init-scale", "number", "0", config="init_scale", replay="changed", convention=True,
          valid=NON_NEGATIVE, why="the scale of a random start", what="scale of a random start",
          note="> 0 with `init=random`, 0 with `init=zero`"),
    Field("relu_at_zero", "--relu-at-zero", "choice", "radial", choices=("radial", "error"), config="relu_at_zero",
          replay="changed", convention=True, what="ReLU at W_X = 0",
          note="`radial` (the one-sided derivative along V\\*), `error` (refuse a zero start)"),
    Field("freeze_wp", "--freeze-wp", "flag", False, "keep W_P at 0 (wp_trainable = False)", convention=True,
          keyword="wp_trainable", negated=True, what="train W_P", shown_default="True", note="True, False"),
)

# The fields with a flag (the command line's, a regime file's): every consumer below loops over these.
FIELDS = tuple(f for f in ROWS if f.flag is not None)
BY_NAME = {f.name: f for f in FIELDS}
# A field by its make_setting keyword (wp_trainable -> the --freeze-wp field), its flag or its file key.
BY_KEYWORD = {f.setting_keyword: f for f in FIELDS}
BY_KEY = {f.key: f for f in FIELDS}
# make_setting's default of every field that has one (the reference convention of docs/setting.md).
DEFAULTS = {f.name: f.default for f in FIELDS if f.kind != "flag"}
# The convention options: make_setting keyword -> flag, in the table's order (verify.model.convention.KEYWORDS).
CONVENTION_FLAGS = {f.setting_keyword: f.flag for f in FIELDS if f.convention}
# The API names that differ from a field's flag name (Setting.config()'s eta_v, make_setting's wp_trainable) ->
# the field's name (the click parameter): how an error naming one is shown as the flag (verify.cli.options).
API_NAMES = {alias: f.name for f in FIELDS for alias in (f.config, f.setting_keyword) if alias not in (None, f.name)}
# The keywords of the Python API only (no flag): an error naming one has no flag to show (verify.cli.options).
API_ONLY = tuple(f.name for f in ROWS if f.flag is None)
# The field names of each kind, in the table's order (the axes of a sweep, the numbers a convention reads exactly).
OF_KIND = {kind: tuple(f.name for f in FIELDS if f.kind == kind) for kind in KINDS}
# The fields a family may give as a range LO..HI (verify certify, verify.certify.family).
RANGED = tuple(f.name for f in FIELDS if f.ranged)
# The fields a replay command writes, in the order it writes them.
REPLAYED = tuple(f for f in FIELDS if f.replay)


def with_implied(keywords: dict) -> dict:
    """``keywords`` with each field left out (absent or None) that another's value implies set to it (``p_kind =
    sinusoidal`` implies ``p_structure = general``: sinusoidal encodings are not orthogonal)."""
    out = dict(keywords)
    for f in FIELDS:
        if f.implied and out.get(f.name) is None:
            source, values = f.implied
            if out.get(source) in dict(values):
                out[f.name] = dict(values)[out[source]]
    return out


def flag_args(keywords: dict) -> dict:
    """make_setting's keywords from the fields' click parameters (``freeze_wp`` -> ``wp_trainable = False``)."""
    out = dict(keywords)
    for f in FIELDS:
        if f.keyword is not None and f.name in out:
            value = out.pop(f.name)
            out[f.keyword] = (not value) if f.negated else value
    return out


__all__ = ["Field", "Kind", "FIELDS", "ROWS", "BY_NAME", "BY_KEYWORD", "BY_KEY", "DEFAULTS", "REPLAYED",
           "CONVENTION_FLAGS", "API_NAMES", "API_ONLY", "OF_KIND", "KINDS", "REPLAY", "RANGED", "MAX_DIM",
           "bound_text", "is_range", "flag_args", "with_implied"]
