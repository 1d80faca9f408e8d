"""``verify fuzz [--claim ID] [--examples N] [--seed S] [--json]``: search regimes for counterexamples."""
from __future__ import annotations

import json

import click

from .options import handle_errors


def regime_text(counterexample: dict) -> str:
    """A counterexample regime as ``key=value`` pairs (not a Python or JSON dict)."""
    setting = counterexample.get("setting", {})
    parts = [f"{k}={v}" for k, v in setting.items()] + [f"{k}={v}" for k, v in counterexample.items() if k != "setting"]
    return " ".join(parts)


@click.command("fuzz")
@click.option("--claim", "claims", multiple=True, help="claim id (repeatable; default: every per-regime claim)")
@click.option("--examples", type=click.IntRange(1, 100_000), default=100, show_default=True,
              help="Hypothesis max_examples per claim")
@click.option("--seed", type=click.IntRange(0), default=None,
              help="fixed Hypothesis seed: a reproducible run (the example database is then not used)")
@click.option("--no-db", is_flag=True, help="do not read or write the example database fuzz-db/")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per claim (a list when several)")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def fuzz_cmd(claims, examples, seed, no_db, as_json, quiet):
    """Fuzz claims over valid regimes (and the pseudo-claim invalid-parameters over invalid inputs)."""
    from ..errors import InvalidParameter
    from ..fuzz import DEFAULT_DB, claim_ids, fuzz
    from .progress import progress
    ids = list(claims) or claim_ids()
    unknown = [c for c in ids if c not in claim_ids()]
    if unknown:          # every id checked before any claim is fuzzed
        raise InvalidParameter.combine([InvalidParameter("claim", c, f"must be one of {', '.join(claim_ids())}")
                                        for c in unknown])
    results = []
    with progress("verify fuzz", len(ids), quiet) as bar:
        for c in ids:
            bar.update(description=f"fuzz: {c}")
            results.append(fuzz(c, examples, seed, None if no_db else DEFAULT_DB))
            bar.advance()
    if as_json:
        click.echo(json.dumps(results[0] if len(results) == 1 else results, indent=1))
        return
    for r in results:
        status = "FALSIFIED" if r["falsified"] else "survived"
        click.echo(f"{r['claim']}: {status} after {r['examples']} examples ({r['seconds']} s)")
        if r["falsified"]:
            click.echo(f"  minimal counterexample: {regime_text(r['counterexample'])}")
            click.echo(f"  detail: {r['detail']}")
            click.echo(f"  replay: {r['replay']}")
