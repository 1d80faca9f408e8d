"""The float64 error boundary: overflow, NaN and division by zero in a float64 run become one
:class:`verify.errors.NumericalTrouble` that says at which step, for which quantity, and what to try.

Generated numpy code warns (RuntimeWarning) and carries on with inf / nan when it overflows; inside
:func:`float64_boundary` the same events raise at once (``np.errstate``, warnings as errors), and the
engine's loop tells the boundary where it is (:meth:`Boundary.at`) and checks that its state stays
finite (:meth:`Boundary.finite`). Underflow is not trouble (a tiny value rounding to 0 is harmless
here: attention weights, exp of a very negative logit gap).
"""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np

from ..errors import NumericalTrouble

TROUBLE = (FloatingPointError, OverflowError, ZeroDivisionError, RuntimeWarning)


def advice(setting, arithmetic: str = "float64") -> str:
    """What to try when a run of ``setting`` overflows: a smaller step size (with the derived W_X-block
    stability threshold 2K/(c_L v N), verify.derive.stability, exact for sigma = identity), and in
    float64 mpmath (which shows whether GD itself diverges)."""
    eta = f"a smaller `eta` (here eta = {_q(setting.eta_v)}"
    if setting.K > 0:
        from ..derive.stability import thresholds_at  # heavy: loads flint,mpmath,sympy
        th = thresholds_at(setting)["eta_alpha"]
        ident = setting.sigma.is_identity
        eta += (f"; GD on the W_X block is stable only for eta < 2K/(c_L v N) = {th}"
                + ("" if ident else " when sigma = identity, lower for this sigma as alpha grows"))
    tips = [eta + ")"]
    if arithmetic == "float64":
        tips.append("`arithmetic=mpmath` (no float64 overflow: it shows whether GD itself diverges)")
    return "try " + " or ".join(tips)


def _q(x) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _size(v) -> str:
    """max |v| of a number or a sequence / array of numbers (float or mpmath), as 3 digits."""
    import mpmath  # heavy: mpmath
    vals = list(np.ravel(np.asarray(v, dtype=object))) if isinstance(v, (list, tuple, np.ndarray)) else [v]
    if not vals:
        return "0"
    try:
        return mpmath.nstr(max(abs(mpmath.mpf(x)) for x in vals), 3)
    except (TypeError, ValueError):
        return "?"


class Boundary:
    """Where an engine loop is (step and phase), for the error message; ``describe()`` (set by the
    loop) returns the state's named parts, reported as max |.| when trouble strikes."""

    def __init__(self, setting, engine: str, describe=None, arithmetic: str = "float64"):
        self.setting, self.engine, self.describe, self.arithmetic = setting, engine, describe, arithmetic
        self.step, self.phase = 0, "start"

    def at(self, step: int, phase: str) -> None:
        self.step, self.phase = step, phase

    def finite(self, step: int, **state) -> None:
        """Raise NumericalTrouble unless every number in ``state`` (name -> float or float array) is finite."""
        for name, v in state.items():
            if isinstance(v, float):
                ok = math.isfinite(v)
            elif isinstance(v, list):
                ok = all(map(math.isfinite, v))
            else:
                ok = bool(np.all(np.isfinite(np.asarray(v, dtype=float))))
            if not ok:
                nan = bool(np.any(np.isnan(np.asarray(v, dtype=float))))
                raise self.trouble(step, name, f"became {'NaN' if nan else 'infinite'} in float64")

    def trouble(self, step: int, quantity: str, what: str) -> NumericalTrouble:
        state = ""
        if self.describe is not None:
            try:
                parts = self.describe()
                state = " (state: " + ", ".join(f"max |{k}| = {_size(v)}" for k, v in parts.items()) + ")"
            except Exception:      # the description is a courtesy; the error must still be raised
                state = ""
        return NumericalTrouble(step, quantity, what + state, advice(self.setting, self.arithmetic))


@contextlib.contextmanager
def float64_boundary(setting, engine: str, float64: bool = True, describe=None):
    """Run an engine loop with its arithmetic's trouble turned into NumericalTrouble.

    float64: overflow / NaN / division by zero raise at once (np.errstate, RuntimeWarning as error);
    mpmath: an overflow of its exponent range (OverflowError) is reported the same way. Yields a
    :class:`Boundary` the loop keeps informed.
    """
    b = Boundary(setting, engine, describe, "float64" if float64 else "mpmath")
    try:
        if float64:
            with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"), \
                    warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                yield b
        else:
            yield b
    except NumericalTrouble:
        raise
    except TROUBLE as exc:
        what = (f"left the float64 range ({exc})" if float64 else
                f"left mpmath's exponent range ({exc}): GD diverges here")
        raise b.trouble(b.step, b.phase, what) from None
    except ValueError as exc:           # math.sqrt / math.log of a negative number (a float64 rounding artefact)
        if "math domain" not in str(exc):
            raise
        raise b.trouble(b.step, b.phase, f"left the domain of a float64 function ({exc})") from None
