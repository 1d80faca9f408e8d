"""``verify sweep``: a grid of regimes x measurements on Dask; a Parquet table, a CSV copy and figures."""
from __future__ import annotations

import json
import threading
from collections import Counter

import click
from click.core import ParameterSource

from ..errors import InvalidParameter
from ..model.data import parse_data
from ..run.execute import check_cluster, check_tmpdir, local_workers, scheduler_address
from .options import CliError, check_writable_dir, data_option, handle_errors
from .progress import note, progress

CONFIRM_ROWS = 1000          # a larger grid needs --yes
FAILED_SHOWN = 10            # failed rows listed one by one; the rest are counted


def summary_lines(rows: list[dict]) -> list[str]:
    """What the table does not say at a glance: the invalid regimes counted by kind (one line each, with an
    example), the failed rows (the first FAILED_SHOWN), and the rows whose horizon ends before the onset T*."""
    out = []
    kinds = Counter(r.get("invalid_kind") or "?" for r in rows if r["status"] == "invalid")
    if kinds:
        out.append(f"not valid regimes: {sum(kinds.values())}, by the parameter at fault:")
        for kind, n in kinds.most_common():
            ex = next(r for r in rows if r["status"] == "invalid" and (r.get("invalid_kind") or "?") == kind)
            out.append(f"  {n:6d} x {kind}: e.g. {ex['key']}: {ex['error']}")
    failed = [r for r in rows if r["status"] == "failed"]
    for r in failed[:FAILED_SHOWN]:
        out.append(f"  {r['key']}: failed: {r['error']}")
    if len(failed) > FAILED_SHOWN:
        out.append(f"  ... and {len(failed) - FAILED_SHOWN} more failed rows (column 'error' of the table)")
    early = [r for r in rows if r.get("before_tstar")]
    if early:
        out.append(f"{len(early)} rows end before the onset T* of the 1/T phase (column before_tstar): their fitted "
                   "exponents and ratios are not yet the asymptotic ones; give more --steps")
    return out


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
              help="measurements (repeatable): trajectory, claims, certified, certificate [default: trajectory and "
                   "claims]")
@click.option("--claim-steps", type=click.IntRange(1, 10**7), default=2_000, show_default=True,
              help="horizon of the per-regime claim checks (at most --steps; the default is cut to --steps)")
@click.option("--arb-bits", type=click.IntRange(32, 4096), default=128, show_default=True,
              help="precision of the certified measurement")
@click.option("--out", "out", default="reports/sweep", show_default=True, type=click.Path(file_okay=False),
              help="folder for sweep.parquet, sweep.csv, sweep.json and figures/ (gitignored by default)")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="an existing Dask scheduler, e.g. tcp://HOST:8786 (default: $VERIFY_SCHEDULER, else a "
                   "LocalCluster on this machine)")
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="worker processes of the LocalCluster [default: the number of cores, at most one per row; "
                   "never more than the cores and the available memory hold]")
@click.option("--fresh", is_flag=True, help="compute every row again, ignoring saved rows")
@click.option("--yes", is_flag=True, help=f"run a grid of more than {CONFIRM_ROWS} regimes")
@click.option("--json", "as_json", is_flag=True, help='print one JSON object {"rows": [...]} on stdout')
@click.option("--quiet", is_flag=True, help="no progress display (the summary is printed all the same)")
@handle_errors
def sweep_cmd(grid, data, steps, measures, claim_steps, arb_bits, out, scheduler, workers, fresh, yes, as_json, quiet):
    """Run every regime of the grid and write a table: the regime, final values at --steps, fitted tail
    exponents, ratios to the derived leading terms, each claim's verdict there, and the Dask worker that
    computed the row. Rows already computed by this code version are reused; Ctrl-C stops cleanly and the
    same command resumes."""
    from ..sweep import grid_size, parse_grid, run_sweep  # heavy: loads flint,mpmath,sympy
    if claim_steps > steps:         # the claims are checked within the run of --steps (the default is cut to it)
        if click.get_current_context().get_parameter_source("claim_steps") == ParameterSource.COMMANDLINE:
            raise InvalidParameter("claim_steps", claim_steps, f"must be at most --steps ({steps})", also=("steps",))
    axes = parse_grid(list(grid))
    if data is not None:
        if "data" in axes:
            raise InvalidParameter("data", data, "must not be given with a data axis on the grid (--grid data=...)",
                                   also=("grid",))
        if not grid and parse_data(data).dims is not None:      # the default grid's D axis: the data fix D
            axes.pop("D", None)
        axes = {"data": [data]} | axes
    n = grid_size(axes)
    if n > CONFIRM_ROWS and not yes:
        shape = " x ".join(f"{len(v)} {k}" for k, v in axes.items())
        raise CliError(f"--grid: the grid has {n:,} regimes ({shape}); pass --yes to run them all, or fewer values")
    check_writable_dir("--out", out)            # before any row is computed
    if scheduler_address(scheduler) is None:
        check_tmpdir()                        # the local cluster's scratch place, before any work
    if workers is not None and check_cluster(scheduler, workers) is None:
        note(local_workers(workers, n)[1], quiet)
    with progress("verify sweep", None, quiet) as bar:
        # The count is in steps (regimes x steps): a running row advances it as its measurements tell how far
        # they are (verify.sweep.run.row_progress), so one long regime does not sit at 0/1.
        counted: dict = {}            # label -> fraction of that row counted so far
        lock = threading.Lock()       # the rows' messages arrive on the client's event thread

        def start(total, todo):
            bar.update(total=total * steps, description=f"verify sweep ({total} regimes x {steps} steps, "
                                                        f"{todo} to compute)")

        def count(label, fraction):
            with lock:
                before = counted.get(label, 0.0)
                if fraction > before:
                    counted[label] = fraction
                    bar.advance((fraction - before) * steps)

        def tick(label, status, seconds, worker):
            if status == "failed":
                bar.log(f"  {label}: {status}")
            count(label, 1.0)
        res = run_sweep(axes, steps, out, measures=list(measures) or None, claim_steps=claim_steps,
                        arb_bits=arb_bits, scheduler=scheduler, workers=workers, fresh=fresh, progress=tick,
                        on_start=start, on_fraction=count)
    rows = res["rows"]
    lines = summary_lines(rows)
    if as_json:
        click.echo(json.dumps({"rows": rows}, allow_nan=False))
        for line in lines:
            click.echo(line, err=True)
        return
    k = {s: sum(r["status"] == s for r in rows) for s in ("ok", "failed", "invalid")}
    click.echo(f"sweep: {len(rows)} regimes ({k['ok']} ok, {k['failed']} failed, {k['invalid']} not valid regimes; "
               f"{res['reused']} reused) -> {res['files']['parquet']}, {res['files']['csv']}"
               + (f"; figures in {out}/figures" if res["meta"]["figures"] else ""))
    for line in lines:
        click.echo(line)
