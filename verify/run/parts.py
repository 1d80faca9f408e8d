"""The parts of ``verify all``: a registry filled by the :func:`part` decorator, and its discovery.

A *part* is one unit of work of ``verify all`` whose result is a JSON-ready dict (a claim, a probe, the
derivation, ...). A part registers where it is computed, with one decorator::

    from verify.run import part

    @part("certify", options=lambda profile: {"bits": 256})
    def certify_part(profile: str) -> dict:          # one part, named "certify"
        ...

    @part("fuzz", args=fuzzable_claim_ids)
    def fuzz_part(claim_id: str, profile: str) -> dict:   # one part per argument: "fuzz:<claim id>"
        ...

``options`` returns what the result depends on besides the code and the profile (sizes, regimes); a
saved result is reused only when they, the profile and the code version are unchanged. The result may
be a dict or an object with ``as_dict()``.

A part that honours a convention (``verify all`` run under another convention than the reference one)
takes it as a keyword, next to the profile: ``def claim_part(claim_id, profile, convention=None)``, where
``convention`` is a dict of make_setting keywords (``{"loss": "mean"}``) or None for the reference; the
runner records it in the part's options, so it keys the saved result.

Discovery: every module under ``verify/`` and ``lemmas/`` with a line starting with ``@part(`` is
imported by :func:`discover` (a text search, so no module is imported just to find out), which is how
``verify all`` finds the parts; nothing else needs to be listed anywhere.

Plug-ins from outside the source tree: the environment variable ``VERIFY_PLUGINS`` (:data:`ENV_PLUGINS`) names
modules, comma-separated, importable on the Python path, that are imported wherever parts are discovered or
run (:func:`discover`, and verify.pipeline.child after the part's own module) and wherever sweep measurements are
(verify.sweep.measures, on every Dask worker too): what they register with :func:`part` or ``@measure`` joins
the run. The tests use it for a part and a measurement that block until the test releases them (tests/gate.py),
so an interrupt always lands while one is running.
"""
from __future__ import annotations

import importlib
import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

# The packages whose modules may register parts, relative to the source root.
PACKAGES = ("verify", "lemmas", "recheck")
_DECORATOR = re.compile(r"^@part\(", re.MULTILINE)
# Modules outside the source tree that register parts or measurements (module docstring).
ENV_PLUGINS = "VERIFY_PLUGINS"


@dataclass(frozen=True)
class PartSpec:
    """One registered kind of part: its function, the arguments it is run for, what its result depends on."""

    kind: str
    func: Callable
    module: str
    args: Callable[[], list] | None = None
    options: Callable | None = None
    order: int = 50
    summary: str = ""
    takes_convention: bool = False
    convention_why: str = ""          # why a part that takes no convention cannot honour one

    def applies(self, convention: dict | None) -> bool:
        """Whether a run under ``convention`` changes this part's result (it takes the convention), or there is
        none to apply."""
        return self.takes_convention or not convention

    def convention_note(self) -> str:
        """What a part's record says when the run's convention does not apply to it."""
        why = self.convention_why or "this part takes no convention"
        return f"does not apply: {why}; it ran under the reference convention"

    def arguments(self) -> list[str]:
        """The arguments this kind runs for ([""] for a single part)."""
        return [""] if self.args is None else [str(a) for a in self.args()]

    def extra_options(self, arg: str, profile: str) -> dict:
        """What the result depends on besides the code version and the profile."""
        if self.options is None:
            return {}
        return dict(self.options(arg, profile) if self.args is not None else self.options(profile))

    def run(self, arg: str, profile: str, convention: dict | None = None) -> dict:
        """The part's result as a dict (under ``convention`` when the part takes one)."""
        kw = {"convention": convention} if (convention and self.takes_convention) else {}
        res = self.func(arg, profile, **kw) if self.args is not None else self.func(profile, **kw)
        if hasattr(res, "as_dict"):
            res = res.as_dict()
        if not isinstance(res, dict):
            raise TypeError(f"part {self.kind!r} returned {type(res).__name__}, not a dict or an object with as_dict()")
        return res


REGISTRY: dict[str, PartSpec] = {}


def part(kind: str, *, args: Callable[[], list] | None = None, options: Callable | None = None, order: int = 50,
         summary: str = "", convention_why: str = ""):
    """Register the decorated function as the part ``kind`` (see the module docstring).

    ``args``: a function listing the arguments (then the function is called ``f(arg, profile)`` once per
    argument, parts ``kind:arg``); without it ``f(profile)``. ``options``: ``(arg, profile) -> dict`` or
    ``(profile) -> dict`` likewise. ``order``: smaller runs earlier (long parts first shortens a run).
    ``convention_why``: for a function without a ``convention`` keyword, why the part cannot honour a run's
    convention (its record says so under any other convention than the reference).
    """
    if not re.fullmatch(r"[a-z][a-z0-9-]*", kind):
        raise ValueError(f"part kind {kind!r} must be lower-case letters, digits and '-'")

    def deco(f):
        want = 2 if args is not None else 1
        n = len([p for p in inspect.signature(f).parameters.values()
                 if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
        if n != want:
            raise TypeError(f"part {kind!r}: {f.__qualname__} must take "
                            + ("(arg, profile)" if args is not None else "(profile)"))
        old = REGISTRY.get(kind)
        if old is not None and (old.module, old.func.__qualname__) != (f.__module__, f.__qualname__):
            raise AssertionError(f"part {kind!r} registered twice: {old.module} and {f.__module__}")
        REGISTRY[kind] = PartSpec(kind, f, f.__module__, args, options, order,
                                  summary or (inspect.getdoc(f) or "").split("\n")[0],
                                  "convention" in inspect.signature(f).parameters, convention_why)
        return f
    return deco


def source_root() -> Path:
    """The folder holding the ``verify`` and ``lemmas`` packages."""
    return Path(__file__).resolve().parents[2]


# The statuses of a saved part record (verify.pipeline.child.part_record writes them; the report reads them).
STATUS = ("ok", "failed", "timeout", "skipped")


@dataclass(frozen=True)
class Part:
    """One unit of ``verify all``: a registered ``kind`` and its argument (claim id, probe name, or "")."""

    kind: str
    arg: str = ""

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.arg}" if self.arg else self.kind

    @property
    def filename(self) -> str:
        safe = "".join(c if (c.isalnum() or c in "-_.") else "_" for c in self.name.replace(":", "--"))
        return f"{safe}.json"


def source_path(path) -> str:
    """How a file reads in records and reports: relative to :func:`source_root` when it lies under it (no
    machine-specific prefix in a committed report), else as given."""
    try:
        return str(Path(path).resolve().relative_to(source_root()))
    except ValueError:
        return str(path)


def modules_with(pattern: re.Pattern, packages=PACKAGES, root: Path | None = None) -> list[str]:
    """Dotted names of the modules under the folders ``packages`` (relative to the toolkit's root) whose source
    has a match of ``pattern``: how a registry finds the modules that register into it without importing them."""
    root = Path(root) if root is not None else source_root()
    mods = []
    for pkg in packages:
        for f in sorted((root / pkg).rglob("*.py")):
            if "__pycache__" in f.parts:
                continue
            try:
                text = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if pattern.search(text):
                rel = f.relative_to(root).with_suffix("")
                parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
                mods.append(".".join(parts))
    return mods


def part_modules(root: Path | None = None) -> list[str]:
    """Dotted names of the modules that use the :func:`part` decorator (a text search of the sources)."""
    return modules_with(_DECORATOR, PACKAGES, root)


def plugin_modules() -> list[str]:
    """The modules named in $VERIFY_PLUGINS (module docstring), in order."""
    return [m.strip() for m in os.environ.get(ENV_PLUGINS, "").split(",") if m.strip()]


def discover() -> list[tuple[str, str]]:
    """Import every module that registers parts (and the plug-ins of $VERIFY_PLUGINS); returns (module, error)
    for each that failed to import."""
    problems = []
    for mod in part_modules() + plugin_modules():
        try:
            importlib.import_module(mod)
        except Exception as exc:  # a broken module costs its parts, not the run: the pipeline reports it
            problems.append((mod, f"{type(exc).__name__}: {exc}"))
    return problems


def spec(kind: str) -> PartSpec:
    """The registered part ``kind``, importing its module first if needed."""
    if kind not in REGISTRY:
        discover()
    return REGISTRY[kind]


__all__ = ["Part", "PartSpec", "STATUS", "source_path", "REGISTRY", "ENV_PLUGINS", "part", "discover", "part_modules", "plugin_modules", "source_root",
           "spec"]
