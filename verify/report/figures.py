"""The report's PNG figures (matplotlib, Agg backend), each drawn from saved part results only.

Every function returns ``(png_bytes, caption)`` or None when its data are absent, so the report
can be rebuilt from the saved parts without recomputing anything.
"""
from __future__ import annotations

import io
import math

LABELS = {"excess_loss": "L − L_opt", "loss": "L − L_opt", "s_err": "‖S − S*‖_F", "w_err": "‖W_X − V*‖_F"}


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    # Fixed metadata: the same data give the same bytes (no creation date in the file).
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    _plt().close(fig)
    return buf.getvalue()


def _positive(xs, ys):
    pts = [(x, y) for x, y in zip(xs, ys)
           if isinstance(x, (int, float)) and isinstance(y, (int, float)) and x > 0 and y > 0
           and math.isfinite(x) and math.isfinite(y)]
    return [p[0] for p in pts], [p[1] for p in pts]


def convergence(res: dict):
    """Log–log curves of Theorem 3.1's three quantities with the derived leading term, and a line of
    the claimed slope through the last point; legend gives the fitted tail slope."""
    if not res or "series" not in res:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    T = res["steps"]
    for ax, (q, info) in zip(axes, res["quantities"].items()):
        x, y = _positive(T, res["series"][q])
        ax.loglog(x, y, "o-", ms=2.5, lw=1.2, label=f"GD (fitted tail slope {info['fitted_slope']:.3f})")
        lx, ly = _positive(T, info.get("leading_term_values", []))
        keep = [i for i, t in enumerate(lx) if t >= 10]      # the leading term is a large-T statement
        if keep:
            ax.loglog([lx[i] for i in keep], [ly[i] for i in keep], "--", lw=1, label="derived leading term")
        if x:
            c = y[-1] / x[-1] ** info["claimed_slope"]
            ref = [t for t in x if t >= x[-1] / 1000]
            ax.loglog(ref, [c * t ** info["claimed_slope"] for t in ref], ":", lw=1.5,
                      label=f"claimed slope {info['claimed_slope']:g} (Thm 3.1)")
        ax.set_xlabel("T (GD steps)")
        ax.set_title(LABELS.get(q, q))
        ax.legend(fontsize=7, loc="lower left")
    reg = res.get("regime", {})
    fig.suptitle(f"Theorem 3.1 quantities, D={reg.get('D')} K={reg.get('K')} N={reg.get('N')} M={reg.get('M')} "
                 f"eta={reg.get('eta_v', reg.get('eta'))} (reduced engine, float64)", fontsize=10)
    return _png(fig), ("Log–log convergence of L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F with fitted tail slopes, "
                       "the derived leading terms and the slopes Theorem 3.1 claims.")


def alpha_trajectories(res: dict):
    """alpha_i(t) (row multiples of V*, Lemma C.2) and the support mass p_j(t)."""
    if not res or "alpha" not in res:
        return None
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
    T = res["steps"]
    rows = len(res["alpha"][0]) if res["alpha"] else 0
    for i in range(rows):
        x, y = _positive(T, [a[i] for a in res["alpha"]])
        a1.semilogx(x, y, lw=1.2, label=f"alpha_{i + 1}(t)")
    a1.axhline(1.0, color="k", lw=0.6, ls=":")
    a1.set_xlabel("t")
    a1.set_title("alpha_i(t) = <w_i, v*_i> / ||v*_i||^2")
    a1.legend(fontsize=7)
    cols = len(res["support_mass"][0]) if res.get("support_mass") else 0
    for j in range(cols):
        x, y = _positive(T, [1 - p[j] for p in res["support_mass"]])
        a2.loglog(x, y, lw=1.2, label=f"1 − p_{j + 1}(t)")
    a2.set_xlabel("t")
    a2.set_title("attention mass off the support, 1 − p_j(t)")
    a2.legend(fontsize=7)
    return _png(fig), "Row multiples alpha_i(t) of V* and the off-support attention mass 1 − p_j(t) along GD."


def attention(res: dict):
    """Heatmaps of S(t) (full-matrix engine) at a few steps, beside S*."""
    if not res or "snapshots" not in res:
        return None
    plt = _plt()
    snaps = res["snapshots"]
    fig, axes = plt.subplots(1, len(snaps) + 1, figsize=(2.6 * (len(snaps) + 1), 3.2))
    top = max(max(max(r) for r in res["sstar"]), max(max(max(r) for r in sn["S"]) for sn in snaps))
    for ax, sn in zip(axes, snaps):
        ax.imshow(sn["S"], vmin=0, vmax=top, cmap="viridis", aspect="auto")
        ax.set_title(f"S(t), t = {sn['step']}\n‖S−S*‖ = {sn['s_err']:.3g}", fontsize=8)
        ax.set_xlabel("column j")
        ax.set_ylabel("token i")
    im = axes[-1].imshow(res["sstar"], vmin=0, vmax=top, cmap="viridis", aspect="auto")
    axes[-1].set_title("S*", fontsize=8)
    fig.colorbar(im, ax=axes[-1], fraction=0.05)
    return _png(fig), "Attention S(t) from the full-matrix engine (no symmetry assumed) at a few steps, beside S*."


X_KEYS = ("step", "steps", "T", "t", "D", "horizons", "eta", "lambda", "K")


def _numeric_list(v) -> bool:
    return isinstance(v, list) and len(v) > 1 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                       for x in v)


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


def probe_figure(name: str, res: dict):
    from matplotlib.ticker import NullFormatter
    """A probe's key figure from its data arrays: one panel per (x, quantity), one line per regime;
    log–log where the values are positive."""
    data = (res or {}).get("data")
    if not data:
        return None
    groups: dict = {}
    for label, xkey, x, ys in _series_sets(data):
        for ykey, y in ys.items():
            base, _, tag = ykey.partition("[")
            line = " ".join(filter(None, [label, tag.rstrip("]")])) or name
            groups.setdefault((xkey, base), []).append((line, x, y))
    if not groups:
        return None
    order = sorted(groups, key=lambda g: (g[1] not in LABELS, list(LABELS).index(g[1]) if g[1] in LABELS else 0))
    keys = order[:4]
    plt = _plt()
    fig, axes = plt.subplots(1, len(keys), figsize=(4.3 * len(keys), 3.6), squeeze=False)
    for ax, (xkey, ykey) in zip(axes[0], keys):
        lines = groups[(xkey, ykey)][:12]
        logs = all(_positive(x, y)[0] and len(_positive(x, y)[0]) >= 0.8 * len(x) for _, x, y in lines)
        for line, x, y in lines:
            if logs:
                px, py = _positive(x, y)
                ax.loglog(px, py, lw=1.1, marker="o" if len(px) < 20 else None, ms=3, label=line)
            else:
                ax.plot(x, y, lw=1.1, marker="o" if len(x) < 20 else None, ms=3, label=line)
        ax.set_title(LABELS.get(ykey, ykey))
        ax.set_xlabel(xkey)
        ax.xaxis.set_minor_formatter(NullFormatter())   # short log ranges: minor labels overlap
        ax.yaxis.set_minor_formatter(NullFormatter())
        if len(lines) > 1 and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.suptitle(f"probe {name}", fontsize=10)
    what = ", ".join(LABELS.get(y, y) for _, y in keys)
    return _png(fig), f"Probe {name}: {what} from its data arrays, one line per regime."
