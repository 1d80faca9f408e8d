"""``verify fuzz [--claim ID] [--examples N] [--seed S] [--db PATH | --no-db] [--json]``: search regimes for
counterexamples, report each claim's verdict, what was discarded and why, and whether a counterexample is new
or replayed from the database."""
from __future__ import annotations

import json

import click

from ..errors import InvalidParameter, suggest
from .options import EXIT_OUTPUT, CliError, check_writable_dir, handle_errors
from .progress import progress


def regime_text(counterexample: dict) -> str:
    """A counterexample regime as ``key=value`` pairs (not a Python or JSON dict)."""
    setting = counterexample.get("setting", {})
    parts = [f"{k}={v}" for k, v in setting.items()] + [f"{k}={v}" for k, v in counterexample.items() if k != "setting"]
    return " ".join(parts)


def _lines(r: dict) -> list[str]:
    """The text report of one fuzz result."""
    disc = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in r["discarded"].items() if v) or "none"
    seed = f"seed {r['seed']}" + (" (drawn)" if r["seed_drawn"] else "")
    out = [f"{r['claim']}: {r['verdict'].upper()} - {r['decision']['reason']}",
           f"  {seed}; {r['examples']} regimes checked of {r['generated']} generated; discarded {r['discarded_total']} "
           f"({r['discarded_fraction']:.0%}; at most {r['max_discarded_fraction']:.0%} for support): {disc}"]
    if r["falsified"]:
        origin = "replayed from the database" if r["replayed"] else "new, found by this search"
        rc = r["replay_check"] or {}
        out += [f"  counterexample, {origin}: {regime_text(r['counterexample'])}",
                f"  detail: {r['detail']}",
                f"  fails again at {rc.get('horizon')} steps: {rc.get('detail')}",
                f"  replay: {r['replay']}"]
    if r.get("crash"):
        out += [f"  the check crashed: {r['crash']['detail']}", f"  regime: {regime_text(r['crash']['regime'])}"]
    nr = r["first_discarded"].get("not_replayed")
    if nr:
        out.append(f"  a failure did not replay at {nr['replay_check']['horizon']} steps (not a counterexample): "
                   f"{regime_text(nr['regime'])}")
    db = r["database"]
    out.append(f"  database: {db['path']} ({db['loaded']} replayed, {db['still_failing']} still failing, "
               f"{db['cleared']} cleared{', new failure saved' if db['saved'] else ''})" if db["path"] else
               "  database: not used")
    out.append(f"  rerun: {r['rerun']}   ({r['seconds']} s)")
    return out


@click.command("fuzz")
@click.option("--claim", "claims", multiple=True, help="claim id (repeatable; default: every per-regime claim)")
@click.option("--examples", type=click.IntRange(1, 100_000), default=100, show_default=True,
              help="regimes to check per claim (Hypothesis max_examples; discarded ones come on top)")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=None,
              help="Hypothesis seed (0 .. 2^32-1); default: drawn and printed, so every run can be replayed")
@click.option("--db", "db", default=None, metavar="PATH",
              help="counterexample database (default: .cache/verify/fuzz-db at the project root, gitignored)")
@click.option("--no-db", is_flag=True, help="neither replay nor save counterexamples")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per claim (a list when several)")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def fuzz_cmd(claims, examples, seed, db, no_db, as_json, quiet):
    """Fuzz claims over regimes inside their hypotheses (and the pseudo-claim invalid-parameters over invalid
    inputs); each claim's verdict is decided from the search's evidence (verify.evidence)."""
    from ..fuzz import DEFAULT_DB, claim_ids, fuzz  # heavy: loads hypothesis
    if db is not None and no_db:
        raise InvalidParameter("db", db, "must not be given with --no-db")
    ids = list(claims) or claim_ids()
    unknown = [c for c in ids if c not in claim_ids()]
    if unknown:          # every id checked before any claim is fuzzed
        raise InvalidParameter.combine([InvalidParameter("claim", c, f"must be one of {', '.join(claim_ids())}"
                                                         + suggest(c, claim_ids())) for c in unknown])
    database = None if no_db else (db if db is not None else DEFAULT_DB)
    if database is not None:
        check_writable_dir("--db", database)     # before the search, so that what it finds can be kept
    results = []
    with progress("verify fuzz (examples)", len(ids) * examples, quiet) as bar:
        for i, c in enumerate(ids):
            bar.update(completed=i * examples, description=f"fuzz: {c}")

            def tick(judged, shrinking, base=i * examples, c=c):
                # Hypothesis may draw a few more than --examples (discards): the count stops at the claim's share
                bar.update(completed=base + min(judged, examples),
                           description=f"fuzz: {c}" + (" (shrinking the counterexample)" if shrinking else ""))
            results.append(fuzz(c, examples, seed, database, progress=tick))
            bar.update(completed=(i + 1) * examples)
    if as_json:
        click.echo(json.dumps(results[0] if len(results) == 1 else results, indent=1))
    else:
        for r in results:
            click.echo("\n".join(_lines(r)))
    unsaved = [r for r in results if r["database"].get("save_error")]
    if unsaved:
        raise CliError("; ".join(f"the counterexample of {r['claim']} {r['database']['save_error']}" for r in unsaved)
                       + " (it is printed above, with its replay command)", exit_code=EXIT_OUTPUT)
