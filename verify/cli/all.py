"""``verify all``: every part (derivation, claims, probes, fuzz, bench) and the report, resumable."""
from __future__ import annotations

import time

import click

from .options import check_writable_dir, handle_errors
from .progress import counts_text


@click.command("all")
@click.option("--out", "out", default="reports/latest", show_default=True, type=click.Path(file_okay=False),
              help="report folder (parts are saved in OUT/_work/parts)")
@click.option("--profile", type=click.Choice(["ci", "dev", "deep"]), default="ci", show_default=True,
              help="ci: <= 10 minutes on 2 cores; dev and deep: longer runs, larger ranges")
@click.option("--fresh", is_flag=True, help="ignore parts saved by an earlier (interrupted) run")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True, help="parts run at the same time")
@click.option("--only", multiple=True, help="run only these parts or kinds (e.g. derive, claim, probe:NAME)")
@click.option("--quiet", is_flag=True, help="no progress display")
@handle_errors
def all_cmd(out, profile, fresh, jobs, only, quiet):
    """Run every check and write the report folder OUT (index.md, index.html, results.json, figures)."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from ..pipeline import parts_dir, plan, run_parts
    from ..report import write_report
    console = Console(stderr=True, quiet=quiet)
    n = len(plan(profile, list(only) or None)[0])
    check_writable_dir("--out", out)         # before any part runs
    t0 = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=False) as bar:
        task = bar.add_task(f"verify all ({profile})", total=n)

        def tick(name, status, seconds):
            bar.console.print(f"  {name:40s} {status:8s} {seconds:8.1f} s")
            bar.advance(task)
        state = run_parts(out, profile, fresh=fresh, jobs=jobs, only=list(only) or None, progress=tick)
        bar.update(task, description="writing the report")
        res = write_report(out, parts_dir(out), profile=profile, wall_seconds=time.perf_counter() - t0,
                           reused=state.skipped)
    s = res["summary"]
    click.echo(f"report: {out}/index.html ({s['ok']} parts finished, {s['not_ok']} not; "
               f"{s['wall_seconds']:.1f} s; verdicts: {counts_text(s['verdicts'])})")
