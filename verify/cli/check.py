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


def check_results(ids, profile: str = "ci") -> list[dict]:
    """Run the claims ``ids`` (all when empty) and return their JSON-ready results, validated."""
    import jsonschema

    from lemmas import REGISTRY
    from ..errors import InvalidParameter
    ids = list(ids) or list(REGISTRY)
    unknown = [i for i in ids if i not in REGISTRY]
    if unknown:
        raise InvalidParameter("ID", unknown[0], f"must be one of {', '.join(REGISTRY)}")
    out = [_jsonable(REGISTRY[i].run(profile).as_dict()) for i in ids]
    jsonschema.validate(out, load_schema())
    return out


@click.command("check")
@click.argument("ids", nargs=-1)
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="budget: ci (minutes for all claims), dev, deep (long horizons, more samples)")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list (schema verify/schemas/check.schema.json)")
@click.option("--list", "list_only", is_flag=True, help="list the claim ids and statements, run nothing")
@handle_errors
def check_cmd(ids, profile, as_json, list_only):
    """Run the paper's claims (all, or the IDs given) and print each verdict with its evidence."""
    from lemmas import REGISTRY
    if list_only:
        for cid, c in REGISTRY.items():
            click.echo(f"{cid:28s} {c.statement}")
        return
    results = check_results(ids, profile)
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
