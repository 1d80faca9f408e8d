"""``verify all``: every part (derivation, claims, probes, fuzz, bench) on Dask, and the report, resumable."""
from __future__ import annotations

import math

import click

from .options import check_writable_dir, convention_from_options, convention_options, handle_errors
from .progress import note, progress


@click.command("all")
@click.option("--out", "out", default="reports/latest", show_default=True, type=click.Path(file_okay=False),
              help="report folder (gitignored by default; parts are saved in OUT/_work/parts)")
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="ci: <= 10 minutes on 2 cores; dev and deep: longer runs, larger ranges")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="an existing Dask scheduler, e.g. tcp://HOST:8786 (default: $VERIFY_SCHEDULER, else a "
                   "LocalCluster on this machine)")
@click.option("--workers", "--jobs", "workers", type=click.IntRange(1, 1024), default=None,
              help="worker processes of the LocalCluster [default: the number of cores, at most one per part; "
                   "never more than the cores and the available memory hold]")
@click.option("--timeout", "timeout", type=click.FloatRange(min=1), default=None,
              help="time limit of one part in seconds [default: the profile's]")
@click.option("--fresh", is_flag=True, help="run every part again, ignoring saved results")
@click.option("--only", multiple=True, help="run only these parts or kinds (e.g. derive, claim, probe:NAME)")
@click.option("--quiet", is_flag=True, help="no progress display")
@convention_options
@handle_errors
def all_cmd(out, profile, scheduler, workers, timeout, fresh, only, quiet, **kw):
    """Run every check and write the report folder OUT (index.md, index.html, results.json, figures).

    Parts run as Dask tasks, each in a child process with a time limit; results are saved as they
    arrive and reused by the next run while the code and the options are unchanged. Ctrl-C stops the
    run cleanly: the finished parts stay saved and the same command resumes. The convention flags (or
    --convention FILE) set the convention of the whole run: every part that can honour it runs under it, the
    others say why it does not apply; saved parts are keyed by it.
    """
    from ..run.execute import check_cluster, check_tmpdir, local_workers, scheduler_address
    from ..report.render import roles_line
    if timeout is not None and not math.isfinite(timeout):     # FloatRange lets nan (and inf) through
        from ..errors import InvalidParameter
        raise InvalidParameter("timeout", timeout, "must be a finite number of seconds >= 1")
    from ..run.pipeline import plan, verify_all
    conv = convention_from_options(kw)
    parts, problems = plan(profile, list(only) or None)
    check_writable_dir("--out", out)         # before any part runs
    if scheduler_address(scheduler) is None:
        check_tmpdir()                        # the local cluster's scratch place, before any work
    if workers is not None and check_cluster(scheduler, workers) is None:
        note(local_workers(workers, len(parts))[1], quiet)
    with progress(f"verify all ({profile})", len(parts), quiet, transient=False) as bar:

        def tick(name, status, seconds, worker):
            where = f"  on {worker}" if worker and status != "reused" else ""
            bar.log(f"  {name:40s} {status:8s} {seconds:8.1f} s{where}")
            bar.advance(description=f"verify all ({profile}): {name}")

        def reporting(state):
            bar.update(description="writing the report")
            if state.executor:
                ex = state.executor
                bar.log(f"  ran on {ex['cluster']} {ex['scheduler']} with {len(ex['workers'])} workers; "
                        f"code version {state.code_version}")
        res = verify_all(out, profile, fresh=fresh, scheduler=scheduler, workers=workers, only=list(only) or None,
                         part_timeout=timeout, progress=tick, on_report=reporting,
                         convention=None if conv is None else conv.as_dict())
    s = res["summary"]
    click.echo(f"report: {out}/index.html ({s['ok']} parts finished, {s['not_ok']} not; "
               f"{s['wall_seconds']:.1f} s; {roles_line(s)})")
