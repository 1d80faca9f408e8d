"""The one home of Arb's working precision: :func:`arb_precision`, the context every certified computation runs in.

It sets python-flint's global ``flint.ctx.prec`` (bits) for the enclosed code and restores the old value on exit,
also when the enclosed code raises. It does not touch mpmath's ``mpmath.mp.prec``: mpmath's precision is chosen in
decimal digits where mpmath arithmetic is used (``mpmath.workdps``, verify.engines.arith) and the Arb code run in
this context does not depend on it. Kept at the model layer, below the engines and the certificates that use it.
"""
from __future__ import annotations

import contextlib
import operator

from flint import ctx


@contextlib.contextmanager
def arb_precision(bits: int):
    """Run the enclosed Arb code at ``bits`` bits of working precision (flint's ``ctx.prec``), restoring the old
    precision on exit, even on an exception."""
    try:
        bits = operator.index(bits)
    except TypeError:
        raise ValueError(f"arb_precision: bits must be an integer >= 2, got {bits!r}") from None
    if bits < 2:
        raise ValueError(f"arb_precision: bits must be an integer >= 2, got {bits}")
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


__all__ = ["arb_precision"]
