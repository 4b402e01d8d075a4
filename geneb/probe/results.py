"""Read, write and merge the results table (parquet, ``RESULTS_SCHEMA``).

Writes are atomic (a temp file in the same folder, then ``os.replace``), so a reader or a
killed run never sees half a table. Merging keeps one row per cell identity
(``CELL_IDENTITY``); a newer row for the same cell replaces the older one.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from geneb.errors import GenebError
from geneb.probe.schema import CELL_IDENTITY, RESULT_COLUMNS, RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION

CellId = tuple[Any, ...]


def _norm(v: Any) -> Any:
    """Identity values comparable across pandas/arrow/python: NaN and None are both None."""
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def cell_id(row: Mapping[str, Any]) -> CellId:
    """The identity of one result row (a rerun skips cells whose identity is present)."""
    out = []
    for col in CELL_IDENTITY:
        v = _norm(row.get(col))
        if col == "seed" and v is not None:
            v = int(v)
        elif col == "C" and v is not None:
            v = float(v)
        elif col == "standardize" and v is not None:
            v = bool(v)
        out.append(v)
    return tuple(out)


def read_table(path: str | os.PathLike[str]) -> pa.Table:
    """The table at ``path`` cast to ``RESULTS_SCHEMA``; clear errors for foreign files."""
    p = Path(path)
    if not p.exists():
        raise GenebError(f"no results table at {str(p)!r} (run `geneb probe --out {p}` first)")
    try:
        table = pq.read_table(p)
    except Exception as e:
        raise GenebError(f"{str(p)!r} is not a readable parquet results table: {e}") from e
    missing = [c for c in RESULT_COLUMNS if c not in table.column_names]
    if missing:
        raise GenebError(
            f"{str(p)!r} is not a geneb results table: missing column(s) {', '.join(missing)}"
        )
    versions = set(table.column("schema_version").to_pylist())
    if versions - {RESULTS_SCHEMA_VERSION}:
        raise GenebError(
            f"{str(p)!r} has results schema version(s) {sorted(versions)}; this geneb reads "
            f"version {RESULTS_SCHEMA_VERSION}"
        )
    try:
        return table.select(list(RESULT_COLUMNS)).cast(RESULTS_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise GenebError(f"{str(p)!r}: columns do not have the results schema types: {e}") from e


def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The results table as a DataFrame with the columns of ``RESULTS_SCHEMA`` (one row/fit)."""
    return read_table(path).to_pandas()


def rows_to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Result rows (dicts with every schema column) as an arrow table; names missing keys."""
    for i, r in enumerate(rows):
        missing = [c for c in RESULT_COLUMNS if c not in r]
        if missing:
            raise GenebError(f"result row {i} lacks column(s) {', '.join(missing)}")
    return pa.Table.from_pylist([{c: r[c] for c in RESULT_COLUMNS} for r in rows],
                                schema=RESULTS_SCHEMA)


def merge_tables(tables: Iterable[pa.Table]) -> pa.Table:
    """Concatenate; for duplicate cell identities keep the last row."""
    tables = [t for t in tables if t is not None]
    if not tables:
        return RESULTS_SCHEMA.empty_table()
    table = pa.concat_tables(tables)
    ids = table.select(list(CELL_IDENTITY)).to_pylist()
    last: dict[CellId, int] = {}
    for i, r in enumerate(ids):
        last[cell_id(r)] = i
    keep = sorted(last.values())
    if len(keep) == table.num_rows:
        return table
    return table.take(pa.array(keep, type=pa.int64()))


def write_table(table: pa.Table, path: str | os.PathLike[str]) -> Path:
    """Write atomically: temp file beside ``path``, fsync, then rename over it."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        pq.write_table(table.cast(RESULTS_SCHEMA), tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def write_results(rows_or_df: Sequence[Mapping[str, Any]] | pd.DataFrame,
                  path: str | os.PathLike[str]) -> Path:
    """Write a whole table (rows or a DataFrame with the schema's columns) atomically."""
    if isinstance(rows_or_df, pd.DataFrame):
        missing = [c for c in RESULT_COLUMNS if c not in rows_or_df.columns]
        if missing:
            raise GenebError(f"results DataFrame lacks column(s) {', '.join(missing)}")
        table = pa.Table.from_pandas(rows_or_df[list(RESULT_COLUMNS)], schema=RESULTS_SCHEMA,
                                     preserve_index=False)
    else:
        table = rows_to_table(list(rows_or_df))
    return write_table(table, path)


def append_results(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> pa.Table:
    """Merge ``rows`` into the table at ``path`` (created if absent) and write it atomically."""
    p = Path(path)
    old = read_table(p) if p.exists() else None
    merged = merge_tables([old, rows_to_table(list(rows))])
    write_table(merged, p)
    return merged
