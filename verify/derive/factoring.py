"""Factorisation with a reproducible cost: SymPy's multivariate ``factor`` (Wang's algorithm) draws its evaluation
points from SymPy's own generator, seeded from the OS at import, so the time it takes varies with the draw, from
seconds to more than ten minutes on the charts' terms (a clean clone's test worker stalled so). ``seeded_sympy``
fixes that generator for a block or a function and restores it after; ``factored`` is the charts' normal form."""
from __future__ import annotations

from contextlib import contextmanager

import sympy as sp
from sympy.core import random as sympy_random

SEED = 0


@contextmanager
def seeded_sympy():
    """SymPy's generators seeded with SEED inside the block (or the decorated function), restored after."""
    sr = sympy_random
    states = sr.rng.getstate(), sr._assumptions_rng.getstate()
    sr.seed(SEED)
    try:
        yield
    finally:
        sr.rng.setstate(states[0])
        sr._assumptions_rng.setstate(states[1])


def factored(e):
    """``e`` as one factored fraction (together, cancel, factor)."""
    return sp.factor(sp.cancel(sp.together(e)))
