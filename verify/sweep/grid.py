"""The grid of a sweep: its axes, how ``--grid NAME=v1,v2,...`` is read, and the regimes it spans.

Axes are the regime options of ``verify run`` (same names, '-' written '_'): D, K, N or preset, eta,
eta_kq, vstar_norm, M, d, sigma, data, law and the conventions (law_mean, law_var, loss, p_lambda, p_kind,
p_structure, noise_sd, init, init_scale, relu_at_zero, freeze_wp, seed). An axis not on the grid keeps
its value in :data:`BASE`, except that a data model fixing the dimensions (the digits: D = d = 8) sets them. Numbers are kept as written ("1/10", "0.07") and read exactly. Values are
separated by commas, or by semicolons when a value holds commas (``sigma=identity;poly:0,1,0,1``).

S*: with ``preset`` (the default, cnn) the preset's supports; with ``N`` on the grid and no preset,
N columns whose supports are K consecutive tokens starting at the column's position, cyclically
(g_j = {j, ..., j+K-1} mod D, the gcn preset's first N columns).
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

from ..errors import InvalidParameter, suggest
from ..model import make_setting
from ..model.data import data_models, parse_data
from ..model.spec import BY_NAME, FIELDS, KINDS, OF_KIND, flag_args

# The axes are the setting's fields (verify.model.spec), by kind; a switch and the data model are choices here.
INT_AXES = OF_KIND["int"]
NUMBER_AXES = OF_KIND["number"]
CHOICE_AXES = {f.name: f.choices for f in FIELDS if f.kind == "choice"} | {
    f.name: ("true", "false") for f in FIELDS if f.kind == "flag"} | {"data": tuple(data_models())}
TEXT_AXES = ("sigma", "law")
AXES = INT_AXES + NUMBER_AXES + tuple(CHOICE_AXES) + TEXT_AXES

# Values of the axes not on the grid.
BASE = {"D": 16, "K": 4, "preset": "cnn", "M": 1, "d": 1, "eta": "1/10"}
# The grid of `verify sweep` without --grid (every point valid for cnn: K divides D).
DEFAULT_GRID = {"D": [8, 16, 32], "K": [2, 4], "eta": ["1/10", "1/20"]}


def parse_axis(spec: str) -> tuple[str, list]:
    """``NAME=v1,v2,...`` as (name, values); InvalidParameter naming --grid otherwise."""
    if not isinstance(spec, str) or "=" not in spec:
        raise InvalidParameter("grid", spec, "must be NAME=v1,v2,... (e.g. D=8,16,32)")
    name, _, text = spec.partition("=")
    name = name.strip().replace("-", "_")
    if name not in AXES:
        raise InvalidParameter("grid", spec, f"axis must be one of {', '.join(AXES)}{suggest(name, AXES)}")
    # Values are separated by commas, or by semicolons when a value holds commas (sigma=identity;poly:0,1,0,1).
    raw = [v.strip() for v in text.split(";" if ";" in text else ",")]
    if not text.strip() or any(v == "" for v in raw):
        raise InvalidParameter("grid", spec, f"must list values after {name}=, separated by commas")
    vals = []
    for v in raw:
        if name in INT_AXES or name in NUMBER_AXES:        # read by the field's kind (verify.model.spec)
            try:
                value = KINDS[BY_NAME[name].kind].from_text(name, v)
            except InvalidParameter as exc:
                raise InvalidParameter("grid", spec, f"{name} values {exc.valid}, not {v!r}") from None
            vals.append(value if name in INT_AXES else v)       # a number kept as written, read exactly later
        elif name in CHOICE_AXES:
            if v.lower() not in CHOICE_AXES[name]:
                raise InvalidParameter("grid", spec, f"{name} values must be among {', '.join(CHOICE_AXES[name])}")
            vals.append(v.lower())
        else:
            vals.append(v)
    if len(set(vals)) != len(vals):
        raise InvalidParameter("grid", spec, f"lists a value of {name} twice")
    return name, vals


def grid_size(grid: dict[str, list]) -> int:
    """The number of regimes (rows) of the grid: the product of its axes' lengths."""
    n = 1
    for vals in grid.values():
        n *= len(vals)
    return n


def parse_grid(specs) -> dict[str, list]:
    """Every ``--grid`` option as {axis: values}, in the order given; :data:`DEFAULT_GRID` when none."""
    if not specs:
        return {k: list(v) for k, v in DEFAULT_GRID.items()}
    grid = {}
    for spec in specs:
        name, vals = parse_axis(spec)
        if name in grid:
            raise InvalidParameter("grid", spec, f"axis {name} is given twice; list all its values in one --grid")
        grid[name] = vals
    if "N" in grid and "preset" in grid:
        raise InvalidParameter("grid", "N and preset", "give either N (cyclic supports) or preset, not both")
    return grid


def setting_kwargs(point: dict) -> dict:
    """The keyword arguments of verify.model.make_setting for one grid point."""
    kw = dict(BASE)
    pt = dict(point)
    dims = parse_data(pt["data"]).dims if "data" in pt else None
    if dims is not None:
        kw |= {"d": dims[0], "D": dims[1]}
    if "N" in pt and "preset" not in pt:
        kw.pop("preset")
    switches = {f.name: pt.pop(f.name) == "true" for f in FIELDS if f.kind == "flag" and f.name in pt}
    kw.update(pt | flag_args(switches))       # a switch sets its make_setting keyword (freeze_wp: wp_trainable False)
    if "N" in pt and "preset" not in pt:
        D, K, N = kw["D"], kw["K"], kw.pop("N")
        if not (isinstance(N, int) and 1 <= N <= D):
            raise InvalidParameter("N", N, f"must satisfy 1 <= N <= D = {D}")
        if not (isinstance(K, int) and 0 <= K <= D):
            raise InvalidParameter("K", K, f"must satisfy 0 <= K <= D = {D}")
        kw["supports"] = [sorted((j + o) % D for o in range(K)) for j in range(N)]
    return kw


@dataclass(frozen=True)
class Point:
    """One regime of the grid: the axes' values, why it is not a valid regime (None when it is) and the kind of
    problem (the parameters named, e.g. "K"), by which the invalid regimes of a grid are counted."""

    values: tuple
    invalid: str | None = None
    invalid_kind: str | None = None

    @property
    def as_dict(self) -> dict:
        return dict(self.values)

    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.values)

    def token(self) -> str:
        return json.dumps(self.as_dict, sort_keys=True)


def points(grid: dict[str, list]) -> list[Point]:
    """Every combination of the axes' values, in grid order; each one checked by building its Setting."""
    names = list(grid)
    out = []
    for combo in itertools.product(*(grid[n] for n in names)):
        pt = tuple(zip(names, combo))
        try:
            make_setting(**setting_kwargs(dict(pt)))
            out.append(Point(pt))
        except InvalidParameter as exc:
            out.append(Point(pt, str(exc), ", ".join(sorted({p.name for p in exc.problems}))))
    return out


__all__ = ["AXES", "BASE", "DEFAULT_GRID", "Point", "parse_axis", "parse_grid", "points", "setting_kwargs", "grid_size"]
