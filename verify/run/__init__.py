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
from .atomic import WORK, write_bytes_atomic, write_json_atomic
from .parts import REGISTRY, PartSpec, discover, part
from .pipeline import DEFAULT_OUT, Part, RunState, run_parts, verify_all
from .version import code_version

__all__ = ["part", "PartSpec", "REGISTRY", "discover", "Part", "RunState", "run_parts", "verify_all", "DEFAULT_OUT",
           "code_version", "WORK", "write_bytes_atomic", "write_json_atomic"]
