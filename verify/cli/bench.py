"""``verify bench``: engine speeds, their ratios, and Monte Carlo GD for comparison (reports/bench/)."""
from __future__ import annotations

import json

import click

from .options import handle_errors


@click.command("bench")
@click.option("--json", "as_json", is_flag=True, help="print the results as one JSON object")
@click.option("--quick", is_flag=True, help="short measurements (< 60 s), as used by 'verify all'")
@click.option("--out", "out_dir", default="reports/bench", show_default=True,
              help="folder for bench.json and bench.md (gitignored by default; the committed example is "
                   "reports/example-bench)")
@click.option("--dask/--no-dask", "dask", default=None,
              help="also measure the Dask targets: certified-sweep throughput on 1 and 2 workers, per-task "
                   "overhead [default: on, off with --quick]")
@handle_errors
def bench_cmd(as_json, quick, out_dir, dask):
    """Measure steps/s of every engine (and Dask's sweep scaling and overhead); write OUT/bench.json and bench.md."""
    from ..bench import run_bench, to_markdown
    res = run_bench(quick=quick, out_dir=out_dir, dask=dask)
    click.echo(json.dumps(res, indent=1) if as_json else to_markdown(res))
