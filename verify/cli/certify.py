"""``verify certify``: an all-time certificate for one regime, and its bounds at any T (verify.certify)."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import click

from ..certify.methods import method_of
from ..certify.obligations import CertificateFailed
from ..errors import InvalidParameter, OutputError
from ..inputs import check_input
from ..model.spec import BY_NAME, RANGED, is_range
from ..run.atomic import json_bytes, keep_elsewhere
from .options import (check_path_length, family_setting_options, handle_errors, regime_option, setting_from_options,
                      setting_kwargs)
from .progress import progress, progress_hook
from .regime import merge

DEFAULT_AT = (10**3, 10**6, 10**9, 10**12)


def parse_at(text: str | None) -> list[int]:
    """``"0,1000,1e12"`` -> [0, 1000, 10**12]: integers T >= 0 (scientific notation if it is an integer)."""
    if text is None:
        return list(DEFAULT_AT)
    out = []
    for item in text.split(","):
        try:
            d = Decimal(item.strip())
        except InvalidOperation:
            d = None
        if d is None or not d.is_finite() or d != d.to_integral_value() or d < 0 or d.adjusted() > 1000:
            raise InvalidParameter("at", text, "must be comma-separated integers T >= 0 such as 0,1000,1e12 "
                                   "(at most 1e1000)")
        out.append(int(d))
    return out


def parse_subdivisions(text: str) -> tuple[int, int]:
    try:
        n_u, n_eps = (int(x) for x in text.split(","))
    except ValueError:
        raise InvalidParameter("subdivisions", text, "must be two integers N_U,N_EPS such as 4,2 (slabs per annulus, "
                               "eps-pieces)") from None
    return n_u, n_eps


@click.command("certify")
@family_setting_options
@regime_option
@click.option("--save", "save", default=None, help="write the certificate to this JSON file (atomically): everything "
              "`verify certify --recheck` / `python -m recheck` needs to re-verify it")
@click.option("--recheck", "recheck", default=None, help="re-verify a saved certificate file with the independent "
              "checker (python -m recheck FILE); exit status 1 names the failed step")
@click.option("--family", "family", default=None, help="a family certificate file (saved by verify certify with "
              "ranges): with --query, print one member's bounds")
@click.option("--query", "query", default=None, help="the member of --family to bound, as NAME=VALUE,... for the "
              "family's ranged parameters (D=100,eta=0.1)")
@click.option("--scheduler", default=None, help="Dask scheduler address for a family's cells (default: a "
              "LocalCluster; also $VERIFY_SCHEDULER)")
@click.option("--workers", type=int, default=None, help="worker processes of the LocalCluster for a family's cells (to "
              "certify them, or with --recheck to re-check them)")
@click.option("--at", "at", default=None, help="comma-separated steps T at which to print the bounds "
              "(default 1e3,1e6,1e9,1e12; any size: the cost does not grow with T)")
@click.option("--json", "as_json", is_flag=True, help='print one JSON object: "bounds" and "certificate"')
@click.option("--bits", type=int, default=None, help="Arb precision of the prefix and the enclosures [128]")
@click.option("--u0", default=None, help="region: u <= u0 (off-support mass; default: found automatically)")
@click.option("--C", "C", default=None, help="region: |alpha - alpha*(u)| <= C u^3 (default: found automatically)")
@click.option("--shells", type=int, default=None, help="nested shells u <= u0 r^j, j <= SHELLS [120]")
@click.option("--shell-ratio", default=None, help="r of the shells (1/2: the dyadic shells u0 2^-j) [3/4]")
@click.option("--subdivisions", default=None, help="N_U,N_EPS: slabs per annulus and eps-pieces of each [4,2]")
@click.option("--max-depth", type=int, default=None, help="bisections of a box that fails the check [6]")
@click.option("--max-prefix", type=int, default=None, help="longest certified prefix before giving up [2000000]")
@click.option("--check-every", type=int, default=None, help="prefix steps between region-membership checks [16]")
@click.option("--T0", "T0", type=int, default=None, help="end the prefix exactly at step T0 (no search)")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def certify_cmd(save, recheck, family, query, scheduler, workers, at, as_json, bits, u0, C, shells, shell_ratio,
                subdivisions, max_depth, max_prefix, check_every, T0, quiet, **kw):
    """Prove lower and upper bounds on L - L_opt, ||S - S*||_F and ||W_X - V*||_F for every T >= 0.

    A certified Arb prefix from zero initialisation, a trapping region around the slow manifold
    checked with Arb, and a discrete comparison lemma for the cubic decay of the off-support mass.
    A certificate that does not close exits with status 1 and names the failed obligation.
    """
    if recheck is not None:
        sys.exit(run_recheck(recheck, workers, quiet))
    if family is not None or query is not None:
        return family_query(family, query, parse_at(at), as_json)
    # imported here: a query or a re-check needs none of the one-regime certificate's Arb machinery
    from ..certify import certify  # heavy: loads flint,mpmath
    regime_file = kw.pop("regime_file", None)
    if regime_file is not None:
        merge(kw, regime_file, "refused")
    if any(is_range(kw.get(n)) for n in RANGED):
        return family_certify(kw, parse_at(at), save, as_json, scheduler, workers, quiet)
    if kw.get("D") is None:
        raise InvalidParameter("D", None, "is required (a length, or a range LO..HI for a family), unless --recheck "
                               "FILE or --family FILE is given")
    kw["D"] = BY_NAME["D"].read_text(kw["D"])
    s = setting_from_options(kw, quiet=quiet)
    Ts = parse_at(at)
    if save is not None:
        check_save_path(save)
    n_u, n_eps = parse_subdivisions(subdivisions) if subdivisions is not None else (None, None)
    try:
        with progress("verify certify", None, quiet) as bar:
            cert = certify(s, bits=bits, u0=u0, C=C, shells=shells, ratio=shell_ratio, n_u=n_u, n_eps=n_eps,
                           max_depth=max_depth, max_prefix=max_prefix, check_every=check_every, T0=T0,
                           **progress_hook(certify, bar))
        bounds = [cert.bounds_json(T, None if as_json else 8) for T in Ts]
    except CertificateFailed as exc:
        if as_json:
            click.echo(json.dumps({"status": "failed", "failed_obligation": exc.obligation.as_dict(),
                                   "regime": s.config()}, indent=1))
        click.echo(str(exc), err=True)
        sys.exit(1)
    if save is not None:
        from ..certify.files import certificate_file  # heavy: loads flint,mpmath
        save_kept(certificate_file(cert, Ts), save)
    if as_json:
        click.echo(json.dumps({"status": "certified", "bounds": bounds, "certificate": cert.as_dict()}, indent=1))
        return
    d = cert.as_dict()
    click.echo(f"regime: D={s.D} K={s.K} N={s.N} M={s.M} d={s.d} sigma={s.sigma.spec()} eta={d['regime']['eta_v']} "
               f"eta_kq={d['regime']['eta_kq']} ||V*||^2={d['regime']['vstar_norm2']} loss={s.loss}")
    click.echo(f"certificate ({d['kind']}): {d['statement']}")
    for line in method_of(d).describe(d):
        click.echo(line)
    n_ok = sum(o["status"] == "discharged" for o in d["obligations"])
    methods = ", ".join(sorted({o["method"] for o in d["obligations"]}))
    click.echo(f"  obligations: {n_ok}/{len(d['obligations'])} discharged ({methods}); --json prints them all")
    print_bounds(bounds)


def print_bounds(bounds: list[dict]) -> None:
    """The table of certified bounds: a header naming the quantities, then one row [lo, hi] per step T."""
    click.echo(f"  {'T':>14s}  {'L - L_opt':>29s}  {'||S - S*||_F':>29s}  {'||W_X - V*||_F':>29s}")
    for b in bounds:
        cells = [f"[{b[q][0]}, {b[q][1]}]" for q in ("excess_loss", "s_err", "w_err")]
        click.echo(f"  {b['T']:>14d}  " + "  ".join(f"{c:>29s}" for c in cells))


def family_certify(kw: dict, Ts, save, as_json, scheduler, workers, quiet: bool = False) -> None:
    """Certify a family (some of --D, --eta, --eta-kq, --vstar-norm given as LO..HI) on the Dask executor, with the
    cells certified so far (of those known: a failed cell is bisected into more) on stderr."""
    from ..certify.family import FamilySpec, certify_family  # heavy: loads flint
    from ..certify.files import family_file  # heavy: loads flint,mpmath
    if save is not None:
        check_save_path(save)
    opts = setting_kwargs(kw)
    ranges = {n: BY_NAME[n].read_range(opts.pop(n)) for n in RANGED if is_range(opts.get(n))}
    if opts.get("D") is not None and "D" not in ranges:
        opts["D"] = BY_NAME["D"].read_text(opts["D"])
    spec = FamilySpec.of({k: v for k, v in opts.items() if k != "D"} | ({"D": opts["D"]} if "D" in opts else {}),
                         ranges)
    try:
        with progress("verify certify: family cells certified", None, quiet) as bar:
            fc = certify_family(spec, scheduler=scheduler, workers=workers,
                                progress=lambda done, pending: bar.update(completed=done, total=done + pending))
    except CertificateFailed as exc:
        click.echo(json.dumps({"status": "failed", "failed_obligation": exc.obligation.as_dict()}, indent=1)
                   if as_json else str(exc), err=not as_json)
        sys.exit(1)
    corners = [dict(zip(ranges, vals)) for vals in _corner_values(ranges)]
    data = family_file(fc, Ts, corners)
    if save is not None:
        save_kept(data, save)
    if as_json:
        click.echo(json.dumps({"status": "certified", "cells": len(fc.cells), "entries": fc.entries(),
                               "seconds": round(fc.seconds, 2),
                               "normalised_limits": data["normalised_limits"], "members": data["members"]}, indent=1))
        return
    n = fc.entries()
    click.echo(f"family certified: {len(fc.cells)} cells in {fc.seconds:.1f} s ({n['tube']} entered through the "
               f"tube, {n['taylor']} by the Taylor-model prefix); every member's bounds for T >= T0 of its cell "
               "(verify certify --family FILE --query ...)")
    for q, (lo, hi) in data["normalised_limits"].items():
        click.echo(f"  lim {q}/leading_{q} in 1 + [{float(Fraction(lo) - 1):.3g}, {float(Fraction(hi) - 1):.3g}] for "
                   "every member")


def _corner_values(ranges: dict):
    return sorted(set(itertools.product(*[sorted({lo, hi}) for lo, hi in ranges.values()])))


def family_query(path, query, Ts, as_json) -> None:
    """One member's bounds from a family certificate file, in the one-regime ``bounds`` format."""
    from ..certify.files import load_family  # heavy: loads flint,mpmath
    if path is None or query is None:
        raise InvalidParameter("member" if path is not None else "family", None, "must come together: --family FILE "
                               "--query NAME=VALUE,... (the member to bound)")
    fc = load_family(path)
    values = parse_query(query, fc.spec)
    bounds = fc.bounds(values, Ts, None if as_json else 8)
    # the bounds come from cells the independent re-checker checked in this call (FamilyCertificate.recheck)
    checked = {p or "root": [step for step, _ in lines] for p, lines in fc.rechecked.items()}
    if as_json:
        click.echo(json.dumps({"status": "certified", "member": {k: str(v) for k, v in values.items()},
                               "rechecked": {"checker": "recheck.certificates", "cells": checked},
                               "bounds": bounds}, indent=1))
        return
    click.echo("member " + ", ".join(f"{k}={v}" for k, v in values.items()) + f" of the family in {path}:")
    for cell, steps in checked.items():
        click.echo(f"  re-checked in this call by the independent checker (recheck.certificates): cell {cell} "
                   f"({', '.join(dict.fromkeys(steps))})")
    print_bounds(bounds)


def parse_query(text: str, spec) -> dict:
    """``"D=100,eta=0.1"`` -> {"D": 100, "eta": Fraction(1, 10)}, checked against the family's ranges."""
    out = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InvalidParameter("member", text, "must be NAME=VALUE,... such as D=100,eta=0.1")
        if name not in BY_NAME:
            raise InvalidParameter("member", f"{name}={value.strip()}", f"{name} is not a setting field: the family "
                                   f"ranges over {', '.join(spec.range_of)}")
        try:
            out[name] = BY_NAME[name].read_text(value.strip())     # the field's kind and range
        except InvalidParameter as exc:      # named as typed in --query, not as the --D / --eta flag's default
            raise InvalidParameter("member", f"{name}={value.strip()}", f"{name} {exc.valid}") from None
    spec.check_member(out)
    return {k: v for k, v in out.items() if k in spec.range_of}


def check_save_path(path: str) -> None:
    """Refuse, before any work, a --save path whose folder does not exist, cannot be written (a read-only file
    system: probed with a temporary file removed at once) or is a folder itself, or a path too long to write."""
    check_path_length("save", path)
    try:
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path) or not os.path.isdir(folder):
            raise InvalidParameter("save", path, "must be a file path in an existing folder")
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InvalidParameter("save", path, f"must be a file that can be written ({exc.strerror})") from None


def save_kept(data: dict, path: str) -> None:
    """Save a certificate file at ``path``; when the write fails after the work (a disk that filled up meanwhile),
    keep it under the temporary folder instead and say where (OutputError: exit status 4)."""
    from ..certify.files import save  # heavy: loads flint,mpmath
    try:
        save(data, path)
    except OSError as exc:
        kept = keep_elsewhere({os.path.basename(path) or "certificate.json": json_bytes(data)}, "certificate")
        raise OutputError(path, exc.strerror or str(exc), f"the certificate was kept in {kept}" if kept else
                          "the certificate could not be kept anywhere: free some space and run again") from None


def run_recheck(path: str, workers: int | None = None, quiet: bool = False) -> int:
    """Run the independent re-checker on ``path`` in a fresh interpreter (a family's cells on ``workers`` Dask
    processes); its output is printed, its exit status returned (0 verified, 1 a step failed, 2 bad usage). The
    time elapsed is shown on stderr meanwhile (the re-checker, which imports nothing of the toolkit, reports no
    steps)."""
    check_input(path, "recheck", what="certificate file")      # a device or a huge file: refused before the child
    extra = ["--workers", str(workers)] if workers else []
    with progress(f"verify certify --recheck {path}", None, quiet):
        proc = subprocess.run([sys.executable, "-m", "recheck", path, *extra], capture_output=True,
                              text=True)
    click.echo(proc.stdout, nl=False)
    if proc.stderr:
        click.echo(proc.stderr, err=True, nl=False)
    return proc.returncode
