"""``verify sweep``: a grid of regimes x measurements on Dask; a Parquet table, a CSV copy and figures."""
from __future__ import annotations

import json

import click

from .options import data_option, handle_errors


@click.command("sweep")
@click.option("--grid", "grid", multiple=True, metavar="NAME=v1,v2,...",
              help="one axis of the grid (repeatable; values are split at ';' instead when one holds a comma): "
                   "D, K, N or preset, eta, eta_kq, vstar_norm, M, d, sigma, data, law, law_mean, law_var, loss, p_lambda, "
                   "p_kind, p_structure, noise_sd, init, init_scale, relu_at_zero, freeze_wp, seed [default grid: "
                   "D=8,16,32 K=2,4 eta=1/10,1/20; an axis not on the grid takes D=16 K=4 preset=cnn M=1 d=1 "
                   "eta=1/10 and the reference convention]")
@data_option(default=None, help_text="the data model of every regime (as --grid data=...; a data model fixing the "
             "dimensions sets D and d unless they are on the grid); see `verify run --help`")
@click.option("--steps", type=click.IntRange(10, 10**9), default=100_000, show_default=True, help="GD steps per regime")
@click.option("--measure", "measures", multiple=True,
              help="measurements (repeatable): trajectory, claims, certified [default: trajectory and claims]")
@click.option("--claim-steps", type=click.IntRange(1, 10**7), default=2_000, show_default=True,
              help="horizon of the per-regime claim checks (at most --steps)")
@click.option("--arb-bits", type=click.IntRange(32, 4096), default=128, show_default=True,
              help="precision of the certified measurement")
@click.option("--out", "out", default="reports/sweep", show_default=True, type=click.Path(file_okay=False),
              help="folder for sweep.parquet, sweep.csv, sweep.json and figures/ (gitignored by default)")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="an existing Dask scheduler, e.g. tcp://HOST:8786 (default: $VERIFY_SCHEDULER, else a "
                   "LocalCluster on this machine)")
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="worker processes of the LocalCluster [default: the number of cores, at most one per row]")
@click.option("--fresh", is_flag=True, help="compute every row again, ignoring saved rows")
@click.option("--json", "as_json", is_flag=True, help='print one JSON object {"rows": [...]} on stdout')
@click.option("--quiet", is_flag=True, help="no progress display")
@handle_errors
def sweep_cmd(grid, data, steps, measures, claim_steps, arb_bits, out, scheduler, workers, fresh, as_json, quiet):
    """Run every regime of the grid and write a table: the regime, final values at --steps, fitted tail
    exponents, ratios to the derived leading terms, each claim's verdict there, and the Dask worker that
    computed the row. Rows already computed by this code version are reused."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from ..sweep import parse_grid, run_sweep
    axes = parse_grid(list(grid))
    if data is not None:
        from ..errors import InvalidParameter
        if "data" in axes:
            raise InvalidParameter("data", data, "must not be given with a data axis on the grid (--grid data=...)",
                                   also=("grid",))
        from ..model.data import parse_data
        if not grid and parse_data(data).dims is not None:      # the default grid's D axis: the data fix D
            axes.pop("D", None)
        axes = {"data": [data]} | axes
    console = Console(stderr=True, quiet=quiet)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("eta"), TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task("verify sweep", total=None)

        def start(total, todo):
            bar.update(task, total=total, description=f"verify sweep ({total} regimes, {todo} to compute)")

        def tick(label, status, seconds, worker):
            if status not in ("reused", "ok"):
                bar.console.print(f"  {label}: {status}", markup=False, highlight=False, soft_wrap=True)
            bar.advance(task)
        res = run_sweep(axes, steps, out, measures=list(measures) or None, claim_steps=claim_steps,
                        arb_bits=arb_bits, scheduler=scheduler, workers=workers, fresh=fresh, progress=tick,
                        on_start=start)
    if as_json:
        click.echo(json.dumps({"rows": res["rows"]}, allow_nan=False))
        return
    rows = res["rows"]
    n = {s: sum(r["status"] == s for r in rows) for s in ("ok", "failed", "invalid")}
    click.echo(f"sweep: {len(rows)} regimes ({n['ok']} ok, {n['failed']} failed, {n['invalid']} not valid regimes; "
               f"{res['reused']} reused) -> {res['files']['parquet']}, {res['files']['csv']}"
               + (f"; figures in {out}/figures" if res["meta"]["figures"] else ""))
    for r in rows:
        if r["status"] != "ok":
            click.echo(f"  {r['key']}: {r['status']}: {r['error']}")
