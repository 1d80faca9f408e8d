"""verify.model.precision.arb_precision: the one Arb precision context sets flint's ctx.prec for its block and
restores the old value on exit, also on an exception, and leaves mpmath's precision alone (read directly from
flint.ctx and mpmath.mp, not through the module)."""
from __future__ import annotations

import re
from pathlib import Path

import mpmath
import pytest
from flint import arb, ctx

from verify.model.precision import arb_precision


def test_sets_flint_precision_inside_and_restores_it_after():
    before, mp_before = ctx.prec, mpmath.mp.prec
    with arb_precision(200):
        assert ctx.prec == 200
        assert mpmath.mp.prec == mp_before            # mpmath's precision is not this context's
        third = arb(1) / 3
    assert ctx.prec == before and mpmath.mp.prec == mp_before
    # computed at 200 bits: the ball's radius is about 2^-200/3, far below a 53-bit ball's 2^-54
    assert 0 < third.rad() < arb(2) ** -190


def test_restores_on_an_exception_and_when_nested():
    before = ctx.prec
    with pytest.raises(ZeroDivisionError):
        with arb_precision(300):
            with arb_precision(64):
                assert ctx.prec == 64
            assert ctx.prec == 300
            raise ZeroDivisionError
    assert ctx.prec == before


@pytest.mark.parametrize("bad", [1, 0, -5, 2.5, "128", None])
def test_bad_bits_is_a_one_line_error_naming_the_parameter(bad):
    before = ctx.prec
    with pytest.raises(ValueError, match=r"^arb_precision: bits must be an integer >= 2"):
        with arb_precision(bad):
            pass
    assert ctx.prec == before


def test_no_other_module_of_the_toolkit_assigns_flints_precision():
    """One home: verify/ and lemmas/ set flint's ctx.prec only through arb_precision (recheck/ sets its own: it
    imports nothing of verify). A hand-written save/restore elsewhere is what this context replaced."""
    root = Path(__file__).resolve().parents[1]
    assign = re.compile(r"\bctx\.prec\s*=(?!=)")
    found = [f"{p.relative_to(root)}:{n}" for pkg in ("verify", "lemmas") for p in sorted((root / pkg).rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if assign.search(line) and p != root / "verify" / "model" / "precision.py"]
    assert found == []
    assert assign.search("    old, ctx.prec = ctx.prec, 53") and not assign.search("ctx.prec == 53")   # the pattern
