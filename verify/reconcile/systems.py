"""The claim systems the reconciliation solves, each reported as its whole solution set.

For one set of claims (the rates, and T* under one reading) the systems are: the rates; the rates with
the conditions of verify.reconcile.constraints; the rates and T*; the rates, T* and the conditions.
Each is solved over the whole family (verify.reconcile.solve) and reported with its affine solution set
(point, basis directions, the exponent of every member in the free parameters), its T* exponent there,
where on it every other claim and condition holds, and either a witness meeting every row or a verified
certificate that none does.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .constraints import constraints
from .scaling_family import BY_NAME, COMBINATIONS, QUANTITIES, TERMS, exponent_table
from .solve import (UNKNOWNS, Affine, Certificate, affine_solution, equations, exponents_json, exponents_text,
                    farkas, representative, row_of, satisfies, z3_feasible)

REPRESENTATIVE_RULE = ("nearest the reference convention (every exponent 0): least sum of weight x |exponent| "
                       "(weight: the power of D one unit puts on the recursion's combinations, 2 for beta and "
                       f"lambda), ties broken by moving {', '.join(UNKNOWNS)} in that order first (two "
                       "lexicographic linear objectives, minimised exactly by z3)")


@dataclass(frozen=True)
class System:
    """One solved system: its rows, its solution set and how it was decided."""

    id: str
    text: str
    quantities: tuple
    eqs: tuple
    ineqs: tuple
    affine: Affine | None
    z3: bool | None
    witness: dict | None
    certificate: Certificate | None

    @property
    def feasible(self) -> bool | None:
        """True / False when z3 and the second route (witness or certificate) agree, else None."""
        second = self.witness is not None and satisfies(self.witness, self.eqs, self.ineqs)
        if self.z3 is True and second and self.certificate is None:
            return True
        if self.z3 is False and self.certificate is not None and self.certificate.check(self.eqs, self.ineqs):
            return False
        return None

    @property
    def status(self) -> str:
        """"empty", "unique" or "family": the equations' solution set (before the inequalities)."""
        if self.affine is None:
            return "empty"
        return "family" if self.affine.parameters else "unique"


def solve_system(sid: str, text: str, claims: dict, quantities, with_constraints: bool) -> System:
    """Build the rows of one system and decide it by both routes."""
    eqs = tuple(row_of(e.form, e.text()) for e in equations(claims, quantities))
    ineqs = tuple(row_of(c.form, c.text) for c in constraints()) if with_constraints else ()
    feas, wit = z3_feasible(list(eqs), list(ineqs))
    cert = farkas(list(eqs), list(ineqs))
    rep = representative(list(eqs), list(ineqs)) if feas else None
    return System(sid, text, tuple(quantities), eqs, ineqs, affine_solution(list(eqs)), feas, rep or wit, cert)


def systems_for(claims: dict, label: str, with_rates: bool = True) -> list[System]:
    """The rates and rates + conditions (``with_rates``), and (when T* is claimed) rates + T*, rates + T* +
    conditions."""
    rates = tuple(q for q in QUANTITIES if q in claims)
    out = []
    if with_rates:
        out += [solve_system("rates", "the claimed rates", claims, rates, False),
                solve_system("rates+conditions", "the claimed rates with every condition", claims, rates, True)]
    if "tstar" in claims:
        out += [solve_system("rates+tstar", f"the claimed rates and {label}", claims, (*rates, "tstar"), False),
                solve_system("rates+tstar+conditions", f"the claimed rates, {label} and every condition", claims,
                             (*rates, "tstar"), True)]
    return out


def _condition(value: sp.Expr, relation: str) -> str:
    """Where ``value (relation) 0`` holds on the parameters: "everywhere", "nowhere" or "where t_x <= -1"."""
    value = sp.expand(value)
    if value.is_number:
        ok = value == 0 if relation == "=" else value <= 0
        return "everywhere" if ok else "nowhere"
    ts = sorted(value.free_symbols, key=str)
    if len(ts) == 1:
        (t,) = ts
        c = sp.diff(value, t)
        bound = sp.nsimplify(-value.subs(t, 0) / c)
        op = "=" if relation == "=" else ("<=" if c > 0 else ">=")
        return f"where {t} {op} {sp.sstr(bound)}"
    return f"where {sp.sstr(value)} {relation} 0"


def _at(form: sp.Expr, values: dict) -> sp.Expr:
    return sp.expand(form.subs({BY_NAME[n].x: v for n, v in values.items()}))


def where_holds(affine: Affine, groups: dict) -> dict:
    """{group: condition} for every group of rows ({name: (eq rows, ineq rows)}) on the affine set."""
    out = {}
    for name, (eqs, ineqs) in groups.items():
        conds = []
        for r, rel in [(r, "=") for r in eqs] + [(r, "<=") for r in ineqs]:
            value = sum((c * affine.general[n] for c, n in zip(r.coefficients, UNKNOWNS)), sp.Integer(0)) - r.bound
            conds.append(_condition(value, rel))
        if all(c == "everywhere" for c in conds):
            out[name] = "everywhere"
        elif any(c == "nowhere" for c in conds):
            out[name] = "nowhere"
        else:
            out[name] = "where " + "; ".join(c[len("where "):] for c in conds if c != "everywhere")
    return out


def point_json(values: dict, claims: dict | None = None) -> dict:
    """A point (or the general element) of a solution set: every member, the combinations, every term's
    D-exponent, the T* exponent, and (with ``claims``) each claim's D-exponent there."""
    d_ex = {q: sp.sstr(_at(exponent_table()[q]["D"], values)) for q in TERMS}
    out = {"exponents": exponents_json(values), "text": exponents_text(values),
           "combinations": {c.reads: {"exponent": sp.sstr(_at(c.form, values))} for c in COMBINATIONS},
           "combinations_text": ", ".join(c.text(_at(c.form, values)) for c in COMBINATIONS),
           "d_exponents": d_ex, "tstar_exponent": d_ex["tstar"]}
    if claims is not None:
        out["claimed_d_exponents"] = {q: sp.sstr(_at(c.exponent("D"), values)) for q, c in claims.items()
                                      if "D" in c.stated}
    return out


def groups_of(claims: dict) -> dict:
    """The rows of every claim group and condition, for :func:`where_holds`."""
    eq = {e: row_of(e.form, e.text()) for e in equations(claims, TERMS)}
    out = {"rates": ([r for e, r in eq.items() if e.quantity in QUANTITIES], [])}
    if "tstar" in claims:
        out["tstar"] = ([r for e, r in eq.items() if e.quantity == "tstar"], [])
    for c in constraints():
        out[c.id] = ([], [row_of(c.form, c.text)])
    return out


def system_json(s: System, groups: dict) -> dict:
    """The whole solution set of one system, as saved and printed."""
    a = s.affine
    out = {"id": s.id, "text": s.text, "quantities": list(s.quantities),
           "equations": [r.text for r in s.eqs], "inequalities": [r.text for r in s.ineqs],
           "status": s.status, "feasible": s.feasible,
           "decided_by": {"linsolve": s.status, "z3": {True: "sat", False: "unsat", None: "unknown"}[s.z3],
                          "farkas_certificate": s.certificate is not None}}
    if a is not None:
        out |= {"dimension": len(a.parameters), "parameters": list(a.parameters),
                "point": exponents_json(a.point), "directions": [exponents_json(d) for d in a.directions],
                "general": point_json(a.general), "holds": where_holds(a, groups)}
    out["witness"] = point_json(s.witness) | {"rule": REPRESENTATIVE_RULE} if s.feasible else None
    out["certificate"] = None if s.certificate is None else s.certificate.as_dict(list(s.eqs), list(s.ineqs))
    return out


__all__ = ["REPRESENTATIVE_RULE", "System", "solve_system", "systems_for", "where_holds", "point_json",
           "groups_of", "system_json"]
