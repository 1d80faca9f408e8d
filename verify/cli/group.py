"""The ``verify`` group's own machinery, kept apart from the regime options (verify.cli.options, which load the
model and numpy) so that ``verify --help`` loads neither: the one-line usage error, the check of the typed tokens,
and the group class."""
from __future__ import annotations

import unicodedata

import click


class CliError(click.ClickException):
    """What the user reads: ``Error: <one line>`` on stderr, exit status 2 (3: numerical trouble)."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(" ".join(str(message).split()))   # one line, whatever the message held
        self.exit_code = exit_code


# Characters a word processor or a web page puts where two hyphens were typed ("—D 8").
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
NUMERIC_TYPES = (click.types.IntParamType, click.types.FloatParamType)


def check_tokens(cmd: click.Command, args: list[str]) -> None:
    """Refuse, before click parses ``args``, what it would read silently or wrongly: an option typed with a
    dash-like character (click would look for the option it then misses), a value option given twice (click
    keeps the last) and a number with '_' separators (Python's int() reads 1_0 as 10)."""
    opts = {o: p for p in cmd.params if isinstance(p, click.Option) for o in p.opts + p.secondary_opts}
    seen: dict = {}
    i = 0
    while i < len(args):
        tok = args[i]
        if tok == "--":
            return
        dash = next((c for c in tok[:2] if c in DASHES), None)
        if dash is not None:
            fixed = "--" + tok.lstrip("-" + DASHES)
            raise CliError(f"{tok} starts with {unicodedata.name(dash).lower()} (U+{ord(dash):04X}), not two hyphens: "
                           f"type {fixed} (see 'verify {cmd.name} --help')")
        name, eq, inline = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        p = opts.get(name)
        if p is None or p.is_flag or p.count:
            i += 1
            continue
        value = inline if eq else (args[i + 1] if i + 1 < len(args) else None)
        i += 1 if eq else 2
        if value is not None and "_" in value and isinstance(p.type, NUMERIC_TYPES):
            raise CliError(f"invalid {name} {value}: must be written without '_' separators (Python would read it "
                           f"as {value.replace('_', '')})")
        if not p.multiple and p.name in seen and value is not None:
            first, flag = seen[p.name]
            raise CliError(f"{flag} is given twice ({flag} {first} and {name} {value}); give it once"
                           + (" (a comma-separated list holds several values)" if "," in (p.help or "") else ""))
        seen[p.name] = (value, name)


class OneLineGroup(click.Group):
    """A click group whose usage errors (bad type, unknown option, missing value) print one line too, and
    whose sub-commands' arguments are checked by :func:`check_tokens` first."""

    def resolve_command(self, ctx, args):
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None and not ctx.resilient_parsing:
            check_tokens(cmd, rest)
        return name, cmd, rest

    @staticmethod
    def _one_line(exc: click.UsageError) -> CliError:
        where = exc.ctx.command_path if exc.ctx is not None else "verify"
        return CliError(f"{exc.format_message()} (see '{where} --help')", exc.exit_code)

    def make_context(self, *a, **k):
        try:
            return super().make_context(*a, **k)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise self._one_line(exc) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise self._one_line(exc) from None


__all__ = ["CliError", "OneLineGroup", "check_tokens", "DASHES"]
