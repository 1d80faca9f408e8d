"""Package attributes imported on first use (PEP 562): a package's ``__init__`` names its public objects and the
modules that define them, and imports nothing until one is asked for.

Why: ``python -m verify.certify.recheck`` runs the ``__init__`` of ``verify`` and of ``verify.certify`` first, and
the re-checker must not load the toolkit; a command line that loads only what it runs also starts faster.
"""
from __future__ import annotations

import importlib


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
