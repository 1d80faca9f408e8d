"""The click options that define a regime, built from the field table (verify.model.spec): (flag, keyword, click
settings) of each, with the help texts of ``--sigma`` and ``--data`` (read from their registries). Read by the shared options (verify.cli.options, which builds the click options from it)
and by the regime files (verify.cli.regime: a file's keys are the flags without their dashes), so neither imports
the other's module for it.
"""
from __future__ import annotations

import click

from ..model.data import data_models
from ..errors import InvalidParameter
from ..model.spec import DEFAULTS, FIELDS, KINDS, Field
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


# click keywords read from a registry (the sigma families, the data models), laid over a field's own: the table in
# verify.model.spec is plain data and reads no registry.
REGISTRY_KWARGS = {"sigma": {"help": SIGMA_HELP}, "data": _data_kwargs(DEFAULTS["data"], DATA_HELP)}


class FieldInteger(click.types.IntParamType):
    """An integer field's click type: the value read by the field's kind (verify.model.spec), so a value that is not
    an integer is refused with the field's range ("must be an integer, D >= 1")."""

    def __init__(self, field: Field):
        self.field = field

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return KINDS["int"].from_text(self.field.name, value)
        except InvalidParameter as exc:
            self.fail(f"{value!r}: {exc.valid} ({self.field.range_text()})", param, ctx)


def _click_kwargs(f: Field) -> dict:
    """click keywords of one field's option, from its row of verify.model.spec.FIELDS."""
    if f.kind == "flag":
        return {"is_flag": True, "help": f.help}
    kw = {"type": FieldInteger(f)} if f.kind == "int" else {"type": click.Choice(list(f.choices))} \
        if f.kind == "choice" else {}
    kw["default"] = f.option_default
    if f.shows_default:
        kw["show_default"] = True
    if f.help is not None:
        kw["help"] = f.help
    return kw | REGISTRY_KWARGS.get(f.name, {})


# (flag, keyword of the command, click keywords) of every option that defines a regime, one per row of
# verify.model.spec.FIELDS. The flag without its dashes is also the key of a regime file (verify.cli.regime).
SETTING_SPECS = [(f.flag, f.name, _click_kwargs(f)) for f in FIELDS]


def _family_kwargs(f: Field, kw: dict) -> dict:
    """A field's click keywords for ``verify certify``, where a ranged field may be a range LO..HI (a family): read
    as text (verify.model.spec.Field.read_range), with the field's ``family_help`` when it has one."""
    if not f.ranged:
        return kw
    kw = {k: v for k, v in kw.items() if k != "type"}
    return kw | ({"help": f.family_help} if f.family_help else {})


# The regime options of verify certify: the ranged fields read as text (one value or a range LO..HI).
FAMILY_SPECS = [(f.flag, f.name, _family_kwargs(f, kw)) for f, (_, _, kw) in zip(FIELDS, SETTING_SPECS)]


REGIME_META = "verify.regime"     # click context meta: the regime file in use and the options it gave
