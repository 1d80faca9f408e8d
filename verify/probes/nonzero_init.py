"""Probe ``nonzero-init`` (reviewer Q2): a small random initialisation, outside Lemma C.2's zero-initialisation
hypothesis. What happens there is the toolkit's finding, never a verdict on the lemma.

Lemma C.2 says every row w_m of W_X stays a positive multiple of v*_m. From a random start this is false at
t = 0 by construction; the question is whether the off-span residual r_m(t) = || w_m - alpha_m v*_m ||
(alpha_m = <w_m, v*_m>/||v*_m||^2) decays. For sigma = identity (mean-0 law) the W_X gradient of row m is
var ||S||_F^2 w_m - var sum_j <s_j, s*_j> v*_m (+ terms along v*_m), so the off-span part obeys
r_m(t+1) = |1 - eta c_L v ||S(t)||_F^2| r_m(t): geometric decay at a rate set by ||S||_F^2 in [N/D, N/K]. The
probe checks this per-step factor against the run. W_P leaves 0 only through W_P P S; its part outside the
span of P S gets no gradient and stays.

Since ||s_j||^2 >= 1/D for every column (Cauchy-Schwarz) and ||s_j||^2 <= 1, the factor lies in
[1 - eta c_L v N, 1 - eta c_L v N/D]; so for eta c_L v N < 1, r_m(t+1) <= (1 - eta c_L v N/D) r_m(t): a geometric decay at a
rate the setting fixes. The certified full-matrix engine (Arb balls, no reduction assumed; verify.evidence.ball_facts)
decides this bound at every step t < H, and that r_m(0), r_m(1) are off the line of v*_m.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..engines import Arith
from ..engines.full import FullState
from ..evidence import compare, dims_of, record
from ..evidence.ball_facts import ball_run, decide_margins, exact, exceeds, fact_record, interval, show
from ..evidence.regime_records import runs_scope
from ..model.flags import setting_command
from ..model.hypotheses import step_x
from ..model.profiles import per_profile
from ..model.quantities import KEYS
from ..plotting import (COLOURS, COMPUTED, GUIDE, Drawing, figure_legend, finite, keep_data_limits, label_axes,
                        need, new_figure, positive, positive_y, readable_ticks, series, slope_guide, symbol,
                        title_words)
from . import Probe, register
from .support.classify import classify
from .support.figures import suptitle
from .support.interior import claimed_t_exponents
from .support.findings import finding, reference, scope_of
from .support.runs import classify_series, dense_checkpoints, fits_json, labels, regime_entry
from .support.convention import judged_hypotheses, regime_setting, replay_command

HYPOTHESES = ("identity", "0<K<D") + reference("zero-init")
# ball_steps, bits: the certified horizon and the Arb precision that reaches it (2048 bits last about 1100 steps
# here: the wrapping effect of verify.engines.fullarb)
SIZES = per_profile({"ci": {"steps": 6000, "seeds": (3,), "ball_steps": 600, "bits": 2048},
                     "dev": {"steps": 20_000, "seeds": (3, 4, 5), "ball_steps": 1000, "bits": 4096},
                     "deep": {"steps": 60_000, "seeds": (3, 4, 5, 6, 7, 8), "ball_steps": 2000, "bits": 8192}})
FACTOR_STEPS = 60
LAW_TOL = 1e-9
LAW_THRESHOLD = {"value": LAW_TOL,
                 "why": "max relative deviation of r(t+1) from |1 - eta c_L v ||S(t)||_F^2| r(t) over the first 60 steps: "
                        "the law is exact (the W_X gradient is v (||S||^2 W_X - <S,S*> V*) for any W_X), so only "
                        "float64 rounding (~1e-15 relative per step) separates the two"}
DECAY_THRESHOLD = {"value": "exponential fit of the residual, or residual < 1e-12 at T",
                   "why": "verify.probes.support.classify tells a geometric tail from a power law by the better of a "
                          "log-linear and a log-log fit over the last decade; 1e-12 is the float64 floor of an O(1) "
                          "residual"}
OFF_TOL = 1e-6
OFF_THRESHOLD = {"value": f"off-span residual > {OFF_TOL:g} at t = 0 and t = 1",
                 "why": "a row on the line of v*_m has residual 0 up to float64 rounding (1e-16 of O(0.1) entries); "
                        "1e-6 is far above it"}


def setting_for(seed: int):
    # Explicit V* rows: a seeded random V* would share the seed with the random W_X(0) and make W_X(0) a
    # multiple of V* (both drawn as the first M x d normals of default_rng(seed)).
    return regime_setting(D=4, K=2, preset="sts", M=2, d=3, vstar=[["1", "0", "0"], ["0", "3/5", "4/5"]], eta="1/2",
                        init="random", init_scale="1/10", seed=seed)


def run_with_offspan(setting, steps: int, checkpoints) -> tuple[dict, float]:
    """Full float64 run: the recorded series (Theorem 3.1's quantities, the off-span residual, min alpha, ||W_P||,
    ||W_P P S||) and the largest relative deviation of r(t+1)/r(t) from |1 - eta c_L v ||S(t)||_F^2| over the
    first FACTOR_STEPS steps (the module docstring's one-step law). The state is stepped directly: the law needs
    S(t) at every step."""
    st = FullState(setting, Arith.make("float64", None, steps))
    eta, var = float(setting.eta_v * setting.loss_scale), float(setting.law.var)      # eta c_L and v of the law
    ser = {k: [] for k in ("step",) + KEYS + ("offspan", "alpha_min", "wp_norm", "bias_norm")}
    dev, prev, cps = 0.0, None, set(checkpoints)
    for t in range(steps + 1):
        if t <= FACTOR_STEPS or t in cps:
            rec, S = st.record(), st.attention()
        if t <= FACTOR_STEPS:
            off = np.array([float(x) for x in rec.offspan])
            if prev is not None:
                pred = prev[1] * abs(1 - eta * var * prev[0])
                dev = max(dev, float(np.max(np.abs(off - pred) / pred)))
            prev = (float((S * S).sum()), off)
        if t in cps:
            ser["step"].append(t)
            for k, v in (("excess_loss", rec.excess_loss), ("s_err", rec.s_err), ("w_err", rec.w_err),
                         ("offspan", max(rec.offspan)), ("alpha_min", min(rec.alpha)), ("wp_norm", rec.wp_norm)):
                ser[k].append(float(v))
            ser["bias_norm"].append(float(np.linalg.norm(st.WP @ st.P @ S)))
        if t < steps:
            st.step()
    return ser, dev


def runs(profile: str) -> dict:
    """Per seed: the run, its one-step-law deviation, and the classification of the residual and the offset."""
    n = SIZES[profile]
    # every step up to 300: the residual reaches the float64 floor within a few hundred steps
    cps = sorted(set(dense_checkpoints(n["steps"], points=120)) | set(range(301)))
    out = {}
    for seed in n["seeds"]:
        s = setting_for(seed)
        ser, dev = run_with_offspan(s, n["steps"], cps)
        out[seed] = {"setting": s, "series": ser, "law_dev": dev, "fits": classify_series(ser),
                     "f_off": classify(ser["step"], ser["offspan"], 0.0),
                     "f_bias": classify(ser["step"], ser["bias_norm"], 0.0)}
    return out


def replay_of(s, steps: int) -> str:
    return setting_command("run", s, "--steps", str(steps), "--engine", "full", "--json")


def realign_records(res: dict, steps: int) -> list[dict]:
    out = []
    for seed, r in res.items():
        s, ser, f = r["setting"], r["series"], r["f_off"]
        ok = f.kind in ("exponential", "exact-from-start") or ser["offspan"][-1] < 1e-12
        out += [record(f"seed {seed}: one-step law r(t+1) = |1 - eta c_L v ||S(t)||_F^2| r(t), t < {FACTOR_STEPS} "
                       "(full engine)", "float64", scope_of((s, FACTOR_STEPS)), f"max relative deviation "
                       f"{r['law_dev']:.1e}", compare(r["law_dev"], "<=", LAW_TOL), threshold=LAW_THRESHOLD,
                       replay=replay_of(s, FACTOR_STEPS)),
                record(f"seed {seed}: tail of the off-span residual over t <= {steps}", "float64", scope_of((s, steps)),
                       f"{f.label} ({f.reason}); {ser['offspan'][0]:.3g} at t = 0, {ser['offspan'][-1]:.2g} at T", ok,
                       threshold=DECAY_THRESHOLD, replay=replay_of(s, steps))]
    return out


def finite_t_records(res: dict) -> list[dict]:
    out = []
    for seed, r in res.items():
        s, off = r["setting"], r["series"]["offspan"]
        out.append(record(f"seed {seed}: off-span residual of W_X at t = 0 and t = 1", "float64", scope_of((s, 1)),
                          f"{off[0]:.3g} at t = 0, {off[1]:.3g} at t = 1: the rows of W_X are not multiples of V*'s",
                          compare([off[0], off[1]], ">", OFF_TOL), threshold=OFF_THRESHOLD, replay=replay_of(s, 1)))
    return out


def rate_bound(s) -> Fraction:
    """1 - eta_V c_L v N / D: the largest per-step factor of the off-span residual (module docstring)."""
    return 1 - step_x(s) / s.D


def offspan_rows(o) -> list:
    return o["record"].offspan


def contraction_fact(run):
    """"r_m(t) <= (1 - eta c_L v N/D) r_m(t - 1) for every row m and 1 <= t <= H" decided by the balls."""
    rho = rate_bound(run.setting)
    with run.precision():
        k = exact(rho)
        return decide_margins([(t, k * a - b) for t in sorted(run.seen) if t - 1 in run.seen
                               for a, b in zip(offspan_rows(run.seen[t - 1]), offspan_rows(run.seen[t]))], strict=False)


def describe_contraction(run, fact) -> str:
    rho, end = rate_bound(run.setting), run.last if fact.holds is not False else fact.at
    return (f"r_m(t) <= {rho} r_m(t - 1) " + ("at every step t = 1.." + str(end) if fact.holds else
                                            f"fails at t = {fact.at}" if fact.holds is False else "undecided")
            + f": r(0) = {', '.join(show(x, 6) for x in offspan_rows(run.seen[0]))}, r({run.last}) = "
            + ", ".join(show(x, 6) for x in offspan_rows(run.seen[run.last])))


def off_line_fact(run):
    """"r_m(t) > OFF_TOL for t = 0 and t = 1" decided by the balls."""
    return decide_margins([(t, m) for t, m in exceeds(run, offspan_rows, OFF_TOL, t_min=0) if t <= 1])


def describe_off_line(run, fact) -> str:
    return "; ".join(f"r(t = {t}) = {', '.join(show(x, 6) for x in offspan_rows(run.seen[t]))}" for t in (0, 1)
                     if t in run.seen)


def certified_records(profile: str, settings=None) -> tuple[list, list, dict]:
    """(records of the certified decay, records of the off-line start, numbers) over the profile's seeds or
    ``settings``: one certified full-matrix run each."""
    n = SIZES[profile]
    decay, start, nums = [], [], {}
    for label, s in (settings or {f"seed {seed}": setting_for(seed) for seed in n["seeds"]}).items():
        run = ball_run(s, n["ball_steps"], n["bits"])
        rho = rate_bound(s)
        decay.append(fact_record(f"{label}: r(t) <= {rho} r(t - 1), t <= {run.horizon} (certified full engine, "
                                 f"{run.bits} bits)", run, contraction_fact, describe_contraction,
                                 hypotheses=judged_hypotheses(HYPOTHESES),
                                 bound=f"r_m(t) <= (1 - eta c_L v N/D) r_m(t - 1) = {rho} r_m(t - 1), every row m"))
        start.append(fact_record(f"{label}: off-span residual of W_X at t = 0 and t = 1 (certified full engine)", run,
                                 off_line_fact, describe_off_line, hypotheses=judged_hypotheses(HYPOTHESES),
                                 bound=f"r_m(t) > {OFF_TOL:g} for t = 0, 1"))
        nums[label] = {"rate_bound": str(rho), "horizon": run.last,
                       "offspan_at_horizon": [interval(x) for x in offspan_rows(run.seen[run.last])]}
    return decay, start, nums


def findings(r: dict) -> list[str]:
    ser, f_off, f_bias = r["series"], r["f_off"], r["f_bias"]
    pos = next((t for t, a in zip(ser["step"], ser["alpha_min"]) if a > 0), None)
    rate = f_off.rate if f_off.rate is not None else math.nan
    return [
        f"At t = 0 the rows of W_X are not multiples of V*'s rows: off-span residual {ser['offspan'][0]:.3g}; so the "
        "conclusion of Lemma C.2 fails at finite t from a random start (outside its zero-initialisation hypothesis: "
        "this does not refute the lemma).",
        f"The residual decays {f_off.label} (rate {rate:.4g} per step) to {ser['offspan'][-1]:.2g}, following "
        f"r(t+1) = |1 - eta ||S(t)||_F^2| r(t) to relative accuracy {r['law_dev']:.1e} over the first {FACTOR_STEPS} "
        "steps: alignment is restored geometrically, so C.2 holds asymptotically.",
        f"min_m alpha_m starts at {ser['alpha_min'][0]:.3g} and is positive from step {pos}.",
        f"||W_P|| goes from {ser['wp_norm'][0]:.3g} to {ser['wp_norm'][-1]:.3g} (its part outside the span of P S "
        f"receives no gradient) while the output offset ||W_P P S||_F decays ({f_bias.label}).",
        "Loss, ||S - S*|| and ||W_X - V*|| keep the zero-initialisation tails.",
    ]


@register("nonzero-init")
class NonzeroInit(Probe):
    title = "random init: Lemma C.2 fails at finite t, the off-span residual decays geometrically"
    summary = title
    source = "reviewer question 2; Lemma C.2 (zero initialisation)"
    questions = (2,)
    sizes = SIZES
    statements = (
        finding("nonzero-init.realign", "From a small random initialisation (outside Lemma C.2's zero-initialisation "
                "hypothesis), the off-span residual of W_X decays geometrically, by the factor |1 - eta c_L v "
                "||S(t)||_F^2| per step (sigma = identity, centred entries).", HYPOTHESES, about="lemma-C.2",
                relation="outside"),
        finding("nonzero-init.finite-t", "From a small random initialisation, the conclusion of Lemma C.2 fails at "
                "finite t: the rows of W_X(0) and W_X(1) are off the lines of V*'s rows.", HYPOTHESES,
                about="lemma-C.2", relation="outside"),
        finding("nonzero-init.finite-horizon", "From a small random initialisation (the regimes run: sts D = 4, "
                "K = 2, M = 2, d = 3, eta = 1/2, W(0) ~ N(0, 1/100)), the exact GD trajectory, enclosed over t <= H by "
                "Arb balls of the full-matrix recursion (no reduction assumed; H = "
                + ", ".join(f"{SIZES[p]['ball_steps']} at {p}" for p in SIZES) + "), has every row's off-span "
                "residual contract at every step by at least the factor 1 - eta c_L v N/D: r_m(t) <= "
                "(1 - eta c_L v N/D) r_m(t - 1), so r_m(H) <= (1 - eta c_L v N/D)^H r_m(0).", HYPOTHESES, about="lemma-C.2",
                relation="outside", dims=(dims_of(setting_for(0)),)),
    )

    def evaluate(self, profile):
        res = runs(profile)
        decay, start, balls = certified_records(profile)
        ran = [setting_for(seed) for seed in SIZES[profile]["seeds"]]
        steps = SIZES[profile]["steps"]
        first = next(iter(res.values()))
        ser, f_off, f_bias = first["series"], first["f_off"], first["f_bias"]
        pos = next((t for t, a in zip(ser["step"], ser["alpha_min"]) if a > 0), None)
        return self.evaluation(
            {"nonzero-init.realign": realign_records(res, steps),
             "nonzero-init.finite-t": finite_t_records(res) + start, "nonzero-init.finite-horizon": decay},
            replay=replay_command("nonzero-init", profile, f"seeds {', '.join(map(str, res))}; one run: "
                                  f"{replay_of(first['setting'], steps)}"),
            regimes=[regime_entry(r["setting"], steps, "full", label=f"random init 1/10, seed {seed}")
                     for seed, r in res.items()],
            findings=findings(first), classification=labels(first["fits"]),
            fits=fits_json(first["fits"]) | {"offspan": f_off.as_dict(), "bias_norm": f_bias.as_dict()},
            numbers={"offspan_initial": ser["offspan"][0], "offspan_final": ser["offspan"][-1],
                     "offspan_fit": f_off.as_dict(), "one_step_law_max_rel_dev": max(r["law_dev"] for r in res.values()),
                     "alpha_min_initial": ser["alpha_min"][0], "alpha_positive_from_step": pos,
                     "wp_norm_initial": ser["wp_norm"][0], "wp_norm_final": ser["wp_norm"][-1],
                     "bias_norm_fit": f_bias.as_dict(),
                     "per_seed": {str(seed): {"one_step_law_max_rel_dev": r["law_dev"], "offspan_fit": r["f_off"].label}
                                  for seed, r in res.items()},
                     "certified": balls},
            data=dict(ser),
            scopes={"nonzero-init.finite-horizon": runs_scope(ran, SIZES[profile]["ball_steps"]),
                    "nonzero-init.finite-t": runs_scope(ran, 1)})

    def draw(self, res: dict) -> Drawing:
        name = self.id
        d = need(res, "data", f"probe {name}")
        where = f"probe {name}: data"
        fits = res.get("fits") or {}
        fig, axes = new_figure(4, width=4.1)
        a1, a2, a3, a4 = axes[0]
        _residual_panel(a1, d, fits.get("offspan") or (res.get("numbers") or {}).get("offspan_fit") or {}, where)
        # the smallest row multiple: positive from the start
        x, y = finite(*series(d, "step", "alpha_min", where))
        keep = [k for k, t in enumerate(x) if t > 0]
        a2.semilogx([x[k] for k in keep], [y[k] for k in keep], color=COLOURS[1], label="min_i α_i(t)", **COMPUTED)
        a2.axhline(0.0, color="black", lw=0.8, ls=":", label="0 (Lemma C.2 needs α_i > 0)")
        a0 = next((v for t, v in zip(x, y) if t == 0), None)
        label_axes(a2, "GD step t", "min_i α_i(t)", "Smallest row multiple of V*"
                   + (f"\n(at t = 0: {a0:.3g})" if a0 is not None else ""))
        _tails_panel(a3, d, where)
        for j, q in enumerate(("wp_norm", "bias_norm")):
            qx, qy = positive(*series(d, "step", q, where))
            lab = (fits.get(q) or {}).get("label", "")
            a4.loglog(qx, qy, color=COLOURS[j + 5], label=f"{title_words(q)} {symbol(q)}"
                      + (f" (fitted slope {lab.split(':', 1)[1].replace('-', '−')})" if lab.startswith("power:") else ""),
                      **COMPUTED)
        label_axes(a4, "GD step t", "norm", "Positional block W_P and its output offset")
        for ax in (a1, a2, a3, a4):
            readable_ticks(ax)
        figure_legend(fig, axes[0], ncols=3)
        suptitle(fig, "Random initialisation: rows of W_X start off the span of V*'s rows (Lemma C.2 fails at t = 0) "
                      "and realign geometrically")
        return Drawing(fig, "From a small random start: the off-span residual of W_X (semilog-y, with the fitted "
                            "exponential), the smallest row multiple min_i α_i(t), Theorem 3.1's quantities with the "
                            "claimed slopes (log–log), and ‖W_P‖_F with its output offset ‖W_P P S‖_F.")


def _residual_panel(a1, d: dict, fit: dict, where: str) -> None:
    """The off-span residual (semilog-y: geometric decay is straight) before round-off, with the fitted exponential."""
    x, y = positive_y(*series(d, "step", "offspan", where))
    end = next((t for t, v in zip(x, y) if v <= 1e-14 * y[0]), x[-1]) if y else 0
    xs = [t for t in x if t <= 1.2 * end]
    a1.semilogy(xs, y[:len(xs)], color=COLOURS[0], label="off-span residual max_i ‖w_i − α_i v*_i‖", **COMPUTED)
    rate, win = fit.get("rate"), fit.get("window")
    if isinstance(rate, (int, float)) and isinstance(win, list) and len(win) == 2:
        t0 = min(xs, key=lambda t: abs(t - win[0]))
        y0 = y[xs.index(t0)]
        gx = [t for t in xs if win[0] <= t <= win[1]]
        (ln,) = a1.semilogy(gx, [y0 * math.exp(-rate * (t - t0)) for t in gx], label=f"fitted e^(−{rate:.3f} t)",
                            **GUIDE)
        ln.set_gid("guide:exponential")
    label_axes(a1, "GD step t", "max_i ‖w_i − α_i v*_i‖", "Off-span residual of W_X\n(geometric: straight on semilog-y)")


def _tails_panel(a3, d: dict, where: str) -> None:
    """Theorem 3.1's quantities keep their tails (log-log, with the claimed slopes)."""
    ys = []
    for i, q in enumerate(KEYS):
        qx, qy = positive(*series(d, "step", q, where))
        a3.loglog(qx, qy, color=COLOURS[i + 2], label=f"{title_words(q)} {symbol(q)}", **COMPUTED)
        ys += qy
        if q in ("excess_loss", "w_err"):
            slope_guide(a3, qx, qy, claimed_t_exponents()[q],
                        "claimed slopes in T (Theorem 3.1): −1 for L − L_opt, −½ for the distances", decades=3)
    keep_data_limits(a3, ys, log=True)
    label_axes(a3, "GD step t", "distance / excess loss", "Theorem 3.1's quantities keep their tails")
