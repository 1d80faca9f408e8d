"""``verify probe NAME [--profile P] [--json]`` and ``verify probe --list``: run one reviewer-question probe."""
from __future__ import annotations

import json

import click

from ..errors import InvalidParameter, suggest
from ..model.profiles import PROFILES
from .check import _print_statement
from .options import convention_from_options, convention_options, handle_errors
from .progress import progress


@click.command("probe")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="list the probes, the questions they answer and their findings")
@click.option("--profile", type=click.Choice(list(PROFILES)), default="ci", show_default=True,
              help="budget: ci (minutes), dev, deep (longer horizons, more seeds and regimes)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object (with the arrays behind the figure)")
@convention_options
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def probe_cmd(name, list_, profile, as_json, quiet, **kw):
    """Run the probe NAME: question, regimes, findings, classification, its statements (the toolkit's findings)
    with their derived verdicts and scopes, replay. The convention flags (or --convention FILE) set the convention
    every regime is built in, as in `verify all`: a keyword the probe's question names itself (p-scale's P scale,
    nonzero-init's initialisation) keeps the probe's value, and a keyword a regime cannot take (one the reduced
    recursion it runs, or the leading terms or SGD student it uses, does not cover) is left at the reference there
    and named, with why, on every finding."""
    from ..probes import PROBES  # heavy: loads flint,mpmath,sympy
    if list_:
        rows = [{"probe": cid, "questions": list(p.questions), "summary": p.summary,
                 "statements": [st.id for st in p.statements]} for cid, p in PROBES.items()]
        if as_json:
            click.echo(json.dumps(rows, indent=1))
        else:
            for r in rows:
                click.echo(f"{r['probe']:14s} Q{','.join(map(str, r['questions'])):5s} {r['summary']}")
        return
    if not name:
        raise InvalidParameter("NAME", None, f"give a probe name ({', '.join(PROBES.ids())}) or --list")
    if name not in PROBES:
        raise InvalidParameter("NAME", name, f"must be one of {', '.join(sorted(PROBES.ids()))}" + suggest(name, PROBES.ids()))
    conv = convention_from_options(kw)
    with progress(f"verify probe {name}", None, quiet):      # one computation: elapsed time, no ETA
        out = PROBES[name].run(profile, conv).as_dict()
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    click.echo(f"probe: {out['id']} ({out['title']}), profile {out['profile']}")
    click.echo(f"question: {out['question']}")
    click.echo("regimes:")
    for r in out["regimes"]:
        c = r["config"]
        click.echo(f"  - {r['label']}: D={c['D']} K={c['K']} N={c['N']} M={c['M']} d={c['d']} sigma={c['sigma']} "
                   f"law={c['law']} eta={c['eta_v']} eta_kq={c['eta_kq']} init={c['init']} p={c['p_kind']}/"
                   f"{c['p_structure']} lambda={c['p_lambda']} beta={c['beta']} loss={c['loss']} ({r['engine']}/{r['arithmetic']}, {r['steps']} steps)")
    click.echo("findings:")
    for f in out["findings"]:
        click.echo(f"  - {f}")
    click.echo(f"convention: {out['convention']['run_convention_label']}")
    for line in out["convention"]["not_honoured"].values():
        click.echo(f"  - {line}")
    click.echo("classification: " + ", ".join(f"{k} {v}" for k, v in out["classification"].items()))
    for st in out["statements"]:
        _print_statement(st)
    click.echo(f"replay: {out['replay']}")
