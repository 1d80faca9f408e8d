"""The groups of exported theorems: a registry, one function per group, each returning its Coq files.

Each group takes its statements from the objects the toolkit proves them with, never from text typed here:

- ``reduction``: the reduced recursion of sigma = identity (verify.derive.stability's identities (*) and the
  delta step, verify.derive.reduced_map's column quantities), field identities in symbolic D, K, N with e^delta a
  positive real E;
- ``lemma-C.2``: the small-step induction, the SMT obligations of verify.derive.stability.positivity_obligations
  (their formulas, from the same ``build`` both solvers decided), with its negative controls;
- ``invariants``: verify.derive.invariants' map equals its invariant form with r, x, y written in the
  parameters (a field identity: after the substitution no other parameter is free);
- ``comparison-lemma``: the all-time certificate's discrete comparison lemma, its three inequalities (the SMT
  obligations of verify.certify.comparison);
- ``certificate-map``: the identities tying the all-time certificate's G, R, Q, eps' to the reduced map
  (verify.certify.coordinates' SymPy obligations, their lhs = rhs), on the certificate's domain;
- ``trapping-region``: a saved all-time certificate's box checks as CoqInterval goals, one per box, and a box
  moved past the region's edge as the negative control (verify.coq.trapping); options ``certificate`` (the
  file; default the bench regime's, verify.coq.trapping.bench_certificate) and ``boxes`` (the first N only).

The tactic that proves an obligation is chosen here per obligation key (a proof plan): the statement is the
obligation's, the script only says how the kernel is to be convinced.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..certify.comparison import lemma_obligations
from ..model.symbols import D, K, N, alpha, beta, c_loss, delta, eta_kq, eta_v, lam, var, vn
from ..run.cache import by_code_version
from .theorems import CoqFile, Theorem, variables_of
from .trapping import bench_certificate, trapping_files

GROUPS = {}
OPTIONS = {}          # group -> the export options its function takes (verify export --certificate, --boxes)
OWN_BENCH = set()     # groups `verify bench` measures with a target of their own (not in the all-groups figure)


def group(name: str, options: tuple = (), own_bench: bool = False):
    """Register ``f(**options) -> list[CoqFile]`` as the exporter of group ``name``."""
    def deco(f):
        GROUPS[name], OPTIONS[name] = f, tuple(options)
        if own_bench:
            OWN_BENCH.add(name)
        return f
    return deco


E = sp.Symbol("E", positive=True)     # e^delta

# Destruct every disjunction among the hypotheses (n = 0 or n >= 1: a count of entries), substituting n = 0.
CASES = "repeat match goal with H : _ \\/ _ |- _ => destruct H end; try subst"
FIELD = "intros; field; repeat split; nra."


def _cite(thm: Theorem) -> str:
    """Ltac that adds ``thm``'s conclusion to the context, its hypotheses discharged from the context."""
    args = " ".join(v.name for v in thm.variables)
    h = "H_" + thm.name
    return f"pose proof ({thm.name} {args}) as {h}; repeat (specialize ({h} ltac:(assumption)))"


def _positive_hypotheses(symbols) -> tuple:
    """'s > 0' for every symbol SymPy knows to be positive (the assumptions the identity was proved under)."""
    return tuple(sp.StrictGreaterThan(s, 0, evaluate=False) for s in symbols if s.is_positive)


def identity_theorem(name, obligation, lhs, rhs, extra=(), key="", expect="accepted", tactic=FIELD) -> Theorem:
    """forall symbols, (each positive one > 0) -> extra -> lhs = rhs, with e^delta a positive real E."""
    lhs, rhs = (sp.sympify(e).subs(sp.exp(delta), E).subs(delta, sp.log(E)) for e in (lhs, rhs))
    if lhs.has(sp.exp, sp.log) or rhs.has(sp.exp, sp.log):
        raise ValueError(f"{name}: not rational in e^delta")
    concl = sp.Eq(lhs, rhs, evaluate=False)
    syms = variables_of(extra, concl)
    return Theorem(name, obligation, syms, _positive_hypotheses(syms) + tuple(extra), concl, tactic, key, expect)


# ---- reduction (sigma = identity) ---------------------------------------------------------------------
@group("reduction")
def reduction_files() -> list[CoqFile]:
    """(*) alpha' = (1 - x ||s||^2) alpha + x <s,s*> for 0 < K < D and K = D, the delta step's closed form, and the
    column quantities of two-valued softmax columns."""
    from ..derive.reduced_map import column_quantities, reduced, reduced_step_exprs  # heavy: loads numpy
    from ..model.sigmas.identity import Identity  # heavy: loads numpy
    interior = (sp.StrictGreaterThan(D - K, 0, evaluate=False),)
    out = []
    for case, extra in (("interior", interior), ("k-equals-d", ())):
        a_next, _ = reduced_step_exprs(Identity(), case)
        cols = reduced(Identity(), case).cols
        rhs = (1 - eta_v * c_loss * var * N * cols["sq_s"]) * alpha + eta_v * c_loss * var * N * cols["c_ss"]
        out.append(identity_theorem(f"alpha_recursion_{case.replace('-', '_')}",
                                    f"[{case}] alpha(t+1) = (1 - eta_V c_L v ||S||^2) alpha(t) + eta_V c_L v <S,S*> "
                                    "(verify.derive.reduced_map's step, sigma = identity)", a_next, rhs, extra,
                                    key=f"alpha-recursion-{case}"))
    _, inc = reduced_step_exprs(Identity(), "interior")
    Ee = sp.exp(delta)
    Z = K * Ee + D - K
    p_on, p_off = Ee / Z, 1 / Z
    kappa = eta_kq * lam**2 * beta**2 * c_loss * var * D * vn / K
    out.append(identity_theorem("delta_step", "delta(t+1) - delta(t) = kappa p_on p_off alpha (1 - alpha K (p_on - "
                                "p_off)), kappa = eta_KQ lambda^2 beta^2 c_L v D ||v*_m||^2 / K (sigma = identity)",
                                inc, kappa * p_on * p_off * alpha * (1 - alpha * K * (p_on - p_off)), interior,
                                key="delta-step"))
    cq = column_quantities("interior")
    for q, want, text in (("sq_s", K * p_on**2 + (D - K) * p_off**2, "||s||^2 = K p_on^2 + (D - K) p_off^2"),
                          ("c_ss", K * p_on / K, "<s, s*> = K p_on (1/K)"),
                          ("p", K * p_on, "support mass = K p_on")):
        out.append(identity_theorem(f"column_{q}", f"two-valued softmax column (logit delta on K entries, 0 on D - K): "
                                    f"{text}", cq[q], want, interior, key=f"column-{q}"))
    return [CoqFile("reduction", "reduction", "reals", tuple(out))]


# ---- Lemma C.2, small steps ---------------------------------------------------------------------------
# Proof plans by key. The factor 1 - x ||s||^2 times Z^2 is K E^2 (K - x) + n (n - x) + 2 K E n: nra needs the
# products K (K - x) and E^2 as facts; the step is alpha * factor + x E Z with both terms' signs from the
# column lemmas.
C2_PLANS = {
    "c2-positive": lambda cite: f"intros; {CASES}; nra.",
    "c2-factor": lambda cite: ("intros; assert (0 <= K * (K - x)) by nra; assert (0 < E * E) by nra; "
                               f"assert (0 <= K * E) by nra; {CASES}; nra."),
    "c2-step": lambda cite: f"intros; {cite['c2-factor']}; {cite['c2-positive']}; nra.",
    "c2-base": lambda cite: "intros; lra.",
}
C2_PLANS["c2-outside-large-x"] = C2_PLANS["c2-step"]      # the same proof, without its hypothesis: must fail
C2_PLANS["c2-outside-k-zero"] = C2_PLANS["c2-step"]


def smt_theorem(ob, tactic: str, name: str | None = None, expect: str | None = None) -> Theorem:
    """An SMT obligation (verify.derive.obligations.Obligation with a formula) as a theorem."""
    if ob.formula is None:
        raise ValueError(f"obligation {ob.name!r} carries no formula")
    hyp, concl = ob.formula
    name = name or ob.key.replace("-", "_")
    expect = expect or ("rejected" if ob.role == "outside" else "accepted")
    return Theorem(name, ob.name, variables_of(hyp, concl), tuple(hyp), concl, tactic, ob.key, expect)


def c2_theorems(obligations) -> tuple:
    """The small-step induction's SMT obligations that have a plan, as theorems (lemmas first: the step cites
    them)."""
    done, cite = [], {}
    for ob in obligations:
        if ob.key in C2_PLANS and ob.formula is not None:
            thm = smt_theorem(ob, "")
            thm = Theorem(thm.name, thm.obligation, thm.variables, thm.hypotheses, thm.conclusion,
                          C2_PLANS[ob.key](cite), thm.key, thm.expect,
                          tuple(c for k, c in cite.items() if k in ("c2-factor", "c2-positive")) if ob.key in (
                              "c2-step", "c2-outside-large-x", "c2-outside-k-zero") else ())
            if ob.role == "test":
                cite[ob.key] = _cite(thm)
            done.append(thm)
    return tuple(done)


def c2_obligations():
    from ..derive.stability import positivity_obligations  # heavy: loads numpy
    obs = positivity_obligations().obligations
    order = ["c2-positive", "c2-factor", "c2-step", "c2-base", "c2-outside-large-x", "c2-outside-k-zero"]
    return sorted((o for o in obs if o.key in order), key=lambda o: order.index(o.key))


@group("lemma-C.2")
def lemma_c2_files() -> list[CoqFile]:
    """Lemma C.2's small-step induction (sigma = identity, x <= min(K, D - K)): positive column, factor, step, base,
    then the two negative controls (each in a file of its own: a rejected theorem stops only its file)."""
    thms = c2_theorems(c2_obligations())
    tests = tuple(t for t in thms if t.expect == "accepted")
    lemmas = tuple(t for t in tests if t.key in ("c2-positive", "c2-factor"))
    files = [CoqFile("lemma_C_2", "lemma-C.2", "reals", tests)]
    for t in thms:
        if t.expect == "rejected":
            files.append(CoqFile(f"lemma_C_2_{t.name}", "lemma-C.2", "reals", lemmas + (t,)))
    return files


# ---- invariants ---------------------------------------------------------------------------------------
@group("invariants")
def invariant_files() -> list[CoqFile]:
    """alpha' and delta' - delta, in the ten parameters, equal their invariant forms in (r, x, y) with r = D/K - 1,
    x = eta_V c_L v N/K, y = eta_KQ c_L v lambda^2 beta^2 ||V*||^2/K^2 written back: the map depends on the
    parameters only through r, x, y."""
    from ..derive.invariants import DEFINITIONS, invariant_map, step_map  # heavy: loads numpy
    im = invariant_map()
    out = []
    for key, e, f in (("alpha-map", step_map()[0], im.a_next), ("increment", step_map()[1], im.inc)):
        back = f.subs(DEFINITIONS, simultaneous=True)
        out.append(identity_theorem(f"invariant_{key.replace('-', '_')}",
                                    f"{key}: the map in the parameters equals its invariant form, which has no free "
                                    "symbol but alpha, e^delta, r, x, y (r, x, y written in the parameters)", e, back,
                                    (sp.StrictGreaterThan(D - K, 0, evaluate=False),), key=f"{key}-invariant"))
    return [CoqFile("invariants", "invariants", "reals", tuple(out))]


# ---- the all-time certificate's comparison lemma -------------------------------------------------------
# Proof plans by obligation name (verify.certify.comparison.lemma_obligations), with Y = q x^2, A = a x^2,
# B = b x^2 in (0, 1):
#   lower:     1 - (1 - Y)^2 (1 + 2A) = 2 Y^2 (1 - Y) + Y^2 + 2 (1 - Y)^2 (Y - A) >= 0;
#   upper:     (1 - Y)^2 >= (1 - B)^2 and (1 - B)^2 (1 + 2B) + 3B^2 = 1 + 2B^3, so the right side is at least
#              (1 - B)^2 (1 + 2 B^3);
#   monotone:  x (1 - b y)^2 - y (1 - b x)^2 = (x - y)(1 - b^2 x y) <= 0.
_ORDERED = "intros; assert (0 < q*x2) by nra; assert (q*x2 <= b*x2) by nra; assert (q*x2 < 1) by lra"
LEMMA_PLANS = {
    "one-step-lower": (_ORDERED + "; assert (a*x2 <= q*x2) by nra; "
                       "assert (0 <= (q*x2)^2 * (1 - q*x2)) by (apply Rmult_le_pos; nra); "
                       "assert (0 <= (1 - q*x2)^2 * (q*x2 - a*x2)) by (apply Rmult_le_pos; nra); nra."),
    "one-step-upper": (_ORDERED + "; assert (0 < b*x2) by lra; assert (0 <= (1 - b*x2)^2) by nra; "
                       "assert (0 <= ((1 - q*x2)^2 - (1 - b*x2)^2) * ((1 - b*x2) ^ 2*(1 + 2*b*x2) + 3*(b*x2)^2)) "
                       "by (apply Rmult_le_pos; nra); "
                       "assert (0 <= (1 - b*x2)^2 * (b*x2)^3) by (apply Rmult_le_pos; nra); nra."),
    "step-error-monotone": ("intros; assert (b*x2 <= b*y2) by nra; assert (0 <= b*x2) by nra; "
                            "assert (0 <= (y2 - x2) * (1 - (b*x2)*(b*y2))) by (apply Rmult_le_pos; nra); "
                            "assert (0 <= b^2 * ((y2 - x2) * (1 - (b*x2)*(b*y2)))) by (apply Rmult_le_pos; nra); "
                            "nra."),
}


@group("comparison-lemma")
def comparison_lemma_files() -> list[CoqFile]:
    """The discrete comparison lemma's inequalities (verify.certify.comparison; every all-time certificate cites
    them): the one-step bounds on z = 1/x^2 and the monotonicity of the step error, from the formulas z3 and cvc5
    decided. The certificate's boxes are the trapping-region group's."""
    out = []
    for ob in lemma_obligations():
        if ob.name in LEMMA_PLANS and ob.formula is not None:
            hyp, concl = ob.formula
            out.append(Theorem(ob.name.replace("-", "_"), ob.statement, variables_of(hyp, concl), tuple(hyp),
                               concl, LEMMA_PLANS[ob.name], ob.name))
    return [CoqFile("comparison_lemma", "comparison-lemma", "reals", tuple(out))]


# ---- the all-time certificate's map in slow-manifold coordinates --------------------------------------
# The identities that tie the certificate's G, R, Q and eps' (verify.certify.coordinates) to the reduced map, as
# SymPy stated and decided them. They hold as rational functions, wherever both sides are defined; the
# hypotheses are the certificate's domain, under which every denominator is positive: u in (0, 1) (u = r/(e^delta
# + r)), G > 0 (each box proves it before using R and Q), the other symbols positive as SymPy declares them. The
# plans give field's side conditions (denominators <> 0) their positivity facts: r (1 - u)^2 + u^2 > 0 (the
# column's K ||s||^2 times r) and c u^2 G X (1 - u) > 0 (R - 1).
_SS = ("assert (0 <= r * (1 - {v}) ^ 2) by (apply Rmult_le_pos; [lra | apply pow2_ge_0]); "
       "assert (0 < {v} ^ 2) by (apply pow_lt; lra)")
_R1 = "assert (0 < G * X * c * u ^ 2 * (1 - u)) by (repeat apply Rmult_lt_0_compat; try apply pow_lt; lra)"
_SIDE = "field; repeat split; intro; nra."
MAP_PLANS = {
    "increment-over-u2": f"intros; {_SS.format(v='u')}; {_SIDE}",
    "u-next-is-u-over-R": f"intros; {_R1}; {_SIDE}",
    "cubic-decay": f"intros; {_R1}; {_SIDE}",
    "eps-update": f"intros; {_SS.format(v='u')}; {_SS.format(v='w')}; {_SIDE}",
}


def map_domain(conclusion) -> tuple:
    """The certificate's domain beyond the symbols' signs: u < 1, and G > 0 where G appears."""
    from ..certify.coordinates import Gs, u  # heavy: loads numpy
    out = (sp.StrictLessThan(u, 1, evaluate=False),) if conclusion.has(u) else ()
    return out + ((sp.StrictGreaterThan(Gs, 0, evaluate=False),) if conclusion.has(Gs) else ())


@lru_cache(maxsize=None)
@by_code_version("coq-map-identities")
def map_identities() -> tuple:
    """(key, statement, lhs = rhs) of the identities of MAP_PLANS, from the obligations
    verify.certify.coordinates.slow_coordinates decided, kept on disk alone (loading every coordinate costs
    seconds)."""
    from ..certify.coordinates import slow_coordinates  # heavy: loads numpy
    obs = {o.name: o for o in slow_coordinates().obligations}
    return tuple((key, obs[key].statement, obs[key].formula[1]) for key in MAP_PLANS)


def map_theorems() -> tuple:
    """The identities of MAP_PLANS as theorems, in MAP_PLANS' order, on the certificate's domain (map_domain)."""
    return tuple(identity_theorem(key.replace("-", "_"), statement, concl.lhs, concl.rhs, map_domain(concl), key=key,
                                  tactic=MAP_PLANS[key]) for key, statement, concl in map_identities())


@group("certificate-map")
def certificate_map_files() -> list[CoqFile]:
    """The all-time certificate's coordinates tied to the reduced map (verify.certify.coordinates): the increment
    is c u^2 G, u' = u/R, (u - u')/u^3 = c Q, and eps' = (rho eps + DD c Q) R^3; with the trapping region's boxes
    (which bound G, R, Q, eps' by these formulas) and the comparison lemma, the certificate's chain after its Arb
    prefix."""
    return [CoqFile("certificate_map", "certificate-map", "reals", map_theorems())]


# ---- the all-time certificate's trapping region --------------------------------------------------------
@group("trapping-region", options=("certificate", "boxes"), own_bench=True)
def trapping_region_files(certificate=None, boxes=None) -> list[CoqFile]:
    """The box checks of a saved certificate file (default: the bench regime's), one theorem per box, and the
    negative control (verify.coq.trapping)."""
    return trapping_files(certificate or bench_certificate(), boxes)


@lru_cache(maxsize=None)
def files(groups: tuple = (), options: tuple = ()) -> tuple:
    """The Coq files of ``groups`` (all registered groups when empty), in registry order; ``options``: (name, value)
    pairs, each passed to the groups that take it (OPTIONS)."""
    names = groups or tuple(GROUPS)
    unknown = [g for g in names if g not in GROUPS]
    if unknown:
        raise ValueError(f"unknown group(s) {unknown}; groups: {sorted(GROUPS)}")
    opts = dict(options)
    return tuple(f for g in names for f in GROUPS[g](**{k: v for k, v in opts.items() if k in OPTIONS[g]}))


__all__ = ["GROUPS", "OPTIONS", "OWN_BENCH", "group", "files", "identity_theorem", "smt_theorem", "c2_theorems", "c2_obligations",
           "MAP_PLANS", "map_theorems"]
