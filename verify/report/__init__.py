"""The report folder of ``verify all`` / ``verify report``, built from saved part records only.

Folder contents: index.md, index.html (self-contained: figures embedded as data URIs),
results.json (schema: verify/schemas/results.schema.json), figures/*.png, parts/*.json (the
evidence: each part's complete saved record). The folder is built beside OUT and swapped in
(:mod:`verify.run.atomic`), so it is complete or absent.
"""
from __future__ import annotations

import base64
import json
import traceback
from pathlib import Path

from ..errors import InvalidParameter
from ..run.atomic import WORK, new_folder, recover_folder, swap_folder, write_bytes_atomic, write_json_atomic
from .kinds import kind_of
from .provenance import provenance
from .render import blocks, html_page, markdown
from .results import assemble, load_parts, schema, validate

REPORT_FILES = ("index.md", "index.html", "results.json")


def saved_parts_dir(src) -> Path:
    """Where a folder keeps its saved parts: SRC/_work/parts during and after a run, else SRC/parts."""
    src = Path(src)
    recover_folder(src)
    work = src / WORK / "parts"
    return work if work.is_dir() else src / "parts"


def figure_jobs(records: list[dict]) -> list[tuple[str, object, dict | None, str]]:
    """(file, draw function, the result it draws, source part) of every figure of the finished ``records``, as
    each part's kind lists them (verify.report.kinds)."""
    return [job for r in records if r["status"] == "ok" for job in kind_of(r).figures(r) if job[1] is not None]


def drawn(fn, res) -> dict | None:
    """One figure drawn: {"caption", "png"} (bytes), {"error"} when drawing failed (reported, never dropped
    silently), or None when the result holds no data for it (not a failure)."""
    try:
        made = fn(res)
    except Exception as exc:  # noqa: BLE001 - any drawing failure is reported as an error entry
        return {"error": traceback.format_exception_only(type(exc), exc)[-1].strip()}
    return {"caption": made[1], "png": made[0]} if made else None


def part_figures(record: dict) -> dict:
    """The figures of one finished part record, drawn: {file: {"caption", "png_base64"} or {"error"}} (files whose
    data the record does not hold are left out). A part's own process adds this to its record (``figures``), so the
    figures are drawn on the workers, in parallel, and not one after another when the report is written."""
    out = {}
    for fname, fn, res, _ in figure_jobs([record]):
        if not res:
            continue
        d = drawn(fn, res)
        if d is not None:
            out[fname] = ({"caption": d["caption"], "png_base64": base64.b64encode(d["png"]).decode()} if "png" in d
                          else d)
    return out


def make_figures(records: list[dict]) -> tuple[list[tuple[str, str, bytes, str]], list[dict]]:
    """(file, caption, png, source part) for every figure whose data are in the saved records, and one
    error entry {"file", "source", "error"} for every figure that failed to draw (it is reported in the
    report, never dropped silently). A figure its part's process drew (:func:`part_figures`, the record's
    ``figures``) is taken from the record; the others are drawn here."""
    kept = {r["part"]: r.get("figures") or {} for r in records}
    out, errors = [], []
    for fname, fn, res, src in figure_jobs(records):
        if not res:
            continue
        d = kept.get(src, {}).get(fname)
        if d is not None and "png_base64" in d:
            d = {"caption": d["caption"], "png": base64.b64decode(d["png_base64"])}
        elif d is None or "error" not in d:
            d = drawn(fn, res)
        if d is None:
            continue
        if "error" in d:
            errors.append({"file": fname, "source": src, "error": d["error"]})
        else:
            out.append((fname, d["caption"], d["png"], src))
    return out, errors


def earlier_summary(out: Path, records: list[dict]) -> dict | None:
    """The summary of OUT's results.json when it was built from the same parts as ``records`` (same names and
    finishing times), else None."""
    try:
        old = json.loads((Path(out) / "results.json").read_text())
    except (OSError, ValueError):
        return None
    same = sorted((p["name"], p.get("seconds")) for p in old.get("parts", [])) == sorted(
        (r["part"], r.get("seconds") or 0.0) for r in records)
    return (old.get("summary") or None) if same else None


def run_timing(out: Path, records: list[dict], wall_seconds: float | None, reused: list[str]) -> dict:
    """How long the work behind the report took, said as it was: ``wall_seconds`` is this invocation's (None for
    a rebuild by ``verify report``, which times no run), ``computed_wall_seconds`` the wall time of the run that
    computed the parts: this one when it reused none; the earlier run's when every part was reused (or the
    report is rebuilt) from the same parts; None when that is not known (a mix of new and reused parts)."""
    earlier = earlier_summary(out, records) or {}
    before = earlier.get("computed_wall_seconds", earlier.get("wall_seconds"))
    if wall_seconds is None:
        return {"wall_seconds": earlier.get("wall_seconds"), "computed_wall_seconds": before, "rebuilt": True,
                "reused_parts": int(earlier.get("reused_parts") or 0)}
    n, k = len(records), len(set(reused) & {r["part"] for r in records})
    computed = wall_seconds if k == 0 else (before if k == n else None)
    return {"wall_seconds": wall_seconds, "computed_wall_seconds": computed, "rebuilt": False, "reused_parts": k}


def write_report(out, pdir=None, *, profile: str = "ci", wall_seconds: float | None = None,
                 reused: list[str] | None = None) -> dict:
    """Build the report folder OUT from the part records in ``pdir`` (default: OUT's own)."""
    out = Path(out)
    pdir = Path(pdir) if pdir is not None else saved_parts_dir(out)
    records = load_parts(pdir)
    if not records:
        raise InvalidParameter("from", str(pdir), "must hold saved parts (run `verify all` first)")
    profiles = {(r.get("options") or {}).get("profile") for r in records} - {None}
    if len(profiles) == 1:
        profile = profiles.pop()
    timing = run_timing(out, records, wall_seconds, reused or [])
    figs, fig_errors = make_figures(records)
    results = assemble(records, profile=profile, timing=timing, reused=reused or [],
                       figures=[{"file": f, "caption": c, "source": s} for f, c, _, s in figs],
                       provenance=provenance(records, profile), figure_errors=fig_errors)
    validate(results)
    bl = blocks(results, [(f, c, png) for f, c, png, _ in figs])
    new = new_folder(out)
    for f, _, png, _ in figs:
        write_bytes_atomic(new / f, png)
    for r in records:        # the drawn figures are in figures/, not again in the evidence
        write_json_atomic(new / "parts" / r["file"], {k: v for k, v in r.items() if k not in ("file", "figures")})
    write_json_atomic(new / "results.json", results)
    write_bytes_atomic(new / "index.md", markdown(bl).encode())
    write_bytes_atomic(new / "index.html", html_page(bl).encode())
    swap_folder(new, out)
    return results


__all__ = ["write_report", "saved_parts_dir", "make_figures", "part_figures", "figure_jobs", "validate", "schema", "load_parts", "run_timing",
           "REPORT_FILES"]
