"""``verify fuzz [--claim ID] [--examples N] [--seed S] [--json]``: search regimes for counterexamples."""
from __future__ import annotations

import json

import click

from .options import handle_errors


@click.command("fuzz")
@click.option("--claim", "claims", multiple=True, help="claim id (repeatable; default: every per-regime claim)")
@click.option("--examples", type=int, default=100, show_default=True, help="Hypothesis max_examples per claim")
@click.option("--seed", type=int, default=None, help="fixed Hypothesis seed: a reproducible run (the example database is then not used)")
@click.option("--no-db", is_flag=True, help="do not read or write the example database fuzz-db/")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per claim (a list when several)")
@handle_errors
def fuzz_cmd(claims, examples, seed, no_db, as_json):
    """Fuzz claims over valid regimes (and the pseudo-claim invalid-parameters over invalid inputs)."""
    from ..fuzz import DEFAULT_DB, claim_ids, fuzz
    ids = list(claims) or claim_ids()
    results = [fuzz(c, examples, seed, None if no_db else DEFAULT_DB) for c in ids]
    if as_json:
        click.echo(json.dumps(results[0] if len(results) == 1 else results, indent=1))
        return
    for r in results:
        status = "FALSIFIED" if r["falsified"] else "survived"
        click.echo(f"{r['claim']}: {status} after {r['examples']} examples ({r['seconds']} s)")
        if r["falsified"]:
            click.echo(f"  minimal counterexample: {json.dumps(r['counterexample'])}")
            click.echo(f"  detail: {r['detail']}")
            click.echo(f"  replay: {r['replay']}")
