"""``verify check``: run the paper's claims (the lemmas/ registry) and print their verdicts, each
derived from recorded evidence by verify.evidence.decide and read with its scope; or, with
``--regime FILE`` (verify.cli.regime), what one claim says about the user's own regime: its per-regime
property there, and which of its statements speak of the regime and whether their proofs cover it
(verify.cli.coverage)."""
from __future__ import annotations

import inspect
import json
import os
import time
from collections import Counter
from importlib import resources

import click
from click.core import ParameterSource
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..engines.bits import MAX_BITS, MIN_BITS
from ..errors import InvalidParameter, suggest
from ..model import make_setting
from ..model.convention import using
from ..model.flags import setting_command
from ..model.hypotheses import within
from ..run.jsonable import jsonable
from .coverage import coverage
from .options import CliError, convention_from_options, convention_options, handle_errors, make_args
from .progress import ANNOUNCE_SECONDS, CONFIRM_SECONDS, duration, note, progress
from .regime import defaults, read_regime
from .sizes import check_build

SCHEMA = "check.schema.json"
REGIME_SCHEMA = "check_regime.schema.json"
MARK = {True: "+", False: "x", None: "."}
ROLE_NOTE = {"test": "", "outside": " (outside the hypotheses)", "context": " (context)", "failed": " (failed)"}


def load_schema(name: str = SCHEMA) -> dict:
    return json.loads(resources.files("verify").joinpath("schemas", name).read_text())


def resolve_ids(ids) -> tuple[list[str], dict]:
    """The claims to run for ``ids`` (claim ids, or ids of their statements, e.g. ``theorem-3.1-upper``; all
    when empty) and, per claim, the statement ids asked for (None: all of them)."""
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    by_statement = CLAIMS.statement_ids()
    known = CLAIMS.ids() + sorted(set(by_statement) - set(CLAIMS.ids()))
    claims, only, bad = [], {}, []
    for i in ids or CLAIMS.ids():
        cid = i if i in CLAIMS else by_statement.get(i)
        if cid is None:
            bad.append(InvalidParameter("ID", i, "must be a claim or statement id: " + ", ".join(known)
                                        + suggest(i, known)))
            continue
        if cid not in claims:
            claims.append(cid)
        if i != cid:
            only.setdefault(cid, set()).add(i)
        elif cid in only:
            only[cid] = None
    if bad:
        raise InvalidParameter.combine(bad)
    return claims, {c: only.get(c) for c in claims}


def check_results(ids, profile: str = "ci", tick=None, convention=None) -> list[dict]:
    """Run the claims named by ``ids`` (:func:`resolve_ids`) under ``convention`` (None: the reference) and return
    their JSON-ready results, validated; a statement id keeps only that statement. ``tick(id, result)`` is called
    after each claim (progress)."""
    import jsonschema  # heavy: jsonschema

    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    claims, only = resolve_ids(ids)
    out = []
    for cid in claims:
        res = CLAIMS[cid].run(profile, convention).as_dict()
        if only[cid]:
            res["statements"] = [st for st in res["statements"] if st["id"] in only[cid]]
        out.append(res)
        if tick is not None:
            tick(cid, res)
    jsonschema.validate(out, load_schema())
    return out


def timed_check(check, setting, steps: int, *, yes: bool = False, quiet: bool = False):
    """``check(setting, steps)``, estimated first when it may be long: one step is timed; when ``steps`` of that
    could exceed ANNOUNCE_SECONDS, a run of up to 16 steps too, and the time is extrapolated from the two
    (a fixed cost plus a cost per step), said on stderr, and above an hour needs ``--yes``."""
    if steps == 1:
        return check(setting, 1)

    def seconds_of(n: int) -> float | None:
        t0 = time.perf_counter()
        try:
            check(setting, n)
        except Exception:  # noqa: BLE001 - a check that cannot run this short is timed no further; the run says why
            return None
        return time.perf_counter() - t0
    t1 = seconds_of(1)
    if t1 is not None and t1 * steps > ANNOUNCE_SECONDS:
        k = min(steps, 16)
        tk = seconds_of(k)
        per_step = max((tk if tk is not None else t1) - t1, 0.0) / (k - 1)
        seconds = t1 + per_step * (steps - 1)
        text = (f"estimated time: {duration(seconds)} for {steps:,} steps (one step {duration(t1)}, then "
                f"{duration(per_step)} a step; a failure is replayed at a 10x longer horizon)")
        if seconds > CONFIRM_SECONDS and not yes:
            raise CliError(f"steps = {steps} in the regime file: {text}; pass --yes to run it anyway, or give fewer "
                           "steps")
        if seconds > ANNOUNCE_SECONDS:
            note(f"verify check: {text}", quiet)
    return check(setting, steps)


def certified_claims() -> list[str]:
    """The claims whose per-regime check can run certified: their ``check`` takes ``bits`` (Arb precision)."""
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    return [cid for cid, c in CLAIMS.items() if c.per_regime and "bits" in inspect.signature(c.check).parameters]


def regime_setting(regime_file, *, yes: bool = False, quiet: bool = False, convention=None):
    """(the Setting of a regime file, its steps): keys left out take the flags' defaults (verify.cli.regime), and
    the options ``convention`` sets (the convention flags) replace the file's; a large V* is estimated before it is
    built."""
    given, steps = read_regime(regime_file, "required")
    args = make_args(defaults() | given)
    if convention is not None:
        args |= convention.apply({"eta": args["eta"]})
    if args.get("D") is None:
        raise InvalidParameter("regime", str(regime_file), 'must give "D" (the sequence length)')
    check_build(args, yes=yes, quiet=quiet, command="verify check")
    return make_setting(**args), steps


def property_result(c, setting, steps: int, bits: int | None, *, yes: bool, quiet: bool) -> dict:
    """The claim's per-regime property in the regime (certified with ``bits``), a failure inside the hypotheses
    re-run at a 10x longer horizon (``replay_check``), as every reported counterexample is."""
    from ..evidence.regime_records import replay_check as replay_longer  # heavy: loads flint,mpmath,sympy
    options = {} if bits is None else {"bits": bits}

    def run(s, n):
        return c.regime_check(s, n, **options)
    out = timed_check(run, setting, steps, yes=yes, quiet=quiet)
    inside = out.data.get("in_hypotheses", True) is not False
    return {"holds": out.holds, "status": out.status, "detail": out.detail, "kind": out.kind,
            "threshold": out.threshold, "in_hypotheses": inside, "outside": out.data.get("outside") if not inside else None,
            "replay": out.replay, "replay_check": replay_longer(run, setting, steps) if out.holds is False and inside
            else None, "data": {k: v for k, v in out.data.items() if k not in ("in_hypotheses", "outside")}}


def no_property(c, setting, steps: int) -> dict:
    """The fields of a claim without a per-regime check: nothing is run in the regime; its statements' scopes and
    proofs (verify.cli.coverage) say what the claim and its evidence say about it."""
    inside, why = within(setting, c.hypotheses)
    return {"holds": None, "status": "no per-regime check", "kind": None, "threshold": None, "in_hypotheses": inside,
            "detail": f"{c.id} has no per-regime property: its statements are judged on the claim's own regimes and "
                      "derivations; below, which of them speak of this regime and which proofs cover it",
            "outside": why or None, "replay": setting_command("run", setting, "--steps", str(steps), "--json"),
            "replay_check": None, "data": {}}


def regime_result(claim_id: str, regime_file, *, bits: int | None = None, yes: bool = False,
                  quiet: bool = False, convention=None) -> dict:
    """What claim ``claim_id`` says about the regime of ``regime_file`` (verify.cli.regime): its per-regime
    property there when it has one (certified with ``bits`` where its check takes Arb), and for every statement
    whether its scope admits the regime and whether a proof covers it (verify.cli.coverage)."""
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    claim_id = resolve_ids([claim_id])[0][0]
    c = CLAIMS[claim_id]
    if bits is not None and claim_id not in certified_claims():
        names = certified_claims()
        raise InvalidParameter("arb_bits", bits, f"has no certified per-regime check for {claim_id} (its check runs "
                               "in float64); " + (f"the claims whose check takes Arb: {', '.join(names)}" if names else
                               "no claim's per-regime check takes Arb yet: drop --arb"))
    setting, steps = regime_setting(regime_file, yes=yes, quiet=quiet, convention=convention)
    with using(convention):         # the check's hypotheses are the convention's (verify.model.convention.adjust)
        prop = property_result(c, setting, steps, bits, yes=yes, quiet=quiet) if c.per_regime else no_property(
            c, setting, steps)
    cov = coverage(claim_id, setting, quiet)
    res = {"id": claim_id, **prop, "regime": setting.config(), "steps": steps, "statement": c.title,
           "hypotheses": [h.text for h in c.hypotheses], "arb_bits": bits, "proofs_from": cov["from"],
           "statements": cov["statements"]}
    return jsonable(res)


def parts_line(r: dict) -> str:
    """Every judged part's verdict of a claim's result ("lemma-C.2-small-step proved, lemma-C.2-large-step supported,
    ..."; its findings aside unless it states only findings): the claim-level line, never one part's verdict."""
    judged = [st for st in r["statements"] if st["role"] != "finding"] or r["statements"]
    return ", ".join(f"{st['id']} {st['verdict']}" for st in judged)


def _print_claim(r: dict) -> None:
    click.echo(f"{r['id']}: {r['title']}")
    click.echo(f"  parts: {parts_line(r)}")
    for st in r["statements"]:
        _print_statement(st)
    click.echo(f"  replay: {r['replay']}")
    click.echo("  ([+] confirms, [x] counterexample, [.] undecided / informative / outside the hypotheses)")


def _print_statement(r: dict) -> None:
    role = {"claim": "", "control": " [negative control]", "finding": " [the toolkit's finding"
            + (f", {r['relation']} than {r['about']}]" if r.get("about") else "]")}[r["role"]]
    click.echo(f"  {r['id']}{role}: {r['verdict'].upper()} ({r['scope_label']})")
    click.echo(f"    {r['text']}")
    click.echo(f"    statement's scope: {r['scope']['label']}")
    click.echo(f"    why: {r['why']}")
    if r.get("corrected"):
        click.echo(f"    corrected: {r['corrected']}")
    for e in r["evidence"]:
        th = e.get("threshold")
        thr = f" [threshold {th['value']}]" if isinstance(th, dict) else ""
        note = "" if e["role"] == "outside" and "outside" in e["route"] else ROLE_NOTE.get(e["role"], "")
        click.echo(f"    [{MARK[e['holds']]}] {e['kind']:11s} {e['route']}{note} "
                   f"({e['scope']['short_label']}){thr}: {e['result']}")
        rc = e.get("replay_check")
        if isinstance(rc, dict):
            click.echo(f"          replayed at horizon {rc['horizon']}: holds = {rc['holds']}")


def _print_regime(r: dict) -> None:
    click.echo(f"{r['id']} in this regime ({r['steps']} steps): {r['status'].upper()}")
    click.echo(f"  why: {r['detail']}")
    if r["kind"] is not None:
        th = r.get("threshold")
        click.echo(f"  evidence: {r['kind']}" + (f" at {r['arb_bits']} bits" if r.get("arb_bits") else "")
                   + (f", threshold {th['value']} ({th['why']})" if isinstance(th, dict) else ""))
    click.echo("  hypotheses of the check: " + ("met" if r["in_hypotheses"] else f"NOT met ({r['outside']}): a failure "
                                                "here is information, not a counterexample"))
    if r["replay_check"]:
        rc = r["replay_check"]
        click.echo(f"  replayed at {rc['horizon']} steps: {rc['status']}"
                   + (" (same conclusion)" if rc["same_conclusion"] else " (not the same conclusion)"))
    click.echo(f"  statements (proofs read from {r['proofs_from']}):")
    for st in r["statements"]:
        click.echo(f"    {st['id']} [{st['role']}, {st['verdict']}]: "
                   + ("the regime is inside its scope; " if st["admits"] else "") + st["coverage"])
    click.echo(f"  replay: {r['replay']}")


ROLE_TITLES = {"claim": "the paper's claims", "control": "negative controls", "finding": "the toolkit's own findings"}


def summary_table(results: list[dict]):
    """A rich table: one row per statement (id, role, verdict, text), and the count of each verdict per role
    (the paper's claims, negative controls and the toolkit's findings are counted apart)."""

    t = Table(title="verify check: verdicts", title_justify="left")
    t.add_column("id", no_wrap=True)
    t.add_column("kind", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("statement", overflow="fold")
    counts = {role: Counter() for role in ROLE_TITLES}
    for r in results:
        for st in r["statements"]:
            t.add_row(escape(st["id"]), st["role"], st["verdict"], escape(st["text"]))
            counts[st["role"]][st["verdict"]] += 1
    t.caption = "; ".join(f"{title}: " + ", ".join(f"{n} {v}" for v, n in counts[role].most_common())
                          for role, title in ROLE_TITLES.items() if counts[role])
    return t


@click.command("check")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="budget: ci (minutes for all claims), dev, deep (long horizons, more samples)")
@click.option("--regime", "regime_file", default=None, metavar="FILE",
              help="check one claim in your own regime: a JSON file whose keys are the regime flags' names without "
                   "their dashes (as verify run takes them), plus \"steps\"; says whether the claim's property holds "
                   "there, which statements speak of the regime and whether their proofs cover it")
# --arb is kept out of the help while no claim's per-regime check takes Arb (certified_claims() is empty): a
# flag every claim refuses is not advertised. A claim whose check gains a ``bits`` parameter makes it work.
@click.option("--arb", "arb_bits", type=click.IntRange(MIN_BITS, MAX_BITS), default=None, metavar="BITS", hidden=True,
              help="with --regime: the per-regime check certified with Arb balls at BITS bits (claims whose check "
                   "takes Arb)")
@convention_options
@click.option("--json", "as_json", is_flag=True,
              help="print JSON (schema verify/schemas/check.schema.json; with --regime check_regime.schema.json)")
@click.option("--family-file", "family_file", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="FILE", help="a saved family certificate (verify certify with ranges --save FILE) for Theorem "
                                   "3.1's family evidence: read when the independent re-checker verifies it (default: "
                                   "the one verify bench saves, if any; else the profile's own family)")
@click.option("--list", "list_only", is_flag=True, help="list the claim ids and statements, run nothing")
@click.option("--yes", is_flag=True, help="with --regime: run even when the estimate exceeds an hour")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def check_cmd(ids, profile, regime_file, arb_bits, as_json, list_only, yes, quiet, family_file, **kw):
    """Run the paper's claims (all, or the IDs given) and print each verdict with its scope and evidence,
    then a summary table of the verdicts. The convention flags (or --convention FILE) set the convention every
    claim is judged in (with --regime: they replace the file's options)."""
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,sympy
    if list_only:
        claims, only = resolve_ids(ids)
        for cid in claims:
            click.echo(f"{cid:28s} {CLAIMS[cid].title}")
            for st in CLAIMS[cid].statements:
                if not only[cid] or st.id in only[cid]:
                    click.echo(f"  {st.id:32s} [{st.role}] {st.text}")
        return
    if arb_bits is not None and regime_file is None:
        raise InvalidParameter("arb_bits", arb_bits, "certifies a per-regime check: give it with --regime FILE")
    conv = convention_from_options(kw)
    if regime_file is not None:
        if len(ids) != 1:
            raise InvalidParameter("ID", " ".join(ids) or None, "give exactly one claim id with --regime")
        if click.get_current_context().get_parameter_source("profile") == ParameterSource.COMMANDLINE:
            raise InvalidParameter("profile", profile, "has no effect with --regime (the regime file gives the "
                                   "regime and its steps): drop --profile, or drop --regime to run the claim's "
                                   "own regimes at this profile")
        res = regime_result(ids[0], regime_file, bits=arb_bits, yes=yes, quiet=quiet, convention=conv)
        import jsonschema  # heavy: jsonschema
        jsonschema.validate(res, load_schema(REGIME_SCHEMA))
        if as_json:
            click.echo(json.dumps(res, indent=1))
        else:
            _print_regime(res)
        return
    if family_file is not None:
        from ..certify.certificate_records import FAMILY_FILE_VARIABLE  # heavy: loads flint,mpmath,sympy
        os.environ[FAMILY_FILE_VARIABLE] = str(family_file)
    with progress("verify check", len(resolve_ids(ids)[0]), quiet) as bar:
        results = check_results(ids, profile, convention=conv,
                                tick=lambda cid, r: bar.advance(description=f"check: {cid}: {parts_line(r)}"))
    if as_json:
        click.echo(json.dumps(results, indent=1))
        return
    for r in results:
        _print_claim(r)
    Console(soft_wrap=False).print(summary_table(results))
