"""The example commands of the README and docs/*.md, read from the pages themselves (one place: the bench times
them, the tests check the bench's list against the pages).

An example is a line of a fenced code block that starts with ``verify `` (or ``$ verify ``), with its ``\\``
continuation lines joined and a trailing ``# comment`` dropped. A synopsis line is not an example: it holds a
placeholder (``[--out DIR]``, ``LO..HI``, ``FILE``, ``tcp://HOST``, ``...``). The input files an example
reads are given on the same pages as ``$ cat NAME`` followed by the file's lines (:func:`documented_files`), so an
example runs in a scratch folder where they are written, after the examples before it (``verify atlas --query``
reads the ``atlas.json`` the example above it saved).
"""
from __future__ import annotations

import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..run.speed import REFERENCE_CPU_SECONDS, workload_seconds

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```(\w*)\s*$")
# A synopsis's placeholders: an optional [part], a choice a|b, a LO..HI range, an upper-case name, an ellipsis.
_PLACEHOLDER = re.compile(r"\[|\.\.\.|\bLO\.\.HI\b|(?<![\w./=-])[A-Z][A-Z_0-9]{2,}(?:\.\w+)?(?![\w=])|HOST")


@dataclass(frozen=True)
class Example:
    """One documented example command: its page (relative to the project root), line and text."""

    page: str
    line: int
    command: str

    def argv(self) -> list[str]:
        """The command's words after ``verify`` (shell quoting read as a shell would; no redirection)."""
        words = shlex.split(self.command)
        if ">" in words:                     # `verify derive ... > derivation.tex`: the output goes to stdout
            words = words[:words.index(">")]
        return words[1:]


def pages(root: Path = ROOT) -> list[Path]:
    """The pages whose examples count: README.md and docs/*.md."""
    return [root / "README.md"] + sorted((root / "docs").glob("*.md"))


def _code_blocks(text: str) -> list[list[tuple[int, str]]]:
    """The fenced code blocks of a shell kind (no language, sh, console), each as its (line number, line)s."""
    blocks, inside = [], False
    for i, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if m:
            inside = not inside and m.group(1) in ("", "sh", "console", "bash", "shell")
            if inside:
                blocks.append([])
            continue
        if inside:
            blocks[-1].append((i, line))
    return blocks


def _strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` after whitespace, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _commands(block: list[tuple[int, str]]):
    """(line number, command) of every ``verify`` line of a block, continuations joined, comment dropped."""
    k = 0
    while k < len(block):
        no, text = block[k][0], block[k][1].strip()
        text = text[2:] if text.startswith("$ ") else text
        k += 1
        if not text.startswith("verify "):
            continue
        while text.endswith("\\") and k < len(block):
            text = text[:-1].rstrip() + " " + block[k][1].strip()
            k += 1
        yield no, _strip_comment(text)


def documented_examples(root: Path = ROOT) -> list[Example]:
    """Every example command of the pages, in page order (module docstring)."""
    return [Example(page.relative_to(root).as_posix(), no, text)
            for page in pages(root) for block in _code_blocks(page.read_text(encoding="utf-8"))
            for no, text in _commands(block) if not _PLACEHOLDER.search(text)]


def documented_files(root: Path = ROOT) -> dict[str, str]:
    """The input files the pages show as ``$ cat NAME`` followed by their lines (up to the next ``$`` line or the
    end of the block): name -> text."""
    files = {}
    for page in pages(root):
        for block in _code_blocks(page.read_text(encoding="utf-8")):
            lines = [line for _, line in block]
            for k, line in enumerate(lines):
                if line.startswith("$ cat "):
                    body = []
                    for nxt in lines[k + 1:]:
                        if nxt.startswith("$ "):
                            break
                        body.append(nxt)
                    files[line[len("$ cat "):].strip()] = "\n".join(body) + "\n"
    return files


# Every documented example finishes within this many seconds on 2 cores (issue 29); `verify bench --only examples`.
BUDGET_SECONDS = 60.0
# An example still running at this multiple of the budget is stopped (recorded as over budget, with that time).
STOP_FACTOR = 5
# The examples with a budget of their own, by their first words, and why (every other example has BUDGET_SECONDS).
OWN_BUDGET = {
    "verify all": "the main job: its cold time on 2 cores is measured by a fresh-clone run (docs/commands.md)",
    "verify bench": "the bench itself, which runs for several minutes (its own record says how long)",
    "verify compare": "compares the reports of two `verify all` runs, so it runs only after them",
}


def own_budget(example: Example) -> str | None:
    """Why ``example`` is not held to BUDGET_SECONDS (OWN_BUDGET), or None."""
    return next((why for head, why in OWN_BUDGET.items()
                 if example.command == head or example.command.startswith(head + " ")), None)


def baseline_seconds() -> float:
    """The baseline of the examples' timings, measured in the same run: the CPU seconds of a fixed plain-Python
    computation (verify.run.speed.workload: exact rationals and a float loop, best of 5), which takes
    REFERENCE_CPU_SECONDS on the reference machine. An example's CPU time over it is a ratio that does not depend on
    how fast this machine is; the budget of BUDGET_SECONDS on the reference machine is the ratio
    :func:`target_ratio`."""
    return workload_seconds(5)


def target_ratio(budget: float = BUDGET_SECONDS) -> float:
    """An example's CPU seconds over :func:`baseline_seconds` may be at most this: ``budget`` seconds on the reference
    machine, in units of the baseline's time there."""
    return budget / REFERENCE_CPU_SECONDS


def run_example(example: Example, folder: Path, budget: float = BUDGET_SECONDS, baseline: float | None = None) -> dict:
    """Run ``example`` in ``folder`` (a fresh interpreter, as ``verify`` on the path would): its wall and CPU
    seconds (the process and every child it waited for), exit status, its wall time's ratio to ``budget``, and its
    CPU time's ratio to ``baseline`` (:func:`baseline_seconds`, measured now when not given), which must not exceed
    :func:`target_ratio` for the example to meet its budget."""
    baseline = baseline_seconds() if baseline is None else baseline
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    stopped = False
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-c", "from verify.cli import main; main()", *example.argv()],
                                cwd=folder, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.PIPE,
                                env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                    [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])))
        try:
            _, err = proc.communicate(timeout=STOP_FACTOR * budget)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            stopped = True
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = err.decode(errors="replace").strip().splitlines()[-1:] if proc.returncode else []
    ratio, target = cpu / baseline, target_ratio(budget)
    return {"page": example.page, "line": example.line, "command": example.command, "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2), "ratio": round(seconds / budget, 3),
            "baseline_seconds": round(baseline, 4), "baseline_ratio": round(ratio, 1), "target_ratio": round(target, 1),
            "exit_status": proc.returncode, "stopped": stopped, "error": tail[0][:300] if tail else "",
            "met": (not stopped) and proc.returncode == 0 and ratio <= target}


def time_examples(root: Path = ROOT, budget: float = BUDGET_SECONDS, tick=None) -> dict:
    """Every documented example (:func:`documented_examples`) run in page order in one scratch folder holding the
    documented input files, timed against ``budget``; those of OWN_BUDGET are listed with why, not run.
    ``tick(line)`` after each example: the command and its time, one line."""
    tick = tick or (lambda name: None)
    rows, skipped = [], []
    baseline = baseline_seconds()
    with tempfile.TemporaryDirectory(prefix="verify-examples-") as tmp:
        for name, text in documented_files(root).items():
            (Path(tmp) / name).write_text(text, encoding="utf-8")
        for ex in documented_examples(root):
            why = own_budget(ex)
            if why:
                skipped.append({"page": ex.page, "line": ex.line, "command": ex.command, "why": why})
                tick(f"{ex.command}: not run ({why})")
            else:
                r = run_example(ex, Path(tmp), budget, baseline)
                rows.append(r)
                tick(f"{ex.command}: {r['seconds']:.1f} s wall, {r['cpu_seconds']:.1f} s CPU"
                     + ("" if r["met"] else " (stopped)" if r["stopped"] else
                        f" (exit {r['exit_status']})" if r["exit_status"] else " (over budget)"))
    return {"budget_seconds": budget, "machine_cpus": os.cpu_count(), "load_average": list(os.getloadavg()),
            "baseline_seconds": round(baseline, 4), "target_ratio": round(target_ratio(budget), 1),
            "convention": "met: CPU seconds / the baseline's CPU seconds (a fixed plain-Python computation, same run) "
                          "<= target_ratio, i.e. the budget's seconds on the reference machine; exit 0; not stopped",
            "examples": rows, "own_budget": skipped, "met": all(r["met"] for r in rows),
            "over_budget": [r["command"] for r in rows if not r["met"]]}


def examples_markdown(res: dict) -> list[str]:
    """The bench report's lines for :func:`time_examples`'s result."""
    load = ", ".join(f"{x:.1f}" for x in res["load_average"])
    over = "all within budget" if res["met"] else f"{len(res['over_budget'])} over budget"
    base = (f"; CPU time over a fixed plain-Python baseline of {res['baseline_seconds']:.3g} s measured in the same "
            f"run, target at most {res['target_ratio']:g}x" if res.get("baseline_seconds") else "")
    lines = [f"Documented examples (README.md, docs/*.md) against {res['budget_seconds']:g} s each on the reference "
             f"machine ({res['machine_cpus']} CPUs, load average {load}{base}; "
             f"{over}):",
             "", "| example | page | seconds | CPU seconds | CPU / baseline | wall / budget | |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in res["examples"]:
        verdict = "met" if r["met"] else ("stopped" if r["stopped"] else
                                          f"exit {r['exit_status']}" if r["exit_status"] else "NOT met")
        base = f"{r['baseline_ratio']:g}x" if r.get("baseline_ratio") is not None else "–"
        lines.append(f"| `{r['command']}` | {r['page']}:{r['line']} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | "
                     f"{base} | {r['ratio']:.2f} | {verdict} |")
    lines += [""] + [f"Not held to this budget: `{s['command']}` ({s['why']})." for s in res["own_budget"]] + [""]
    return lines


__all__ = ["BUDGET_SECONDS", "Example", "baseline_seconds", "target_ratio", "OWN_BUDGET", "documented_examples", "documented_files", "examples_markdown",
           "own_budget", "pages", "run_example", "time_examples"]
