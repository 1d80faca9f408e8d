"""The on-disk cache computes once: a cache entry another process is computing is waited for, not computed again
(verify.run.cache.entry_lock), and the fast engine's compiled kernel is loaded from numba's cache by a later process
with the same numbers as a fresh compilation."""
import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from verify.run import cache
from verify.run.atomic import write_bytes_atomic

ROOT = Path(__file__).resolve().parents[1]


def test_an_entry_being_computed_is_waited_for(tmp_path, monkeypatch):
    """While the lock of an entry is held (by "another process" that then writes the value), a caller that found
    no file waits and returns the written value; it never runs the function (which would return "computed")."""
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path))
    calls = []

    @cache.by_code_version("test-lock")
    def value(x):
        calls.append(x)
        return "computed"

    first_read_missed = threading.Event()
    real_read = cache._read_pickle

    def read(path):
        got = real_read(path)
        first_read_missed.set()
        return got

    monkeypatch.setattr(cache, "_read_pickle", read)
    out = {}
    entry = cache.entry_path("test-lock", (1,))
    with cache.entry_lock(entry):
        t = threading.Thread(target=lambda: out.setdefault("v", value(1)))
        t.start()
        assert first_read_missed.wait(60), "the caller never looked for the file"
        write_bytes_atomic(entry, pickle.dumps("written by the holder"))
    t.join(60)
    assert out["v"] == "written by the holder"
    assert calls == []


def test_a_new_entry_replaces_only_its_own_older_versions(tmp_path, monkeypatch):
    """Writing an entry of a hyphenated name removes the files of the same name and arguments left by other code
    versions, and keeps those of other arguments and of another name that shares its prefix (file names written
    by hand here, in the documented pattern <name>-<key>-<code version>.pickle)."""
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path))
    folder = tmp_path / "derivations"
    folder.mkdir()
    mine, other = cache.entry_key((1,)), cache.entry_key((2,))
    assert mine != other
    stale = folder / f"test-old-entry-{mine}-0123456789ab.pickle"
    keep_args = folder / f"test-old-entry-{other}-0123456789ab.pickle"
    keep_name = folder / f"test-old-entry-x-{mine}-0123456789ab.pickle"
    for f in (stale, keep_args, keep_name):
        f.write_bytes(pickle.dumps("old"))

    @cache.by_code_version("test-old-entry")
    def value(x):
        return x + 1

    assert value(1) == 2
    assert not stale.exists() and keep_args.exists() and keep_name.exists()
    assert pickle.loads(cache.entry_path("test-old-entry", (1,)).read_bytes()) == 2


def test_a_value_that_cannot_be_pickled_is_returned_and_not_kept(tmp_path, monkeypatch):
    """A value pickle refuses (an instance of a class defined inside a function) is returned as computed, each call
    computes it again, and no entry file is left."""
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path))
    calls = []

    class Local:
        pass

    @cache.by_code_version("test-unpicklable")
    def value(x):
        calls.append(x)
        return Local()

    assert isinstance(value(1), Local) and isinstance(value(1), Local)
    assert calls == [1, 1]
    assert not list((tmp_path / "derivations").glob("test-unpicklable-*.pickle"))


def test_no_lock_where_the_cache_folder_cannot_be_made(tmp_path):
    """Where the entry's folder cannot be made (a file stands in its place) there is no lock file: the body runs
    all the same (each process computes for itself, as before the lock existed)."""
    blocked = tmp_path / "file"
    blocked.write_text("a file where a folder should be")
    ran = []
    with cache.entry_lock(blocked / "entry.pickle"):
        ran.append(True)
    assert ran == [True] and blocked.read_text() == "a file where a folder should be"


KERNEL_RUN = """
import json, sys
from verify.model.setting import make_setting
from verify.engines.fast import iterate_fast, compiled_kernel, case_of
s = make_setting(D=8, K=4, eta="1/16", preset="sts")
r = iterate_fast(s, 2000, checkpoints=[10, 2000])
k = compiled_kernel(s.sigma, case_of(s.K, s.D))
print(json.dumps({"loss": r.data["loss"].tolist(), "alpha": r.data["alpha"].tolist(),
                  "hits": sum(k.stats.cache_hits.values()), "misses": sum(k.stats.cache_misses.values())}))
"""


@pytest.mark.slow
def test_the_fast_kernel_is_compiled_once_per_cache(tmp_path):
    """A second process with the same cache folder loads the kernel numba cached (a cache hit, no compilation)
    and computes the same numbers, bit for bit, as the process that compiled it; the generated module it
    compiled is kept in the cache folder, named by its text."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{cache.ENV_CACHE_DIR: str(tmp_path)})
    env.pop("NUMBA_CACHE_DIR", None)
    runs = [json.loads(subprocess.run([sys.executable, "-c", KERNEL_RUN], env=env, capture_output=True, text=True,
                                      check=True, cwd=ROOT).stdout) for _ in range(2)]
    assert runs[0]["misses"] >= 1 and runs[0]["hits"] == 0
    assert runs[1]["hits"] >= 1 and runs[1]["misses"] == 0
    assert runs[0]["loss"] == runs[1]["loss"] and runs[0]["alpha"] == runs[1]["alpha"]
    kept = list((tmp_path / "numba").glob("fast_kernel_*.py"))
    assert len(kept) == 1 and "def run_batch(" in kept[0].read_text()


@pytest.mark.slow
def test_the_fast_engine_runs_where_the_cache_folder_cannot_be_written(tmp_path, monkeypatch):
    """A cache folder that cannot be written (here a file stands where it should be): the kernel is compiled in
    the process, and computes what the plain-Python reduced engine computes (float64, same recursion)."""
    from verify.engines import iterate
    from verify.engines import fast
    from verify.model import make_setting
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(blocked))
    fast.built_kernel.cache_clear()
    try:
        s = make_setting(D=8, K=2, eta="1/8", preset="sts")
        got = fast.iterate_fast(s, 200, checkpoints=[200]).trajectory(0).records[-1]
        ref = iterate(s, 200, "reduced", "float64", None, [200]).records[-1]
        assert got.excess_loss == pytest.approx(float(ref.excess_loss), rel=1e-12)
        assert not list(tmp_path.glob("**/fast_kernel_*.py"))
    finally:
        fast.built_kernel.cache_clear()
