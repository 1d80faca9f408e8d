"""One figure per probe, designed for the probe's question, drawn from its saved result.

Each function is registered for its probe name (``figure_for``) and reads the probe's ``data`` by the
array names the probe saves (``numbers``, ``fits`` and ``regimes`` only for labels and fitted lines).
Scales follow the claim: log–log where a power law is the point (with the claimed slopes as guides),
semilog-y where the decay is geometric. The claimed exponents come from the paper's stated orders
(verify.derive.asymptotics.claimed_terms), not from copies typed here.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from .figures_base import (COLOURS, COMPUTED, DERIVED, GUIDE, Drawing, FigureDataError, coincide, figure_for,
                           figure_legend, finite, floats, keep_data_limits, label_axes, max_spread, need,
                           new_figure, note, positive, positive_y, readable_ticks, regime_dicts, series,
                           shown, slope_guide, symbol, title_words)

QUANTITIES = ("loss", "s_err", "w_err")


@lru_cache(maxsize=None)
def claimed_exponents() -> dict:
    """Theorem 3.1's exponents of T and of D in each stated order: {"loss": {"T": -1, "D": 4}, ...}."""
    import sympy as sp

    from ..model import symbols as sy
    from ..derive.asymptotics import claimed_terms
    out = {}
    for q, e in claimed_terms().items():
        out[q] = {name: float(sp.simplify(v * sp.diff(e, v) / e)) for name, v in (("T", sy.T), ("D", sy.D))}
    return out


def _regimes(res: dict, name: str) -> dict:
    regs = regime_dicts(need(res, "data", f"probe {name}"))
    if not regs:
        raise FigureDataError(f"probe {name}: data holds no run (a dict with a 'step' array)")
    return regs


def _proxy(ax, label: str, **style) -> None:
    """A legend entry with no data (a line style's meaning)."""
    ax.plot([], [], label=label, **style)


def _rate_panels(axes, regs: dict, name: str, *, names=None, leading: bool = True, anchor: str | None = None,
                 styles=None) -> list[str]:
    """One log–log panel per Theorem 3.1 quantity: one line per run, its derived leading term (dashed,
    when saved as "<q>_leading"), and a line of the claimed slope through a data point."""
    names = names or {}
    done = []
    for ax, q in zip(axes, QUANTITIES):
        ys_all = []
        for i, (label, d) in enumerate(regs.items()):
            x, y = positive(*series(d, "step", q, f"probe {name}: data[{label!r}]"))
            st = (styles or {}).get(label, {})
            ax.loglog(x, y, color=st.get("color", COLOURS[i % 10]), label=names.get(label, shown(label)),
                      **(COMPUTED | {k: v for k, v in st.items() if k != "color"}))
            ys_all += y
            if leading and f"{q}_leading" in d:
                lx, ly = positive(*series(d, "step", f"{q}_leading", f"probe {name}: data[{label!r}]"))
                keep = [k for k, t in enumerate(lx) if t >= 10]   # the leading term is a large-T statement
                ax.loglog([lx[k] for k in keep], [ly[k] for k in keep], color=COLOURS[i % 10], label="_lead", **DERIVED)
        if leading and any(f"{q}_leading" in d for d in regs.values()):
            _proxy(ax, "derived leading term (dashed, colour of its run)", color="0.35", **DERIVED)
        s = claimed_exponents()[q]["T"]
        # Through the last point of the run named by ``anchor`` (else the run that ends highest).
        pick = anchor if anchor in regs else max(
            regs, key=lambda k: (positive(*series(regs[k], "step", q, name))[1] or [0.0])[-1])
        gx, gy = positive(*series(regs[pick], "step", q, name))
        slope_guide(ax, gx, gy, s, "claimed slope in T (Theorem 3.1): −1 for L − L_opt, −½ for the distances",
                    decades=3)
        keep_data_limits(ax, ys_all, log=True)
        label_axes(ax, "GD step t", symbol(q), f"{title_words(q)} {symbol(q)}")
        readable_ticks(ax)
        done.append(q)
    return done


def _suptitle(fig, title: str, sub: str = "") -> None:
    fig.suptitle(title + (f"\n{sub}" if sub else ""), fontsize=11)


# --- K = D ----------------------------------------------------------------------------------------------
@figure_for("d-eq-k")
def d_eq_k(res: dict) -> Drawing:
    """Semilog-y (geometric decay is a straight line): ‖W_X − V*‖_F and L − L_opt with their closed forms,
    and the shapes of Theorem 3.1's 1/√T and 1/T for contrast; ‖S − S*‖_F only when it is not 0."""
    name = "d-eq-k"
    regs = _regimes(res, name)
    s_max = max(max((abs(v) for v in floats(need(d, "s_err", f"probe {name}: data[{k!r}]"), name)), default=0.0)
                for k, d in regs.items())
    qs = ["w_err", "loss"] + (["s_err"] if not s_max == 0.0 else [])
    fig, axes = new_figure(len(qs), width=4.8)
    floor_note = False
    steps = [t for k, d in regs.items() for t in floats(need(d, "step", f"probe {name}: data[{k!r}]"), name)
             if math.isfinite(t) and t > 0]
    for ax, q in zip(axes[0], qs):
        gd_all = []
        for i, (label, d) in enumerate(regs.items()):
            where = f"probe {name}: data[{label!r}]"
            x, y = positive_y(*series(d, "step", q, where))
            ax.semilogy(x, y, color=COLOURS[i % 10], label=shown(label), **COMPUTED)
            gd_all += y
            if f"{q}_closed_form" in d:
                cx, cy = positive_y(*series(d, "step", f"{q}_closed_form", where))
                ax.semilogy(cx, cy, color=COLOURS[i % 10], label="_cf", lw=2.6, ls=(0, (2, 3)), alpha=0.8)
                # float64 GD stops at round-off while the closed form keeps falling
                full = dict(zip(*finite(*series(d, "step", q, where))))
                floor_note |= any(v < 1e-14 * cy[0] and full.get(t, v) > 2 * v for t, v in zip(cx, cy))
        if any(f"{q}_closed_form" in d for d in regs.values()):
            _proxy(ax, "closed form (dotted, colour of its run)", color="0.35", lw=2.6, ls=(0, (2, 3)))
        if q in claimed_exponents():
            s = claimed_exponents()[q]["T"]
            pick = max(regs, key=lambda k: (positive(*series(regs[k], "step", q, name))[1] or [0.0])[0])
            gx, gy = positive(*series(regs[pick], "step", q, name))
            slope_guide(ax, gx, gy, s, "Theorem 3.1's rate (∝ 1/T for the loss, 1/√T for the distances), "
                                       "through t = 1", at=0,
                        xrange=(min(steps), max(steps)))
        keep_data_limits(ax, gd_all, log=True, pad=3.0)
        label_axes(ax, "GD step t", symbol(q), f"{title_words(q)} {symbol(q)}")
        readable_ticks(ax)
    figure_legend(fig, axes[0], ncols=2)
    notes = []
    if s_max == 0.0:
        notes.append("‖S − S*‖_F = 0 at every step in every run (S is born equal to S*), so it has no panel")
    if floor_note:
        notes.append("float64 GD stops at round-off (about 10⁻¹⁶ of its start) while the closed form keeps falling")
    note(fig, "; ".join(notes) + "." if notes else "")
    _suptitle(fig, "K = D: the errors decay geometrically (straight lines on a log scale), not like a power of T")
    return Drawing(fig, "K = D (semilog-y): ‖W_X − V*‖_F and L − L_opt under GD (solid) and their closed forms "
                        "(dotted) fall on straight lines, i.e. geometrically; the dotted black curves have the "
                        "power-law shape Theorem 3.1 states, for contrast. " + " ".join(n[:1].upper() + n[1:] + "."
                                                                                     for n in notes))


# --- K = 0 ----------------------------------------------------------------------------------------------
@figure_for("k-zero")
def k_zero(res: dict) -> Drawing:
    """Linear axes from 0: ‖W_X − V*‖_F and ‖S − S*‖_F stay at their starting values; L − L_opt only when
    it is not 0 throughout."""
    name = "k-zero"
    regs = _regimes(res, name)
    numbers = res.get("numbers") or {}
    loss_max = max(max((abs(v) for v in floats(need(d, "loss", f"probe {name}: data[{k!r}]"), name)), default=0.0)
                   for k, d in regs.items())
    qs = ["w_err", "s_err"] + (["loss"] if loss_max != 0.0 else [])
    fig, axes = new_figure(len(qs), width=4.6)
    for ax, q in zip(axes[0], qs):
        top = 0.0
        for i, (label, d) in enumerate(regs.items()):
            x, y = finite(*series(d, "step", q, f"probe {name}: data[{label!r}]"))
            ax.plot(x, y, color=COLOURS[i % 10], label=shown(label), **COMPUTED)
            top = max([top] + y)
            cf = (numbers.get(label) or {}).get(f"{q}_closed_form")
            if isinstance(cf, (int, float)):
                ax.axhline(cf, color=COLOURS[i % 10], lw=2.6, ls=(0, (2, 3)), alpha=0.8, label="_cf")
                top = max(top, cf)
        if any(isinstance((numbers.get(k) or {}).get(f"{q}_closed_form"), (int, float)) for k in regs):
            _proxy(ax, "closed form: ‖V*‖_F and √(N/D) (dotted, colour of its run)", color="0.35", lw=2.6,
                   ls=(0, (2, 3)))
        ax.axhline(0.0, color="black", lw=1.0, ls=":", label="0 (distance at the teacher)")
        ax.set_ylim(-0.05 * (top or 1), 1.2 * (top or 1))
        label_axes(ax, "GD step t", symbol(q), f"{title_words(q)} {symbol(q)}")
    figure_legend(fig, axes[0], ncols=2)
    msg = "L − L_opt = 0 at every step in every run (the zero student is already optimal), so it has no panel"
    if loss_max == 0.0:
        note(fig, msg + ".")
    _suptitle(fig, "K = 0: the loss is optimal from step 0, and neither W_X nor S moves towards the teacher")
    return Drawing(fig, "K = 0 (linear axes): the distances ‖W_X − V*‖_F and ‖S − S*‖_F stay at their starting "
                        "values (closed forms dotted) and never approach 0." + (f" {msg[:1].upper()}{msg[1:]}."
                                                                               if loss_max == 0.0 else ""))


# --- interior power laws --------------------------------------------------------------------------------
def _interior(res: dict, name: str, title: str, caption: str) -> Drawing:
    regs = _regimes(res, name)
    fig, axes = new_figure(3, width=4.4)
    _rate_panels(axes[0], regs, name)
    figure_legend(fig, axes[0], ncols=2)
    _suptitle(fig, title)
    return Drawing(fig, caption)


@figure_for("k-one")
def k_one(res: dict) -> Drawing:
    return _interior(res, "k-one", "K = 1 (group-sparse linear predictor): Theorem 3.1's rates in T, with the "
                                   "derived leading terms",
                     "K = 1 (log–log): L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F against GD steps (solid), the "
                     "derived leading terms (dashed) and the claimed slopes −1, −½, −½ (dotted black).")


@figure_for("k-near-d")
def k_near_d(res: dict) -> Drawing:
    return _interior(res, "k-near-d", "K = D − 1: still the interior power laws (the break is at K = D only)",
                     "K = D − 1 (log–log): L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F against GD steps (solid), the "
                     "derived leading terms (dashed) and the claimed slopes −1, −½, −½ (dotted black).")


@figure_for("nonuniform-s")
def nonuniform_s(res: dict) -> Drawing:
    """The three quantities with the claimed slopes, and the within-support shape error."""
    name = "nonuniform-s"
    regs = _regimes(res, name)
    fig, axes = new_figure(4, width=4.1)
    _rate_panels(axes[0][:3], regs, name)
    ax = axes[0][3]
    fitted = []
    for i, (label, d) in enumerate(regs.items()):
        x, y = positive(*series(d, "step", "shape_err", f"probe {name}: data[{label!r}]"))
        ax.loglog(x, y, color=COLOURS[i % 10], label=shown(label), **COMPUTED)
        lab = ((res.get("numbers") or {}).get(label) or {}).get("shape_err", {}).get("label", "")
        if lab.startswith("power:"):
            fitted.append(lab.split(":", 1)[1].replace("-", "−"))
    label_axes(ax, "GD step t", "max_j ‖S_gj / ΣS_gj − S*_gj‖", "Within-support shape error"
               + (f"\nfitted slopes {', '.join(fitted)}" if fitted else ""))
    readable_ticks(ax)
    figure_legend(fig, axes[0], ncols=2)
    _suptitle(fig, "Non-uniform S* weights (full-matrix engine): the same power-law tails, and the weights within "
                   "the support are learned")
    return Drawing(fig, "S* with non-uniform weights on its support (log–log, full-matrix engine): L − L_opt, "
                        "‖S − S*‖_F and ‖W_X − V*‖_F with the claimed slopes (dotted black), and the error of the "
                        "attention's shape within the support (right), which also decays like a power of t.")


# --- entry laws -----------------------------------------------------------------------------------------
LAW_STYLES = [{"lw": 4.0, "ls": "-"}, {"lw": 2.8, "ls": (0, (6, 2))}, {"lw": 2.0, "ls": (0, (3, 2))},
              {"lw": 1.4, "ls": (0, (1, 1.5))}, {"lw": 1.0, "ls": "-"}]


@figure_for("non-gaussian")
def non_gaussian(res: dict) -> Drawing:
    """σ = identity: the excess loss under each entry law (overlapping by design, drawn so that every
    line shows); σ = erf: Monte Carlo loss under each law relative to the Gaussian closed form."""
    name = "non-gaussian"
    data = need(res, "data", f"probe {name}")
    ident = need(data, "identity", f"probe {name}: data")
    laws = [k for k in ident if k.startswith("loss[")]
    if not laws:
        raise FigureDataError(f"probe {name}: data['identity'] has no 'loss[<law>]' arrays (has: {', '.join(ident)})")
    mc = data.get("erf_monte_carlo")
    fig, axes = new_figure(2 if mc else 1, width=5.2)
    ax = axes[0][0]
    curves = []
    for i, k in enumerate(laws):
        x, y = series(ident, "step", k, f"probe {name}: data['identity']")
        curves.append(y)
        px, py = positive(x, y)
        ax.loglog(px, py, color=COLOURS[i % 10], label=k[5:-1] + " entries (σ = identity)",
                  **LAW_STYLES[i % len(LAW_STYLES)])
    px, py = positive(*series(ident, "step", laws[0], name))
    slope_guide(ax, px, py, claimed_exponents()["loss"]["T"], "claimed slope −1 in T (Theorem 3.1)", decades=3)
    keep_data_limits(ax, py, log=True)
    label_axes(ax, "GD step t", "L − L_opt", "σ = identity: excess loss L − L_opt under each entry law")
    readable_ticks(ax)
    notes = []
    if len(curves) > 1 and coincide(curves):
        proved = (res.get("numbers") or {}).get("identity_closed_form_proved") is True
        notes.append(f"Trajectories identical for σ = identity under all {len(curves)} laws (max difference "
                     f"{max_spread(curves):.1g}): only the first two moments enter"
                     + (" (proved symbolically)" if proved else ""))
    if mc:
        ax2 = axes[0][1]
        steps = sorted(mc, key=lambda s: float(s))
        law_names = [k for k in mc[steps[0]] if isinstance(mc[steps[0]][k], dict)]
        for j, st in enumerate(steps):
            cf = need(mc[st], "closed_form_gaussian", f"probe {name}: data['erf_monte_carlo'][{st!r}]")
            xs, ys, es = [], [], []
            for i, law in enumerate(law_names):
                e = need(mc[st], law, f"probe {name}: data['erf_monte_carlo'][{st!r}]")
                xs.append(i + (j - (len(steps) - 1) / 2) * 0.18)
                ys.append(need(e, "mc_mean", name) / cf)
                es.append(2 * need(e, "mc_stderr", name) / cf)
            ax2.errorbar(xs, ys, yerr=es, fmt="os^D"[j % 4], ms=5, capsize=3, color=COLOURS[(j + 5) % 10], ls="none",
                         label=f"σ = erf, after {st} GD steps (Monte Carlo ± 2 s.e.)")
        ax2.axhline(1.0, color="black", lw=1.0, ls=":", label="Gaussian closed form (ratio 1)")
        ax2.set_xticks(range(len(law_names)), law_names)
        label_axes(ax2, "entry law of X (parameters trained under the Gaussian law)",
                   "Monte Carlo loss / Gaussian closed form", "σ = erf: the entry law changes the loss")
    figure_legend(fig, axes[0], ncols=2)
    if notes:
        note(fig, "; ".join(notes) + ".")
    _suptitle(fig, "Non-Gaussian data: σ = identity depends on two moments only; σ = erf does not")
    return Drawing(fig, "Left (log–log): L − L_opt along GD for σ = identity under each entry law, drawn with "
                        "different widths and dashes because the curves lie on top of each other. "
                        + ("; ".join(notes) + ". " if notes else "")
                        + ("Right: for σ = erf, the loss of Gaussian-trained parameters under each law, relative to "
                           "the Gaussian closed form (Monte Carlo, ± 2 standard errors)." if mc else ""))


# --- step size ------------------------------------------------------------------------------------------
def _eta_label(res: dict, tag: str, fallback: str) -> str:
    for r in res.get("regimes") or []:
        lab = r.get("label", "") if isinstance(r, dict) else ""
        if tag in lab and lab.startswith("eta = "):
            return shown(lab)
    return fallback


def _eta_value(res: dict, label: str) -> float | None:
    """η of the regime whose label is ``label`` (as shown), from its saved config."""
    for r in res.get("regimes") or []:
        if isinstance(r, dict) and shown(r.get("label", "")) == label:
            v = (r.get("config") or {}).get("eta_v")
            try:
                return float(Fraction(str(v)))
            except (ValueError, ZeroDivisionError):
                return None
    return None


@figure_for("large-eta")
def large_eta(res: dict) -> Drawing:
    name = "large-eta"
    data = need(res, "data", f"probe {name}")
    runs = {"eta_ok": _eta_label(res, "0.9 x", "η below 2K/N"),
            "eta_in": _eta_label(res, "1.5 x", "η between 2K/N and the divergence boundary")}
    fig, axes = new_figure(3, width=4.6)
    a1, a2, a3 = axes[0]
    for i, (key, lab) in enumerate(runs.items()):
        d = need(data, key, f"probe {name}: data")
        x, y = positive(*series(d, "step", "loss", f"probe {name}: data[{key!r}]"))
        a1.loglog(x, y, color=COLOURS[i], label=lab, **COMPUTED)
        ax_, ay = finite(*series(d, "step", "alpha", f"probe {name}: data[{key!r}]"))
        keep = [k for k, t in enumerate(ax_) if t > 0]
        if key == "eta_in":      # a 2-cycle: the recorded steps land on both branches; dots show both
            a2.semilogx([ax_[k] for k in keep], [ay[k] for k in keep], ".", ms=3, color=COLOURS[i], label="_a")
        else:
            a2.semilogx([ax_[k] for k in keep], [ay[k] for k in keep], color=COLOURS[i], label="_a", **COMPUTED)
    x, y = positive(*series(need(data, "eta_ok", name), "step", "loss", name))
    slope_guide(a1, x, y, claimed_exponents()["loss"]["T"], "claimed slope −1 in T (Theorem 3.1)", decades=3)
    a2.axhline(1.0, color="black", lw=0.8, ls=":", label="α = 1 (W_X = V*)")
    label_axes(a1, "GD step t", "L − L_opt", "Excess loss L − L_opt")
    label_axes(a2, "GD step t", "α(t)", "Row multiple α(t) of V*")
    H = floats(need(data, "horizons", f"probe {name}: data"), f"probe {name}: data[horizons]")
    for j, (key, mk, lab) in enumerate((("convergence_boundary", "o", "largest η still converging like 1/T"),
                                        ("divergence_boundary", "s", "largest η keeping GD bounded"))):
        x, y = series(data, "horizons", key, f"probe {name}: data")
        a3.semilogx(x, y, marker=mk, color=COLOURS[j + 2], label=lab, **COMPUTED)
    nums = res.get("numbers") or {}
    for j, (tag, lab) in enumerate((("2K/N", "derived limit near the optimum, 2K/N"),
                                    ("2D/N", "derived limit at the start, 2D/N"))):
        v = next((val for k, val in nums.items() if tag in k and isinstance(val, (int, float))), None)
        if v is not None:
            a3.axhline(v, color=COLOURS[j + 2], lw=1.2, ls="--", label=lab)
    for i, (key, lab) in enumerate(runs.items()):
        eta = _eta_value(res, lab)
        if eta is not None:
            a3.axhline(eta, color=COLOURS[i], lw=1.0, ls=(0, (1, 2)), label=lab)   # same label: one legend entry
    a3.set_xticks(H, [f"{int(h):,}" for h in H])
    a3.minorticks_off()
    a3.set_ylim(bottom=0)
    label_axes(a3, "horizon T (GD steps)", "step size η", "Step-size boundaries found by bisection")
    for ax in (a1, a2):
        readable_ticks(ax)
    figure_legend(fig, axes[0], ncols=3)
    _suptitle(fig, "Step size: GD converges like 1/T only for η < 2K/N; above it GD stalls on a 2-cycle before it "
                   "diverges")
    return Drawing(fig, "Left: L − L_opt (log–log) just below 2K/N, with the claimed slope −1, and between the two "
                        "boundaries, where the loss stalls. Middle: the row multiple α(t), which settles on a "
                        "period-2 orbit (dots on two branches) above 2K/N. Right: the boundaries found by bisection "
                        "at three horizons, approaching the derived limits (dashed).")


# --- random initialisation -----------------------------------------------------------------------------
@figure_for("nonzero-init")
def nonzero_init(res: dict) -> Drawing:
    name = "nonzero-init"
    d = need(res, "data", f"probe {name}")
    where = f"probe {name}: data"
    fits = res.get("fits") or {}
    nums = res.get("numbers") or {}
    fig, axes = new_figure(4, width=4.1)
    a1, a2, a3, a4 = axes[0]
    # Off-span residual: geometric decay, semilog-y, over the steps before it reaches round-off.
    x, y = positive_y(*series(d, "step", "offspan", where))
    end = next((t for t, v in zip(x, y) if v <= 1e-14 * y[0]), x[-1]) if y else 0
    xs = [t for t in x if t <= 1.2 * end]
    a1.semilogy(xs, y[:len(xs)], color=COLOURS[0], label="off-span residual max_i ‖w_i − α_i v*_i‖", **COMPUTED)
    fit = fits.get("offspan") or nums.get("offspan_fit") or {}
    rate, win = fit.get("rate"), fit.get("window")
    if isinstance(rate, (int, float)) and isinstance(win, list) and len(win) == 2:
        t0 = min(xs, key=lambda t: abs(t - win[0]))
        y0 = y[xs.index(t0)]
        gx = [t for t in xs if win[0] <= t <= win[1]]
        (ln,) = a1.semilogy(gx, [y0 * math.exp(-rate * (t - t0)) for t in gx], label=f"fitted e^(−{rate:.3f} t)",
                            **GUIDE)
        ln.set_gid("guide:exponential")
    label_axes(a1, "GD step t", "max_i ‖w_i − α_i v*_i‖",
               "Off-span residual of W_X\n(geometric: straight on semilog-y)")
    # The smallest row multiple: positive from the start.
    x, y = finite(*series(d, "step", "alpha_min", where))
    keep = [k for k, t in enumerate(x) if t > 0]
    a2.semilogx([x[k] for k in keep], [y[k] for k in keep], color=COLOURS[1], label="min_i α_i(t)", **COMPUTED)
    a2.axhline(0.0, color="black", lw=0.8, ls=":", label="0 (Lemma C.2 needs α_i > 0)")
    a0 = next((v for t, v in zip(x, y) if t == 0), None)
    label_axes(a2, "GD step t", "min_i α_i(t)", "Smallest row multiple of V*"
               + (f"\n(at t = 0: {a0:.3g})" if a0 is not None else ""))
    # Theorem 3.1's quantities keep their tails.
    ys = []
    for i, q in enumerate(QUANTITIES):
        qx, qy = positive(*series(d, "step", q, where))
        a3.loglog(qx, qy, color=COLOURS[i + 2], label=f"{title_words(q)} {symbol(q)}", **COMPUTED)
        ys += qy
        if q in ("loss", "w_err"):
            slope_guide(a3, qx, qy, claimed_exponents()[q]["T"],
                        "claimed slopes in T (Theorem 3.1): −1 for L − L_opt, −½ for the distances", decades=3)
    keep_data_limits(a3, ys, log=True)
    label_axes(a3, "GD step t", "distance / excess loss", "Theorem 3.1's quantities keep their tails")
    for j, q in enumerate(("wp_norm", "bias_norm")):
        qx, qy = positive(*series(d, "step", q, where))
        lab = (fits.get(q) or {}).get("label", "")
        a4.loglog(qx, qy, color=COLOURS[j + 5], label=f"{title_words(q)} {symbol(q)}"
                  + (f" (fitted slope {lab.split(':', 1)[1].replace('-', '−')})" if lab.startswith("power:") else ""),
                  **COMPUTED)
    label_axes(a4, "GD step t", "norm", "Positional block W_P and its output offset")
    for ax in (a1, a2, a3, a4):
        readable_ticks(ax)
    figure_legend(fig, axes[0], ncols=3)
    _suptitle(fig, "Random initialisation: rows of W_X start off the span of V*'s rows (Lemma C.2 fails at t = 0) "
                   "and realign geometrically")
    return Drawing(fig, "From a small random start: the off-span residual of W_X (semilog-y, with the fitted "
                        "exponential), the smallest row multiple min_i α_i(t), Theorem 3.1's quantities with the "
                        "claimed slopes (log–log), and ‖W_P‖_F with its output offset ‖W_P P S‖_F.")


# --- positional encodings --------------------------------------------------------------------------------
P_NAMES = {"lambda": "PᵀP = λI", "equivalent": "PᵀP = I with η_KQ · λ²", "sinusoidal": "sinusoidal P (not orthogonal)",
           "identity_P": "P = I (comparison)"}
P_STYLES = {"lambda": {"color": COLOURS[0], "lw": 4.0},
            "equivalent": {"color": COLOURS[1], "lw": 1.6, "ls": (0, (4, 2))},
            "sinusoidal": {"color": COLOURS[2]}, "identity_P": {"color": COLOURS[3]}}


@figure_for("p-scale")
def p_scale(res: dict) -> Drawing:
    name = "p-scale"
    regs = _regimes(res, name)
    lam = next((r["config"].get("p_lambda") for r in res.get("regimes") or []
                if isinstance(r, dict) and isinstance(r.get("config"), dict) and r["config"].get("p_lambda") not in
                (None, "1", 1)), None)
    names = {k: v.replace("λ²", f"λ² (λ = {lam})") if lam and k == "equivalent" else v for k, v in P_NAMES.items()}
    fig, axes = new_figure(3, width=4.4)
    _rate_panels(axes[0], regs, name, names=names, leading=False, anchor="identity_P", styles=P_STYLES)
    figure_legend(fig, axes[0], ncols=3)
    notes = []
    if "lambda" in regs and "equivalent" in regs:
        same = all(coincide([floats(regs["lambda"][q], name), floats(regs["equivalent"][q], name)])
                   for q in QUANTITIES)
        if same:
            notes.append("the PᵀP = λI and η_KQ · λ² runs are identical (curves overlap by design: a scaled "
                         "orthogonal P only rescales the attention step by λ²)")
    if notes:
        note(fig, "; ".join(notes)[:1].upper() + "; ".join(notes)[1:] + ".")
    _suptitle(fig, "Positional encodings: PᵀP = λI is a step-size change; a sinusoidal P keeps Theorem 3.1's "
                   "exponents")
    return Drawing(fig, "Log–log: L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F for a scaled orthogonal P, the equivalent "
                        "step size, a sinusoidal (non-orthogonal) P and P = I, with the claimed slopes (dotted black). "
                        + ("; ".join(notes)[:1].upper() + "; ".join(notes)[1:] + "." if notes else ""))


# --- T* ------------------------------------------------------------------------------------------------------
@figure_for("tstar")
def tstar(res: dict) -> Drawing:
    """T* against D (log–log) for both families, the derived K D / (2η‖V*‖²), and D¹ and D² guides through
    the first data point: the paper's D² is followed only when K grows with D."""
    name = "tstar"
    data = need(res, "data", f"probe {name}")
    fams = {k: v for k, v in data.items() if isinstance(v, dict) and "D" in v}
    if not fams:
        raise FigureDataError(f"probe {name}: data holds no family with a 'D' array (has: {', '.join(data)})")
    nums = res.get("numbers") or {}
    fig, axes = new_figure(2, width=5.0)
    for ax, key in zip(axes[0], ("t_cross", "t_track")):
        fitted = []
        first = None
        allD = []
        for i, (fam, d) in enumerate(fams.items()):
            x, y = positive(*series(d, "D", key, f"probe {name}: data[{fam!r}]"))
            ax.loglog(x, y, marker="o", ms=5, color=COLOURS[i % 10], label=f"{fam} (measured)", **COMPUTED)
            allD += x
            first = first or (x, y)
            if key == "t_cross" and "predicted" in d:
                px, py = positive(*series(d, "D", "predicted", f"probe {name}: data[{fam!r}]"))
                ax.loglog(px, py, color=COLOURS[i % 10], marker="x", label=f"{fam} (derived K D / (2η‖V*‖²))",
                          **DERIVED)
            e = ((nums.get(fam) or {}).get("fit") or {}).get(f"exponent_{key}")
            if isinstance(e, (int, float)):
                fitted.append(f"{fam.split(':')[0]} {e:.2f}")
        slope_guide(ax, *first, 1.0, "∝ D¹ (guide through the first point)", at=0, ls=(0, (1, 2)))
        slope_guide(ax, *first, 2.0, "∝ D² (the paper's T* ~ D², through the first point)", at=0,
                    ls=(0, (6, 2, 1, 2)))
        Ds = sorted(set(allD))
        ax.set_xticks(Ds, [f"{int(v)}" if float(v).is_integer() else f"{v:g}" for v in Ds])
        ax.minorticks_off()
        ax.tick_params(axis="x", which="minor", labelbottom=False)
        label_axes(ax, "sequence length D", f"{symbol(key)} (GD steps)", f"{title_words(key)} {symbol(key)}"
                   + (f"\nfitted exponents of D: {', '.join(fitted)}" if fitted else ""))
    figure_legend(fig, axes[0], ncols=2)
    _suptitle(fig, "Time to the asymptotic regime T* against the sequence length D: linear at fixed K, "
                   "quadratic only when K grows with D")
    return Drawing(fig, "T* against D (log–log) for K = 2 fixed and for K = D/2, measured two ways (left: the "
                        "off-support mass has caught up, u⁻² ≥ 2u₀⁻²; right: the last step where L − L_opt is more "
                        "than 10% off its leading term), with the derived K D / (2η‖V*‖²) (dashed) and guides of "
                        "slope 1 and 2 through the first point (dotted): the claimed D² is followed only when K ∝ D.")


# --- rates and the D-dependence ---------------------------------------------------------------------------
@figure_for("rates")
def rates(res: dict) -> Drawing:
    name = "rates"
    data = need(res, "data", f"probe {name}")
    regs = _regimes(res, name)
    scan = data.get("D_scan")
    fig, axes = new_figure(4 if scan else 3, width=4.1)
    _rate_panels(axes[0][:3], regs, name, leading=False)
    if scan:
        ax = axes[0][3]
        if not isinstance(scan, list) or not all(isinstance(r, dict) for r in scan):
            raise FigureDataError(f"probe {name}: data['D_scan'] must be a list of rows")
        D = floats([need(r, "D", f"probe {name}: D_scan row") for r in scan], name)
        TL = floats([need(r, "T_times_loss", f"probe {name}: D_scan row") for r in scan], name)
        x, y = positive(D, TL)
        ax.loglog(x, y, marker="o", color=COLOURS[4], label="T (L − L_opt), GD", **COMPUTED)
        if all("T_times_leading" in r for r in scan):
            lx, ly = positive(D, floats([r["T_times_leading"] for r in scan], name))
            ax.loglog(lx, ly, marker="x", color=COLOURS[4], label="T × derived leading term K N (D−K) / (4DηT)",
                      **DERIVED)
        slope_guide(ax, x, y, claimed_exponents()["loss"]["D"], "claimed ∝ K D⁴ / (ηT): slope 4 in D, through "
                                                                 "the first point", at=0)
        ax.set_xticks(x, [f"{int(v)}" for v in x])
        ax.minorticks_off()
        T = next((r.get("steps") for r in res.get("regimes") or [] if isinstance(r, dict)
                  and str(r.get("label", "")).startswith("D scan")), None)
        e = (res.get("numbers") or {}).get("D_exponent_of_T_loss")
        label_axes(ax, "sequence length D (K = 2)", "T (L − L_opt)",
                   f"T (L − L_opt) at T = {T:,} against D" if isinstance(T, int) else "T (L − L_opt) against D")
        if isinstance(e, (int, float)):
            claimed = claimed_exponents()["loss"]["D"]
            ax.set_title(ax.get_title() + f"\nfitted slope {e:.2f}, claimed {claimed:g}".replace("-", "−"), fontsize=10)
        readable_ticks(ax)
    figure_legend(fig, axes[0], ncols=3)
    _suptitle(fig, "Theorem 3.1's rates: the T-exponents hold for the four teachers; the claimed D⁴ does not")
    return Drawing(fig, "Log–log: L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F against GD steps for the four teachers "
                        "with the claimed slopes in T (dotted black)"
                        + ("; right: T (L − L_opt) at the final T against D at fixed K, with the derived leading "
                           "term (dashed) and the claimed D⁴ growth (dotted) through the first point."
                           if scan else "."))


# --- finite samples --------------------------------------------------------------------------------------
@figure_for("finite-sample")
def finite_sample(res: dict) -> Drawing:
    name = "finite-sample"
    regs = _regimes(res, name)
    names = {k: ("population GD (exact expectation)" if k.lower().replace(" ", "_") == "population_gd"
                 else f"online {k}") for k in regs}
    styles = {k: {"color": "black", "lw": 2.4} for k in regs if k.lower().replace(" ", "_") == "population_gd"}
    styles.update({k: {"color": COLOURS[i % 10], "lw": 1.1} for i, k in enumerate(regs) if k not in styles})
    anchor = next(iter(styles)) if styles else None
    fig, axes = new_figure(3, width=4.4)
    _rate_panels(axes[0], regs, name, names=names, leading=False, anchor=anchor, styles=styles)
    figure_legend(fig, axes[0], ncols=3)
    _suptitle(fig, "Finite samples: online SGD on fresh samples against population GD (B = batch size)")
    return Drawing(fig, "Log–log: population excess loss L − L_opt, ‖S − S*‖_F and ‖W_X − V*‖_F of online SGD "
                        "(batch sizes B, with and without label noise) and of population GD (black), with the claimed "
                        "slopes (dotted black) through the population GD run.")


# --- input-dependent attention ----------------------------------------------------------------------------
ROUND_OFF = 1e-12   # float64 round-off of O(1) quantities, with a margin of ~10^4
STUDENTS = {"position-only": {"ls": "-", "lw": 1.5}, "input-dependent": {"ls": (0, (4, 2)), "lw": 1.3}}


@figure_for("full-attention")
def full_attention(res: dict) -> Drawing:
    name = "full-attention"
    data = need(res, "data", f"probe {name}")
    regs = {k: v for k, v in data.items() if isinstance(v, dict) and any(s in v for s in STUDENTS)}
    if not regs:
        raise FigureDataError(f"probe {name}: data holds no regime with 'position-only' / 'input-dependent' runs")
    fig, axes = new_figure(4, width=4.0)
    a1, a2, a3, a4 = axes[0]
    spread_a = 0.0
    for i, (label, pair) in enumerate(regs.items()):
        for student, st in STUDENTS.items():
            if student not in pair:
                continue
            d = pair[student]
            where = f"probe {name}: data[{label!r}][{student!r}]"
            for ax, q in ((a1, "loss"), (a2, "s_err")):
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
    for i, label in enumerate(regs):
        _proxy(a1, shown(label), color=COLOURS[i % 10], lw=3)
    for student, st in STUDENTS.items():
        _proxy(a1, f"{student} student", color="0.3", **st)
    first = next(iter(regs.values()))
    fd = first.get("position-only") or next(iter(first.values()))
    for ax, q in ((a1, "loss"), (a2, "s_err")):
        x, y = positive(*series(fd, "step", q, name))
        slope_guide(ax, x, y, claimed_exponents()[q]["T"], "claimed slopes in T (Theorem 3.1): −1 for the loss, "
                                                            "−½ for ‖S − S*‖_F", decades=3)
    label_axes(a1, "SGD step t", "L − L_opt (held-out)", "Held-out excess loss")
    label_axes(a2, "SGD step t", "‖S − S*‖_F (held-out RMS)", "Attention error")
    label_axes(a3, "SGD step t", "‖W_KQ outside the P–P block‖_F",
               "Part of W_KQ that sees X\n(input-dependent student)")
    label_axes(a4, "SGD step t", "(E‖S(Z) − E S(Z)‖²_F)^½", "Input spread of the attention\n(input-dependent student)")
    for ax in (a1, a2, a3, a4):
        readable_ticks(ax)
    figure_legend(fig, axes[0], ncols=3)
    note(fig, f"The position-only student's attention does not depend on X by construction: its input spread is "
              f"round-off ({spread_a:.0e} at most) and its W_KQ has no X part, so neither has a line on the right "
              f"(values below {ROUND_OFF:.0e} are not drawn).")
    _suptitle(fig, "Position-only against input-dependent attention (logits also see X), same teachers and same "
                   "SGD (exploratory)")
    return Drawing(fig, "Online SGD for a position-only student (solid) and an input-dependent one (dashed), one "
                        "colour per teacher and step size (log–log): held-out L − L_opt and ‖S − S*‖_F with the "
                        "claimed slopes, the norm of W_KQ's X part and the input spread of S(Z).")
