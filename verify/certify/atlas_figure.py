"""The atlas as slices of the cube: one panel per slab of x, cells as rectangles in (rho, kappa) coloured by status,
and the presets' paths as D grows (sts at fixed ||V*|| moves along rho; cnn and gcn, with eta scaled to keep x
fixed, move towards kappa -> 0)."""
from __future__ import annotations

from fractions import Fraction

from ..plotting import png_bytes
from .atlas import point_of

COLOURS = {"certified": "tab:green", "refuted": "tab:red", "open": "0.75"}
PATH_COLOURS = ("tab:blue", "tab:purple", "tab:orange")
# (preset, K, ||V*||, x kept fixed by eta = x K/N): the paths drawn, D = 2K, 4K, ..., 2^10 K
PATHS = (("sts", 4, "1", Fraction(1, 32)), ("cnn", 4, "1", Fraction(1, 8)), ("gcn", 4, "1", Fraction(1, 8)))
DOUBLINGS = 10           # D up to 2^10 K = 4096 (make_setting's largest D)


def preset_path(preset: str, K: int, vstar_norm: str, x: Fraction) -> list:
    """[(D, rho, x, kappa)] of the preset's regimes D = 2K, 4K, ... with eta chosen so that x stays fixed (exact
    points: verify.certify.atlas.point_of)."""
    from ..model import make_setting  # heavy: loads sympy,numpy
    out = []
    for k in range(1, DOUBLINGS + 1):
        D = K * 2**k
        N = make_setting(D=D, K=K, eta="1/8", vstar_norm=vstar_norm, preset=preset).N
        s = make_setting(D=D, K=K, eta=str(x * K / N), vstar_norm=vstar_norm, preset=preset)
        out.append((D, *point_of(s)))
    return out


def atlas_figure(data: dict, paths=PATHS) -> tuple[bytes, str]:
    """PNG bytes and caption of an atlas file's cells (module docstring)."""
    import matplotlib  # heavy: matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt  # heavy: matplotlib
    from matplotlib.patches import Patch, Rectangle  # heavy: matplotlib
    cells = data["cells"]
    slabs = sorted({(Fraction(c["box"]["x"][0]), Fraction(c["box"]["x"][1])) for c in cells})[:6]
    fig, axes = plt.subplots(1, len(slabs), figsize=(4.6 * len(slabs), 4.2), squeeze=False)
    drawn = [(p, preset_path(*p)) for p in paths]
    for ax, (x_lo, x_hi) in zip(axes[0], slabs):
        for c in cells:
            b = {n: (float(Fraction(lo)), float(Fraction(hi))) for n, (lo, hi) in c["box"].items()}
            if not (Fraction(c["box"]["x"][0]) < x_hi and Fraction(c["box"]["x"][1]) > x_lo) and x_lo != x_hi:
                continue
            (r0, r1), (k0, k1) = b["rho"], b["kappa"]
            # a degenerate range is drawn as a thin band so that it shows
            r1, k1 = (r1 if r1 > r0 else r0 + 0.004), (k1 if k1 > k0 else k0 * 1.03)
            ax.add_patch(Rectangle((r0, k0), r1 - r0, k1 - k0, facecolor=COLOURS[c["status"]], edgecolor="k",
                                   lw=0.3, alpha=0.85))
        for ((preset, K, v, x), pts), col in zip(drawn, PATH_COLOURS * len(drawn)):
            inside = x_lo <= x <= x_hi
            ax.plot([float(p[1]) for p in pts], [float(p[3]) for p in pts], "-o", ms=2.5, lw=0.8, color=col,
                    alpha=1.0 if inside else 0.35, label=f"{preset} K={K} ||V*||={v} x={x}" +
                    ("" if inside else " (another x)"))
        ax.set_xscale("symlog", linthresh=1e-3)
        ax.set_yscale("log")
        ax.set_xlim(0, 1)
        ax.set_xlabel("ρ = K/D  (0: D → ∞)")
        ax.set_ylabel("κ = y/x")
        ax.set_title(f"x in [{x_lo}, {x_hi}]", fontsize=9)
        ax.legend(fontsize=6, loc="lower right")
    handles = [Patch(color=col, label=s) for s, col in COLOURS.items()]
    fig.legend(handles=handles, loc="upper right", fontsize=8)
    n = data.get("counts", {})
    fig.suptitle(f"atlas of ρ {data['spec']['ranges']['rho']}, x {data['spec']['ranges']['x']}, κ "
                 f"{data['spec']['ranges']['kappa']}: {n.get('certified', 0)} certified, {n.get('refuted', 0)} "
                 f"refuted, {n.get('open', 0)} open", fontsize=10)
    png = png_bytes(fig)
    caption = ("The atlas's cells in slices of x, coloured by status (green certified: every regime of the cell "
               "has certified all-time bounds; grey open; red refuted), with the presets' regimes as D doubles from "
               "2K: sts at fixed ||V*|| moves along ρ towards 0; cnn and gcn (η scaled to keep x fixed) move towards "
               "κ → 0.")
    return png, caption
