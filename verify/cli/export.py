"""``verify export --coq DIR``: the obligations as Coq theorems (verify.coq), one file per group."""
from __future__ import annotations

import click

from ..coq.kernel import export
from ..errors import InvalidParameter
from .options import check_writable_dir, handle_errors


def _groups():
    from ..coq.groups import GROUPS  # heavy: loads flint,mpmath,sympy
    return sorted(GROUPS)


@click.command("export")
@click.option("--coq", "coq_dir", required=True, metavar="DIR",
              help="folder for the generated .v files and manifest.json (created if missing)")
@click.option("--group", "groups", multiple=True, metavar="NAME",
              help="export only this group (repeatable): reduction, lemma-C.2, invariants, comparison-lemma, "
                   "trapping-region [default: all]")
@click.option("--certificate", "certificate", default=None, metavar="FILE",
              help="trapping-region: the certificate file whose boxes to export (saved by `verify certify ... --save "
                   "FILE`) [default: the bench regime's, certified once and kept in the cache]")
@click.option("--boxes", type=int, default=None, metavar="N",
              help="trapping-region: export only the first N boxes of the cover (N >= 1) [default: every box]")
@handle_errors
def export_cmd(coq_dir, groups, certificate, boxes):
    """Write the proof obligations as Coq theorems (one per obligation, each ending in Qed), generated from the
    objects SymPy and the SMT solvers decided, and a saved certificate's box checks (trapping-region); `verify prove
    --coq DIR` has Coq's kernel check them."""
    known = _groups()
    bad = [g for g in groups if g not in known]
    if bad:
        raise InvalidParameter("--group", bad[0], f"must be one of {', '.join(known)}")
    if boxes is not None and boxes < 1:
        raise InvalidParameter("--boxes", str(boxes), "must be an integer >= 1")
    if certificate is not None:
        from ..coq.trapping import read_certificate  # heavy: loads flint,mpmath,sympy
        read_certificate(certificate)
    check_writable_dir("--coq", coq_dir)
    opts = (("certificate", certificate),) if certificate else ()
    man = export(coq_dir, tuple(groups), opts + ((("boxes", boxes),) if boxes else ()))
    n = sum(not t["copy"] for f in man["files"] for t in f["theorems"])
    click.echo(f"wrote {len(man['files'])} Coq files ({n} theorems) and manifest.json to {coq_dir}")
