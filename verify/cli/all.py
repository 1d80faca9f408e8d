"""``verify all``: every part (derivation, claims, probes, fuzz, bench) on Dask, and the report, resumable."""
from __future__ import annotations

import math
import shlex

import click
from click.core import ParameterSource

from ..errors import Interrupted, InvalidParameter
from ..pipeline.runner import plan, verify_all
from ..report.render import roles_line
from ..run.execute import check_cluster, check_tmpdir, local_workers, scheduler_address
from ..run.speed import Eta, reference_part_seconds
from .options import (EXIT_INCOMPLETE, CliError, check_writable_dir, convention_from_options, convention_options,
                      handle_errors)
from .progress import note, progress


@click.command("all", epilog="Exit status: 0 when every part finished; 5 when a part did not (it failed, or its "
                             "guard stopped it): stderr names each with why, and the command that resumes the run; "
                             "130 after Ctrl-C (the finished parts are saved; the same command resumes); 2 for "
                             "invalid input, 4 when the report could not be written.")
@click.option("--out", "out", default="reports/latest", show_default=True, type=click.Path(file_okay=False),
              help="report folder (gitignored by default; parts are saved in OUT/_work/parts); running again on the "
                   "same OUT resumes: finished parts are reused")
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="ci: a few minutes on 2 cores; dev and deep: longer runs, larger ranges")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="an existing Dask scheduler, e.g. tcp://HOST:8786 (default: $VERIFY_SCHEDULER, else a "
                   "LocalCluster on this machine)")
@click.option("--workers", "--jobs", "workers", type=click.IntRange(1, 1024), default=None,
              help="worker processes of the LocalCluster [default: the number of cores, at most one per part; "
                   "never more than the cores and the available memory hold]")
@click.option("--timeout", "timeout", type=click.FloatRange(min=1), default=None,
              help="wall-time limit of one part in seconds [default: the profile's guard against a hang, in CPU "
                   "seconds scaled by this machine's measured speed, so a slow or busy machine finishes every part]")
@click.option("--fresh", is_flag=True, help="run every part again, ignoring saved results")
@click.option("--only", multiple=True, help="run only these parts or kinds (e.g. derive, claim, probe:NAME)")
@click.option("--quiet", is_flag=True, help="no progress display")
@convention_options
@handle_errors
def all_cmd(out, profile, scheduler, workers, timeout, fresh, only, quiet, **kw):
    """Run every check and write the report folder OUT (index.md, index.html, results.json, figures).

    Parts run as Dask tasks, each in a child process under a guard against a hang; results are saved as they
    arrive and reused by the next run while the code and the options are unchanged. A part that fails or is
    stopped by its guard is named on stderr with the command that resumes the run (exit status 5). Ctrl-C stops
    the run cleanly: the finished parts stay saved and the same command resumes. The convention flags (or
    --convention FILE) set the convention of the whole run: every part that can honour it runs under it, the
    others say why it does not apply; saved parts are keyed by it.
    """
    if timeout is not None and not math.isfinite(timeout):     # FloatRange lets nan (and inf) through
        raise InvalidParameter("timeout", timeout, "must be a finite number of seconds >= 1")
    ctx = click.get_current_context()
    conv = convention_from_options(kw)
    parts, problems = plan(profile, list(only) or None)
    check_writable_dir("--out", out)         # before any part runs
    if scheduler_address(scheduler) is None:
        check_tmpdir()                        # the local cluster's scratch place, before any work
    address = check_cluster(scheduler, workers)
    if workers is not None and address is None:
        note(local_workers(workers, len(parts))[1], quiet)
    n_workers = local_workers(workers, len(parts))[0] if address is None else 1
    eta = Eta([p.name for p in parts], reference_part_seconds() if address is None else {}, n_workers)
    with progress(f"verify all ({profile})", len(parts), quiet, transient=False) as bar:
        bar.set_eta(None)

        def tick(name, status, seconds, worker):
            where = f"  on {worker}" if worker and status != "reused" else ""
            bar.log(f"  {name:40s} {status:8s} {seconds:8.1f} s{where}")
            eta.done(name, seconds, computed=status == "ok")
            bar.advance(description=f"verify all ({profile}): {name}")
            bar.set_eta(eta.seconds())

        def reporting(state):
            bar.update(description="writing the report")
            bar.set_eta(None)
            if state.guard.get("slowness") is not None:
                bar.log(f"  guard of each part: {state.guard['why']}")
            if state.executor:
                ex = state.executor
                bar.log(f"  ran on {ex['cluster']} {ex['scheduler']} with {len(ex['workers'])} workers; "
                        f"code version {state.code_version}")
        try:
            res = verify_all(out, profile, fresh=fresh, scheduler=scheduler, workers=workers,
                             only=list(only) or None, part_timeout=timeout, progress=tick, on_report=reporting,
                             convention=None if conv is None else conv.as_dict())
        except Interrupted as exc:
            raise Interrupted(f"{exc.message}: {resume_command(ctx, [])}") from None
    s = res["summary"]
    click.echo(f"report: {out}/index.html ({s['ok']} parts finished, {s['not_ok']} not; "
               f"{s['wall_seconds']:.1f} s; {roles_line(s)})")
    left = res["unfinished"]
    if left:
        width = max(len(name) for name, _, _ in left)
        for name, status, why in left:
            click.echo(f"  not finished: {name:{width}s} {status:8s} {why}", err=True)
        raise CliError(f"{len(left)} of {s['parts']} parts did not finish ({', '.join(n for n, _, _ in left)}); the "
                       f"report reads 'not checked' where they answer. Resume (the finished parts are reused, only "
                       f"these run again): {resume_command(ctx, left, res['guard'])}", exit_code=EXIT_INCOMPLETE)


def resume_command(ctx: click.Context, left: list, guard: dict | None = None) -> str:
    """The command line that resumes this run on the same OUT: the options as the user gave them, without --fresh
    (which would run the finished parts again). When parts were stopped by their guard: without a --timeout the
    user gave (the profile's guard then applies), or, if the profile's guard stopped them, with --timeout twice the
    wall time they had."""
    timed_out = any(status == "timeout" for _, status, _ in left)
    words = ["verify", "all"]
    for p in ctx.command.params:
        if not isinstance(p, click.Option) or p.name in ("fresh",):
            continue
        given = ctx.get_parameter_source(p.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
        value = ctx.params.get(p.name)
        if p.name == "timeout" and timed_out:
            if given:
                continue
            if guard and guard.get("wall"):
                words += ["--timeout", str(int(math.ceil(2 * guard["wall"])))]
            continue
        if not given and p.name != "out":
            continue
        flag = p.opts[0]
        if p.is_flag:
            words += [flag] if value else []
        elif p.multiple:
            for v in value:
                words += [flag, str(v)]
        elif value is not None:
            words += [flag, str(value)]
    return shlex.join(words)
