"""The report's PNG figures (matplotlib, Agg), each drawn from saved part results only.

Built-in figures: :func:`convergence` (Theorem 3.1's three quantities), :func:`alpha_trajectories`
(Lemma C.2's row multiples and the off-support attention mass) and :func:`attention` (S(t) beside S*).
Every probe draws its own figure beside its computation (``verify.probes.PROBES[name].draw``);
:func:`probe_figure` asks the probe for it and falls back to a generic figure with readable labels for a
result whose probe is not registered. Each ``draw_*`` function returns a :class:`Drawing` (figure and
caption) or None when the result holds no data for it; the report-facing wrappers return
``(png_bytes, caption)`` or None. Malformed data raise :class:`FigureDataError`.
"""
from __future__ import annotations

import math

from ..certify.figure import certified_band_figure
from ..probes import PROBES
from ..plotting import (COLOURS, COMPUTED, DERIVED, LABELS, Drawing, FigureDataError, coincide, figure_legend, finite,
                        floats, keep_data_limits, label_axes, need, new_figure, note, positive, positive_y,
                        readable_ticks, regime_text, slope_guide, symbol, title_words, words)
from ..reconcile.figure import convention_figure as draw_convention

QUANTITY_ORDER = ("excess_loss", "s_err", "w_err")


def _report(drawing):
    return None if drawing is None else (drawing.png(), drawing.caption)


# --- Theorem 3.1 ------------------------------------------------------------------------------------------
def draw_convergence(res: dict) -> Drawing | None:
    """Log–log curves of L − L_opt, ‖S − S*‖_F, ‖W_X − V*‖_F against T: GD, the derived leading term,
    a line of the claimed slope through the last point, and the window of the tail fit."""
    if not res or "series" not in res:
        return None
    T = floats(need(res, "steps", "convergence"), "convergence[steps]")
    quantities = need(res, "quantities", "convergence")
    keys = [q for q in QUANTITY_ORDER if q in quantities] + [q for q in quantities if q not in QUANTITY_ORDER]
    fig, axes = new_figure(len(keys), width=4.4)
    for ax, q in zip(axes[0], keys):
        info = quantities[q]
        y = floats(need(res["series"], q, "convergence[series]"), f"convergence[series][{q}]")
        x, y = positive(T, y)
        ax.loglog(x, y, color=COLOURS[0], marker="o", ms=2.5, label="GD (reduced recursion)", **COMPUTED)
        lead = info.get("leading_term_values")
        if lead:
            lx, ly = positive(T, floats(lead, f"convergence[quantities][{q}][leading_term_values]"))
            keep = [i for i, t in enumerate(lx) if t >= 10]      # the leading term is a large-T statement
            ax.loglog([lx[i] for i in keep], [ly[i] for i in keep], color=COLOURS[1],
                      label="derived leading term", **DERIVED)
        claimed = need(info, "claimed_slope", f"convergence[quantities][{q}]")
        slope_guide(ax, x, y, claimed, "claimed slope through the last point (Theorem 3.1)", decades=3)
        fr = info.get("fit_range")
        if isinstance(fr, list) and len(fr) == 2:
            ax.axvspan(fr[0], fr[1], color="0.85", zorder=0, label="window of the tail fit")
        keep_data_limits(ax, y, log=True)
        fitted = info.get("fitted_slope")
        sub = (f"fitted tail slope {fitted:.3f}, claimed {claimed:g}" if isinstance(fitted, (int, float))
               else f"claimed slope {claimed:g}").replace("-", "−")
        label_axes(ax, "GD steps T", symbol(q), f"{title_words(q)} {symbol(q)}\n{sub}")
        readable_ticks(ax)
    figure_legend(fig, axes[0])
    reg = regime_text(res.get("regime") or {})
    fig.suptitle("Theorem 3.1 in T: gradient descent, the derived leading terms and the claimed slopes"
                 + (f"\n{reg}" if reg else ""), fontsize=11)
    return Drawing(fig, "Log–log convergence of L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F against the number of GD "
                        "steps T (reduced recursion, float64), with the derived leading terms, lines of the slopes "
                        "Theorem 3.1 claims (−1, −½, −½) through the last point, and the window of the fitted "
                        "tail slope." + (f" Regime: {reg}." if reg else ""))


def convergence(res: dict):
    """(png, caption) of :func:`draw_convergence`, or None."""
    return _report(draw_convergence(res))


def draw_alpha(res: dict) -> Drawing | None:
    """α_i(t) (row multiples of V*, Lemma C.2) and the off-support attention mass 1 − p_j(t), with the
    derived slope −½ of the mass's tail."""
    if not res or "alpha" not in res:
        return None
    T = floats(need(res, "steps", "convergence"), "convergence[steps]")
    alpha = need(res, "alpha", "convergence")
    mass = res.get("support_mass") or []
    if len(alpha) != len(T) or (mass and len(mass) != len(T)):
        raise FigureDataError(f"convergence: {len(T)} steps but {len(alpha)} alpha rows and {len(mass)} "
                              "support_mass rows")
    fig, axes = new_figure(2, width=5.0)
    a1, a2 = axes[0]
    rows = len(alpha[0]) if alpha else 0
    curves = [floats([a[i] for a in alpha], f"convergence[alpha][:, {i}]") for i in range(rows)]
    same_rows = rows > 1 and coincide(curves)
    for i, c in enumerate(curves):
        pts = [(t, v) for t, v in zip(T, c) if t > 0 and math.isfinite(v)]     # semilog-x: t = 0 has no place
        x, y = [p[0] for p in pts], [p[1] for p in pts]
        a1.semilogx(x, y, color=COLOURS[i % 10], lw=2.6 - 1.2 * (i > 0), ls="-" if i == 0 else (0, (4, 3)),
                    label=f"α_{i + 1}(t)")
    a1.axhline(1.0, color="black", lw=0.8, ls=":", label="α = 1 (row of W_X equals row of V*)")
    label_axes(a1, "GD step t", "α_i(t) = ⟨w_i, v*_i⟩ / ‖v*_i‖²", "Row multiples of V* (Lemma C.2)")
    cols = len(mass[0]) if mass else 0
    mcurves = [[1.0 - v for v in floats([p[j] for p in mass], f"convergence[support_mass][:, {j}]")]
               for j in range(cols)]
    same_cols = cols > 1 and coincide(mcurves)
    for j, c in enumerate(mcurves):
        x, y = positive(T, c)
        a2.loglog(x, y, color=COLOURS[(j + 3) % 10], lw=2.6 - 1.2 * (j > 0), ls="-" if j == 0 else (0, (4, 3)),
                  label=f"1 − p_{j + 1}(t)")
    if mcurves:
        x, y = positive(T, mcurves[0])
        slope_guide(a2, x, y, -0.5, "slope −½ (derived: Δu = −c u³ gives u ≈ 1/√(2cT))", decades=2)
        keep_data_limits(a2, y, log=True)
    label_axes(a2, "GD step t", "1 − p_j(t)", "Attention mass off the support")
    for ax in (a1, a2):
        readable_ticks(ax)
    figure_legend(fig, [a1, a2], ncols=4)
    notes = []
    if same_rows:
        eq = " = ".join(f"α_{i + 1}(t)" for i in range(rows)) if rows <= 3 else f"α_1(t) = … = α_{rows}(t)"
        notes.append(f"{eq} at every step (curves overlap; for σ = identity the α-update does "
                     "not depend on the row)" if (res.get("convention") or {}).get("sigma") == "identity"
                     else f"{eq} at every step (curves overlap)")
    if same_cols:
        notes.append(f"1 − p_j(t) is the same for all {cols} columns (curves overlap: one δ for every column)")
    if notes:
        note(fig, "; ".join(notes) + ".")
    reg = regime_text(res.get("regime") or {})
    fig.suptitle("Lemma C.2 along GD: row multiples α_i(t) and the off-support attention mass"
                 + (f"\n{reg}" if reg else ""), fontsize=11)
    return Drawing(fig, "Row multiples α_i(t) = ⟨w_i, v*_i⟩/‖v*_i‖² of V* (semilog in t; they overshoot 1 and "
                        "return from above) and the attention mass off the support, 1 − p_j(t) (log–log, with "
                        "the derived slope −½)." + (" " + "; ".join(notes) + "." if notes else "")
                   + (f" Regime: {reg}." if reg else ""))


def alpha_trajectories(res: dict):
    """(png, caption) of :func:`draw_alpha`, or None."""
    return _report(draw_alpha(res))


def draw_attention(res: dict) -> Drawing | None:
    """Heatmaps of S(t) (full-matrix engine) at a few steps, beside S*, on one colour scale."""
    if not res or "snapshots" not in res:
        return None
    snaps = need(res, "snapshots", "attention")
    sstar = need(res, "sstar", "attention")
    mats = [[floats(r, "attention[snapshots][S]") for r in need(sn, "S", "attention[snapshots]")] for sn in snaps]
    star = [floats(r, "attention[sstar]") for r in sstar]
    top = max(max(max(r) for r in m) for m in mats + [star])
    fig, axes = new_figure(len(snaps) + 1, width=2.7, height=3.3)
    ims = []
    for ax, sn, m in zip(axes[0], snaps, mats):
        ims.append(ax.imshow(m, vmin=0, vmax=top, cmap="viridis", aspect="auto"))
        err = sn.get("s_err")
        label_axes(ax, "output column j", "token i", f"S(t) at t = {sn.get('step')}"
                   + (f"\n‖S − S*‖_F = {err:.3g}" if isinstance(err, (int, float)) else ""))
    im = axes[0][-1].imshow(star, vmin=0, vmax=top, cmap="viridis", aspect="auto")
    label_axes(axes[0][-1], "output column j", "token i", "teacher S*\n(target)")
    for ax, m in zip(axes[0], mats + [star]):
        rows, cols = len(m), len(m[0]) if m else 0
        ax.set_xticks(range(cols), [str(j + 1) for j in range(cols)])
        ax.set_yticks(range(rows), [str(i + 1) for i in range(rows)])
        ax.tick_params(labelsize=8)
    cb = fig.colorbar(im, ax=list(axes[0]), fraction=0.03, pad=0.02)
    cb.set_label("attention weight S_ij")
    reg = regime_text(res.get("regime") or {})
    fig.suptitle("Attention S(t) learned by full-matrix GD (no symmetry assumed), beside the teacher's S*"
                 + (f"\n{reg}" if reg else ""), fontsize=11)
    return Drawing(fig, "Attention matrix S(t) (rows: tokens i, columns: outputs j) from the full-matrix engine at "
                        "a few steps, on the colour scale of S* (right): it starts uniform (1/D) and concentrates on "
                        "the support of S*." + (f" Regime: {reg}." if reg else ""))


def attention(res: dict):
    """(png, caption) of :func:`draw_attention`, or None."""
    return _report(draw_attention(res))


BUILTIN_FIGURES = {"convergence": draw_convergence, "alpha": draw_alpha, "attention": draw_attention}


# --- probes ------------------------------------------------------------------------------------------------
X_KEYS = ("step", "steps", "T", "t", "D", "horizons", "eta", "lambda", "K")


def _numeric_list(v) -> bool:
    return isinstance(v, list) and len(v) > 1 and all(
        (isinstance(x, (int, float)) and not isinstance(x, bool)) or x is None
        or (isinstance(x, str) and x in ("nan", "inf", "-inf")) for x in v)


def _series_sets(data, label="", depth=0):
    """Find, anywhere in a probe's data, dicts holding an x array (step, D, ...) and y arrays of the
    same length: (label, x name, x, {y name: y})."""
    found = []
    if depth > 4:
        return found
    if isinstance(data, dict):
        xkey = next((k for k in X_KEYS if _numeric_list(data.get(k))), None)
        ys = {k: v for k, v in data.items() if k != xkey and _numeric_list(v) and xkey and len(v) == len(data[xkey])}
        if ys:
            found.append((label, xkey, data[xkey], ys))
        for k, v in data.items():
            if isinstance(v, (dict, list)) and k not in ys and k != xkey:
                found += _series_sets(v, f"{label}/{k}".strip("/"), depth + 1)
    elif isinstance(data, list) and data and isinstance(data[0], dict):
        for i, v in enumerate(data):
            found += _series_sets(v, v.get("label", f"{label}[{i}]") if isinstance(v, dict) else label, depth + 1)
    return found


def draw_generic(name: str, res: dict) -> Drawing | None:
    """A probe's data arrays, for a probe without its own figure: one panel per (x, quantity) with
    readable labels, one line per regime; log axes where the values are positive (x only when it spans
    two decades); one legend under the panels; a note when curves coincide."""
    data = (res or {}).get("data")
    if not data:
        return None
    groups: dict = {}
    for label, xkey, x, ys in _series_sets(data):
        for ykey, y in ys.items():
            base, _, tag = ykey.partition("[")
            line = " ".join(filter(None, [label, tag.rstrip("]")])) or name
            groups.setdefault((xkey, base), []).append((line, floats(x, f"{name}[{xkey}]"),
                                                        floats(y, f"{name}[{ykey}]")))
    if not groups:
        return None
    rank = {k: i for i, k in enumerate(LABELS)}
    keys = sorted(groups, key=lambda g: rank.get(g[1], len(rank)))[:4]
    fig, axes = new_figure(len(keys))
    notes = []
    for ax, (xkey, ykey) in zip(axes[0], keys):
        lines = groups[(xkey, ykey)][:10]
        logy = all(len(positive_y(x, y)[1]) >= 0.8 * len(y) for _, x, y in lines)
        xs = [v for _, x, _ in lines for v in x if math.isfinite(v) and v > 0]
        logx = logy and bool(xs) and max(xs) / min(xs) >= 100
        same = len(lines) > 1 and coincide([y for _, _, y in lines])
        for i, (line, x, y) in enumerate(lines):
            px, py = positive(x, y) if logx else positive_y(x, y) if logy else finite(x, y)
            # coinciding curves: wide solid under narrower dashes, so that every one shows
            style = ({"lw": max(4.0 - 1.0 * i, 1.0), "ls": "-" if i == 0 else (0, (4, 2 + i))} if same
                     else {"lw": 1.4, "ls": "-"})
            ax.plot(px, py, color=COLOURS[i % 10], marker="o" if len(px) < 20 else None, ms=3, label=line, **style)
        ax.set_xscale("log" if logx else "linear")
        ax.set_yscale("log" if logy else "linear")
        label_axes(ax, words(xkey), symbol(ykey), title_words(ykey))
        readable_ticks(ax)
        if same:
            notes.append(f"{title_words(ykey).lower()}: the curves of all {len(lines)} runs coincide")
    figure_legend(fig, axes[0])
    if notes:
        note(fig, "; ".join(notes) + ".")
    fig.suptitle(f"Probe {name}: " + ", ".join(title_words(y).lower() for _, y in keys), fontsize=11)
    what = ", ".join(words(y) for _, y in keys)
    return Drawing(fig, f"Probe {name}: {what}, one line per regime." + (" " + "; ".join(notes) + "." if notes else ""))


def draw_probe(name: str, res: dict) -> Drawing | None:
    """The figure of probe ``name``: the probe's own (its ``draw``), or the generic one when no probe of that
    name is registered."""
    if not res or not (res.get("data")):
        return None
    return PROBES[name].draw(res) if name in PROBES else draw_generic(name, res)


def probe_figure(name: str, res: dict):
    """(png, caption) of :func:`draw_probe`, or None when the result has no data."""
    return _report(draw_probe(name, res))


__all__ = ["convergence", "alpha_trajectories", "attention", "probe_figure", "draw_convergence", "draw_alpha",
           "draw_attention", "draw_probe", "draw_generic", "BUILTIN_FIGURES", "LABELS", "Drawing",
           "FigureDataError", "words"]


def certify_band(res: dict):
    """The certified band (verify certify) from a saved certify part; None when it holds no band."""
    return certified_band_figure(res) if res.get("band") else None


def convention_figure(res: dict):
    """The family of conventions (verify reconcile) from a saved reconcile part."""
    return draw_convention(res)
