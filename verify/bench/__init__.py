"""``verify bench``: the timings of fixed workloads (:mod:`~verify.bench.timings`, also a part of ``verify all``)
and the documented example commands it times (:mod:`~verify.bench.examples`, read from README.md and docs/*.md)."""
