"""``verify sweep``: a grid of regimes x measurements on the Dask executor, as a Parquet table and figures.

>>> from verify.sweep import parse_grid, points
>>> [p.label() for p in points(parse_grid(["D=8,16", "K=2"]))]
['D=8 K=2', 'D=16 K=2']
"""
from .grid import AXES, BASE, DEFAULT_GRID, Point, grid_size, parse_grid, points, setting_kwargs
from .measures import MEASURES, check_measures, measure
from .run import DEFAULT_OUT, DEFAULT_STEPS, compute_row, plan_rows, row_key, run_sweep
from .table import read_meta, read_table

__all__ = ["AXES", "BASE", "DEFAULT_GRID", "Point", "grid_size", "parse_grid", "points", "setting_kwargs", "MEASURES",
           "check_measures", "measure", "run_sweep", "compute_row", "plan_rows", "row_key", "read_table", "read_meta",
           "DEFAULT_OUT", "DEFAULT_STEPS"]
