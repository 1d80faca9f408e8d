"""The one table of a setting's user-level fields: for each, its make_setting keyword, its flag, how it is read, its
default, its help text and how a replay command writes it.

Everything that spells a field for the user is derived from this table: the click options of every command that
builds a regime (verify.cli.specs), the keys of a ``--regime`` file (verify.cli.regime: the flag without its dashes),
make_setting's defaults (verify.model.setting), and the replay command (verify.model.flags). Adding a field is one
row here (CONTRIBUTING.md, "How to add a setting field"). The table is plain data (no click), so the model layer
owns it; the help texts that list a registry (``--sigma``, ``--data``) are added by verify.cli.specs, which may read
the registries.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """One user-level field of a setting.

    ``name``: the make_setting keyword and the click parameter name. ``flag``: the command-line flag (its name without
    the dashes is the regime-file key). ``kind``: how the command line reads it: "int", "number" (a rational, handed to
    make_setting as written and read exactly there), "text" (a spec such as a sigma or a law), "file" (a JSON file or,
    from Python, the list itself), "choice" (one of ``choices``) or "flag" (a boolean switch).
    ``default``: make_setting's default. ``cli_default``: the option's default when it differs (None: implied by
    another option, said in ``help``). ``config``: the key of Setting.config() recording the field (None: not
    recorded as one value). ``replay``: how verify.model.flags writes it: "always", "changed" (when it differs from
    the default, or from the ``follows`` field's value) or "" (written by its own rule: sizes, supports, V*).
    ``convention``: whether it is a convention option (verify.model.convention: a whole run's, ``--convention FILE``).
    ``keyword``: the make_setting keyword when it is not ``name``.
    """

    name: str
    flag: str
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

    @property
    def setting_keyword(self) -> str:
        """The make_setting keyword the field sets (``wp_trainable`` for ``--freeze-wp``, else its name)."""
        return self.keyword or self.name

    @property
    def option_default(self):
        """The click option's default (make_setting's unless ``cli_default`` says otherwise)."""
        return self.default if self.cli_default is ... else self.cli_default

    @property
    def shows_default(self) -> bool:
        """Whether ``--help`` shows the default: a field with a default of its own shows it."""
        return self.option_default is not None and self.kind != "flag"


KINDS = ("int", "number", "text", "file", "choice", "flag")
REPLAY = ("", "always", "changed")

FIELDS = (
    Field("D", "--D", "int", help="sequence length (number of tokens); required unless --regime FILE gives it"),
    Field("K", "--K", "int", help="support size of each column of S*"),
    Field("N", "--N", "int", help="number of output columns (query positions)"),
    Field("M", "--M", "int", 1, "output dimension (rows of V*)", config="M", replay="changed"),
    Field("d", "--d", "int", 1, "feature dimension", config="d", replay="changed"),
    Field("eta", "--eta", "number", "1/10", "step size (read exactly: 0.07 is 7/100)", config="eta_v", replay="always"),
    Field("eta_kq", "--eta-kq", "number", None, "separate step size for W_KQ (default: --eta)", config="eta_kq",
          replay="changed", follows="eta_v"),
    Field("supports", "--supports", "file", help="JSON file: list of 0-based index lists, one per column of S*"),
    Field("preset", "--preset", "choice", choices=("cnn", "gcn", "sts", "gslp")),
    Field("vstar", "--vstar", "file", help="JSON file: V* as a list of M rows of d numbers"),
    Field("vstar_norm", "--vstar-norm", "number", help="random V* (seeded) with this Frobenius norm"),
    Field("seed", "--seed", "int", 0, config="seed", replay="changed"),
    Field("sigma", "--sigma", "text", "identity", config="sigma", replay="changed", convention=True),
    Field("data", "--data", "text", "gaussian", config="data", replay="changed", convention=True),
    Field("law", "--law", "text", "gaussian", "gaussian | rademacher | student-t:NU | gumbel | exponential | uniform "
          "(standardised)", config="law", replay="changed", convention=True),
    Field("law_mean", "--law-mean", "number", "0", config="law_mean", replay="changed", convention=True),
    Field("law_var", "--law-var", "number", "1", config="law_var", replay="changed", convention=True),
    Field("noise_sd", "--noise-sd", "number", "0", config="noise_sd", replay="changed", convention=True),
    Field("loss", "--loss", "choice", "sum", choices=("sum", "mean"), config="loss", replay="changed", convention=True),
    Field("p_kind", "--p-kind", "choice", "identity", choices=("identity", "permutation", "sinusoidal"),
          config="p_kind", replay="changed", convention=True),
    Field("p_structure", "--p-structure", "choice", "orthogonal", "default: what --p-kind implies (general for "
          "sinusoidal, orthogonal otherwise)", choices=("orthogonal", "general"), cli_default=None,
          config="p_structure", replay="changed", convention=True),
    Field("p_lambda", "--p-lambda", "number", "1", "P^T P = lambda I", config="p_lambda", replay="changed", convention=True),
    Field("beta", "--beta", "number", "1", "logit temperature: the logits are beta P^T W_KQ p_q(j) (read exactly)",
          config="beta", replay="changed", convention=True),
    Field("init", "--init", "choice", "zero", choices=("zero", "random"), config="init", replay="changed", convention=True),
    Field("init_scale", "--init-scale", "number", "0", config="init_scale", replay="changed", convention=True),
    Field("relu_at_zero", "--relu-at-zero", "choice", "radial", choices=("radial", "error"), config="relu_at_zero",
          replay="changed", convention=True),
    Field("freeze_wp", "--freeze-wp", "flag", False, "keep W_P at 0 (wp_trainable = False)", convention=True,
          keyword="wp_trainable"),
)

BY_NAME = {f.name: f for f in FIELDS}
# make_setting's default of every field that has one (the reference convention of docs/setting.md).
DEFAULTS = {f.name: f.default for f in FIELDS if f.kind != "flag"}
# The convention options: make_setting keyword -> flag, in the table's order (verify.model.convention.KEYWORDS).
CONVENTION_FLAGS = {f.setting_keyword: f.flag for f in FIELDS if f.convention}
# The API names that differ from a field's flag name (Setting.config()'s eta_v, make_setting's wp_trainable) ->
# the field's name (the click parameter): how an error naming one is shown as the flag (verify.cli.options).
API_NAMES = {alias: f.name for f in FIELDS for alias in (f.config, f.setting_keyword) if alias not in (None, f.name)}
# The field names of each kind, in the table's order (the axes of a sweep, the numbers a convention reads exactly).
OF_KIND = {kind: tuple(f.name for f in FIELDS if f.kind == kind) for kind in KINDS}
# The fields a replay command writes, in the order it writes them.
REPLAYED = tuple(f for f in FIELDS if f.replay)

__all__ = ["Field", "FIELDS", "BY_NAME", "DEFAULTS", "REPLAYED", "CONVENTION_FLAGS", "API_NAMES", "OF_KIND", "KINDS", "REPLAY"]
