"""The bottom of the house for ``verify all`` and ``verify sweep``: which parts there are, where tasks run, and how
results reach the disk. The ``verify all`` pipeline itself (plan, run, child processes, report) sits at the top, in
:mod:`verify.pipeline`; nothing here imports anything above the model.

- :mod:`~verify.run.parts`: the registry of parts, filled by the :func:`part` decorator where each part is
  computed, and its discovery; a part's identity and a record's statuses;
- :mod:`~verify.run.execute`: the Dask executor (a LocalCluster or an existing scheduler);
- :mod:`~verify.run.speed`: the machine's slowness against the reference machine (the parts' time limits);
- :mod:`~verify.run.version`: the code version (a hash of the sources) that keys every saved result;
- :mod:`~verify.run.lock`: one run per output folder;
- :mod:`~verify.run.atomic`: atomic writes of files and folders.

A part registers with ``from verify.run import part``.
"""
from ..lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (verify.lazy): a part module
# registers with ``from verify.run import part`` without loading the executor (Dask) or the other modules.
_EXPORTS = {
    **dict.fromkeys(("WORK", "write_bytes_atomic", "write_json_atomic"), ".atomic"),
    **dict.fromkeys(("REGISTRY", "Part", "PartSpec", "discover", "part"), ".parts"),
    "code_version": ".version",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
