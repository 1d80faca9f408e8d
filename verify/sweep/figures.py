"""Figures of a sweep, one pair per swept axis:

- ``exponents-vs-<axis>.png``: the fitted T-exponents of Theorem 3.1's quantities against the axis, with the
  claimed exponents (-1, -1/2, -1/2) drawn in;
- ``constants-vs-<axis>.png``: the rate constants T (L - L_opt), sqrt(T) ||S - S*||_F and sqrt(T) ||W_X - V*||_F
  at the horizon against the axis, the constants the disputed D-dependence is about: GD's, the derived leading
  terms', and the growth Theorem 3.1 claims in that axis (its exponent of D, K, eta or ||V*||).

Every claimed exponent is computed from the claimed orders (verify.model.paper); quantities are named by
verify.model.quantities.
"""
from __future__ import annotations

import io
import math
from fractions import Fraction

from ..model.paper import claimed_exponent
from ..model.quantities import QUANTITIES as NAMES
from .measures import QUANTITIES, claimed_t_exponents

# Swept axes that are a variable of Theorem 3.1's claimed orders, and that variable's name in verify.model.paper.
CLAIMED_VARIABLES = {"D": "D", "K": "K", "eta": "eta", "vstar_norm": "vnorm"}


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


def _power_text(p: float) -> str:
    f = Fraction(p).limit_denominator(12)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


class AxisLayout:
    """Where a swept axis' values sit on the x axis: numbers at their value (log scale over a factor 4 or
    more), anything else (sigma, law, preset) at its index."""

    def __init__(self, values: list):
        self.values = values
        nums = [_number(v) for v in values]
        self.numeric = all(x is not None for x in nums)
        self.log = self.numeric and all(x > 0 for x in nums) and max(nums) / min(nums) >= 4
        self.pos = {v: (x if self.numeric else i) for i, (v, x) in enumerate(zip(values, nums))}

    def apply(self, ax, axis: str) -> None:
        ax.set_xlabel(axis + (" (log scale)" if self.log else ""))
        if self.log:
            ax.set_xscale("log", base=2)
        if not self.numeric:
            ax.set_xticks(range(len(self.values)), [str(v) for v in self.values])
        elif len(self.values) <= 8:
            ax.set_xticks([self.pos[v] for v in self.values], [str(v) for v in self.values])
            ax.minorticks_off()


def _power_law_rows(rows: list[dict], axis: str) -> list[dict]:
    # K = 0 (constant) and K = D (geometric) are not power laws in T (derived): their slopes and constants say
    # nothing about the 1/T phase.
    return [r for r in rows if r.get("status") == "ok" and axis in r and 0 < (r.get("K") or 0) < (r.get("D") or 0)]


def _groups(rows: list[dict], others: list[str]) -> list[tuple[str, list[dict]]]:
    """The rows by the values of the other swept axes, as (legend label, rows)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple((o, r.get(o)) for o in others), []).append(r)
    return [(", ".join(f"{k}={v}" for k, v in g) or "all rows", rs) for g, rs in sorted(groups.items(), key=str)]


def _points(rs: list[dict], layout: AxisLayout, axis: str, key: str) -> list[tuple[float, float]]:
    pts = [(layout.pos[r[axis]], r.get(key)) for r in rs]
    return sorted((x, y) for x, y in pts if isinstance(y, (int, float)) and math.isfinite(y))


def _png(fig) -> bytes:
    import matplotlib.pyplot as plt  # heavy: matplotlib
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def _discard(fig) -> None:
    import matplotlib.pyplot as plt  # heavy: matplotlib
    plt.close(fig)


def _panels():
    import matplotlib  # heavy: matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # heavy: matplotlib
    return plt.subplots(1, 3, figsize=(13, 4.4), sharex=True)


def _start(rows: list[dict], axis: str):
    """(the rows that are power laws in T, the layout of their ``axis`` values, a figure and its three panels), or
    None when no row is a power law."""
    ok = _power_law_rows(rows, axis)
    if not ok:
        return None
    fig, axes = _panels()
    return ok, AxisLayout(list(dict.fromkeys(r[axis] for r in ok))), fig, axes


def _legend(fig, axes) -> None:
    seen: dict = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen), loc="lower center", ncol=min(len(seen), 4), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08 + 0.035 * (len(seen) // 4), 1, 0.94))


def exponent_figure(rows: list[dict], axis: str, others: list[str], steps: int) -> tuple[bytes, str] | None:
    """(png, caption): the three fitted exponents against ``axis``, one line per combination of the other
    swept axes, with Theorem 3.1's claimed exponents as dashed lines; None when nothing was fitted."""
    start = _start(rows, axis)
    if start is None:
        return None
    ok, layout, fig, axes = start
    claimed = claimed_t_exponents()
    plotted = False
    for ax, q in zip(axes, QUANTITIES):
        for gi, (label, rs) in enumerate(_groups(ok, others)):
            pts = _points(rs, layout, axis, f"slope_{q}")
            if not pts:
                continue
            plotted = True
            err = {layout.pos[r[axis]]: r.get(f"slope_se_{q}") or 0.0 for r in rs}
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[err[p[0]] for p in pts], marker="o", ms=4,
                        lw=1.2, capsize=2, label=label, color=f"C{gi % 10}")
        ax.axhline(claimed[q], ls="--", color="k", lw=1, label="Theorem 3.1's exponent")
        ax.set_title(f"{NAMES[q].label}: fitted exponent in T")
        ax.set_ylabel("log-log slope over the last decade of T")
        layout.apply(ax, axis)
    if not plotted:
        _discard(fig)
        return None
    fig.suptitle(f"Fitted T-exponents against {axis} (GD for T = {steps} steps; slopes over [T/10, T]; "
                 "error bars: fit standard error)", fontsize=10)
    _legend(fig, axes)
    by = ", ".join(others) if others else "the other options"
    caption = (f"Fitted tail exponents of L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F against {axis}; one line per "
               f"value of {by}; dashed: Theorem 3.1's " + ", ".join(_power_text(claimed[q]) for q in QUANTITIES)
               + ". Regimes with K = 0 or K = D (not power laws) are left out.")
    return _png(fig), caption


def _claimed_growth(ax, pts: list[tuple[float, float]], exponent: float, axis: str) -> None:
    """The line c x^exponent through the first point: the growth Theorem 3.1 claims along the axis."""
    x0, y0 = pts[0]
    lo, hi = pts[0][0], pts[-1][0]
    xs = [lo * (hi / lo) ** (k / 40) for k in range(41)]
    ax.plot(xs, [y0 * (x / x0) ** exponent for x in xs], ls=":", color="k", lw=1.4,
            label=f"Theorem 3.1's growth, ∝ {axis}^{_power_text(exponent)}")


def constants_figure(rows: list[dict], axis: str, others: list[str], steps: int) -> tuple[bytes, str] | None:
    """(png, caption): the rate constants q(T) T^-p of the three quantities at T = ``steps`` against ``axis``:
    GD's (solid, markers), the derived leading terms' (dashed) and, when ``axis`` is a variable of the claimed
    orders, the claimed growth in it (dotted, through GD's first point); None when no constant was measured."""
    start = _start(rows, axis)
    if start is None:
        return None
    ok, layout, fig, axes = start
    p = claimed_t_exponents()
    var = CLAIMED_VARIABLES.get(axis) if layout.numeric else None
    plotted = False
    for ax, q in zip(axes, QUANTITIES):
        first = None
        for gi, (label, rs) in enumerate(_groups(ok, others)):
            gd, lead = _points(rs, layout, axis, f"constant_{q}"), _points(rs, layout, axis, f"derived_constant_{q}")
            if gd:
                plotted, first = True, first or gd
                ax.plot([x for x, _ in gd], [y for _, y in gd], marker="o", ms=4, lw=1.2, color=f"C{gi % 10}",
                        label=f"GD: {label}")
            if lead:
                ax.plot([x for x, _ in lead], [y for _, y in lead], ls="--", lw=1.0, color=f"C{gi % 10}",
                        label=f"derived leading term: {label}")
        if var is not None and first is not None and len(first) > 1:
            _claimed_growth(ax, first, float(claimed_exponent(q, var)), axis)
        scale = "" if p[q] == -1 else f"^{_power_text(-p[q])}"
        name = f"({NAMES[q].label})" if " " in NAMES[q].label else NAMES[q].label
        log = all(y > 0 for line in ax.get_lines() for y in line.get_ydata())
        if log:
            ax.set_yscale("log")
        ax.set_title(f"T{scale} · {name} at T = {steps}")
        ax.set_ylabel(f"T{scale} · {name}" + (" (log scale)" if log else ""))
        layout.apply(ax, axis)
    if not plotted:
        _discard(fig)
        return None
    fig.suptitle(f"Rate constants against {axis}: GD, the derived leading terms and Theorem 3.1's claimed growth",
                 fontsize=10)
    _legend(fig, axes)
    claim = (f"dotted: the growth Theorem 3.1 claims in {axis} (" + ", ".join(
        f"{axis}^{_power_text(float(claimed_exponent(q, var)))}" for q in QUANTITIES) + "), through GD's first point"
             if var else f"Theorem 3.1 states no growth in {axis}")
    caption = (f"T·(L − L_opt), √T·‖S − S*‖_F and √T·‖W_X − V*‖_F at T = {steps} against {axis}: solid, GD; dashed, "
               f"the derived leading terms' constants; {claim}. Regimes with K = 0 or K = D (not power laws) are "
               "left out; a row that ends before the onset T* (column before_tstar) is not yet asymptotic.")
    return _png(fig), caption


def sweep_figures(rows: list[dict], grid: dict, steps: int) -> list[tuple[str, bytes, str]]:
    """(file name, png, caption) of both figures for every swept axis with more than one value."""
    out = []
    for axis, vals in grid.items():
        if len(vals) < 2:
            continue
        others = [a for a, v in grid.items() if a != axis and len(v) > 1]
        for name, make in (("exponents", exponent_figure), ("constants", constants_figure)):
            made = make(rows, axis, others, steps)
            if made:
                out.append((f"figures/{name}-vs-{axis}.png", made[0], made[1]))
    return out


__all__ = ["exponent_figure", "constants_figure", "sweep_figures", "CLAIMED_VARIABLES"]
