"""``verify all``: every part (derivation, claims, probes, fuzz, bench) on Dask, and the report, resumable."""
from __future__ import annotations

import click

from .options import check_writable_dir, handle_errors
from .progress import counts_text


@click.command("all")
@click.option("--out", "out", default="reports/latest", show_default=True, type=click.Path(file_okay=False),
              help="report folder (gitignored by default; parts are saved in OUT/_work/parts)")
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="ci: <= 10 minutes on 2 cores; dev and deep: longer runs, larger ranges")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="an existing Dask scheduler, e.g. tcp://HOST:8786 (default: $VERIFY_SCHEDULER, else a "
                   "LocalCluster on this machine)")
@click.option("--workers", "--jobs", "workers", type=click.IntRange(1, 1024), default=None,
              help="worker processes of the LocalCluster [default: the number of cores, at most one per part]")
@click.option("--timeout", "timeout", type=click.FloatRange(min=1), default=None,
              help="time limit of one part in seconds [default: the profile's]")
@click.option("--fresh", is_flag=True, help="run every part again, ignoring saved results")
@click.option("--only", multiple=True, help="run only these parts or kinds (e.g. derive, claim, probe:NAME)")
@click.option("--quiet", is_flag=True, help="no progress display")
@handle_errors
def all_cmd(out, profile, scheduler, workers, timeout, fresh, only, quiet):
    """Run every check and write the report folder OUT (index.md, index.html, results.json, figures).

    Parts run as Dask tasks, each in a child process with a time limit; results are saved as they
    arrive and reused by the next run while the code and the options are unchanged.
    """
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from ..run.pipeline import plan, verify_all
    console = Console(stderr=True, quiet=quiet)
    parts, problems = plan(profile, list(only) or None)
    check_writable_dir("--out", out)         # before any part runs
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=False) as bar:
        task = bar.add_task(f"verify all ({profile})", total=len(parts))

        def tick(name, status, seconds, worker):
            where = f"  on {worker}" if worker and status != "reused" else ""
            bar.console.print(f"  {name:40s} {status:8s} {seconds:8.1f} s{where}", markup=False, highlight=False,
                              soft_wrap=True)
            bar.advance(task)

        def reporting(state):
            bar.update(task, description="writing the report")
            if state.executor:
                ex = state.executor
                bar.console.print(f"  ran on {ex['cluster']} {ex['scheduler']} with {len(ex['workers'])} workers; "
                                  f"code version {state.code_version}", markup=False, highlight=False,
                                  soft_wrap=True)
        res = verify_all(out, profile, fresh=fresh, scheduler=scheduler, workers=workers, only=list(only) or None,
                         part_timeout=timeout, progress=tick, on_report=reporting)
    s = res["summary"]
    click.echo(f"report: {out}/index.html ({s['ok']} parts finished, {s['not_ok']} not; "
               f"{s['wall_seconds']:.1f} s; verdicts: {counts_text(s['verdicts'])})")
