"""The independent re-checker of saved certificates, beside ``verify`` and importing nothing of it.

A certificate must not rest on the program that found it, so this package states the model's reduced map itself
and re-verifies the stored numbers with python-flint (exact rationals, Arb balls) and the standard library only
(dask.distributed when a family's cells are spread over processes). tests/test_layers.py scans its sources and
fails on any import of ``verify`` or ``lemmas``.

- :mod:`recheck.certificates`: a regime certificate or a family file (``python -m recheck FILE [--workers N]``);
- :mod:`recheck.atlas`: an atlas file (``python -m recheck.atlas FILE``), reusing the family cell re-check;
- :mod:`recheck.positivity`: Lemma C.2's cell results (``python -m recheck.positivity FILE``).

The package's ``__init__`` imports nothing, so each command line loads only what it runs.
"""
