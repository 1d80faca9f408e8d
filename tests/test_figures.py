"""The report's figures read without the code: titles and axis labels in words, tick labels on every
axis, legends outside the data, the declared scales, slope guides where a claim is about a slope, and
notes where curves overlap by design or a quantity is 0 throughout.

Fixtures (tests/data/figures/*.json) are real part results, trimmed by tests/data/make_figure_fixtures.py.
Malformed data must raise FigureDataError, never yield a silently missing figure. Each probe draws its own figure
(verify.probes: Probe.draw, beside its computation); the report asks it (verify.report.figures.draw_probe).
"""
from __future__ import annotations

import copy
import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from verify.model.paper import claimed_exponent
from verify.plotting import LABELS, FigureDataError, coincide, floats, new_figure, slope_guide, words
from verify.probes import PROBES as REGISTERED, Probe
from verify.probes.support.interior import claimed_t_exponents
from verify.report import figures as fg

DATA = Path(__file__).parent / "data" / "figures"
BUILTIN = {"convergence": ("convergence", fg.draw_convergence), "alpha": ("convergence", fg.draw_alpha),
           "attention": ("attention", fg.draw_attention)}
PROBES = sorted(p.stem for p in DATA.glob("*.json") if p.stem not in ("convergence", "attention"))

# (x scale, y scale) of every panel, by figure: log–log where a power law is the point, semilog-y
# where the decay is geometric (d-eq-k, the off-span residual), linear where nothing moves (k-zero).
SCALES = {
    "convergence": [("log", "log")] * 3,
    "alpha": [("log", "linear"), ("log", "log")],
    "attention": [("linear", "linear")] * 5,
    "d-eq-k": [("linear", "log")] * 2,
    "k-zero": [("linear", "linear")] * 2,
    "k-one": [("log", "log")] * 3,
    "k-near-d": [("log", "log")] * 3,
    "nonuniform-s": [("log", "log")] * 4,
    "non-gaussian": [("log", "log"), ("linear", "linear")],
    "large-eta": [("log", "log"), ("log", "linear"), ("log", "linear")],
    "nonzero-init": [("linear", "log"), ("log", "linear"), ("log", "log"), ("log", "log")],
    "p-scale": [("log", "log")] * 3,
    "tstar": [("log", "log")] * 2,
    "rates": [("log", "log")] * 4,
    "finite-sample": [("log", "log")] * 3,
    "full-attention": [("log", "log")] * 4,
    "real-data": [("log", "log")] * 16,
}


def load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def draw(name: str, res: dict | None = None):
    """The figure ``name`` drawn from ``res``, or (once per session) from its fixture."""
    if res is None:
        return _drawn(name)
    if name in BUILTIN:
        return BUILTIN[name][1](res)
    return fg.draw_probe(name, res)


@functools.lru_cache(maxsize=None)
def _drawn(name: str):
    return draw(name, load(BUILTIN[name][0] if name in BUILTIN else name))


def rendered(drawing):
    """The figure laid out and drawn by Agg; returns (figure, renderer)."""
    fig = drawing.figure
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return fig, canvas.get_renderer()


def panels(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def labelled_ticks(axis) -> list[str]:
    lo, hi = sorted(axis.get_view_interval())
    out = []
    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
        loc, lab = tick.get_loc(), tick.label1
        if lab.get_visible() and lab.get_text().strip() and lo - 1e-9 * abs(lo) <= loc <= hi * (1 + 1e-9):
            out.append(lab.get_text())
    return out


def data_keys(obj, acc=None) -> set:
    """Every key under any "data" of a saved result whose value is an array (the names figures read)."""
    acc = set() if acc is None else acc
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, list) and v and not isinstance(v[0], (dict, list)):
                acc.add(k)
            data_keys(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            data_keys(v, acc)
    return acc


def texts(fig) -> list[str]:
    out = [t.get_text() for t in fig.texts]
    out += [fig._suptitle.get_text()] if fig._suptitle else []
    for leg in fig.legends:
        out += [t.get_text() for t in leg.get_texts()] + [leg.get_title().get_text()]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        if ax.get_legend():
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    return out


ALL = list(BUILTIN) + PROBES


def test_fixtures_cover_every_probe():
    assert set(PROBES) == set(REGISTERED)


def test_every_probe_has_its_own_figure():
    """Every probe draws its own figure (its module overrides Probe.draw), and the report draws exactly that."""
    for name, p in REGISTERED.items():
        assert type(p).draw is not Probe.draw, name
        assert p.has_figures
    res = load("k-one")
    assert fg.draw_probe("k-one", res).caption == REGISTERED["k-one"].draw(res).caption


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
def test_figure_reads_without_the_code(name):
    d = draw(name)
    fig, r = rendered(d)
    assert fig._suptitle is not None and fig._suptitle.get_text().strip()
    assert d.caption.strip()
    axes = panels(fig)
    assert axes
    for ax in axes:
        assert ax.get_title().strip(), f"{name}: a panel without a title"
        assert ax.get_xlabel().strip() and ax.get_ylabel().strip(), f"{name}: {ax.get_title()!r} lacks an axis label"
        assert len(labelled_ticks(ax.xaxis)) >= 2, f"{name}: {ax.get_title()!r}: x tick labels"
        assert len(labelled_ticks(ax.yaxis)) >= 2, f"{name}: {ax.get_title()!r}: y tick labels"
    # legends (and notes) are outside every panel
    boxes = [leg.get_window_extent(r) for leg in fig.legends]
    boxes += [ax.get_legend().get_window_extent(r) for ax in fig.axes if ax.get_legend()]
    boxes += [t.get_window_extent(r) for t in fig.texts if t.get_gid() == "note"]
    for box in boxes:
        for ax in axes:
            assert not box.overlaps(ax.get_window_extent(r)), f"{name}: a legend or note overlaps {ax.get_title()!r}"
    # no raw variable name reaches the reader
    raw = {k for k in data_keys(load(BUILTIN[name][0] if name in BUILTIN else name)) if "_" in k}
    for t in texts(fig):
        for k in raw:
            assert k not in t, f"{name}: raw name {k!r} in {t!r}"


@pytest.mark.parametrize("name", sorted(SCALES))
def test_scales_are_the_declared_ones(name):
    fig = draw(name).figure
    assert [(ax.get_xscale(), ax.get_yscale()) for ax in panels(fig)] == SCALES[name]


@pytest.mark.slow
def test_report_wrappers_give_png_and_caption():
    png, caption = fg.probe_figure("tstar", load("tstar"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "T*" in caption
    assert fg.convergence(load("convergence"))[0][:8] == b"\x89PNG\r\n\x1a\n"
    assert fg.probe_figure("tstar", {"probe": "tstar"}) is None     # no data: no figure
    assert fg.convergence({}) is None


# --- slope guides -----------------------------------------------------------------------------------------
def guides(ax) -> dict:
    return {ln.get_gid(): ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("guide:")}


def loglog_slope(line) -> float:
    x, y = (np.asarray(v, dtype=float) for v in line.get_data())
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def test_tstar_has_d1_and_d2_guides_through_a_data_point():
    res = load("tstar")
    fig = draw("tstar", res).figure
    fam = next(iter(v for v in res["data"].values() if isinstance(v, dict)))
    for ax, key in zip(panels(fig), ("t_cross", "t_track")):
        g = guides(ax)
        assert {"guide:1", "guide:2"} <= set(g)
        assert loglog_slope(g["guide:1"]) == pytest.approx(1.0, abs=1e-9)
        assert loglog_slope(g["guide:2"]) == pytest.approx(2.0, abs=1e-9)
        for ln in (g["guide:1"], g["guide:2"]):      # both pass through the first measured point
            x, y = ln.get_data()
            assert x[0] == pytest.approx(fam["D"][0]) and y[0] == pytest.approx(fam[key][0], rel=1e-12)


def test_rates_guides_have_the_claimed_slopes():
    fig = draw("rates").figure
    axes = panels(fig)
    for ax, s in zip(axes[:3], (-1.0, -0.5, -0.5)):
        (g,) = guides(ax).values()
        assert loglog_slope(g) == pytest.approx(s, abs=1e-9)
    (g,) = guides(axes[3]).values()
    assert loglog_slope(g) == pytest.approx(4.0, abs=1e-9)          # the claimed K D^4 / (eta T)


def test_the_guides_slopes_are_theorem_3_1s():
    # Hand values from docs/paper.md: D^{5/2}/(‖V*‖ √(ηT)), D² √(K/(ηT)), K D⁴/(ηT).
    assert claimed_t_exponents() == {"s_err": -0.5, "w_err": -0.5, "excess_loss": -1.0}
    assert {q: float(claimed_exponent(q, "D")) for q in ("s_err", "w_err", "excess_loss")} == {
        "s_err": 2.5, "w_err": 2.0, "excess_loss": 4.0}


@pytest.mark.parametrize("name", ["convergence", "k-one", "k-near-d", "nonuniform-s", "p-scale", "finite-sample"])
def test_power_law_panels_carry_the_claimed_slope(name):
    fig = draw(name).figure
    for ax, s in zip(panels(fig), (-1.0, -0.5, -0.5)):
        g = guides(ax)
        assert f"guide:{s:g}" in g, f"{name}: {ax.get_title()!r} has no slope {s} guide"
        assert loglog_slope(g[f"guide:{s:g}"]) == pytest.approx(s, abs=1e-9)


def test_slope_guide_passes_through_its_point():
    fig, axes = new_figure(1)
    ax = axes[0][0]
    ln = slope_guide(ax, [1.0, 10.0, 100.0], [5.0, 2.0, 0.3], -0.5, "g", at=1)
    x, y = (np.asarray(v) for v in ln.get_data())
    assert np.interp(10.0, x, y) == pytest.approx(2.0, rel=1e-2)     # on the anchor (grid point at 10)
    assert 2.0 * (100 / 10) ** -0.5 == pytest.approx(y[-1], rel=1e-12)


# --- notes: zero quantities and curves overlapping by design ------------------------------------------------
def test_d_eq_k_drops_the_zero_panel_and_says_so():
    res = load("d-eq-k")
    d = draw("d-eq-k", res)
    assert len(panels(d.figure)) == 2
    assert "‖S − S*‖_F = 0 at every step" in d.caption
    bad = copy.deepcopy(res)
    reg = next(k for k, v in bad["data"].items() if isinstance(v, dict))
    bad["data"][reg]["s_err"][3] = 1e-3
    d2 = draw("d-eq-k", bad)
    assert len(panels(d2.figure)) == 3
    assert "= 0 at every step" not in d2.caption


def test_k_zero_loss_panel_only_when_not_zero():
    res = load("k-zero")
    d = draw("k-zero", res)
    assert [ax.get_ylabel() for ax in panels(d.figure)] == ["‖W_X − V*‖_F", "‖S − S*‖_F"]
    assert "L − L_opt = 0 at every step" in d.caption
    bad = copy.deepcopy(res)
    reg = next(k for k, v in bad["data"].items() if isinstance(v, dict))
    bad["data"][reg]["excess_loss"][-1] = 0.5
    assert len(panels(draw("k-zero", bad).figure)) == 3


def note_text(fig) -> str:
    """The figure's notes (legend heading or super-label), with line breaks undone."""
    parts = [leg.get_title().get_text() for leg in fig.legends] + [t.get_text() for t in fig.texts]
    return " ".join(" ".join(parts).split())


def test_non_gaussian_notes_the_overlap_only_when_there_is_one():
    res = load("non-gaussian")
    d = draw("non-gaussian", res)
    assert "Trajectories identical for σ = identity" in note_text(d.figure)
    assert "only the first two moments enter (proved symbolically)" in d.caption
    bad = copy.deepcopy(res)
    law = next(k for k in bad["data"]["identity"] if k.startswith("excess_loss["))
    bad["data"]["identity"][law] = [v * 1.01 for v in bad["data"]["identity"][law]]
    d2 = draw("non-gaussian", bad)
    assert "identical" not in note_text(d2.figure) and "identical" not in d2.caption


def test_alpha_notes_coinciding_rows():
    res = load("convergence")
    assert "at every step (curves overlap" in note_text(draw("alpha", res).figure)
    bad = copy.deepcopy(res)
    bad["alpha"] = [[a[0], a[1] * 1.1] + a[2:] for a in bad["alpha"]]
    assert "α_1(t) = α_2(t)" not in note_text(draw("alpha", bad).figure)


def test_p_scale_notes_the_equivalent_runs():
    assert "identical" in note_text(draw("p-scale").figure)


# --- malformed data raise; unknown probes get the generic figure ---------------------------------------------
@pytest.mark.parametrize("name, path, missing", [
    ("tstar", ("data", "A: K = 2"), "t_cross"),
    ("d-eq-k", ("data", "sts D=K=6"), "w_err"),
    ("large-eta", ("data",), "horizons"),
    ("rates", ("data", "cnn D=8 K=2"), "excess_loss"),
    ("convergence", (), "quantities"),
])
def test_malformed_data_raise_naming_the_key(name, path, missing):
    res = load(BUILTIN[name][0] if name in BUILTIN else name)
    d = res
    for p in path:
        d = d[p]
    del d[missing]
    with pytest.raises(FigureDataError, match=repr(missing)):
        draw(name, res)


def test_bad_numbers_raise():
    assert [math.isnan(v) for v in floats([1, None, "nan", 2.5], "x")] == [False, True, True, False]
    assert floats(["inf"], "x") == [math.inf]
    with pytest.raises(FigureDataError, match="'abc' is not a number"):
        floats([1, "abc"], "where")
    res = load("tstar")
    res["data"]["A: K = 2"]["t_cross"] = res["data"]["A: K = 2"]["t_cross"][:-1]
    with pytest.raises(FigureDataError, match="t_cross has"):
        draw("tstar", res)


def test_generic_figure_for_an_unknown_probe():
    T = [1, 10, 100, 1000, 10000]
    res = {"data": {"K=0": {"step": T, "excess_loss": [1.0 / t for t in T], "w_err_closed_form": [2.0] * 5},
                    "K=1": {"step": T, "excess_loss": [1.0 / t for t in T], "w_err_closed_form": [3.0] * 5}}}
    d = fg.draw_probe("not-a-probe", res)
    fig, r = rendered(d)
    axes = panels(fig)
    assert [ax.get_title() for ax in axes] == ["Excess loss", "Value error, closed form"]
    assert axes[0].get_xlabel() == "GD step t" and axes[1].get_ylabel() == "‖W_X − V*‖_F"
    assert (axes[0].get_xscale(), axes[0].get_yscale()) == ("log", "log")
    assert "coincide" in note_text(fig)                  # the two loss curves are the same
    for leg in fig.legends:
        assert not any(leg.get_window_extent(r).overlaps(ax.get_window_extent(r)) for ax in axes)


def test_labels_name_every_saved_array():
    keys = set()
    for p in DATA.glob("*.json"):
        res = json.loads(p.read_text())
        keys |= data_keys(res.get("data", {}))
    keys |= {"excess_loss", "s_err", "w_err", "steps"}
    missing = {k.partition("[")[0] for k in keys} - set(LABELS)
    assert not missing, f"LABELS lacks {sorted(missing)}"
    assert words("w_err_closed_form") == "value error, closed form ‖W_X − V*‖_F"
    assert words("excess_loss[gumbel]") == "excess loss L − L_opt (gumbel)"
    assert words("loss") == "loss L"            # L itself; L − L_opt is spelled excess_loss


def test_coincide_is_exact_up_to_round_off():
    a = [1.0, 0.5, 0.25]
    assert coincide([a, list(a)])
    assert not coincide([a, [1.0, 0.5, 0.2500001]])


def test_a_note_never_collides_with_the_legend():
    from verify.plotting import figure_legend, note
    for order in ("note first", "legend first"):
        fig, axes = new_figure(2)
        for ax in axes[0]:
            ax.plot([1, 2], [1, 2], label="a line")
            ax.set_title("t")
        if order == "note first":
            note(fig, "a remark " * 40)
            figure_legend(fig, axes[0])
        else:
            figure_legend(fig, axes[0])
            note(fig, "a remark " * 40)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        r = canvas.get_renderer()
        (leg,) = fig.legends
        assert "a remark" in leg.get_title().get_text()          # the note heads the legend, in its box
        assert not (fig._supxlabel and fig._supxlabel.get_text())
        assert not any(leg.get_window_extent(r).overlaps(ax.get_window_extent(r)) for ax in axes[0])


def test_real_data_draws_the_third_run_on_the_digits_and_drops_rounding_level_residuals():
    """The Gaussian with the digits' second moments lies on the digits' curve (same loss for sigma = identity); the
    off-span panels draw no value at rounding level, and the caption says so."""
    d = draw("real-data")
    axes = panels(d.figure)
    for ax in axes[::4]:                                   # each teacher's L - L_opt panel
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        dig = next(v for k, v in lines.items() if k.startswith("the digits"))
        third = next(v for k, v in lines.items() if "second moments" in k)
        on = dict(zip(dig.get_xdata(), dig.get_ydata()))
        common = [(x, y) for x, y in zip(third.get_xdata(), third.get_ydata()) if x in on]
        assert len(common) >= 5 and max(third.get_xdata()) < max(dig.get_xdata())    # over a prefix
        assert all(y == pytest.approx(on[x], rel=1e-6) for x, y in common)           # fixtures keep 7 digits
    for ax in axes[3::4]:                                  # each off-span panel
        assert all(min(ln.get_ydata(), default=1.0) > 1e-14 for ln in ax.get_lines())
        assert {ln.get_label() for ln in ax.get_lines() if len(ln.get_xdata())} <= {
            "the digits (a stand-in for MNIST: sklearn's 8×8 digits)", "Gaussian with the digits' second moments",
            "Gaussian, Σ_pix ⊗ I (isotropic across tokens)"}
    assert "not drawn" in d.caption and "stand-in for MNIST: sklearn's 8×8 digits" in d.caption
