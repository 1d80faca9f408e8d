"""What every figure shares (the report's, and each probe's beside its computation): readable labels,
reading saved data, layout, legends, slope guides.

The figures are drawn on a bare ``matplotlib.figure.Figure`` (Agg, no pyplot state), so drawing one
figure never touches another. A figure function returns a :class:`Drawing` (the figure and its
caption) or None when the saved result holds no data for it; data that are there but malformed raise
:class:`FigureDataError`, so a broken figure is never dropped silently. This module imports nothing of
the report or the probes, so both can draw with it.
"""
from __future__ import annotations

import io
import math
import re
import textwrap
from dataclasses import dataclass
from fractions import Fraction

from .errors import VerificationError
from .model.quantities import QUANTITIES as _Q

# Every data key a probe or built-in part saves, in words and symbols (axis labels, titles, legends).
# The generic figure uses it too, so no raw variable name reaches a reader.
LABELS: dict[str, tuple[str, str]] = {
    # x arrays
    "step": ("GD step", "t"),
    "steps": ("GD step", "t"),
    "t": ("GD step", "t"),
    "T": ("GD steps", "T"),
    "D": ("sequence length", "D"),
    "K": ("support size", "K"),
    "eta": ("step size", "η"),
    "lambda": ("position scale", "λ"),
    "horizons": ("horizon (GD steps)", "T"),
    # Theorem 3.1's quantities (their symbols as verify.model.quantities writes them)
    "loss": ("loss", _Q["loss"].label),
    "excess_loss": ("excess loss", _Q["excess_loss"].label),
    "population_excess_loss": ("population excess loss", _Q["excess_loss"].label),
    "s_err": ("attention error", _Q["s_err"].label),
    "w_err": ("value error", _Q["w_err"].label),
    "excess_loss_closed_form": ("excess loss, closed form", _Q["excess_loss"].label),
    "w_err_closed_form": ("value error, closed form", _Q["w_err"].label),
    "excess_loss_leading": ("excess loss, derived leading term", _Q["excess_loss"].label),
    "s_err_leading": ("attention error, derived leading term", _Q["s_err"].label),
    "w_err_leading": ("value error, derived leading term", _Q["w_err"].label),
    # Lemma C.2 and the reduction
    "alpha": ("row multiple of V*", "α(t)"),
    "alpha_min": ("smallest row multiple of V*", "min_i α_i(t)"),
    "offspan": ("largest off-span residual", "max_i ‖w_i − α_i v*_i‖"),
    "wp_norm": ("positional value block", "‖W_P‖_F"),
    "bias_norm": ("output offset from W_P", "‖W_P P S‖_F"),
    "support_mass": ("attention mass on the support", "p(t)"),
    "shape_err": ("within-support shape error", "max_j ‖S_gj / ΣS_gj − S*_gj‖"),
    # input-dependent attention
    "s_spread": ("input spread of the attention", "(E‖S(Z) − E S(Z)‖²_F)^½"),
    "kq_x_block": ("part of W_KQ that sees X", "‖W_KQ outside the P–P block‖_F"),
    "kq_xx": ("X–X block of W_KQ", "‖W_KQ^XX‖_F"),
    "kq_xp": ("X–P block of W_KQ", "‖W_KQ^XP‖_F"),
    "kq_px": ("P–X block of W_KQ", "‖W_KQ^PX‖_F"),
    "kq_p_block": ("P–P block of W_KQ", "‖W_KQ^PP‖_F"),
    # T*
    "t_cross": ("transient length, crossing definition", "T*_cross"),
    "t_track": ("transient length, tracking definition", "T*_track"),
    "predicted": ("derived transient length", "K D / (2η‖V*‖²)"),
    # step-size boundaries
    "convergence_boundary": ("largest step size still converging like 1/T", "η_conv"),
    "divergence_boundary": ("largest step size keeping GD bounded", "η_div"),
    # D scan of the constants
    "T_times_loss": ("T times the excess loss", "T (L − L_opt)"),
    "T_times_leading": ("T times the derived leading term", "T · leading term"),
    "ratio_to_leading": ("GD over the derived leading term", "(L − L_opt) / leading term"),
    # Monte Carlo
    "mc_mean": ("Monte Carlo mean of the loss", "L̂"),
    "mc_stderr": ("Monte Carlo standard error", "se(L̂)"),
    "closed_form_gaussian": ("Gaussian closed-form loss", "L"),
}


def words(key: str) -> str:
    """``key`` in words and symbols, e.g. "value error ‖W_X − V*‖_F"; "loss[gumbel]" names its tag."""
    base, _, tag = key.partition("[")
    if base in LABELS:
        w, sym = LABELS[base]
        text = f"{w} {sym}"
    else:
        text = base.replace("_", " ")
    return f"{text} ({tag.rstrip(']')})" if tag else text


def shown(label: str) -> str:
    """A saved regime label as a reader sees it: "eta = 1/2" -> "η = 1/2", "1.5 x 2K/N" -> "1.5 × 2K/N"."""
    return re.sub(r"\beta(_KQ|_V)?\b", lambda m: "η" + (m.group(1) or ""), label).replace(" x ", " × ")


def symbol(key: str) -> str:
    base = key.partition("[")[0]
    return LABELS[base][1] if base in LABELS else base.replace("_", " ")


def title_words(key: str) -> str:
    base = key.partition("[")[0]
    w = LABELS[base][0] if base in LABELS else base.replace("_", " ")
    return w[:1].upper() + w[1:]


class FigureDataError(VerificationError, ValueError):
    """A saved result has data for a figure, but not in the shape the figure reads (the message says where)."""


@dataclass
class Drawing:
    """One figure and the caption that goes under it in the report."""

    figure: object
    caption: str

    def png(self) -> bytes:
        return png_bytes(self.figure, close=False)


def png_bytes(fig, close: bool = True) -> bytes:
    """The figure as PNG bytes, the report's size (dpi 110, tight); closed after unless ``close`` is False."""
    buf = io.BytesIO()
    # Fixed metadata: the same data give the same bytes (no creation date in the file).
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    if close:
        import matplotlib.pyplot as plt  # heavy: matplotlib
        plt.close(fig)
    return buf.getvalue()


# --- reading saved data ------------------------------------------------------------------------------
def need(d, key: str, where: str):
    """``d[key]``, or FigureDataError naming what is missing and what is there."""
    if not isinstance(d, dict) or key not in d:
        have = ", ".join(map(str, d)) if isinstance(d, dict) else type(d).__name__
        raise FigureDataError(f"{where}: no {key!r} (has: {have})")
    return d[key]


def floats(seq, where: str) -> list[float]:
    """A saved array as floats: JSON numbers, the strings "nan"/"inf"/"-inf" that stand for non-finite
    values, and None (no value at that step) as nan."""
    if not isinstance(seq, list):
        raise FigureDataError(f"{where}: expected a list of numbers, got {type(seq).__name__}")
    out = []
    for x in seq:
        if x is None:
            out.append(math.nan)
        elif isinstance(x, bool):
            raise FigureDataError(f"{where}: boolean {x!r} in a numeric array")
        elif isinstance(x, (int, float)):
            out.append(float(x))
        elif isinstance(x, str) and x.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
            out.append(float(x))
        else:
            raise FigureDataError(f"{where}: {x!r} is not a number")
    return out


def series(d: dict, xkey: str, ykey: str, where: str) -> tuple[list[float], list[float]]:
    """Two aligned arrays of a saved record (same length, else FigureDataError)."""
    x, y = floats(need(d, xkey, where), f"{where}[{xkey}]"), floats(need(d, ykey, where), f"{where}[{ykey}]")
    if len(x) != len(y):
        raise FigureDataError(f"{where}: {xkey} has {len(x)} values but {ykey} has {len(y)}")
    return x, y


def positive(xs, ys) -> tuple[list[float], list[float]]:
    """The points with finite, positive x and y (what a log–log axis can show)."""
    pts = [(x, y) for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0]
    return [p[0] for p in pts], [p[1] for p in pts]


def positive_y(xs, ys) -> tuple[list[float], list[float]]:
    """The points with finite x and finite, positive y (what a semilog-y axis can show)."""
    pts = [(x, y) for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y) and y > 0]
    return [p[0] for p in pts], [p[1] for p in pts]


def finite(xs, ys) -> tuple[list[float], list[float]]:
    pts = [(x, y) for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y)]
    return [p[0] for p in pts], [p[1] for p in pts]


def regime_dicts(data: dict) -> dict:
    """The entries of a probe's data that are one regime's run (a dict with a "step" array), by label."""
    return {k: v for k, v in data.items() if isinstance(v, dict) and isinstance(v.get("step"), list)}


def fraction_text(x) -> str:
    """A saved exact number ("1/10", 0.5) as short text."""
    if isinstance(x, str):
        return x
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    if isinstance(x, float):
        f = Fraction(x).limit_denominator(1000)
        return f"{f}" if abs(float(f) - x) < 1e-12 * max(1.0, abs(x)) else f"{x:g}"
    return str(x)


def regime_text(cfg: dict) -> str:
    """A setting's config (model.Setting.config()) in one short line; keys that are absent are left out."""
    if not isinstance(cfg, dict):
        return ""
    parts = [f"{cfg['preset']} teacher"] if cfg.get("preset") else []
    parts += [f"{k} = {cfg[k]}" for k in ("D", "K", "N", "M", "d") if k in cfg]
    eta_v, eta_kq = cfg.get("eta_v", cfg.get("eta")), cfg.get("eta_kq")
    if eta_v is not None:
        parts.append(f"η = {fraction_text(eta_v)}" if eta_kq in (None, eta_v)
                     else f"η_V = {fraction_text(eta_v)}, η_KQ = {fraction_text(eta_kq)}")
    if cfg.get("sigma") not in (None, "identity"):
        parts.append(f"σ = {cfg['sigma']}")
    if cfg.get("law") not in (None, "gaussian"):
        parts.append(f"{cfg['law']} entries")
    return ", ".join(parts)


def max_spread(curves: list[list[float]]) -> float:
    """Largest |difference| between curves of equal length at the same index (nan if they differ in length
    or a value is not finite): 0 means the curves coincide exactly."""
    if len(curves) < 2 or len({len(c) for c in curves}) != 1:
        return math.nan
    worst = 0.0
    for vals in zip(*curves):
        if not all(math.isfinite(v) for v in vals):
            return math.nan
        worst = max(worst, max(vals) - min(vals))
    return worst


def coincide(curves: list[list[float]], rel: float = 1e-12) -> bool:
    """True when the curves agree at every index to ``rel`` of their largest magnitude (float64 round-off)."""
    d = max_spread(curves)
    scale = max((abs(v) for c in curves for v in c if math.isfinite(v)), default=0.0)
    return math.isfinite(d) and d <= rel * max(scale, 1e-300)


# --- layout --------------------------------------------------------------------------------------------
# Colours by regime (tab10), line styles by what a line is: computed, closed form / derived, guide.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
GUIDE = {"color": "black", "lw": 1.1, "ls": ":", "zorder": 5}
DERIVED = {"ls": "--", "lw": 1.2}
COMPUTED = {"ls": "-", "lw": 1.4}


def new_figure(ncols: int, nrows: int = 1, *, width: float = 4.3, height: float = 3.5):
    """A constrained-layout figure with an ``nrows`` × ``ncols`` grid of axes (a 2-D array)."""
    from matplotlib.figure import Figure  # heavy: matplotlib
    fig = Figure(figsize=(width * ncols, height * nrows + 0.9), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def label_axes(ax, xlabel: str, ylabel: str, title: str) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)


def readable_ticks(ax) -> None:
    """A log axis whose range holds fewer than two powers of ten shows one labelled number or none
    with matplotlib's defaults; label a subset of its minor ticks then, so that every axis carries at
    least two numbers. Call it after the last change to the axes' limits."""
    from matplotlib.ticker import LogFormatterSciNotation  # heavy: matplotlib
    for axis, scale, lim in ((ax.xaxis, ax.get_xscale(), ax.get_xlim), (ax.yaxis, ax.get_yscale(), ax.get_ylim)):
        if scale != "log":
            continue
        lo, hi = sorted(lim())
        if lo <= 0:
            continue
        powers = math.floor(math.log10(hi)) - math.ceil(math.log10(lo)) + 1
        if powers < 2:
            axis.set_minor_formatter(LogFormatterSciNotation(labelOnlyBase=False, minor_thresholds=(3, 1)))


def figure_legend(fig, axes, ncols: int | None = None, title: str | None = None) -> None:
    """One legend for the whole figure, below the panels (outside every axes): the distinct labels of
    every panel, in order of first appearance."""
    seen: dict = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab and not lab.startswith("_") and lab not in seen:
                seen[lab] = h
    if not seen:
        return
    n = ncols or min(len(seen), 4)
    leg = fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncols=n, fontsize=8, title=title,
                     title_fontsize=8, frameon=False)
    sup = getattr(fig, "_supxlabel", None)
    if sup is not None and sup.get_gid() == "note":      # a note written before the legend: move it into it
        leg.set_title(sup.get_text(), prop={"size": 8.5, "style": "italic"})
        leg.get_title().set_gid("note")
        sup.set_text("")


def note(fig, text: str) -> None:
    """A remark a reader needs (curves overlapping by design, a quantity that is 0 throughout), printed
    under the panels, outside them: as the heading of the figure legend (so the layout reserves its
    room), or as the figure's x super-label when there is no legend. Tagged with gid "note"."""
    if not text:
        return
    wrapped = textwrap.fill(text, int(fig.get_figwidth() * 16))   # about 16 characters of 8.5 pt text per inch
    if fig.legends:
        leg = fig.legends[-1]
        leg.set_title(wrapped, prop={"size": 8.5, "style": "italic"})
        leg.get_title().set_gid("note")
    else:
        fig.supxlabel(wrapped, fontsize=8.5, style="italic").set_gid("note")


def slope_guide(ax, x: list[float], y: list[float], slope: float, label: str, *, at: int = -1,
                decades: float | None = None, xrange: tuple[float, float] | None = None, **style):
    """The line c·x^slope through the data point (x[at], y[at]) (positive points only), drawn over the
    data's x range, or ``xrange``, or the last ``decades`` decades before the anchor. Tagged with gid
    "guide:<slope>" so that tests and readers of the figure object can find it."""
    px, py = positive(x, y)
    if not px:
        return None
    i = at if at >= 0 else len(px) + at
    x0, y0 = px[i], py[i]
    lo, hi = xrange if xrange else (min(px), max(px))
    if decades is not None and at == -1:
        lo = max(lo, x0 / 10 ** decades)
    xs = [lo * (hi / lo) ** (k / 40) for k in range(41)] if hi > lo else [lo]
    c = y0 / x0 ** slope
    (line,) = ax.plot(xs, [c * t ** slope for t in xs], label=label, **(GUIDE | style))
    line.set_gid(f"guide:{slope:g}")
    return line


def keep_data_limits(ax, ys: list[float], *, log: bool, pad: float = 1.6) -> None:
    """Fit the y range to the computed data (padded), so derived curves that blow up at small t or
    fall below float64 round-off do not squash the data."""
    vals = [v for v in ys if math.isfinite(v) and (v > 0 or not log)]
    if not vals:
        return
    lo, hi = min(vals), max(vals)
    if log:
        ax.set_ylim(lo / pad, hi * pad)
    else:
        span = (hi - lo) or max(abs(hi), 1.0)
        ax.set_ylim(lo - 0.08 * span, hi + 0.08 * span)
