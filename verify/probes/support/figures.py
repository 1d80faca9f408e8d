"""What the probes' figures share beyond verify.plotting: the runs of a saved result, legend entries without
data, a two-line figure title, and the log-log panels of Theorem 3.1's three quantities with the claimed
slopes in T (verify.model.paper, through :func:`verify.probes.support.interior.claimed_t_exponents`).
"""
from __future__ import annotations

from ...model.quantities import KEYS
from ...plotting import (COLOURS, COMPUTED, DERIVED, FigureDataError, keep_data_limits, label_axes, need, positive,
                         readable_ticks, regime_dicts, series, shown, slope_guide, symbol, title_words)
from .interior import claimed_t_exponents

SLOPE_GUIDE = "claimed slope in T (Theorem 3.1): −1 for L − L_opt, −½ for the distances"


def runs_of(res: dict, name: str) -> dict:
    """The entries of a probe's saved data that are one run (a dict with a "step" array), by label."""
    regs = regime_dicts(need(res, "data", f"probe {name}"))
    if not regs:
        raise FigureDataError(f"probe {name}: data holds no run (a dict with a 'step' array)")
    return regs


def legend_entry(ax, label: str, **style) -> None:
    """A legend entry with no data (a line style's meaning)."""
    ax.plot([], [], label=label, **style)


def suptitle(fig, title: str, sub: str = "") -> None:
    fig.suptitle(title + (f"\n{sub}" if sub else ""), fontsize=11)


def last_value(regs: dict, label: str, q: str, name: str) -> float:
    """The last positive value of ``q`` in run ``label`` (0 when there is none)."""
    return (positive(*series(regs[label], "step", q, name))[1] or [0.0])[-1]


def rate_panels(axes, regs: dict, name: str, *, names=None, leading: bool = True, anchor: str | None = None,
                styles=None) -> list[str]:
    """One log–log panel per Theorem 3.1 quantity: one line per run, its derived leading term (dashed,
    when saved as "<q>_leading"), and a line of the claimed slope through a data point (the last point of
    the run ``anchor``, else of the run that ends highest)."""
    names, styles = names or {}, styles or {}
    for ax, q in zip(axes, KEYS):
        ys_all = []
        for i, (label, d) in enumerate(regs.items()):
            where = f"probe {name}: data[{label!r}]"
            x, y = positive(*series(d, "step", q, where))
            st = styles.get(label, {})
            ax.loglog(x, y, color=st.get("color", COLOURS[i % 10]), label=names.get(label, shown(label)),
                      **(COMPUTED | {k: v for k, v in st.items() if k != "color"}))
            ys_all += y
            if leading and f"{q}_leading" in d:
                lx, ly = positive(*series(d, "step", f"{q}_leading", where))
                keep = [k for k, t in enumerate(lx) if t >= 10]   # the leading term is a large-T statement
                ax.loglog([lx[k] for k in keep], [ly[k] for k in keep], color=COLOURS[i % 10], label="_lead", **DERIVED)
        if leading and any(f"{q}_leading" in d for d in regs.values()):
            legend_entry(ax, "derived leading term (dashed, colour of its run)", color="0.35", **DERIVED)
        pick = anchor if anchor in regs else max(regs, key=lambda k: last_value(regs, k, q, name))
        gx, gy = positive(*series(regs[pick], "step", q, name))
        slope_guide(ax, gx, gy, claimed_t_exponents()[q], SLOPE_GUIDE, decades=3)
        keep_data_limits(ax, ys_all, log=True)
        label_axes(ax, "GD step t", symbol(q), f"{title_words(q)} {symbol(q)}")
        readable_ticks(ax)
    return list(KEYS)


__all__ = ["runs_of", "legend_entry", "suptitle", "rate_panels", "SLOPE_GUIDE"]
