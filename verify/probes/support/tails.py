"""The probes of the interior case 0 < K < D whose finding is that GD's tails are the derived leading terms
(k-one, k-near-d): one class, :class:`TailProbe`; a subclass names its regimes, sizes, statement and figure
title.
"""
from __future__ import annotations

from ...evidence import compare, record
from ...model.flags import setting_command
from ...model.profiles import per_profile
from ...model.quantities import KEYS
from ...plotting import Drawing, figure_legend, new_figure
from .figures import rate_panels, runs_of, suptitle
from .interior import LEADING, claimed_t_exponents, exponent_deviation, interior_run, leading_curves
from .probe import Probe
from .findings import reference, scope_of
from .runs import labels, regime_entry, trimmed
from .convention import regime_setting, replay_command

EXP_TOL, RATIO_TOL = 0.05, 0.05
THRESHOLD = {"value": {"exponent": EXP_TOL, "ratio_to_leading_term": RATIO_TOL},
             "why": "|fitted - claimed exponent| <= 0.05 and |q(T)/leading(T) - 1| <= 0.05 at the horizon T (>= 4e5): "
                    "the tail fit spans the last decade, where the next-order correction O(u) = O(T^-1/2) relative "
                    "shifts a log-log slope and the ratio by about 1e-2; 0.05 leaves margin without admitting another "
                    "power"}


def tail_record(label: str, setting, nums: dict, fits: dict, T: int, replay: str) -> dict:
    """One regime's fitted tails and ratios to the leading terms, against :data:`THRESHOLD`; a NaN (no power-law
    fit, a non-finite ratio) decides nothing, a tail that is not a power law disagrees."""
    kinds = {q: fits[q]["kind"] for q in nums}
    devs = [float("nan") if v["fitted_exponent"] is None else abs(v["fitted_exponent"] - v["claimed_exponent"])
            for v in nums.values()] + [abs(v["ratio_to_leading_term_at_T"] - 1) for v in nums.values()]
    ok = compare(devs, "<=", [EXP_TOL] * len(nums) + [RATIO_TOL] * len(nums))
    if ok is not None and not all(k == "power" for k in kinds.values()):
        ok = False
    return record(f"{label}: tail fits and ratios to the leading terms at T = {T}", "float64", scope_of((setting, T)),
                  "; ".join(f"{q}: {kinds[q]}, exponent {_num(v['fitted_exponent'])} (claimed {v['claimed_exponent']:g}), "
                            f"q/leading {v['ratio_to_leading_term_at_T']:.4f}" for q, v in nums.items()), ok,
                  threshold=THRESHOLD, replay=replay)


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def tails(regimes: dict, steps: int) -> dict:
    """Each interior regime run to ``steps``: {label: {"setting", "series", "fits", "numbers"}}."""
    out = {}
    for label, kw in regimes.items():
        s = regime_setting(needs=LEADING, **kw)
        ser, f, nums = interior_run(s, steps)
        out[label] = {"setting": s, "series": ser, "fits": f, "numbers": nums}
    return out


def tail_findings(res: dict, main: str) -> list[str]:
    """The findings of an interior probe in words: the main regime's exponents and the worst deviations."""
    m = res[main]["numbers"]["per_quantity"]
    worst = max(exponent_deviation(r["numbers"]["per_quantity"]) for r in res.values())
    worst_ratio = max(abs(v["ratio_to_leading_term_at_T"] - 1) for r in res.values()
                      for v in r["numbers"]["per_quantity"].values())
    claimed = ", ".join(f"{claimed_t_exponents()[q]:g}" for q in KEYS)
    T = res[main]["series"]["step"][-1]
    return [f"{main}: fitted tail exponents " + ", ".join(f"{q} {_num(m[q]['fitted_exponent'])}" for q in KEYS)
            + f" (T = {T}); claimed {claimed}.",
            f"Across regimes the largest |fitted - claimed| exponent is {worst:.3f}; q(T)/leading(T) is within "
            f"{100 * worst_ratio:.1f}% of 1 (the leading terms of verify.derive.asymptotics, constants included).",
            "The constants follow the derived leading terms, whose D-dependence differs from the claimed orders "
            "(claim theorem-3.1, probe rates)."]


# What an interior probe's statement assumes: Theorem 3.1's 0 < K < D with sigma = identity and a stable step,
# in the reference convention.
INTERIOR_HYPOTHESES = ("identity", "0<K<D", "eta-stable") + reference()


class TailProbe(Probe):
    """An interior probe: ``regimes`` (label -> make_setting keywords; the first is the main one), ``sizes`` per
    profile ({"steps": T}; by default horizons long enough for a last-decade tail fit), one statement, and
    ``figure_title``; the figure shows the three quantities with their derived leading terms (dashed) and the
    claimed slopes."""

    regimes: dict = {}
    sizes = per_profile({"ci": {"steps": 400_000}, "dev": {"steps": 4_000_000}, "deep": {"steps": 40_000_000}})
    figure_title: str = ""

    def evaluate(self, profile):
        T = self.size(profile, "steps")
        res = tails(self.regimes, T)
        main = next(iter(res))
        one = setting_command("run", res[main]["setting"], "--steps", str(T), "--arithmetic", "float64", "--json")
        replay = replay_command(self.id, profile, f"one regime: {one}")
        ev = [tail_record(lab, r["setting"], r["numbers"]["per_quantity"], r["numbers"]["fits"], T, replay)
              for lab, r in res.items()]
        return self.evaluation(
            {self.statements[0].id: ev}, replay=replay,
            regimes=[regime_entry(r["setting"], T, "reduced (compiled float64)", label=lab) for lab, r in res.items()],
            findings=tail_findings(res, main), classification=labels(res[main]["fits"]),
            fits={lab: r["numbers"]["fits"] for lab, r in res.items()},
            numbers={lab: r["numbers"]["per_quantity"] for lab, r in res.items()}
            | {"worst_tail_deviation": max(exponent_deviation(r["numbers"]["per_quantity"]) for r in res.values())},
            data={lab: trimmed(r["series"], KEYS + ("support_mass",)) | leading_curves(r["setting"], r["series"]["step"])
                  for lab, r in res.items()})

    def draw(self, res: dict) -> Drawing:
        regs = runs_of(res, self.id)
        fig, axes = new_figure(3, width=4.4)
        rate_panels(axes[0], regs, self.id)
        figure_legend(fig, axes[0], ncols=2)
        suptitle(fig, self.figure_title)
        lab = self.figure_title.split(":")[0]
        return Drawing(fig, f"{lab} (log–log): L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F against GD steps (solid), the "
                            "derived leading terms (dashed) and the claimed slopes −1, −½, −½ (dotted black).")


__all__ = ["INTERIOR_HYPOTHESES", "TailProbe", "THRESHOLD", "tails", "tail_record", "tail_findings"]
