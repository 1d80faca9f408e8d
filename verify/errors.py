"""The toolkit's exceptions: one root, and one type for every invalid input."""


class VerificationError(Exception):
    """Root of every error the toolkit raises on purpose."""


class InvalidParameter(VerificationError, ValueError):
    """A parameter is outside its valid range; the message names it, echoes it and says the range."""

    def __init__(self, name: str, value, valid: str, hint: str = ""):
        self.name, self.value, self.valid = name, value, valid
        msg = f"invalid {name} = {value!r}: {valid}"
        if hint:
            msg += f" ({hint})"
        super().__init__(msg)


class PrecisionError(VerificationError):
    """The chosen arithmetic cannot carry the requested horizon or digits."""


class UnsupportedRegime(VerificationError):
    """A combination of options the derivation cannot treat exactly (the message says why)."""
