"""Export theorems to a folder and have Coq's kernel check them: ``verify export --coq`` and ``verify prove --coq``.

:func:`export` writes one ``.v`` file per :class:`verify.coq.theorems.CoqFile` and ``manifest.json`` (each file's
digest, group and theorems, with the obligation each states and what the kernel is expected to do).
:func:`prove` runs ``coqc`` on every file (several at once on the project's Dask executor when there are several
files) and reads back which theorems the kernel accepted: a file that fails is re-run with the failing theorem
blanked out (its lines kept, so coqc's line numbers still name theorems) until what remains compiles; each
accepted theorem's ``Print Assumptions`` must list only the axioms of Coq's standard library of reals (nothing
admitted). The result, ``kernel.json``, records per theorem the route ``coq`` with the Coq and library versions.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ..cache import by_code_version
from ..errors import InvalidParameter, VerificationError

MANIFEST = "manifest.json"
RESULTS = "kernel.json"
FORMAT = "verify-coq"
INSTALL = "apt-get install -y coq libcoq-interval"
PACKAGES = ("coq", "libcoq-interval", "libcoq-flocq", "libcoq-coquelicot", "coinor-csdp")
FILE_TIMEOUT = 1800            # seconds of wall time one coqc run may take
# The axioms Coq's reals rest on (Print Assumptions lists them for any theorem over R): trusted, and named so.
TRUSTED_AXIOMS = ("ClassicalDedekindReals.", "FunctionalExtensionality.", "Classical_Prop.", "ClassicalEpsilon.",
                  "Rdefinitions.", "Raxioms.", "ConstructiveCauchyReals.", "PropExtensionality.")


class CoqMissing(VerificationError):
    """coqc is not installed: the kernel route cannot run."""


def coqc() -> str | None:
    return shutil.which("coqc")


def require_coqc() -> str:
    path = coqc()
    if path is None:
        raise CoqMissing(f"coqc not found: the kernel route needs Coq and CoqInterval ({INSTALL}, as root)")
    return path


def versions() -> dict:
    """Coq's version and the installed libraries' (Debian packages; "unknown" elsewhere)."""
    out = {}
    try:
        text = subprocess.run([require_coqc(), "--version"], capture_output=True, text=True, timeout=60).stdout
        out["coq"] = re.search(r"version (\S+)", text).group(1)
    except (OSError, subprocess.SubprocessError, AttributeError):
        out["coq"] = "unknown"
    for pkg, name in (("libcoq-interval", "interval"), ("libcoq-flocq", "flocq")):
        try:
            r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True,
                               timeout=60)
            out[name] = r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "unknown"
        except (OSError, subprocess.SubprocessError):
            out[name] = "unknown"
    return out


def manifest_of(files) -> dict:
    """Each file's group, digest, theorem line ranges and theorems; a theorem repeated in a later file (a lemma a
    negative control cites) is marked "copy" there and not counted again."""
    seen, out = set(), []
    for f in files:
        out.append({"file": f"{f.name}.v", "group": f.group, "digest": f.digest(), "lines": f.lines(),
                    "theorems": [{"name": t.name, "key": t.key, "obligation": t.obligation, "expect": t.expect,
                                  "copy": (f.group, t.name) in seen} for t in f.theorems]})
        seen |= {(f.group, t.name) for t in f.theorems}
    return {"format": FORMAT, "version": 1, "files": out}


def export(out_dir, groups: tuple = ()) -> dict:
    """Write the Coq files of ``groups`` (all when empty) and the manifest into ``out_dir``; return the manifest."""
    from ..run.atomic import write_bytes_atomic, write_json_atomic
    from .groups import files
    fs = files(tuple(groups))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for f in fs:
        write_bytes_atomic(out / f"{f.name}.v", f.text().encode())
    man = manifest_of(fs)
    write_json_atomic(out / MANIFEST, man)
    return man


def _run_coqc(src: str, workdir: Path) -> tuple[int, str, float]:
    """(exit status, output, CPU seconds of coqc and its children) for one source text."""
    path = workdir / "Check.v"
    path.write_text(src)
    with open(workdir / "out.txt", "w+") as log:
        proc = subprocess.Popen([require_coqc(), "-q", str(path)], cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > FILE_TIMEOUT:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        return proc.returncode, log.read(), ru.ru_utime + ru.ru_stime


def _axioms(output: str, names: list[str]) -> dict:
    """Theorem -> the axioms its Print Assumptions lists (the outputs follow in the order of ``names``)."""
    blocks = re.split(r"^(?=Closed under the global context|Axioms:)", output, flags=re.M)
    blocks = [b for b in blocks if b.startswith(("Closed under", "Axioms:"))]
    out = {}
    for name, block in zip(names, blocks):
        out[name] = [ln.strip() for ln in block.splitlines()[1:] if ln and not ln[0].isspace()] \
            if block.startswith("Axioms:") else []
    return out


def check_file(text: str, lines: dict) -> dict:
    """coqc on one file's text: {"theorems": {name: {"status", "error", "axioms"}}, "cpu_seconds", "runs"}.
    Pure: the result depends only on the text (and the installed Coq)."""
    status, lines = {}, {k: tuple(v) for k, v in lines.items()}
    src = text.split("\n")
    cpu, runs = 0.0, 0
    with tempfile.TemporaryDirectory(prefix="verify-coq-") as tmp:
        while True:
            alive = [n for n in lines if n not in status]
            body = list(src)
            for n in status:
                a, b = lines[n]
                body[a - 1:b] = [""] * (b - a + 1)
            tail = "".join(f"\nPrint Assumptions {n}." for n in alive)
            rc, output, sec = _run_coqc("\n".join(body) + tail + "\n", Path(tmp))
            cpu, runs = cpu + sec, runs + 1
            if rc == 0:
                for n, ax in _axioms(output, alive).items():
                    untrusted = [a for a in ax if not a.startswith(TRUSTED_AXIOMS)]
                    status[n] = {"status": "accepted" if not untrusted else "rejected",
                                 "error": f"rests on untrusted axioms {untrusted}" if untrusted else "",
                                 "axioms": ax}
                break
            m = re.search(r'line (\d+)', output)
            line = int(m.group(1)) if m else 0
            bad = next((n for n in alive if lines[n][0] <= line <= lines[n][1]), None)
            err = " ".join(output.split())[:400]
            if bad is None:      # an error outside every theorem (the header: a library missing): all rejected
                for n in alive:
                    status[n] = {"status": "rejected", "error": f"the file did not compile: {err}", "axioms": []}
                break
            status[bad] = {"status": "rejected", "error": err, "axioms": []}
    return {"theorems": status, "cpu_seconds": round(cpu, 3), "runs": runs}


def _check_path(path: str, lines: dict) -> dict:
    return check_file(Path(path).read_text(), lines)


def read_manifest(out_dir) -> dict:
    p = Path(out_dir) / MANIFEST
    if not p.is_file():
        raise InvalidParameter("--coq", str(out_dir), f"must be a folder written by `verify export --coq` "
                               f"(no {MANIFEST} there)")
    if p.stat().st_size > 64 << 20:
        raise InvalidParameter("--coq", str(out_dir), f"{MANIFEST} is larger than 64 MB")
    man = json.loads(p.read_text())
    if man.get("format") != FORMAT:
        raise InvalidParameter("--coq", str(out_dir), f"{MANIFEST} is not a {FORMAT} manifest")
    return man


def prove(out_dir, workers: int | None = None, scheduler: str | None = None, executor: bool | None = None,
          progress=None) -> dict:
    """coqc on every file of ``out_dir`` (its manifest); writes and returns kernel.json.

    A file whose text does not match the manifest's digest (edited after export) is refused. With more than one
    file the runs go to the Dask executor (verify.run.execute), unless ``executor`` is False. ``progress(file,
    done, total)`` after each file (coqc checks a file as a whole: the count is of files)."""
    import hashlib
    from ..run.atomic import write_json_atomic
    man = read_manifest(out_dir)
    out = Path(out_dir)
    for f in man["files"]:
        text = (out / f["file"]).read_text() if (out / f["file"]).is_file() else None
        if text is None or hashlib.sha256(text.encode()).hexdigest()[:16] != f["digest"]:
            raise InvalidParameter("--coq", str(out_dir), f"{f['file']} is missing or differs from what "
                                   "`verify export --coq` wrote: export again")
    require_coqc()
    tasks = [(f["file"], (str(out / f["file"]), f["lines"])) for f in man["files"]]
    t0 = time.perf_counter()
    results = {}
    if executor is None:
        executor = len(tasks) > 1
    if executor:
        from ..run.execute import Executor, local_workers
        n, _ = local_workers(workers, len(tasks))
        with Executor(scheduler, n) as ex:
            for name, res in ex.stream(_check_path, tasks):
                if isinstance(res, Exception):
                    raise res
                results[name] = res
                if progress:
                    progress(name, len(results), len(tasks))
    else:
        for name, args in tasks:
            results[name] = _check_path(*args)
            if progress:
                progress(name, len(results), len(tasks))
    wall = time.perf_counter() - t0
    ver = versions()
    theorems, per_file = [], []
    for f in man["files"]:
        res = results[f["file"]]
        per_file.append({"file": f["file"], "group": f["group"], "cpu_seconds": res["cpu_seconds"],
                         "runs": res["runs"], "theorems": len(f["theorems"])})
        for t in f["theorems"]:
            got = res["theorems"][t["name"]]
            theorems.append({**t, "group": f["group"], "file": f["file"], "route": "coq", "versions": ver,
                             "status": got["status"], "as_expected": got["status"] == t["expect"],
                             "error": got["error"], "axioms": got["axioms"]})
    axioms = sorted({a for t in theorems for a in t["axioms"]})
    theorems = [t for t in theorems if not t["copy"] or not t["as_expected"]]
    summary = {g: {"theorems": sum(t["group"] == g for t in theorems),
                   "accepted": sum(t["group"] == g and t["status"] == "accepted" for t in theorems),
                   "expected_rejected": sum(t["group"] == g and t["expect"] == "rejected" for t in theorems),
                   "as_expected": all(t["as_expected"] for t in theorems if t["group"] == g)}
               for g in dict.fromkeys(f["group"] for f in man["files"])}
    res = {"format": FORMAT + "-results", "versions": ver, "wall_seconds": round(wall, 3),
           "cpu_seconds": round(sum(f["cpu_seconds"] for f in per_file), 3), "files": per_file,
           "groups": summary, "theorems": theorems, "trusted_axioms": axioms,
           "trusted": "Coq's kernel and the axioms of its standard library of reals (listed); "
                      + TRUSTS_NOTE}
    write_json_atomic(out / RESULTS, res)
    return res


TRUSTS_NOTE = ("the certificate group's boxes take the Arb prefix's end ball and the region's parameters from the "
               "saved certificate file (trusted to Arb, not re-derived in Coq)")


@by_code_version("coq-kernel-route")
def _group_route(group: str, keys: tuple) -> dict:
    """coqc on the files of ``group`` that state one of ``keys`` (no Dask: a few seconds), by code version."""
    from .groups import files
    fs = files((group,))
    man = manifest_of(fs)
    ver, out = versions(), []
    for f, m in zip(fs, man["files"]):
        if not any(t["key"] in keys and not t["copy"] for t in m["theorems"]):
            continue
        res = check_file(f.text(), m["lines"])
        for t in m["theorems"]:
            if not t["copy"]:
                out.append({**t, "status": res["theorems"][t["name"]]["status"], "cpu_seconds": res["cpu_seconds"]})
    return {"versions": ver, "theorems": out}


def kernel_route(group: str, keys) -> dict:
    """The kernel route of the obligations ``keys`` of ``group`` for a claim's record: {"route": "coq", "status":
    "kernel-checked" | "rejected" | "not run", "why", "versions"}; "not run" (with what to install) without coqc."""
    if coqc() is None:
        return {"route": "coq", "status": "not run", "why": f"coqc is not installed ({INSTALL})"}
    res = _group_route(group, tuple(keys))
    ok = kernel_checked(res, keys)
    got = [t for t in res["theorems"] if t["key"] in keys]
    why = (f"{sum(t['status'] == 'accepted' for t in got)} of {len(keys)} obligations accepted by Coq "
           f"{res['versions'].get('coq')}'s kernel ({', '.join(t['name'] for t in got)})")
    return {"route": "coq", "status": {True: "kernel-checked", False: "rejected", None: "not run"}[ok], "why": why,
            "versions": res["versions"], "accepted": sum(t["status"] == "accepted" for t in got),
            "obligations": len(keys)}


def kernel_bench() -> dict:
    """The kernel route as a `verify bench` figure: export every group and prove it (Dask when several files), with
    the wall time of each command, the theorems checked and the coqc CPU seconds per theorem; without coqc,
    {"available": False} and what to install."""
    if coqc() is None:
        return {"available": False, "why": f"coqc is not installed ({INSTALL})"}
    with tempfile.TemporaryDirectory(prefix="verify-coq-bench-") as tmp:
        t0 = time.perf_counter()
        man = export(tmp)
        t_export = time.perf_counter() - t0
        res = prove(tmp)
    n = len(res["theorems"])
    return {"available": True, "versions": res["versions"], "files": len(man["files"]), "theorems": n,
            "export_seconds": round(t_export, 3), "prove_wall_seconds": res["wall_seconds"],
            "coqc_cpu_seconds": res["cpu_seconds"], "cpu_seconds_per_theorem": round(res["cpu_seconds"] / max(n, 1), 3),
            "as_expected": all(g["as_expected"] for g in res["groups"].values()),
            "groups": {g: {k: v[k] for k in ("theorems", "accepted")} for g, v in res["groups"].items()}}


def kernel_checked(results: dict, keys) -> bool | None:
    """True when the kernel accepted every obligation with one of ``keys``, False when it rejected one that was
    expected to hold, None when some were not in ``results``."""
    by_key = {t["key"]: t for t in results.get("theorems", ()) if t.get("key")}
    if not all(k in by_key for k in keys):
        return None
    return all(by_key[k]["status"] == "accepted" for k in keys)


__all__ = ["export", "prove", "check_file", "versions", "coqc", "require_coqc", "CoqMissing", "kernel_checked",
           "MANIFEST", "RESULTS", "INSTALL", "PACKAGES", "kernel_route", "kernel_bench"]
