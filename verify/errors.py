"""The toolkit's exceptions: one root, one type for every invalid input, one for numerical trouble.

Messages name parameters by their API names (``eta``, ``p_structure``); a message may refer to
another option as ```name=value``` (backticks), which :func:`refer` renders as ``name=value`` here
and the command line (verify.cli.options) renders as the flag the user types (``--p-structure
general``). Values are shown as written: a rational as ``1/2``, never ``Fraction(1, 2)``.
"""
from __future__ import annotations

import difflib
import re
from fractions import Fraction

# ```name``` or ```name=value``` inside a message: a reference to another option.
REFERENCE = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(?:=([^`]*))?`")


def show(value) -> str:
    """A value as a user would write it: rationals as p/q, lists in brackets, strings bare."""
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={show(v)}" for k, v in value.items())
    return str(value)


def refer(text: str, label=None) -> str:
    """Render the ```name=value``` references of ``text`` with ``label(name, value)`` (default ``name=value``)."""
    label = label or (lambda name, value: name if value is None else f"{name}={value}")
    return REFERENCE.sub(lambda m: label(m.group(1), m.group(2)), text)


class VerificationError(Exception):
    """Root of every error the toolkit raises on purpose.

    A message may refer to options as ```name=value```: ``str(exc)`` shows ``name=value`` and
    ``exc.template`` keeps the references for an interface to render (the CLI shows its flags).
    """

    def __init__(self, *args):
        if len(args) == 1 and isinstance(args[0], str):
            self.template = args[0]
            args = (refer(args[0]),)
        super().__init__(*args)


class InvalidParameter(VerificationError, ValueError):
    """A parameter is outside its valid range; the message names it, echoes it and says the range.

    ``also`` names the other options a cross-field rule involves (so an interface can show what the
    user set them to). Several problems found together are one :class:`InvalidParameter` whose
    ``problems`` lists them (see :meth:`combine`); a single problem's ``problems`` is ``[self]``.
    """

    def __init__(self, name: str, value, valid: str, hint: str = "", also: tuple = ()):
        self.name, self.value, self.valid, self.hint, self.also = name, value, valid, hint, tuple(also)
        self.problems = [self]
        super().__init__(self.describe())

    def describe(self) -> str:
        """The message with API names: ``invalid eta = 0: must be > 0``."""
        msg = f"invalid {self.name} = {show(self.value)}: {refer(self.valid)}"
        return msg + (f" ({refer(self.hint)})" if self.hint else "")

    @classmethod
    def combine(cls, problems: list["InvalidParameter"]) -> "InvalidParameter":
        """One exception reporting every problem (the first one's name, all the messages)."""
        flat = [q for p in problems for q in p.problems]
        if len(flat) == 1:
            return flat[0]
        first = flat[0]
        out = cls(first.name, first.value, first.valid, first.hint, first.also)
        out.problems = flat
        out.args = (f"{len(flat)} problems: " + "; ".join(p.describe() for p in flat),)
        return out


class PrecisionError(VerificationError):
    """The chosen arithmetic cannot carry the requested horizon or digits."""


class NumericalTrouble(PrecisionError, FloatingPointError):
    """A float64 run left the representable range: overflow, NaN or division by zero.

    Says at which ``step``, for which ``quantity``, and what to try instead (``advice``, which may
    refer to options as ```name=value```). It is a PrecisionError (float64 cannot carry this run)
    and a FloatingPointError, so code that treats either as "cannot evaluate here in float64" still does.
    """

    def __init__(self, step: int, quantity: str, what: str, advice: str):
        self.step, self.quantity, self.what, self.advice = step, quantity, what, advice
        super().__init__(f"numerical trouble at step {step}: {quantity} {what}; {advice}")


class UnsupportedRegime(VerificationError):
    """A combination of options the derivation cannot treat exactly (the message says why)."""


class OutputError(VerificationError):
    """An output could not be written where it was asked for (a full disk, a place that became read-only),
    although the place was checked before the work began. Says which file, why, and where what had been
    computed was kept instead (``kept``), so nothing computed is lost."""

    def __init__(self, path, reason: str, kept: str):
        self.path, self.reason, self.kept = str(path), reason, kept
        super().__init__(f"could not write {path} ({reason}); {kept}")


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C after it cleaned up; the message says what was kept and how to resume.

    A KeyboardInterrupt (so code that stops on one still does), not a VerificationError."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


def suggest(value: str, choices) -> str:
    """" (did you mean X?)" for the closest choice, or ""."""
    best = difflib.get_close_matches(str(value), list(choices), n=1, cutoff=0.6) or [
        c for c in choices if c.lower() == str(value).lower()]
    return f" (did you mean {best[0]}?)" if best else ""


