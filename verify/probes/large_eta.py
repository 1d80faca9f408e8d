"""Probe ``large-eta``: where GD stops converging as the step size eta grows (eta_V = eta_KQ = eta), i.e. how
sharp Theorem 3.1's step-size hypothesis eta c_L v N < 2K is.

Derived boundary (W_X block, verify.derive.reduced_map): one step maps alpha to alpha - eta (d r/d alpha)/vn,
whose derivative in alpha is 1 - eta N ||s||^2 (sigma = identity, v = 1). ||s||^2 rises from 1/D (uniform S)
towards 1/K (S -> S*) and stays below 1/K, so the linearised W_X block is stable near the optimum iff
eta < 2K/N, and at the start iff eta < 2D/N. The probe computes both limits symbolically from the generated
step expression, then finds by bisection, for several horizons T, the largest eta at which GD is still on the
1/T track (L(T) - L_opt < 2 x the leading term) and the largest eta at which it stays bounded. Between the two,
GD neither converges nor diverges.
"""
from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..derive.reduced_map import reduced_step_exprs
from ..errors import NumericalTrouble
from ..evidence import REPLAY_FACTOR, Scope, compare, record
from ..model import symbols as sy
from ..model.convention import active
from ..model.profiles import per_profile
from ..model.quantities import KEYS
from ..plotting import (COLOURS, COMPUTED, Drawing, figure_legend, finite, floats, label_axes, need, new_figure,
                        positive, readable_ticks, series, shown, slope_guide)
from . import Probe, register
from .support.figures import suptitle
from .support.interior import LEADING, claimed_t_exponents, leading_value
from .support.findings import finding, reference, scope_of
from .support.runs import classify_series, fits_json, labels, regime_entry, run_series
from .support.convention import regime_setting, replay_command

HYPOTHESES = ("identity", "0<K<D") + reference()
SIZES = per_profile({"ci": {"horizons": (1000, 10_000, 30_000), "bisections": 14, "steps": 20_000},
                     "dev": {"horizons": (1000, 10_000, 100_000, 300_000), "bisections": 16, "steps": 200_000},
                     "deep": {"horizons": (1000, 10_000, 100_000, 1_000_000, 3_000_000), "bisections": 18,
                              "steps": 2_000_000}})
# "Still converging" at T: the excess loss is within a factor ON_TRACK of the derived leading term
# K N (D-K) / (4 D eta T) (verify.derive.asymptotics). Beyond the boundary the orbit is a 2-cycle or
# chaotic and bounded, and its loss is orders of magnitude above the track, so the factor is not delicate;
# comparing L(T) with L(T/2) instead misjudges chaotic orbits (single samples of a fluctuating loss).
ON_TRACK = 2.0
BLOWUP = 1e6      # |alpha| beyond this counts as divergence
EVERY = 50        # divergence is watched every EVERY steps
OUTCOME_THRESHOLD = {"value": f"L(T) - L_opt < {ON_TRACK} x leading term: converges; |alpha| > {BLOWUP:g}: diverges",
                     "why": "beyond the boundary the orbit is a 2-cycle or chaotic and bounded, with a loss orders of "
                            "magnitude above the 1/T track, so a factor 2 is not delicate; |alpha| > 1e6 is far outside "
                            "any bounded orbit of these regimes (|alpha| < 3 on the 2-cycle)"}
BOUNDARY_TOL = 0.05
BOUNDARY_THRESHOLD = {"value": f"2K/N < boundary(T) < (1 + {BOUNDARY_TOL}) 2K/N at the largest T, decreasing in T",
                      "why": "the linearisation says GD converges near S = S* iff eta < 2K/N; with eta slightly above, "
                             "the instability starts only once ||s||^2 > 2/(eta N), later for smaller excess, so the "
                             "measured boundary decreases towards 2K/N as T grows; 5% is the bisection's reach at "
                             "T >= 3e4 in the regimes run (14 halvings resolve 2e-3)"}
POWER_THRESHOLD = {"value": "power-law tails (verify.probes.support.classify)",
                   "why": "below 2K/N GD must stay on Theorem 3.1's power-law track"}


def derived_boundaries(setting) -> dict:
    """2K/N and 2D/N (in the reference convention; 2K/(c_L v N) and 2D/(c_L v N) in general) from
    d alpha_next / d alpha of the generated step at the setting's values of the convention symbols."""
    a_next, _ = reduced_step_exprs(setting.sigma, "interior")
    at = {k: v for k, v in sy.values_at(setting).items() if k not in (sy.eta_v, sy.eta_kq, sy.eta)}
    slope = sp.diff(a_next, sy.alpha).subs(at | {sy.alpha: 1})
    start = sp.simplify(slope.subs(sy.delta, 0))                 # S uniform
    late = sp.simplify(sp.limit(slope, sy.delta, sp.oo))          # S -> S*
    # |slope| < 1 with slope = 1 - eta_V * g: eta_V < 2/g.
    g0, g1 = sp.simplify((1 - start) / sy.eta_v), sp.simplify((1 - late) / sy.eta_v)
    return {"eta_max_near_optimum": sp.Rational(2) / g1, "eta_max_at_start": sp.Rational(2) / g0}


def outcome(setting, T: int) -> str:
    """'converges' (on the 1/T track), 'stalls' (bounded, off the track: a 2-cycle or chaotic orbit) or
    'diverges' after T reduced float64 steps (compiled engine; leaving the float range is divergence)."""
    try:
        ser = run_series(setting, T, checkpoints=sorted(set(range(0, T + 1, EVERY)) | {T}), fast=True)
    except NumericalTrouble:
        return "diverges"
    if not all(abs(a) < BLOWUP for a in ser["alpha"]):
        return "diverges"
    return "converges" if ser["excess_loss"][-1] < ON_TRACK * leading_value(setting, "excess_loss", T) else "stalls"


def at_eta(setting, eta: Fraction):
    """``setting`` at step size eta, eta_KQ following it by the setting's ratio eta_KQ / eta_V."""
    return setting.with_(eta=eta, eta_kq=eta * setting.eta_kq / setting.eta_v)


def bisect(setting, T: int, bad: tuple, lo: Fraction, hi: Fraction, halvings: int) -> tuple[float, float]:
    """[lo, hi] bracketing the smallest eta whose outcome is in ``bad`` (outcome assumed monotone in eta)."""
    for _ in range(halvings):
        mid = (lo + hi) / 2
        if outcome(at_eta(setting, mid), T) in bad:
            hi = mid
        else:
            lo = mid
    return float(lo), float(hi)


def two_cycle(setting, T: int) -> list[float]:
    """alpha at T, T+1, T+2 (a period-2 orbit has alpha(T) = alpha(T+2) != alpha(T+1))."""
    return run_series(setting, T + 2, checkpoints=[T, T + 1, T + 2], fast=True)["alpha"]


def runs(profile: str) -> dict:
    """The derived limits, the bisected boundaries per horizon, and runs just below 2K/N and at 1.5 x 2K/N."""
    n = SIZES[profile]
    base = regime_setting(needs=LEADING, D=8, K=2, preset="sts", vstar_norm="1")
    bnd = derived_boundaries(base)
    late, start = (Fraction(int(bnd[k].p), int(bnd[k].q)) for k in ("eta_max_near_optimum", "eta_max_at_start"))
    top = start * 2
    conv = {T: bisect(base, T, ("stalls", "diverges"), Fraction(1, 10), top, n["bisections"]) for T in n["horizons"]}
    div = {T: bisect(base, T, ("diverges",), Fraction(1, 10), top, n["bisections"]) for T in n["horizons"]}
    eta_in = Fraction(3, 2) * late    # between the boundaries
    eta_ok = Fraction(9, 10) * late   # just below 2K/N
    s_in, s_ok = at_eta(base, eta_in), at_eta(base, eta_ok)
    ser_in, ser_ok = run_series(s_in, n["steps"], fast=True), run_series(s_ok, n["steps"], fast=True)
    out_in = outcome(s_in, n["steps"])
    longer = outcome(s_in, REPLAY_FACTOR * n["steps"]) if out_in == "converges" else None
    return {"base": base, "late": float(bnd["eta_max_near_optimum"]), "start": float(bnd["eta_max_at_start"]),
            "conv": conv, "div": div, "eta_in": eta_in, "eta_ok": eta_ok, "s_in": s_in, "s_ok": s_ok,
            "ser_in": ser_in, "ser_ok": ser_ok, "f_in": classify_series(ser_in), "f_ok": classify_series(ser_ok),
            "cycle": two_cycle(s_in, n["steps"]), "out_in": out_in, "longer": longer, "steps": n["steps"]}


def evidence(r: dict, replay: str) -> list[dict]:
    base, steps, cyc, Tl = r["base"], r["steps"], r["cycle"], max(r["conv"])
    bounds = [v[0] for v in r["conv"].values()]
    extra = {}
    if r["out_in"] == "converges":       # a counterexample to "the rate ends above 2K/N": it must replay 10x later
        extra["replay_check"] = {"horizon": REPLAY_FACTOR * steps, "holds": False if r["longer"] == "converges" else None,
                                 "detail": f"eta = {r['eta_in']}: {r['longer']} after {REPLAY_FACTOR * steps} steps"}
    return [
        record("stability limits of the W_X block from the generated step", "symbolic",
               Scope(dims=(f"D={base.D} K={base.K} N={base.N}",), sigma=("identity",), conventions=("reference",),
                     horizon="all"),
               f"d alpha'/d alpha = 1 - eta N ||s||^2: |.| < 1 near S* iff eta < 2K/N = {r['late']:g}, at the start "
               f"iff eta < 2D/N = {r['start']:g} (a linearisation: informative)", None, role="context"),
        record(f"eta = {float(r['eta_in']):g} = 1.5 x 2K/N, T = {steps}", "float64", scope_of((r["s_in"], steps)),
               f"GD {r['out_in']} (not on the 1/T track); alpha(T..T+2) = {cyc[0]:.6f}, {cyc[1]:.6f}, {cyc[2]:.6f} (a "
               f"period-2 orbit when the first and last agree); excess loss {r['ser_in']['excess_loss'][-1]:.3g}",
               r["out_in"] != "converges", threshold=OUTCOME_THRESHOLD, replay=replay, **extra),
        record("bisection: largest eta still on the 1/T track, per horizon", "float64", scope_of((base, Tl)),
               ", ".join(f"T = {T}: {v[0]:.4f}" for T, v in r["conv"].items()) + f" (2K/N = {r['late']:g})",
               compare(bounds, ">", r["late"]) and compare(r["conv"][Tl][0], "<", (1 + BOUNDARY_TOL) * r["late"])
               and all(x >= y for x, y in zip(bounds, bounds[1:])), threshold=BOUNDARY_THRESHOLD, replay=replay),
        record(f"eta = {float(r['eta_ok']):g} = 0.9 x 2K/N, T = {steps}", "float64", scope_of((r["s_ok"], steps)),
               "tails " + ", ".join(f"{q} {r['f_ok'][q].label}" for q in KEYS),
               all(r["f_ok"][q].kind == "power" for q in KEYS), threshold=POWER_THRESHOLD, replay=replay)]


def findings(r: dict) -> list[str]:
    cyc = r["cycle"]
    return [
        f"Derived from the generated step: the W_X block is stable near the optimum iff eta < 2K/N = {r['late']:g} and "
        f"at the start iff eta < 2D/N = {r['start']:g} (||s||^2 rises from 1/D to 1/K).",
        "Bisection (largest eta still on the 1/T track, L(T) - L_opt < 2 x leading term): "
        + ", ".join(f"T = {T}: {v[0]:.4f}" for T, v in r["conv"].items())
        + f"; it decreases towards 2K/N = {r['late']:g} as T grows: with eta slightly above 2K/N, GD runs fine until "
          "||s||^2 exceeds 2/(eta N), which happens later the closer eta is to 2K/N.",
        "Largest eta keeping GD bounded: " + ", ".join(f"T = {T}: {v[0]:.4f}" for T, v in r["div"].items())
        + f", well below 2D/N = {r['start']:g} (the first steps already couple alpha and delta).",
        f"In between (eta = {float(r['eta_in']):g}) GD neither diverges nor converges: alpha settles on a period-2 "
        f"orbit (alpha(T), alpha(T+1), alpha(T+2) = {cyc[0]:.6f}, {cyc[1]:.6f}, {cyc[2]:.6f}) and the excess loss stays "
        f"at {r['ser_in']['excess_loss'][-1]:.3g}: the oscillating W_X pushes S back off S* to about ||s||^2 = "
        "2/(eta N), where the W_X block is marginally stable. Nearer the upper boundary (e.g. eta = 9) the bounded "
        "orbit is irregular.",
    ] + ([] if active().is_reference else [
        f"In the run's convention ({active().label()}) 2K/N and 2D/N above name the derived limits 2K/(c_L v N) = "
        f"{r['late']:g} and 2D/(c_L v N) = {r['start']:g}; every eta of the probe is a multiple of them."])


@register("large-eta")
class LargeEta(Probe):
    title = "step-size boundary: converges iff eta < 2K/N; above 2K/N GD stalls (2-cycle) before it diverges"
    summary = title
    source = "reviewer question 1 (the step-size condition); Theorem 3.1 and Lemma C.2 (eta c_L v N < 2K)"
    questions = (1,)
    sizes = SIZES
    statements = (finding(
        "large-eta.boundary", "Theorem 3.1's step-size hypothesis eta c_L v N < 2K is where the 1/T rate ends "
        "(sts, D = 8, K = 2, N = 1): just below 2K/(c_L v N) GD follows the power-law tails; at 1.5 x 2K/(c_L v N) "
        "it neither converges nor diverges (a bounded period-2 orbit); the largest eta still on the 1/T track "
        "decreases towards 2K/(c_L v N) as T grows.", HYPOTHESES, about="theorem-3.1", relation="outside"),)

    def evaluate(self, profile):
        r = runs(profile)
        replay = replay_command("large-eta", profile)
        Tl = max(r["conv"])
        keys = ("step",) + KEYS + ("alpha",)
        return self.evaluation(
            {"large-eta.boundary": evidence(r, replay)}, replay=replay,
            regimes=[regime_entry(r["base"], Tl, "reduced (compiled float64)",
                                  label=f"bisection over eta, horizons {list(r['conv'])}"),
                     regime_entry(r["s_in"], r["steps"], "reduced (compiled float64)",
                                  label=f"eta = {r['eta_in']} (1.5 x 2K/N)"),
                     regime_entry(r["s_ok"], r["steps"], "reduced (compiled float64)",
                                  label=f"eta = {r['eta_ok']} (0.9 x 2K/N)")],
            findings=findings(r), classification=labels(r["f_in"]),
            fits={"eta_in": fits_json(r["f_in"]), "eta_ok": fits_json(r["f_ok"])},
            numbers={"boundaries": {"derived_near_optimum_2K_over_N": r["late"], "derived_at_start_2D_over_N": r["start"],
                                    "convergence": {str(T): list(v) for T, v in r["conv"].items()},
                                    "divergence": {str(T): list(v) for T, v in r["div"].items()}},
                     "alpha_at_T_T+1_T+2 (eta = 1.5 x 2K/N)": r["cycle"],
                     "final_excess_loss": {"eta_in": r["ser_in"]["excess_loss"][-1],
                                           "eta_ok": r["ser_ok"]["excess_loss"][-1]}},
            data={"eta_in": {k: r["ser_in"][k] for k in keys}, "eta_ok": {k: r["ser_ok"][k] for k in keys},
                  "horizons": list(r["conv"]), "convergence_boundary": [v[0] for v in r["conv"].values()],
                  "divergence_boundary": [v[0] for v in r["div"].values()]})

    def draw(self, res: dict) -> Drawing:
        name = self.id
        data = need(res, "data", f"probe {name}")
        runs_ = {"eta_ok": _eta_label(res, "0.9 x", "η below 2K/N"),
                 "eta_in": _eta_label(res, "1.5 x", "η between 2K/N and the divergence boundary")}
        fig, axes = new_figure(3, width=4.6)
        a1, a2, a3 = axes[0]
        _trajectories(a1, a2, data, runs_, name)
        _boundaries(a3, res, data, runs_, name)
        for ax in (a1, a2):
            readable_ticks(ax)
        figure_legend(fig, axes[0], ncols=3)
        suptitle(fig, "Step size: GD converges like 1/T only for η < 2K/N; above it GD stalls on a 2-cycle before it "
                      "diverges")
        return Drawing(fig, "Left: L − L_opt (log–log) just below 2K/N, with the claimed slope −1, and between the two "
                            "boundaries, where the loss stalls. Middle: the row multiple α(t), which settles on a "
                            "period-2 orbit (dots on two branches) above 2K/N. Right: the boundaries found by bisection "
                            "at each horizon, approaching the derived limits (dashed).")


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


def _trajectories(a1, a2, data: dict, runs_: dict, name: str) -> None:
    """The excess loss (log-log, with the claimed slope) and alpha(t) (semilog-x) of the two step sizes."""
    for i, (key, lab) in enumerate(runs_.items()):
        d = need(data, key, f"probe {name}: data")
        x, y = positive(*series(d, "step", "excess_loss", f"probe {name}: data[{key!r}]"))
        a1.loglog(x, y, color=COLOURS[i], label=lab, **COMPUTED)
        ax_, ay = finite(*series(d, "step", "alpha", f"probe {name}: data[{key!r}]"))
        keep = [k for k, t in enumerate(ax_) if t > 0]
        if key == "eta_in":      # a 2-cycle: the recorded steps land on both branches; dots show both
            a2.semilogx([ax_[k] for k in keep], [ay[k] for k in keep], ".", ms=3, color=COLOURS[i], label="_a")
        else:
            a2.semilogx([ax_[k] for k in keep], [ay[k] for k in keep], color=COLOURS[i], label="_a", **COMPUTED)
    x, y = positive(*series(need(data, "eta_ok", name), "step", "excess_loss", name))
    slope_guide(a1, x, y, claimed_t_exponents()["excess_loss"], "claimed slope −1 in T (Theorem 3.1)", decades=3)
    a2.axhline(1.0, color="black", lw=0.8, ls=":", label="α = 1 (W_X = V*)")
    label_axes(a1, "GD step t", "L − L_opt", "Excess loss L − L_opt")
    label_axes(a2, "GD step t", "α(t)", "Row multiple α(t) of V*")


def _boundaries(a3, res: dict, data: dict, runs_: dict, name: str) -> None:
    """The bisected boundaries against the horizon, the derived limits (dashed) and the two step sizes run."""
    H = floats(need(data, "horizons", f"probe {name}: data"), f"probe {name}: data[horizons]")
    for j, (key, mk, lab) in enumerate((("convergence_boundary", "o", "largest η still converging like 1/T"),
                                        ("divergence_boundary", "s", "largest η keeping GD bounded"))):
        x, y = series(data, "horizons", key, f"probe {name}: data")
        a3.semilogx(x, y, marker=mk, color=COLOURS[j + 2], label=lab, **COMPUTED)
    b = (res.get("numbers") or {}).get("boundaries") or {}
    for j, (key, lab) in enumerate((("derived_near_optimum_2K_over_N", "derived limit near the optimum, 2K/N"),
                                    ("derived_at_start_2D_over_N", "derived limit at the start, 2D/N"))):
        if isinstance(b.get(key), (int, float)):
            a3.axhline(b[key], color=COLOURS[j + 2], lw=1.2, ls="--", label=lab)
    for i, (key, lab) in enumerate(runs_.items()):
        eta = _eta_value(res, lab)
        if eta is not None:
            a3.axhline(eta, color=COLOURS[i], lw=1.0, ls=(0, (1, 2)), label=lab)   # same label: one legend entry
    a3.set_xticks(H, [f"{int(h):,}" for h in H])
    a3.minorticks_off()
    a3.set_ylim(bottom=0)
    label_axes(a3, "horizon T (GD steps)", "step size η", "Step-size boundaries found by bisection")
