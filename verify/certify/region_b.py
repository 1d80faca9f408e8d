"""Region B of the atlas: Lemma C.2's large-step range decided cell by cell, on the Dask executor.

Region B is rho = K/D in [1/8, 7/8], x from min(1, r) (r = 1/rho - 1, the small-step edge) to 19/10 and kappa in
[1/256, 4]; the regions are data (positivity.REGIONS: "B", "B-low" = rho in [1/32, 1/8], kappa in [1/256, 1],
below it, and those towards the faces x -> 2, rho -> 1, kappa -> 0 and kappa -> oo). A region is cut into cells
(rho in its slices, sixteenths for B, x at :func:`_x_breaks` from its start, kappa whole; the cells of a rho slice start at the eighth below its small-step edge), each decided by
verify.certify.positivity_sets (a band, else the ratio set, else the staircase set); an open cell is bisected across its widest relative
interval (kappa in log scale) up to ``depth`` times, on the executor of verify.run.execute. The decided fraction is
by volume in (rho, x, log2 kappa) inside the region (positivity.region_b_volume). The result is plain versioned
JSON, written atomically; every certified cell in it passes recheck.positivity.

The atlas's cell check "positivity" is built from :func:`applies`, :func:`check_recheck` and the sets' decision
here, with a counterexample search in a cell they leave open; that search is the fuzzer's (a layer above), so
the check and the command that runs Region B (``python -m verify.fuzz.region_b``: run, then search the open cells,
then save to :func:`cache_file`) live in verify.fuzz.region_b.
"""
from __future__ import annotations

import math
import time
from fractions import Fraction
from pathlib import Path
from typing import Callable

from ..run.cache import cache_dir
from ..run.execute import Executor
from .positivity import FACES_BOX, NAMES, REGIONS, in_hypotheses, region_b_volume, small_step_edge
from .positivity_sets import decide_positivity
from recheck.positivity import CheckFailed, recheck

VERSION = 1
KIND = "lemma-C.2-region-B"
DEPTH = 3
STATEMENT = ("Lemma C.2, large steps (sigma = identity): alpha(t) > 0 for every t >= 1 and every member of the cell "
             "(an invariant set holding the first step: a band [L, A] x {delta >= 0}, alpha <= gamma alpha* x "
             "{delta >= 0}, alpha <= min(gamma T, A(rho)) x {delta >= 0}, or a staircase L_i <= alpha <= U_i on "
             "pieces of delta >= 0; verify.certify.positivity_sets)")


def _x_breaks() -> list:
    """x's cell ends: halvings down to 1/128 (rho near 1 has its small-step edge r = 1/rho - 1 below 1/8), eighths
    below 1, tenths to 1.9, then 1.95 and 1.98 (towards the stability edge x = 2)."""
    return ([Fraction(1, 2**k) for k in range(7, 3, -1)] + [Fraction(k, 8) for k in range(1, 8)]
            + [Fraction(k, 10) for k in range(10, 20)] + [Fraction(39, 20), Fraction(99, 50)])


def initial_cells(rho_steps: tuple | None = None, region: str = "B") -> list:
    """A region's initial cells (positivity.REGIONS; default Region B): dicts {"rho": (lo, hi), "x": .., "kappa": ..}
    of Fractions (``rho_steps``: the rho slices to keep, by index, for a small run)."""
    reg = REGIONS[region]
    (rl, rh), step = reg["rho"], reg["rho_slice"]
    n = int((rh - rl) / step)
    xs = [v for v in _x_breaks() if (reg["x"][0] is None or v >= reg["x"][0]) and v <= reg["x"][1]]
    out = []
    for i in range(n):
        if rho_steps is not None and i not in rho_steps:
            continue
        rho = (rl + i * step, rl + (i + 1) * step)
        edge = small_step_edge(rho[1])            # the edge's lowest point over the slice (r decreases in rho)
        for a, b in zip(xs, xs[1:]):
            if b > edge:
                out.append({"rho": rho, "x": (a, b), "kappa": reg["kappa"]})
    return out


def halves(cell: dict) -> tuple:
    """Two halves across the widest relative interval (kappa measured in log2)."""
    def width(n):
        lo, hi = cell[n]
        return math.log2(hi / lo) / 10 if n == "kappa" else float((hi - lo) / hi)
    n = max(NAMES, key=width)
    lo, hi = cell[n]
    mid = Fraction(2) ** round((math.log2(lo) + math.log2(hi)) / 2) if n == "kappa" else (lo + hi) / 2
    if not lo < mid < hi:
        mid = (lo + hi) / 2
    return cell | {n: (lo, mid)}, cell | {n: (mid, hi)}


def _task(cell: dict, path: str, kinds: tuple | None = None) -> dict:
    """One cell on a worker: its decision (by the set kinds named ``kinds``, default all) with its place in the
    bisection tree and its time."""
    t = time.perf_counter()
    res = decide_positivity(cell, kinds)
    return res | {"path": path, "seconds": round(time.perf_counter() - t, 3)}


def run_region_b(cells: list | None = None, *, depth: int = DEPTH, workers: int | None = None, scheduler=None,
                 processes: bool = True, deadline: float | None = None, progress: Callable | None = None,
                 region: str = "B") -> dict:
    """Decide every cell (default: the region's :func:`initial_cells`) on the executor, bisecting open ones up to
    ``depth``; past ``deadline`` seconds the cells not yet run are recorded open ("not run: deadline") and
    ``complete`` is False. Returns the versioned result (module docstring)."""
    cells = initial_cells(region=region) if cells is None else cells
    total = sum(region_b_volume(c, REGIONS[region]) for c in cells)
    kinds = REGIONS[region].get("sets")
    t0 = time.perf_counter()
    leaves, pending = [], [(c, f"c{i}:") for i, c in enumerate(cells)]
    complete = True
    with Executor(scheduler=scheduler, workers=workers, processes=processes) as ex:
        while pending:
            batch, pending = pending, []
            by_path = {p: c for c, p in batch}
            for path, res in ex.stream(_task, [(p, (c, p, kinds)) for c, p in batch]):
                if isinstance(res, Exception):
                    res = {"version": VERSION, "cell": {n: [str(v) for v in by_path[path][n]] for n in NAMES},
                           "status": "open", "reason": f"the check raised {type(res).__name__}: {res}"[:600],
                           "failed": "error", "path": path}
                over = deadline is not None and time.perf_counter() - t0 > deadline
                if res["status"] == "open" and len(path.split(":")[1]) < depth and not over:
                    pending += [(h, path + str(k)) for k, h in enumerate(halves(by_path[path]))]
                else:
                    leaves.append(res)
                if progress is not None:
                    progress(len(leaves), len(pending))
            if deadline is not None and time.perf_counter() - t0 > deadline and pending:
                complete = False
                leaves += [{"version": VERSION, "cell": {n: [str(v) for v in c[n]] for n in NAMES}, "path": p,
                            "status": "open", "failed": "not-run", "reason": "not run: the deadline passed"}
                           for c, p in pending]
                pending = []
    return summary(leaves, total, time.perf_counter() - t0, complete, depth, region)


def summary(leaves: list, total: float, seconds: float, complete: bool, depth: int, region: str = "B") -> dict:
    """The versioned result: cells sorted by path, decided and open volume fractions, the open cells' reasons."""
    leaves = sorted(leaves, key=lambda c: c["path"])
    reg = REGIONS[region]
    vol = lambda c: region_b_volume({n: tuple(Fraction(v) for v in c["cell"][n]) for n in NAMES}, reg)  # noqa: E731
    cert = sum(vol(c) for c in leaves if c["status"] == "certified")
    refuted = [c for c in leaves if c["status"] == "refuted"]
    opened = [c for c in leaves if c["status"] == "open"]
    return {"version": VERSION, "kind": KIND, "statement": STATEMENT, "region_name": region,
            "region": {n: [str(v) if v is not None else "min(1, r)" for v in reg[n]] for n in NAMES},
            "measure": f"volume in (rho, x, log2 kappa) inside Region {region}", "depth": depth, "complete": complete,
            "seconds": round(seconds, 1), "volume": total, "decided_fraction": (cert / total) if total else 0.0,
            "counts": {"certified": len(leaves) - len(refuted) - len(opened), "refuted": len(refuted),
                       "open": len(opened)},
            "open": [{"path": c["path"], "cell": c["cell"], "reason": c["reason"]} for c in opened],
            "cells": leaves}


def cache_file(region: str = "B") -> Path:
    """Where a region's run is kept by default (the gitignored cache); Lemma C.2 looks for Region B's here."""
    return cache_dir("region-b") / f"region-{region.lower()}.json"


def _point_in(cell: dict, point: tuple) -> bool:
    return all(Fraction(cell[n][0]) <= p <= Fraction(cell[n][1]) for n, p in zip(NAMES, point))


def cell_of_point(cells: list, point: tuple) -> dict | None:
    """The stored cell (a result's "cells" entry) holding the point (rho, x, kappa), certified ones first."""
    hits = [c for c in cells if _point_in(c["cell"], point)]
    return next((c for c in hits if c["status"] == "certified"), hits[0] if hits else None)


def run_cells_here(cells: list, depth: int = 1, region: str = "B") -> dict:
    """:func:`run_region_b`'s result for a few cells in this process (no executor: e.g. inside a claim's part that
    already runs on a Dask worker), bisecting open ones ``depth`` times; the decided fraction is of the region's
    whole volume (so a few cells decide a small fraction)."""
    t0 = time.perf_counter()
    leaves, pending = [], [(c, f"c{i}:") for i, c in enumerate(cells)]
    while pending:
        c, path = pending.pop()
        res = _task(c, path, REGIONS[region].get("sets"))
        if res["status"] == "open" and len(path.split(":")[1]) < depth:
            pending += [(h, path + str(k)) for k, h in enumerate(halves(c))]
        else:
            leaves.append(res)
    # the fraction is of the region's whole volume: these cells are a part of it
    reg = REGIONS[region]
    return summary(leaves, sum(region_b_volume(c, reg) for c in initial_cells(region=region)),
                   time.perf_counter() - t0, True, depth, region)


def holes(regions: dict = REGIONS, outer: dict = FACES_BOX) -> list:
    """The parts of ``outer`` (default positivity.FACES_BOX) in no region's box, as boxes {"rho", "x", "kappa",
    "share"} (share: of outer's volume in (rho, x, log2 kappa)), adjacent boxes merged. A region's or the box's x
    start None is the small-step edge min(1, r): it is 0 here, the volume counting x from the edge only. The
    regions' boxes, not their decided cells: a region with open cells is no hole here."""
    def start(v):
        return Fraction(0) if v is None else Fraction(v)
    boxes = [{n: (start(b[n][0]) if n == "x" else b[n][0], b[n][1]) for n in NAMES} for b in regions.values()]
    edges = {n: sorted({e for b in boxes + [{n: (start(outer[n][0]), outer[n][1])}] for e in b[n]
                        if start(outer[n][0]) <= e <= outer[n][1]}) for n in NAMES}
    out = []
    for r_ in zip(edges["rho"], edges["rho"][1:]):
        for x_ in zip(edges["x"], edges["x"][1:]):
            for k_ in zip(edges["kappa"], edges["kappa"][1:]):
                piece = {"rho": r_, "x": x_, "kappa": k_}
                if not any(all(b[n][0] <= piece[n][0] and piece[n][1] <= b[n][1] for n in NAMES) for b in boxes):
                    out.append(piece)
    for n in ("kappa", "x", "rho"):             # merge neighbours along n that agree in the other two
        merged = []
        for piece in sorted(out, key=lambda b: tuple(b[m] for m in NAMES if m != n) + (b[n],)):
            last = merged[-1] if merged else None
            if last and all(last[m] == piece[m] for m in NAMES if m != n) and last[n][1] == piece[n][0]:
                last[n] = (last[n][0], piece[n][1])
            else:
                merged.append(dict(piece))
        out = merged
    whole = region_b_volume({n: (start(outer[n][0]), outer[n][1]) for n in NAMES}, outer)
    out = [b | {"share": region_b_volume(b, outer) / whole} for b in out]
    return sorted((b for b in out if b["share"] > 0), key=lambda b: tuple(b[n] for n in NAMES))


# ----- the atlas's cell check -----------------------------------------------------------------------------------------
def box_of(cell) -> dict:
    b = cell.bounds if hasattr(cell, "bounds") else cell
    return {n: tuple(Fraction(v) for v in b[n]) for n in NAMES}


def applies(cell) -> bool:
    """The cell meets Lemma C.2's large-step range (some member with x > min(1, r)) and lies in the hypotheses with
    rho > 0 (the band argument needs r finite)."""
    b = box_of(cell)
    return in_hypotheses(b) is None and b["x"][1] > small_step_edge(b["rho"][1])


def check_recheck(cell, result: dict) -> None:
    """The atlas's recheck(cell, result): the independent re-checker on the stored evidence (ValueError naming the
    step), and the evidence's cell holds the atlas cell."""
    if result.get("status") != "certified":
        return
    ev = result["evidence"]
    b = box_of(cell.get("box", cell) if isinstance(cell, dict) else cell)
    stated = {n: tuple(Fraction(v) for v in ev["cell"][n]) for n in NAMES}
    if not all(stated[n][0] <= b[n][0] and b[n][1] <= stated[n][1] for n in NAMES):
        raise ValueError(f"positivity: the stated cell {ev['cell']} does not hold the atlas cell")
    try:
        recheck(ev)
    except CheckFailed as exc:
        raise ValueError(f"positivity: re-check step {exc.step} failed: {exc.detail}") from None


__all__ = ["DEPTH", "KIND", "STATEMENT", "VERSION", "applies", "box_of", "cache_file", "cell_of_point",
           "check_recheck", "halves", "holes", "initial_cells", "run_cells_here", "run_region_b", "summary"]
