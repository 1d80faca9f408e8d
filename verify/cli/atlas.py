"""``verify atlas``: the cube of (rho = K/D, x, kappa = y/x) cut into cells, each decided for all its regimes."""
from __future__ import annotations

import json
import sys
import time

import click

from ..certify import atlas as A
from ..certify.atlas import check_box
from ..certify.atlas_figure import atlas_figure as draw
from ..model.spec import KINDS, OF_KIND
from ..errors import InvalidParameter
from ..model import make_setting
from ..model.numbers import frac_str
from ..run.atomic import write_bytes_atomic
from ..run.cache import cache_dir
from .certify import check_save_path, parse_at
from .options import CliError, handle_errors


def parse_box(rho: str, x: str, kappa: str) -> dict:
    """The three ranges as exact Fractions (a single value is a degenerate range), checked against the hypothesis."""
    box = {n: KINDS["number"].read_range(n, t) for n, t in (("rho", rho), ("x", x), ("kappa", kappa))}
    check_box(box)
    return box


def parse_grid(text: str) -> tuple:
    try:
        g = tuple(int(v) for v in text.split(","))
    except ValueError:
        g = ()
    if len(g) != 3 or not all(1 <= v <= 64 for v in g):
        raise InvalidParameter("grid", text, "must be three integers NR,NX,NK in 1..64 (pieces along rho, x, kappa)")
    return g


QUERY_FORM = "NAME=VALUE,... with make_setting's names, e.g. D=100000,K=3,eta=1/10,vstar-norm=1,preset=sts"


def parse_member(text: str):
    """``D=100000,K=3,eta=1/10,vstar-norm=1,preset=sts`` -> a validated Setting (make_setting's keywords; a dash
    in a name is an underscore). Any problem is reported against --query as typed, with the valid form."""
    kw = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name or not value.strip():
            raise InvalidParameter("--query", text, f"must be {QUERY_FORM} ({item.strip() or 'an empty item'!r} is "
                                   "not NAME=VALUE)")
        kw[name] = value.strip()
    if "D" not in kw:
        raise InvalidParameter("--query", text, f"must give D (the regime's length): {QUERY_FORM}")
    for n in [n for n in kw if n in OF_KIND["int"]]:       # the integer fields (verify.model.spec), read by their kind
        try:
            kw[n] = KINDS["int"].from_text(n, kw[n])
        except InvalidParameter:
            raise InvalidParameter("--query", text, f"must give {n} as an integer, not {kw[n]!r}: {QUERY_FORM}"
                                   ) from None
    try:
        return make_setting(**kw)
    except TypeError as exc:
        raise InvalidParameter("--query", text, f"names an option make_setting does not take ({exc}): {QUERY_FORM}"
                               ) from None
    except InvalidParameter as exc:
        raise InvalidParameter("--query", text, f"must describe a valid regime ({exc.describe()})") from None


def _newest_atlas():
    files = sorted((p for p in cache_dir("atlas").glob("atlas-*.json") if not p.name.endswith(".partial.json")),
                   key=lambda p: p.stat().st_mtime)
    return str(files[-1]) if files else None


@click.command("atlas")
@click.option("--rho", default=None, help="rho = K/D as LO..HI in [0, 1) (0 is D -> infinity)")
@click.option("--x", "x", default=None, help="x = eta_V c_L v N/K as LO..HI in (0, 2)")
@click.option("--kappa", default=None, help="kappa = y/x as LO..HI in (0, infinity)")
@click.option("--grid", default="1,1,1", help="NR,NX,NK: equal pieces along rho, x, kappa to start from [1,1,1]")
@click.option("--depth", type=click.IntRange(0, 24), default=None, help="bisections of an open cell [3]")
@click.option("--save", default=None, help="write the atlas here (atomically); default: the cache, named by its "
              "content hash")
@click.option("--resume", default=None, help="an interrupted run's partial atlas: run its pending cells")
@click.option("--scheduler", default=None, help="Dask scheduler address (default: a LocalCluster; also "
              "$VERIFY_SCHEDULER)")
@click.option("--workers", type=int, default=None, help="worker processes of the LocalCluster")
@click.option("--query", default=None, help="a regime NAME=VALUE,... (D=100000,K=3,eta=1/10,vstar-norm=1,preset=sts)"
              ": its bounds from --atlas")
@click.option("--atlas", "atlas_path", default=None, help="the atlas file a --query answers from (default: the "
              "newest in the cache)")
@click.option("--figure", default=None, help="write the figure of --atlas (slices of the cube, cells by status, "
              "the presets' paths) to this PNG file")
@click.option("--at", "at", default=None, help="steps T for --query's bounds [1e3,1e6,1e9,1e12]")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--quiet", is_flag=True, help="no progress lines on stderr")
@handle_errors
def atlas_cmd(rho, x, kappa, grid, depth, save, resume, scheduler, workers, query, atlas_path, figure, at, as_json,
              quiet):
    """Decide every regime of a box of (rho = K/D, x, kappa = y/x) at once, cell by cell.

    Each cell is certified (every check holds for all its regimes), refuted (a replayable counterexample) or
    open (which check failed, and why); open cells are bisected up to --depth. Ctrl-C saves the finished cells
    and exits 130 saying how to resume.
    """
    if query is not None:
        return atlas_query(query, atlas_path or _newest_atlas(), parse_at(at), as_json)
    if figure is not None:
        return atlas_figure(atlas_path or _newest_atlas(), figure)
    from ..certify import atlas_query as AQ  # heavy: loads flint
    if save is not None:
        check_save_path(save)
    if resume is not None:
        old = AQ.read_atlas(resume)
        box = {n: tuple(A.Fraction(v) for v in old["spec"]["ranges"][n]) for n in A.COORDINATES}
        seeds = [A.AtlasCell.of_record(c) for c in old["pending"]]
        done, depth = old["cells"], depth if depth is not None else int(old["depth"])
    else:
        if None in (rho, x, kappa):
            missing = next(n for n, v in (("rho", rho), ("x", x), ("kappa", kappa)) if v is None)
            raise InvalidParameter(missing, None, "is required: the box as --rho LO..HI --x LO..HI --kappa LO..HI "
                                   "(or --query REGIME, or --resume FILE)")
        box = parse_box(rho, x, kappa)
        seeds, done = A.seed_cells(box, parse_grid(grid)), []
        depth = A.DEPTH if depth is None else depth
    t0 = time.perf_counter()
    knobs = {}

    def progress(rec, finished, pending):
        if not quiet:
            click.echo(f"atlas: [{finished} done, {pending} to run, {time.perf_counter() - t0:.0f} s] cell "
                       f"{rec['path']} {rec['status']} in {rec['seconds']:.1f} s"
                       + ("" if rec["status"] == "certified" else f": {rec['reason'][:160]}"), err=True)

    def in_cell(msg):
        # a running cell's check entered a phase (verify.certify.atlas.phase): [path, check, phase, seconds]
        if not quiet:
            click.echo(f"atlas: [{time.perf_counter() - t0:.0f} s] cell {msg[0]} {msg[1]}: {msg[2]} "
                       f"({msg[3]:.0f} s into the cell)", err=True)

    def interrupted(finished, pending):
        data = A.atlas_file(box, finished, knobs=A.atlas_knobs(knobs), depth=depth, seconds=time.perf_counter() - t0,
                            pending=pending)
        path = (save + ".partial") if save else str(A.cache_path(data)).replace(".json", ".partial.json")
        if save is None:
            A.cache_path(data).parent.mkdir(parents=True, exist_ok=True)
        A.save_atlas(data, path)
        raise A.AtlasInterrupted(f"interrupted: {len(finished)} cells finished and {len(pending)} pending saved to "
                                 f"{path}; resume with: verify atlas --resume {path}"
                                 + (f" --save {save}" if save else ""))

    cells = A.run_atlas(seeds, depth=depth, knobs=knobs, scheduler=scheduler, workers=workers, progress=progress,
                        done=done, on_interrupt=interrupted, on_phase=in_cell)
    seconds = time.perf_counter() - t0
    data = A.atlas_file(box, cells, knobs=A.atlas_knobs(knobs), depth=depth, seconds=seconds)
    path = save or str(A.cache_path(data))
    if save is None:
        A.cache_path(data).parent.mkdir(parents=True, exist_ok=True)
    digest = A.save_atlas(data, path)
    summary = {"status": "complete", "file": path, "sha256": digest, "counts": data["counts"],
               "cells": len(cells), "seconds": round(seconds, 2),
               "open": [{"path": c["path"], "box": c["box"], "reason": c["reason"]} for c in data["cells"]
                        if c["status"] == "open"],
               "refuted": [{"path": c["path"], "box": c["box"], "reason": c["reason"], "replay": next(
                   (r["evidence"]["replay"]["command"] for r in c["checks"].values() if r["status"] == "refuted"),
                   None)} for c in data["cells"] if c["status"] == "refuted"]}
    if as_json:
        click.echo(json.dumps(summary, indent=1))
        return
    n = data["counts"]
    rng = ", ".join(f"{n} {frac_str(lo)}..{frac_str(hi)}" for n, (lo, hi) in box.items())
    click.echo(f"atlas of {rng}: {len(cells)} cells in "
               f"{seconds:.1f} s: {n['certified']} certified, {n['refuted']} refuted, {n['open']} open")
    for c in summary["open"]:
        click.echo(f"  open {c['path']} {c['box']}: {c['reason'][:200]}")
    for c in summary["refuted"]:
        click.echo(f"  refuted {c['path']} {c['box']}: {c['reason'][:200]}; replay: {c['replay']}")
    click.echo(f"saved to {path} (sha256 {digest[:16]})")
    if n["certified"] < len(cells):
        sys.exit(1)


def atlas_query(query: str, path, Ts, as_json) -> None:
    """One regime's bounds from the atlas (verify.certify.atlas_query.query: no SymPy, JAX or Dask imported when
    every T is past the cell's T0); exit 2 outside every certified cell."""
    from ..certify import atlas_query as AQ  # heavy: loads flint
    s = parse_member(query)
    if path is None:
        raise CliError("--atlas is required: no atlas file is in the cache (write one with verify atlas --rho LO..HI "
                       "--x LO..HI --kappa LO..HI)")
    data = AQ.read_atlas(path) | {"source": str(path)}
    out = AQ.query(data, s, Ts, None if as_json else 8)
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    click.echo(f"point rho = {out['point']['rho']}, x = {out['point']['x']}, kappa = {out['point']['kappa']}: "
               f"cell {out['cell']['path']} (T0 = {out['cell']['T0']})")
    for b in out["bounds"]:
        click.echo(f"  {b['T']:>14d}  " + "  ".join(f"[{b[q][0]}, {b[q][1]}]" for q in ("excess_loss", "s_err",
                                                                                          "w_err")))


def atlas_figure(path, out: str) -> None:
    """The atlas figure (verify.certify.atlas_figure) written atomically to ``out``."""
    from ..certify import atlas_query as AQ  # heavy: loads flint
    if path is None:
        raise CliError("--atlas is required: no atlas file is in the cache (write one with verify atlas --rho LO..HI "
                       "--x LO..HI --kappa LO..HI)")
    check_save_path(out)
    png, caption = draw(AQ.read_atlas(path))
    write_bytes_atomic(out, png)
    click.echo(f"{out}: {caption}")
