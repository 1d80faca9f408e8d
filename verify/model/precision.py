"""The one home of the toolkit's working precisions: :func:`arb_precision` (Arb, in bits), the context every
certified computation runs in, and :func:`mpmath_precision` (mpmath, in decimal digits).

:func:`arb_precision` sets python-flint's global ``flint.ctx.prec`` (bits) for the enclosed code and restores the old
value on exit, also when the enclosed code raises. It does not touch mpmath's ``mpmath.mp.prec``, nor
:func:`mpmath_precision` flint's: the two libraries keep separate precisions, and the Arb code run in the one does not
depend on the other. mpmath's digits are chosen where mpmath arithmetic is used (verify.engines.arith: the requested
digits plus guard digits for the horizon). Kept at the model layer, below the engines and the certificates that use
them.
"""
from __future__ import annotations

import contextlib
import operator

from flint import ctx


def _at_least(where: str, name: str, value, low: int) -> int:
    """``value`` as an int >= ``low``, else a one-line ValueError naming the context and the parameter."""
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{where}: {name} must be an integer >= {low}, got {value!r}") from None
    if value < low:
        raise ValueError(f"{where}: {name} must be an integer >= {low}, got {value}")
    return value


@contextlib.contextmanager
def arb_precision(bits: int):
    """Run the enclosed Arb code at ``bits`` bits of working precision (flint's ``ctx.prec``), restoring the old
    precision on exit, even on an exception."""
    bits = _at_least("arb_precision", "bits", bits, 2)
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def mpmath_precision(dps: int):
    """Run the enclosed mpmath code at ``dps`` decimal digits (mpmath's own context ``mpmath.workdps``: it restores
    the old precision on exit, even on an exception)."""
    import mpmath  # heavy: mpmath
    return mpmath.workdps(_at_least("mpmath_precision", "dps", dps, 1))


__all__ = ["arb_precision", "mpmath_precision"]
