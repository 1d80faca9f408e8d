"""``verify probe NAME [--json]`` and ``verify probe --list``: run one reviewer-question probe."""
from __future__ import annotations

import json

import click

from .options import handle_errors


@click.command("probe")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="list the probes and the questions they answer")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object (with the arrays behind the figure)")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def probe_cmd(name, list_, as_json, quiet):
    """Run the probe NAME: question, regimes, findings, classification, statements with their derived
    verdicts and scopes, replay."""
    from ..checks import suggest
    from ..errors import InvalidParameter
    from ..probes import PROBES, run_probe
    if list_:
        rows = [{"probe": p.name, "questions": list(p.questions), "summary": p.summary} for p in PROBES.values()]
        if as_json:
            click.echo(json.dumps(rows, indent=1))
        else:
            for r in rows:
                click.echo(f"{r['probe']:14s} Q{','.join(map(str, r['questions'])):5s} {r['summary']}")
        return
    if not name:
        raise InvalidParameter("NAME", None, f"give a probe name ({', '.join(PROBES)}) or --list")
    from .progress import progress
    if name not in PROBES:
        raise InvalidParameter("NAME", name, f"must be one of {', '.join(sorted(PROBES))}" + suggest(name, list(PROBES)))
    with progress(f"verify probe {name}", None, quiet):      # one computation: elapsed time, no ETA
        out = run_probe(name).as_dict()
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    click.echo(f"probe: {out['probe']}")
    click.echo(f"question: {out['question']}")
    click.echo("regimes:")
    for r in out["regimes"]:
        c = r["config"]
        click.echo(f"  - {r['label']}: D={c['D']} K={c['K']} N={c['N']} M={c['M']} d={c['d']} sigma={c['sigma']} "
                   f"law={c['law']} eta={c['eta_v']} eta_kq={c['eta_kq']} init={c['init']} p={c['p_kind']}/"
                   f"{c['p_structure']} lambda={c['p_lambda']} ({r['engine']}/{r['arithmetic']}, {r['steps']} steps)")
    click.echo("findings:")
    for f in out["findings"]:
        click.echo(f"  - {f}")
    click.echo("classification: " + ", ".join(f"{k} {v}" for k, v in out["classification"].items()))
    for st in out["statements"]:
        click.echo(f"{'verdict' if st['role'] == 'primary' else 'further'}: {st['verdict'].upper()} "
                   f"({st['scope_label']}) -- {st['statement']}")
        click.echo(f"  why: {st['reason']}")
        for e in st["evidence"]:
            mark = {True: "+", False: "x", None: "."}[e["holds"]]
            role = "" if e["role"] == "test" else f" ({e['role']})"
            click.echo(f"  [{mark}] {e['kind']:11s} {e['route']}{role}: {e['result']}")
    click.echo(f"replay: {out['replay']}")
