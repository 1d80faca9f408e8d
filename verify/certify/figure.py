"""The certified band on log-log axes out to T = 10^12, with the GD trajectory drawn inside it.

:func:`band` evaluates a certificate's bounds on a log grid (cheap: no step loop beyond the prefix)
into plain floats; :func:`certified_band_figure` draws from a certificate or from that saved data
(e.g. a ``verify all`` part result), so a report can be rebuilt without recomputing.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..engines.fast import iterate_fast
from ..plotting import png_bytes
from .bounds import QUANTITIES
LABELS = {"excess_loss": "L − L_opt", "s_err": "‖S − S*‖_F", "w_err": "‖W_X − V*‖_F"}
T_MAX = 10**12
POWER = {"excess_loss": 1.0, "s_err": 0.5, "w_err": 0.5}


def _eta(data: dict) -> float:
    return float(Fraction(str((data.get("regime") or {}).get("eta_v", "1"))))


def grid(T0: int, t_max: int = T_MAX, per_decade: int = 8) -> list[int]:
    """Log-spaced steps 1..t_max, plus T0 and T0 + 1 (where the prefix hands over to the lemma)."""
    n = int(round(math.log10(t_max) * per_decade))
    pts = {int(round(10 ** (k / per_decade))) for k in range(n + 1)} | {T0, T0 + 1, t_max}
    return sorted(p for p in pts if 1 <= p <= t_max)


def band(cert, t_max: int = T_MAX, extra=()) -> dict:
    """{"T": [...], "T0": T0, q: {"lo": [...], "hi": [...]}} as floats (lo rounded down, hi up, then to float),
    on the log grid and at the ``extra`` steps (e.g. a trajectory's, so that it is compared point by point)."""
    Ts = sorted(set(grid(cert.T0, t_max)) | {int(t) for t in extra if 1 <= t <= t_max})
    out = {"T": Ts, "T0": cert.T0, "kind": cert.kind, "regime": cert.setting.config()}
    for q in QUANTITIES:
        out[q] = {"lo": [], "hi": []}
    for T in Ts:
        b = cert.bounds_json(T, 12)
        for q in QUANTITIES:
            lo, hi = Fraction(b[q][0]), Fraction(b[q][1])
            out[q]["lo"].append(_float_down(lo))
            out[q]["hi"].append(_float_up(hi))
    return out


def _float_down(x) -> float:
    f = float(x)
    return math.nextafter(f, -math.inf) if f > x else f


def _float_up(x) -> float:
    f = float(x)
    return math.nextafter(f, math.inf) if f < x else f


def trajectory_of(setting, steps: int = 10**7) -> dict:
    """The float64 GD trajectory (numba engine) at log-spaced steps up to ``steps``."""
    r = iterate_fast(setting, steps, log_points=120)
    return {"T": [int(t) for t in r.steps], **{q: [float(x) for x in r.data[q][0]] for q in QUANTITIES},
            "engine": "reduced float64 (numba)"}


def certified_band_figure(cert, trajectory=None) -> tuple[bytes, str]:
    """PNG bytes and caption: the certified band of each quantity out to T = 10^12 (log-log), the prefix's
    hand-over step T0, and ``trajectory`` (a dict {"T": [...], q: [...]}; computed when None and
    ``cert`` is a certificate) drawn inside the band. ``cert``: a certificate, :func:`band`'s dict, or
    a certify_part result (keys "band" and "trajectory")."""
    import matplotlib  # heavy: matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt  # heavy: matplotlib
    if isinstance(cert, dict):
        data = cert.get("band", cert)
        trajectory = trajectory if trajectory is not None else cert.get("trajectory")
    else:
        if trajectory is None:
            trajectory = trajectory_of(cert.setting)
        data = band(cert, extra=trajectory["T"] if trajectory else ())
    fig, grid_axes = plt.subplots(2, 3, figsize=(14, 7.6), sharex="col")
    T0, eta = data["T0"], _eta(data)
    for col, q in enumerate(QUANTITIES):
        ax, nx = grid_axes[0][col], grid_axes[1][col]
        pts = [(t, lo, hi) for t, lo, hi in zip(data["T"], data[q]["lo"], data[q]["hi"]) if t > 0 and hi > 0]
        if not pts:
            ax.text(0.5, 0.5, f"{LABELS[q]} = 0 for all T", ha="center", transform=ax.transAxes)
            ax.set_title(LABELS[q])
            continue
        T = [p[0] for p in pts]
        lo = [max(p[1], 1e-300) for p in pts]
        hi = [p[2] for p in pts]
        # Top: the band itself (log-log). Bottom: the same band times (eta T)^p, p = 1 or 1/2, so that its
        # width and its convergence to the rate constant are visible.
        scale = [(eta * t) ** POWER[q] for t in T]
        for axis, f in ((ax, [1.0] * len(T)), (nx, scale)):
            axis.fill_between(T, [a * b for a, b in zip(lo, f)], [a * b for a, b in zip(hi, f)], color="tab:blue",
                              alpha=0.35, lw=0, label="certified band (all T)")
            axis.plot(T, [a * b for a, b in zip(lo, f)], color="tab:blue", lw=0.7)
            axis.plot(T, [a * b for a, b in zip(hi, f)], color="tab:blue", lw=0.7)
        if trajectory:
            tx = [(t, y) for t, y in zip(trajectory["T"], trajectory[q]) if t > 0 and y > 0]
            if tx:
                lab = f"GD ({trajectory.get('engine', 'float64')}, T ≤ {max(p[0] for p in tx):.0e})"
                ax.plot([p[0] for p in tx], [p[1] for p in tx], ".", color="k", ms=2.5, label=lab)
                nx.plot([p[0] for p in tx], [p[1] * (eta * p[0]) ** POWER[q] for p in tx], ".", color="k", ms=2.5,
                        label=lab)
        for axis in (ax, nx):
            if T0 > 0:
                axis.axvline(T0, color="tab:red", lw=0.8, ls="--", label=f"T0 = {T0} (prefix → lemma)")
            axis.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(LABELS[q])
        ax.legend(fontsize=7, loc="lower left")
        nx.set_xlabel("T (GD steps)")
        nx.set_title(f"{'η T' if POWER[q] == 1 else '(η T)^½'} · ({LABELS[q]})", fontsize=9)
        tail = [a * b for a, b, t in zip(hi, scale, T) if t >= max(T0, 1)]
        if tail:
            nx.set_ylim(0, 1.6 * max(tail))
    reg = data.get("regime") or {}
    fig.suptitle(f"All-time certificate ({data.get('kind', '')}), D={reg.get('D')} K={reg.get('K')} N={reg.get('N')} "
                 f"eta={reg.get('eta_v')}: certified bounds for every T, out to 10^12", fontsize=10)
    png = png_bytes(fig)
    caption = ("Certified lower and upper bounds (shaded) on L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F for every T "
               "out to 10^12 (top, log–log), and the same bands times (ηT)^p (bottom: p = 1 for the loss, ½ for the "
               "parameter errors), which tend to the derived rate constants: Arb balls up to T0 (the band is the ball "
               "radius), then the comparison lemma on the trapping region; the float64 GD trajectory lies inside.")
    return png, caption
