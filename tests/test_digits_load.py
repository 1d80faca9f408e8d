"""verify.model.data.digits.load reads scikit-learn's digits file without importing scikit-learn: the same
integers as ``sklearn.datasets.load_digits`` (the independent reference), by both of its paths."""
from __future__ import annotations

import importlib.util

import numpy as np
from verify.model.data import digits


def reference() -> np.ndarray:
    from sklearn.datasets import load_digits
    return load_digits().images


def test_the_file_read_directly_gives_sklearns_images():
    got = digits.load()
    assert got.shape == (1797, 8, 8) and got.dtype == np.int64
    assert np.array_equal(got, reference())


def test_without_the_file_it_asks_sklearn(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert np.array_equal(digits.load(), reference())
