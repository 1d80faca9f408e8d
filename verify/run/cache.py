"""The on-disk cache: where cached files live, and results that depend only on the code, kept between runs.

Location: the folder named by the environment variable ``VERIFY_CACHE_DIR`` (:data:`ENV_CACHE_DIR`) when it
is set (the tests set it to a temporary folder for their session, so a local run computes what CI computes),
else ``.cache/verify/`` at the project root in a source checkout (gitignored), else the user cache
(``$XDG_CACHE_HOME/verify``, by default ``~/.cache/verify``). A result cached by :func:`by_code_version`
is a pickle named by the function, its arguments and the code version (verify.run.version): any edit of
the sources makes a new file, so a cached derivation is never reused across edits. Files are written
atomically (verify.run.atomic); an unreadable file is recomputed. An entry is computed under a lock
(:func:`entry_lock`): processes that need it at the same time (the parts of ``verify all``) compute it once.
The cache is ours: nothing else writes there.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
from importlib import metadata
from pathlib import Path

from filelock import FileLock

from .atomic import write_bytes_atomic
from .version import code_version

_ROOT = Path(__file__).resolve().parents[2]
ENV_CACHE_DIR = "VERIFY_CACHE_DIR"


def cache_dir(name: str = "") -> Path:
    """The cache folder ``name`` (module docstring); not created here."""
    if os.environ.get(ENV_CACHE_DIR):
        base = Path(os.environ[ENV_CACHE_DIR])
    elif (_ROOT / "pyproject.toml").is_file() and (_ROOT / "verify").is_dir():
        base = _ROOT / ".cache" / "verify"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "verify"
    return base / name if name else base


# The libraries whose answers a derivation depends on besides our code (an upgrade must not reuse them).
LIBRARIES = ("sympy", "z3-solver", "cvc5", "python-flint")


@functools.lru_cache(maxsize=1)
def library_versions() -> str:
    out = []
    for lib in LIBRARIES:
        try:
            out.append(f"{lib}={metadata.version(lib)}")
        except metadata.PackageNotFoundError:
            out.append(f"{lib}=absent")
    return " ".join(out)


_MISSING = object()


def _read_pickle(path: Path):
    """The value kept in ``path``, or _MISSING when there is none (or it cannot be read: recomputed)."""
    try:
        return pickle.loads(path.read_bytes())
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError):
        return _MISSING


@contextlib.contextmanager
def entry_lock(path: Path):
    """Hold the lock of cache entry ``path`` (a ``.lock`` file beside it) while it is computed, so that
    processes that need the same entry compute it once: the others wait, then read the file. Where the cache
    folder cannot hold a lock file (read-only), each process computes for itself, as without the lock."""
    lock = FileLock(os.fspath(path) + ".lock", thread_local=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        lock.release()


def entry_key(args: tuple) -> str:
    """The part of a cache entry's file name that names its arguments and the LIBRARIES' versions (not the code
    version): the entries of one ``name`` and key under other code versions are the ones a new entry replaces."""
    return hashlib.sha256((repr(args) + library_versions()).encode()).hexdigest()[:12]


def entry_path(name: str, args: tuple) -> Path:
    """The file that keeps ``name(*args)`` for this code version and these LIBRARIES' versions."""
    return cache_dir("derivations") / f"{name}-{entry_key(args)}-{code_version()}.pickle"


def by_code_version(name: str):
    """Decorator: ``f(*args)`` (arguments with a stable ``repr``) is computed once per code version (and per
    version of the LIBRARIES) and kept as ``cache_dir("derivations")/<name>-<key>-<code version>.pickle``."""
    def wrap(f):
        @functools.wraps(f)
        def cached(*args):
            path, key = entry_path(name, args), entry_key(args)
            found = _read_pickle(path)
            if found is not _MISSING:
                return found
            # One process derives, the others wait for its file (parallel parts of ``verify all`` ask for the
            # same derivations at the same time): the lock is per entry, so nested derivations cannot deadlock.
            with entry_lock(path):
                found = _read_pickle(path)
                if found is not _MISSING:
                    return found
                value = f(*args)
                try:
                    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                except (pickle.PicklingError, AttributeError, TypeError):
                    return value        # e.g. an object of a class defined inside a function: computed, not kept
                try:
                    for old in path.parent.glob(f"{name}-{key}-*.pickle"):
                        old.unlink(missing_ok=True)         # earlier code versions: never read again
                    write_bytes_atomic(path, data)
                except OSError:
                    pass        # a cache folder that cannot be written: computed, not kept (as without the cache)
            return value
        cached.uncached = f
        return cached
    return wrap


__all__ = ["ENV_CACHE_DIR", "by_code_version", "cache_dir", "entry_key", "entry_lock", "entry_path"]
