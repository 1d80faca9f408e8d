"""Activation functions sigma: one module per family, each registering itself.

Every module of this package is imported here, so a new file holding a :class:`Sigma` subclass
decorated with :func:`register` makes a new family known to the setting, the derivation, the engines,
the probes, the fuzzer and the CLI, with no other edit (CONTRIBUTING.md, "How to add a sigma"). A
module outside the package registers a family the same way when it is imported.

>>> parse_sigma("poly:0,1,0,1/10").odd
True
>>> sigma_families()[:2]
['identity', 'erf']
"""
from __future__ import annotations

import importlib
import pkgutil
import re

from ...errors import InvalidParameter
from ..spec import DEFAULTS
from .base import Kernel, Sigma, vectorised, x_symbol

FAMILIES: dict[str, type[Sigma]] = {}
_FAMILY_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def __getattr__(name: str):
    """``X``, the argument of sigma in every SymPy form (verify.model.sigmas.base.x_symbol), made on first use."""
    if name == "X":
        return x_symbol()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(cls: type[Sigma]) -> type[Sigma]:
    """Class decorator: make the family ``cls.family`` parseable (``parse_sigma``) and known everywhere."""
    name = cls.family
    if not isinstance(name, str) or not _FAMILY_NAME.fullmatch(name):
        raise TypeError(f"{cls.__qualname__}.family must be a lower-case name such as 'erf', not {name!r}")
    if FAMILIES.get(name, cls) is not cls:
        raise TypeError(f"the sigma family {name!r} is already registered by {FAMILIES[name].__module__}")
    FAMILIES[name] = cls
    return cls


def unregister(name: str) -> None:
    """Forget the family ``name`` (a test's clean-up after registering its own)."""
    FAMILIES.pop(name, None)


def sigma_families() -> list[str]:
    """The registered family names: the reference sigma (docs/setting.md) first, then in registration order."""
    return sorted(FAMILIES, key=lambda name: name != DEFAULTS["sigma"])


def family_syntax() -> list[str]:
    """How each registered family's specs are written, e.g. ``poly:c0,c1,...``."""
    return [FAMILIES[name].syntax or name for name in sigma_families()]


def sigma_examples() -> tuple[str, ...]:
    """Every registered family's fuzz representatives (the family name when it declares none)."""
    return tuple(spec for name in sigma_families() for spec in (FAMILIES[name].fuzz_examples or (name,)))


def parse_sigma(spec) -> Sigma:
    """The sigma a spec names: ``family`` or ``family:arguments`` (e.g. ``erf``, ``poly:0,1,0,1/10``)."""
    valid = (f"must be one of {', '.join(family_syntax())} (the registered sigma families; tanh has no "
             "closed-form Gaussian kernel)")
    if not isinstance(spec, str):
        raise InvalidParameter("sigma", spec, valid)
    name, _, arg = spec.partition(":")
    if name not in FAMILIES:
        raise InvalidParameter("sigma", spec, valid)
    return FAMILIES[name].parse(arg)


def _discover() -> None:
    """Import every module of this package; each must register at least one family (a forgotten
    ``@register`` fails here, at import, rather than as an unknown sigma later)."""
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if not any(cls.__module__ == module.__name__ for cls in FAMILIES.values()):
            raise ImportError(f"{module.__name__} registers no sigma family (decorate its Sigma with @register)")


_discover()

__all__ = ["Sigma", "Kernel", "X", "vectorised", "FAMILIES", "register", "unregister", "sigma_families",
           "family_syntax", "sigma_examples", "parse_sigma"]
