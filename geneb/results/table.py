"""The results table (``RESULTS_SCHEMA``): ``ResultsTable`` appends, reads, compacts, migrates.

The table at a path is a folder of append-only parquet parts (``geneb.results.parts``): each
finished (model, task) adds one part, so a write costs the same whatever the table holds.
Reading returns one row per cell identity (``geneb.results.schema.cell_id``), the newest one;
``pandas.read_parquet(path)`` and ``pyarrow.dataset.dataset(path)`` read the same folder and
return every stored row. A single-file table of an older geneb is read in place and migrated
to a folder by the first write; ``compact`` folds the parts into one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from geneb.constraints import validate_params
from geneb.errors import GenebError
from geneb.results import parts
from geneb.results.schema import (
    CELL_IDENTITY,
    LEGACY_DEFAULTS,
    READABLE_SCHEMA_VERSIONS,
    RESULT_COLUMNS,
    RESULTS_SCHEMA,
    RESULTS_SCHEMA_VERSION,
    CellId,
    identities,
)

if TYPE_CHECKING:  # pandas costs ~0.25 s to import; `geneb probe` never needs it
    import pandas as pd

__all__ = [
    "ResultsTable",
    "append_results",
    "append_table",
    "cell_ids",
    "compact",
    "merge_tables",
    "read_results",
    "read_table",
    "rows_to_table",
    "write_results",
]


def _conform(table: pa.Table, f: Path) -> pa.Table:
    """One stored file as a ``RESULTS_SCHEMA`` table: checked, version-1 files migrated."""
    missing = [c for c in RESULT_COLUMNS
               if c not in table.column_names and c not in LEGACY_DEFAULTS]
    if missing:
        raise GenebError(
            f"{str(f)!r} is not a geneb results table: missing column(s) {', '.join(missing)}"
        )
    versions = set(table.column("schema_version").to_pylist())
    if versions - set(READABLE_SCHEMA_VERSIONS):
        raise GenebError(
            f"{str(f)!r} has results schema version(s) {sorted(versions)}; this geneb reads "
            f"version(s) {', '.join(map(str, READABLE_SCHEMA_VERSIONS))}"
        )
    if table.schema.equals(RESULTS_SCHEMA, check_metadata=False):
        return table
    n = table.num_rows
    for col, default in LEGACY_DEFAULTS.items():
        if col not in table.column_names:
            typ = RESULTS_SCHEMA.field(col).type
            table = table.append_column(col, pa.array([default] * n, type=typ))
    if versions != {RESULTS_SCHEMA_VERSION}:
        table = table.set_column(table.column_names.index("schema_version"), "schema_version",
                                 pa.array([RESULTS_SCHEMA_VERSION] * n, type=pa.int32()))
    try:
        return table.select(list(RESULT_COLUMNS)).cast(RESULTS_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise GenebError(f"{str(f)!r}: columns do not have the results schema types: {e}") from e


def _read_raw(p: Path) -> list[pa.Table]:
    return parts.read_raw(p, _conform)


def _migrate(p: Path) -> pa.Table:
    """A single-file table, checked and in today's schema (what migration stores)."""
    return merge_tables(_read_raw(p), dedupe=False)


def rows_to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Result rows (dicts with every schema column) as an arrow table; names missing keys."""
    if any(c not in r for r in rows for c in LEGACY_DEFAULTS):  # rows made for version 1
        rows = [{**LEGACY_DEFAULTS, **r, "schema_version": RESULTS_SCHEMA_VERSION} for r in rows]
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


def cell_ids(table: pa.Table) -> list[CellId]:
    """``cell_id`` of every row, computed column-wise (``geneb.results.schema.identities``)."""
    return identities({c: table.column(c).to_pylist() for c in CELL_IDENTITY}, native=True)


def merge_tables(tables: Iterable[pa.Table | None], *, dedupe: bool = True) -> pa.Table:
    """Concatenate; for duplicate cell identities keep the newest row (at its own position).

    Newest: from the later table (part); within one table, the later ``created`` time, then
    the later row (hand-made or legacy single files may hold several rows of a cell)."""
    present: list[pa.Table] = [t for t in tables if t is not None]
    if not present:
        return RESULTS_SCHEMA.empty_table()
    table = pa.concat_tables(present) if len(present) > 1 else present[0]
    if not dedupe:
        return table
    ids = cell_ids(table)
    if len(set(ids)) == table.num_rows:
        return table
    part = [i for i, t in enumerate(present) for _ in range(t.num_rows)]
    created = [c or "" for c in table.column("created").to_pylist()]
    order = sorted(range(table.num_rows), key=lambda i: (part[i], created[i]))
    last: dict[CellId, int] = {}
    for i in order:
        last[ids[i]] = i
    return table.take(indices(sorted(last.values())))


def indices(positions: Sequence[int]) -> pa.Array:
    """Row positions as an int64 arrow array without ``pa.array`` (which imports pandas,
    ~0.25 s of a ``geneb probe`` start)."""
    buf = pa.py_buffer(np.asarray(positions, dtype=np.int64))
    return pa.Array.from_buffers(pa.int64(), len(positions), [None, buf])


def _as_schema(table: pa.Table) -> pa.Table:
    # cast only when needed: ``Table.cast`` imports pyarrow.compute (~50 ms per process)
    return table if table.schema.equals(RESULTS_SCHEMA, check_metadata=True) else (
        table.cast(RESULTS_SCHEMA))


def _frame_to_table(df: pd.DataFrame) -> pa.Table:
    """A DataFrame with the schema's columns (version-1 columns may be missing) as a table."""
    df = df.copy()
    for col, default in LEGACY_DEFAULTS.items():
        if col not in df.columns:
            df[col] = default
    missing = [c for c in RESULT_COLUMNS if c not in df.columns]
    if missing:
        raise GenebError(f"results DataFrame lacks column(s) {', '.join(missing)}")
    return pa.Table.from_pandas(df[list(RESULT_COLUMNS)], schema=RESULTS_SCHEMA,
                                preserve_index=False)


class ResultsTable:
    """The results table at one path: the one object that reads and writes it.

    The probe engine appends one part per finished (model, task) (:meth:`append`); analysis
    and the commands read it (:meth:`read`, :meth:`read_frame`); ``geneb results compact``
    folds its parts (:meth:`compact`); a single-file table of geneb <= 0.1 is read in place
    and turned into a folder by the first write, or now by :meth:`migrate`. Every write holds
    the table's lock and is atomic (see ``geneb.results.parts``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"ResultsTable({str(self.path)!r})"

    def _published(self) -> bool:
        from geneb.results.published import is_published

        return is_published(self.path)

    def check_writable(self) -> None:
        """A published source (``published:geneb``) is read, never written."""
        if self._published():
            raise GenebError(f"{str(self.path)!r} is a published source: it is read-only "
                             "(write results to a folder of your own)")

    def exists(self) -> bool:
        """Whether a table (folder, legacy file or interrupted migration) is at the path."""
        return parts.resolve(self.path) is not None

    def read(self) -> pa.Table:
        """One row per cell, the newest; rows in write order. Clear errors for a missing
        path, foreign or corrupt files."""
        p = self.path
        if self._published():  # the schema's columns of the published rows
            from geneb.results.published import read_published

            frame = read_published(p)[list(RESULT_COLUMNS)]
            return pa.Table.from_pandas(frame, schema=RESULTS_SCHEMA, preserve_index=False)
        if not self.exists():
            raise GenebError(f"no results table at {str(p)!r} (run `geneb probe --results {p}` first)")
        if p.is_dir() and not parts.list_parts(p) and any(
                n.endswith(".parquet") for n in os.listdir(p)):
            raise GenebError(
                f"{str(p)!r} is a folder but not a geneb results table (no part-*.parquet)"
            )
        try:
            tables = _read_raw(p)
        except FileNotFoundError as e:
            raise GenebError(f"results table {str(p)!r} changed while being read: {e}") from e
        return merge_tables(tables)

    def read_frame(self) -> pd.DataFrame:
        """:meth:`read` as a DataFrame with the columns of ``RESULTS_SCHEMA``."""
        return self.read().to_pandas()

    def append(self, new: pa.Table | Sequence[Mapping[str, Any]]) -> Path:
        """Add ``new`` (a results-schema table, or result rows) as one new part; return it.

        Costs what ``new`` costs, whatever the table holds; safe against concurrent writers
        and kill -9 (see ``geneb.results.parts``)."""
        self.check_writable()
        table = new if isinstance(new, pa.Table) else rows_to_table(list(new))
        return parts.append_part(self.path, _as_schema(table), _migrate)

    def write(self, rows_or_df: Sequence[Mapping[str, Any]] | pd.DataFrame) -> Path:
        """Make ``rows_or_df`` (rows, or a DataFrame with the schema's columns) the whole table
        (a folder; what was there before is replaced)."""
        self.check_writable()
        pd_mod = sys.modules.get("pandas")  # not imported yet: cannot be a DataFrame
        if pd_mod is not None and isinstance(rows_or_df, pd_mod.DataFrame):
            table = _frame_to_table(rows_or_df)
        else:
            table = rows_to_table(list(rows_or_df))
        parts.overwrite(self.path, table, _migrate)
        return self.path

    def compact(self) -> tuple[int, int]:
        """Fold every part into one holding the newest row per cell; return (parts before,
        rows kept). Atomic and safe while other runs write the table."""
        self.check_writable()
        if not self.exists():
            raise GenebError(f"no results table at {str(self.path)!r} (nothing to compact)")
        n, table = parts.replace_all(self.path, merge_tables, _read_raw, _migrate)
        return n, table.num_rows

    def migrate(self) -> bool:
        """Turn a single-file table of geneb <= 0.1 into a folder of parts now (the first
        write does it anyway); True when there was one to migrate. Rows are kept as stored
        (``read`` still returns the newest per cell)."""
        self.check_writable()
        if not self.path.is_file():
            return False
        with parts.table_lock(self.path):
            was_file = self.path.is_file()
            parts.ensure_folder(self.path, _migrate)
        return was_file


def read_table(path: str | os.PathLike[str]) -> pa.Table:
    """The table at ``path`` (folder or legacy file): ``ResultsTable(path).read()``."""
    return ResultsTable(path).read()


@validate_params({})  # a call that does not fit is an ArgumentError
def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The results table as a DataFrame with the columns of ``RESULTS_SCHEMA`` (one row/cell).

    ``path`` may name a published source instead: ``"published:geneb"`` gives GENEB's
    published leaderboard as results rows (``geneb.results.published``).

    Parameters
    ----------
    path : str or os.PathLike
        A results folder (as ``run_probes(store, results)`` writes), a single-file table of
        an older geneb, or a published source such as ``"published:geneb"``.

    Returns
    -------
    pandas.DataFrame
        The current rows, one per cell (a rerun's row supersedes the earlier one).
    """
    from geneb.results.published import is_published, read_published

    if is_published(path):
        return read_published(path)
    return ResultsTable(path).read_frame()


def append_table(path: str | os.PathLike[str], new: pa.Table) -> Path:
    """Add ``new`` (a results-schema table) to the table at ``path`` as one new part."""
    return ResultsTable(path).append(new)


def append_results(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Add result rows (dicts with every schema column) to the table at ``path``."""
    return ResultsTable(path).append(rows)


def compact(path: str | os.PathLike[str]) -> tuple[int, int]:
    """Fold the parts of the table at ``path`` into one: ``ResultsTable(path).compact()``."""
    return ResultsTable(path).compact()


def write_results(rows_or_df: Sequence[Mapping[str, Any]] | pd.DataFrame,
                  path: str | os.PathLike[str]) -> Path:
    """Make ``rows_or_df`` the whole table at ``path``: ``ResultsTable(path).write(...)``."""
    return ResultsTable(path).write(rows_or_df)
