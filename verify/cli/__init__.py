"""The ``verify`` command line: one sub-command per module in this package."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import click

from .group import OneLineGroup

# (module, attribute) of each sub-command, in the order ``verify --help`` lists them.
COMMANDS = [
    ("run", "run_cmd"),
    ("derive", "derive_cmd"),
    ("check", "check_cmd"),
    ("certify", "certify_cmd"),
    ("atlas", "atlas_cmd"),
    ("probe", "probe_cmd"),
    ("fuzz", "fuzz_cmd"),
    ("bench", "bench_cmd"),
    ("all", "all_cmd"),
    ("sweep", "sweep_cmd"),
    ("report", "report_cmd"),
    ("compare", "compare_cmd"),
    ("reconcile", "reconcile_cmd"),
    ("export", "export_cmd"),
    ("prove", "prove_cmd"),
]


def short_help(name: str, attr: str, limit: int = 45) -> str:
    """The one-line help ``verify --help`` lists for the sub-command ``name``: the first sentence of its function's
    docstring (as click shortens it), read from the module's source, so listing the sub-commands imports none of
    them (and none of what they load: the model, numpy, SymPy)."""
    tree = ast.parse((Path(__file__).parent / f"{name}.py").read_text(encoding="utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == attr)
    return click.Command(name, help=ast.get_docstring(fn) or "").get_short_help_str(limit)


class LazyGroup(OneLineGroup):
    """The sub-commands of COMMANDS, each imported when it is first asked for: ``verify certify ...`` loads the
    certify module and what it needs, not every sub-command's; ``verify --help`` lists them from their sources
    (:func:`short_help`) and imports none."""

    def list_commands(self, ctx):
        return [name for name, _ in COMMANDS]

    def format_commands(self, ctx, formatter):
        limit = formatter.width - 6 - max(len(name) for name, _ in COMMANDS)
        rows = [(name, short_help(name, attr, limit)) for name, attr in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx, name):
        attr = dict(COMMANDS).get(name)
        if attr is None:
            return None
        return getattr(importlib.import_module(f"{__name__}.{name}"), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Invalid input: one line naming the flag, exit status 2. Numerical trouble (a float64 run "
                    "overflowed or became NaN): one line with the step, the quantity and what to try, exit status 3. "
                    "An output that could not be written although its place was checked first (a full disk): one "
                    "line saying where the computed work was kept, exit status 4. A verify all whose parts did not all finish: "
                    "each named on stderr with why, and the command that resumes it, exit status 5. Ctrl-C: the work stops cleanly, "
                    "one line says what was saved (verify all and verify sweep resume from it), exit status 130.")
@click.version_option(package_name="verify")
def main():
    """Check, regime by regime, the proofs of 'Transformers trained via GD can provably learn a
    class of teacher models' (Zhang, Zhao, Gu, Cao 2026) under the setting of docs/setting.md."""

