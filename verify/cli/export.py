"""``verify export --coq DIR``: the obligations as Coq theorems (verify.coq), one file per group."""
from __future__ import annotations

import click

from .options import check_writable_dir, handle_errors


def _groups():
    from ..coq.groups import GROUPS
    return sorted(GROUPS)


@click.command("export")
@click.option("--coq", "coq_dir", required=True, metavar="DIR",
              help="folder for the generated .v files and manifest.json (created if missing)")
@click.option("--group", "groups", multiple=True, metavar="NAME",
              help="export only this group (repeatable): reduction, lemma-C.2, invariants, comparison-lemma "
                   "[default: all]")
@handle_errors
def export_cmd(coq_dir, groups):
    """Write the proof obligations as Coq theorems (one per obligation, each ending in Qed), generated from the
    objects SymPy and the SMT solvers decided; `verify prove --coq DIR` has Coq's kernel check them."""
    from ..coq.kernel import export
    from ..errors import InvalidParameter
    known = _groups()
    bad = [g for g in groups if g not in known]
    if bad:
        raise InvalidParameter("--group", bad[0], f"must be one of {', '.join(known)}")
    check_writable_dir("--coq", coq_dir)
    man = export(coq_dir, tuple(groups))
    n = sum(not t["copy"] for f in man["files"] for t in f["theorems"])
    click.echo(f"wrote {len(man['files'])} Coq files ({n} theorems) and manifest.json to {coq_dir}")
