"""Package attributes imported on first use (PEP 562): a package's ``__init__`` names its public objects and the
modules that define them, and imports nothing until one is asked for.

Why: a command line that loads only what it runs starts faster (``verify --help`` loads no engine, no SymPy). The
independent re-checker does not rely on it: it is its own package, ``recheck``, importing nothing of ``verify``.
"""
from __future__ import annotations

import importlib


class LazyModule:
    """A stand-in for the module ``name`` that imports it when an attribute is first read (then keeps that
    attribute): ``sp = lazy_module("sympy")`` at the top of a module that needs SymPy only inside functions."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> LazyModule:
    """The module ``name``, imported on first use (:class:`LazyModule`)."""
    return LazyModule(name)


def lazy_exports(package: str, exports: dict, namespace: dict):
    """(__getattr__, __dir__) for a package whose public ``exports`` ({name: ".module"}) load on first use."""
    def __getattr__(name: str):
        if name in exports:
            value = getattr(importlib.import_module(exports[name], package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(exports))
    return __getattr__, __dir__
