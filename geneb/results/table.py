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

__all__ = ["ResultsTable", "cell_ids", "merge_tables", "read_results", "rows_to_table"]


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
    """Result rows as an arrow table of the results schema.

    Parameters
    ----------
    rows : sequence of mapping
        Dicts with every column of ``RESULT_COLUMNS`` (rows made for schema version 1 get the
        later columns' defaults); a row lacking one is an error naming the row and columns.

    Returns
    -------
    pyarrow.Table
        The rows, in order, with ``RESULTS_SCHEMA``.
    """
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
    """The cell identity of every row (``geneb.results.schema.identities``), column-wise.

    Parameters
    ----------
    table : pyarrow.Table
        A results-schema table.

    Returns
    -------
    list of CellId
        One per row, in order: rows with equal ids are the same fit.
    """
    return identities({c: table.column(c).to_pylist() for c in CELL_IDENTITY}, native=True)


def merge_tables(tables: Iterable[pa.Table | None], *, dedupe: bool = True) -> pa.Table:
    """Concatenate; for duplicate cell identities keep the newest row (at its own position).

    Newest: from the later table (part); within one table, the later ``created`` time, then
    the later row (hand-made or legacy single files may hold several rows of a cell).

    Parameters
    ----------
    tables : iterable of pyarrow.Table or None
        Results-schema tables, oldest first (None entries are skipped).
    dedupe : bool
        Keep only the newest row of each cell (default True); False: every row.

    Returns
    -------
    pyarrow.Table
        The rows kept, in their order (an empty results table when there is none).
    """
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
    """Row positions as an int64 arrow array, for ``Table.take``.

    Built without ``pa.array``, which imports pandas (~0.25 s of a ``geneb probe`` start).

    Parameters
    ----------
    positions : sequence of int
        Row positions.

    Returns
    -------
    pyarrow.Array
        The positions, int64.
    """
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
    the table's lock and is atomic (see ``geneb.results.parts``).

    Parameters
    ----------
    path : str or os.PathLike
        The table: a folder of parts, a single-file table of geneb <= 0.1, or a published
        source (``published:geneb``, read-only).
    """

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
        """Whether a table is at the path.

        Returns
        -------
        bool
            True for a folder of parts, a single file of geneb <= 0.1 or an interrupted
            migration.
        """
        return parts.resolve(self.path) is not None

    def read(self) -> pa.Table:
        """The table's current rows; a missing path, foreign or corrupt files are errors.

        Returns
        -------
        pyarrow.Table
            One row per cell, the newest; rows in write order.
        """
        p = self.path
        if self._published():  # the schema's columns of the published rows
            from geneb.results.published import read_published

            frame = read_published(p)[list(RESULT_COLUMNS)]
            return pa.Table.from_pandas(frame, schema=RESULTS_SCHEMA, preserve_index=False)
        if not self.exists():
            raise GenebError(
                f"no results table at {str(p)!r} (run `geneb probe --results {p}` first)")
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
        """:meth:`read` as a DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per cell, with the columns of ``RESULTS_SCHEMA``.
        """
        return self.read().to_pandas()

    def append(self, new: pa.Table | Sequence[Mapping[str, Any]]) -> Path:
        """Add rows to the table as one new part.

        Costs what ``new`` costs, whatever the table holds; safe against concurrent writers
        and kill -9 (see ``geneb.results.parts``). A row of a cell the table holds supersedes
        it when read.

        Parameters
        ----------
        new : pyarrow.Table or sequence of mapping
            A results-schema table, or result rows (dicts with every schema column).

        Returns
        -------
        pathlib.Path
            The new part's file.
        """
        self.check_writable()
        table = new if isinstance(new, pa.Table) else rows_to_table(list(new))
        return parts.append_part(self.path, _as_schema(table), _migrate)

    def write(self, rows_or_df: Sequence[Mapping[str, Any]] | pd.DataFrame) -> Path:
        """Make ``rows_or_df`` the whole table (a folder; what was there before is replaced).

        Parameters
        ----------
        rows_or_df : sequence of mapping or pandas.DataFrame
            Result rows, or a DataFrame with the schema's columns.

        Returns
        -------
        pathlib.Path
            The table's path.
        """
        self.check_writable()
        pd_mod = sys.modules.get("pandas")  # not imported yet: cannot be a DataFrame
        if pd_mod is not None and isinstance(rows_or_df, pd_mod.DataFrame):
            table = _frame_to_table(rows_or_df)
        else:
            table = rows_to_table(list(rows_or_df))
        parts.overwrite(self.path, table, _migrate)
        return self.path

    def compact(self) -> tuple[int, int]:
        """Fold every part into one holding the newest row per cell.

        Atomic and safe while other runs write the table.

        Returns
        -------
        tuple of (int, int)
            The number of parts before, and the rows kept.
        """
        self.check_writable()
        if not self.exists():
            raise GenebError(f"no results table at {str(self.path)!r} (nothing to compact)")
        n, table = parts.replace_all(self.path, merge_tables, _read_raw, _migrate)
        return n, table.num_rows

    def migrate(self) -> bool:
        """Turn a single-file table of geneb <= 0.1 into a folder of parts now.

        The first write does it anyway. Rows are kept as stored (``read`` still returns the
        newest per cell).

        Returns
        -------
        bool
            True when there was a single-file table to migrate.
        """
        self.check_writable()
        if not self.path.is_file():
            return False
        with parts.table_lock(self.path):
            was_file = self.path.is_file()
            parts.ensure_folder(self.path, _migrate)
        return was_file


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


