"""Settings that realise a member of the family on a grid of D, and the horizon at which to look.

Each exponent is carried by the option it names (docs/setting.md): N through the supports (column j
on {j, ..., j+K-1} mod D, as gcn), ‖V*‖_F through ``vstar_norm``, v through ``law_var``, β through
``beta``, λ through ``p_lambda``, η_V through ``eta`` and η_KQ through ``eta_kq``. c_L is carried by v
(summed loss, v multiplied by c_L): only c_L v enters the recursion (verify.reconcile.combinations).

The D-free constants are free (the claims do not fix them); they are chosen so that every D of the grid
is well inside the step-size conditions: eta_V c_L v N / K <= 1 (half the W_X-block threshold 2K) and
eta_KQ lambda^2 beta^2 <= 0.8 g_max(D) (the delta block), and the horizon T is a multiple of the slowest
transient (T* and the W_X relaxation time) over the grid.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from ..model.symbols import values_at
from ..model import make_setting
from ..model.profiles import PROFILES, check_profile
from .constraints import delta_threshold, wx_relaxation_time
from .scaling_family import leading_terms


@dataclass(frozen=True)
class Budget:
    """The D grid, T as a multiple of the slowest transient, the largest T iterated, checkpoints per run."""

    Ds: tuple
    phase_factor: int
    max_steps: int
    log_points: int


# Per-profile sizes, keyed by the profile names of verify.model.profiles (checked below).
BUDGETS = {
    "ci": Budget((8, 16, 32, 64, 128, 256), 200, 2 * 10**8, 160),
    "dev": Budget((8, 16, 32, 64, 128, 256), 400, 4 * 10**8, 200),
    "deep": Budget((8, 16, 32, 64, 128, 256, 512), 800, 10**9, 240),
}
if set(BUDGETS) != set(PROFILES):
    raise AssertionError(f"reconcile budgets {sorted(BUDGETS)} do not match the profiles {sorted(PROFILES)}")

K_NUM = 4                    # support size: T* ~ 1/(K (8 - K)) at the delta-block limit is smallest at K = 4
N_CONST = 1                  # n in N = n D^x
WX_MARGIN = Fraction(1, 2)   # eta_V h N / K <= 2 * WX_MARGIN: half the W_X-block threshold 2K/(h N) at every D
ETA_V_MAX = Fraction(1, 2)   # and eta_V <= 1/2
DELTA_MARGIN = 0.8           # g <= 0.8 g_max(D): below the delta-block threshold at every D
RELAX_MARGIN = 4             # T* >= 4 x the W_X relaxation time at every D: T* is the start of the 1/T phase


def budget(profile: str) -> Budget:
    """The sizes of ``profile`` (InvalidParameter naming --profile for an unknown one)."""
    return BUDGETS[check_profile(profile)]


def power(D: int, e) -> Fraction:
    """D^e exactly when it is rational, else the double nearest to it (as an exact rational)."""
    e = Fraction(str(e))
    if e.denominator == 1:
        return Fraction(D) ** e.numerator
    root = round(D ** (1 / e.denominator))
    if root ** e.denominator == D:
        return Fraction(root) ** e.numerator
    return Fraction(D ** float(e))


def nice_up(x: float) -> int:
    """x rounded up to two significant digits (a readable horizon)."""
    if x <= 100:
        return max(int(math.ceil(x)), 1)
    e = 10 ** (int(math.floor(math.log10(x))) - 1)
    return int(math.ceil(x / e) * e)


def value_at(expr: sp.Expr, setting, extra: dict | None = None) -> float:
    """A derived expression at one setting's exact values (verify.model.symbols.values_at), and ``extra``
    ({symbol: value}, e.g. the horizon T)."""
    return float(expr.subs(values_at(setting) | (extra or {})))


@dataclass
class Realisation:
    """The settings on the grid (or why there are none), one row of derived numbers per D, the horizon."""

    ok: bool
    why: str | None = None
    settings: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    T: int | None = None
    constants: dict = field(default_factory=dict)
    Ds: tuple = ()


def _scales(exponents: dict, Ds) -> dict | str:
    """Per D: N, ‖V*‖_F, v (times c_L), beta, lambda as exact numbers, or why N cannot be realised."""
    out = {}
    for D in Ds:
        Nf = N_CONST * power(D, exponents["N"])
        if Nf.denominator != 1 or not 1 <= Nf <= D:
            return (f"N = n D^{exponents['N']} = {float(Nf):.6g} at D = {D} is not an integer in [1, D]; "
                    "the member cannot be realised on this grid")
        out[D] = {"N": int(Nf), "vnorm": power(D, Fraction(str(exponents["vstar2"])) / 2),
                  "v": power(D, Fraction(str(exponents["v"])) + Fraction(str(exponents["loss_avg"]))),
                  "beta": power(D, exponents["beta"]), "lambda": power(D, exponents["p_norm"])}
    return out


def _setting(D: int, s: dict, eta_v, eta_kq):
    """One regime of the grid: K-sparse circulant supports, a seeded V* row rescaled to ‖V*‖_F, summed loss."""
    return make_setting(D=D, K=K_NUM, N=s["N"], supports=[[(j + o) % D for o in range(K_NUM)] for j in range(s["N"])],
                        vstar_norm=s["vnorm"], eta=eta_v, eta_kq=eta_kq, beta=s["beta"], p_lambda=s["lambda"],
                        law_var=s["v"])


def _settings(exponents: dict, sc: dict, one_step: bool) -> list | str:
    """The settings with eta_V = kappa_V D^x and eta_KQ = kappa_KQ D^x, each constant the largest within its
    margins at every D (kappa_KQ = kappa_V with ``one_step``), or why the margins cannot be met.

    kappa_KQ's margins: the delta block (g <= 0.8 g_max) and T* >= 4 x the W_X relaxation time (T* is
    proportional to 1 / kappa_KQ, so a slower attention step leaves the W_X block time to settle first)."""
    K_ = Fraction(K_NUM)
    xv, xk = exponents["eta_v"], exponents["eta_kq"]
    kv = min(min(2 * WX_MARGIN * K_ / (s["v"] * s["N"]), ETA_V_MAX) / power(D, xv) for D, s in sc.items())
    base = {D: _setting(D, s, kv * power(D, xv), power(D, xk)) for D, s in sc.items()}     # kappa_KQ = 1
    gmax = {D: value_at(delta_threshold(), st) for D, st in base.items()}
    per_unit = {D: float(power(D, xk) * st.p_lambda**2 * st.beta**2) for D, st in base.items()}   # g / kappa_KQ
    if one_step:
        if Fraction(str(xv)) != Fraction(str(xk)):
            return "one step size (eta_V = eta_KQ) needs the same exponent for eta_v and eta_kq"
        kk = kv
    else:
        relax = min(value_at(leading_terms()["tstar"], st) / (RELAX_MARGIN * value_at(wx_relaxation_time(), st))
                    for st in base.values())
        kk = min(min(DELTA_MARGIN * gmax[D] / per_unit[D] for D in base), relax)
        kk = Fraction(kk).limit_denominator(1 << 20) if kk > 1e-6 else Fraction(kk)
    over = [D for D in base if float(kk) * per_unit[D] > DELTA_MARGIN * gmax[D]]
    if over:
        return f"eta_KQ lambda^2 beta^2 is above {DELTA_MARGIN} g_max(D) (delta block) at D = {over}"
    return [st.with_(eta_kq=kk * power(D, xk)) for D, st in base.items()], kv, kk, gmax


def _row(st, gmax: float) -> dict:
    """The derived numbers of one regime: its conventions, g, h, the margins, T* and the W_X relaxation time."""
    g = st.eta_kq * st.p_lambda**2 * st.beta**2
    h = st.loss_scale * st.law.var
    return {"D": st.D, "N": st.N, "vstar_norm2": str(st.vstar_norm2()), "v": str(st.law.var), "beta": str(st.beta),
            "lambda": str(st.p_lambda), "eta_V": str(st.eta_v), "eta_KQ": str(st.eta_kq), "g": float(g),
            "h": float(h), "g_over_g_max": float(g) / gmax, "eta_V_h_N_over_K": float(st.eta_v * h * st.N / K_NUM),
            "tstar_predicted": value_at(leading_terms()["tstar"], st),
            "wx_relaxation_time": value_at(wx_relaxation_time(), st)}


def realise(exponents: dict, budget_: Budget, one_step: bool = False) -> Realisation:
    """Settings for every D of the grid under the member ``exponents`` ({name: rational}), and the horizon T.

    ``one_step``: eta_V = eta_KQ (the reference convention's one step size), else each the largest within
    its margin. Not ok (with why) when N is not an integer in [1, D] somewhere, the margins cannot be met,
    or T exceeds the budget."""
    sc = _scales(exponents, budget_.Ds)
    if isinstance(sc, str):
        return Realisation(False, sc)
    made = _settings(exponents, sc, one_step)
    if isinstance(made, str):
        return Realisation(False, made)
    settings, kv, kk, gmax = made
    rows = [_row(st, gmax[st.D]) for st in settings]
    T = nice_up(budget_.phase_factor * max(max(r["tstar_predicted"], r["wx_relaxation_time"]) for r in rows))
    constants = {"K": K_NUM, "n": N_CONST, "kappa_V": str(kv), "kappa_KQ": str(kk), "one_step": one_step,
                 "realisation": "N through the supports (column j on {j..j+K-1} mod D), ‖V*‖_F through vstar_norm, "
                                "v and c_L through the entry variance (summed loss, v = c_L v), beta, lambda, "
                                "eta_V = kappa_V D^eta_v, eta_KQ = kappa_KQ D^eta_kq",
                 "kappa_V_rule": "largest with eta_V c_L v N / K <= 1 (half the W_X-block threshold) and eta_V <= 1/2 "
                                 "at every D",
                 "kappa_KQ_rule": ("kappa_KQ = kappa_V (one step size)" if one_step else
                                   f"largest with eta_KQ lambda^2 beta^2 <= {DELTA_MARGIN} g_max(D) and T* >= "
                                   f"{RELAX_MARGIN} x D/(eta_V c_L v N) at every D"),
                 "T_rule": f"{budget_.phase_factor} x max over D of max(T*, D/(eta_V c_L v N)), rounded up; extended "
                           "4x (at most 3 times, within the budget) until GD is within the band of its leading terms"}
    if T > budget_.max_steps:
        return Realisation(False, f"T = {T} needed for the 1/T phase at every D exceeds the budget of "
                                  f"{budget_.max_steps} steps", rows=rows, constants=constants)
    return Realisation(True, None, settings, rows, T, constants, tuple(budget_.Ds))


__all__ = ["Budget", "BUDGETS", "K_NUM", "budget", "power", "nice_up", "value_at", "Realisation", "realise"]
