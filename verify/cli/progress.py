"""Progress with an ETA for long commands (rich), on stderr, so that stdout stays pure output (JSON).

Shown only when stderr is a terminal and ``--quiet`` is not given; otherwise every helper is a no-op,
so a piped or scripted run prints nothing extra. One helper for every command:

    with progress("verify check", total=len(ids), quiet=quiet) as bar:
        for i in ids:
            bar.advance(description=i)
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


def stderr_console(quiet: bool = False) -> Console:
    """The console progress and notes go to (stderr; silent with ``quiet``)."""
    return Console(stderr=True, quiet=quiet)


def note(message: str, quiet: bool = False, console: Console | None = None) -> None:
    """One line to stderr (a time estimate, a phase), unless ``quiet``."""
    if not quiet:
        (console or stderr_console()).print(message, highlight=False, markup=False, soft_wrap=True)


@dataclass
class Bar:
    """A handle on one progress task: ``update(completed)`` / ``advance(n)``; both no-ops when hidden."""

    progress: Progress | None = None
    task: TaskID | None = None

    def update(self, completed=None, total=None, description: str | None = None) -> None:
        if self.progress is not None:
            kw = {k: v for k, v in (("completed", completed), ("total", total), ("description", description))
                  if v is not None}
            self.progress.update(self.task, **kw)

    def advance(self, n: float = 1, description: str | None = None) -> None:
        if self.progress is not None:
            self.progress.update(self.task, advance=n, **({"description": description} if description else {}))

    def add(self, description: str, total: float | None) -> "Bar":
        """Another task (a new phase) in the same display."""
        if self.progress is None:
            return Bar()
        return Bar(self.progress, self.progress.add_task(description, total=total))


@contextlib.contextmanager
def progress(description: str, total: float | None, quiet: bool = False, console: Console | None = None):
    """A progress display with elapsed time and ETA; yields a :class:`Bar` (a no-op when not shown)."""
    con = console or stderr_console(quiet)
    if quiet or not con.is_terminal:
        yield Bar()
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*cols, console=con, transient=True) as p:
        yield Bar(p, p.add_task(description, total=total))


def duration(seconds: float) -> str:
    """A human duration: '45 s', '12 min', '3.2 h', '5.1 days', '3.2 years'."""
    if not math.isfinite(seconds):
        return "forever"
    year, day = 365.25 * 86400, 86400
    for unit, size, at in (("years", year, year), ("days", day, 2 * day), ("h", 3600, 2 * 3600), ("min", 60, 90)):
        if seconds >= at:
            v = seconds / size
            return f"{v:.2g} {unit}" if v < 100 else f"{v:,.0f} {unit}"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


def counts_text(counts) -> str:
    """Counts as words, '3 proved, 2 certified, 1 refuted' (a summary line, never a Python dict)."""
    if isinstance(counts, dict):
        return ", ".join(f"{n} {k}" for k, n in counts.items()) or "none"
    return str(counts)
