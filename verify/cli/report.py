"""``verify report``: rebuild a report folder from saved parts (no part is run again)."""
from __future__ import annotations

import click

from ..errors import OutputError
from ..report import saved_parts_dir, write_report
from ..report.render import roles_line
from ..report.results import load_parts
from ..run.atomic import recover_folder
from ..run.lock import folder_lock
from .options import check_writable_dir, handle_errors
from .progress import note


@click.command("report")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="report folder to (re)write")
@click.option("--from", "src", default=None, type=click.Path(file_okay=False, exists=True),
              help="folder holding the saved parts (its _work/parts or parts); default: OUT")
@handle_errors
def report_cmd(out, src):
    """Rebuild index.md, index.html, results.json and figures from the saved part records."""
    check_writable_dir("--out", out)
    with folder_lock(out, "out"):     # not while a `verify all --out OUT` is writing it
        pdir = saved_parts_dir(src or out)
        unreadable = [r["file"] for r in load_parts(pdir) if r.get("unreadable")]
        try:
            res = write_report(out, pdir)
        except OSError as exc:           # a disk that filled up: remove the half-built folder beside OUT
            recover_folder(out)
            raise OutputError(out, exc.strerror or str(exc), f"{out} is as it was and the parts are in {pdir}: free "
                              "some space and run the same command again, or give another --out") from None
    for f in unreadable:
        note(f"verify report: {pdir}/{f} cannot be read as a part record: counted as a part that did not finish")
    s = res["summary"]
    click.echo(f"report: {out}/index.html ({s['ok']} parts finished, {s['not_ok']} not; {roles_line(s)})")
