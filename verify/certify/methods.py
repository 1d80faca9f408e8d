"""Certificate methods: one registered object per way of certifying a regime for every T.

A method knows when it applies (a predicate on the regime), how to build its certificate, which ``kind`` its
certificates carry (``as_dict()["kind"]``), its evidence records for Theorem 3.1's rates, whether it writes a
re-checkable file, and how it reads in the CLI and in the report. :func:`verify.certify.certify` builds with the
first method that applies (:func:`method_for`, in preference order); the CLI, the certify part, the evidence
records and the report ask :func:`method_of` for a built certificate's method. None of them names a method.

A method registers itself with :func:`certificate_method` in the module that builds it; every module of this
package with a line starting with ``@certificate_method`` is imported on first use of the registry (a text search,
so nothing else is imported to find them). The built-in ones: the closed forms at K = 0 and K = D
(verify.certify.closed_form) and the slow-manifold certificate for 0 < K < D (verify.certify.slow_manifold).
CONTRIBUTING.md ("Add a certificate method") has the recipe.
"""
from __future__ import annotations

import importlib
import re
from typing import ClassVar

from ..errors import InvalidParameter
from ..run.parts import modules_with

_DECORATOR = re.compile(r"^@certificate_method\b", re.MULTILINE)
METHODS: dict[str, "Method"] = {}
_discovered = False


class Method:
    """One way of certifying a regime for every T (module docstring). Subclasses set :attr:`name`, :attr:`kinds`
    and implement :meth:`applies` and :meth:`build`; the rest has defaults."""

    name: ClassVar[str] = ""
    kinds: ClassVar[tuple[str, ...]] = ()   # the ``kind`` of the certificates it builds
    order: ClassVar[int] = 50               # preference: the first method that applies (smallest order) builds
    rechecks: ClassVar[bool] = False        # its certificates have a file the independent re-checker reads
    status: ClassVar[str] = "certified"     # how a sweep's certificate column calls a built certificate

    def applies(self, setting) -> bool:
        """Whether this method certifies ``setting`` (a regime check_certifiable accepted)."""
        raise NotImplementedError

    def build(self, setting, knobs: dict, *, u0=None, C=None, T0=None, region_boxes=None):
        """The certificate of ``setting`` (raises CertificateFailed naming the failed obligation)."""
        raise NotImplementedError

    def file(self, cert, Ts) -> dict:
        """The certificate's file for ``--save`` (verify.certify.files)."""
        raise InvalidParameter("save", cert.kind, "applies to certificates with a re-checkable file ("
                               + ", ".join(k for m in methods() if m.rechecks for k in m.kinds)
                               + f"): a {self.name} certificate is printed by --json")

    def describe(self, d: dict) -> list[str]:
        """The lines `verify certify` prints about a certificate (``d``: its as_dict()) after its statement."""
        return []

    def note(self, d: dict) -> str | None:
        """One line the report prints for a certificate beside the main regime (``d``: its as_dict())."""
        return None

    def report_lines(self, res: dict) -> list[str]:
        """Markdown lines on the main certificate of a saved certify part (verify.certify.certify_part.report_section)."""
        return []

    def records(self, setting, cert, scope, replay: str) -> list[dict]:
        """Evidence records for Theorem 3.1's T-rates from the built ``cert`` (verify.certify.certificate_records)."""
        raise NotImplementedError


def certificate_method(cls: type[Method]) -> type[Method]:
    """Class decorator: register the method ``cls.name`` (an instance of ``cls``)."""
    if not isinstance(cls.name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*", cls.name):
        raise TypeError(f"{cls.__qualname__}.name must be a lower-case name such as 'closed-form', not {cls.name!r}")
    if not cls.kinds:
        raise TypeError(f"{cls.__qualname__}.kinds must name the kind of the certificates it builds")
    old = METHODS.get(cls.name)
    if old is not None and type(old).__qualname__ != cls.__qualname__:
        raise TypeError(f"the certificate method {cls.name!r} is already registered by {type(old).__module__}")
    taken = {k: m.name for m in METHODS.values() if m.name != cls.name for k in m.kinds}
    if any(k in taken for k in cls.kinds):
        raise TypeError(f"{cls.__qualname__}: certificate kind(s) {[k for k in cls.kinds if k in taken]} belong to "
                        "another method")
    METHODS[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Forget the method ``name`` (a test's clean-up after registering its own)."""
    METHODS.pop(name, None)


def method_modules() -> list[str]:
    """Dotted names of this package's modules that register a method (a text search of their sources)."""
    return modules_with(_DECORATOR, (__package__.replace(".", "/"),))


def methods() -> list[Method]:
    """Every registered method, in preference order (the package's own modules imported on first use)."""
    global _discovered
    if not _discovered:
        for mod in method_modules():
            importlib.import_module(mod)
        _discovered = True
    return sorted(METHODS.values(), key=lambda m: (m.order, m.name))


def method_for(setting) -> Method:
    """The first method, in preference order, that applies to ``setting``."""
    for m in methods():
        if m.applies(setting):
            return m
    raise InvalidParameter("K", setting.K, "no certificate method applies to this regime (methods: "
                           + ", ".join(m.name for m in methods()) + ")")


def method_of(cert) -> Method:
    """The method that built ``cert`` (a certificate, or its as_dict()), by its kind."""
    kind = cert.get("kind") if isinstance(cert, dict) else getattr(cert, "kind", None)
    for m in methods():
        if kind in m.kinds:
            return m
    raise ValueError(f"no certificate method builds certificates of kind {kind!r}")


__all__ = ["Method", "METHODS", "certificate_method", "unregister", "methods", "method_for", "method_of",
           "method_modules"]
