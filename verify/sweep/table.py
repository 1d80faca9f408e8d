"""The sweep's table on disk: Parquet (pyarrow; pandas and dask.dataframe read it back), a CSV copy and
sweep.json (what was swept, with which options and code version). Every file is written atomically."""
from __future__ import annotations

import io
import json
from pathlib import Path

from ..run.atomic import write_bytes_atomic, write_json_atomic

FIRST = ("key", "status", "error")
LAST = ("worker", "seconds", "code_version", "finished", "config")
PARQUET, CSV, META = "sweep.parquet", "sweep.csv", "sweep.json"


def columns(rows: list[dict]) -> list[str]:
    """Every column of the rows: key and status first, provenance last, the rest in first-seen order."""
    seen = {}
    for r in rows:
        for k in r:
            seen.setdefault(k, None)
    mid = [c for c in seen if c not in FIRST and c not in LAST]
    return [c for c in FIRST if c in seen] + mid + [c for c in LAST if c in seen]


def to_arrow(rows: list[dict]):
    """The rows as a pyarrow Table, one typed column per key (missing values are nulls)."""
    import pyarrow as pa  # heavy: pyarrow
    cols = {}
    for c in columns(rows):
        vals = [r.get(c) for r in rows]
        try:
            cols[c] = pa.array(vals)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):   # mixed kinds: keep them readable as text
            cols[c] = pa.array([None if v is None else str(v) for v in vals], type=pa.string())
    return pa.table(cols)


def write_table(out, rows: list[dict], meta: dict) -> dict:
    """Write OUT/sweep.parquet, OUT/sweep.csv and OUT/sweep.json; return their paths."""
    import pyarrow.parquet as pq  # heavy: pyarrow
    out = Path(out)
    table = to_arrow(rows)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    paths = {"parquet": out / PARQUET, "csv": out / CSV, "meta": out / META}
    write_bytes_atomic(paths["parquet"], buf.getvalue())
    write_bytes_atomic(paths["csv"], table.to_pandas().to_csv(index=False).encode())
    write_json_atomic(paths["meta"], meta | {"columns": table.column_names, "rows": len(rows)})
    return {k: str(v) for k, v in paths.items()}


def read_table(out):
    """OUT/sweep.parquet as a pandas DataFrame."""
    import pandas as pd  # heavy: pandas
    return pd.read_parquet(Path(out) / PARQUET)


def read_meta(out) -> dict:
    return json.loads((Path(out) / META).read_text())


__all__ = ["write_table", "read_table", "read_meta", "to_arrow", "columns", "PARQUET", "CSV", "META"]
