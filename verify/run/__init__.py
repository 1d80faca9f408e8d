"""The runner of ``verify all`` and ``verify sweep``: which parts there are, where they run, and how their
results reach the disk.

- :mod:`~verify.run.parts`: the registry of parts, filled by the :func:`part` decorator where each part is
  computed, and its discovery;
- :mod:`~verify.run.pipeline`: the plan of a run (which parts, which are reused) and the run itself;
- :mod:`~verify.run.execute`: the Dask executor (a LocalCluster or an existing scheduler);
- :mod:`~verify.run.child`: one part in a child process with a time limit;
- :mod:`~verify.run.version`: the code version (a hash of the sources) that keys every saved result;
- :mod:`~verify.run.lock`: one run per output folder;
- :mod:`~verify.run.atomic`: atomic writes of files and folders.

A part registers with ``from verify.run import part``.
"""
from ..lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (verify.lazy): low layers (the cache,
# certificate files) write atomically through verify.run.atomic without loading the pipeline and its imports.
_EXPORTS = {
    **dict.fromkeys(("WORK", "write_bytes_atomic", "write_json_atomic"), ".atomic"),
    **dict.fromkeys(("REGISTRY", "PartSpec", "discover", "part"), ".parts"),
    **dict.fromkeys(("DEFAULT_OUT", "Part", "RunState", "run_parts", "verify_all"), ".pipeline"),
    "code_version": ".version",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
