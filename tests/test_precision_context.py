"""verify.model.precision, the one home of the working precisions: arb_precision sets flint's ctx.prec for its block
and restores the old value on exit, also on an exception, and leaves mpmath's precision alone; mpmath_precision does
the same for mpmath's digits and leaves flint's alone (read directly from flint.ctx and mpmath.mp, not through the
module); no other module of verify/ or lemmas/ sets either."""
from __future__ import annotations

import re
from pathlib import Path

import mpmath
import pytest
from flint import arb, ctx

from verify.model.precision import arb_precision, mpmath_precision


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


def test_mpmath_precision_sets_mpmaths_digits_inside_and_restores_them_after_and_on_an_exception():
    before, flint_before = mpmath.mp.dps, ctx.prec
    with mpmath_precision(50):
        assert mpmath.mp.dps == 50 and ctx.prec == flint_before       # flint's precision is not this context's
        third = mpmath.mpf(1) / 3
    assert mpmath.mp.dps == before and ctx.prec == flint_before
    # computed at 50 digits: 1/3 to within 10^-49, far closer than a 15-digit float's 10^-17
    with mpmath.workdps(100):
        assert abs(third - mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -49
    with pytest.raises(ZeroDivisionError):
        with mpmath_precision(80):
            raise ZeroDivisionError
    assert mpmath.mp.dps == before


@pytest.mark.parametrize("bad", [0, -3, 2.5, "30", None])
def test_bad_digits_is_a_one_line_error_naming_the_parameter(bad):
    before = mpmath.mp.dps
    with pytest.raises(ValueError, match=r"^mpmath_precision: dps must be an integer >= 1, got"):
        with mpmath_precision(bad):
            pass
    assert mpmath.mp.dps == before


# What sets a library's precision in a line of source: the pattern, lines it must match, lines it must not.
SETTERS = {
    "flint": (re.compile(r"\bctx\.prec\s*=(?!=)"), ["    old, ctx.prec = ctx.prec, 53"], ["ctx.prec == 53"]),
    "mpmath": (re.compile(r"\b(?:workdps|workprec|extradps|extraprec)\(|\bmp\.(?:dps|prec)\s*=(?!=)"),
               ["with mpmath.workdps(30):", "mpmath.mp.dps = 50"], ["mpmath.mp.dps == 50", "mpmath_precision(30)"]),
}


@pytest.mark.parametrize("library", SETTERS)
def test_no_other_module_of_the_toolkit_sets_a_librarys_precision(library):
    """One home: verify/ and lemmas/ set flint's ctx.prec only through arb_precision and mpmath's digits only through
    mpmath_precision (recheck/ sets its own: it imports nothing of verify). A hand-written save/restore elsewhere is
    what these contexts replaced."""
    sets, hits, misses = SETTERS[library]
    assert all(sets.search(t) for t in hits) and not any(sets.search(t) for t in misses)      # the pattern
    root = Path(__file__).resolve().parents[1]
    found = [f"{p.relative_to(root)}:{n}" for pkg in ("verify", "lemmas") for p in sorted((root / pkg).rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if sets.search(line) and p != root / "verify" / "model" / "precision.py"]
    assert found == []
