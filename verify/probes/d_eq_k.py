"""Probe ``d-eq-k`` (reviewer Q3): K = D, S* is plain average pooling over all tokens, outside Theorem 3.1's
0 < K < D.

Here S(0) = S* (both uniform) and the logit gradient vanishes (verify.derive.reduction_proof, case K = D), so S
never moves and the W_X block is the linear recursion alpha -> alpha - x (alpha - 1)/D, x = eta c_L v N
(verify.derive.reduced_map, case k-equals-d). From alpha(0) = 0:
  1 - alpha(t) = q^t,  q = 1 - x/D,   ||W_X - V*||_F = ||V*||_F |q|^t,
  L - L_opt = c_L v N ||V*||_F^2 q^{2t} / (2 D),   ||S - S*||_F = 0,
and |q| < 1 exactly when 0 < x < 2D (hypothesis eta-geometric): geometric convergence, faster than any power
of T, so Theorem 3.1's Theta(1/T) lower bounds do not hold there. For x > 2D the same closed form grows
geometrically (D = K = 4, x = 9, i.e. eta = 9 in the reference convention: ||W_X - V*||_F = 1.25^30 = 808 at t = 30;
under another convention eta is chosen so that x = 9 again, e.g. eta = 9 M N under the mean loss).
"""
from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from . import Probe, register
from ..derive.reduced_map import reduced_step_exprs
from ..evidence import compare, record
from ..model import symbols as sy
from ..model.flags import setting_command
from ..model.hypotheses import hypothesis, step_x
from ..model.profiles import per_profile
from ..plotting import (COLOURS, COMPUTED, Drawing, figure_legend, finite, floats, keep_data_limits, label_axes,
                        need, new_figure, note, positive, positive_y, readable_ticks, series, shown, slope_guide,
                        symbol, title_words)
from .support.convention import regime_setting, replay_command
from .support.figures import legend_entry, runs_of, suptitle
from .support.interior import claimed_t_exponents
from .support.proofs import REDUCTION_HYPOTHESES, identity_step, implication_step, reduction_proof
from .support.findings import finding, reference, scope_of
from .support.runs import classify_series, fits_json, labels, regime_entry, run_series, trimmed

HYPOTHESES = ("identity", "K=D", "eta-geometric") + reference() + REDUCTION_HYPOTHESES
REGIMES = {"sts D=K=6": dict(D=6, K=6, preset="sts", M=2, d=2, eta="1/2", vstar_norm="1"),
           "gcn D=K=4": dict(D=4, K=4, preset="gcn", eta="1/4", vstar_norm="2"),
           "cnn D=K=8": dict(D=8, K=8, preset="cnn", M=2, d=3, eta="3", vstar_norm="3/2"),
           "gcn D=K=5": dict(D=5, K=5, preset="gcn", eta="3/5", vstar_norm="1")}
SIZES = per_profile({"ci": {"steps": 400, "full_steps": 120, "regimes": ("sts D=K=6", "gcn D=K=4")},
                     "dev": {"steps": 400, "full_steps": 400, "regimes": tuple(REGIMES)},
                     "deep": {"steps": 2000, "full_steps": 1000, "regimes": tuple(REGIMES)}})
# outside eta-geometric: x = eta c_L v N = 9 > 2D = 8, |q| = 5/4 (eta = 9 / (c_L v N) in the run's convention)
DIVERGENT = dict(D=4, K=4, preset="sts", vstar_norm="1")
DIVERGENT_X = 9
DIVERGENT_STEPS = 30
CF_TOL, CF_ABS = 1e-9, 1e-14
CF_THRESHOLD = {"value": f"|w_err - closed form| <= {CF_TOL:g} closed form + {CF_ABS:g} ||V*||_F",
                "why": "relative: float64 rounding of a contraction over these horizons stays below 1e-13; absolute: "
                       "w_err = ||V*||_F |1 - alpha| with alpha -> 1, whose float64 rounding is ~1e-16 per step, so "
                       "once the closed form falls below ~1e-14 ||V*||_F only the absolute floor is meaningful"}
FULL_THRESHOLD = {"value": 1e-12, "why": "absolute |w_err(full) - w_err(reduced)|: both are float64 iterations of the "
                                         "same exact map from the same start, O(1) values, ~1e-16 rounding per step"}
DIVERGENT_THRESHOLD = {"value": "||W_X - V*||_F(t) <= ||V*||_F",
                       "why": "a contraction never moves W_X farther from V* than its start W_X(0) = 0"}


@lru_cache(maxsize=None)
def closed_form_steps(sigma) -> tuple[dict, dict]:
    """The probe's two proof steps beside the reduction (verify.derive): at K = D the reduced step freezes
    delta and maps alpha -> alpha - x (alpha - 1)/D, solved from alpha(0) = 0 by alpha(t) = 1 - q^t with
    q = 1 - x/D (SymPy); and 0 < x < 2D makes |q| < 1 (z3 and cvc5). The first uses K = D and the zero start, the
    second the step-size hypothesis eta-geometric."""
    a_next, inc = reduced_step_exprs(sigma, "k-equals-d")
    t = sp.Symbol("t", nonnegative=True, integer=True)
    q = 1 - sy.eta_v * sy.c_loss * sy.var * sy.N / sy.D
    closed = lambda k: 1 - q**k  # noqa: E731
    solve = identity_step("[K = D] delta is frozen and alpha(t) = 1 - (1 - eta c_L v N/D)^t solves the reduced step "
                          "from alpha(0) = 0", [inc, a_next.subs(sy.alpha, closed(t)) - closed(t + 1), closed(0)],
                          sigma.spec(), "K=D", "zero-init", detail="alpha' = " + sp.sstr(sp.factor(a_next)))
    contract = implication_step("[K = D] 0 < x < 2D => |1 - x/D| < 1 (x = eta c_L v N)", contraction,
                                sigma.spec(), "eta-geometric")
    return solve, contract


def contraction(lib):
    """(hypotheses, conclusion) of the contraction step, written with the solver API ``lib``."""
    x, D = lib.Reals("x D")
    return [D > 0, x > 0, x < 2 * D], lib.And(1 - x / D < 1, 1 - x / D > -1)


def geometric_proof(sigma, replay: str) -> dict:
    """The proof record of the headline: the reduction at K = D, the closed form and the contraction."""
    return reduction_proof("K = D: S(t) = S* and 1 - alpha(t) = (1 - eta c_L v N/D)^t, |1 - eta c_L v N/D| < 1",
                           sigma, "k-equals-d", list(closed_form_steps(sigma)), replay)


def closed_form(setting, steps) -> tuple[list, list]:
    """(w_err, excess loss) at ``steps`` from the linear recursion (module docstring)."""
    x = float(step_x(setting))
    q, vn2 = 1 - x / setting.D, float(setting.vstar_norm2())
    return ([math.sqrt(vn2) * abs(q) ** t for t in steps],
            [x / float(setting.eta_v) * vn2 * q ** (2 * t) / (2 * setting.D) for t in steps])


def regime_numbers(s, red: dict, full: dict, w_cf: list, fits: dict) -> dict:
    """What one regime's runs measured against the closed form (module docstring)."""
    rate = -math.log(abs(1 - float(step_x(s)) / s.D))
    dev = [abs(a - b) for a, b in zip(red["w_err"], w_cf)]
    floor = CF_ABS * math.sqrt(float(s.vstar_norm2()))
    return {"predicted_rate_w_err": rate, "fitted_rate_w_err": fits["w_err"].rate,
            "predicted_rate_excess_loss": 2 * rate, "fitted_rate_excess_loss": fits["excess_loss"].rate,
            "max_rel_dev_w_err_vs_closed_form": max(a / b for a, b in zip(dev, w_cf) if b > 1e-300),
            "w_err_within_closed_form_tolerance": compare(dev, "<=", [CF_TOL * b + floor for b in w_cf]),
            "max_abs_s_err": max(red["s_err"]),
            "max_abs_dev_full_vs_reduced_w_err": max(abs(a - b) for a, b in zip(full["w_err"], red["w_err"]))}


def runs(profile: str) -> dict:
    """Per regime: the reduced run, the full-matrix check over the first steps, the closed forms and fits."""
    n = SIZES[profile]
    out = {}
    for label in n["regimes"]:
        s = regime_setting(reduced=True, **REGIMES[label])
        red = run_series(s, n["steps"])
        full = run_series(s, n["full_steps"], engine="full", checkpoints=[t for t in red["step"] if t <= n["full_steps"]])
        w_cf, l_cf = closed_form(s, red["step"])
        f = classify_series(red)
        out[label] = {"setting": s, "series": red, "fits": f, "w_cf": w_cf, "l_cf": l_cf, "full_steps": n["full_steps"],
                      "numbers": regime_numbers(s, red, full, w_cf, f)}
    return out


def divergent_run() -> dict:
    """D = K = 4, x = eta c_L v N = 9 > 2D: the closed form and the full-matrix engine at t = DIVERGENT_STEPS
    (eta solves x = 9 with the run's c_L, v and N)."""
    eta = DIVERGENT_X / step_x(regime_setting(**DIVERGENT, eta="1"))
    s = regime_setting(**DIVERGENT, eta=str(eta))
    ser = run_series(s, DIVERGENT_STEPS, engine="full", checkpoints=range(DIVERGENT_STEPS + 1))
    return {"setting": s, "w_err": ser["w_err"][-1], "closed_form": closed_form(s, [DIVERGENT_STEPS])[0][0],
            "x": step_x(s), "inside": hypothesis("eta-geometric").holds(s), "max_w_err": max(ser["w_err"])}


def divergent_record(div: dict) -> dict:
    """Outside eta-geometric: the closed form's growth, reported (role "outside", never deciding)."""
    s = div["setting"]
    return record(f"D = K = 4, eta = {s.eta_v} (x = eta c_L v N = {div['x']} > 2D = 8), full-matrix engine, t <= "
                  f"{DIVERGENT_STEPS}", "float64", scope_of((s, DIVERGENT_STEPS)),
                  f"||W_X - V*||_F = {div['w_err']:.4g} at t = {DIVERGENT_STEPS} (closed form ||V*||_F |1 - x/D|^t = "
                  f"{div['closed_form']:.4g}): GD diverges geometrically without the step-size condition",
                  compare(div["max_w_err"], "<=", math.sqrt(float(s.vstar_norm2()))), role="outside",
                  threshold=DIVERGENT_THRESHOLD, outside=f"eta_V c_L v N = {div['x']} >= 2D = {2 * s.D}",
                  replay=setting_command("run", s, "--steps", str(DIVERGENT_STEPS), "--engine", "full",
                                         "--arithmetic", "float64", "--json"))


def run_records(res: dict, replay: str) -> list[dict]:
    """Per regime: GD against the closed form, and the full-matrix engine (no symmetry assumed) against it."""
    out = []
    for label, r in res.items():
        s, v = r["setting"], r["numbers"]
        out.append(record(f"{label}: ||W_X - V*||_F against the closed form, t = 0..{r['series']['step'][-1]}",
                          "float64", scope_of((s, r["series"]["step"][-1])),
                          f"|w_err - closed form| <= {CF_TOL:g} closed form + {CF_ABS:g} ||V*||_F at every recorded "
                          f"step: {v['w_err_within_closed_form_tolerance']}; max ||S - S*||_F {v['max_abs_s_err']:.1g}",
                          v["w_err_within_closed_form_tolerance"], threshold=CF_THRESHOLD, replay=replay))
        full = r["full_steps"]
        out.append(record(f"{label}: full-matrix engine vs reduced, t = 0..{full}", "float64", scope_of((s, full)),
                          f"max |w_err difference| {v['max_abs_dev_full_vs_reduced_w_err']:.1e}",
                          compare(v["max_abs_dev_full_vs_reduced_w_err"], "<=", 1e-12), threshold=FULL_THRESHOLD,
                          replay=replay))
    return out


def findings(res: dict, div: dict) -> list[str]:
    n = next(iter(res.values()))["numbers"]
    return [
        "S(0) = S* exactly (both uniform pooling) and the W_KQ gradient is identically 0: S never moves, "
        f"||S - S*||_F = {max(r['numbers']['max_abs_s_err'] for r in res.values()):.1g} at every step.",
        "The W_X block is linear: ||W_X - V*||_F = ||V*||_F |1 - eta c_L v N/D|^t; fitted rate "
        f"{n['fitted_rate_w_err']:.6f} vs predicted -log|1 - eta c_L v N/D| = {n['predicted_rate_w_err']:.6f}; "
        f"loss rate {n['fitted_rate_excess_loss']:.6f} vs {n['predicted_rate_excess_loss']:.6f}.",
        "The full-matrix engine agrees with the reduced recursion (max |w_err difference| "
        f"{max(r['numbers']['max_abs_dev_full_vs_reduced_w_err'] for r in res.values()):.1e}).",
        f"The contraction needs eta c_L v N < 2D: at D = K = 4, eta = {div['setting'].eta_v} (x = {div['x']} > 8) ||W_X - V*||_F = "
        f"{div['w_err']:.4g} at t = {DIVERGENT_STEPS}.",
        "K = D is outside Theorem 3.1's 0 < K < D; there the case is easier (geometric convergence), not harder, and "
        "the proofs' division by D - K is an artefact.",
    ]


@register("d-eq-k")
class DEqK(Probe):
    title = "K = D: S is born equal to S*; the errors decay geometrically, not like 1/T"
    summary = title
    source = "reviewer question 3; Theorem 3.1 (0 < K < D)"
    questions = (3,)
    sizes = SIZES
    statements = (finding(
        "d-eq-k.geometric", "At K = D (S* is average pooling over all tokens: outside Theorem 3.1's 0 < K < D), with "
        "0 < eta c_L v N < 2D: S(t) = S* for every t and 1 - alpha(t) = (1 - eta c_L v N/D)^t, so ||S - S*||_F = 0 "
        "and ||W_X - V*||_F, L - L_opt decay geometrically: Theorem 3.1's Theta(1/T) lower bounds do not hold there.",
        HYPOTHESES, about="theorem-3.1-lower-T", relation="outside"),)

    def evaluate(self, profile):
        res, div = runs(profile), divergent_run()
        first = next(iter(res.values()))
        s0 = first["setting"]
        one = setting_command("run", s0, "--steps", str(SIZES[profile]["steps"]), "--arithmetic", "float64", "--json")
        replay = replay_command("d-eq-k", profile, f"one regime: {one}")
        rates = record("fitted geometric rates against -log|1 - eta c_L v N/D|", "float64",
                       scope_of(*[(r["setting"], r["series"]["step"][-1]) for r in res.values()]),
                       "; ".join(f"{lab}: w_err {r['numbers']['fitted_rate_w_err']:.6f} (predicted "
                                 f"{r['numbers']['predicted_rate_w_err']:.6f}), L - L_opt "
                                 f"{r['numbers']['fitted_rate_excess_loss']:.6f} (predicted "
                                 f"{r['numbers']['predicted_rate_excess_loss']:.6f})" for lab, r in res.items()),
                       None, role="context")
        ev = [geometric_proof(s0.sigma, one)] + run_records(res, one) + [rates, divergent_record(div)]
        return self.evaluation(
            {"d-eq-k.geometric": ev}, replay=replay,
            regimes=[e for lab, r in res.items() for e in (
                regime_entry(r["setting"], r["series"]["step"][-1], "reduced", label=lab),
                regime_entry(r["setting"], r["full_steps"], "full", label=lab + " (check)"))]
            + [regime_entry(div["setting"], DIVERGENT_STEPS, "full", label=f"D = K = 4, eta = {div['setting'].eta_v} (outside eta-geometric)")],
            findings=findings(res, div), classification=labels(first["fits"]),
            fits={lab: fits_json(r["fits"]) for lab, r in res.items()},
            numbers={lab: r["numbers"] for lab, r in res.items()} | {"divergent": {
                "eta": str(div["setting"].eta_v), "x": str(div["x"]), "steps": DIVERGENT_STEPS, "w_err": div["w_err"],
                "closed_form": div["closed_form"]}},
            data={lab: trimmed(r["series"]) | {"w_err_closed_form": r["w_cf"], "excess_loss_closed_form": r["l_cf"]}
                  for lab, r in res.items()})

    def draw(self, res: dict) -> Drawing:
        """Semilog-y (geometric decay is a straight line): ||W_X - V*||_F and L - L_opt with their closed forms,
        and the shapes of Theorem 3.1's 1/sqrt(T) and 1/T for contrast; ||S - S*||_F only when it is not 0."""
        name = self.id
        regs = runs_of(res, name)
        s_max = max(max((abs(v) for v in floats(need(d, "s_err", f"probe {name}: data[{k!r}]"), name)), default=0.0)
                    for k, d in regs.items())
        qs = ["w_err", "excess_loss"] + (["s_err"] if s_max != 0.0 else [])
        fig, axes = new_figure(len(qs), width=4.8)
        steps = [t for k, d in regs.items() for t in floats(need(d, "step", f"probe {name}: data[{k!r}]"), name)
                 if math.isfinite(t) and t > 0]
        floor_note = False
        for ax, q in zip(axes[0], qs):
            floor_note |= _panel(ax, regs, q, name, steps)
        figure_legend(fig, axes[0], ncols=2)
        notes = []
        if s_max == 0.0:
            notes.append("‖S − S*‖_F = 0 at every step in every run (S is born equal to S*), so it has no panel")
        if floor_note:
            notes.append("float64 GD stops at round-off (about 10⁻¹⁶ of its start) while the closed form keeps falling")
        note(fig, "; ".join(notes) + "." if notes else "")
        suptitle(fig, "K = D: the errors decay geometrically (straight lines on a log scale), not like a power of T")
        return Drawing(fig, "K = D (semilog-y): ‖W_X − V*‖_F and L − L_opt under GD (solid) and their closed forms "
                            "(dotted) fall on straight lines, i.e. geometrically; the dotted black curves have the "
                            "power-law shape Theorem 3.1 states, for contrast. "
                            + " ".join(n[:1].upper() + n[1:] + "." for n in notes))


def _panel(ax, regs: dict, q: str, name: str, steps: list) -> bool:
    """One semilog-y panel of quantity ``q``: each run, its closed form, and the claimed power-law shape through
    t = 1; True when float64 GD stopped at round-off while the closed form kept falling."""
    gd_all, floor = [], False
    for i, (label, d) in enumerate(regs.items()):
        where = f"probe {name}: data[{label!r}]"
        x, y = positive_y(*series(d, "step", q, where))
        ax.semilogy(x, y, color=COLOURS[i % 10], label=shown(label), **COMPUTED)
        gd_all += y
        if f"{q}_closed_form" in d:
            cx, cy = positive_y(*series(d, "step", f"{q}_closed_form", where))
            ax.semilogy(cx, cy, color=COLOURS[i % 10], label="_cf", lw=2.6, ls=(0, (2, 3)), alpha=0.8)
            gd = dict(zip(*finite(*series(d, "step", q, where))))
            floor |= any(v < 1e-14 * cy[0] and gd.get(t, v) > 2 * v for t, v in zip(cx, cy))
    if any(f"{q}_closed_form" in d for d in regs.values()):
        legend_entry(ax, "closed form (dotted, colour of its run)", color="0.35", lw=2.6, ls=(0, (2, 3)))
    if q in claimed_t_exponents():
        pick = max(regs, key=lambda k: (positive(*series(regs[k], "step", q, name))[1] or [0.0])[0])
        gx, gy = positive(*series(regs[pick], "step", q, name))
        slope_guide(ax, gx, gy, claimed_t_exponents()[q], "Theorem 3.1's rate (∝ 1/T for the loss, 1/√T for the "
                    "distances), through t = 1", at=0, xrange=(min(steps), max(steps)))
    keep_data_limits(ax, gd_all, log=True, pad=3.0)
    label_axes(ax, "GD step t", symbol(q), f"{title_words(q)} {symbol(q)}")
    readable_ticks(ax)
    return floor
