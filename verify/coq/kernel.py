"""Export theorems to a folder and have Coq's kernel check them: ``verify export --coq`` and ``verify prove --coq``.

:func:`export` writes one ``.v`` file per :class:`verify.coq.theorems.CoqFile` and ``manifest.json`` (each file's
digest, group and theorems, with the obligation each states and what the kernel is expected to do).
:func:`prove` runs ``coqc`` on every file (several at once on the project's Dask executor when there are several
files) and reads back which theorems the kernel accepted: a file that fails is re-run with the failing theorem
blanked out (its lines kept, so coqc's line numbers still name theorems) until what remains compiles; each
accepted theorem's ``Print Assumptions`` must list only the axioms of Coq's standard library of reals and of its
primitive integers, which CoqInterval computes with (nothing
admitted). The result, ``kernel.json``, records per theorem the route ``coq`` with the Coq and library versions.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import psutil

from ..errors import Interrupted, InvalidParameter, VerificationError
from ..run.atomic import write_bytes_atomic, write_json_atomic
from ..run.cache import by_code_version, cache_dir
from ..run.execute import Executor, local_workers
from ..run.parts import source_path

MANIFEST = "manifest.json"
BUNDLE = "verify_accepted_together"      # the tuple of a file's theorems whose assumptions are printed once
RESULTS = "kernel.json"
FORMAT = "verify-coq"
INSTALL = "apt-get install -y coq libcoq-interval"
PACKAGES = ("coq", "libcoq-interval", "libcoq-flocq", "libcoq-coquelicot", "coinor-csdp")
FILE_TIMEOUT = 1800            # seconds of CPU one coqc run may take (a file of 32 boxes takes about 90)
WALL_TIMEOUT = 6 * 3600        # and of wall time, however loaded the machine (nice'd runs get little CPU)
# The axioms Coq's reals rest on (Print Assumptions lists them for any theorem over R): trusted, and named so.
REAL_AXIOMS = ("ClassicalDedekindReals.", "FunctionalExtensionality.", "Classical_Prop.", "ClassicalEpsilon.",
               "Rdefinitions.", "Raxioms.", "ConstructiveCauchyReals.", "PropExtensionality.")
# CoqInterval computes with Coq's primitive 63-bit integers (vm_compute): the kernel implements them natively and the
# standard library states their specification as axioms (Coq.Numbers.Cyclic.Int63: PrimInt63, Uint63). Trusted too,
# listed in kernel.json's "trusted_axioms" like the others.
PRIMITIVE_AXIOMS = ("PrimInt63.", "Uint63.", "PrimFloat.", "FloatAxioms.")
TRUSTED_AXIOMS = REAL_AXIOMS + PRIMITIVE_AXIOMS


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
                                  "copy": (f.group, t.name) in seen} for t in f.theorems]}
                   | ({"source": dict(f.source)} if f.source else {}))
        seen |= {(f.group, t.name) for t in f.theorems}
    return {"format": FORMAT, "version": 1, "files": out}


def export(out_dir, groups: tuple = (), options: tuple = ()) -> dict:
    """Write the Coq files of ``groups`` (all when empty) and the manifest into ``out_dir``; return the manifest.
    ``options``: (name, value) pairs for the groups that take them (verify.coq.groups.OPTIONS)."""
    from .groups import files  # heavy: loads flint,mpmath,sympy
    fs = files(tuple(groups), tuple(options))
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
            try:       # the limit is on coqc's CPU: under load a run takes longer in wall time, not in CPU
                c = psutil.Process(proc.pid).cpu_times()
                cpu = c.user + c.system
            except psutil.Error:
                cpu = 0.0
            if cpu > FILE_TIMEOUT or time.monotonic() - t0 > WALL_TIMEOUT:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                log.seek(0, os.SEEK_END)
                log.write(f"\nverify: coqc killed after {cpu:.0f} s of CPU, {time.monotonic() - t0:.0f} s of wall "
                          f"time (TIMEOUT)\n")
                break
            time.sleep(0.05)
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
    A theorem's "axioms" are those of the file's accepted theorems together (one Print Assumptions; per theorem
    only when the union holds an untrusted one). Pure: the result depends only on the text (and the installed Coq)."""
    status, lines = {}, {k: tuple(v) for k, v in lines.items()}
    src = text.split("\n")
    cpu, runs, per_theorem, timed_out = 0.0, 0, False, False
    with tempfile.TemporaryDirectory(prefix="verify-coq-") as tmp:
        while True:
            alive = [n for n in lines if n not in status]
            body = list(src)
            for n in status:
                a, b = lines[n]
                body[a - 1:b] = [""] * (b - a + 1)
            # One Print Assumptions of a tuple of the file's theorems: it walks the libraries once (about 15 s for
            # CoqInterval's), not once per theorem; each theorem is then credited with the union. When the union
            # holds an untrusted axiom, the file is run again with one Print Assumptions per theorem.
            bundle = len(alive) > 1 and not per_theorem
            tail = (f"\nDefinition {BUNDLE} := ({', '.join(alive)}).\nPrint Assumptions {BUNDLE}." if bundle else
                    "".join(f"\nPrint Assumptions {n}." for n in alive))
            rc, output, sec = _run_coqc("\n".join(body) + tail + "\n", Path(tmp))
            cpu, runs = cpu + sec, runs + 1
            if rc == 0:
                found = _axioms(output, [BUNDLE] if bundle else alive)
                if bundle:
                    if any(not a.startswith(TRUSTED_AXIOMS) for a in found[BUNDLE]):
                        per_theorem = True
                        continue
                    found = {n: found[BUNDLE] for n in alive}
                for n, ax in found.items():
                    untrusted = [a for a in ax if not a.startswith(TRUSTED_AXIOMS)]
                    status[n] = {"status": "accepted" if not untrusted else "rejected",
                                 "error": f"rests on untrusted axioms {untrusted}" if untrusted else "",
                                 "axioms": ax}
                break
            if "(TIMEOUT)" in output:        # not a verdict of the kernel: every theorem left is open
                timed_out = True
                for n in alive:
                    status[n] = {"status": "rejected", "error": f"coqc ran out of time ({FILE_TIMEOUT} s of CPU or "
                                                                f"{WALL_TIMEOUT} s of wall time)",
                                 "axioms": []}
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
            if len(status) == len(lines):      # nothing left to compile (a negative control's file)
                break
    return {"theorems": status, "cpu_seconds": round(cpu, 3), "runs": runs} | ({"timed_out": True} if timed_out else {})


@lru_cache(maxsize=1)
def _coq_identity() -> str:
    return json.dumps(versions(), sort_keys=True)


def checked_path(text: str, lines: dict) -> Path:
    """Where coqc's verdict on a file is kept (verify cache): by the file's text, its theorems' lines and the
    installed Coq and libraries, everything :func:`check_file`'s result depends on."""
    key = hashlib.sha256(json.dumps([text, lines, _coq_identity()], sort_keys=True).encode()).hexdigest()[:24]
    return cache_dir("coq") / "checked" / f"{key}.json"


def _check_path(path: str, lines: dict, reuse: bool = True) -> dict:
    """check_file on the file at ``path``, its result kept (checked_path) as soon as coqc is done, so an interrupted
    prove resumes where it stopped; with ``reuse``, a kept result is returned ("reused": True) instead of running
    coqc again."""
    text = Path(path).read_text()
    p = checked_path(text, lines)
    if reuse and p.is_file():
        try:
            return json.loads(p.read_text()) | {"reused": True}
        except (OSError, ValueError):
            pass
    res = check_file(text, lines)
    if not res.get("timed_out"):             # a run out of time is no verdict: never kept
        p.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(p, res)
    return res | {"reused": False}


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
          progress=None, reuse: bool = True) -> dict:
    """coqc on every file of ``out_dir`` (its manifest); writes and returns kernel.json.

    Each file's verdict is kept as soon as coqc is done with it (checked_path); with ``reuse`` (the default) a file
    whose text and Coq are unchanged is not run again (kernel.json's "files" say "reused"), so running the same
    command again resumes an interrupted run.

    A file whose text does not match the manifest's digest (edited after export) is refused. With more than one
    file the runs go to the Dask executor (verify.run.execute), unless ``executor`` is False. ``progress(file,
    done, total, reused)`` after each file (coqc checks a file as a whole: the count is of files; ``reused``: its
    kept verdict was read, not run)."""
    man = read_manifest(out_dir)
    out = Path(out_dir)
    for f in man["files"]:
        text = (out / f["file"]).read_text() if (out / f["file"]).is_file() else None
        if text is None or hashlib.sha256(text.encode()).hexdigest()[:16] != f["digest"]:
            raise InvalidParameter("--coq", str(out_dir), f"{f['file']} is missing or differs from what "
                                   "`verify export --coq` wrote: export again")
    require_coqc()
    tasks = [(f["file"], (str(out / f["file"]), f["lines"], reuse)) for f in man["files"]]
    t0 = time.perf_counter()
    results = {}
    if executor is None:
        executor = len(tasks) > 1
    try:
        if executor:
            n, _ = local_workers(workers, len(tasks))
            with Executor(scheduler, n) as ex:
                for name, res in ex.stream(_check_path, tasks):
                    if isinstance(res, Exception):
                        raise res
                    results[name] = res
                    if progress:
                        progress(name, len(results), len(tasks), res.get("reused", False))
        else:
            for name, args in tasks:
                results[name] = _check_path(*args)
                if progress:
                    progress(name, len(results), len(tasks), results[name].get("reused", False))
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: coqc's verdicts on {len(results)} of {len(tasks)} files are kept (nothing "
                          f"written to {out / RESULTS}); run `verify prove --coq {out_dir}` again to resume") from None
    wall = time.perf_counter() - t0
    ver = versions()
    theorems, per_file = [], []
    for f in man["files"]:
        res = results[f["file"]]
        per_file.append({"file": f["file"], "group": f["group"], "cpu_seconds": res["cpu_seconds"],
                         "runs": res["runs"], "theorems": len(f["theorems"]), "reused": res["reused"]})
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
    for g, s in summary.items():
        src = next((f["source"] for f in man["files"] if f["group"] == g and f.get("source")), None)
        if src is not None:
            s["certificate"] = certificate_route(src, [t for t in theorems if t["group"] == g], ver)
            save_route(s["certificate"])
    res = {"format": FORMAT + "-results", "versions": ver, "wall_seconds": round(wall, 3),
           "cpu_seconds": round(sum(f["cpu_seconds"] for f in per_file), 3),
           "reused_files": sum(f["reused"] for f in per_file), "files": per_file,
           "groups": summary, "theorems": theorems, "trusted_axioms": axioms,
           "trusted": "Coq's kernel and the axioms of its standard library of reals and of its primitive 63-bit "
                      "integers, which CoqInterval computes with (listed); " + TRUSTS_NOTE}
    write_json_atomic(out / RESULTS, res)
    return res


TRUSTS_NOTE = ("the trapping-region group's boxes and invariants are read from the saved certificate file; its prefix "
               "(the Arb steps to the region) is trusted to Arb, not iterated in Coq")


def certificate_route(source: dict, theorems: list, ver: dict) -> dict:
    """The kernel route of a certificate's box checks, from the theorems of its group: "kernel-checked" only when
    every box of the cover was exported and accepted and the negative control was rejected; else "partial" (some
    boxes accepted) or "rejected" (a box the certificate passes was not accepted). ``why`` says how many boxes the
    kernel accepted out of the cover's, and what stays trusted."""
    boxes = [t for t in theorems if t["expect"] == "accepted"]
    controls = [t for t in theorems if t["expect"] == "rejected"]
    n, total = sum(t["status"] == "accepted" for t in boxes), int(source["of"])
    ok_controls = all(t["status"] == "rejected" for t in controls)
    if n < len(boxes) or not ok_controls:
        status = "rejected"
    else:
        status = "kernel-checked" if n == total else "partial"
    why = (f"trapping region: {n} of {total} boxes kernel-checked (Coq {ver.get('coq')}, CoqInterval "
           f"{ver.get('interval')})" + (f", of the {len(boxes)} exported" if len(boxes) < total else "")
           + f"; the box moved past the edge {'rejected' if ok_controls else 'NOT rejected'}; {source['trusted']}")
    return {"route": "coq", "status": status, "why": why, "accepted": n, "boxes": total, "exported": len(boxes),
            "digest": source["digest"], "certificate": source_path(source["certificate"]), "versions": ver}


def _route_path(digest: str):
    return cache_dir("coq") / f"trapping-route-{digest}.json"


def save_route(route: dict) -> None:
    """Keep a certificate's kernel route where its claims look for it (by the certificate's digest); a partial
    route never replaces a complete one."""
    old = saved_route(route["digest"])
    if old is not None and old.get("status") == "kernel-checked" and route["status"] == "partial":
        return
    write_json_atomic(_route_path(route["digest"]), route)


def saved_route(digest: str) -> dict | None:
    p = _route_path(digest)
    try:
        return json.loads(p.read_text()) if p.is_file() else None
    except (OSError, ValueError):
        return None


def trapping_route(cert_file: dict) -> dict:
    """For a claim's record: what the kernel accepted of this certificate's trapping region (a saved route of
    :func:`prove`, by the file's digest), or "not run" with the commands that run it. Never reads "kernel-checked"
    unless every box of the cover was accepted."""
    from .trapping import TRUST, certificate_digest  # heavy: loads flint,mpmath,sympy
    got = saved_route(certificate_digest(cert_file))
    if got is not None:
        return got
    return {"route": "coq", "status": "not run", "why": "trapping region: its boxes were not kernel-checked (`verify "
            "export --coq DIR --group trapping-region --certificate FILE` then `verify prove --coq DIR`); " + TRUST}


# The groups of an all-time certificate's chain after its Arb prefix, besides the boxes of its trapping region:
# the comparison lemma (z = 1/x^2 between two sequences) and the identities tying G, R, Q, eps' to the reduced map.
CHAIN = ("comparison-lemma", "certificate-map")
CHAIN_OUTSIDE = ("not kernel-checked: the prefix (its T0 Arb steps to the region, trusted to Arb) and the cover of R "
                 "by the boxes (the re-checker's sweep)")


def group_keys(group: str) -> tuple:
    """The keys of the obligations a group states as true (its negative controls left out), in file order."""
    from .groups import files  # heavy: loads flint,mpmath,sympy
    return tuple(dict.fromkeys(t.key for f in files((group,)) for t in f.theorems if t.expect == "accepted"))


def chain_route(cert_file: dict) -> dict:
    """The kernel route of an all-time certificate's chain after its prefix, for its claims' record: the CHAIN
    groups (coqc, kept per code version: :func:`kernel_route`) and the trapping region's boxes (the route `verify
    prove --coq` saved for this certificate: :func:`trapping_route`). "kernel-checked" only when every part is;
    "rejected" when the kernel rejected a part's true statement; "not run" when no part was run; else "partial".
    ``parts``: each part's route; ``why`` names each part's count and what stays outside the kernel."""
    from .trapping import GROUP, OBLIGATION, TRUST  # heavy: loads flint,mpmath,sympy
    parts = {g: kernel_route(g, group_keys(g)) for g in CHAIN} | {GROUP: trapping_route(cert_file)}
    st = {p["status"] for p in parts.values()}
    status = ("rejected" if "rejected" in st else "kernel-checked" if st == {"kernel-checked"} else
              "not run" if st == {"not run"} else "partial")
    names = {g: g.replace("-", " ") for g in parts}
    # the boxes' route ends in what it leaves outside the kernel (TRUST); the chain says it once, at the end
    why = ("; ".join(p["why"].replace(f"; {TRUST}", "") if g == GROUP else f"{names[g]}: {p['status']} ({p['why']})"
                     for g, p in parts.items()) + f"; {CHAIN_OUTSIDE}")
    trap = parts[GROUP]
    # the certificate's obligations the kernel accepted (by name): each part's keys; the boxes' obligation only when
    # every box of the cover was accepted
    keys = [k for g in CHAIN for k in parts[g].get("accepted_keys", ())]
    keys += [OBLIGATION] if trap["status"] == "kernel-checked" else []
    return {"route": "coq", "status": status, "why": why, "parts": parts, "boxes_accepted": trap.get("accepted", 0),
            "boxes": trap.get("boxes"), "digest": trap.get("digest"), "accepted_keys": keys}


def route_digests() -> list:
    """(certificate digest, status, boxes accepted) of every saved trapping-region route, sorted: what a result that
    reads a route (the certify part's record) depends on besides the code, so a later `verify prove --coq` makes
    a saved result stale (verify.certify.certify_part's options)."""
    out = []
    for p in sorted(cache_dir("coq").glob("trapping-route-*.json")):
        try:
            r = json.loads(p.read_text())
            out.append([r["digest"], r["status"], r["accepted"]])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


def trapping_bench(boxes: int | None = None, tick=None) -> dict:
    """`verify bench`'s figure for the bench certificate's box checks: export (every box, or the first ``boxes``)
    and prove on the Dask executor; seconds, boxes, seconds per box (wall and coqc CPU). ``tick(line)`` after each
    file coqc checked. The route prove() saves is what the claim's record then reads."""
    if coqc() is None:
        return {"available": False, "why": f"coqc is not installed ({INSTALL})"}
    from .trapping import GROUP, bench_certificate  # heavy: loads flint,mpmath,sympy
    path = bench_certificate()
    with tempfile.TemporaryDirectory(prefix="verify-coq-boxes-") as tmp:
        t0 = time.perf_counter()
        man = export(tmp, (GROUP,), (("certificate", str(path)),) + ((("boxes", boxes),) if boxes else ()))
        t_export = time.perf_counter() - t0
        res = prove(tmp, progress=(lambda name, done, total, reused: tick(f"coqc: {name} checked ({done} of {total} files)"))
                    if tick else None, reuse=False)
    route = res["groups"][GROUP]["certificate"]
    n = route["exported"]
    return {"available": True, "versions": res["versions"], "boxes": n, "of": route["boxes"],
            "files": len(man["files"]), "export_seconds": round(t_export, 3),
            "prove_wall_seconds": res["wall_seconds"], "coqc_cpu_seconds": res["cpu_seconds"],
            "wall_seconds_per_box": round(res["wall_seconds"] / max(n, 1), 3),
            "cpu_seconds_per_box": round(res["cpu_seconds"] / max(n, 1), 3),
            "status": route["status"], "why": route["why"],
            "as_expected": res["groups"][GROUP]["as_expected"]}


@by_code_version("coq-kernel-route")
def _group_route(group: str, keys: tuple) -> dict:
    """coqc on the files of ``group`` that state one of ``keys`` (no Dask: a few seconds), by code version."""
    from .groups import files  # heavy: loads flint,mpmath,sympy
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
    acc = [t for t in got if t["status"] == "accepted"]
    return {"route": "coq", "status": {True: "kernel-checked", False: "rejected", None: "not run"}[ok], "why": why,
            "versions": res["versions"], "accepted": len(acc), "obligations": len(keys),
            "accepted_keys": [t["key"] for t in acc], "accepted_obligations": [t["obligation"] for t in acc]}


def kernel_bench() -> dict:
    """The kernel route as a `verify bench` figure: export every group (but those with a target of their own,
    OWN_BENCH: the trapping region's boxes, :func:`trapping_bench`) and prove it (Dask when several files), with
    the wall time of each command, the theorems checked and the coqc CPU seconds per theorem; without coqc,
    {"available": False} and what to install."""
    if coqc() is None:
        return {"available": False, "why": f"coqc is not installed ({INSTALL})"}
    from .groups import GROUPS, OWN_BENCH  # heavy: loads flint,mpmath,sympy
    with tempfile.TemporaryDirectory(prefix="verify-coq-bench-") as tmp:
        t0 = time.perf_counter()
        man = export(tmp, tuple(g for g in GROUPS if g not in OWN_BENCH))
        t_export = time.perf_counter() - t0
        res = prove(tmp, reuse=False)
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
           "MANIFEST", "RESULTS", "INSTALL", "PACKAGES", "kernel_route", "kernel_bench", "trapping_bench",
           "trapping_route", "certificate_route", "save_route", "saved_route", "checked_path", "chain_route",
           "route_digests", "group_keys", "CHAIN"]
