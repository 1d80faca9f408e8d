"""``verify compare REPORT_A REPORT_B [--out FILE]``: what differs between two report folders
(verify.report.compare), printed and written as Markdown."""
from __future__ import annotations

from pathlib import Path

import click

from ..report.compare import differences, load_results, markdown
from ..run.atomic import write_bytes_atomic
from .options import check_writable_dir, handle_errors


@click.command("compare")
@click.argument("report_a", metavar="REPORT_A")
@click.argument("report_b", metavar="REPORT_B")
@click.option("--out", "out", default=None, metavar="FILE", help="also write the comparison to this file (Markdown)")
@handle_errors
def compare_cmd(report_a, report_b, out):
    """Print the statements whose verdicts or evidence differ between two report folders (results.json of
    `verify all`), and the headline numbers that differ, side by side, each report's convention in the header
    (e.g. a reference run against one with --loss mean)."""
    if out is not None:
        check_writable_dir("--out", Path(out).parent if str(Path(out).parent) else ".")
    a, b = load_results("REPORT_A", report_a), load_results("REPORT_B", report_b)
    text = markdown(report_a, report_b, a, b, differences(a, b))
    if out is not None:
        write_bytes_atomic(out, text.encode())
    click.echo(text, nl=False)
