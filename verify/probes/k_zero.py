"""Probe ``k-zero`` (reviewer Q4): K = 0, S* = 0, so the teacher output is identically sigma(0) = 0. S* = 0 is
not a member of the teacher class and lies outside Theorem 3.1's 0 < K < D: what happens there is reported as
the toolkit's finding, never as a verdict on the theorem.

With W_V(0) = 0 the student output is sigma(0) too: the residual is 0 for every input, so the loss is L_opt from
step 0 and every gradient (the expectation of 2 x residual x d output/d parameter) vanishes, whatever sigma is:
W_X, W_P and S never move (:func:`stationary_start_step`, proved for every registered sigma the hypotheses admit;
for odd sigma also through the reduced recursion, whose case k-zero has (alpha, delta) = (0, 0) as a fixed
point). So ||W_X - V*||_F = ||V*||_F and ||S - S*||_F = ||S(0)||_F = sqrt(N/D) for all t: V* is not
identifiable (any V* gives the same data), and neither limit is approached.
"""
from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from ..derive.reduced_map import reduced, reduced_step_exprs
from ..evidence import compare, proof, record
from ..model import symbols as sy
from ..model.flags import setting_command
from ..model.hypotheses import admitted_sigmas
from ..model.profiles import per_profile
from ..model.sigmas import parse_sigma
from ..plotting import (COLOURS, COMPUTED, Drawing, figure_legend, finite, floats, label_axes, need, new_figure,
                        note, series, shown, symbol, title_words)
from . import Probe, register
from .support.figures import legend_entry, runs_of, suptitle
from .support.proofs import REDUCTION_HYPOTHESES, fixed_point, identity_step, reduction_proof
from .support.findings import finding, reference, scope_of
from .support.runs import classify_series, fits_json, labels, regime_entry, run_series, trimmed
from .support.convention import regime_setting, replay_command

HYPOTHESES = ("K=0",) + reference() + REDUCTION_HYPOTHESES
# every registered sigma family's representatives these hypotheses admit: the stationary start holds for any sigma
SIGMAS = admitted_sigmas(HYPOTHESES)
REGIMES = {"sts K=0 D=5": dict(D=5, K=0, preset="sts", M=2, d=3, eta="1/2", vstar_norm="3/2"),
           "sts K=0 D=3 erf": dict(D=3, K=0, preset="sts", eta="1/2", vstar_norm="1", sigma="erf"),
           "sts K=0 D=16": dict(D=16, K=0, preset="sts", M=3, d=2, eta="1", vstar_norm="2")}
SIZES = per_profile({"ci": {"steps": 300, "regimes": ("sts K=0 D=5", "sts K=0 D=3 erf")},
                     "dev": {"steps": 1000, "regimes": tuple(REGIMES)},
                     "deep": {"steps": 3000, "regimes": tuple(REGIMES)}})
TOL = 1e-12
THRESHOLD = {"value": TOL, "why": "absolute: L - L_opt, and |full - reduced| and |parameter error - closed form| of "
                                  "loss, s_err, w_err: both engines run an exact 0-gradient start in float64, so "
                                  "any value above rounding (1e-16 of O(1) values) would be a real departure"}


@lru_cache(maxsize=None)
def fixed_point_step(sigma) -> dict:
    """At K = 0 and zero initialisation, (alpha, delta) = (0, 0) is a fixed point of the reduced step with
    loss r = 0 (SymPy, for ``sigma``); it uses K = 0 and the zero start."""
    a_next, inc = reduced_step_exprs(sigma, "k-zero")
    r = reduced(sigma, "k-zero").r
    return identity_step(f"[K = 0] (alpha, delta) = (0, 0) is a fixed point and r(0) = 0, sigma = {sigma.spec()}",
                         [fixed_point(a_next, sy.alpha), inc, fixed_point(r, sy.alpha)], sigma.spec(), "K=0",
                         "zero-init")


def start_residual_and_gradients(sigma, teacher=0) -> list:
    """One sample's loss at the zero student and its derivatives in W_X's scale a, W_P's offset m and a logit l,
    with the teacher's pre-activation ``teacher`` x h (0 at K = 0: S* = 0), as SymPy expressions in (g, h, l).

    The sample loss is (sigma(u) - sigma(z))^2 with the student's pre-activation u = (a g + m) w(l): a on a Gaussian
    coordinate g, the offset m, an attention weight w(l) (the output W_V X S is linear in W_V, and S enters only
    through such weights), and z = teacher x h."""
    a, m, g, h, l = sp.symbols("a m g h l", real=True)
    u = (a * g + m) * sp.exp(l) / (1 + sp.exp(l))
    loss = (sigma.expr(u) - sigma.expr(teacher * h)) ** 2
    start = {a: 0, m: 0}
    return [sp.simplify(e.subs(start)) for e in [loss] + [sp.diff(loss, v) for v in (a, m, l)]]


@lru_cache(maxsize=None)
def stationary_start_step(sigma) -> dict:
    """At K = 0 (S* = 0) and zero initialisation GD never moves, for any sigma (SymPy, for ``sigma``).

    At the zero student the residual sigma(0) - sigma(0) is 0 for every input, and the sample loss's derivatives in
    W_X, W_P and S vanish identically (:func:`start_residual_and_gradients`): each is 2 x residual x d u/d
    parameter. The population gradient is their expectation, so every GD step is 0 whatever the entry law. No
    parity of sigma is used (the reduction's W_P step needs sigma odd: verify.derive.reduction_proof.parity_obligation)."""
    return identity_step(f"[K = 0] at the zero start the residual and every gradient vanish, sigma = {sigma.spec()}",
                         start_residual_and_gradients(sigma), sigma.spec(), "K=0", "zero-init",
                         detail="sample loss (sigma((a g + m) w(l)) - sigma(0))^2 at a = m = 0 and its derivatives "
                                "in a (W_X), m (W_P), l (a logit of S)")


def runs(profile: str) -> dict:
    """Per regime: the reduced run, the full-matrix run on the same steps, the closed forms and the deviations."""
    steps = SIZES[profile]["steps"]
    out = {}
    for label in SIZES[profile]["regimes"]:
        s = regime_setting(reduced=True, **REGIMES[label])
        red = run_series(s, steps)
        full = run_series(s, steps, engine="full", checkpoints=red["step"])
        cf = {"s_err": math.sqrt(s.N / s.D), "w_err": math.sqrt(float(s.vstar_norm2()))}
        out[label] = {"setting": s, "series": red, "fits": classify_series(red), "numbers": {
            "s_err_closed_form": cf["s_err"], "s_err_range": [min(red["s_err"]), max(red["s_err"])],
            "w_err_closed_form": cf["w_err"], "w_err_range": [min(red["w_err"]), max(red["w_err"])],
            "max_excess_loss": max(red["excess_loss"]),
            "max_abs_dev_full_vs_reduced": max(abs(a - b) for k in ("excess_loss", "s_err", "w_err")
                                               for a, b in zip(full[k], red[k])),
            "max_abs_dev_from_closed_forms": max(abs(v - cf[k]) for k in cf for v in red[k] + full[k])}}
    return out


def run_record(label: str, r: dict, replay: str) -> dict:
    s, v = r["setting"], r["numbers"]
    T = r["series"]["step"][-1]
    devs = [v["max_excess_loss"], v["max_abs_dev_full_vs_reduced"], v["max_abs_dev_from_closed_forms"]]
    return record(f"{label}: reduced and full-matrix engines, t = 0..{T}", "float64", scope_of((s, T)),
                  f"max L - L_opt {v['max_excess_loss']:.1g}; s_err in [{v['s_err_range'][0]:.6g}, "
                  f"{v['s_err_range'][1]:.6g}] (sqrt(N/D) = {v['s_err_closed_form']:.6g}), w_err in "
                  f"[{v['w_err_range'][0]:.6g}, {v['w_err_range'][1]:.6g}] (||V*||_F = {v['w_err_closed_form']:.6g}); "
                  f"max |full - reduced| {v['max_abs_dev_full_vs_reduced']:.1e}", compare(devs, "<=", TOL),
                  threshold=THRESHOLD, replay=replay)


def findings(res: dict) -> list[str]:
    n = next(iter(res.values()))["numbers"]
    return [
        f"L - L_opt = {max(r['numbers']['max_excess_loss'] for r in res.values()):.1g} at every step: the zero "
        "student is already optimal.",
        f"||W_X - V*||_F stays {n['w_err_range'][0]:.6g} = ||V*||_F and ||S - S*||_F stays {n['s_err_range'][0]:.6g} "
        "= sqrt(N/D): neither parameter approaches the teacher's.",
        "The data do not determine V* or S* at all (y = sigma(0) = 0 whatever V* is), so parameter convergence cannot "
        "hold; the loss statement holds trivially. Same with sigma = erf; the full-matrix engine agrees. K = 0 is not "
        "a member of the teacher class (Theorem 3.1 assumes 0 < K < D).",
    ]


@register("k-zero")
class KZero(Probe):
    title = "K = 0: loss optimal from step 0; W_X and S never move (V* unidentifiable)"
    summary = title
    source = "reviewer question 4; Theorem 3.1 (0 < K < D)"
    questions = (4,)
    sizes = SIZES
    statements = (finding(
        "k-zero.frozen", "At K = 0 (S* = 0: not a member of the teacher class, outside Theorem 3.1's 0 < K < D), "
        "zero initialisation is a fixed point of GD: L - L_opt = 0 for every t, W_X(t) = 0 and S(t) stays uniform, so "
        "||W_X - V*||_F = ||V*||_F and ||S - S*||_F = sqrt(N/D) for every t (V* is not identifiable).", HYPOTHESES,
        about="theorem-3.1", relation="outside", sigma=SIGMAS),)

    def evaluate(self, profile):
        res = runs(profile)
        first = next(iter(res.values()))
        one = setting_command("run", first["setting"], "--steps", str(SIZES[profile]["steps"]), "--arithmetic",
                              "float64", "--json")
        sigmas = {r["setting"].sigma.spec(): r["setting"].sigma for r in res.values()}
        # route 1, every sigma of the statement: GD's gradient is 0 at the zero start (no reduction, no parity);
        # route 2, the runs' odd sigmas: the reduced recursion (which uses sigma's parity) has (0, 0) as a fixed point
        proofs = [proof(f"K = 0, sigma = {spec}: the zero start is stationary (every gradient 0)",
                        [stationary_start_step(parse_sigma(spec))], replay=one) for spec in SIGMAS]
        proofs += [reduction_proof(f"K = 0, sigma = {spec}: zero initialisation is a fixed point of the reduced "
                                   "recursion", sig, "k-zero", [fixed_point_step(sig)], one)
                   for spec, sig in sigmas.items() if sig.odd]
        ev = proofs + [run_record(lab, r, one) for lab, r in res.items()]
        return self.evaluation(
            {"k-zero.frozen": ev}, replay=replay_command("k-zero", profile, f"one regime: {one}"),
            regimes=[e for lab, r in res.items() for e in (
                regime_entry(r["setting"], SIZES[profile]["steps"], "reduced", label=lab),
                regime_entry(r["setting"], SIZES[profile]["steps"], "full", label=lab + " (check)"))],
            findings=findings(res), classification=labels(first["fits"]),
            fits={lab: fits_json(r["fits"]) for lab, r in res.items()},
            numbers={lab: r["numbers"] for lab, r in res.items()},
            data={lab: trimmed(r["series"]) for lab, r in res.items()})

    def draw(self, res: dict) -> Drawing:
        """Linear axes from 0: ||W_X - V*||_F and ||S - S*||_F stay at their starting values; L - L_opt only
        when it is not 0 throughout."""
        name = self.id
        regs = runs_of(res, name)
        numbers = res.get("numbers") or {}
        loss_max = max(max((abs(v) for v in floats(need(d, "excess_loss", f"probe {name}: data[{k!r}]"), name)),
                           default=0.0) for k, d in regs.items())
        qs = ["w_err", "s_err"] + (["excess_loss"] if loss_max != 0.0 else [])
        fig, axes = new_figure(len(qs), width=4.6)
        for ax, q in zip(axes[0], qs):
            _panel(ax, regs, numbers, q, name)
        figure_legend(fig, axes[0], ncols=2)
        msg = "L − L_opt = 0 at every step in every run (the zero student is already optimal), so it has no panel"
        if loss_max == 0.0:
            note(fig, msg + ".")
        suptitle(fig, "K = 0: the loss is optimal from step 0, and neither W_X nor S moves towards the teacher")
        return Drawing(fig, "K = 0 (linear axes): the distances ‖W_X − V*‖_F and ‖S − S*‖_F stay at their starting "
                            "values (closed forms dotted) and never approach 0."
                       + (f" {msg[:1].upper()}{msg[1:]}." if loss_max == 0.0 else ""))


def _panel(ax, regs: dict, numbers: dict, q: str, name: str) -> None:
    """One linear panel of ``q``: each run, its closed form (dotted) and the teacher's distance 0."""
    top = 0.0
    for i, (label, d) in enumerate(regs.items()):
        x, y = finite(*series(d, "step", q, f"probe {name}: data[{label!r}]"))
        ax.plot(x, y, color=COLOURS[i % 10], label=shown(label), **COMPUTED)
        top = max([top] + y)
        cf = (numbers.get(label) or {}).get(f"{q}_closed_form")
        if isinstance(cf, (int, float)):
            ax.axhline(cf, color=COLOURS[i % 10], lw=2.6, ls=(0, (2, 3)), alpha=0.8, label="_cf")
            top = max(top, cf)
    if any(isinstance((numbers.get(k) or {}).get(f"{q}_closed_form"), (int, float)) for k in regs):
        legend_entry(ax, "closed form: ‖V*‖_F and √(N/D) (dotted, colour of its run)", color="0.35", lw=2.6,
                     ls=(0, (2, 3)))
    ax.axhline(0.0, color="black", lw=1.0, ls=":", label="0 (distance at the teacher)")
    ax.set_ylim(-0.05 * (top or 1), 1.2 * (top or 1))
    label_axes(ax, "GD step t", symbol(q), f"{title_words(q)} {symbol(q)}")
