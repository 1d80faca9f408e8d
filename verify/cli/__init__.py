"""The ``verify`` command line: one sub-command per module in this package."""
from __future__ import annotations

import importlib

import click

# (module, attribute) of each sub-command, in the order ``verify --help`` lists them.
COMMANDS = [
    ("run", "run_cmd"),
    ("derive", "derive_cmd"),
    ("check", "check_cmd"),
    ("probe", "probe_cmd"),
    ("fuzz", "fuzz_cmd"),
    ("bench", "bench_cmd"),
    ("all", "all_cmd"),
    ("sweep", "sweep_cmd"),
    ("report", "report_cmd"),
    ("reconcile", "reconcile_cmd"),
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="verify")
def main():
    """Check, regime by regime, the proofs of 'Transformers trained via GD can provably learn a
    class of teacher models' (Zhang, Zhao, Gu, Cao 2026) under the setting of docs/setting.md."""


for _mod, _attr in COMMANDS:
    main.add_command(getattr(importlib.import_module(f"{__name__}.{_mod}"), _attr))
