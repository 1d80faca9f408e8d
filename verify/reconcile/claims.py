"""The claimed orders the reconciliation solves for: Theorem 3.1's rates and T*, as SymPy expressions.

The rates are Theorem 3.1's Θ-terms as the paper states them, with their T-, η-, K- and
‖V*‖-dependence (verify.model.paper.theorem_3_1_orders, the one place they are written). T* is
stated only as "grows like D^2" (docs/paper.md); how much of the derived T*'s dependence on η and
‖V*‖ the paper's D^2 carries is not stated, so each reading is a :class:`Reading` and each is solved.

Under the family, ‖V*‖_F scales with D (member ``vstar2``), so a claim that names ‖V*‖ (the rate of
‖S − S*‖_F does) has a D-exponent that depends on the family: the claim's own ‖V*‖-dependence is
kept, never dropped. A claim names the variables it states; a variable it does not name is not
claimed (no equation), and the claim is read as free of it.

A claims file (``verify reconcile --claims FILE``) is {quantity: {variable: exponent}}, quantities
excess_loss, s_err, w_err, tstar, variables D, K, vnorm, eta, T (tstar: D, K, vnorm, eta).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..model.paper import theorem_3_1_orders, theorem_3_1_tstar_order
from ..model.symbols import D, K, T, eta, vnorm
from ..errors import InvalidParameter
from ..model.numbers import exact, load_json_exact
from .scaling_family import NU, QUANTITIES, TERMS, VARIABLES, d_exponent, exponent_in, variable_symbol

SYMBOLS = {"D": D, "K": K, "vnorm": vnorm, "eta": eta, "T": T}
TSTAR_VARIABLES = ("D", "K", "vnorm", "eta")


@dataclass(frozen=True)
class Claim:
    """One claimed order: ``expr`` in D, K, ‖V*‖_F (vnorm), η and T, and the variables it states."""

    quantity: str
    expr: sp.Expr
    stated: tuple

    def exponent(self, variable: str) -> sp.Expr:
        """The claimed exponent of ``variable``; for D, its affine form under the family."""
        return claimed_exponent(self.expr, variable)

    def as_dict(self) -> dict:
        return {"order": sp.sstr(self.expr), "stated": list(self.stated),
                "exponents": {v: sp.sstr(self.exponent(v).subs({s: 0 for s in self.exponent(v).free_symbols}))
                              for v in self.stated},
                "d_exponent_under_family": sp.sstr(self.exponent("D")) if "D" in self.stated else None}


@lru_cache(maxsize=None)
def claimed_exponent(expr: sp.Expr, variable: str) -> sp.Expr:
    """The exponent of ``variable`` in a claimed order; for D, its affine form under the family (the claim's
    own ‖V*‖-dependence moves with ‖V*‖_F ∝ D^(vstar2/2))."""
    if variable == "D":
        return d_exponent(expr)
    return exponent_in(expr.subs(vnorm, NU), variable_symbol(variable))


@dataclass(frozen=True)
class Reading:
    """One reading of "T* grows like D^2": its id, the words, the claimed order."""

    id: str
    text: str
    order: sp.Expr
    stated: tuple

    def claim(self) -> Claim:
        return Claim("tstar", self.order, self.stated)


TSTAR_READINGS = (
    Reading("as-stated", "T* ~ D² as stated (no η- or ‖V*‖-dependence named)", theorem_3_1_tstar_order(), ("D",)),
    Reading("with-eta-and-vnorm", "T* ~ D²/(η ‖V*‖_F²) (the derived T*'s own η- and ‖V*‖-dependence)",
            theorem_3_1_tstar_order() / (eta * vnorm**2), ("D", "vnorm", "eta")),
)


@lru_cache(maxsize=None)
def rate_claims() -> dict:
    """{quantity: Claim} for Theorem 3.1's three rates, every variable stated."""
    exprs = theorem_3_1_orders()
    return {q: Claim(q, exprs[q], VARIABLES) for q in QUANTITIES}


def default_claims(reading: Reading = TSTAR_READINGS[0]) -> dict:
    """The rates and T* under one reading: {quantity: Claim}."""
    return rate_claims() | {"tstar": reading.claim()}


def load_claims(path) -> dict:
    """Claims from a JSON file (module docstring); exponents such as 2, "5/2" or "-0.5"."""
    return parse_claims(load_json_exact(path, "claims"))


def parse_claims(raw) -> dict:
    """Validate a claims object into {quantity: Claim}; InvalidParameter naming the entry otherwise."""
    if not isinstance(raw, dict) or not raw:
        raise InvalidParameter("claims", type(raw).__name__ if not isinstance(raw, dict) else "{}",
                               "must be a JSON object {quantity: {variable: exponent}} with quantities in "
                               + ", ".join(TERMS))
    out = {}
    for q, row in raw.items():
        if q not in TERMS:
            raise InvalidParameter("claims", q, f"quantity must be one of {', '.join(TERMS)}")
        allowed = TSTAR_VARIABLES if q == "tstar" else VARIABLES
        if not isinstance(row, dict):
            raise InvalidParameter(f"claims.{q}", row, "must be an object {variable: exponent}, variables in "
                                   + ", ".join(allowed))
        expr = sp.Integer(1)
        for v, val in row.items():
            if v not in allowed:
                raise InvalidParameter(f"claims.{q}", v, f"variable must be one of {', '.join(allowed)}")
            if isinstance(val, (list, dict)) or val is None:
                raise InvalidParameter(f"claims.{q}.{v}", val, "must be a rational exponent such as 2, \"5/2\" or \"-0.5\"")
            e = exact(val, f"claims.{q}.{v}")
            expr *= SYMBOLS[v] ** sp.Rational(e.numerator, e.denominator)
        out[q] = Claim(q, expr, tuple(row))
    if not any(out.get(q) and out[q].stated for q in QUANTITIES):
        raise InvalidParameter("claims", sorted(out), "must claim at least one exponent of "
                               + ", ".join(QUANTITIES))
    return out


__all__ = ["Claim", "claimed_exponent", "Reading", "TSTAR_READINGS", "rate_claims", "default_claims", "load_claims", "parse_claims"]
