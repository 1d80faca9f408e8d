"""The "Which convention?" figure: D-exponents under the reference convention and under the representative
member of the family (derived, and fitted from GD), and as claimed there (data: verify.reconcile.reconcile).

Drawn from the saved result alone, so a report can be rebuilt without recomputing. Fitted bars are the
fits after dividing out the finite-D factors; the raw fits are drawn beside them as open markers.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..plotting import png_bytes

GROUPS = (("excess_loss", "L − L_opt"), ("s_err", "‖S − S*‖_F"), ("w_err", "‖W_X − V*‖_F"), ("tstar", "T*"))


def _num(x) -> float:
    """A rational string ("5/2"), a number or None, as a float (nan when absent)."""
    if x is None:
        return math.nan
    if isinstance(x, str):
        try:
            return float(Fraction(x))
        except (ValueError, ZeroDivisionError):
            return math.nan
    return float(x)


def _fitted(entry: dict) -> tuple[list, list, list]:
    """(fitted exponents, their errors, raw fits) per group of a representative or reference entry."""
    num = entry.get("numerics") or {}
    fits = num.get("fits") or {}
    vals, errs, raws = [], [], []
    for q, _ in GROUPS:
        if q == "tstar":
            tf = (num.get("tstar_measured") or {}).get("fit") or {}
            vals.append(_num(tf.get("slope")))
            errs.append(_num(tf.get("error")))
            raws.append(math.nan)
            continue
        f = fits.get(q) or {}
        vals.append(_num(f.get("exponent")))
        errs.append(_num(f.get("error")))
        raws.append(_num(f.get("raw_exponent")))
    return vals, errs, raws


def _series(result: dict) -> list[tuple]:
    """(label, values, errors, raw fits, colour) for every bar series."""
    ref, rep = result["reference"], result.get("representative")
    out = [("reference convention (derived)", [_num(ref["d_exponents"].get(q)) for q, _ in GROUPS], None, None,
            "#9e9e9e"),
           ("reference convention (GD fit)", *_fitted(ref), "#d0d0d0")]
    if rep:
        out += [("representative member (derived)", [_num(rep["d_exponents"].get(q)) for q, _ in GROUPS], None, None,
                 "#1f5fa8"),
                ("representative member (GD fit)", *_fitted(rep), "#4c9be8"),
                ("claimed (Theorem 3.1) at the representative",
                 [_num((rep.get("claimed_d_exponents") or {}).get(q)) for q, _ in GROUPS], None, None, "#c0392b")]
    return out


def _caption(result: dict) -> str:
    rep, ref = result.get("representative"), result["reference"]
    main = result["readings"][0]["systems"][-1]
    ref_txt = ", ".join(ref["d_exponents"].get(q, "–") for q, _ in GROUPS)
    if not rep:
        cert = main.get("certificate") or {}
        return (f"No member {result['family']['label']} meets {main['text']} (certificate: {cert.get('sum', '–')}); "
                f"under the reference convention the D-exponents are {ref_txt}.")
    fits = (rep.get("numerics") or {}).get("fits") or {}
    fitted = ", ".join(f"{f['exponent']:.2f} ± {f['error']:.2f} (raw {f['raw_exponent']:.2f})"
                       for f in (fits.get(q) for q, _ in GROUPS[:3]) if f)
    return (f"Solved {result['family']['label']}: {main['text']} are "
            f"{'met' if main['feasible'] else 'not all met'}; representative {rep['text']} "
            f"({rep['combinations_text']}), derived D-exponents "
            + ", ".join(rep["d_exponents"].get(q, "–") for q, _ in GROUPS)
            + (f"; GD there (fast float64 engine, fixed T, finite-D factors divided out before fitting; raw fits "
               f"as open markers): {fitted}" if fitted else "")
            + f". Reference convention: {ref_txt}. T* fits: the first T with u⁻² ≥ 2 u0⁻² (u the off-support mass).")


def convention_figure(result: dict):
    """Grouped bars of the D-exponents of L − L_opt, ‖S − S*‖, ‖W_X − V*‖ and T*; (png bytes, caption) or None."""
    from matplotlib.figure import Figure  # heavy: matplotlib
    if not result or "reference" not in result or "readings" not in result:
        return None
    series = _series(result)
    fig = Figure(figsize=(10, 4.8), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(series)
    for k, (lab, vals, errs, raws, col) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(GROUPS))]
        errs = None if errs is None else [0 if not math.isfinite(e) else e for e in errs]
        ax.bar(xs, [v if math.isfinite(v) else 0 for v in vals], width, color=col, label=lab, yerr=errs,
               capsize=2 if errs else 0, edgecolor="black", linewidth=0.4)
        for x, v in zip(xs, vals):
            ax.text(x, (v if math.isfinite(v) else 0) + 0.08, "–" if not math.isfinite(v) else
                    f"{v:.2f}".rstrip("0").rstrip("."), ha="center", va="bottom", fontsize=6.5)
        if raws is not None:
            pts = [(x + width / 3, r) for x, r in zip(xs, raws) if math.isfinite(r)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", mfc="none", mec="black", ms=4,
                    label="raw fit (finite-D factor kept)" if k == 1 else "_")
    ax.set_xticks(range(len(GROUPS)))
    ax.set_xticklabels([name for _, name in GROUPS])
    ax.set_ylabel("exponent of D (fixed K, η, T)")
    ax.axhline(0, color="black", lw=0.6)
    finite = [v for _, vs, _, _, _ in series for v in vs if math.isfinite(v)]
    ax.set_ylim(min(0, *finite) - 0.3, max(finite) + 1.2)
    ax.set_title("Which convention makes Theorem 3.1's D-exponents true?")
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)
    png = png_bytes(fig)
    return png, _caption(result)


__all__ = ["convention_figure"]
