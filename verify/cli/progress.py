"""Progress of long commands, on stderr, so that stdout stays pure output (JSON).

On a terminal: a rich display with elapsed time and ETA. Elsewhere (a log, CI, a pipe): a plain line every
PLAIN_INTERVAL seconds saying where the work is (``verify check: 3/10 (30%), 40 s elapsed, about 1.5 min
left: lemma-C.2``), so a long command is never silent; a command shorter than that prints nothing.
``--quiet`` turns both off. One helper for every command:

    with progress("verify check", total=len(ids), quiet=quiet) as bar:
        for i in ids:
            bar.advance(description=i)
"""
from __future__ import annotations

import contextlib
import inspect
import math
import threading
import time
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TaskID, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.text import Text

ANNOUNCE_SECONDS = 5          # estimates above this are said on stderr before the work starts
CONFIRM_SECONDS = 3600        # estimates above this need --yes
PLAIN_INTERVAL = 10.0         # seconds between two plain progress lines when stderr is not a terminal


def stderr_console(quiet: bool = False) -> Console:
    """The console progress and notes go to (stderr; silent with ``quiet``)."""
    return Console(stderr=True, quiet=quiet)


def note(message: str, quiet: bool = False, console: Console | None = None) -> None:
    """One line to stderr (a time estimate, a phase, a warning), unless ``quiet``."""
    if not quiet and message:
        (console or stderr_console()).print(message, highlight=False, markup=False, soft_wrap=True)


UNSET = "unset"       # a task whose caller gives no ETA (Bar.set_eta): the ETA follows the count


def eta_text(eta_end) -> str:
    """What an ETA set by :meth:`Bar.set_eta` reads now: 'about 3 min left', or 'time left unknown'."""
    if eta_end is None:
        return "time left unknown"
    return f"about {duration(max(0.0, eta_end - time.monotonic()))} left"


class EtaColumn(ProgressColumn):
    """The rich display's ETA: the caller's estimate where it gives one (Bar.set_eta), else rich's, from the count."""

    def __init__(self):
        super().__init__()
        self.by_count = TimeRemainingColumn()

    def render(self, task) -> Text:
        eta_end = task.fields.get("eta_end", UNSET)
        if eta_end is UNSET:
            return Text("ETA ") + self.by_count.render(task)
        return Text(eta_text(eta_end), style="progress.remaining")


@dataclass
class PlainTask:
    """One task of a plain display: its description, count, total, start time and ETA (UNSET: from the count)."""

    description: str
    total: float | None
    completed: float = 0.0
    started: float = field(default_factory=time.monotonic)
    eta_end: object = UNSET

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        text = f"{self.description}: "
        if self.total:
            text += f"{self.completed:g}/{self.total:g} ({100 * self.completed / self.total:.0f}%), "
        text += f"{duration(elapsed)} elapsed"
        if self.eta_end is not UNSET:
            text += f", {eta_text(self.eta_end)}"
        elif self.total and 0 < self.completed < self.total:
            text += f", about {duration(elapsed * (self.total - self.completed) / self.completed)} left"
        return text


class Plain:
    """The plain display: a thread that prints the last-moved task's line every ``interval`` seconds."""

    def __init__(self, console: Console, interval: float = PLAIN_INTERVAL):
        self.console, self.interval = console, interval
        self.tasks: list[PlainTask] = []
        self.current: PlainTask | None = None
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True)

    def add(self, description: str, total: float | None) -> PlainTask:
        with self.lock:
            task = PlainTask(description, total)
            self.tasks.append(task)
            self.current = task
            return task

    def touch(self, task: PlainTask) -> None:
        self.current = task

    def _tick(self) -> None:
        while not self.stopped.wait(self.interval):
            with self.lock:
                line = self.current.line() if self.current else ""
            note(line, console=self.console)

    def __enter__(self) -> "Plain":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join()


@dataclass
class Bar:
    """A handle on one progress task: ``update(completed)``, ``advance(n)``, ``log(line)``; no-ops when hidden.
    ``progress`` is the rich display (a terminal) or None; ``plain`` the plain one (not a terminal) or None."""

    progress: Progress | None = None
    task: TaskID | None = None
    plain: Plain | None = None
    plain_task: PlainTask | None = None

    @property
    def shown(self) -> bool:
        return self.progress is not None or self.plain is not None

    def update(self, completed=None, total=None, description: str | None = None) -> None:
        if self.progress is not None:
            kw = {k: v for k, v in (("completed", completed), ("total", total), ("description", description))
                  if v is not None}
            self.progress.update(self.task, **kw)
        elif self.plain_task is not None:
            t = self.plain_task
            t.completed = t.completed if completed is None else completed
            t.total = t.total if total is None else total
            t.description = description or t.description
            self.plain.touch(t)

    def advance(self, n: float = 1, description: str | None = None) -> None:
        if self.progress is not None:
            self.progress.update(self.task, advance=n, **({"description": description} if description else {}))
        elif self.plain_task is not None:
            self.update(completed=self.plain_task.completed + n, description=description)

    def set_eta(self, seconds: float | None) -> None:
        """Replace the count-based ETA by the caller's estimate of the ``seconds`` left (None: unknown, shown so)."""
        end = None if seconds is None else time.monotonic() + seconds
        if self.progress is not None:
            self.progress.update(self.task, eta_end=end)
        elif self.plain_task is not None:
            self.plain_task.eta_end = end

    def add(self, description: str, total: float | None) -> "Bar":
        """Another task (a new phase) in the same display."""
        if self.progress is not None:
            return Bar(self.progress, self.progress.add_task(description, total=total))
        if self.plain is not None:
            return Bar(plain=self.plain, plain_task=self.plain.add(description, total))
        return Bar()

    def log(self, message: str) -> None:
        """One line above the display (a finished part, a note), on stderr; nothing when hidden (``--quiet``)."""
        if self.progress is not None:
            self.progress.console.print(message, markup=False, highlight=False, soft_wrap=True)
        elif self.plain is not None:
            note(message, console=self.plain.console)


@contextlib.contextmanager
def progress(description: str, total: float | None, quiet: bool = False, console: Console | None = None,
             transient: bool = True, interval: float = PLAIN_INTERVAL):
    """A progress display with elapsed time and ETA (rich on a terminal, plain lines every ``interval``
    seconds elsewhere); yields a :class:`Bar` (a no-op with ``quiet``)."""
    con = console or stderr_console(quiet)
    if quiet:
        yield Bar()
        return
    if not con.is_terminal:
        with Plain(con, interval) as plain:
            yield Bar(plain=plain, plain_task=plain.add(description, total))
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), EtaColumn())
    with Progress(*cols, console=con, transient=transient) as p:
        yield Bar(p, p.add_task(description, total=total))


def phases(bar: Bar):
    """A ``progress(phase, done, total)`` callback for a computation in phases (verify certify: the prefix, the
    region check, the shells), each shown as its own task of ``bar``; ``total`` may be None (elapsed time)."""
    tasks: dict = {}

    def callback(phase: str, done: float, total: float | None = None) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add(phase, total)
        tasks[phase].update(completed=done, total=total)
    return callback


def progress_hook(func, bar: Bar) -> dict:
    """``{"progress": phases(bar)}`` when ``func`` takes a ``progress`` keyword (the computation reports its
    phases: ``progress(phase, done, total)``), else ``{}`` (the display then shows the elapsed time only)."""
    try:
        takes = "progress" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        takes = False
    return {"progress": phases(bar)} if takes and bar.shown else {}


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
