"""``verify check``: run the paper's claims (the lemmas/ registry) and print their verdicts."""
from __future__ import annotations

import json
import math
from importlib import resources

import click

from .options import handle_errors

SCHEMA = "check.schema.json"


def load_schema() -> dict:
    return json.loads(resources.files("verify").joinpath("schemas", SCHEMA).read_text())


def _jsonable(x):
    """Evidence values as JSON: numpy scalars to Python numbers, non-finite floats to strings."""
    import numpy as np
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return str(x)


def check_results(ids, profile: str = "ci", tick=None) -> list[dict]:
    """Run the claims ``ids`` (all when empty) and return their JSON-ready results, validated.
    ``tick(id, result)`` is called after each claim (progress)."""
    import jsonschema

    from lemmas import REGISTRY
    from ..errors import InvalidParameter
    ids = list(ids) or list(REGISTRY)
    unknown = [i for i in ids if i not in REGISTRY]
    if unknown:
        raise InvalidParameter.combine([InvalidParameter("ID", u, f"must be one of {', '.join(REGISTRY)}")
                                        for u in unknown])
    out = []
    for i in ids:
        out.append(_jsonable(REGISTRY[i].run(profile).as_dict()))
        if tick is not None:
            tick(i, out[-1])
    jsonschema.validate(out, load_schema())
    return out


def summary_table(results: list[dict]):
    """A rich table: one row per claim (id, verdict, statement), and the count of each verdict."""
    from collections import Counter

    from rich.table import Table
    t = Table(title="verify check: verdicts", title_justify="left")
    t.add_column("claim", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("statement", overflow="fold")
    for r in results:
        t.add_row(r["id"], r["verdict"], r["statement"])
    counts = Counter(r["verdict"] for r in results)
    t.caption = ", ".join(f"{n} {v}" for v, n in counts.most_common())
    return t


@click.command("check")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="budget: ci (minutes for all claims), dev, deep (long horizons, more samples)")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list (schema verify/schemas/check.schema.json)")
@click.option("--list", "list_only", is_flag=True, help="list the claim ids and statements, run nothing")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def check_cmd(ids, profile, as_json, list_only, quiet):
    """Run the paper's claims (all, or the IDs given) and print each verdict with its evidence,
    then a summary table of the verdicts."""
    from lemmas import REGISTRY
    from .progress import progress
    if list_only:
        for cid, c in REGISTRY.items():
            click.echo(f"{cid:28s} {c.statement}")
        return
    with progress("verify check", len(ids) or len(REGISTRY), quiet) as bar:
        results = check_results(ids, profile,
                                tick=lambda cid, r: bar.advance(description=f"check: {cid} {r['verdict']}"))
    if as_json:
        click.echo(json.dumps(results, indent=1))
        return
    for r in results:
        click.echo(f"{r['id']}: {r['verdict'].upper()}")
        click.echo(f"  {r['statement']}")
        for e in r["evidence"]:
            mark = {True: "+", False: "x", None: "."}[e["holds"]]
            regimes = e.get("regimes") or []
            where = "; ".join(map(str, regimes)) if isinstance(regimes, list) else str(regimes)
            click.echo(f"  [{mark}] {e['kind']:11s} {e['route']}" + (f" [{where}]" if where else "") + f": {e['result']}")
        click.echo(f"  replay: {r['replay']}")
        click.echo("  ([+] confirms, [x] counterexample, [.] informative / outside the hypotheses)")
    from rich.console import Console
    Console(soft_wrap=False).print(summary_table(results))
