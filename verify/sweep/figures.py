"""Figures of a sweep: the fitted T-exponents of Theorem 3.1's quantities against each swept axis."""
from __future__ import annotations

import io
import math
from fractions import Fraction

from .measures import CLAIMED_SLOPES, QUANTITIES

LABELS = {"excess_loss": "L − L_opt", "s_err": "‖S − S*‖_F", "w_err": "‖W_X − V*‖_F"}


def _number(v):
    """A float for numeric axis values (ints, "1/10", "0.07"), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(Fraction(str(v)))
    except (ValueError, ZeroDivisionError):
        return None


def exponent_figure(rows: list[dict], axis: str, others: list[str], steps: int) -> tuple[bytes, str] | None:
    """(png, caption): the three fitted exponents against ``axis``, one line per combination of the other
    swept axes, with Theorem 3.1's claimed exponents as dashed lines; None when nothing was fitted."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # K = 0 (constant) and K = D (geometric) are not power laws in T (derived): their slopes say nothing.
    ok = [r for r in rows if r.get("status") == "ok" and axis in r and 0 < (r.get("K") or 0) < (r.get("D") or 0)]
    if not ok:
        return None
    values = list(dict.fromkeys(r[axis] for r in ok))
    nums = [_number(v) for v in values]
    numeric = all(x is not None for x in nums)
    logx = numeric and all(x > 0 for x in nums) and max(nums) / min(nums) >= 4
    pos = {v: (x if numeric else i) for i, (v, x) in enumerate(zip(values, nums))}
    groups: dict = {}
    for r in ok:
        groups.setdefault(tuple((o, r.get(o)) for o in others), []).append(r)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharex=True)
    plotted = False
    for ax, q in zip(axes, QUANTITIES):
        for gi, (g, rs) in enumerate(sorted(groups.items(), key=lambda kv: str(kv[0]))):
            pts = sorted(((pos[r[axis]], r.get(f"slope_{q}"), r.get(f"slope_se_{q}")) for r in rs
                          if isinstance(r.get(f"slope_{q}"), (int, float)) and math.isfinite(r[f"slope_{q}"])),
                         key=lambda p: p[0])
            if not pts:
                continue
            plotted = True
            label = ", ".join(f"{k}={v}" for k, v in g) or "all rows"
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] or 0.0 for p in pts], marker="o",
                        ms=4, lw=1.2, capsize=2, label=label, color=f"C{gi % 10}")
        ax.axhline(CLAIMED_SLOPES[q], ls="--", color="k", lw=1, label="Theorem 3.1's exponent")
        ax.set_title(f"{LABELS[q]}: fitted exponent in T")
        ax.set_xlabel(axis + (" (log scale)" if logx else ""))
        ax.set_ylabel("log-log slope over the last decade of T")
        if logx:
            ax.set_xscale("log", base=2)
        if not numeric:
            ax.set_xticks(range(len(values)), [str(v) for v in values])
        elif len(values) <= 8:
            ax.set_xticks([pos[v] for v in values], [str(v) for v in values])
            ax.minorticks_off()
    if not plotted:
        plt.close(fig)
        return None
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), fontsize=8, frameon=False)
    fig.suptitle(f"Fitted T-exponents against {axis} (GD for T = {steps} steps; slopes over [T/10, T]; "
                 "error bars: fit standard error)", fontsize=10)
    fig.tight_layout(rect=(0, 0.07 + 0.03 * (len(labels) // 5), 1, 0.95))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    by = ", ".join(others) if others else "the other options"
    caption = (f"Fitted tail exponents of L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F against {axis}; one line per "
               f"value of {by}; dashed: Theorem 3.1's -1, -1/2, -1/2. "
               "Regimes with K = 0 or K = D (not power laws) are left out.")
    return buf.getvalue(), caption


def sweep_figures(rows: list[dict], grid: dict, steps: int) -> list[tuple[str, bytes, str]]:
    """(file name, png, caption) for every swept axis with more than one value."""
    out = []
    for axis, vals in grid.items():
        if len(vals) < 2:
            continue
        others = [a for a, v in grid.items() if a != axis and len(v) > 1]
        made = exponent_figure(rows, axis, others, steps)
        if made:
            out.append((f"figures/exponents-vs-{axis}.png", made[0], made[1]))
    return out


__all__ = ["exponent_figure", "sweep_figures"]
