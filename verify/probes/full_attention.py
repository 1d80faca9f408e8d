"""Probe ``full-attention`` (reviewer Q11): position-only attention against attention that also sees X.

docs/setting.md keeps full attention "for comparison only"; this probe makes the comparison. Both students
(verify.probes.support.sgd.AttentionSGD) are the same code, trained by the same mini-batch SGD on fresh samples
with common random numbers (the same X draws), from zero initialisation, sigma = identity: (a) position-only
(only the P-P block of W_KQ is trained: the toolkit's model) and (b) input-dependent (every entry of W_KQ, so
S(Z) may depend on X). Teacher: y = V* X S* (no label noise), realisable by both students with the X-block of
W_KQ at 0. At zero init S is uniform whatever X is; the X-block of W_KQ moves only through the data (its
expected gradient contains terms of even degree in X, so it need not vanish). The probe measures how far it
moves, how input-dependent (b)'s S becomes, and the held-out loss of both (on a fixed held-out set of X, the
same for both; for (a) the exact population loss of verify.engines.full is recorded beside it).

Sampling makes every number random: each regime runs over the profile's seeds and the findings are decided from
the ensembles (verify.probes.support.seeds), never from one seed.
"""
from __future__ import annotations

import math

import numpy as np

from ..evidence import REPLAY_FACTOR, compare, record
from ..model.profiles import per_profile
from ..plotting import (COLOURS, Drawing, FigureDataError, figure_legend, floats, label_axes, need, new_figure, note,
                        positive, readable_ticks, series, shown, slope_guide)
from . import Probe, register
from .support.classify import classify
from .support.figures import legend_entry, suptitle
from .support.interior import claimed_t_exponents
from .support.findings import finding, reference
from .support.runs import FLOAT64_EPS_REL, classify_series, dense_checkpoints, fits_json, labels, regime_entry
from .support.seeds import ensemble, ensemble_holds, ensemble_text, seeds_text
from .support.sgd import AttentionSGD, sgd_scope
from .support.convention import Needs, regime_setting, replay_command

BATCH = 64
HELD_OUT = 2000
HELD_OUT_SEED = 97
# A late rise of the held-out loss by more than this factor between checkpoints counts as a burst.
BURST = 1.5
# The early peak of (b)'s X-block at two batch sizes: gradient noise alone would shrink it ~ B^-1/2.
PEAK_STEPS, PEAK_BATCHES = 300, (32, 512)
REGIMES = {"sts D=6 K=2 d=2 eta=1/2": dict(D=6, K=2, preset="sts", d=2, eta="1/2", vstar_norm="1"),
           "cnn D=6 K=2 d=2 eta=1/4": dict(D=6, K=2, preset="cnn", d=2, eta="1/4", vstar_norm="1"),
           "cnn D=6 K=2 d=2 eta=1/2": dict(D=6, K=2, preset="cnn", d=2, eta="1/2", vstar_norm="1")}
STUDENTS = ("position-only", "input-dependent")
SIZES = per_profile({"ci": {"steps": 10_000, "seeds": (11, 12)}, "dev": {"steps": 30_000, "seeds": (11, 12, 13, 14, 15)},
                     "deep": {"steps": 100_000, "seeds": tuple(range(11, 21))}})
X_FRACTION = 0.01
X_THRESHOLD = {"value": f"||W_KQ outside the P-P block|| / ||W_KQ^PP|| < {X_FRACTION} at T, for every seed",
               "why": "the X-dependent logits are then at most 1% of the positional ones for O(1) entries of X: the "
                      "input-dependent student's attention is position-only up to a 1% perturbation"}
BAND, FLOOR = 0.2, 0.05
RATE_THRESHOLD = {"value": f"|mean exponent + 1| <= max(3 standard errors, {FLOOR}) and every seed within {BAND} of -1",
                  "why": "3 standard errors bound the ensemble mean's statistical error; 0.05 covers the finite-T "
                         "bias of a one-decade fit of a held-out (Monte Carlo) loss of 2000 samples; a seed outside "
                         "+-0.2 follows another power"}
HYPOTHESES = ("identity", "0<K<D", "eta-stable") + reference()


def students(setting, steps: int, seeds, which=STUDENTS) -> dict:
    """{seed: {student: series}}: both students on ``setting`` over ``seeds`` (each seed's chain sees the same X
    draws in both students); the held-out set from its own stream."""
    Xh = setting.law.sample(np.random.default_rng(HELD_OUT_SEED), (HELD_OUT, setting.d, setting.D))
    cps = dense_checkpoints(steps, points=40)
    runs = {name: AttentionSGD(setting, BATCH, name == "input-dependent", seeds).run(cps, Xh) for name in which}
    return {x: {name: runs[name][x] for name in which} for x in runs[which[0]]}


def late(series: dict, key: str):
    """Values of ``key`` over the last half of the run (steps >= T/2)."""
    T = series["step"][-1]
    return [v for t, v in zip(series["step"], series[key]) if t >= T / 2]


def late_jump(series: dict) -> float:
    """Largest ratio loss(t_{i+1}) / loss(t_i) between consecutive checkpoints in the last half: <= 1 for a loss
    that keeps falling, > 1 where it bursts up again."""
    v = late(series, "excess_loss")
    return max(b / a for a, b in zip(v, v[1:]))


def x_block_peak(setting, batch: int, seeds, steps: int = PEAK_STEPS) -> dict:
    """{seed: largest ||X-block of W_KQ|| of the input-dependent student over its first ``steps`` steps}."""
    st = AttentionSGD(setting, batch, True, seeds)
    peak = st.advance(steps).max(axis=1)
    return {x: float(v) for x, v in zip(st.seeds, peak)}


def seed_numbers(pair: dict, peaks: dict) -> dict:
    """What one seed of one regime measured (the ensembles are built from these)."""
    a, b = pair["position-only"], pair["input-dependent"]
    f = {k: classify_series(v) for k, v in pair.items()}
    return {"exponent": {k: v["excess_loss"].exponent if v["excess_loss"].kind == "power" else None
                         for k, v in f.items()},
            "x_over_p_at_T": b["kq_x_block"][-1] / b["kq_p_block"][-1],
            "kq_x_block_at_T": b["kq_x_block"][-1], "kq_x_block_max": max(b["kq_x_block"]),
            "kq_blocks_at_T": {k: b[k][-1] for k in ("kq_xx", "kq_xp", "kq_px", "kq_p_block")},
            "loss_ratio_b_over_a_at_T": b["excess_loss"][-1] / a["excess_loss"][-1],
            "loss_ratio_b_over_a_max_late_half": max(y / x for x, y in zip(late(a, "excess_loss"),
                                                                           late(b, "excess_loss"))),
            "late_loss_jump": {k: late_jump(v) for k, v in pair.items()},
            "s_spread_at_T": b["s_spread"][-1], "s_spread_max": max(b["s_spread"]),
            "s_spread_over_s_err_at_T": b["s_spread"][-1] / b["s_err"][-1],
            "s_spread_max_position_only": max(a["s_spread"]),
            "held_out_rel_error_vs_exact_population": max(abs(x - y) / y for x, y in zip(
                a["excess_loss"], a["population_excess_loss"]) if y > 0),
            "peaks_first_steps": peaks,
            "input_dependence_tail_fits": {k: classify(b["step"], b[k], 0.0, FLOAT64_EPS_REL).label
                                           for k in ("kq_x_block", "s_spread")},
            "tail_fits": {k: {q: c.label for q, c in v.items()} for k, v in f.items()}, "fits": f}


# The full-attention students (verify.probes.support.sgd) take sigma = identity and the zero start only.
STUDENT_NEEDS = Needs(False, ("identity", "zero-init"),
                      "the full-attention SGD students of verify.probes.support.sgd")


def runs(profile: str) -> dict:
    """Per regime: both students for every seed, and per seed the numbers of :func:`seed_numbers`."""
    n = SIZES[profile]
    out = {}
    for label, kw in REGIMES.items():
        s = regime_setting(needs=STUDENT_NEEDS, **kw)
        pairs = students(s, n["steps"], n["seeds"])
        peaks = {f"B={B}": x_block_peak(s, B, n["seeds"]) for B in PEAK_BATCHES}
        out[label] = {"setting": s, "pairs": pairs, "per_seed": {
            x: seed_numbers(p, {b: v[x] for b, v in peaks.items()}) for x, p in pairs.items()}}
    return out


def x_block_record(label: str, r: dict, steps: int, replay: str) -> dict:
    """The X part of (b)'s W_KQ at T relative to its positional block, over seeds (X_THRESHOLD)."""
    per = r["per_seed"]
    e = ensemble(list(per), [v["x_over_p_at_T"] for v in per.values()])
    return record(f"{label}: X part of the input-dependent student's W_KQ at T = {steps}, over {seeds_text(per)}",
                  "float64", sgd_scope(r["setting"], BATCH, steps, "input-dependent attention"),
                  f"||W_KQ outside the P-P block|| / ||W_KQ^PP|| {ensemble_text(e, 4)}",
                  compare(e["values"], "<", X_FRACTION), threshold=X_THRESHOLD, replay=replay, ensemble=e)


def rate_record(label: str, r: dict, student: str, steps: int, replay: str) -> dict:
    """One student's held-out loss exponent over seeds (RATE_THRESHOLD); a failing ensemble is run again with
    the same seeds at REPLAY_FACTOR x the horizon and refutes only if it fails there too."""
    seeds = list(r["per_seed"])
    e = ensemble(seeds, [v["exponent"][student] for v in r["per_seed"].values()])
    holds = ensemble_holds(e, claimed_t_exponents()["excess_loss"], band=BAND, floor=FLOOR)
    extra = {}
    if holds is False:
        runs = students(r["setting"], REPLAY_FACTOR * steps, seeds, (student,))
        longer = ensemble(seeds, [classify_series(runs[x][student])["excess_loss"].exponent for x in seeds])
        again = ensemble_holds(longer, claimed_t_exponents()["excess_loss"], band=BAND,
                               floor=FLOOR)
        extra["replay_check"] = {"horizon": REPLAY_FACTOR * steps, "holds": False if again is False else None,
                                 "detail": f"T = {REPLAY_FACTOR * steps}: {ensemble_text(longer)}"}
    return record(f"{label}: {student} student, last-decade exponent of the held-out L - L_opt at T = {steps}",
                  "float64", sgd_scope(r["setting"], BATCH, steps, f"{student} attention"),
                  f"exponents {ensemble_text(e)}", holds, threshold=RATE_THRESHOLD, replay=replay, ensemble=e, **extra)


def regime_findings(label: str, r: dict, steps: int) -> list[str]:
    """Two lines per regime: the students' losses, and how far (b)'s attention depends on X (seed ensembles)."""
    per = list(r["per_seed"].values())
    seeds = list(r["per_seed"])
    ens = lambda key: ensemble(seeds, [v[key] for v in per])  # noqa: E731
    ratio, xp, spread = ens("loss_ratio_b_over_a_at_T"), ens("x_over_p_at_T"), ens("s_spread_over_s_err_at_T")
    jumps = {k: max(v["late_loss_jump"][k] for v in per) for k in STUDENTS}
    peaks = {f"B={B}": ensemble(seeds, [v["peaks_first_steps"][f"B={B}"] for v in per])["mean"] for B in PEAK_BATCHES}
    out = [f"{label}: held-out loss at T = {steps}, input-dependent over position-only: {ensemble_text(ratio, 3)}; "
           f"largest loss rise between checkpoints in the last half over the seeds: a x{jumps['position-only']:.3g}, "
           f"b x{jumps['input-dependent']:.3g}.",
           f"{label}: the X-block of (b)'s W_KQ peaks early (mean peak over the first {PEAK_STEPS} steps: "
           + ", ".join(f"{k} {v:.3g}" for k, v in peaks.items())
           + f", where gradient noise alone would give a ratio ~{(PEAK_BATCHES[-1] / PEAK_BATCHES[0]) ** 0.5:.2g}) and "
           f"ends at {ensemble_text(xp, 4)} of the P-P block; the input spread of S(Z) at T is "
           f"{ensemble_text(spread, 3)} of its s_err."]
    if jumps["input-dependent"] > BURST and jumps["position-only"] <= BURST:
        out.append(f"{label}: at this eta the input-dependent student does not settle monotonically: its held-out loss "
                   f"rises up to x{jumps['input-dependent']:.3g} between checkpoints late in the run while the "
                   "position-only student's, on the same X draws, keeps falling: the bursts come from the "
                   "input-dependent logits (this run does not separate gradient noise from a step-size instability of "
                   "that block).")
    return out


def quoted(res: dict) -> dict:
    """The numbers quoted elsewhere, as seed ensembles per regime: "x_block", ||W_KQ outside the P-P block|| /
    ||W_KQ^PP|| at T, and "x_block_peak", the largest ||W_KQ outside the P-P block|| along the run."""
    return {key: {lab: ensemble(list(r["per_seed"]), [v[src] for v in r["per_seed"].values()])
                  for lab, r in res.items()}
            for key, src in (("x_block", "x_over_p_at_T"), ("x_block_peak", "kq_x_block_max"))}


@register("full-attention")
class FullAttention(Probe):
    title = "position-only vs input-dependent attention (logits see X): same teacher, same SGD, over seeds"
    summary = title
    source = "reviewer question 11; the model's position-only attention (Wang et al. 2024 learn input-dependent)"
    questions = (11,)
    sizes = SIZES
    statements = (
        finding("full-attention.x-block-fades", "On position-only teachers, an input-dependent student (logits that "
                "also see X), trained by the same online SGD from zero initialisation, learns position-only attention: "
                f"for every seed and regime, the X part of its W_KQ ends below {X_FRACTION:.0%} of the positional "
                "block.", HYPOTHESES, relation="answers"),
        finding("full-attention.same-rate", "On position-only teachers, both students' held-out excess loss falls "
                f"like 1/T, judged over seeds: every seed's last-decade exponent within {BAND} of -1 and the ensemble "
                f"mean within max(3 standard errors, {FLOOR}) of -1, for each regime and student.", HYPOTHESES,
                relation="answers"),
    )

    def evaluate(self, profile):
        n = SIZES[profile]
        res = runs(profile)
        replay = replay_command("full-attention", profile, f"{seeds_text(n['seeds'])}, B = {BATCH}")
        first_seed = n["seeds"][0]
        main = next(iter(res.values()))
        findings = [x for lab, r in res.items() for x in regime_findings(lab, r, n["steps"])]
        findings.append("At zero init S is uniform for every X and the X-dependent logits get gradient only through "
                        "the data (their expected gradient has terms of even degree in X). Small teachers, finite T; "
                        f"one batch size per long run; {seeds_text(n['seeds'])}.")
        return self.evaluation(
            {"full-attention.x-block-fades": [x_block_record(lab, r, n["steps"], replay) for lab, r in res.items()],
             "full-attention.same-rate": [rate_record(lab, r, st, n["steps"], replay) for lab, r in res.items()
                                          for st in STUDENTS]}, replay=replay,
            regimes=[regime_entry(r["setting"], n["steps"], "minibatch-sgd", label=f"{lab}: {k}, B={BATCH}, "
                                  f"{seeds_text(n['seeds'])}, held-out {HELD_OUT} (seed {HELD_OUT_SEED})")
                     for lab, r in res.items() for k in STUDENTS]
            + [regime_entry(r["setting"], PEAK_STEPS, "minibatch-sgd", label=f"{lab}: input-dependent, B in "
                            f"{PEAK_BATCHES}, {seeds_text(n['seeds'])} (early X-block peak)") for lab, r in res.items()],
            findings=findings, classification=labels(main["per_seed"][first_seed]["fits"]["input-dependent"]),
            fits={lab: {k: fits_json(v) for k, v in r["per_seed"][first_seed]["fits"].items()} for lab, r in res.items()},
            numbers={lab: {str(seed): {k: v for k, v in x.items() if k != "fits"} for seed, x in r["per_seed"].items()}
                     for lab, r in res.items()} | quoted(res),
            data={lab: r["pairs"][first_seed] for lab, r in res.items()})

    def draw(self, res: dict) -> Drawing:
        name = self.id
        data = need(res, "data", f"probe {name}")
        regs = {k: v for k, v in data.items() if isinstance(v, dict) and any(s in v for s in STYLES)}
        if not regs:
            raise FigureDataError(f"probe {name}: data holds no regime with 'position-only' / 'input-dependent' runs")
        fig, axes = new_figure(4, width=4.0)
        a1, a2, a3, a4 = axes[0]
        spread_a = _student_lines(axes[0], regs, name)
        for i, label in enumerate(regs):
            legend_entry(a1, shown(label), color=COLOURS[i % 10], lw=3)
        for student, st in STYLES.items():
            legend_entry(a1, f"{student} student", color="0.3", **st)
        first = next(iter(regs.values()))
        fd = first.get("position-only") or next(iter(first.values()))
        for ax, q in ((a1, "excess_loss"), (a2, "s_err")):
            x, y = positive(*series(fd, "step", q, name))
            slope_guide(ax, x, y, claimed_t_exponents()[q], "claimed slopes in T (Theorem 3.1): −1 for the loss, "
                                                            "−½ for ‖S − S*‖_F", decades=3)
        label_axes(a1, "SGD step t", "L − L_opt (held-out)", "Held-out excess loss")
        label_axes(a2, "SGD step t", "‖S − S*‖_F (held-out RMS)", "Attention error")
        label_axes(a3, "SGD step t", "‖W_KQ outside the P–P block‖_F", "Part of W_KQ that sees X\n(input-dependent "
                   "student)")
        label_axes(a4, "SGD step t", "(E‖S(Z) − E S(Z)‖²_F)^½", "Input spread of the attention\n(input-dependent "
                   "student)")
        for ax in (a1, a2, a3, a4):
            readable_ticks(ax)
        figure_legend(fig, axes[0], ncols=3)
        note(fig, f"The position-only student's attention does not depend on X by construction: its input spread is "
                  f"round-off ({spread_a:.0e} at most) and its W_KQ has no X part, so neither has a line on the right "
                  f"(values below {ROUND_OFF:.0e} are not drawn).")
        suptitle(fig, "Position-only against input-dependent attention (logits also see X), same teachers and same "
                      "SGD (one seed of the ensemble shown)")
        return Drawing(fig, "Online SGD for a position-only student (solid) and an input-dependent one (dashed), one "
                            "colour per teacher and step size (log–log, the first seed of the ensemble): held-out "
                            "L − L_opt and ‖S − S*‖_F with the claimed slopes, the norm of W_KQ's X part and the input "
                            "spread of S(Z).")


ROUND_OFF = 1e-12   # float64 round-off of O(1) quantities, with a margin of ~10^4
STYLES = {"position-only": {"ls": "-", "lw": 1.5}, "input-dependent": {"ls": (0, (4, 2)), "lw": 1.3}}


def _student_lines(axes, regs: dict, name: str) -> float:
    """Each regime's two students on the four panels; returns the position-only student's largest input spread
    (round-off: its attention does not see X)."""
    a1, a2, a3, a4 = axes
    spread_a = 0.0
    for i, (label, pair) in enumerate(regs.items()):
        for student, st in STYLES.items():
            if student not in pair:
                continue
            d = pair[student]
            where = f"probe {name}: data[{label!r}][{student!r}]"
            for ax, q in ((a1, "excess_loss"), (a2, "s_err")):
                x, y = positive(*series(d, "step", q, where))
                ax.loglog(x, y, color=COLOURS[i % 10], label="_r", **st)
            if student == "input-dependent":
                for ax, q in ((a3, "kq_x_block"), (a4, "s_spread")):
                    x, y = positive(*series(d, "step", q, where))
                    # values at round-off level (S(Z) still uniform for every X) are not drawn
                    keep = [k for k, v in enumerate(y) if v > ROUND_OFF]
                    ax.loglog([x[k] for k in keep], [y[k] for k in keep], color=COLOURS[i % 10], label="_r", **st)
            else:
                spread_a = max([spread_a] + [abs(v) for v in floats(need(d, "s_spread", where), where)
                                             if math.isfinite(v)])
    return spread_a
