"""SymPy expressions and formulas as Coq terms over R (Coq's real numbers, Reals library).

A printer class in SymPy's sense: :class:`CoqPrinter` subclasses ``sympy.printing.str.StrPrinter`` and overrides
the methods SymPy dispatches to by expression class, so the text of a term is a pure function of the expression.
Numbers are exact (an Integer is a real literal, a Rational p/q is ``(p / q)``); a power with a natural exponent
is ``x ^ n`` (Coq's ``pow : R -> nat -> R``), with a negative one ``/ x ^ n``; e^delta never appears as ``exp``
in the obligations exported here (it is a positive real E), but ``exp``, ``ln``, ``sqrt`` and ``Rabs`` print as
Coq's functions for the interval goals. A float is refused: every number of a theorem must be exact.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

# Names a bound variable must not take in a theorem (Coq's types and functions the statements use).
RESERVED = frozenset({"R", "N", "Z", "Q", "nat", "exp", "ln", "sqrt", "pow", "Rabs", "Rmin", "Rmax", "PI", "IZR",
                      "Type", "Prop", "Set", "fun", "forall", "exists", "match", "with", "end", "let", "in", "if",
                      "then", "else", "as", "return", "at", "fix", "cofix", "struct", "where", "Proof", "Qed"})


def coq_name(name: str) -> str:
    """A SymPy symbol's name as a Coq identifier: letters, digits and _ kept, others _, a reserved word gets _."""
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not out or out[0].isdigit():
        out = "v_" + out
    return out + "_" if out in RESERVED else out


class CoqPrinter(StrPrinter):
    """Coq text of SymPy terms over R and of SymPy booleans as Props."""

    printmethod = "_coq"

    def _print_Symbol(self, expr):
        return coq_name(expr.name)

    _print_Dummy = _print_Symbol

    def _print_Integer(self, expr):
        return str(expr.p) if expr.p >= 0 else f"({expr.p})"

    def _print_Rational(self, expr):
        return f"({expr.p} / {expr.q})" if expr.p >= 0 else f"(({expr.p}) / {expr.q})"

    def _print_Half(self, expr):
        return "(1 / 2)"

    def _print_Zero(self, expr):
        return "0"

    def _print_One(self, expr):
        return "1"

    def _print_NegativeOne(self, expr):
        return "(-1)"

    def _print_Float(self, expr):
        raise ValueError(f"a Coq theorem takes exact numbers only, not the float {expr}")

    def _print_Pow(self, expr, rational=False):
        b, e = expr.base, expr.exp
        base = self.parenthesize(b, PRECEDENCE["Pow"] + 1)
        if e.is_Integer and e >= 0:
            return f"{base} ^ {int(e)}"
        if e.is_Integer:
            return f"/ {base} ^ {-int(e)}" if e != -1 else f"/ {base}"
        if e == sp.Rational(1, 2):
            return f"sqrt ({self._print(b)})"
        if e == sp.Rational(-1, 2):
            return f"/ sqrt ({self._print(b)})"
        return f"Rpower ({self._print(b)}) ({self._print(e)})"

    def _print_Mul(self, expr):
        # StrPrinter writes numerators and denominators itself, but through _print_Pow for x**-n would give "/ x":
        # build a/b from SymPy's own split instead.
        num, den = sp.fraction(expr, exact=True)
        if den == 1:
            return super()._print_Mul(expr)
        n = self.parenthesize(num, precedence(expr)) if num != 1 else "1"
        return f"{n} / {self.parenthesize(den, PRECEDENCE['Mul'] + 1)}"

    def _print_exp(self, expr):
        return f"exp ({self._print(expr.args[0])})"

    def _print_log(self, expr):
        return f"ln ({self._print(expr.args[0])})"

    def _print_Abs(self, expr):
        return f"Rabs ({self._print(expr.args[0])})"

    def _print_Min(self, expr):
        return self._fold("Rmin", expr.args)

    def _print_Max(self, expr):
        return self._fold("Rmax", expr.args)

    def _fold(self, f, args):
        out = self._print(args[0])
        for a in args[1:]:
            out = f"{f} ({out}) ({self._print(a)})"
        return out

    _RELATIONS = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

    def _print_Relational(self, expr):
        return f"{self._print(expr.lhs)} {self._RELATIONS[expr.rel_op]} {self._print(expr.rhs)}"

    def _print_And(self, expr):
        return " /\\ ".join(f"({self._print(a)})" for a in expr.args)

    def _print_Or(self, expr):
        return " \\/ ".join(f"({self._print(a)})" for a in expr.args)

    def _print_Not(self, expr):
        return f"~ ({self._print(expr.args[0])})"

    def _print_BooleanTrue(self, expr):
        return "True"

    def _print_BooleanFalse(self, expr):
        return "False"


def coq(expr) -> str:
    """Coq text of a SymPy term or formula."""
    return CoqPrinter({"order": "none"}).doprint(expr)


__all__ = ["CoqPrinter", "coq", "coq_name", "RESERVED"]
