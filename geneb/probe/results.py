"""Read, write and merge the results table (parquet, ``RESULTS_SCHEMA``).

Writes are atomic (a temp file in the same folder, then ``os.replace``), so a reader or a
killed run never sees half a table. Merging keeps one row per cell identity
(``CELL_IDENTITY``); a newer row for the same cell replaces the older one.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from geneb.errors import GenebError
from geneb.probe.schema import CELL_IDENTITY, RESULT_COLUMNS, RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION

if TYPE_CHECKING:  # pandas costs ~0.25 s to import; `geneb probe` never needs it
    import pandas as pd

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
    if rows:
        cols = [_column([r[c] for r in rows], RESULTS_SCHEMA.field(c).type)
                for c in RESULT_COLUMNS]
        if all(a is not None for a in cols):
            return pa.Table.from_arrays(cols, schema=RESULTS_SCHEMA)
    return pa.Table.from_pylist([{c: r[c] for c in RESULT_COLUMNS} for r in rows],
                                schema=RESULTS_SCHEMA)


_INT = (int, np.integer)
_FLOAT = (float, int, np.floating, np.integer)


def _column(values: list[Any], typ: pa.DataType) -> pa.Array | None:
    """``pa.array(values, type=typ)`` built from numpy buffers for the plain values a results
    row holds (``pa.array`` imports pandas: ~0.25 s of every ``geneb probe``); None when a
    value is not of the expected Python/numpy type, so the caller falls back to ``pa.array``
    and its exact conversion rules (and errors)."""
    n = len(values)
    valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
    n_null = n - int(valid.sum())
    vbuf = pa.py_buffer(np.packbits(valid, bitorder="little")) if n_null else None
    present = [v for v in values if v is not None]
    if pa.types.is_string(typ):
        if not all(type(v) is str for v in present):
            return None
        enc = [b"" if v is None else v.encode("utf-8") for v in values]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=n), out=offsets[1:])
        data = [vbuf, pa.py_buffer(offsets), pa.py_buffer(b"".join(enc))]
        return pa.Array.from_buffers(typ, n, data, null_count=n_null)
    if pa.types.is_boolean(typ):
        if not all(isinstance(v, (bool, np.bool_)) for v in present):
            return None
        bits = np.packbits(np.array([bool(v) for v in values], dtype=bool), bitorder="little")
        return pa.Array.from_buffers(typ, n, [vbuf, pa.py_buffer(bits)], null_count=n_null)
    if pa.types.is_integer(typ) or pa.types.is_floating(typ):
        ok = _INT if pa.types.is_integer(typ) else _FLOAT
        if not all(isinstance(v, ok) and not isinstance(v, (bool, np.bool_)) for v in present):
            return None
        try:
            arr = np.array([0 if v is None else v for v in values], dtype=typ.to_pandas_dtype())
        except (OverflowError, ValueError, TypeError):
            return None
        return pa.Array.from_buffers(typ, n, [vbuf, pa.py_buffer(arr)], null_count=n_null)
    if pa.types.is_list(typ) and pa.types.is_int64(typ.value_type):
        lists = [() if v is None else v for v in values]
        if not all(isinstance(v, (list, tuple)) and all(isinstance(x, _INT)
                   and not isinstance(x, (bool, np.bool_)) for x in v) for v in lists):
            return None
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=n), out=offsets[1:])
        try:
            flat = np.array([x for v in lists for x in v], dtype=np.int64)
        except OverflowError:
            return None
        child = pa.Array.from_buffers(pa.int64(), len(flat), [None, pa.py_buffer(flat)])
        return pa.Array.from_buffers(typ, n, [vbuf, pa.py_buffer(offsets)], null_count=n_null,
                                     children=[child])
    return None


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
        # cast only when needed: ``Table.cast`` imports pyarrow.compute (~50 ms per process)
        same = table.schema.equals(RESULTS_SCHEMA, check_metadata=True)
        pq.write_table(table if same else table.cast(RESULTS_SCHEMA), tmp)
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
    pd_mod = sys.modules.get("pandas")  # not imported yet: cannot be a DataFrame
    if pd_mod is not None and isinstance(rows_or_df, pd_mod.DataFrame):
        missing = [c for c in RESULT_COLUMNS if c not in rows_or_df.columns]
        if missing:
            raise GenebError(f"results DataFrame lacks column(s) {', '.join(missing)}")
        table = pa.Table.from_pandas(rows_or_df[list(RESULT_COLUMNS)], schema=RESULTS_SCHEMA,
                                     preserve_index=False)
    else:
        table = rows_to_table(list(rows_or_df))
    return write_table(table, path)


def merge_into(path: str | os.PathLike[str], new: pa.Table) -> pa.Table:
    """Merge ``new`` into the table on disk at ``path`` and write it atomically.

    The table is re-read under an exclusive lock, so two runs writing one table (different
    tasks, or the same cells) never drop each other's rows; duplicates keep the newest row.
    """
    p = Path(path)
    with _table_lock(p):
        old = read_table(p) if p.exists() else None
        merged = merge_tables([old, new])
        write_table(merged, p)
    return merged


def append_results(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> pa.Table:
    """Merge ``rows`` into the table at ``path`` (created if absent) and write it atomically."""
    return merge_into(path, rows_to_table(list(rows)))


@contextlib.contextmanager
def _table_lock(p: Path) -> Iterator[None]:
    """Exclusive advisory lock on ``.<name>.lock`` beside the table (released if killed)."""
    import fcntl

    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p.parent / f".{p.name}.lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits for the other writer (each hold is short)
        yield
    finally:
        os.close(fd)
