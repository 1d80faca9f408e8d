"""``verify prove --coq DIR``: coqc on the exported theorems; which ones Coq's kernel accepted (kernel.json)."""
from __future__ import annotations

import json
import time

import click

from ..coq.kernel import prove
from .options import handle_errors
from .progress import progress


def file_ticker(bar):
    """The progress callback of prove: the count of files, and an ETA from the files coqc actually ran (a file whose
    kept verdict was reused takes no time, so counting it would promise the rest too soon)."""
    started, ran = time.monotonic(), [0]

    def tick(name, done, total, reused):
        bar.update(completed=done, total=total, description=f"coqc: {name} {'reused' if reused else 'checked'}")
        ran[0] += not reused
        if done < total:
            bar.set_eta((time.monotonic() - started) / ran[0] * (total - done) if ran[0] else None)
    return tick


@click.command("prove")
@click.option("--coq", "coq_dir", required=True, metavar="DIR", help="a folder written by `verify export --coq`")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="local Dask workers running coqc, one file each [default: one per core]")
@click.option("--dask/--no-dask", "dask", default=None,
              help="run the files on the Dask executor [default: when there is more than one file]")
@click.option("--fresh", is_flag=True, help="run coqc on every file, even one whose verdict is kept from an earlier "
              "run (by its text and the installed Coq) [default: reuse it, so the same command resumes]")
@click.option("--json", "as_json", is_flag=True, help="print kernel.json")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def prove_cmd(coq_dir, workers, dask, fresh, as_json, quiet):
    """Run coqc on every exported file and record, per theorem, whether the kernel accepted it (route coq, with
    the Coq and library versions) in DIR/kernel.json. Exit status 1 when a theorem did not do what was expected
    (a step rejected, or a negative control accepted); 2 when coqc is not installed."""
    with progress("verify prove --coq: files checked by coqc", None, quiet) as bar:
        res = prove(coq_dir, workers=workers, executor=dask, reuse=not fresh, progress=file_ticker(bar))
    if as_json:
        click.echo(json.dumps(res, indent=1))
    else:
        for g, s in res["groups"].items():
            click.echo(f"{g}: {s['accepted']} of {s['theorems']} theorems accepted "
                       f"({s['expected_rejected']} negative controls, expected rejected); "
                       f"{'as expected' if s['as_expected'] else 'NOT as expected'}")
            if "certificate" in s:
                click.echo(f"  {s['certificate']['why']}")
        click.echo(f"Coq {res['versions']['coq']}, CoqInterval {res['versions']['interval']}; coqc CPU "
                   f"{res['cpu_seconds']:.1f} s, wall {res['wall_seconds']:.1f} s"
                   + (f" ({res['reused_files']} of {len(res['files'])} files' verdicts reused from an earlier run; "
                      "--fresh runs them again)" if res["reused_files"] else "") + f"; {coq_dir}/kernel.json")
    if not all(s["as_expected"] for s in res["groups"].values()):
        raise SystemExit(1)
