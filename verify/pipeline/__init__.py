"""The ``verify all`` pipeline, the top of the house: it plans the registered parts, runs them on the executor
(each in a child process with a time limit) and builds the report from their records, so it imports the report
and nothing below imports it.

- :mod:`~verify.pipeline.runner`: the plan of a run (which parts, which are reused), the run and ``verify_all``;
- :mod:`~verify.pipeline.child`: one part in a child process with a time limit (the worker's part starter).

The bottom layer it stands on is :mod:`verify.run` (the part registry, the executor, atomic writes, the lock and
the code version).
"""
from ..lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (verify.lazy): the part starter imports
# verify.pipeline.child without loading the runner.
_EXPORTS = dict.fromkeys(("DEFAULT_OUT", "RunState", "plan", "run_parts", "verify_all"), ".runner")
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
