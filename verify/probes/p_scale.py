"""Probe ``p-scale`` (reviewer Q12): positional encodings with P^T P = lambda I, and a non-orthogonal P.

P^T P = lambda I: the logits are P^T W_KQ P, and the (3.4) gradient is P G P^T, so one step changes the
logits by -eta_KQ P^T P G P^T P = -eta_KQ lambda^2 G: the run is the lambda = 1 run with eta_KQ replaced by
eta_KQ lambda^2 (verify.derive.reduced_map carries the factor lambda^2, and nothing else of P; W_P stays 0). The probe
proves this from the reduced step (SymPy) and checks it with the reduced and the full engines.

A sinusoidal P (Vaswani et al.; not orthogonal, p_structure = general) is outside P^T P = lambda I. It is
reported beside the equivalence, not as its consequence: GD still reaches the teacher with power-law tails in
the regime run (full engine), but the columns of S are no longer two-valued and Lemma C.2's step-size threshold
2K/(c_L v N) no longer keeps the rows of W_X positive multiples of V* (alpha(3) < 0 at eta c_L v N = 99/25 < 4,
a regime `verify fuzz --claim lemma-C.2` found).

The sinusoidal findings are also decided over a finite horizon by the certified full-matrix engine (Arb balls, no
reduction assumed; verify.evidence.ball_facts): a ball of alpha(3) entirely below 0, and, in the tails' regime, L - L_opt
falling at every step t <= H with the secant exponents over [H/2, H] near the claimed ones. The balls enclose the
trajectory of the setting's sinusoidal P, whose entries are the float64 values of the encoding taken as exact
(verify.model.setting.Setting.p_exact).
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from ..derive.reduced_map import reduced_step_exprs
from ..evidence import compare, dims_of, record
from ..evidence.ball_facts import ball_run, decide_margins, fact_record, interval, show
from ..evidence.regime_records import runs_scope
from ..model import symbols as sy
from ..model.flags import setting_command
from ..model.hypotheses import step_x
from ..model.profiles import per_profile
from ..model.quantities import KEYS
from ..plotting import COLOURS, Drawing, coincide, figure_legend, floats, new_figure, note
from . import Probe, register
from .support.certified import secant_numbers, tail_records
from .support.figures import rate_panels, runs_of, suptitle
from .support.interior import claimed_t_exponents
from .support.proofs import REDUCTION_HYPOTHESES, identity_step, reduction_proof
from .support.findings import finding, reference, scope_of
from .support.runs import classify_series, fits_json, labels, regime_entry, run_series, trimmed
from .support.convention import judged_hypotheses, regime_setting, replay_command

LAMBDA = Fraction(4)
BASE = dict(D=8, K=2, preset="sts", eta="1/2", vstar_norm="1")
SMALL = dict(D=4, K=2, preset="sts", eta="1/2", vstar_norm="1")
# outside P^T P = lambda I, found by the fuzzer of lemma-C.2: eta c_L v N = 99/25 is below 2K/(c_L v N) = 4
C2_BREAK = dict(D=4, K=2, preset="sts", M=1, d=1, eta="99/25", vstar_norm="2", p_kind="sinusoidal",
                p_structure="general")
C2_STEPS = 5
C2_BITS = 256           # the balls of this regime stay bounded for about 16 steps at 256 bits
# ball_steps, bits: the certified horizon of the sinusoidal tails and the Arb precision that reaches it (2048 bits
# last about 670 steps here: the wrapping effect of verify.engines.fullarb)
SIZES = per_profile({"ci": {"steps": 20_000, "full_steps": 300, "sin_steps": 20_000, "ball_steps": 600, "bits": 2048},
                     "dev": {"steps": 200_000, "full_steps": 1000, "sin_steps": 100_000, "ball_steps": 1000,
                             "bits": 4096},
                     "deep": {"steps": 2_000_000, "full_steps": 3000, "sin_steps": 300_000, "ball_steps": 2000,
                              "bits": 8192}})
DEV_TOL = 1e-9
DEV_THRESHOLD = {"value": DEV_TOL, "why": "max relative difference of loss, s_err, w_err between two float64 runs of "
                                          "the same exact trajectory: rounding differs by ~1e-15 relative per step, "
                                          "well below 1e-9 over these horizons"}
EXP_TOL = 0.05
EXP_THRESHOLD = {"value": EXP_TOL, "why": "|fitted - claimed exponent| over the last decade of T >= 20000: the "
                                          "next-order correction O(T^-1/2) shifts such a slope by a few 1e-2"}
ALPHA_THRESHOLD = {"value": "min_t alpha(t) < 0 (float64 and 30-digit mpmath agree on the sign)",
                   "why": "Lemma C.2's conclusion is alpha(t) > 0; a negative alpha reached by both arithmetics, "
                          "with |alpha| >= 0.1, is not rounding"}


@lru_cache(maxsize=None)
def equivalence_step(sigma) -> dict:
    """In the reduced step, lambda enters only through eta_KQ lambda^2 (SymPy: the step with (lambda, eta_KQ)
    minus the step with (1, eta_KQ lambda^2) is 0 for alpha and delta); uses P^T P = lambda I."""
    a_next, inc = reduced_step_exprs(sigma, "interior")
    swap = {sy.lam: 1, sy.eta_kq: sy.eta_kq * sy.lam**2}
    return identity_step("[0 < K < D] the reduced step with (lambda, eta_KQ) equals the step with (1, eta_KQ lambda^2)",
                         [a_next - a_next.subs(swap, simultaneous=True), inc - inc.subs(swap, simultaneous=True)],
                         sigma.spec(), "orthogonal-P", "0<K<D")


def max_rel_dev(a: dict, b: dict, keys=KEYS) -> float:
    return max(abs(x - y) / max(abs(y), 1e-300) for k in keys for x, y in zip(a[k], b[k]))


def runs(profile: str) -> dict:
    """P^T P = lambda I against eta_KQ lambda^2 (compiled reduced engine; the full engine on the first steps),
    a sinusoidal P against P = I, and the run that breaks Lemma C.2's threshold (float64 and mpmath)."""
    n = SIZES[profile]
    s_lam = regime_setting(reduced=True, **BASE, p_lambda=str(LAMBDA))
    s_eq = regime_setting(reduced=True, **BASE, eta_kq=str(Fraction(1, 2) * LAMBDA**2))
    red_lam, red_eq = run_series(s_lam, n["steps"], fast=True), run_series(s_eq, n["steps"], fast=True)
    cps = [t for t in red_lam["step"] if t <= n["full_steps"]]
    full_lam = run_series(s_lam, n["full_steps"], engine="full", checkpoints=cps)
    s_sin = regime_setting(**SMALL, p_kind="sinusoidal", p_structure="general")
    s_id = regime_setting(reduced=True, **SMALL)
    sin, ide = run_series(s_sin, n["sin_steps"], engine="full"), run_series(s_id, n["sin_steps"], fast=True)
    s_c2 = regime_setting(**C2_BREAK)
    c2 = {a: run_series(s_c2, C2_STEPS, engine="full", arithmetic=a, dps=30 if a == "mpmath" else None,
                        checkpoints=range(C2_STEPS + 1))["alpha"] for a in ("float64", "mpmath")}
    return {"s_lam": s_lam, "s_eq": s_eq, "s_sin": s_sin, "s_id": s_id, "s_c2": s_c2, "red_lam": red_lam,
            "red_eq": red_eq, "sin": sin, "ide": ide, "c2_alpha": c2, "sizes": n,
            "dev_red": max_rel_dev(red_lam, red_eq),
            "dev_full": max_rel_dev(full_lam, {k: v[:len(cps)] for k, v in red_eq.items()}),
            "f_sin": classify_series(sin), "f_lam": classify_series(red_lam), "f_id": classify_series(ide)}


def equivalence_records(r: dict, replay: str) -> list[dict]:
    n = r["sizes"]
    one = setting_command("run", r["s_lam"], "--steps", str(n["steps"]), "--json")
    return [reduction_proof("P^T P = lambda I is eta_KQ -> eta_KQ lambda^2 (the reduced recursion, sigma = identity)",
                            r["s_lam"].sigma, "interior", [equivalence_step(r["s_lam"].sigma)], one),
            record(f"P^T P = {LAMBDA} I vs (P^T P = I, eta_KQ x {LAMBDA ** 2}), reduced engine, {n['steps']} steps",
                   "float64", scope_of((r["s_lam"], n["steps"]), (r["s_eq"], n["steps"])),
                   f"max relative difference {r['dev_red']:.1e}", compare(r["dev_red"], "<=", DEV_TOL),
                   threshold=DEV_THRESHOLD, replay=replay),
            record(f"the same with the full-matrix engine (no reduction assumed), {n['full_steps']} steps", "float64",
                   scope_of((r["s_lam"], n["full_steps"])), f"max relative difference {r['dev_full']:.1e}",
                   compare(r["dev_full"], "<=", DEV_TOL), threshold=DEV_THRESHOLD, replay=replay)]


def sinusoidal_records(r: dict, replay: str) -> tuple[list, list]:
    """(tails of the sinusoidal-P run, the run breaking Lemma C.2's threshold)."""
    T, f = r["sizes"]["sin_steps"], r["f_sin"]
    devs = [abs(f[q].exponent - claimed_t_exponents()[q]) if f[q].exponent is not None else float("nan") for q in KEYS]
    tails = record(f"sinusoidal P (full engine): tail exponents at T = {T}", "float64", scope_of((r["s_sin"], T)),
                   ", ".join(f"{q} {f[q].label} (claimed {claimed_t_exponents()[q]:g})" for q in KEYS),
                   compare(devs, "<=", EXP_TOL), threshold=EXP_THRESHOLD, replay=replay)
    a = r["c2_alpha"]
    lo = {k: min(v) for k, v in a.items()}
    at = a["float64"].index(lo["float64"])
    neg = compare([lo["float64"], lo["mpmath"]], "<=", -0.1)
    c2 = record(f"sinusoidal P, eta c_L v N = 99/25 < 2K = 4 (full engine, float64 and 30-digit mpmath), t <= {C2_STEPS}",
                "mpmath", scope_of((r["s_c2"], C2_STEPS)),
                f"alpha(t) = {', '.join(f'{x:.4g}' for x in a['mpmath'])}: alpha({at}) = {lo['mpmath']:.4g} < 0 below "
                "the threshold 2K/(c_L v N) (float64: " + f"{lo['float64']:.4g})", neg, threshold=ALPHA_THRESHOLD,
                replay=setting_command("run", r["s_c2"], "--steps", str(C2_STEPS), "--engine", "full", "--arithmetic",
                                       "mpmath", "--json"))
    return [tails], [c2]


SIN_HYPOTHESES = ("identity", "0<K<D") + reference("orthogonal-P")
C2_HYPOTHESES = ("identity", "K>0", "eta-stable") + reference("orthogonal-P")


def negative_alpha(run):
    """"alpha_m(t) < 0 for some row m and some t <= H" (H = C2_STEPS, or a replay's longer horizon) by the balls."""
    with run.precision():
        return decide_margins([(t, -a) for t in sorted(run.seen) for a in run.seen[t]["record"].alpha], some=True)


def describe_alpha(run, fact) -> str:
    al = ", ".join(show(run.seen[t]["record"].alpha[0], 5) for t in sorted(run.seen))
    return (f"alpha(t), t = 0..{run.last}: {al}; "
            + (f"the ball of alpha({fact.at}) lies entirely below 0" if fact.holds else
               "every ball of alpha lies entirely at or above 0" if fact.holds is False else
               "no ball decides the sign"))


def certified_records(profile: str, c2=None, sin=None) -> tuple[list, list, dict]:
    """(the certified alpha < 0 record, the certified tail records, numbers): the certified full-matrix engine on the
    regime breaking Lemma C.2's threshold (``c2``) and on the sinusoidal tails' regime (``sin``)."""
    n = SIZES[profile]
    s_c2 = c2 or regime_setting(**C2_BREAK)
    s_sin = sin or regime_setting(**SMALL, p_kind="sinusoidal", p_structure="general")
    run = ball_run(s_c2, C2_STEPS, C2_BITS)
    neg = fact_record(f"P = {s_c2.p_kind}, eta c_L v N = {step_x(s_c2)} < 2K = {2 * s_c2.K}: Arb balls of alpha(t), "
                      f"t <= {C2_STEPS} (certified full engine, {C2_BITS} bits)", run, negative_alpha, describe_alpha,
                      hypotheses=judged_hypotheses(C2_HYPOTHESES), bound=f"the ball of some alpha_m(t), t <= {C2_STEPS}, lies entirely "
                                                     "below 0")
    tails = ball_run(s_sin, n["ball_steps"], n["bits"])
    return [neg], tail_records(f"P = {s_sin.p_kind}", tails, SIN_HYPOTHESES), {
        "alpha_balls": [interval(a) for t in sorted(run.seen) for a in run.seen[t]["record"].alpha],
        "sinusoidal_secant_exponents": secant_numbers(tails), "sinusoidal_certified_horizon": tails.last}


def findings(r: dict) -> list[str]:
    n, f = r["sizes"], r["f_sin"]
    ratio = {q: r["sin"][q][-1] / r["ide"][q][-1] for q in KEYS}
    lo = min(r["c2_alpha"]["mpmath"])
    return [
        f"P^T P = {LAMBDA} I and (P^T P = I, eta_KQ x {LAMBDA ** 2}) give the same trajectory: max relative difference "
        f"{r['dev_red']:.1e} (reduced engine, {n['steps']} steps) and {r['dev_full']:.1e} (full engine vs reduced, "
        f"{n['full_steps']} steps); in the reduced step lambda enters only through eta_KQ lambda^2 (proved). A scaled "
        "orthogonal P only rescales the attention step size by lambda^2.",
        f"Sinusoidal P (not orthogonal, full engine): tails {', '.join(f[q].label for q in KEYS)}, the exponents of "
        f"the orthogonal case; at T = {n['sin_steps']} the ratios to the identity-P run are "
        + ", ".join(f"{k} {v:.3g}" for k, v in ratio.items()) + ".",
        f"But a sinusoidal P is outside P^T P = lambda I: at eta c_L v N = 99/25, below Lemma C.2's threshold 2K = 4, "
        f"alpha reaches {lo:.3g} < 0 within {C2_STEPS} steps (the threshold 2K/(c_L v N) is derived for two-valued "
        "columns of S, which need P^T P = lambda I). So a fixed orthogonal P is not without loss of generality for "
        "the lemma's step-size range.",
    ]


P_NAMES = {"lambda": "PᵀP = λI", "equivalent": "PᵀP = I with η_KQ · λ²", "sinusoidal": "sinusoidal P (not orthogonal)",
           "identity_P": "P = I (comparison)"}
P_STYLES = {"lambda": {"color": COLOURS[0], "lw": 4.0},
            "equivalent": {"color": COLOURS[1], "lw": 1.6, "ls": (0, (4, 2))},
            "sinusoidal": {"color": COLOURS[2]}, "identity_P": {"color": COLOURS[3]}}


@register("p-scale")
class PScale(Probe):
    title = "P^T P = lambda I is eta_KQ -> eta_KQ lambda^2; a sinusoidal P is outside it"
    summary = title
    source = "reviewer question 12; the model's P^T P = lambda I; Lemma C.2"
    questions = (12,)
    sizes = SIZES
    statements = (
        finding("p-scale.lambda-equivalence", "For positional encodings with P^T P = lambda I (zero initialisation, "
                "W_P = 0), GD is the P = I run with eta_KQ replaced by lambda^2 eta_KQ: lambda enters the recursion "
                "only through eta_KQ lambda^2.", ("identity", "0<K<D") + reference("unit-lambda", "one-eta")
                + REDUCTION_HYPOTHESES,
                about="theorem-3.1", relation="outside"),
        finding("p-scale.sinusoidal-tails", "With a sinusoidal positional encoding (not orthogonal: outside P^T P = "
                "lambda I), GD still reaches the teacher with Theorem 3.1's claimed T-exponents in the regime run "
                "(sts, D = 4, K = 2, full-matrix engine).", SIN_HYPOTHESES, about="theorem-3.1-lower-T",
                relation="outside"),
        finding("p-scale.sinusoidal-finite-horizon", "With a sinusoidal P (outside P^T P = lambda I; sts, D = 4, "
                "K = 2, eta = 1/2), the exact GD trajectory, enclosed over t <= H by Arb balls of the full-matrix "
                "recursion (no reduction assumed; H = " + ", ".join(f"{SIZES[p]['ball_steps']} at {p}" for p in SIZES)
                + "): L - L_opt falls at every step, and the secant exponents log(q(H)/q(H/2))/log 2 of L - L_opt, "
                "||S - S*||_F and ||W_X - V*||_F lie within 1/10 of the claimed -1, -1/2, -1/2.", SIN_HYPOTHESES,
                about="theorem-3.1-lower-T", relation="outside", dims=(dims_of(regime_setting(reduced=True, **SMALL)),)),
        finding("p-scale.sinusoidal-lemma-C2", "With a sinusoidal P (outside P^T P = lambda I), Lemma C.2's step-size "
                "threshold no longer keeps the rows of W_X positive multiples of V*: at eta c_L v N = 99/25 < 2K = 4 "
                "(sts, D = 4, K = 2, ||V*|| = 2) alpha turns negative within 5 steps.",
                C2_HYPOTHESES, about="lemma-C.2", relation="outside"),
    )

    def evaluate(self, profile):
        r = runs(profile)
        n = r["sizes"]
        replay = replay_command("p-scale", profile)
        tails, c2 = sinusoidal_records(r, replay)
        neg, certified_tails, balls = certified_records(profile)
        return self.evaluation(
            {"p-scale.lambda-equivalence": equivalence_records(r, replay), "p-scale.sinusoidal-tails": tails,
             "p-scale.sinusoidal-finite-horizon": certified_tails, "p-scale.sinusoidal-lemma-C2": c2 + neg},
            replay=replay,
            regimes=[regime_entry(r["s_lam"], n["steps"], "reduced (compiled float64)", label=f"P^T P = {LAMBDA} I"),
                     regime_entry(r["s_eq"], n["steps"], "reduced (compiled float64)",
                                  label=f"P^T P = I, eta_KQ = eta * {LAMBDA ** 2}"),
                     regime_entry(r["s_lam"], n["full_steps"], "full", label=f"P^T P = {LAMBDA} I (full engine)"),
                     regime_entry(r["s_sin"], n["sin_steps"], "full", label="sinusoidal P, p_structure = general"),
                     regime_entry(r["s_id"], n["sin_steps"], "reduced (compiled float64)",
                                  label="identity P (comparison)"),
                     regime_entry(r["s_c2"], C2_STEPS, "full", "mpmath", label="sinusoidal P, eta = 99/25 (Lemma C.2)")],
            findings=findings(r), classification=labels(r["f_sin"]),
            fits={"sinusoidal": fits_json(r["f_sin"]), "lambda": fits_json(r["f_lam"]),
                  "identity_P": fits_json(r["f_id"])},
            numbers={"max_rel_dev_reduced": r["dev_red"], "max_rel_dev_full_vs_reduced": r["dev_full"],
                     "sinusoidal_over_identity_at_T": {q: r["sin"][q][-1] / r["ide"][q][-1] for q in KEYS},
                     "sinusoidal_exponents": {q: r["f_sin"][q].exponent for q in KEYS},
                     "sinusoidal_lemma_C2_alpha": r["c2_alpha"]["mpmath"], "certified": balls},
            data={"lambda": trimmed(r["red_lam"]), "equivalent": trimmed(r["red_eq"]), "sinusoidal": trimmed(r["sin"]),
                  "identity_P": trimmed(r["ide"])},
            scopes={"p-scale.sinusoidal-finite-horizon": runs_scope(
                        [regime_setting(**SMALL, p_kind="sinusoidal", p_structure="general")], n["ball_steps"]),
                    "p-scale.sinusoidal-lemma-C2": runs_scope([regime_setting(**C2_BREAK)], C2_STEPS)})

    def draw(self, res: dict) -> Drawing:
        name = self.id
        regs = runs_of(res, name)
        lam = next((r["config"].get("p_lambda") for r in res.get("regimes") or []
                    if isinstance(r, dict) and isinstance(r.get("config"), dict) and r["config"].get("p_lambda") not in
                    (None, "1", 1)), None)
        names = {k: v.replace("λ²", f"λ² (λ = {lam})") if lam and k == "equivalent" else v for k, v in P_NAMES.items()}
        fig, axes = new_figure(3, width=4.4)
        rate_panels(axes[0], regs, name, names=names, leading=False, anchor="identity_P", styles=P_STYLES)
        figure_legend(fig, axes[0], ncols=3)
        notes = []
        if "lambda" in regs and "equivalent" in regs and all(
                coincide([floats(regs["lambda"][q], name), floats(regs["equivalent"][q], name)]) for q in KEYS):
            notes.append("the PᵀP = λI and η_KQ · λ² runs are identical (curves overlap by design: a scaled "
                         "orthogonal P only rescales the attention step by λ²)")
        text = "; ".join(notes)[:1].upper() + "; ".join(notes)[1:] + "." if notes else ""
        if notes:
            note(fig, text)
        suptitle(fig, "Positional encodings: PᵀP = λI is a step-size change; a sinusoidal P keeps the tails in the "
                      "regime run")
        return Drawing(fig, "Log–log: L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F for a scaled orthogonal P, the "
                            "equivalent step size, a sinusoidal (non-orthogonal) P and P = I, with the claimed slopes "
                            "(dotted black). " + text)
