"""An independent re-checker of saved certificates: ``python -m recheck FILE``.

It imports nothing from ``verify``: only python-flint (Arb balls, exact rational polynomials) and the
standard library (and dask.distributed, imported directly, when asked to spread a family's cells over
``--workers N`` processes), so that a certificate does not rest on the program that found it. It reads the JSON
written by ``verify certify ... --save FILE`` (one regime) or ``--family ... --save FILE`` (a family of
regimes) and re-verifies, step by step:

  model           the file's reduced map and observables in the parameters are, exactly, the gradient step of the
                  model stated here (model_map: the per-column loss of sigma = identity in (alpha, delta))
  regime          the regime block (a family: its options and ranges) is in that model's scope and gives the stated
                  parameters by the model's rules (regime_parameters, family_ties)
  parameters      the invariants (r, x, y) and the prefactors from the regime's parameters, by the formulas given;
                  a family cell's parameter box holds its box's members (the ties at its corners)
  map-identities  the slow-manifold coordinates are the reduced map in other variables: exact identities of
                  rational functions (flint's fmpq_mpoly), including that the map in (r, x, y) is the map in
                  the original parameters, and that every stated derivative is the derivative
  prefix          the reduced map iterated from (0, 0) for T0 steps in Arb (mean-value form; for a family cell a
                  first-order Taylor model in the invariants), and its end ball inside the stated one
  prefix-in-region the end ball lies in R = {0 < u <= u0, |eps| <= C}, so z(T0) = 1/u^2 lies in the stated range
  a family cell enters R so (entry "taylor"), or so on the pieces of a bisection tree of its box replayed here
  (entry "split", verify.certify.prefix_split: every leaf's end in the stated hull, the hull in R, a dropped piece
  off the stated kappa, which tube-kappa checks; entry "monotone": the same tree replayed with CappedPrefix, whose
  box of states is intersected with a monotone enclosure recomputed here, verify.certify.prefix_monotone), or
  through a tube (entry "tube"; verify.certify.tube):
  tube-linearity  alpha' - alpha = x A^(alpha, E; s), delta' - delta = y D^(alpha, E; s) (exact), so a member's
                  step is x times the increments at x = 1, y = kappa = y/x
  tube-kappa      the stated kappa range holds y/x at the cell's corners (a monomial: checked exactly), in the
                  ranged names when the spec gives the parameters as formulas of them ("spec.parameters", each
                  inside the cell's parameter box), else over the parameter box
  tube-start      the first step from (0, 0) lies in the alpha graph's slabs 0..n-2
  tube-invariance every leaf of every stated quadtree of both graphs maps into the tube (the clock advances by more
                  than 0 and less than the next slab; the image lies between the fences, mean-value form)
  tube-handover   the alpha graph's last slab lies in the delta graph, the delta graph's last slab in R
  tube-time       T0 bounds the steps spent in the slabs (widths over least advances), and z(T0) lies in the
                  stated range (at least 1/u^2 on the delta graph's last slab; growth in R at most 2 c Q R^2)
  region-cover    the boxes cover [0, u0] x [-C, C]
  region-invariant on every box R = u/u' > 0, Q > 0 and |eps'| <= C (the exact map sends R into itself)
  shells          each shell's enclosures contain the hull over the boxes meeting it (a family cell's slab hulls,
                  stored as doubles, contain the hulls of its boxes); the comparison lemma's inequalities: entry
                  z_lo(t_j) >= 1/u_j^2, a_j > 0, b_j u_j^2 < 1, the lower ends, the chaining
  bounds          every stated bound contains what this checker computes at its T (prefix or lemma)
  limits          the stated limit constants contain the last shell's

It exits 0 when every step passes, and 1 naming the first step whose stated numbers are tighter than it can
verify (2: bad usage). The functions another file kind's re-check reuses: model_map (the model's reduced map as
exact rational functions), check_model (a file's map against it), regime_parameters and family_ties (the
parameters of a regime block or of a family's options), check_formulas, check_cell and check_query_cell (what a
query of a family file re-checks before it answers).

What it trusts is listed in the file under "trusts" (the reduction of full GD to the 2-dimensional map,
proved symbolically in verify.derive.reduction_proof; the comparison lemma's generic inequalities, decided by two SMT
solvers; exprel increasing); it prints them.

Formulas are parsed by a small recursive-descent parser (numbers, names, + - * /, ^ with an integer exponent,
exp, log, sqrt; no ``eval`` of the file's text) and evaluated over exact rational functions, or over Arb balls by
Python code generated from the parsed trees alone (compile_arb; the toolkit evaluates its formulas with it too). The partial
derivatives the mean-value forms use are formulas of the file too; each is first checked to be the exact
derivative of its formula (flint differentiates the rational functions), so the numbers here are computed the
way ``verify`` computed them and the stated ones can be compared up to rounding.
"""
from __future__ import annotations

import base64
import bisect
import itertools
import json
import logging
import math
import re
import struct
import sys
import zlib
from fractions import Fraction

from flint import arb, ctx, fmpq, fmpq_mpoly_ctx

VERSION = 2             # the file format this checker reads (verify.certify.files)

# ---------------------------------------------------------------------------------------------------------------
# formulas
# ---------------------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\^|\*\*|[-+*/()]))")
FUNCTIONS = ("exp", "log", "sqrt")


class CheckFailed(Exception):
    """A step of the re-check failed: ``step`` names it."""

    def __init__(self, step: str, detail: str):
        self.step, self.detail = step, detail
        super().__init__(f"{step}: {detail}")

    def __reduce__(self):                   # as it was raised, from a Dask worker too
        return CheckFailed, (self.step, self.detail)


def tokens(text: str) -> list:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CheckFailed("format", f"cannot read formula {text[:60]!r} at {text[pos:pos + 20]!r}")
        num, name, op = m.groups()
        out.append(("num", int(num)) if num else ("name", name) if name else ("op", "^" if op == "**" else op))
        pos = m.end()
    return out


def parse(text: str):
    """The syntax tree of a formula: ("num", n), ("var", name), ("neg", a), (op, a, b), ("pow", a, n), (f, a)."""
    toks, i = tokens(text), 0

    def peek():
        return toks[i] if i < len(toks) else ("end", None)

    def take(kind=None, value=None):
        nonlocal i
        t = peek()
        if (kind and t[0] != kind) or (value and t[1] != value):
            raise CheckFailed("format", f"formula {text[:60]!r}: expected {value or kind}, found {t[1]!r}")
        i += 1
        return t

    def expr():
        node = term()
        while peek() in (("op", "+"), ("op", "-")):
            node = (take()[1], node, term())
        return node

    def term():
        node = unary()
        while peek() in (("op", "*"), ("op", "/")):
            node = (take()[1], node, unary())
        return node

    def unary():
        if peek() == ("op", "-"):
            take()
            return ("neg", unary())
        if peek() == ("op", "+"):
            take()
            return unary()
        return power()

    def power():
        base = atom()
        if peek() == ("op", "^"):
            take()
            n = constant(unary())
            if n.denominator != 1:
                raise CheckFailed("format", f"formula {text[:60]!r}: the exponent {n} is not an integer")
            return ("pow", base, int(n))
        return base

    def atom():
        t = take()
        if t[0] == "num":
            return ("num", t[1])
        if t[0] == "name":
            if peek() == ("op", "("):
                if t[1] not in FUNCTIONS:
                    raise CheckFailed("format", f"unknown function {t[1]!r} (only {', '.join(FUNCTIONS)})")
                take("op", "(")
                node = (t[1], expr())
                take("op", ")")
                return node
            return ("var", t[1])
        if t == ("op", "("):
            node = expr()
            take("op", ")")
            return node
        raise CheckFailed("format", f"formula {text[:60]!r}: unexpected {t[1]!r}")

    node = expr()
    if peek()[0] != "end":
        raise CheckFailed("format", f"formula {text[:60]!r}: unexpected {peek()[1]!r}")
    return node


def constant(node) -> Fraction:
    """The value of a tree made of numbers only (an exponent)."""
    kind = node[0]
    if kind == "num":
        return Fraction(node[1])
    if kind == "neg":
        return -constant(node[1])
    if kind in "+-*/":
        a, b = constant(node[1]), constant(node[2])
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[kind]
    raise CheckFailed("format", "an exponent must be a constant integer")


def evaluate(node, env: dict, alg):
    """The value of a tree over an algebra ``alg`` (its ``num``, ``power`` and functions); env: name -> value."""
    kind = node[0]
    if kind == "num":
        return alg.num(node[1])
    if kind == "var":
        if node[1] not in env:
            raise CheckFailed("format", f"formula uses {node[1]!r}, which is not given here")
        return env[node[1]]
    if kind == "neg":
        return -evaluate(node[1], env, alg)
    if kind == "pow":
        return alg.power(evaluate(node[1], env, alg), node[2])
    if kind in FUNCTIONS:
        return getattr(alg, kind)(evaluate(node[1], env, alg))
    a, b = evaluate(node[1], env, alg), evaluate(node[2], env, alg)
    return a + b if kind == "+" else a - b if kind == "-" else a * b if kind == "*" else a / b


# ---------------------------------------------------------------------------------------------------------------
# algebras: Arb balls, dual numbers of Arb balls, exact rational functions
# ---------------------------------------------------------------------------------------------------------------
def ball(q) -> arb:
    q = Fraction(q)
    return arb(fmpq(q.numerator, q.denominator))


def interval(lo, hi) -> arb:
    lo, hi = Fraction(lo), Fraction(hi)
    return ball(lo) if lo == hi else ball(lo).union(ball(hi))


def lower(x: arb) -> Fraction:
    """An exact rational <= every point of x."""
    m, e = x.lower().mid().man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def upper(x: arb) -> Fraction:
    m, e = x.upper().mid().man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def _point_power(p: arb, n: int) -> arb:
    out, base = arb(1), p
    while n:
        if n & 1:
            out = out * base
        n >>= 1
        if n:
            base = base * base
    return out


def tight_power(x: arb, n: int) -> arb:
    """{t^n : t in x}: Arb's power of a ball around 0 is not finite, so even and odd powers are taken from the
    end points."""
    if n < 0:
        return 1 / tight_power(x, -n)
    if n == 0:
        return arb(1)
    if n == 1:
        return x
    if not x.contains(0):
        return x * x if n == 2 else x * x * x if n == 3 else x ** n
    a, b = _point_power(x.lower(), n), _point_power(x.upper(), n)
    return arb(0).union(a).union(b) if n % 2 == 0 else a.union(b)


class Arb:
    """Arb balls."""

    num = staticmethod(lambda n: arb(n))
    power = staticmethod(tight_power)
    exp = staticmethod(lambda x: x.exp())
    log = staticmethod(lambda x: x.log())
    sqrt = staticmethod(lambda x: x.sqrt())


class RF:
    """An exact rational function num/den (flint fmpq_mpoly)."""

    __slots__ = ("n", "m")

    def __init__(self, n, m):
        self.n, self.m = n, m

    def _o(self, o):
        if isinstance(o, Fraction):
            o = fmpq(o.numerator, o.denominator)
        return o if isinstance(o, RF) else RF(self.n.context().constant(o), self.n.context().constant(1))

    def __add__(self, o):
        o = self._o(o)
        return RF(self.n * o.m + o.n * self.m, self.m * o.m)

    __radd__ = __add__

    def __sub__(self, o):
        o = self._o(o)
        return RF(self.n * o.m - o.n * self.m, self.m * o.m)

    def __rsub__(self, o):
        return self._o(o) - self

    def __neg__(self):
        return RF(-self.n, self.m)

    def __mul__(self, o):
        o = self._o(o)
        return RF(self.n * o.n, self.m * o.m)

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = self._o(o)
        if o.n == 0:
            raise CheckFailed("map-identities", "a formula divides by zero")
        return RF(self.n * o.m, self.m * o.n)

    def __rtruediv__(self, o):
        return self._o(o) / self

    def equals(self, o) -> bool:
        o = self._o(o)
        return self.n * o.m == o.n * self.m

    def derivative(self, var: str) -> "RF":
        """d/d var of num/den = (num' den - num den')/den^2, exactly."""
        return RF(self.n.derivative(var) * self.m - self.n * self.m.derivative(var), self.m * self.m)


class RFAlg:
    """Rational functions in a fixed set of variable names; exp, log and sqrt are not rational (an error)."""

    def __init__(self, names):
        self.ctx = fmpq_mpoly_ctx.get(tuple(names), "lex")
        self.gens = dict(zip(names, self.ctx.gens()))

    def var(self, name):
        return RF(self.gens[name], self.ctx.constant(1))

    def num(self, k):
        return RF(self.ctx.constant(k), self.ctx.constant(1))

    def power(self, x, n):
        if n < 0:
            return self.num(1) / self.power(x, -n)
        return RF(x.n ** n, x.m ** n)

    def _no(self, *_):
        raise CheckFailed("map-identities", "exp, log and sqrt cannot appear in a rational identity")

    exp = log = sqrt = _no


# ---------------------------------------------------------------------------------------------------------------
# the model, stated here (docs/setting.md), and the parameters of a regime or a family
# ---------------------------------------------------------------------------------------------------------------
# The certificate's formulas are checked against this statement, written without the toolkit: the reduced map the
# file iterates must be the gradient step of this loss, and the file's parameters those of its regime block or of
# its family's options. It covers sigma = identity, entries of mean 0 and variance v (any law: the loss sees the
# second moments only), noise 0, zero initialisation, P^T P = lambda I, distinct query positions and uniform S*
# weights 1/K on supports of size K; what the reduction to (alpha, delta) rests on is listed under "trusts".
MODEL_PARAMETERS = ("D", "K", "N", "v", "c_L", "eta_V", "eta_KQ", "lambda", "beta", "V2")
MAP_VARIABLES = ("alpha", "E") + MODEL_PARAMETERS


def model_map(alg: RFAlg | None = None) -> dict:
    """The reduced map and observables of the model, as exact rational functions of alpha, E = e^delta and
    MODEL_PARAMETERS, derived here from the per-column loss.

    With W_X = alpha V* and column j of S the softmax of logits delta on its support g_j (K entries) and 0 off it,
    S_j has K entries E/Z and D - K entries 1/Z (Z = K E + D - K). For i.i.d. entries of variance v,
    E||V* X w||^2 = v ||V*||_F^2 ||w||^2, so one column's loss (c_L/2) E||W_X X S_j - V* X S*_j||^2 is
    ell = (c_L/2) v V2 ||alpha S_j - S*_j||^2 and L = N ell. GD on W_X: the gradient is parallel to V*
    (dL/dW_X = (dL/dalpha) V*/V2), so alpha' = alpha - (eta_V/V2) dL/dalpha. GD on W_KQ: column j's logits move by
    -eta_KQ beta^2 lambda^2 dL/dl_j (P^T P = lambda I, distinct queries), the gradient in the logits sums to 0, and
    K of its entries share dell/d delta, so delta' - delta = -eta_KQ beta^2 lambda^2 D/(K (D - K)) dell/d delta,
    with d/d delta = E d/dE. ||S - S*||_F^2 = N ||S_j - S*_j||^2 and ||W_X - V*||_F^2 = V2 (alpha - 1)^2."""
    alg = alg or RFAlg(MAP_VARIABLES)
    a, E = alg.var("alpha"), alg.var("E")
    D, K, N, v, cL, eV, eKQ, lam, beta, V2 = (alg.var(n) for n in MODEL_PARAMETERS)
    sq = lambda t: alg.power(t, 2)  # noqa: E731
    Z = K * E + D - K
    on, off = E / Z, 1 / Z
    ell = cL / 2 * v * V2 * (K * sq(a * on - 1 / K) + (D - K) * sq(a * off))
    L = N * ell
    return {"alpha_next": a - eV / V2 * L.derivative("alpha"),
            "delta_increment": -eKQ * sq(beta) * sq(lam) * D / (K * (D - K)) * E * ell.derivative("E"),
            "loss": L, "s_err2": N * (K * sq(on - 1 / K) + (D - K) * sq(off)), "w_err2": V2 * sq(a - 1)}


def check_model(F: "Formulas") -> None:
    """The file's reduced map in the parameters (and with it, by map-identities, every other formula) is the
    model's (:func:`model_map`), and its prefactor of ||W_X - V*||^2 is V2: exact identities of rational
    functions."""
    alg = RFAlg(MAP_VARIABLES)
    env = {n: alg.var(n) for n in MAP_VARIABLES}
    model = model_map(alg)
    for name in ("alpha_next", "delta_increment", "loss", "s_err2"):
        if not F("reduced_map_parameters", name, env, alg).equals(model[name]):
            raise CheckFailed("model", f"reduced_map_parameters.{name} is not the model's (the gradient step of "
                              "the loss stated in this checker)")
    if not (F("prefactors", "w_err2", env, alg) * alg.power(env["alpha"] - 1, 2)).equals(model["w_err2"]):
        raise CheckFailed("model", "prefactors.w_err2 is not ||V*||_F^2")


# What the model needs of a regime (option: the value it must have); a regime or family naming another value, or
# an option this checker does not know, is refused (step "regime").
MODEL_OPTIONS = {"sigma": "identity", "law_mean": "0", "noise_sd": "0", "init": "zero", "init_scale": "0",
                 "p_structure": "orthogonal", "data": "gaussian", "sstar_weights": None}
FREE_OPTIONS = ("d", "M", "seed", "law", "law_var", "loss", "p_kind", "p_lambda", "beta", "relu_at_zero",
                "wp_trainable", "vstar_source", "data_note", "query", "eta", "eta_v", "eta_kq", "vstar_norm",
                "vstar_norm2", "vstar", "preset", "supports", "K", "N", "D")
PRESET_COLUMNS = {"sts": lambda D, K: [list(range(K))], "gslp": lambda D, K: [[0]],
                  "gcn": lambda D, K: [[(j + i) % D for i in range(K)] for j in range(D)],
                  "cnn": lambda D, K: [list(range(j * K, (j + 1) * K)) for j in range(D // K)]}


def _model_requirements(opts: dict, where: str) -> None:
    for k, v in opts.items():
        if k not in MODEL_OPTIONS and k not in FREE_OPTIONS:
            raise CheckFailed("regime", f"{where}: option {k!r} is not one this checker's model states")
    for k, want in MODEL_OPTIONS.items():
        got = opts.get(k, want)
        if (got is None) != (want is None) or (got is not None and str(got) != want and frac_or(got) != frac_or(want)):
            raise CheckFailed("regime", f"{where}: {k} = {got!r}, but the model stated here needs {k} = {want!r}")


def frac_or(text):
    """An exact rational if ``text`` reads as one, else the text."""
    try:
        return Fraction(str(text))
    except (ValueError, ZeroDivisionError):
        return str(text)


def regime_parameters(regime: dict) -> dict:
    """{parameter: exact value} of MODEL_PARAMETERS from a one-regime file's "regime" block (the toolkit's record of
    every option in force), read here by the model's rules: K and N from the supports (each of K distinct tokens in
    0..D-1), c_L = 1 (summed loss) or 1/(M N) (mean), v the entry variance, V2 = ||V*||_F^2 (of the explicit V*, or
    the norm squared)."""
    _model_requirements(regime, "regime")
    D, sup = int(regime["D"]), regime["supports"]
    if not (isinstance(sup, list) and sup and all(isinstance(g, list) for g in sup)):
        raise CheckFailed("regime", "regime: supports must be a list of index lists")
    K, N = len(sup[0]), len(sup)
    if any(len(g) != K or len(set(g)) != K or not all(type(i) is int and 0 <= i < D for i in g) for g in sup):
        raise CheckFailed("regime", f"regime: every support must hold K = {K} distinct tokens of 0..{D - 1}")
    if (int(regime["K"]), int(regime["N"])) != (K, N):
        raise CheckFailed("regime", f"regime: K = {regime['K']}, N = {regime['N']} stated, the supports give K = {K}, "
                          f"N = {N}")
    if regime.get("preset") is not None and PRESET_COLUMNS[regime["preset"]](D, K) != sup:
        raise CheckFailed("regime", f"regime: the supports are not the {regime['preset']} preset's at D = {D}, K = {K}")
    q = regime.get("query")
    if not (isinstance(q, list) and len(q) == N and len(set(q)) == N and all(type(i) is int and 0 <= i < D for i in q)):
        raise CheckFailed("regime", "regime: the query positions must be N distinct tokens")
    if regime.get("vstar") is not None:
        V2 = sum((frac(x) ** 2 for row in regime["vstar"] for x in row), Fraction(0))
    else:
        V2 = frac(regime["vstar_norm"]) ** 2
    if V2 != frac(regime["vstar_norm2"]):
        raise CheckFailed("regime", f"regime: vstar_norm2 = {regime['vstar_norm2']} is not ||V*||_F^2 = {V2}")
    loss = regime.get("loss", "sum")
    if loss not in ("sum", "mean"):
        raise CheckFailed("regime", f"regime: loss {loss!r} is neither sum nor mean")
    return {"D": Fraction(D), "K": Fraction(K), "N": Fraction(N), "v": frac(regime.get("law_var", "1")),
            "c_L": Fraction(1) if loss == "sum" else 1 / (int(regime["M"]) * Fraction(N)),
            "eta_V": frac(regime["eta_v"]), "eta_KQ": frac(regime["eta_kq"]),
            "lambda": frac(regime.get("p_lambda", "1")), "beta": frac(regime.get("beta", "1")), "V2": V2}


FAMILY_RANGED = ("D", "eta", "eta_kq", "vstar_norm")


def family_ties(spec: dict) -> dict:
    """{parameter: formula text in the family's ranged names} (MODEL_PARAMETERS), from its fixed options and the
    names it ranges over, by the model's rules and the toolkit's defaults (make_setting: eta_KQ = eta_V = eta unless
    eta_kq is given, v = law_var = 1, lambda = p_lambda = 1, beta = 1, summed loss, V2 = vstar_norm^2 with
    vstar_norm = 1 by default; N = 1 (sts, gslp), D (gcn), D/K (cnn))."""
    opts, ranged = dict(spec["options"]), set(spec["ranges"])
    if not ranged <= set(FAMILY_RANGED) or ranged & set(opts):
        raise CheckFailed("regime", f"family: ranges over {sorted(ranged)}; this checker reads ranges of "
                          f"{', '.join(FAMILY_RANGED)} not also fixed")
    _model_requirements(opts, "family")
    if opts.get("vstar") is not None or opts.get("supports") is not None or opts.get("N") is not None:
        raise CheckFailed("regime", "family: this checker reads families given by a preset, K and ||V*|| only")
    val = lambda n, default: f"({n})" if n in ranged else f"({frac_or(opts.get(n, default))})"  # noqa: E731
    preset, K = opts.get("preset"), opts.get("K", 1 if opts.get("preset") == "gslp" else None)
    if preset not in PRESET_COLUMNS or K is None or (preset == "gslp" and int(K) != 1):
        raise CheckFailed("regime", f"family: preset {preset!r} with K = {K!r} is not one this checker's model reads")
    D, Kt = val("D", None), f"({int(K)})"
    N = {"sts": "(1)", "gslp": "(1)", "gcn": D, "cnn": f"({D}/{Kt})"}[preset]
    eta = val("eta", "1/10")
    loss = opts.get("loss", "sum")
    if loss not in ("sum", "mean"):
        raise CheckFailed("regime", f"family: loss {loss!r} is neither sum nor mean")
    return {"D": D, "K": Kt, "N": N, "v": val("law_var", "1"),
            "c_L": "(1)" if loss == "sum" else f"(1/({int(opts.get('M', 1))}*{N}))", "eta_V": eta,
            "eta_KQ": val("eta_kq", None) if ("eta_kq" in ranged or opts.get("eta_kq") is not None) else eta,
            "lambda": val("p_lambda", "1"), "beta": val("beta", "1"), "V2": f"{val('vstar_norm', '1')}^2"}


def tie_values(ties: dict, values: dict) -> dict:
    """{parameter: exact value} of a member ``values`` (ranged name -> exact value) by the ties."""
    return {k: evaluate(parse(t), values, Frac) for k, t in ties.items()}


def check_ties(ties: dict, stated: dict | None, ranges: dict) -> None:
    """The file's own ties (spec "parameters"), when given, are the model's, as rational functions of the ranged
    names (a name whose range is one value taken at that value)."""
    if stated is None:
        return
    names = sorted({n for t in list(ties.values()) + list(stated.values()) for n in _names(parse(str(t)))})
    alg = RFAlg(names or ["D"])
    env = {n: alg.var(n) for n in names}
    for n, (lo, hi) in ranges.items():
        if n in env and frac(lo) == frac(hi):
            env[n] = alg.num(0) + frac(lo)
    for k in MODEL_PARAMETERS:
        if k not in stated or not evaluate(parse(str(stated[k])), env, alg).equals(evaluate(parse(ties[k]), env, alg)):
            raise CheckFailed("parameters", f"the spec's {k} = {stated.get(k)!r} is not the family's {ties[k]} (its "
                              "options by the model's rules)")


def _names(node) -> set:
    if node[0] == "var":
        return {node[1]}
    return set().union(*[_names(c) for c in node[1:] if isinstance(c, tuple)])


# ---------------------------------------------------------------------------------------------------------------
# the checker
# ---------------------------------------------------------------------------------------------------------------
def compile_arb(trees: list, names: list, power=None):
    """A Python function of the variables ``names`` returning the tuple of the trees' values over Arb balls,
    computed as :func:`evaluate` computes them over :class:`Arb` (the same operations in the same order, integer
    powers by :func:`tight_power`, or by ``power`` for another number type with +, -, *, /), each distinct subtree
    once (a subtree evaluated twice gives the same ball, so this changes the time only). The source is generated
    from the parsed trees alone: variables become positional arguments _a0, _a1, ..., numbers are integers, and the
    only calls are exp, log, sqrt and the power."""
    arg = {n: f"_a{i}" for i, n in enumerate(names)}
    seen, lines = {}, []

    def emit(node) -> str:
        if node[0] == "var":
            if node[1] not in arg:
                raise CheckFailed("format", f"formula uses {node[1]!r}, which is not given here")
            return arg[node[1]]
        if node in seen:
            return seen[node]
        kind = node[0]
        if kind == "num":
            expr = f"_arb({int(node[1])})"
        elif kind == "neg":
            expr = f"-{emit(node[1])}"
        elif kind == "pow":
            expr = f"_pow({emit(node[1])}, {int(node[2])})"
        elif kind in FUNCTIONS:
            expr = f"{emit(node[1])}.{kind}()"
        elif kind in ("+", "-", "*", "/"):
            expr = f"{emit(node[1])} {kind} {emit(node[2])}"
        else:
            raise CheckFailed("format", f"a formula node {kind!r}")
        seen[node] = f"_t{len(seen)}"
        lines.append(f"    {seen[node]} = {expr}")
        return seen[node]
    outs = [emit(t) for t in trees]
    src = f"def _formulas({', '.join(arg.values())}):\n" + "\n".join(lines) + f"\n    return ({', '.join(outs)},)\n"
    namespace = {"_arb": arb, "_pow": power or tight_power}
    exec(compile(src, "<certificate formulas>", "exec"), namespace)
    return namespace["_formulas"]


class Formulas:
    """The file's formulas, parsed once, evaluated over any algebra (over Arb balls by code compiled once per
    formula or group of formulas: :func:`compile_arb`)."""

    def __init__(self, spec: dict):
        self.trees, self.compiled = {}, {}
        for group, items in spec.items():
            if isinstance(items, dict) and group != "variables":
                for name, text in items.items():
                    if isinstance(text, str):
                        self.trees[(group, name)] = parse(text)

    def __call__(self, group, name, env, alg):
        if (group, name) not in self.trees:
            raise CheckFailed("format", f"the file gives no formula {group}.{name}")
        if alg is Arb:
            return self.arb(((group, name),), env)[0]
        return evaluate(self.trees[(group, name)], env, alg)

    def arb(self, keys: tuple, env: dict) -> tuple:
        """The Arb balls of the formulas ``keys`` ((group, name) pairs) at ``env``, by one compiled function."""
        got = self.compiled.get(keys)
        if got is None:
            missing = [k for k in keys if k not in self.trees]
            if missing:
                raise CheckFailed("format", f"the file gives no formula {missing[0][0]}.{missing[0][1]}")
            names = sorted(set().union(*(_names(self.trees[k]) for k in keys)))
            got = self.compiled[keys] = (compile_arb([self.trees[k] for k in keys], names), names)
        fn, names = got
        try:
            return fn(*[env[n] for n in names])
        except KeyError as exc:
            raise CheckFailed("format", f"formula uses {exc.args[0]!r}, which is not given here") from None


def frac(text) -> Fraction:
    try:
        return Fraction(str(text))
    except (ValueError, ZeroDivisionError):
        raise CheckFailed("format", f"{text!r} is not an exact rational") from None


def _text(params: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in params.items())


def check_parameters(cert: dict, F: Formulas) -> tuple:
    """(r, x, y) and the squared prefactors, recomputed from the regime's parameters; the stated ones must agree."""
    params = {k: frac(v) for k, v in cert["parameters"].items()}
    alg = RFAlg(sorted(params))
    got = {}
    for name in PARAM_NAMES:
        v = F("invariants", name, {k: alg.var(k) for k in params}, alg)
        got[name] = _rf_value(v, params)
    stated = {k: frac(v) for k, v in cert["invariants"].items()}
    if any(got[k] != stated[k] for k in got):
        raise CheckFailed("parameters", f"invariants stated {stated}, recomputed {got}")
    pre = {q: _rf_value(F("prefactors", q, {k: alg.var(k) for k in params}, alg), params)
           for q in ("excess_loss", "s_err2", "w_err2")}
    if any(pre[q] != frac(cert["prefactors"][q]) for q in pre):
        raise CheckFailed("parameters", f"prefactors stated {cert['prefactors']}, recomputed {pre}")
    return tuple(got[n] for n in PARAM_NAMES), pre


def _rf_value(v: RF, values: dict) -> Fraction:
    """A rational function at exact rational values of its variables."""
    names = v.n.context().names()
    pt = [fmpq(values[n].numerator, values[n].denominator) for n in names]
    num, den = v.n(*pt), v.m(*pt)
    return Fraction(int(num.p), int(num.q)) / Fraction(int(den.p), int(den.q))


IDENTITY_VARS = ("alpha", "E", "u", "epsilon", "w", "G", "X", "c", "s", "x", "y", "D", "K", "N", "v", "c_L",
                 "eta_V", "eta_KQ", "lambda", "beta", "V2")


def check_map_identities(F: Formulas) -> None:
    """The identities that make the slow-manifold coordinates the reduced map in other variables (module
    docstring), decided exactly over the rational functions."""
    alg = RFAlg(IDENTITY_VARS)
    v = {n: alg.var(n) for n in IDENTITY_VARS}
    co = lambda name, **env: F("coordinates", name, v | env, alg)  # noqa: E731
    mp = lambda name, **env: F("reduced_map", name, v | env, alg)  # noqa: E731
    u, eps = v["u"], v["epsilon"]
    E_u = co("E_of_u")
    a_star, rho, c = co("alpha_star"), co("rho"), co("c")
    al = a_star + eps * alg.power(u, 3)
    checks = {
        "u(E(u)) = u": (co("u_of_E", E=E_u), u),
        "alpha' = alpha* + rho (alpha - alpha*)": (v["alpha"] + mp("alpha_increment", E=E_u),
                                                   a_star + rho * (v["alpha"] - a_star)),
        "Delta(alpha* + eps u^3) = c u^2 G": (mp("delta_increment", E=E_u, alpha=al), c * u * u * co("G")),
        "u(E e^Delta) = u/R, e^Delta = 1 + c u^2 G X": (co("u_of_E", E=E_u * (1 + v["c"] * u * u * v["G"] * v["X"])),
                                                       u / co("R")),
        "(u - u/R)/u^3 = c Q": ((u - u / co("R")) / alg.power(u, 3), v["c"] * co("Q")),
        "eps' = (alpha' - alpha*(u'))/u'^3": (
            (a_star + rho * eps * alg.power(u, 3) - co("alpha_star", u=v["w"])) / alg.power(v["w"], 3),
            co("eps_next", Q=(u - v["w"]) / (v["c"] * alg.power(u, 3)), R=u / v["w"])),
        "L - L_opt = pre_L u^2 L2(0) Lt": (mp("loss", E=E_u, alpha=al), u * u * co("loss0") * co("loss_ratio")),
        "||S - S*||^2 = pre_S^2 (1 + r)/r u^2": (mp("s_err2", E=E_u), co("s_over_u2") * u * u),
        "alpha - 1 = u W": (al - 1, u * co("W")),
    }
    inv = {n: F("invariants", n, v, alg) for n in PARAM_NAMES}
    checks["alpha + alpha_increment in (s, x, y) is alpha_next in the parameters"] = (
        v["alpha"] + mp("alpha_increment", **inv), F("reduced_map_parameters", "alpha_next", v, alg))
    checks["delta_increment in (s, x, y) is delta_increment in the parameters"] = (
        mp("delta_increment", **inv), F("reduced_map_parameters", "delta_increment", v, alg))
    pre = {q: F("prefactors", q, v, alg) for q in ("excess_loss", "s_err2")}
    checks["pre_L times the loss in (r, x, y) is the loss in the parameters"] = (
        mp("loss", **inv) * pre["excess_loss"], F("reduced_map_parameters", "loss", v, alg))
    checks["pre_S^2 times s_err2 in (r, x, y) is s_err2 in the parameters"] = (
        mp("s_err2", **inv) * pre["s_err2"], F("reduced_map_parameters", "s_err2", v, alg))
    for what, (lhs, rhs) in checks.items():
        if not lhs.equals(rhs):
            raise CheckFailed("map-identities", f"{what} does not hold as an identity of rational functions")


def check_scaled_identities(F: Formulas) -> None:
    """The "scaled_coordinates" group (the lag in units of s: eps = s e, e' = eps'/s; regular at s = 0, so a region
    check may take s down to 0) is the reduced map in other variables, exactly: Delta(alpha* + s e u^3) = c u^2 G~,
    s e' = (alpha' - alpha*(u'))/u'^3 with Q = (u - u')/(c u^3), R = u/u' (c the chart's formula: e' reads c/s as
    (1 + s) y), the loss and alpha - 1 through Lt~ and W~, and the stated partials are derivatives. Call after
    :func:`check_map_identities` and :func:`check_model` (which tie the coordinates and the map to the model)."""
    alg = RFAlg(IDENTITY_VARS)
    v = {n: alg.var(n) for n in IDENTITY_VARS}
    co = lambda name, **env: F("coordinates", name, v | env, alg)  # noqa: E731
    sc = lambda name, **env: F("scaled_coordinates", name, v | env, alg)  # noqa: E731
    mp = lambda name, **env: F("reduced_map", name, v | env, alg)  # noqa: E731
    u, e, s, w = v["u"], v["epsilon"], v["s"], v["w"]
    E_u, a_star, rho, c = co("E_of_u"), co("alpha_star"), co("rho"), co("c")
    al = a_star + s * e * alg.power(u, 3)
    checks = {
        "Delta(alpha* + s e u^3) = c u^2 G~": (mp("delta_increment", E=E_u, alpha=al), c * u * u * sc("G")),
        "s e' = (alpha' - alpha*(u'))/u'^3": (
            (a_star + rho * s * e * alg.power(u, 3) - co("alpha_star", u=w)) / alg.power(w, 3),
            s * sc("eps_next", Q=(u - w) / (c * alg.power(u, 3)), R=u / w)),
        "L - L_opt = pre_L u^2 L2(0) Lt~": (mp("loss", E=E_u, alpha=al), u * u * co("loss0") * sc("loss_ratio")),
        "alpha - 1 = u W~": (al - 1, u * sc("W")),
    }
    for g in ("G", "loss_ratio", "W"):
        for var in ("u", "epsilon"):
            checks[f"{g}_{var} is the derivative of {g} in {var}"] = (sc(f"{g}_{var}"), sc(g).derivative(var))
    for what, (lhs, rhs) in checks.items():
        if not lhs.equals(rhs):
            raise CheckFailed("scaled-identities", f"scaled_coordinates: {what} does not hold as an identity of "
                              "rational functions")


class Frac:
    """Exact rationals (Python Fractions)."""

    num = staticmethod(Fraction)
    power = staticmethod(lambda x, n: x ** n)

    def _no(self, *_):
        raise CheckFailed("format", "exp, log and sqrt have no exact rational value")

    exp = log = sqrt = _no


def inside(x: arb, pair) -> bool:
    """Whether every point of ball x lies in the stated interval [lo, hi]."""
    return x.is_finite() and frac(pair[0]) <= lower(x) and upper(x) <= frac(pair[1])


# ----- the prefix ---------------------------------------------------------------------------------------------------
PARAM_NAMES = ("s", "x", "y")


class Prefix:
    """The reduced map from (0, 0): the centre in the mean-value form and, for a box of invariants, the
    sensitivities S (a first-order Taylor model), as verify.certify.prefix describes (re-implemented here):
    x(t, p) in m_t + S_t (p - p_c), S_{t+1} = J_x(B_t, P) S_t + J_p(B_t, P), B_t = m_t + S_t [-h, h]."""

    def __init__(self, F: Formulas, P: list):
        self.F = F
        self.pc = [(lo + hi) / 2 for lo, hi in P]
        self.h = [(hi - lo) / 2 for lo, hi in P]
        self.box = any(self.h)
        self.a = self.d = self.ra = self.rd = arb(0)
        self.S = [[arb(0)] * 3 for _ in range(2)]
        self.t = 0

    def balls(self):
        pc = [ball(p) for p in self.pc]
        dp = [arb(0, ball(h)) if h else arb(0) for h in self.h]
        return pc, [c + e for c, e in zip(pc, dp)], dp

    def centre_box(self):
        return (self.a + arb(0, self.ra) if self.ra != 0 else self.a,
                self.d + arb(0, self.rd) if self.rd != 0 else self.d)

    def member_box(self, dp):
        A, Dl = self.centre_box()
        if self.box:
            A = A + sum((s * e for s, e in zip(self.S[0], dp)), 0 * A)
            Dl = Dl + sum((s * e for s, e in zip(self.S[1], dp)), 0 * Dl)
        return A, Dl

    def _env(self, A, Ee, P):
        return {"alpha": A, "E": Ee, "s": P[0], "x": P[1], "y": P[2]}

    def _jac(self, names, env):
        return [self.F("jacobian", n, env, Arb) for n in names]

    def _state_jac(self, env):
        """The map's Jacobian in (alpha, delta): the identity plus the increments' derivatives."""
        da_a, da_d, dd_a, dd_d = self._jac(("da_alpha", "da_delta", "dd_alpha", "dd_delta"), env)
        return 1 + da_a, da_d, dd_a, 1 + dd_d

    def step(self, pc, pb, dp):
        env = self._env(self.a, self.d.exp(), pc)
        a_inc = self.F("reduced_map", "alpha_increment", env, Arb)
        inc = self.F("reduced_map", "delta_increment", env, Arb)
        a1, d1 = self.a + a_inc, self.d + inc
        ea, ed = arb(0, self.ra), arb(0, self.rd)
        if self.ra != 0 or self.rd != 0:
            A, Dl = self.centre_box()
            jaa, jad, jda, jdd = self._state_jac(self._env(A, Dl.exp(), pc))
            a1, d1 = self.a + a_inc + jaa * ea + jad * ed, self.d + inc + jda * ea + jdd * ed
        if self.box:
            Ba, Bd = self.member_box(dp)
            benv = self._env(Ba, Bd.exp(), pb)
            jaa, jad, jda, jdd = self._state_jac(benv)
            jp = self._jac([f"d{b}_{q}" for b in "ad" for q in PARAM_NAMES], benv)
            self.S = [[jaa * self.S[0][k] + jad * self.S[1][k] + jp[k] for k in range(3)],
                      [jda * self.S[0][k] + jdd * self.S[1][k] + jp[3 + k] for k in range(3)]]
        if not (a1.is_finite() and d1.is_finite() and all(v.is_finite() for row in self.S for v in row)):
            raise CheckFailed("prefix", f"the enclosure became unbounded at step {self.t + 1}")
        self.a, self.ra, self.d, self.rd = arb(a1.mid()), arb(a1.rad()), arb(d1.mid()), arb(d1.rad())
        self.t += 1

    def enclose(self, name: str):
        """g(x(t, p), p) over every member: g(m_c, p_c) + grad_x g (m_t - m_c) + sum_k (grad_x g . S_k + dg/dp_k)
        (p_k - p_c,k), gradients over B_t x P, intersected with g on B_t x P (g = "u" or "eps")."""
        pc, pb, dp = self.balls()
        Ba, Bd = self.member_box(dp)
        benv = self._env(Ba, Bd.exp(), pb)
        g = [self.F("state", f"{name}_{v}", benv, Arb) for v in ("alpha", "delta") + PARAM_NAMES]
        out = (self.F("state", name, self._env(self.a, self.d.exp(), pc), Arb) + g[0] * arb(0, self.ra)
               + g[1] * arb(0, self.rd))
        if self.box:
            for k in range(3):
                out = out + (g[0] * self.S[0][k] + g[1] * self.S[1][k] + g[2 + k]) * dp[k]
        direct = self.F("state", name, benv, Arb)
        if out.is_finite() and direct.is_finite():
            return out.intersection(direct)
        return out if out.is_finite() else direct

    def inherit(self, parent: "Prefix") -> None:
        """What a half of ``parent``'s box carries from it at a split besides its centre and S (split_halves): nothing
        here; a CappedPrefix keeps its monotone box."""

    def observables(self, pre: dict):
        """Balls of L - L_opt, ||S - S*||_F, ||W_X - V*||_F (a point prefix)."""
        pc, _, _ = self.balls()
        A, Dl = self.centre_box()
        env = self._env(A, Dl.exp(), pc)
        return {"excess_loss": ball(pre["excess_loss"]) * self.F("reduced_map", "loss", env, Arb),
                "s_err": (ball(pre["s_err2"]) * self.F("reduced_map", "s_err2", env, Arb)).sqrt(),
                "w_err": ball(pre["w_err2"]).sqrt() * abs(A - 1)}


def _definite(b: arb) -> int:
    return 1 if b > 0 else (-1 if b < 0 else 0)


def face_end(value, grads: list, lo: list, hi: list, want: int) -> arb:
    """An exact end point below (``want`` = -1) or above (+1) every value of ``value`` over the box [lo, hi] (exact
    balls per variable), ``grads`` its partials' balls over the whole box: where a partial has a definite sign the
    extreme lies on the face that sign picks; for the others, the mean-value theorem from their centre c adds
    dF/dv(box) (v - c)."""
    pt, extra = [], arb(0)
    for g, a, b in zip(grads, lo, hi):
        if _definite(g):
            pt.append(b if _definite(g) == want else a)
        else:
            c = (a + b) / 2
            pt.append(c)
            extra = extra + g * (a.union(b) - c)
    v = value(pt) + extra
    return v.lower() if want < 0 else v.upper()


class CappedPrefix(Prefix):
    """The Prefix whose box of states is intersected with the monotone box M_t of the members' states
    (verify.certify.prefix_monotone, re-implemented here from the file's formulas): M_0 = {(0, 0)}; M_(t+1) is, per
    component of the map, face_end over M_t x P with the partials of the file's Jacobians (identity plus the
    increments' derivatives) over M_t x P. Both boxes hold every member's state, so does their intersection, over
    which the Taylor model's Jacobians and the region's gradients are then taken."""

    def __init__(self, F: Formulas, P: list):
        super().__init__(F, P)
        self.lo, self.hi = (arb(0), arb(0)), (arb(0), arb(0))
        self.p_lo, self.p_hi = tuple(ball(lo) for lo, _ in P), tuple(ball(hi) for _, hi in P)

    def _mono_bounded(self) -> bool:
        return all(v.is_finite() for v in self.lo + self.hi)

    def member_box(self, dp):
        A, Dl = super().member_box(dp)
        if not self._mono_bounded():
            return A, Dl
        Ma, Md = self.lo[0].union(self.hi[0]), self.lo[1].union(self.hi[1])
        return (A.intersection(Ma) if A.is_finite() else Ma), (Dl.intersection(Md) if Dl.is_finite() else Md)

    def _mono_next(self) -> tuple:
        lo, hi = list(self.lo + self.p_lo), list(self.hi + self.p_hi)
        box = [a.union(b) for a, b in zip(lo, hi)]
        benv = self._env(box[0], box[1].exp(), box[2:])
        jaa, jad, jda, jdd = self._state_jac(benv)
        jp = self._jac([f"d{b}_{q}" for b in "ad" for q in PARAM_NAMES], benv)
        grads = ([jaa, jad, *jp[:3]], [jda, jdd, *jp[3:]])
        keys = ("alpha_increment", "delta_increment")
        out = ([], [])
        for i, g in enumerate(grads):
            def value(q, i=i):
                return q[i] + self.F("reduced_map", keys[i], self._env(q[0], q[1].exp(), q[2:]), Arb)
            out[0].append(face_end(value, g, lo, hi, -1))
            out[1].append(face_end(value, g, lo, hi, 1))
        return tuple(out[0]), tuple(out[1])

    def step(self, pc, pb, dp):
        nxt = self._mono_next() if self._mono_bounded() else (self.lo, self.hi)
        super().step(pc, pb, dp)
        self.lo, self.hi = nxt

    def inherit(self, parent: "CappedPrefix") -> None:
        self.lo, self.hi = parent.lo, parent.hi


def expand_runs(runs) -> list[Fraction]:
    """C(u) per annulus, outermost first, from the file's run-length form [[C, count], ...] (each exact C repeated
    count >= 1 times)."""
    if not isinstance(runs, list) or not all(isinstance(r, list) and len(r) == 2 and type(r[1]) is int and r[1] >= 1
                                             for r in runs):
        raise CheckFailed("format", "C_runs must be a list of [C, count] with integer counts >= 1")
    return [c for v, n in runs for c in [frac(v)] * n]


class Profile:
    """C(u) on the annuli [u0 r^(i+1), u0 r^i] (the last value on the core), non-increasing inwards."""

    def __init__(self, region: dict):
        self.u0, self.ratio = frac(region["u0"]), frac(region["ratio"])
        J = int(region["shells"])
        self.values = expand_runs(region["C_runs"]) if "C_runs" in region else [frac(region["C"])] * (J + 1)
        if len(self.values) != J + 1 or any(b > a for a, b in zip(self.values, self.values[1:])):
            raise CheckFailed("format", "C_runs must give one non-increasing value per annulus and the core "
                              f"({J + 1} in all)")

    @property
    def rising_cuts(self) -> list:
        """The annuli's inner edges u0 r^(i+1), i < J, increasing (computed once)."""
        if not hasattr(self, "_cuts"):
            self._cuts = [self.u0 * self.ratio ** (i + 1) for i in range(len(self.values) - 1)][::-1]
        return self._cuts

    def annulus(self, u: Fraction) -> int:
        """The deepest annulus whose closed interval holds u: the number of inner edges u0 r^(i+1) >= u."""
        cuts = self.rising_cuts
        return len(cuts) - bisect.bisect_left(cuts, u)

    def least(self, lo: Fraction) -> Fraction:
        """C at its least on [lo, ...] (the deepest annulus meeting it)."""
        return self.values[self.annulus(max(lo, Fraction(0)))]

    def most(self, hi: Fraction) -> Fraction:
        """C at its largest on [..., hi] (the shallowest annulus holding hi)."""
        i = self.annulus(min(hi, self.u0))
        while i > 0 and hi >= self.u0 * self.ratio**i:
            i -= 1
        return self.values[i]


def check_prefix(F: Formulas, P: list, spec: dict, region: dict, pre: dict | None, wanted) -> tuple:
    """Re-run the prefix; its end must lie in the stated end ball (or box of coordinates) and in R. Returns
    (z0 = (z_lo, z_hi) at T0, {T: observables} for the wanted T <= T0)."""
    T0 = int(spec["T0"])
    pr = Prefix(F, P)
    seen = {}
    pc, pb, dp = pr.balls()
    for T in sorted(t for t in wanted if t <= T0):
        while pr.t < T:
            pr.step(pc, pb, dp)
        seen[T] = pr.observables(pre)
    while pr.t < T0:
        pr.step(pc, pb, dp)
    U, Eps = pr.enclose("u"), pr.enclose("eps")
    end = spec["end"]
    if "alpha" in end:
        A, Dl = pr.member_box(dp)
        if not (inside(A, end["alpha"]) and inside(Dl, end["delta"])):
            raise CheckFailed("prefix", f"at T0 = {T0} the state ball alpha {A}, delta {Dl} is not inside the stated "
                              f"{end['alpha']}, {end['delta']}")
    if not (inside(U, end["u"]) and inside(Eps, end["eps"])):
        raise CheckFailed("prefix", f"at T0 = {T0} u in {U}, eps in {Eps}: not inside the stated {end['u']}, "
                          f"{end['eps']}")
    u_lo, u_hi, e_lo, e_hi = (frac(x) for x in (*end["u"], *end["eps"]))
    prof = Profile(region)
    C = prof.least(u_lo)
    if not (0 < u_lo and u_hi <= prof.u0 and -C <= e_lo and e_hi <= C):
        raise CheckFailed("prefix-in-region", f"the end ball u in [{u_lo}, {u_hi}], eps in [{e_lo}, {e_hi}] is not "
                          f"in R: u in (0, {prof.u0}], |eps| <= {C} there")
    return (1 / u_hi**2, 1 / u_lo**2), seen


def split_halves(pr: "Prefix", k: int) -> tuple:
    """The two halves of ``pr``'s box across parameter k, at its step: each half's centre is the parent's centre
    plus S_k times the shift of the centre (the mean-value theorem on the segment, inside the parent box: a ball),
    its S the parent's (an enclosure of dx/dp over the parent box holds over a half)."""
    out = []
    for side in (0, 1):
        c, h = pr.pc[k], pr.h[k]
        P = [(q - w, q + w) for q, w in zip(pr.pc, pr.h)]
        P[k] = (c - h, c) if side == 0 else (c, c + h)
        kid = type(pr)(pr.F, P)
        kid.inherit(pr)
        shift = ball(kid.pc[k] - c)
        A, Dl = pr.centre_box()
        a1, d1 = A + pr.S[0][k] * shift, Dl + pr.S[1][k] * shift
        kid.a, kid.ra, kid.d, kid.rd = arb(a1.mid()), arb(a1.rad()), arb(d1.mid()), arb(d1.rad())
        kid.S = [list(row) for row in pr.S]
        kid.t = pr.t
        out.append(kid)
    return tuple(out)


SPLIT_MAX_LEAVES = 4096     # a split prefix's tree may have at most this many leaves (a bound on the re-check)


def check_split_prefix(F: Formulas, P: list, ent: dict, region: dict, kappa: tuple | None,
                       prefix: type = Prefix) -> tuple:
    """A cell entering R through a split prefix (verify.certify.prefix_split): the tree (a leaf 0, a dropped piece
    -1, a split [step, k, lower half, upper half]) is replayed from (0, 0) with this checker's Prefix; a dropped
    piece must hold none of the cell's members (y/x outside the stated ``kappa``, itself checked to hold the cell's);
    every leaf, stepped to T0, must have its (u, eps) enclosure inside the stated hull, and the hull must lie in R.
    ``prefix``: the states' class (Prefix; CappedPrefix for an entry of kind "monotone"). Returns z0 = (1/u_hi^2,
    1/u_lo^2)."""
    T0 = int(ent["T0"])
    hull = [tuple(frac(v) for v in ent[q]) for q in ("u", "eps")]
    stack, leaves = [(prefix(F, P), ent["tree"])], 0
    while stack:
        pr, node = stack.pop()
        if not isinstance(node, list) or not node:
            raise CheckFailed("format", "a split prefix's node must be [0], [-1] or [step, k, child, child]")
        if node == [-1]:
            (_, _), (x_lo, x_hi), (y_lo, y_hi) = [(q - w, q + w) for q, w in zip(pr.pc, pr.h)]
            if kappa is None or not (y_hi < kappa[0] * x_lo or y_lo > kappa[1] * x_hi):
                raise CheckFailed("prefix", f"a dropped piece (y in [{y_lo}, {y_hi}], x in [{x_lo}, {x_hi}]) may hold "
                                  f"members with y/x in the cell's kappa {kappa}")
            continue
        if node == [0]:
            leaves += 1
            if leaves > SPLIT_MAX_LEAVES:
                raise CheckFailed("format", f"a split prefix with more than {SPLIT_MAX_LEAVES} leaves")
            pc, pb, dp = pr.balls()
            while pr.t < T0:
                pr.step(pc, pb, dp)
            U, Eps = pr.enclose("u"), pr.enclose("eps")
            if not (inside(U, hull[0]) and inside(Eps, hull[1])):
                raise CheckFailed("prefix", f"at T0 = {T0} a leaf's u in {U}, eps in {Eps} is not inside the stated "
                                  f"{ent['u']}, {ent['eps']}")
            continue
        if len(node) != 4 or type(node[0]) is not int or node[1] not in (0, 1, 2) or not pr.t <= node[0] <= T0:
            raise CheckFailed("format", f"a split prefix's split must be [step, k in 0..2, child, child] at a step in "
                              f"[{pr.t}, {T0}], not {str(node)[:80]}")
        pc, pb, dp = pr.balls()
        while pr.t < node[0]:
            pr.step(pc, pb, dp)
        lo, hi = split_halves(pr, node[1])
        stack.extend([(hi, node[3]), (lo, node[2])])
    (u_lo, u_hi), (e_lo, e_hi) = hull
    C = Profile(region).least(u_lo)
    if not (0 < u_lo and u_hi <= frac(region["u0"]) and -C <= e_lo and e_hi <= C):
        raise CheckFailed("prefix-in-region", f"the leaves' hull u in [{u_lo}, {u_hi}], eps in [{e_lo}, {e_hi}] is "
                          f"not in R: u in (0, {region['u0']}], |eps| <= {C} there")
    return (1 / u_hi**2, 1 / u_lo**2), leaves


# ----- the region ---------------------------------------------------------------------------------------------------
def expand_boxes(region: dict) -> list:
    """The boxes [u_lo, u_hi, e_lo, e_hi] (Fractions): given one by one, or as the initial grid (annuli of the
    shells, n_u slabs, n_eps eps-pieces) with a bisection tree per grid box ("1" = split into 4, "0" = leaf)."""
    if "boxes" in region:
        return [tuple(frac(v) for v in b) for b in region["boxes"]]
    prof = Profile(region)
    J = len(prof.values) - 1
    n_u, n_eps = int(region["n_u"]), int(region["n_eps"])
    cuts = [prof.u0 * prof.ratio**i for i in range(J + 1)] + [Fraction(0)]
    grid = []
    for i, (hi, lo) in enumerate(zip(cuts, cuts[1:])):
        C = prof.values[i]
        ec = [-C + 2 * C * k / n_eps for k in range(n_eps + 1)]
        grid += [(lo + (hi - lo) * k / n_u, lo + (hi - lo) * (k + 1) / n_u, e0, e1)
                 for k in range(n_u) for e0, e1 in zip(ec, ec[1:])]
    splits = region["splits"]
    if len(splits) != len(grid):
        raise CheckFailed("region-cover", f"{len(splits)} bisection trees for {len(grid)} grid boxes")
    out = []
    for g, tree in zip(grid, splits):
        pos = 0

        def leaf(b):
            nonlocal pos
            if pos >= len(tree):
                raise CheckFailed("format", "a bisection tree ends early")
            bit = tree[pos]
            pos += 1
            if bit == "0":
                out.append(b)
                return
            um, em = (b[0] + b[1]) / 2, (b[2] + b[3]) / 2
            for q in ((b[0], um, b[2], em), (b[0], um, em, b[3]), (um, b[1], b[2], em), (um, b[1], em, b[3])):
                leaf(q)
        leaf(g)
    return out


def check_cover(boxes: list, prof: Profile) -> None:
    """A sweep over u: between consecutive box edges the eps-intervals of the boxes spanning the slab must chain
    from -C to C, C the value on the annulus just below the slab's upper edge."""
    u0 = prof.u0
    edges = sorted({b[0] for b in boxes} | {b[1] for b in boxes} | {Fraction(0), u0})
    edges = [e for e in edges if 0 <= e <= u0]
    spanning = [[] for _ in edges[1:]]              # per elementary interval, the boxes spanning it
    for b in boxes:
        for i in range(bisect.bisect_left(edges, b[0]), bisect.bisect_right(edges, b[1]) - 1):
            spanning[i].append((b[2], b[3]))
    for (lo, hi), spans in zip(zip(edges, edges[1:]), spanning):
        spans.sort()
        C = prof.values[prof.annulus(hi)]
        reach = -C
        for e0, e1 in spans:
            if e0 > reach:
                break
            reach = max(reach, e1)
        if reach < C:
            raise CheckFailed("region-cover", f"no box covers u in [{lo}, {hi}], eps just above {reach}")


def _exprel(x: arb) -> arb:
    """exprel(y) = (e^y - 1)/y is increasing (its integral form): its range on x is at the end points."""
    at = lambda p: arb(1) if p.is_zero() else p.expm1() / p  # noqa: E731
    return at(x.lower()).union(at(x.upper()))


def _mean_value(F, name, U, E, Uc, Ec, P, group="coordinates"):
    """f(c) + f_u(B)(U - u_c) + f_eps(B)(E - eps_c), intersected with f(B) (as verify.certify.region.mean_value)."""
    env = {"u": U, "epsilon": E, "s": P[0], "x": P[1], "y": P[2]}
    fB, fu, fe = (F(group, n, env, Arb) for n in (name, f"{name}_u", f"{name}_epsilon"))
    mv = F(group, name, env | {"u": Uc, "epsilon": Ec}, Arb) + fu * (U - Uc) + fe * (E - Ec)
    if not mv.is_finite():
        return fB
    if not fB.is_finite():
        return mv
    return mv.intersection(fB)


def check_box(F, b, P, c, prof: Profile, group="coordinates"):
    """(Q, Lt, W) enclosures (Fraction pairs) on one box, or CheckFailed if the map may leave R from it. ``group``:
    the chart of G, eps', Lt and W ("scaled_coordinates": the box's second coordinate is e = eps/s); R and Q are the
    (u, eps) chart's (they take G as a ball)."""
    U, E = interval(b[0], b[1]), interval(b[2], b[3])
    Uc, Ec = ball((b[0] + b[1]) / 2), ball((b[2] + b[3]) / 2)
    G = _mean_value(F, "G", U, E, Uc, Ec, P, group)
    X = _exprel(c * U * U * G)
    env = {"u": U, "epsilon": E, "G": G, "X": X, "c": c, "s": P[0], "x": P[1], "y": P[2]}
    R, Q = F("coordinates", "R", env, Arb), F("coordinates", "Q", env, Arb)
    en = F(group, "eps_next", env | {"w": U / R, "Q": Q, "R": R}, Arb)
    Lt = _mean_value(F, "loss_ratio", U, E, Uc, Ec, P, group)
    W = _mean_value(F, "W", U, E, Uc, Ec, P, group)
    ok = all(v.is_finite() for v in (G, X, R, Q, en, Lt, W)) and R.lower() > 0 and Q.lower() > 0
    C = prof.least(lower(U / R)) if ok else Fraction(0)
    if not (ok and lower(en) >= -C and upper(en) <= C):
        raise CheckFailed("region-invariant", f"on u in [{float(b[0]):.6g}, {float(b[1]):.6g}], eps in "
                          f"[{float(b[2]):.4g}, {float(b[3]):.4g}]: R = {R}, Q = {Q}, eps' = {en} (C = {float(C):.4g})")
    return (lower(Q), upper(Q)), (lower(Lt), upper(Lt)), (lower(W), upper(W))


def check_region(F, region: dict, P: list, group="coordinates") -> list:
    """Every box of the cover passes (returns [(box, Q, Lt, W)]); ``group`` as in :func:`check_box`."""
    prof = Profile(region)
    boxes = expand_boxes(region)
    check_cover(boxes, prof)
    Pb = [interval(lo, hi) for lo, hi in P]
    c = F("coordinates", "c", {"s": Pb[0], "x": Pb[1], "y": Pb[2]}, Arb)
    return [(b, *check_box(F, b, Pb, c, prof, group)) for b in boxes]


def hull(results: list, lo: Fraction, hi: Fraction):
    """(Q, Lt, W) hulls over the boxes meeting [lo, hi]."""
    sel = [r for r in results if r[0][0] <= hi and r[0][1] >= lo]
    if not sel:
        raise CheckFailed("shells", f"no box meets u in [{lo}, {hi}]")
    pick = lambda k: (min(r[k][0] for r in sel), max(r[k][1] for r in sel))  # noqa: E731
    return pick(1), pick(2), pick(3)


# ----- the comparison lemma on the shells ----------------------------------------------------------------------------
def z_hi(sh: dict, n: int) -> Fraction:
    """An exact rational >= Zh + 2bn + E (1/Zl + ln(1 + 2a(n - 1)/Zl)/(2a)), E = 3b^2/(1 - b u_j^2)^2 (the lemma
    summed over n steps); Zh at n = 0."""
    Zl, Zh, a, b, uj = sh["Zl"], sh["Zh"], sh["a"], sh["b"], sh["u_j"]
    if n == 0:
        return Zh
    E = 3 * b * b / (1 - b * uj * uj) ** 2
    lg = ball(1 + 2 * a * (n - 1) / Zl).log()
    return Zh + 2 * b * n + upper(ball(E) * (ball(1 / Zl) + lg / ball(2 * a)))


def read_shells(spec: list) -> list:
    keys = ("u_j", "lo", "a", "b", "Zl", "Zh")
    return [{**{k: frac(s[k]) for k in keys}, "j": int(s["j"]), "t": int(s["t"]),
             "Lt": tuple(frac(v) for v in s["Lt"]), "W": tuple(frac(v) for v in s["W"])} for s in spec]


def check_shells(shells: list, results, region: dict, c: Fraction, z0: tuple) -> None:
    """The shells' enclosures contain the hulls over the boxes meeting them (scaled by c for the decay), and the
    comparison lemma's inequalities hold on them."""
    u0, rt = frac(region["u0"]), frac(region["ratio"])
    if not shells or shells[0]["t"] != 0 or not (shells[0]["Zl"] <= z0[0] and shells[0]["Zh"] >= z0[1]):
        raise CheckFailed("shells", f"the first shell must start at t = 0 from z(T0) in [{z0[0]}, {z0[1]}]")
    if shells[-1]["lo"] != 0:
        raise CheckFailed("shells", "the last shell must reach u = 0 (lo = 0)")
    for k, sh in enumerate(shells):
        j = sh["j"]
        if sh["u_j"] != u0 * rt**j or (k and j != shells[k - 1]["j"] + 1):
            raise CheckFailed("shells", f"shell {j}: u_j must be u0 ratio^j, in order")
        hq, hl, hw = results(sh["lo"], sh["u_j"])
        if not (sh["a"] <= c * hq[0] and sh["b"] >= c * hq[1] and sh["Lt"][0] <= hl[0] and sh["Lt"][1] >= hl[1]
                and sh["W"][0] <= hw[0] and sh["W"][1] >= hw[1]):
            raise CheckFailed("shells", f"shell {j}: the stated enclosures are tighter than the boxes give "
                              f"(c Q in [{float(c * hq[0]):.8g}, {float(c * hq[1]):.8g}], stated "
                              f"[{float(sh['a']):.8g}, {float(sh['b']):.8g}])")
        if not (sh["a"] > 0 and sh["b"] * sh["u_j"] ** 2 < 1):
            raise CheckFailed("shells", f"shell {j}: the lemma needs a_j > 0 and b_j u_j^2 < 1")
        if sh["Zl"] * sh["u_j"] ** 2 < 1:
            raise CheckFailed("shells", f"shell {j}: entry z_lo(t_j) >= 1/u_j^2 fails")
        if k + 1 < len(shells):
            nxt = shells[k + 1]
            n = nxt["t"] - sh["t"]
            if not (n >= 0 and nxt["Zl"] <= sh["Zl"] + 2 * sh["a"] * n and nxt["Zh"] >= z_hi(sh, n)):
                raise CheckFailed("shells", f"shell {j}: the next shell does not start from the bounds at its entry")
            if sh["lo"] > 0 and not nxt["Zh"] * sh["lo"] ** 2 <= 1:
                raise CheckFailed("shells", f"shell {j}: the lower end lo_j is not implied (z_hi lo_j^2 > 1)")
        elif sh["lo"] != 0:
            raise CheckFailed("shells", "the last shell must have lo = 0")


def tail(shells: list, t: int, F: Formulas, P: list, pre: dict, prof: Profile) -> dict:
    """Balls of the three quantities t >= 0 steps after T0, from the shells."""
    sh = [s for s in shells if s["t"] <= t][-1]
    n = t - sh["t"]
    zl, zh = sh["Zl"] + 2 * sh["a"] * n, z_hi(sh, n)
    u_lo, u_hi = 1 / ball(zh).sqrt(), 1 / ball(zl).sqrt()
    C = prof.most(upper(u_hi))
    U, E = u_lo.lower().union(u_hi.upper()), interval(-C, C)
    Pb = [ball(p) for p in P]
    env = {"u": U, "epsilon": E, "s": Pb[0], "x": Pb[1], "y": Pb[2]}
    Lt, W = F("coordinates", "loss_ratio", env, Arb), F("coordinates", "W", env, Arb)
    L0, s2 = F("coordinates", "loss0", env, Arb), F("coordinates", "s_over_u2", env, Arb)
    pl, ps, pw = ball(pre["excess_loss"]), (ball(pre["s_err2"]) * s2).sqrt(), ball(pre["w_err2"]).sqrt()
    return {"excess_loss": (pl * L0 * u_lo * u_lo * Lt.lower()).union(pl * L0 * u_hi * u_hi * Lt.upper()),
            "s_err": (ps * u_lo).union(ps * u_hi),
            "w_err": (pw * u_lo * W.lower()).union(pw * u_hi * W.upper())}


def check_bounds(stated: list, T0: int, seen: dict, tail_of) -> None:
    for b in stated:
        T = int(b["T"])
        got = seen[T] if T <= T0 else tail_of(T - T0)
        for q in ("excess_loss", "s_err", "w_err"):
            if not inside(got[q], b[q]):
                raise CheckFailed("bounds", f"at T = {T}: {q} stated {b[q]}, but only {got[q]} is verified")


def check_limits(stated: dict, last: dict, c: Fraction) -> None:
    """lim q/leading_q on the last shell: [Lt_lo c/b, Lt_hi c/a], sqrt(c/b)..sqrt(c/a), times W for w_err."""
    lo, hi = ball(c / last["b"]), ball(c / last["a"])
    got = {"excess_loss": (ball(last["Lt"][0]) * lo).union(ball(last["Lt"][1]) * hi),
           "s_err": lo.sqrt().union(hi.sqrt()),
           "w_err": (ball(max(last["W"][0], Fraction(0))) * lo.sqrt()).union(ball(last["W"][1]) * hi.sqrt())}
    for q, pair in stated.items():
        if not inside(got[q], pair):
            raise CheckFailed("limits", f"lim {q}/leading_{q} stated {pair}, but only {got[q]} is verified")


N_TANGENT = 10**15   # the tangent point of ln on the last shell (as verify.certify.comparison.N_TANGENT)


def shell_extremes(shells: list, T0: int) -> list:
    """Per shell: sup (T0 + t)/z_lo(t) and inf (T0 + t)/z_hi(t) over its steps (both Moebius functions of t on
    an affine majorant of z_hi: extremes at the ends, or the limit on the last shell)."""
    out = []
    for k, sh in enumerate(shells):
        last = k + 1 == len(shells)
        E = 3 * sh["b"] ** 2 / (1 - sh["b"] * sh["u_j"] ** 2) ** 2
        ends = [Fraction(T0 + sh["t"]) / sh["Zl"]]
        if last:
            ends.append(1 / (2 * sh["a"]))
            y0 = 2 * sh["a"] * N_TANGENT / sh["Zl"]
            lg = upper(ball(1 + y0).log())
            A = sh["Zh"] + upper(ball(E) * (ball(1 / sh["Zl"]) + (ball(lg) - ball(y0 / (1 + y0))) / ball(2 * sh["a"])))
            B = 2 * sh["b"] + upper(ball(E) / ball(sh["Zl"] * (1 + y0)))
            inf = min(Fraction(T0 + sh["t"]) / A, 1 / B)
        else:
            t1 = shells[k + 1]["t"]
            n1 = t1 - sh["t"]
            ends.append(Fraction(T0 + t1) / (sh["Zl"] + 2 * sh["a"] * n1))
            lg = upper(ball(1 + 2 * sh["a"] * n1 / sh["Zl"]).log())
            A = sh["Zh"] + upper(ball(E) * (ball(1 / sh["Zl"]) + ball(lg) / ball(2 * sh["a"])))
            inf = min(Fraction(T0 + sh["t"]) / A, Fraction(T0 + t1) / (A + 2 * sh["b"] * n1))
        out.append((max(ends), inf))
    return out


def check_constants(cert: dict, shells: list, T0: int, F: Formulas, P, pre: dict, eta: Fraction) -> None:
    """c_lo <= (eta T)^p q(T) <= c_hi for all T >= T0 and the limits of (eta T)^p q, from the shells: q/u^(2p) is
    within psi = pre_L L2(0) Lt, pre_S sqrt((1 + r)/r), pre_W |W| on each shell, and 1/u^2 within [z_lo, z_hi]."""
    Pb = [ball(p) for p in P]
    env = {"s": Pb[0], "x": Pb[1], "y": Pb[2]}
    k_L = ball(pre["excess_loss"]) * F("coordinates", "loss0", env, Arb)
    k_S = (ball(pre["s_err2"]) * F("coordinates", "s_over_u2", env, Arb)).sqrt()
    k_W = ball(pre["w_err2"]).sqrt()
    psi = {"excess_loss": lambda sh: (k_L * ball(sh["Lt"][0]), k_L * ball(sh["Lt"][1])),
           "s_err": lambda sh: (k_S, k_S),
           "w_err": lambda sh: (k_W * ball(max(sh["W"][0], Fraction(0))), k_W * ball(sh["W"][1]))}
    ext = shell_extremes(shells, T0)
    for q, f in psi.items():
        root = (lambda v: v) if q == "excess_loss" else (lambda v: v.sqrt())
        hi = max(upper(f(sh)[1] * root(ball(eta * e[0]))) for sh, e in zip(shells, ext))
        lo = min(lower(f(sh)[0] * root(ball(eta * e[1]))) for sh, e in zip(shells, ext))
        c = cert["constants"][q]
        if not (frac(c["c_lo"]) <= lo and frac(c["c_hi"]) >= hi):
            raise CheckFailed("constants", f"{q}: stated [{c['c_lo']}, {c['c_hi']}] for all T >= T0, verified only "
                              f"[{float(lo):.10g}, {float(hi):.10g}]")
        last = shells[-1]
        a_lim = f(last)[0] * root(ball(eta / (2 * last["b"])))
        b_lim = f(last)[1] * root(ball(eta / (2 * last["a"])))
        lim = cert["asymptotic"][q]
        if not (frac(lim["liminf_ge"]) <= lower(a_lim) and frac(lim["limsup_le"]) >= upper(b_lim)):
            raise CheckFailed("limits", f"{q}: stated lim in [{lim['liminf_ge']}, {lim['limsup_le']}], verified only "
                              f"[{a_lim}, {b_lim}]")


# ----- files --------------------------------------------------------------------------------------------------------
def check_regime(cert: dict, F: Formulas, log) -> None:
    """A one-regime certificate (kind "slow-manifold")."""
    want = regime_parameters(cert["regime"])
    stated = {k: frac(v) for k, v in cert["parameters"].items()}
    if stated != want:
        raise CheckFailed("regime", f"the parameters stated {_text(stated)} are not the regime block's {_text(want)}")
    log("regime", "the regime block is in the model's scope and gives the stated parameters " + _text(want))
    P, pre = check_parameters(cert, F)
    log("parameters", f"(s, x, y) = ({P[0]}, {P[1]}, {P[2]})")
    Pi = [(p, p) for p in P]
    region, T0 = cert["region"], int(cert["prefix"]["T0"])
    z0, seen = check_prefix(F, Pi, cert["prefix"], region, pre, {int(b["T"]) for b in cert["bounds"]})
    log("prefix", f"{T0} steps re-run; the end ball lies in R")
    results = check_region(F, region, Pi)
    log("region", f"{len(results)} boxes cover R and each is mapped into R")
    c = F("coordinates", "c", {"s": P[0], "x": P[1], "y": P[2]}, Frac)
    shells = read_shells(cert["shells"])
    check_shells(shells, lambda lo, hi: hull(results, lo, hi), region, c, z0)
    log("shells", f"{len(shells)} shells: enclosures and the lemma's inequalities")
    prof = Profile(region)
    check_bounds(cert["bounds"], T0, seen, lambda t: tail(shells, t, F, P, pre, prof))
    log("bounds", f"{len(cert['bounds'])} stated bounds contain the verified ones")
    check_constants(cert, shells, T0, F, P, pre, frac(cert["parameters"]["eta_V"]))
    log("constants", "c_lo <= (eta T)^p q(T) <= c_hi for every T >= T0, and the limits of (eta T)^p q")
    check_limits(cert.get("normalised_limits", {}), shells[-1], c)
    log("limits", "the normalised limit constants q/leading_q")


# ----- the entry tube ------------------------------------------------------------------------------------------------
# A tube cell carries every member from (0, 0) into R at once (verify.certify.tube, re-derived here). The increments
# are alpha' - alpha = x A^(alpha, E; s) and delta' - delta = y D^(alpha, E; s) (tube-linearity), so with kappa = y/x
# the step is x times the increments evaluated at x = 1, y = kappa. A graph fences the members' curve between
# lower(cl) <= tr <= upper(cl), piecewise linear on knots, cl its clock (alpha or delta) and tr the other coordinate.
MAX_HANDOVER_DEPTH = 10     # a stated handover grid of 4^depth boxes; deeper ones are refused, not run
MAX_S_PIECES = 64          # the s range of a cell is checked in at most this many pieces


class TubeGraph:
    """One stated graph: the clock, exact knots c_0 < ... < c_n, fence values lower_k <= upper_k, one quadtree per
    slab 0..n-2."""

    def __init__(self, spec: dict, clock: str, where: str):
        if spec.get("clock") != clock:
            raise CheckFailed("format", f"{where}: the {clock} graph is missing (found clock {spec.get('clock')!r})")
        self.clock, self.where = clock, f"{where}, {clock} graph"
        self.knots = [frac(v) for v in spec["knots"]]
        self.lower, self.upper = [frac(v) for v in spec["lower"]], [frac(v) for v in spec["upper"]]
        self.trees = list(spec["trees"])
        n = len(self.knots) - 1
        if n < 2 or len(self.lower) != n + 1 or len(self.upper) != n + 1 or len(self.trees) != n - 1:
            raise CheckFailed("format", f"{self.where}: needs n >= 2 slabs, n + 1 fence values each and n - 1 trees")
        if any(b <= a for a, b in zip(self.knots, self.knots[1:])) or any(lo > hi for lo, hi in
                                                                          zip(self.lower, self.upper)):
            raise CheckFailed("format", f"{self.where}: knots must increase and lower <= upper at every knot")
        # the fences' slopes, exact, computed once (every leaf of a slab uses them)
        self._slopes = {id(f): [(f[k + 1] - f[k]) / (self.knots[k + 1] - self.knots[k]) for k in range(n)]
                        for f in (self.lower, self.upper)}
        self._balls = {}

    @property
    def slabs(self) -> int:
        return len(self.knots) - 1

    def slope(self, k: int, fence: list) -> Fraction:
        return self._slopes[id(fence)][k]

    def slab_balls(self, k: int) -> tuple:
        """Slab k's exact numbers as balls, made once: (c_k, lower_k, slope of lower, upper_k - lower_k, slope of
        upper - slope of lower)."""
        got = self._balls.get(k)
        if got is None:
            bL, bU = self.slope(k, self.lower), self.slope(k, self.upper)
            got = self._balls[k] = (ball(self.knots[k]), ball(self.lower[k]), ball(bL),
                                    ball(self.upper[k] - self.lower[k]), ball(bU - bL))
        return got

    def value(self, fence: list, cl: Fraction) -> Fraction:
        """The piecewise linear fence at a clock cl inside [c_0, c_n] (continuous: either slab at a knot)."""
        k = max(i for i in range(self.slabs) if self.knots[i] <= cl)
        return fence[k] + self.slope(k, fence) * (cl - self.knots[k])

    def holds(self, cl_lo: Fraction, cl_hi: Fraction, tr_lo: Fraction, tr_hi: Fraction, last: int) -> bool:
        """Every point of [cl_lo, cl_hi] x [tr_lo, tr_hi] lies in slabs 0..last - 1: a piecewise linear fence takes
        its extremes over a clock range at the range's ends and the knots inside it."""
        if not (self.knots[0] <= cl_lo <= cl_hi <= self.knots[last]):
            return False
        at = [cl_lo, cl_hi] + [c for c in self.knots if cl_lo < c < cl_hi]
        return all(self.value(self.lower, c) <= tr_lo and tr_hi <= self.value(self.upper, c) for c in at)

    def next_balls(self, k: int) -> tuple:
        """(c_(k+1), the width of slab k + 1, the fences' bends (slope on slab k + 1 minus slope on slab k)) as
        balls, made once."""
        got = self._balls.get(("next", k))
        if got is None:
            got = self._balls[("next", k)] = (
                ball(self.knots[k + 1]), ball(self.knots[k + 2] - self.knots[k + 1]),
                tuple(ball(self.slope(k + 1, f) - self.slope(k, f)) for f in (self.lower, self.upper)))
        return got

    def transverse(self, k: int, C: arb, Th: arb) -> arb:
        """tr = lower(cl) + theta (upper(cl) - lower(cl)) over a box of slab k, as a ball."""
        ck, lk, bL, _, _ = self.slab_balls(k)
        dc = C - ck
        return lk + bL * dc + Th * self.width(k, dc)

    def width(self, k: int, dc: arb) -> arb:
        """W = upper - lower at cl = c_k + dc on slab k, as one linear function (no cancellation of two balls)."""
        _, _, _, wk, gw = self.slab_balls(k)
        return wk + gw * dc


def tree_leaves(tree: str, root: tuple, where: str):
    """The leaf boxes (c_lo, c_hi, t_lo, t_hi) of a stated quadtree, depth first ("1": split in four in the order
    (c_lo..cm, t_lo..tm), (c_lo..cm, tm..t_hi), (cm..c_hi, t_lo..tm), (cm..c_hi, tm..t_hi); "0": a leaf)."""
    stack, pos = [root], 0
    while stack:
        b = stack.pop()
        if pos >= len(tree):
            raise CheckFailed("tube-invariance", f"{where}: the stated quadtree ends early")
        bit, pos = tree[pos], pos + 1
        if bit == "0":
            yield b
        elif bit == "1":
            cm, tm = (b[0] + b[1]) / 2, (b[2] + b[3]) / 2
            if isinstance(cm, arb) and not (cm.is_exact() and tm.is_exact()):
                raise CheckFailed("tube-invariance", f"{where}: the stated quadtree is deeper than the precision")
            stack += [(cm, b[1], tm, b[3]), (cm, b[1], b[2], tm), (b[0], cm, tm, b[3]), (b[0], cm, b[2], tm)]
        else:
            raise CheckFailed("tube-invariance", f"{where}: the stated quadtree has a symbol {bit!r}")
    if pos != len(tree):
        raise CheckFailed("tube-invariance", f"{where}: the stated quadtree has {len(tree) - pos} symbols left over")


def graph_E(clock: str, cl: arb, tr: arb, S: arb) -> arb:
    """E = e^delta at a graph's point: delta = tr (alpha graph), cl (delta graph) or cl - log s (zeta graph, zeta =
    delta + log s)."""
    return tr.exp() if clock == "alpha" else cl.exp() / S if clock == "zeta" else cl.exp()


def unit_increments(F: Formulas, clock: str, cl: arb, tr: arb, S: arb, KAP: arb, derivatives: bool = False,
                    with_s: bool = False) -> dict:
    """The per-unit-x increments i_cl, i_tr (the map's increments at x = 1, y = kappa) and, with ``derivatives``,
    their derivatives in the clock (_c), in the transverse coordinate (_t) and, with ``with_s``, in s (_s)."""
    env = {"alpha": cl if clock == "alpha" else tr, "E": graph_E(clock, cl, tr, S), "s": S, "x": arb(1), "y": KAP}
    keys = UNIT_KEYS + (JACOBIAN_KEYS if derivatives else ()) + (S_KEYS if derivatives and with_s else ())
    v = F.arb(keys, env)                         # one compiled function: shared subexpressions once
    a, d = v[0], v[1]
    cl_name, tr_name = ("a", "d") if clock == "alpha" else ("d", "a")
    out = {"cl": a if clock == "alpha" else d, "tr": d if clock == "alpha" else a}
    if not derivatives:
        return out
    jac = {k[1]: x for k, x in zip(keys[2:], v[2:])}
    for which, b in (("cl", cl_name), ("tr", tr_name)):
        # d/d zeta = d/d delta (zeta = delta + log s); at fixed zeta, d/ds = d/ds at fixed delta - (1/s) d/d delta
        out[f"{which}_c"] = jac[f"d{b}_{'alpha' if clock == 'alpha' else 'delta'}"]
        out[f"{which}_t"] = jac[f"d{b}_{'delta' if clock == 'alpha' else 'alpha'}"]
        if with_s:
            d_s = jac[f"d{b}_s"]
            out[f"{which}_s"] = d_s - jac[f"d{b}_delta"] / S if clock == "zeta" else d_s
    return out


UNIT_KEYS = (("reduced_map", "alpha_increment"), ("reduced_map", "delta_increment"))
JACOBIAN_KEYS = tuple(("jacobian", n) for n in ("da_alpha", "da_delta", "dd_alpha", "dd_delta"))
S_KEYS = (("jacobian", "da_s"), ("jacobian", "dd_s"))


def _pt(v) -> arb:
    """An exact number as a ball (an Arb ball passes through)."""
    return v if isinstance(v, arb) else ball(v)


def fence_gaps(F: Formulas, g: TubeGraph, k: int, box: tuple, balls: tuple, s_mid) -> tuple:
    """(phi_lower, phi_upper, x i_cl) over a box of slab k for every member: phi_e = tr' - e(cl') with the fence e
    continued linearly from slab k, = (theta - theta_e) W(cl) + x (i_tr - b_e i_cl) (theta_e = 0, b_e = b_L for the
    lower fence, 1 and b_U for the upper, W = upper - lower). The identity part is exact; the rest is enclosed in
    the mean-value form about the box's centre in (cl, theta) and, when S is an interval, about s_mid in s; and
    intersected with the direct enclosure over the box. The box's ends (exact numbers or exact balls) are dyadic,
    so its centre is an exact ball."""
    S, X, KAP = balls
    c_lo, c_hi, t_lo, t_hi = (_pt(v) for v in box)
    ck, lk, bL, wk, gW = g.slab_balls(k)
    bU = bL + gW                                                              # exact: dyadic slopes
    C, Th = c_lo.union(c_hi), t_lo.union(t_hi)
    cm, tm = (c_lo + c_hi) / 2, (t_lo + t_hi) / 2
    Wm, W = wk + gW * (cm - ck), wk + gW * (C - ck)
    B = unit_increments(F, g.clock, C, lk + bL * (C - ck) + Th * W, S, KAP, True, s_mid is not None)
    sm = None if s_mid is None else _pt(s_mid)
    M = unit_increments(F, g.clock, cm, lk + bL * (cm - ck) + tm * Wm, S if sm is None else sm, KAP)
    out = []
    for theta_e, bb in ((0, bL), (1, bU)):
        psi_c, psi_t = B["tr_c"] - bb * B["cl_c"], B["tr_t"] - bb * B["cl_t"]
        # phi = (theta - theta_e) W(cl) + x psi, psi = i_tr - b i_cl in the mean-value form (d tr/d theta = W,
        # d tr/d cl = b_L + theta W'); the clock's and s's shares of psi times x as one product
        psi = (M["tr"] - bb * M["cl"]) + (psi_c + psi_t * (bL + Th * gW)) * (C - cm)
        if sm is not None:
            psi = psi + (B["tr_s"] - bb * B["cl_s"]) * (S - sm)
        # theta's share keeps the identity with x's: W (1 + x psi_t), the transverse contraction
        first = (tm - theta_e) * Wm + W * (1 + X * psi_t) * (Th - tm) + (Th - theta_e) * gW * (C - cm)
        mv = first + X * psi
        direct = (Th - theta_e) * W + X * (B["tr"] - bb * B["cl"])
        out.append(mv.intersection(direct) if mv.is_finite() and direct.is_finite() else mv)
    return out[0], out[1], X * B["cl"]


def leaf_failure(g: TubeGraph, k: int, box: tuple, gaps: tuple) -> str:
    """Why a leaf of slab k does not map into the tube ("" if it does): the clock must advance by more than 0 and
    less than slab k + 1, and the image lie between the fences, against slab k + 1's fences as well when the step
    may cross c_(k+1) (there e(cl') = e continued from slab k + (b' - b)(cl' - c_(k+1)), and 0 <= cl' - c_(k+1)
    <= c_hi + x i_cl - c_(k+1), cl <= c_hi the box's top)."""
    pL, pU, inc = gaps
    if not all(v.is_finite() for v in gaps):
        return "an unbounded enclosure"
    top, width_next, bends = g.next_balls(k)
    if not (inc > 0 and inc < width_next):
        return f"the clock advance x i_cl in [{float(inc.lower()):.4g}, {float(inc.upper()):.4g}] is not inside " \
               f"(0, the width of slab {k + 1})"
    over = _pt(box[1]) + inc.upper() - top
    span = None if over <= 0 else arb(0).union(over.upper())
    for name, phi, sign, bend in (("lower", pL, 1, bends[0]), ("upper", pU, -1, bends[1])):
        for v in [phi] + ([phi - bend * span] if span is not None else []):
            if (sign > 0 and not v >= 0) or (sign < 0 and not v <= 0):
                return f"the image may leave the {name} fence (tr' - {name}(cl') in [{float(v.lower()):.4g}, " \
                       f"{float(v.upper()):.4g}])"
    return ""


def s_parts(s_range: tuple, n: int) -> list:
    """The cell's s range in ``n`` equal pieces, each with a ball of its centre (one point: itself, no centre)."""
    lo, hi = s_range
    if lo == hi:
        return [(interval(lo, lo), None)]
    cuts = [lo + (hi - lo) * Fraction(j, n) for j in range(n + 1)]
    return [(interval(a, b), ball((a + b) / 2)) for a, b in zip(cuts, cuts[1:])]


def check_invariance(F: Formulas, g: TubeGraph, balls: tuple, parts: list) -> tuple:
    """Every leaf of every stated quadtree maps into the tube (tube-invariance), over the whole s range or else over
    each of its pieces (``parts``: the splits of the range to try in turn, each a list of (ball, centre); the
    mean-value form in s about the centre). Returns (the least clock advance lower(x i_cl) on each slab 0..n-2,
    the number of leaves)."""
    X, KAP = balls
    least, count = [], 0
    for k, tree in enumerate(g.trees):
        where = f"{g.where}, slab {k} (clock in [{float(g.knots[k]):.6g}, {float(g.knots[k + 1]):.6g}])"
        inc_lo = None
        root = (ball(g.knots[k]), ball(g.knots[k + 1]), arb(0), arb(1))
        for box in tree_leaves(tree, root, where):
            why = ""
            for split in parts:                     # the whole s range, or else each of its pieces
                lows = []
                for S, s_mid in split:
                    gaps = fence_gaps(F, g, k, box, (S, X, KAP), s_mid)
                    why = leaf_failure(g, k, box, gaps)
                    if why:
                        break
                    lows.append(gaps[2].lower())    # an exact point below every advance
                if not why:
                    inc_lo = min(lows) if inc_lo is None else min(inc_lo, *lows)
                    break
            if why:
                raise CheckFailed("tube-invariance", f"{where}, box clock [{float(box[0]):.6g}, {float(box[1]):.6g}],"
                                  f" theta [{float(box[2]):.4g}, {float(box[3]):.4g}]: {why}")
            count += 1
        least.append(None if inc_lo is None else lower(inc_lo))
    return least, count


def grid_states(g: TubeGraph, k: int, depth: int):
    """The (cl, tr) balls of slab k's 2^depth x 2^depth grid of (cl, theta) boxes."""
    n, c0, c1 = 2 ** depth, g.knots[k], g.knots[k + 1]
    for i in range(n):
        C = interval(c0 + (c1 - c0) * i / n, c0 + (c1 - c0) * (i + 1) / n)
        for j in range(n):
            yield C, g.transverse(k, C, interval(Fraction(j, n), Fraction(j + 1, n)))


def check_start(F: Formulas, ga: TubeGraph, balls3: tuple) -> None:
    """The first step from (alpha, delta) = (0, 0) lies in the alpha graph's slabs 0..n-2 for every member."""
    S, X, Y = balls3
    env = {"alpha": arb(0), "E": arb(1), "s": S, "x": X, "y": Y}
    a1, d1 = (F("reduced_map", f"{q}_increment", env, Arb) for q in ("alpha", "delta"))
    if not (a1.is_finite() and d1.is_finite() and ga.holds(lower(a1), upper(a1), lower(d1), upper(d1), ga.slabs - 1)):
        raise CheckFailed("tube-start", f"{ga.where}: the first step (alpha in {a1}, delta in {d1}) is not inside "
                          "its slabs 0..n-2")


def check_handovers(F: Formulas, ga: TubeGraph, gd: TubeGraph, depths, S: arb, region: dict) -> Fraction:
    """The alpha graph's last slab lies in the delta graph's slabs 0..m-2, and the delta graph's last slab in R
    (u <= u0, |eps| <= C(u)), each on the stated grid depth. Returns the largest u over the last slab."""
    if not (isinstance(depths, list) and len(depths) == 2 and all(type(d) is int and 0 <= d <= MAX_HANDOVER_DEPTH
                                                                   for d in depths)):
        raise CheckFailed("format", f"{ga.where}: handover_depths must be two integers in [0, {MAX_HANDOVER_DEPTH}]")
    shift = S.log() if gd.clock == "zeta" else arb(0)            # the second graph's clock: delta (+ log s)
    for cl, tr in grid_states(ga, ga.slabs - 1, depths[0]):      # alpha graph: cl = alpha, tr = delta
        c2 = tr + shift
        if not gd.holds(lower(c2), upper(c2), lower(cl), upper(cl), gd.slabs - 1):
            raise CheckFailed("tube-handover", f"{ga.where}: its last slab at alpha in {cl}, delta in {tr} is not "
                              f"inside the {gd.clock} graph's slabs 0..m-2")
    prof, zero, u_most = Profile(region), arb(0), Fraction(0)
    for cl, tr in grid_states(gd, gd.slabs - 1, depths[1]):      # second graph: cl = delta or zeta, tr = alpha
        if gd.clock == "zeta":
            # u = 1/(E s + 1) = 1/(e^zeta + 1) (zeta = delta + log s), eps = (alpha - alpha*(u))/u^3 (definitions)
            U = 1 / (cl.exp() + 1)
            eps = (tr - F("coordinates", "alpha_star", {"u": U, "s": S, "x": zero, "y": zero}, Arb)) / U**3
        else:
            env = {"alpha": tr, "E": graph_E(gd.clock, cl, tr, S), "s": S, "x": zero, "y": zero}
            U, eps = F("state", "u", env, Arb), F("state", "eps", env, Arb)
        ok = U.is_finite() and eps.is_finite() and 0 < lower(U) and upper(U) <= prof.u0
        C = prof.least(lower(U)) if ok else Fraction(0)
        if not (ok and -C <= lower(eps) and upper(eps) <= C):
            raise CheckFailed("tube-handover", f"{gd.where}: its last slab at delta in {cl}, alpha in {tr} is not in "
                              f"R (u in {U}, eps in {eps}, u0 = {prof.u0}, C = {C})")
        u_most = max(u_most, upper(U))
    return u_most


def check_linearity(F: Formulas) -> None:
    """alpha_increment / x and delta_increment / y have no x or y left (zero derivatives, exactly): the increments
    are x A^(alpha, E; s) and y D^(alpha, E; s), so a member's step is x times the unit increments at y/x."""
    alg = RFAlg(IDENTITY_VARS)
    v = {n: alg.var(n) for n in IDENTITY_VARS}
    for name, by in (("alpha_increment", "x"), ("delta_increment", "y")):
        unit = F("reduced_map", name, v, alg) / v[by]
        for var in ("x", "y"):
            if unit.derivative(var).n != 0:
                raise CheckFailed("tube-linearity", f"reduced_map.{name} / {by} depends on {var}")


def corner_range(v: RF, box: dict) -> tuple:
    """(min, max) of a rational function over a box of positive values, exactly, when it is a monomial (then its
    extremes are at the box's corners); None otherwise."""
    if len(v.n) != 1 or len(v.m) != 1 or not all(lo > 0 for lo, _ in box.values()):
        return None
    ranged = [k for k, (lo, hi) in box.items() if lo < hi]
    values = [_rf_value(v, {k: box[k][0] for k in box} | dict(zip(ranged, pick)))
              for pick in itertools.product(*[box[k] for k in ranged])]
    return min(values), max(values)


def member_ratio(F: Formulas, cell: dict, formulas: dict | None) -> tuple:
    """(y/x as an exact rational function, its variables' box): in the family's ranged names over the cell's box
    when the spec gives each parameter as a formula of them (``formulas``: the parameters' ties, e.g. eta_V = eta_KQ
    = eta; each must range inside the cell's stated parameter box), else in the parameters over the cell's
    parameter box (which forgets the ties, so y/x ranges wider)."""
    where = f"cell {cell['path'] or 'root'}"
    stated = {k: (frac(lo), frac(hi)) for k, (lo, hi) in cell["parameters"].items()}
    if not formulas:
        alg = RFAlg(sorted(stated))
        env = {k: alg.var(k) for k in stated}
        return F("invariants", "y", env, alg) / F("invariants", "x", env, alg), stated
    box = {k: (frac(lo), frac(hi)) for k, (lo, hi) in cell["box"].items()}
    if set(formulas) != set(stated):
        raise CheckFailed("format", f"{where}: the spec's parameters must be {', '.join(sorted(stated))}")
    alg = RFAlg(sorted(box))
    names = {k: alg.var(k) for k in box}
    env = {k: evaluate(parse(str(v)), names, alg) for k, v in formulas.items()}
    for k, v in env.items():
        got = corner_range(v, box)
        if got is None or not (stated[k][0] <= got[0] and got[1] <= stated[k][1]):
            raise CheckFailed("parameters", f"{where}: the spec's {k} = {formulas[k]} is not a monomial ranging "
                              f"inside the cell's stated [{stated[k][0]}, {stated[k][1]}]")
    return F("invariants", "y", env, alg) / F("invariants", "x", env, alg), box


def check_kappa(F: Formulas, cell: dict, kappa: tuple, formulas: dict | None = None) -> None:
    """The stated kappa range holds y/x for every member: y/x is checked to be a monomial (exactly, as a rational
    function; :func:`member_ratio`), so on a box of positive values its extremes are at the corners, computed
    exactly."""
    where = f"cell {cell['path'] or 'root'}"
    ratio, box = member_ratio(F, cell, formulas)
    got = corner_range(ratio, box)
    if got is None:
        raise CheckFailed("tube-kappa", f"{where}: y/x is not a monomial in positive {', '.join(sorted(box))}")
    if not (kappa[0] <= got[0] and got[1] <= kappa[1]):
        on = "the cell" if formulas else "the cell's parameter box (the spec ties no parameter to its ranged names)"
        raise CheckFailed("tube-kappa", f"{where}: kappa stated [{kappa[0]}, {kappa[1]}], but y/x ranges over "
                          f"[{got[0]}, {got[1]}] on {on}")


def check_time(F: Formulas, cell: dict, graphs: tuple, least: tuple, P: list, Q_max: Fraction,
               u_most: Fraction) -> tuple:
    """T0 >= 1 + sum over the checked slabs of ceil(width / least advance) (a member spends at most that many steps
    in a slab: its clock rises by at least the least advance a step), so by T0 every member has been in the delta
    graph's last slab, inside R; and z(T0) = 1/u^2 within the stated range: >= 1/u_most^2 (u <= u_most on that
    slab, and u only falls in R: Q > 0), <= z_end + T0 2 c_hi Q_max/(1 - c_hi u0^2 Q_max)^2 (z = (e^delta s + 1)^2
    <= z_end on that slab, delta <= c_m; in R z' - z = (R^2 - 1)/u^2 <= 2 c Q R^2, R = 1/(1 - c u^2 Q)). Returns
    the stated z(T0)."""
    where = f"cell {cell['path'] or 'root'}"
    T0 = int(cell["T0"])
    need = 1 + sum(math.ceil((g.knots[k + 1] - g.knots[k]) / inc) for g, incs in zip(graphs, least)
                   for k, inc in enumerate(incs))
    if T0 < need:
        raise CheckFailed("tube-time", f"{where}: T0 = {T0} stated, but the tube gives only T0 >= {need}")
    alg = RFAlg(PARAM_NAMES)
    s, y = alg.var("s"), alg.var("y")
    if not F("coordinates", "c", {n: alg.var(n) for n in PARAM_NAMES}, alg).equals(s * (1 + s) * y):
        raise CheckFailed("tube-time", "coordinates.c is not s (1 + s) y")
    (s_lo, s_hi), _, (y_lo, y_hi) = P
    u0 = frac(cell["region"]["u0"])
    c_hi = s_hi * (1 + s_hi) * y_hi                 # the largest c over the cell (s, y > 0)
    den = 1 - c_hi * u0**2 * Q_max
    if not (s_lo > 0 and y_lo > 0 and den > 0):
        raise CheckFailed("tube-time", f"{where}: needs s, y > 0 and c_hi u0^2 Q_max < 1")
    # z = (E s + 1)^2 <= its value at the last knot: E s = e^zeta on a zeta graph, e^delta s_hi on a delta graph
    g2 = graphs[1]
    root = ball(g2.knots[-1]).exp() * (1 if g2.clock == "zeta" else ball(s_hi)) + 1
    z_end = upper(root * root)
    z_lo, z_hi = 1 / u_most**2, z_end + T0 * 2 * c_hi * Q_max / den**2
    zs = tuple(frac(v) for v in cell["z_at_T0"])
    if not (zs[0] <= z_lo and z_hi <= zs[1]):
        raise CheckFailed("tube-time", f"{where}: z(T0) stated [{float(zs[0]):.10g}, {float(zs[1]):.10g}], verified "
                          f"only [{float(z_lo):.10g}, {float(z_hi):.10g}]")
    return zs


def check_tube(F: Formulas, cell: dict, P: list, results: list, formulas: dict | None = None) -> tuple:
    """A tube cell's entry (tube-kappa, -start, -invariance, -handover, -time); ``formulas``: the parameters as
    formulas of the ranged names, if the spec gives them. Returns (the stated z(T0), the number of leaf boxes
    checked)."""
    where, ent = f"cell {cell['path'] or 'root'}", cell["entry"]
    kappa = tuple(frac(v) for v in ent["kappa"])
    if len(kappa) != 2 or len(ent["graphs"]) != 2:
        raise CheckFailed("format", f"{where}: a tube entry needs kappa [lo, hi] and two graphs (alpha, delta)")
    check_kappa(F, cell, kappa, formulas)
    second = ent["graphs"][1].get("clock") if len(ent.get("graphs", [])) == 2 else None
    ga, gd = TubeGraph(ent["graphs"][0], "alpha", where), TubeGraph(ent["graphs"][1], second if second in (
        "delta", "zeta") else "zeta", where)
    S, X, Y = (interval(lo, hi) for lo, hi in P)
    pieces = ent.get("s_pieces", 1)
    if not (type(pieces) is int and 1 <= pieces <= MAX_S_PIECES):
        raise CheckFailed("format", f"{where}: s_pieces must be an integer in [1, {MAX_S_PIECES}]")
    parts = [s_parts(tuple(P[0]), 1)] + ([s_parts(tuple(P[0]), pieces)] if pieces > 1 and P[0][0] < P[0][1] else [])
    check_start(F, ga, (S, X, Y))
    least, leaves = [], 0
    for g in (ga, gd):
        inc, n = check_invariance(F, g, (X, interval(*kappa)), parts)
        least.append(inc)
        leaves += n
    u_most = check_handovers(F, ga, gd, ent["handover_depths"], S, cell["region"])
    zs = check_time(F, cell, (ga, gd), tuple(least), P, max(r[1][1] for r in results), u_most)
    return zs, leaves


# ----- families ------------------------------------------------------------------------------------------------------
def _range(name: str, pair) -> tuple:
    """A ranged parameter as a real interval: D over integers [lo, hi] covers the reals [lo - 1/2, hi + 1/2]."""
    lo, hi = frac(pair[0]), frac(pair[1])
    return (lo - Fraction(1, 2), hi + Fraction(1, 2)) if name == "D" else (lo, hi)


def cover_gap(boxes: list, target: dict):
    """None if the boxes (dicts name -> (lo, hi)) cover the target box; else a sub-box left uncovered."""
    names = list(target)

    def rec(bxs, k, where):
        if k == len(names):
            return None if bxs else where
        n = names[k]
        lo, hi = target[n]
        if lo == hi:
            return rec([b for b in bxs if b[n][0] <= lo <= b[n][1]], k + 1, where | {n: (lo, hi)})
        edges = sorted({lo, hi} | {v for b in bxs for v in b[n] if lo < v < hi})
        for a, b_ in zip(edges, edges[1:]):
            gap = rec([b for b in bxs if b[n][0] <= a and b[n][1] >= b_], k + 1, where | {n: (a, b_)})
            if gap is not None:
                return gap
        return None
    return rec(boxes, 0, {})


def check_cell_parameters(cell: dict, ties: dict) -> None:
    """The cell's stated parameter box contains every member's parameters: each tie is checked to be a monomial in
    the positive ranged names, so its extremes over the cell's box are at its corners (exact); D over integers
    [lo, hi] is taken as the reals [lo, hi] (the ties are monomials: no integer is skipped between corners)."""
    where = f"cell {cell['path'] or 'root'}"
    box = {k: (frac(lo), frac(hi)) for k, (lo, hi) in cell["box"].items()}
    stated = {k: (frac(lo), frac(hi)) for k, (lo, hi) in cell["parameters"].items()}
    alg = RFAlg(sorted(box))
    env = {k: alg.var(k) for k in box}
    if set(stated) != set(MODEL_PARAMETERS):
        raise CheckFailed("parameters", f"{where}: the parameters must be {', '.join(MODEL_PARAMETERS)}")
    for k, t in ties.items():
        got = corner_range(evaluate(parse(t), env, alg), box)
        if got is None or not (stated[k][0] <= got[0] and got[1] <= stated[k][1]):
            raise CheckFailed("parameters", f"{where}: {k} = {t} ranges over {got} on the cell's box {cell['box']}, "
                              f"not inside the stated [{stated[k][0]}, {stated[k][1]}]")


def check_cell_invariants(F: Formulas, cell: dict) -> list:
    """The cell's stated invariant box contains the invariant formulas' enclosure over its parameter box."""
    env = {k: interval(frac(lo), frac(hi)) for k, (lo, hi) in cell["parameters"].items()}
    P = [(frac(lo), frac(hi)) for lo, hi in cell["invariants"]]
    for (lo, hi), name in zip(P, PARAM_NAMES):
        v = F("invariants", name, env, Arb)
        if not inside(v, (lo, hi)):
            raise CheckFailed("parameters", f"cell {cell['path'] or 'root'}: {name} ranges over {v} on the cell, "
                              f"not inside the stated [{lo}, {hi}]")
    return P


def slab_edges(region: dict) -> list:
    """The u-edges of a cell's slabs: the annuli u0 r^(i+1) <= u <= u0 r^i (i < shells) and the core [0, u0 r^shells],
    each cut into n_u equal slabs, increasing."""
    u0, r, J, n_u = frac(region["u0"]), frac(region["ratio"]), int(region["shells"]), int(region["n_u"])
    cuts = [Fraction(0)] + [u0 * r**i for i in range(J, -1, -1)]
    return [lo + (hi - lo) * k / n_u for lo, hi in zip(cuts, cuts[1:]) for k in range(n_u)] + [u0]


def decode_slabs(stored: dict, region: dict, where: str) -> list:
    """A cell's stored slabs {"encoding": "float64-le-zlib-base64", "count", "hulls"} as rows (u_lo, u_hi, a, b,
    Lt_lo, Lt_hi, W_lo, W_hi) of Fractions: six little-endian doubles per slab (each exactly a dyadic rational),
    zlib-compressed and base64-encoded; the edges from the region."""
    edges = slab_edges(region)
    n = len(edges) - 1
    if not isinstance(stored, dict) or stored.get("encoding") != "float64-le-zlib-base64" or stored.get("count") != n:
        raise CheckFailed("format", f"{where}: the slabs are not {n} slabs encoded as float64-le-zlib-base64")
    try:
        raw = zlib.decompress(base64.b64decode(stored["hulls"], validate=True))
    except (ValueError, TypeError, zlib.error) as exc:
        raise CheckFailed("format", f"{where}: the slabs are not base64 of zlib data ({exc})") from None
    if len(raw) != 48 * n:
        raise CheckFailed("format", f"{where}: {len(raw)} bytes of slabs for {n} slabs of 6 doubles")
    values = struct.unpack(f"<{6 * n}d", raw)
    if not all(math.isfinite(v) for v in values):
        raise CheckFailed("format", f"{where}: a slab hull is not a finite number")
    return [(edges[k], edges[k + 1], *(Fraction(v) for v in values[6 * k:6 * k + 6])) for k in range(n)]


def check_slabs(results: list, cell: dict) -> list:
    """Each stated slab hull contains the hull of the boxes inside the slab, and every box lies in a slab."""
    slabs = decode_slabs(cell["slabs"], cell["region"], f"cell {cell['path'] or 'root'}")
    los, within = [sl[0] for sl in slabs], [[] for _ in slabs]
    for r in results:                               # a box lies in the slab whose lower edge is the last <= its own
        k = bisect.bisect_right(los, r[0][0]) - 1
        if k >= 0 and r[0][1] <= slabs[k][1]:
            within[k].append(r)
    seen = 0
    for sl, inner in zip(slabs, within):
        seen += len(inner)
        if not inner:
            continue
        lo = [min(r[k][0] for r in inner) for k in (1, 2, 3)]
        hi = [max(r[k][1] for r in inner) for k in (1, 2, 3)]
        if not (sl[2] <= lo[0] and sl[3] >= hi[0] and sl[4] <= lo[1] and sl[5] >= hi[1] and sl[6] <= lo[2]
                and sl[7] >= hi[2]):
            raise CheckFailed("shells", f"cell {cell['path'] or 'root'}: the slab u in [{float(sl[0]):.6g}, "
                              f"{float(sl[1]):.6g}] states enclosures tighter than its boxes give")
    if seen != len(results):
        raise CheckFailed("shells", f"cell {cell['path'] or 'root'}: {len(results) - seen} boxes lie in no slab")
    return slabs


def slab_hull(slabs: list):
    def h(lo, hi):
        sel = [sl for sl in slabs if sl[0] <= hi and sl[1] >= lo]
        if not sel:
            raise CheckFailed("shells", f"no slab meets u in [{lo}, {hi}]")
        return ((min(x[2] for x in sel), max(x[3] for x in sel)), (min(x[4] for x in sel), max(x[5] for x in sel)),
                (min(x[6] for x in sel), max(x[7] for x in sel)))
    return h


def entry_kind(cell: dict) -> str:
    """How the cell's members enter R: one of ENTRY_KINDS ("taylor" for a cell without "entry")."""
    kind = cell.get("entry", {"kind": "taylor"})
    kind = kind.get("kind") if isinstance(kind, dict) else None
    if kind not in ENTRY_KINDS:
        raise CheckFailed("format", f"cell {cell['path'] or 'root'}: unknown entry kind {kind!r} (this checker reads "
                          f"{', '.join(ENTRY_KINDS)})")
    return kind


def _tube_entry(F: Formulas, cell: dict, P: list, reg: dict, formulas) -> tuple:
    results = check_region(F, reg, P)
    zs, leaves = check_tube(F, cell, P, results, formulas)
    return zs, results, f"tube of {leaves} boxes"


def _stated_z(cell: dict, z0: tuple) -> list:
    zs = [frac(v) for v in cell["z_at_T0"]]
    if not (zs[0] <= z0[0] and zs[1] >= z0[1]):
        raise CheckFailed("prefix-in-region", f"cell {cell['path'] or 'root'}: z(T0) stated {zs}, verified {z0}")
    return zs


def _taylor_entry(F: Formulas, cell: dict, P: list, reg: dict, formulas) -> tuple:
    z0, _ = check_prefix(F, P, {"T0": cell["T0"], "end": cell["prefix_end"]}, reg, None, ())
    return _stated_z(cell, z0), check_region(F, reg, P), "Taylor prefix"


def _tree_entry(prefix: type, what: str):
    """A split prefix's tree replayed on states of class ``prefix`` (check_split_prefix); its dropped pieces rest on
    the stated kappa, checked here to hold the cell's y/x (check_kappa)."""

    def check(F: Formulas, cell: dict, P: list, reg: dict, formulas) -> tuple:
        ent = cell["entry"]
        kappa = tuple(frac(v) for v in ent["kappa"]) if "kappa" in ent else None
        if kappa is not None:
            check_kappa(F, cell, kappa, formulas)
        z0, leaves = check_split_prefix(F, P, ent | {"T0": cell["T0"]}, reg, kappa, prefix)
        return _stated_z(cell, z0), check_region(F, reg, P), f"{what} of {leaves} leaves"
    return check


# How a cell's members enter R, by the file's entry kind: function(F, cell, P, region, formulas) -> (z(T0) as
# stated, the region's boxes, a description)
ENTRY_CHECKS = {"taylor": _taylor_entry, "tube": _tube_entry, "split": _tree_entry(Prefix, "split Taylor prefix"),
                "monotone": _tree_entry(CappedPrefix, "split Taylor prefix capped by the monotone box")}
ENTRY_KINDS = tuple(ENTRY_CHECKS)


def check_cell(F: Formulas, cell: dict, log, formulas: dict | None = None) -> tuple:
    """One cell of a family: parameters, invariants, region, entry (Taylor prefix or tube), slabs and normalised
    limits (``formulas``: the parameters in the ranged names, :func:`family_ties`). Returns its (z0 at T0 as stated,
    slab rows); a failure names the cell."""
    try:
        return _check_cell(F, cell, log, formulas)
    except CheckFailed as exc:
        where = f"cell {cell.get('path') or 'root'}"
        if exc.detail.startswith(where):
            raise
        raise CheckFailed(exc.step, f"{where}: {exc.detail}") from None


def _check_cell(F: Formulas, cell: dict, log, formulas: dict | None = None) -> tuple:
    if formulas is not None:
        check_cell_parameters(cell, formulas)
    P = check_cell_invariants(F, cell)
    reg = cell["region"]
    zs, results, how = ENTRY_CHECKS[entry_kind(cell)](F, cell, P, reg, formulas)
    slabs = check_slabs(results, cell)
    hull = slab_hull(slabs)
    deep = hull(Fraction(0), frac(reg["u0"]) * frac(reg["ratio"]) ** int(reg["shells"]))
    last = {"a": deep[0][0], "b": deep[0][1], "Lt": deep[1], "W": deep[2]}
    check_limits(cell["normalised_limits"], last, Fraction(1))
    log("cell", f"{cell['path'] or 'root'}: {len(results)} boxes, T0 = {cell['T0']} ({how})")
    return zs, slabs


def checked_cell(map_spec: dict, bits: int, cell: dict, ties: dict) -> tuple:
    """One cell's re-check on its own (a Dask task: its inputs and outputs are plain data): (the log lines, z0,
    the slab rows), or (None, the failed step, why) (the checker's exception class is its module's, which on a
    worker is not the class of the ``python -m`` run that reads the result)."""
    ctx.prec = bits
    lines = []
    try:
        zs, slabs = check_cell(Formulas(map_spec), cell, lambda step, detail: lines.append((step, detail)), ties)
    except CheckFailed as exc:
        return None, exc.step, exc.detail
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        return None, "format", f"cell {cell.get('path') or 'root'}: the file lacks or misstates an entry " \
                               f"({type(exc).__name__}: {exc})"
    return lines, zs, slabs


def checked_cells(F: Formulas, cert: dict, ties: dict, log, workers: int = 1) -> dict:
    """{path: (cell, z0, slab rows)} of every cell, each re-checked (:func:`check_cell`); with ``workers`` > 1 on a
    dask.distributed LocalCluster of that many single-threaded processes (dask imported here only: the checker
    needs nothing of the toolkit), the cells in any order, the first failure raised."""
    cells = cert["cells"]
    if workers <= 1 or len(cells) < 2:
        return {c["path"]: (c, *check_cell(F, c, log, ties)) for c in cells}
    from dask.distributed import Client, LocalCluster, as_completed  # heavy: dask
    # ``python -m recheck`` runs recheck/__main__.py, which imports this module by its name: Dask ships the task by
    # reference (never a copy of a __main__ module with flint's context, whose precision the task then sets in vain)
    task = checked_cell
    out = {}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        futures = {client.submit(task, cert["map"], int(cert["bits"]), c, ties, pure=False): c for c in cells}
        for fut in as_completed(futures):
            cell = futures[fut]
            lines, zs, slabs = fut.result()
            if lines is None:
                raise CheckFailed(zs, slabs)
            for step, detail in lines:
                log(step, detail)
            out[cell["path"]] = (cell, zs, slabs)
    return out


def check_family(cert: dict, F: Formulas, log, workers: int = 1) -> None:
    """A family certificate: the cells cover the family, each cell closes, the table holds the cells' limits, and
    each stated member's shells and bounds follow from its cell."""
    spec, cells = cert["spec"], cert["cells"]
    target = {n: _range(n, pair) for n, pair in spec["ranges"].items()}
    gap = cover_gap([{n: _range(n, pair) for n, pair in c["box"].items()} for c in cells], target)
    if gap is not None:
        raise CheckFailed("family-cover", f"no cell covers {gap}")
    log("family-cover", f"{len(cells)} cells cover the family {spec['ranges']}")
    ties = family_ties(spec)
    check_ties(ties, spec.get("parameters"), spec["ranges"])
    log("regime", f"the family's options are in the model's scope; its parameters: {_text(ties)}")
    if any(entry_kind(c) == "tube" for c in cells):
        check_linearity(F)
        log("tube-linearity", "alpha' - alpha = x A^(alpha, E; s), delta' - delta = y D^(alpha, E; s) (exact)")
    by_path = checked_cells(F, cert, ties, log, workers)
    for q, (lo, hi) in cert["normalised_limits"].items():
        if not all(frac(lo) <= frac(c["normalised_limits"][q][0]) and frac(c["normalised_limits"][q][1]) <= frac(hi)
                   for c in cells):
            raise CheckFailed("limits", f"the family's lim {q}/leading_{q} [{lo}, {hi}] does not hold every cell's")
    log("limits", "the family's table of normalised limits holds every cell's")
    for m in cert.get("members", []):
        if m.get("cell") not in by_path:
            raise CheckFailed("members", f"member {m.get('values')}: its cell {m.get('cell')!r} is not in the file")
        cell, z0, slabs = by_path[m["cell"]]
        check_member(F, m, cell, z0, slab_hull(slabs), ties)
    log("members", f"{len(cert.get('members', []))} members' shells and bounds")


def check_member(F: Formulas, m: dict, cell: dict, z0, hull, ties: dict) -> None:
    """A stated member: its parameters are its values' by the model's ties, its values lie in its cell's box, its
    invariants in the cell's, and its shells and bounds follow from the cell's slab hulls with its own c."""
    values = {k: frac(v) for k, v in m["values"].items()}
    params = {k: frac(v) for k, v in m["parameters"].items()}
    if set(values) != set(cell["box"]) or params != tie_values(ties, values):
        raise CheckFailed("members", f"member {m['values']}: its parameters are not its values' by the family's ties")
    if not all(frac(lo) <= values[n] <= frac(hi) for n, (lo, hi) in cell["box"].items()):
        raise CheckFailed("members", f"member {m['values']}: not in its cell's box {cell['box']}")
    alg = RFAlg(sorted(params))
    P = tuple(_rf_value(F("invariants", n, {k: alg.var(k) for k in params}, alg), params) for n in PARAM_NAMES)
    if not all(frac(lo) <= p <= frac(hi) for p, (lo, hi) in zip(P, cell["invariants"])):
        raise CheckFailed("members", f"member {m['values']}: its invariants {P} are not in its cell's box")
    pre = {q: _rf_value(F("prefactors", q, {k: alg.var(k) for k in params}, alg), params)
           for q in ("excess_loss", "s_err2", "w_err2")}
    if any(pre[q] != frac(m["prefactors"][q]) for q in pre):
        raise CheckFailed("members", f"member {m['values']}: prefactors stated {m['prefactors']}, recomputed {pre}")
    c = F("coordinates", "c", dict(zip(PARAM_NAMES, P)), Frac)
    shells = read_shells(m["shells"])
    check_shells(shells, hull, cell["region"], c, tuple(z0))
    prof = Profile(cell["region"])
    check_bounds(m["bounds"], int(cell["T0"]), {}, lambda t: tail(shells, t, F, list(P), pre, prof))


def check_formulas(cert: dict, log=lambda step, detail: None) -> Formulas:
    """The file's formulas, once checked: the coordinates are the reduced map, every derivative is one, and the
    reduced map is the model's (map-identities, model). Sets Arb's precision to the file's."""
    ctx.prec = int(cert["bits"])
    F = Formulas(cert["map"])
    check_map_identities(F)
    check_derivatives(F)
    log("map-identities", "the coordinates are the reduced map, and the derivatives are derivatives (exact "
        "rational identities)")
    check_model(F)
    log("model", "the reduced map and observables are the gradient step of the model's loss, derived here "
        "(sigma = identity, per-column loss in (alpha, delta))")
    return F


def check_query_cell(cert: dict, cell: dict, values: dict, log=lambda step, detail: None) -> list:
    """What a query of a family file (``verify certify --family F --query ...``) re-checks before it answers from
    ``cell``: the file's formulas (:func:`check_formulas`), the family's ties to the model, the member ``values``
    (ranged name -> exact value) inside the cell's box with its invariants inside the cell's invariant box, and the
    cell in full (:func:`check_cell`: its parameters, region, entry, slabs and limits). Returns the log lines; Arb's
    precision is restored after."""
    lines, prec = [], ctx.prec

    def keep(step, detail):
        lines.append((step, detail))
        log(step, detail)
    try:
        F = check_formulas(cert, keep)
        spec = cert["spec"]
        ties = family_ties(spec)
        check_ties(ties, spec.get("parameters"), spec["ranges"])
        keep("regime", f"the family's options are in the model's scope; its parameters: {_text(ties)}")
        where = f"cell {cell['path'] or 'root'}"
        vals = {k: Fraction(v) for k, v in values.items()}
        if set(vals) != set(cell["box"]) or not all(frac(lo) <= vals[n] <= frac(hi) for n, (lo, hi) in
                                                   cell["box"].items()):
            raise CheckFailed("members", f"the member {values} is not in {where}'s box {cell['box']}")
        params = tie_values(ties, vals)
        inv = [evaluate(F.trees[("invariants", n)], params, Frac) for n in PARAM_NAMES]
        if not all(frac(lo) <= p <= frac(hi) for p, (lo, hi) in zip(inv, cell["invariants"])):
            raise CheckFailed("members", f"the member's invariants {inv} are not in {where}'s {cell['invariants']}")
        if entry_kind(cell) == "tube":
            check_linearity(F)
        check_cell(F, cell, keep, ties)
        return lines
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        raise CheckFailed("format", f"the file lacks or misstates an entry ({type(exc).__name__}: {exc})") from None
    finally:
        ctx.prec = prec


def check_file(path: str, log=lambda step, detail: None, workers: int = 1) -> dict:
    """Re-check a certificate file; raises CheckFailed naming the first failing step (a family's cells on
    ``workers`` Dask processes when > 1)."""
    try:
        with open(path) as fh:
            cert = json.load(fh)
    except (OSError, ValueError) as exc:
        raise CheckFailed("format", f"cannot read {path}: {exc}") from None
    if not isinstance(cert, dict) or cert.get("format") != "verify-certificate":
        raise CheckFailed("format", f"{path} is not a verify-certificate file")
    if cert.get("version") != VERSION:
        raise CheckFailed("format", f"{path} is a verify-certificate file of version {cert.get('version')}; this "
                          f"checker reads version {VERSION} (re-save it with verify certify ... --save FILE)")
    F = check_formulas(cert, log)
    if cert["kind"] == "slow-manifold":
        check_regime(cert, F, log)
    elif cert["kind"] == "family":
        check_family(cert, F, log, workers)
    else:
        raise CheckFailed("format", f"unknown certificate kind {cert['kind']!r}")
    return cert


INCREMENTS = (("da", "alpha_increment"), ("dd", "delta_increment"))
DERIVATIVES = (  # (group of the derivative, its name, group of the function, function, variable, times E?)
    *[("jacobian", f"{b}_alpha", "reduced_map", f, "alpha", False) for b, f in INCREMENTS],
    *[("jacobian", f"{b}_delta", "reduced_map", f, "E", True) for b, f in INCREMENTS],
    *[("jacobian", f"{b}_{q}", "reduced_map", f, q, False) for b, f in INCREMENTS for q in PARAM_NAMES],
    *[("state", f"{g}_{v}", "state", g, v, False) for g in ("u", "eps") for v in ("alpha",) + PARAM_NAMES],
    *[("state", f"{g}_delta", "state", g, "E", True) for g in ("u", "eps")],
    *[("coordinates", f"{g}_{v}", "coordinates", g, v, False) for g in ("G", "loss_ratio", "W") for v in ("u", "epsilon")],
)


def check_derivatives(F: Formulas) -> None:
    """Every stated derivative is the exact derivative of its formula (d/d delta = E d/dE); and the state's u and
    eps are the coordinates' u(E) and (alpha - alpha*(u))/u^3."""
    alg = RFAlg(IDENTITY_VARS)
    v = {n: alg.var(n) for n in IDENTITY_VARS}
    for dg, dn, fg, fn, var, times_E in DERIVATIVES:
        d = F(fg, fn, v, alg).derivative(var)
        if times_E:
            d = d * v["E"]
        if not F(dg, dn, v, alg).equals(d):
            raise CheckFailed("map-identities", f"{dg}.{dn} is not the derivative of {fg}.{fn} in {var}")
    u = F("coordinates", "u_of_E", v, alg)
    eps = (v["alpha"] - F("coordinates", "alpha_star", v | {"u": u}, alg)) / alg.power(u, 3)
    if not (F("state", "u", v, alg).equals(u) and F("state", "eps", v, alg).equals(eps)):
        raise CheckFailed("map-identities", "state.u, state.eps are not u(E) and (alpha - alpha*(u))/u^3")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    workers = 1
    if len(argv) == 3 and argv[1] == "--workers":
        try:
            workers = int(argv.pop(2))
        except ValueError:
            workers = 0
        argv.pop(1)
    if len(argv) != 1 or not 1 <= workers <= 64:
        print("usage: python -m recheck FILE [--workers N] (N in 1..64: a family's cells on N Dask "
              "processes)", file=sys.stderr)
        return 2
    return report_check(lambda path, log: check_file(path, log, workers), argv[0], "certificate")


def report_check(check, path: str, what: str) -> int:
    """Run ``check(path, log)``, printing each step it passed, then the trusted statements and "<what> verified"
    (exit status 0), or the step that failed (1): the output of every re-checker's command line."""
    def log(step, detail):
        print(f"ok  {step}: {detail}")
    try:
        cert = check(path, log)
    except CheckFailed as exc:
        print(f"FAILED {exc.step}: {exc.detail}")
        return 1
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        print(f"FAILED format: the file lacks or misstates an entry ({type(exc).__name__}: {exc})")
        return 1
    for t in cert.get("trusts", []):
        print(f"trusted: {t['statement']} ({t['proof']})")
    print(f"{what} verified: {path}")
    return 0


