"""``verify bench``: engine speeds, their ratios, and Monte Carlo GD for comparison (reports/bench/)."""
from __future__ import annotations

import json

import click

from ..run.execute import check_tmpdir
from .options import CliError, check_writable_dir, handle_errors
from .progress import progress


@click.command("bench")
@click.option("--json", "as_json", is_flag=True, help="print the results as one JSON object")
@click.option("--quick", is_flag=True, help="short measurements (under a minute), as used by 'verify all'")
@click.option("--out", "out_dir", default="reports/bench", show_default=True,
              help="folder for bench.json and bench.md (gitignored by default; the committed example is "
                   "reports/example-bench)")
@click.option("--dask/--no-dask", "dask", default=None,
              help="also measure the Dask targets: certified-sweep throughput on 1 and 2 workers, per-task "
                   "overhead [default: on, off with --quick]")
# The choices are verify.bench.timings.ONLY's names, written here so that `--help` does not import the bench (a test
# compares the two).
@click.option("--only", "only", type=click.Choice(["examples", "kernel_boxes", "region_b"]), default=None,
              help="run one target alone and write its JSON and Markdown to OUT (OUT/NAME.json, .md): 'examples', every "
                   "example command of README.md and docs/*.md against its budget (60 s on the reference machine, "
                   "judged as its CPU time over a baseline timed in the same run); 'kernel_boxes', every box of the "
                   "bench certificate's trapping region checked by Coq's kernel (needs coqc; the slowest target); "
                   "'region_b', Lemma C.2's Region B decided on 2 Dask workers and re-checked, against >= 90% decided")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def bench_cmd(as_json, quick, out_dir, dask, only, quiet):
    """Measure steps/s of every engine (and Dask's sweep scaling and overhead); write OUT/bench.json and bench.md.

    The full measurement takes over an hour on 2 cores: Region A of the atlas runs up to its 60-minute target,
    besides about 15 minutes of engines, certificates and the family (bench.json records its time under
    "seconds"); --quick takes under a minute. Progress goes to stderr (a plain line every 10 s when stderr is
    not a terminal), so --json stays pure JSON.
    """
    from ..bench.timings import measurement_count, run_bench, to_markdown  # heavy: loads mpmath
    if only and (quick or dask is not None):
        raise CliError(f"--only: runs the target {only!r} alone, which has no --quick or --dask: drop them")
    check_writable_dir("--out", out_dir)          # before minutes of measuring, not after
    check_tmpdir()
    if only:
        from ..bench.timings import ONLY, run_only  # heavy: loads mpmath
        with progress(f"verify bench --only {only}", ONLY[only][3](), quiet) as bar:
            def tick(line):
                bar.log(f"  {line}")
                bar.advance()
            res, md = run_only(only, out_dir, tick=tick)
        click.echo(json.dumps(res, indent=1) if as_json else md)
        return
    with progress("verify bench", measurement_count(quick, dask), quiet) as bar:
        res = run_bench(quick=quick, out_dir=out_dir, dask=dask,
                        tick=lambda name: bar.advance(description=f"bench: {name}"))
    click.echo(json.dumps(res, indent=1) if as_json else to_markdown(res))
