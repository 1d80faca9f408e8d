"""The invariant parametrisation of the reduced map of sigma = identity: three numbers fix the trajectory.

For sigma = identity, a centred entry law, P^T P = lambda I and zero initialisation, the reduced map
(alpha, delta) -> (alpha', delta') (verify.derive.reduced_map; every row shares alpha) depends on the ten
parameters D, K, N, v, c_L, lambda, beta, eta_V, eta_KQ, ||V*||^2 only through

    r = (D - K)/K,      x = eta_V c_L v N / K,      y = eta_KQ c_L v lambda^2 beta^2 ||V*||^2 / K^2,

and the observables are fixed prefactors times functions of (r; alpha, delta):

    L - L_opt = (c_L v N ||V*||^2 / K) F_L(r; alpha, delta),   ||S - S*||_F = sqrt(N/K) F_S(r; delta),
    ||W_X - V*||_F = ||V*||_F |alpha - 1|.

Derivation (:func:`scaling_symmetries`): a scaling p_i -> s^(a_i) p_i of the parameters leaves the map
unchanged for every s iff sum_i a_i p_i df/dp_i = 0 for both components f; SymPy solves that linear
system for a (at generic rational points, then checked as an identity), and the invariants are the
monomials p^b with b orthogonal to every symmetry (a basis of that lattice: D/K, eta_V c_L v N/K and
eta_KQ c_L v lambda^2 beta^2 ||V*||^2/K^2; r = D/K - 1). Proof (:func:`invariant_obligations`): after
substituting D = K(1 + r), eta_V = x K/(c_L v N), eta_KQ = y K^2/(c_L v lambda^2 beta^2 ||V*||^2) the map
has no other free symbol, and the observables divided by their prefactors have none either. So two
regimes with equal (r, x, y) have the same (alpha(t), support mass(t)) for every t (induction on t from
the common start (0, 0)), which is what lets one certificate cover a whole family of regimes.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..evidence import Scope
from ..model.sigmas.identity import Identity
from ..model.symbols import D, K, N, alpha, beta, c_loss, delta, eta_kq, eta_v, lam, values_at, var, vn
from ..run.cache import by_code_version
from .obligations import Obligation, stopwatch, sympy_obligation
from .reduced_map import column_quantities, reduced, reduced_step_exprs

r, x, y = sp.symbols("r x y", positive=True)
V2 = sp.Symbol("V2", positive=True)                   # ||V*||_F^2 (the rows' vn summed: every row shares alpha)
PARAMETERS = (D, K, N, var, c_loss, eta_v, eta_kq, lam, beta, V2)
INVARIANTS = (r, x, y)
# The monomials orthogonal to the symmetries (:func:`scaling_symmetries`), and the invariants written in them.
MONOMIALS = {r: D / K, x: eta_v * c_loss * var * N / K, y: eta_kq * c_loss * var * lam**2 * beta**2 * V2 / K**2}
DEFINITIONS = {r: MONOMIALS[r] - 1, x: MONOMIALS[x], y: MONOMIALS[y]}
SUBSTITUTION = {D: K * (1 + r), eta_v: x * K / (c_loss * var * N),
                eta_kq: y * K**2 / (c_loss * var * lam**2 * beta**2 * V2)}
PREFACTORS = {"excess_loss": c_loss * var * N * V2 / K, "s_err": sp.sqrt(N / K), "w_err": sp.sqrt(V2)}
SCOPE = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all")


def step_map() -> tuple:
    """(alpha', delta increment) of the reduced map of sigma = identity (0 < K < D), with vn = ||V*||^2."""
    a_next, inc = reduced_step_exprs(Identity(), "interior")
    return a_next, inc.subs(vn, V2)


def observables() -> dict:
    """L - L_opt, ||S - S*||_F^2 and ||W_X - V*||_F^2 in (alpha, delta) (one row carrying ||V*||^2)."""
    red = reduced(Identity(), "interior")
    return {"excess_loss": red.r.subs(vn, V2), "s_err": N * column_quantities("interior")["s_err2"],
            "w_err": V2 * (alpha - 1) ** 2}


def _generic_point(rng: random.Random) -> dict:
    return {p: sp.Rational(rng.randint(2, 40), rng.randint(1, 7)) for p in PARAMETERS} | {
        alpha: sp.Rational(rng.randint(1, 30), 17), delta: sp.Rational(rng.randint(-20, 20), 9)}


@lru_cache(maxsize=None)
def scaling_symmetries() -> tuple:
    """A basis of the exponent vectors a (over PARAMETERS) with sum_i a_i p_i df/dp_i = 0 for both components
    f of the map. The map is rational in E = e^delta, so each row of the linear system is that condition at one
    rational point (D > K kept), exact; the null space is SymPy's, scaled to coprime integers. The candidates are
    then checked as identities (:func:`invariant_map`)."""
    rng = random.Random(20260601)
    E = sp.Symbol("E", positive=True)
    grads = [[(p * sp.diff(f, p)).subs(delta, sp.log(E)) for p in PARAMETERS] for f in step_map()]
    rows = []
    while len(rows) < 3 * len(PARAMETERS):
        pt = _generic_point(rng)
        if pt[D] > pt[K]:
            at = {k: v for k, v in pt.items() if k != delta} | {E: sp.Rational(rng.randint(2, 50), 7)}
            rows += [[gi.subs(at) for gi in g] for g in grads]
    return tuple(tuple(int(c) for c in (v / _content(v))) for v in sp.Matrix(rows).nullspace())


def _content(v) -> sp.Rational:
    """The rational by which an exact vector is divided to give coprime integers."""
    nums = [sp.Rational(c) for c in v if c != 0]
    den = sp.ilcm(*[q.q for q in nums]) if nums else 1
    ints = [int(q * den) for q in nums]
    return sp.Rational(sp.igcd(*ints), den) if ints else sp.Integer(1)


@dataclass(frozen=True)
class InvariantMap:
    """The reduced map and observables in (r, x, y), and the proof obligations that they are exactly so."""

    a_next: sp.Expr          # alpha' in (alpha, delta; r, x)
    inc: sp.Expr             # delta' - delta in (alpha, delta; r, y)
    excess_loss: sp.Expr     # F_L in (alpha, delta; r)
    s_err2: sp.Expr          # F_S^2 in (delta; r)
    obligations: tuple


@lru_cache(maxsize=None)
@by_code_version("invariant-map")
def invariant_map() -> InvariantMap:
    """The invariant form of the map and its obligations (module docstring; cached by code version)."""
    a_next, inc = step_map()
    obs = observables()
    ob = _rows_obligations() + [_symmetry_obligation()]
    out = {}
    for name, e, allowed in (("a_next", a_next, {alpha, delta, r, x}), ("inc", inc, {alpha, delta, r, y}),
                             ("excess_loss", obs["excess_loss"] / PREFACTORS["excess_loss"], {alpha, delta, r}),
                             ("s_err2", obs["s_err"] / PREFACTORS["s_err"] ** 2, {delta, r})):
        with stopwatch() as t:
            f = sp.factor(sp.cancel(sp.together(e.subs(SUBSTITUTION))))
            free = f.free_symbols
        out[name] = f
        ob.append(Obligation(f"{_TEXT[name]} depends only on {sorted(map(str, allowed))} after D = K(1 + r), "
                             "eta_V = x K/(c_L v N), eta_KQ = y K^2/(c_L v lambda^2 beta^2 ||V*||^2)",
                             free <= allowed, f"free symbols {sorted(map(str, free))}", "sympy identity", SCOPE,
                             seconds=t(), key=f"{_KEY[name]}-invariant"))
        if name in ("a_next", "inc"):
            # The substitution is invertible (r, x, y <-> D, eta_V, eta_KQ at fixed K, N, ...), so the invariant
            # form is the map itself: substituting back gives the original expression exactly.
            back = sp.cancel(sp.together(f.subs({r: DEFINITIONS[r], x: DEFINITIONS[x], y: DEFINITIONS[y]}) - e))
            ob.append(Obligation(f"{_TEXT[name]}: the invariant form, with r, x, y written back in the parameters, is "
                                 "the generated map", back == 0, "difference simplifies to 0" if back == 0 else
                                 f"difference {sp.sstr(back)[:200]}", "sympy identity", SCOPE,
                                 key=f"{_KEY[name]}-written-back"))
    return InvariantMap(out["a_next"], out["inc"], out["excess_loss"], out["s_err2"], tuple(ob))


_KEY = {"a_next": "alpha-map", "inc": "increment", "excess_loss": "loss", "s_err2": "s-err"}
_TEXT = {"a_next": "alpha' (the W_X block of the reduced map)", "inc": "delta' - delta (the logit block)",
         "excess_loss": "(L - L_opt) K/(c_L v N ||V*||^2)", "s_err2": "||S - S*||_F^2 K/N"}


def _rows_obligations() -> list[Obligation]:
    """Why one row carrying ||V*||^2 stands for all M rows: from alpha_m(0) = 0 they share alpha (the alpha-map
    does not see vn_m), and the delta-increment and the excess loss are sums of terms linear in vn_m."""
    a_next, inc = reduced_step_exprs(Identity(), "interior")
    r_row = reduced(Identity(), "interior").r
    return [sympy_obligation("d alpha_m'/d vn_m = 0: the alpha-map does not depend on ||v*_m||^2, so from "
                             "alpha_m(0) = 0 every row has the same alpha_m(t) (induction on t)", sp.diff(a_next, vn),
                             SCOPE, key="rows-share-alpha"),
            sympy_obligation("inc_m = vn_m d inc_m/d vn_m: with equal alpha_m, delta' - delta = sum_m inc_m = "
                             "inc(vn = ||V*||_F^2)", inc - vn * sp.diff(inc, vn), SCOPE, key="increment-linear-in-vn"),
            sympy_obligation("r_m = vn_m d r_m/d vn_m: L - L_opt = sum_m r_m = r(vn = ||V*||_F^2)",
                             r_row - vn * sp.diff(r_row, vn), SCOPE, key="loss-linear-in-vn")]


def _symmetry_obligation() -> Obligation:
    """The derived symmetries, and that the three invariant monomials are exactly the ones orthogonal to them."""
    with stopwatch() as t:
        syms = scaling_symmetries()
        exact = all(sp.cancel(sp.together(sum(a_i * p * sp.diff(f, p) for a_i, p in zip(a, PARAMETERS)))) == 0
                    for a in syms for f in step_map())
        mono = [sp.Matrix([MONOMIALS[i].as_powers_dict().get(p, 0) for p in PARAMETERS]) for i in INVARIANTS]
        orth = all((m.T * sp.Matrix(a))[0] == 0 for m in mono for a in syms)
        rank = sp.Matrix.hstack(*[sp.Matrix(a) for a in syms], *mono).rank() if syms else 0
    ok = exact and orth and len(syms) + len(mono) == len(PARAMETERS) and rank == len(PARAMETERS)
    return Obligation(f"the map's scaling symmetries (a basis of {len(syms)} exponent vectors over D, K, N, v, c_L, "
                      "eta_V, eta_KQ, lambda, beta, ||V*||^2) leave exactly three invariant monomials: D/K, "
                      "eta_V c_L v N/K, eta_KQ c_L v lambda^2 beta^2 ||V*||^2/K^2", ok,
                      f"symmetries {list(syms)} (each an identity sum_i a_i p_i df/dp_i = 0: {exact}); the monomials "
                      f"are orthogonal to them: {orth}; together they span "
                      f"the {len(PARAMETERS)} exponents: {rank == len(PARAMETERS)}", "sympy identity", SCOPE,
                      seconds=t(), key="scaling-symmetries")


def _values(s) -> dict:
    return values_at(s) | {V2: sp.Rational(s.vstar_norm2().numerator, s.vstar_norm2().denominator)}


def _fraction(e) -> Fraction:
    e = sp.Rational(e)
    return Fraction(int(e.p), int(e.q))


def parameter_values(s) -> tuple:
    """A setting's exact values of PARAMETERS (Fractions), with V2 = ||V*||_F^2."""
    vals = _values(s)
    return tuple(_fraction(vals[p]) for p in PARAMETERS)


def invariants_of(s) -> tuple[Fraction, Fraction, Fraction]:
    """(r, x, y) of a setting, exactly (DEFINITIONS at its values)."""
    vals = _values(s)
    return tuple(_fraction(DEFINITIONS[i].subs(vals)) for i in INVARIANTS)


def prefactors_of(s) -> dict:
    """The prefactors at a setting, exactly: pre_L (rational) as "excess_loss", and the squares pre_S^2, pre_W^2
    (rationals; their prefactors are roots) as "s_err2", "w_err2"."""
    vals = _values(s)
    return {"excess_loss": _fraction(PREFACTORS["excess_loss"].subs(vals)),
            "s_err2": _fraction((PREFACTORS["s_err"] ** 2).subs(vals)),
            "w_err2": _fraction((PREFACTORS["w_err"] ** 2).subs(vals))}


__all__ = ["INVARIANTS", "PARAMETERS", "parameter_values", "InvariantMap", "PREFACTORS", "invariant_map", "invariants_of", "prefactors_of",
           "scaling_symmetries", "r", "x", "y", "V2"]
