"""The solver: which members of the family meet a set of claims and conditions, decided exactly.

Every claimed exponent gives one linear equation in the members' exponents (derived = claimed), every
condition of verify.reconcile.constraints one linear inequality, so the solution set is a polyhedron in
an affine subspace:

* the equations alone: ``sympy.linsolve`` gives the affine subspace (a point and a basis of its directions,
  parametrised by the free members, named t_<member>), or nothing;
* with the inequalities: z3 decides feasibility over the rationals (QF_LRA, a complete decision procedure),
  and the answer is checked by a second route: a witness is substituted exactly into every row, and an
  empty set is backed by a Farkas certificate found by SymPy's exact simplex (``linprog``) and checked by
  exact arithmetic. For equations A x = b and inequalities C x <= d, a certificate is (y, z >= 0) with
  A^T y + C^T z = 0 and b.y + d.z < 0: summing y_i (row i) + z_j (row j) gives 0 <= b.y + d.z < 0.

A statement that no member meets the claims is made only with a verified certificate.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
import z3

from .scaling_family import BY_NAME, CARRIERS, MEMBERS, TEXT, coefficients, exponent_table

UNKNOWNS = CARRIERS          # the column order of every matrix here (the solver solves for the earliest)


@dataclass(frozen=True)
class Equation:
    """derived exponent = claimed exponent, for one quantity and one variable (both affine forms)."""

    quantity: str
    variable: str
    derived: sp.Expr
    claimed: sp.Expr

    @property
    def form(self) -> sp.Expr:
        """``form == 0``."""
        return sp.expand(self.derived - self.claimed)

    def text(self) -> str:
        return (f"{TEXT[self.quantity]}, exponent of {self.variable}: derived {sp.sstr(self.derived)} "
                f"= claimed {sp.sstr(self.claimed)}")


@dataclass(frozen=True)
class Row:
    """One row ``a . x (= or <=) b`` of the system, with the words it stands for."""

    coefficients: tuple
    bound: sp.Rational
    text: str


def row_of(form: sp.Expr, text: str) -> Row:
    """``form (= or <=) 0`` as a row over :data:`UNKNOWNS`."""
    coef, const = coefficients(form)
    return Row(tuple(coef[n] for n in UNKNOWNS), -const, text)


def equations(claims: dict, quantities) -> list[Equation]:
    """One equation per claimed (quantity, variable) for the quantities in ``quantities``."""
    table = exponent_table()
    return [Equation(q, v, table[q][v], claims[q].exponent(v))
            for q in quantities if q in claims for v in claims[q].stated]


def _value(row: Row, point: dict) -> sp.Rational:
    return sum((c * point[n] for c, n in zip(row.coefficients, UNKNOWNS)), sp.Integer(0))


@dataclass(frozen=True)
class Affine:
    """The solution set of the equations: ``point + sum_k t_k directions[k]``; ``general`` in the t's."""

    point: dict
    directions: tuple
    parameters: tuple
    general: dict


def affine_solution(eqs: list[Row]) -> Affine | None:
    """sympy.linsolve of the equations over :data:`UNKNOWNS` (None when there is no solution)."""
    xs = [BY_NAME[n].x for n in UNKNOWNS]
    A = sp.Matrix([list(r.coefficients) for r in eqs]) if eqs else sp.zeros(0, len(xs))
    b = sp.Matrix([r.bound for r in eqs]) if eqs else sp.zeros(0, 1)
    sol = sp.linsolve((A, b), xs) if eqs else sp.FiniteSet(tuple(xs))
    if sol == sp.S.EmptySet:
        return None
    (vec,) = tuple(sol)
    free = [xi for xi in xs if any(xi in e.free_symbols for e in vec)]
    params = {xi: sp.Symbol("t_" + str(xi)[2:], real=True) for xi in free}
    general = {n: sp.expand(e.subs(params)) for n, e in zip(UNKNOWNS, vec)}
    zero = {t: 0 for t in params.values()}
    point = {n: e.subs(zero) for n, e in general.items()}
    dirs = tuple({n: sp.diff(e, t) for n, e in general.items()} for t in params.values())
    return Affine(point, dirs, tuple(str(t) for t in params.values()), general)


@dataclass(frozen=True)
class Certificate:
    """Farkas multipliers: ``y`` (one per equation) and ``z >= 0`` (one per inequality)."""

    y: tuple
    z: tuple

    def check(self, eqs: list[Row], ineqs: list[Row]) -> bool:
        """Exact check: A^T y + C^T z = 0, z >= 0 and b.y + d.z < 0."""
        rows = list(eqs) + list(ineqs)
        mult = list(self.y) + list(self.z)
        combo = [sum((m * r.coefficients[k] for m, r in zip(mult, rows)), sp.Integer(0)) for k in range(len(UNKNOWNS))]
        value = sum((m * r.bound for m, r in zip(mult, rows)), sp.Integer(0))
        return bool(all(c == 0 for c in combo) and all(zj >= 0 for zj in self.z) and value < 0)

    def as_dict(self, eqs: list[Row], ineqs: list[Row]) -> dict:
        terms = [(m, r, "=") for m, r in zip(self.y, eqs)] + [(m, r, "<=") for m, r in zip(self.z, ineqs)]
        used = [(m, r, op) for m, r, op in terms if m != 0]
        value = sum((m * r.bound for m, r, _ in used), sp.Integer(0))
        return {"multipliers": [{"multiplier": sp.sstr(m), "row": r.text, "relation": op} for m, r, op in used],
                "sum": f"0 {'<=' if any(op == '<=' for _, _, op in used) else '='} {sp.sstr(value)}",
                "reads": "the rows summed with these multipliers cancel every exponent and leave "
                         f"0 {'<=' if any(op == '<=' for _, _, op in used) else '='} {sp.sstr(value)} < 0: "
                         "no member of the family satisfies them all",
                "checked": self.check(eqs, ineqs)}


def _z3_rows(variables: list, eqs: list[Row], ineqs: list[Row]) -> list:
    """The rows as z3 constraints over ``variables`` (one per unknown), coefficients as exact rationals."""

    def lhs(r: Row):
        return z3.Sum([z3.RealVal(str(c)) * v for c, v in zip(r.coefficients, variables)] + [z3.RealVal(0)])
    return [lhs(r) == z3.RealVal(str(r.bound)) for r in eqs] + [lhs(r) <= z3.RealVal(str(r.bound)) for r in ineqs]


def _model_values(model, variables: list) -> list:
    """Exact rationals of ``variables`` in a z3 model (unconstrained ones completed as 0)."""
    out = []
    for v in variables:
        f = model.eval(v, model_completion=True).as_fraction()
        out.append(sp.Rational(f.numerator, f.denominator))
    return out


def z3_feasible(eqs: list[Row], ineqs: list[Row]) -> tuple[bool | None, dict | None]:
    """(feasible, witness {member: Rational}) decided by z3 over the rationals; (None, None) when z3 gives up."""
    xs = [z3.Real(f"x_{n}") for n in UNKNOWNS]
    s = z3.Solver()
    s.add(*_z3_rows(xs, eqs, ineqs))
    res = s.check()
    if res == z3.unsat:
        return False, None
    if res != z3.sat:
        return None, None
    return True, dict(zip(UNKNOWNS, _model_values(s.model(), xs)))


def farkas(eqs: list[Row], ineqs: list[Row]) -> Certificate | None:
    """A Farkas certificate that the rows are infeasible, or None when there is none (the rows are feasible).

    The dual system A^T y + C^T z = 0, z >= 0, b.y + d.z = -1 is solved by z3 over the rationals (by Farkas'
    lemma it has a solution exactly when the rows have none); the multipliers are checked by exact
    arithmetic, independently of the solver, before they are returned."""
    ys = [z3.Real(f"y_{i}") for i in range(len(eqs))]
    zs = [z3.Real(f"z_{j}") for j in range(len(ineqs))]
    rows, mult = list(eqs) + list(ineqs), ys + zs
    if not rows:
        return None
    s = z3.Solver()
    for k in range(len(UNKNOWNS)):
        s.add(z3.Sum([z3.RealVal(str(r.coefficients[k])) * m for r, m in zip(rows, mult)]) == 0)
    s.add(z3.Sum([z3.RealVal(str(r.bound)) * m for r, m in zip(rows, mult)]) == -1, *[z >= 0 for z in zs])
    if s.check() != z3.sat:
        return None
    vals = _model_values(s.model(), mult)
    cert = Certificate(tuple(vals[:len(eqs)]), tuple(vals[len(eqs):]))
    if not cert.check(eqs, ineqs):
        raise AssertionError("z3 returned multipliers that are not a Farkas certificate")
    return cert


def satisfies(point: dict, eqs: list[Row], ineqs: list[Row]) -> bool:
    """Whether ``point`` meets every row exactly."""
    return bool(all(_value(r, point) == r.bound for r in eqs) and all(_value(r, point) <= r.bound for r in ineqs))


def representative(eqs: list[Row], ineqs: list[Row]) -> dict | None:
    """The solution nearest the reference convention (every exponent 0), or None when there is none.

    Nearest: least sum over members of weight x |exponent| (the power of D the member puts on the
    recursion's combinations; beta and lambda enter squared); ties broken by moving the members early in
    :data:`UNKNOWNS` first. Both are exact linear objectives, minimised lexicographically by z3's optimiser."""
    xs = [z3.Real(f"x_{n}") for n in UNKNOWNS]
    ss = [z3.Real(f"s_{n}") for n in UNKNOWNS]
    opt = z3.Optimize()
    opt.set(priority="lex")
    opt.add(*_z3_rows(xs, eqs, ineqs), *[s_ >= x_ for s_, x_ in zip(ss, xs)], *[s_ >= -x_ for s_, x_ in zip(ss, xs)])
    opt.minimize(z3.Sum([BY_NAME[n].weight * s_ for n, s_ in zip(UNKNOWNS, ss)]))
    opt.minimize(z3.Sum([(k + 1) * s_ for k, s_ in enumerate(ss)]))
    if opt.check() != z3.sat:
        return None
    point = dict(zip(UNKNOWNS, _model_values(opt.model(), xs)))
    if not satisfies(point, eqs, ineqs):
        raise AssertionError("the representative does not satisfy the system")
    return point


def exponents_json(values: dict) -> dict:
    """{member: {"exponent": "1"}} in the family's order (never a bare "N = 1")."""
    return {m.name: {"exponent": sp.sstr(sp.sympify(values[m.name]))} for m in MEMBERS}


def exponents_text(values: dict) -> str:
    """"N ∝ D^1, ‖V*‖_F² ∝ D^2, ..., η_KQ ∝ η D^-3"."""
    return ", ".join(m.text(sp.sympify(values[m.name])) for m in MEMBERS)


__all__ = ["UNKNOWNS", "Equation", "Row", "row_of", "equations", "Affine", "affine_solution", "Certificate",
           "farkas", "z3_feasible", "satisfies", "representative", "exponents_json", "exponents_text"]
