"""``verify check``: run the paper's claims (the lemmas/ registry) and print their verdicts, each
derived from recorded evidence by verify.evidence.decide and read with its scope; or, with
``--regime FILE``, whether one claim's property holds in the user's own regime."""
from __future__ import annotations

import inspect
import json
from decimal import Decimal
from importlib import resources
from pathlib import Path

import click

from .options import handle_errors

SCHEMA = "check.schema.json"
REGIME_SCHEMA = "check_regime.schema.json"
MARK = {True: "+", False: "x", None: "."}
ROLE_NOTE = {"test": "", "outside": " (outside the hypotheses)", "context": " (context)", "failed": " (failed)"}


def load_schema(name: str = SCHEMA) -> dict:
    return json.loads(resources.files("verify").joinpath("schemas", name).read_text())


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
        out.append(REGISTRY[i].run(profile).as_dict())
        if tick is not None:
            tick(i, out[-1])
    jsonschema.validate(out, load_schema())
    return out


def read_regime(path) -> dict:
    """The JSON object of ``--regime FILE``: the keys of a fuzz counterexample's "setting" (the keyword
    arguments of verify.model.make_setting) plus "steps". Decimals are read exactly."""
    from ..errors import InvalidParameter
    from ..model import make_setting

    p = Path(path)
    if not p.is_file():
        raise InvalidParameter("regime", str(path), "must be an existing JSON file")

    def no_constant(c):
        raise InvalidParameter("regime", str(path), f"must hold finite numbers only (found {c})")
    try:
        spec = json.loads(p.read_text(), parse_float=Decimal, parse_constant=no_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidParameter("regime", str(path), f"must be valid JSON ({exc})") from None
    allowed = sorted(inspect.signature(make_setting).parameters) + ["steps"]
    if not isinstance(spec, dict):
        raise InvalidParameter("regime", str(path), "must be a JSON object with the keys of a fuzz counterexample's "
                                                    "\"setting\" plus \"steps\"")
    unknown = sorted(set(spec) - set(allowed))
    if unknown:
        raise InvalidParameter("regime", unknown[0], f"unknown key in {path}: the keys are {', '.join(allowed)}")
    if "steps" not in spec:
        raise InvalidParameter("steps", None, f"must be given in {path} (an integer >= 1)")
    return spec


def regime_result(claim_id: str, spec: dict) -> dict:
    """Whether claim ``claim_id``'s property holds in the regime ``spec`` (see :func:`read_regime`):
    {"id", "holds", "status", "detail", "kind", "threshold", "in_hypotheses", "outside", "replay",
    "replay_check", "regime", "steps", "data"}. A failure inside the hypotheses is re-run at a 10x longer
    horizon (``replay_check``), as every reported counterexample is."""
    from lemmas import REGISTRY
    from lemmas._records import replay_check as replay_longer
    from ..errors import InvalidParameter
    from ..jsonable import jsonable
    from ..model import make_setting
    from ..model.validation import check_int
    if claim_id not in REGISTRY:
        raise InvalidParameter("ID", claim_id, f"must be one of {', '.join(REGISTRY)}")
    c = REGISTRY[claim_id]
    if not c.per_regime:
        raise InvalidParameter("ID", claim_id, "has no per-regime check; --regime works with "
                               + ", ".join(k for k, v in REGISTRY.items() if v.per_regime))
    spec = dict(spec)
    steps = check_int("steps", spec.pop("steps"), 1, 10**7)
    setting = make_setting(**spec)
    out = c.regime_check(setting, steps)
    inside = out.data.get("in_hypotheses", True) is not False
    replay_check = replay_longer(c.regime_check, setting, steps) if out.holds is False and inside else None
    res = {"id": claim_id, "holds": out.holds, "status": out.status, "detail": out.detail, "kind": out.kind,
           "threshold": out.threshold, "in_hypotheses": inside, "outside": out.data.get("outside") if not inside else None,
           "replay": out.replay, "replay_check": replay_check, "regime": setting.config(), "steps": steps,
           "statement": c.statement, "hypotheses": list(c.hypotheses),
           "data": {k: v for k, v in out.data.items() if k not in ("in_hypotheses", "outside")}}
    return jsonable(res)


def _print_claim(r: dict) -> None:
    click.echo(f"{r['id']}: {r['verdict'].upper()} ({r['scope_label']})")
    click.echo(f"  {r['statement']}")
    click.echo(f"  statement's scope: {r['scope']['label']}")
    click.echo(f"  why: {r['reason']}")
    for e in r["evidence"]:
        th = e.get("threshold")
        thr = f" [threshold {th['value']}]" if isinstance(th, dict) else ""
        note = "" if e["role"] == "outside" and "outside" in e["route"] else ROLE_NOTE.get(e["role"], "")
        click.echo(f"  [{MARK[e['holds']]}] {e['kind']:11s} {e['route']}{note} "
                   f"({e['scope']['label']}){thr}: {e['result']}")
        rc = e.get("replay_check")
        if isinstance(rc, dict):
            click.echo(f"        replayed at horizon {rc['horizon']}: holds = {rc['holds']}")
    click.echo(f"  replay: {r['replay']}")
    click.echo("  ([+] confirms, [x] counterexample, [.] undecided / informative / outside the hypotheses)")


def _print_regime(r: dict) -> None:
    click.echo(f"{r['id']} in this regime ({r['steps']} steps): {r['status'].upper()}")
    click.echo(f"  why: {r['detail']}")
    th = r.get("threshold")
    click.echo(f"  evidence: {r['kind']}" + (f", threshold {th['value']} ({th['why']})" if isinstance(th, dict) else ""))
    click.echo("  hypotheses: " + ("met" if r["in_hypotheses"] else f"NOT met ({r['outside']}): a failure here is "
                                   "information, not a counterexample"))
    if r["replay_check"]:
        rc = r["replay_check"]
        click.echo(f"  replayed at {rc['horizon']} steps: {rc['status']}"
                   + (" (same conclusion)" if rc["same_conclusion"] else " (not the same conclusion)"))
    click.echo(f"  replay: {r['replay']}")


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
@click.option("--regime", "regime_file", default=None, metavar="FILE",
              help="check one claim in your own regime: a JSON object with the keys of a fuzz counterexample's "
                   "\"setting\" (make_setting's arguments) plus \"steps\"")
@click.option("--json", "as_json", is_flag=True,
              help="print JSON (schema verify/schemas/check.schema.json; with --regime check_regime.schema.json)")
@click.option("--list", "list_only", is_flag=True, help="list the claim ids and statements, run nothing")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def check_cmd(ids, profile, regime_file, as_json, list_only, quiet):
    """Run the paper's claims (all, or the IDs given) and print each verdict with its scope and evidence,
    then a summary table of the verdicts."""
    from lemmas import REGISTRY
    from ..errors import InvalidParameter
    from .progress import progress
    if list_only:
        for cid, c in REGISTRY.items():
            click.echo(f"{cid:28s} {c.statement}")
        return
    if regime_file is not None:
        if len(ids) != 1:
            raise InvalidParameter("ID", " ".join(ids) or None, "give exactly one claim id with --regime")
        res = regime_result(ids[0], read_regime(regime_file))
        import jsonschema
        jsonschema.validate(res, load_schema(REGIME_SCHEMA))
        if as_json:
            click.echo(json.dumps(res, indent=1))
        else:
            _print_regime(res)
        return
    with progress("verify check", len(ids) or len(REGISTRY), quiet) as bar:
        results = check_results(ids, profile,
                                tick=lambda cid, r: bar.advance(description=f"check: {cid} {r['verdict']}"))
    if as_json:
        click.echo(json.dumps(results, indent=1))
        return
    for r in results:
        _print_claim(r)
    from rich.console import Console
    Console(soft_wrap=False).print(summary_table(results))
