"""The results table on disk: a folder of append-only parquet parts.

Why parts: writing a finished (model, task) must cost the same whatever the table already holds.
Rewriting one file after every pair made bookkeeping quadratic (3.9 s per pair at 300k rows);
appending one small file per pair is constant. A folder of parquet files is also what
``pandas.read_parquet`` and ``pyarrow.dataset`` read natively (they return every stored row;
``geneb.results.read_results`` returns the newest row per cell).

Layout of a table at ``P`` (``--out results.parquet`` names the folder)::

    P/part-0000000001-1a2b3c4d.parquet   one per write, never modified
    P/part-0000000002-...                sequence numbers give the order: later rows win
    P/part-10000000000-...               (past 10 digits the number just grows; order by value)

* Every part is written to a dot-file (ignored by every reader) and renamed into place, under
  an exclusive lock (``.<name>.lock`` beside ``P``), so a killed run leaves whole parts only
  and two runs writing one table both keep their rows.
* Parts are written with parquet page checksums and read with them verified: a flipped bit is
  an error naming the part, never silently different numbers.
* Files are created with the default mode, so they honour the umask (a shared table stays
  readable by the group when the umask says so).
* A full disk (any ``OSError`` while writing) is a one-line ``GenebError`` naming the path; the
  unfinished part is removed and every part already written is untouched.
* A single-file table (geneb <= 0.1) is read in place; the first write migrates it into a
  folder (``_migrate``), recoverable at every step.
* ``compact`` folds all parts into one (the newest row per cell), atomically: the folded part
  takes the name of the last part it replaces, so order is kept, and readers that race a
  compaction retry.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from geneb import _fs
from geneb.errors import GenebError

#: A part's name: its sequence number (zero-padded to at least 10 digits; more once it grows
#: past them, never wrapped or truncated) and a random tag. Order is by the number's value.
PART_RE = re.compile(r"^part-(\d{10,})-[0-9a-z]+\.parquet$")
#: Read retries when a concurrent compaction removes a part between listing and reading.
_READ_RETRIES = 5


def _is_part(name: str) -> bool:
    return PART_RE.match(name) is not None


def _looks_like_part(name: str) -> bool:
    """A name a reader could take for a part (``part-*`` or ``*.parquet``, not a dot-file)."""
    return not name.startswith(".") and (name.startswith("part-") or name.endswith(".parquet"))


def part_seq(f: Path) -> int:
    """The sequence number of a part."""
    m = PART_RE.match(f.name)
    if m is None:  # pragma: no cover - list_parts returns only parts
        raise GenebError(f"{str(f)!r} is not a results part")
    return int(m.group(1))


def list_parts(p: Path) -> list[Path]:
    """The parts of the folder table ``p`` in write order (by sequence number, then name).

    Dot-files (unfinished writes, locks) and files that cannot be taken for a part are
    skipped; a name that looks like a part but is not one geneb writes (``part-12.parquet``,
    ``other.parquet``) is an error naming it: geneb would not read its rows while
    ``pandas.read_parquet`` would, and a part must never go unseen."""
    try:
        names = os.listdir(p)
    except FileNotFoundError:
        return []
    foreign = sorted(n for n in names if _looks_like_part(n) and not _is_part(n))
    if foreign:
        raise GenebError(
            f"results table {str(p)!r}: {foreign[0]!r} is not a results part name (expected "
            f"part-<sequence of 10+ digits>-<tag>.parquet, as geneb writes them); move it out "
            f"of the folder, or rename it to the next part number if its rows belong here"
            + (f" ({len(foreign) - 1} more such file(s))" if len(foreign) > 1 else "")
        )
    found = [p / n for n in names if _is_part(n)]
    return sorted(found, key=lambda f: (part_seq(f), f.name))


def _migrate_dir(p: Path) -> Path:
    return p.parent / f".{p.name}.migrate"


def resolve(p: Path) -> Path | None:
    """Where the table at ``p`` lives now (``p``; or its migration folder when a migration
    was interrupted between its two renames); None when there is no table."""
    if p.exists():
        return p
    m = _migrate_dir(p)
    return m if m.is_dir() else None


def read_parquet_file(f: Path, label: Path) -> pa.Table:
    """One parquet file with page checksums verified; errors name ``label`` (the table)."""
    try:
        # ParquetFile: ~3x less overhead per small file than pq.read_table (no dataset layer)
        with pq.ParquetFile(f, page_checksum_verification=True) as pf:
            return pf.read()
    except FileNotFoundError:
        raise
    except Exception as e:  # pyarrow raises OSError/ArrowInvalid for corrupt files
        raise GenebError(
            f"results table {str(label)!r}: file {str(f)!r} is not a readable parquet results "
            f"file (corrupt or not parquet: {e}); restore it from a copy or delete it and rerun "
            f"`geneb probe` to recompute its cells"
        ) from e


def read_raw(p: Path, convert: Callable[[pa.Table, Path], pa.Table]) -> list[pa.Table]:
    """Every stored part (or the single legacy file) of the table at ``p``, in write order,
    each passed through ``convert`` (schema check and migration)."""
    where = resolve(p)
    if where is None:
        raise FileNotFoundError(str(p))
    if where.is_file():
        return [convert(read_parquet_file(where, p), where)]
    for attempt in range(_READ_RETRIES):
        try:
            return [convert(read_parquet_file(f, p), f) for f in list_parts(where)]
        except FileNotFoundError:  # compacted meanwhile: list again
            if attempt == _READ_RETRIES - 1:
                raise
    return []  # pragma: no cover


@contextlib.contextmanager
def table_lock(p: Path) -> Iterator[None]:
    """Exclusive advisory lock on ``.<name>.lock`` beside the table (released if killed);
    waits for the other writer (each hold is short)."""
    _ensure_parent(p)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(_fs.file_lock(p.parent / f".{p.name}.lock"))
        except OSError as e:
            raise _write_error(p, e) from e
        yield


def _ensure_parent(p: Path) -> None:
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _write_error(p, e) from e


def _write_error(p: Path, e: OSError) -> GenebError:
    what = e.strerror or type(e).__name__
    hint = " (disk full: free space and rerun; finished pairs are kept)" if e.errno == 28 else ""
    return GenebError(f"cannot write results table {str(p)!r}: {what}{hint}")


def write_parquet_atomic(table: pa.Table, dest: Path, label: Path) -> None:
    """Write ``table`` to ``dest`` through a dot-file in the same folder, fsync, rename (the
    file is created with mode 0666 & ~umask, as ``geneb._fs`` makes every temp file)."""
    try:
        _fs.write_with(dest, lambda tmp: pq.write_table(table, tmp, write_page_checksum=True))
    except OSError as e:
        raise _write_error(label, e) from e


def _unlink_quiet(f: Path) -> None:
    with contextlib.suppress(OSError):
        f.unlink()


def _next_name(folder: Path) -> Path:
    """One past the largest sequence number (10 digits, more when it outgrows them)."""
    parts = list_parts(folder)
    seq = part_seq(parts[-1]) + 1 if parts else 1
    return folder / f"part-{seq:010d}-{uuid.uuid4().hex[:8]}.parquet"


def check_writable_table(p: Path) -> None:
    """Refuse a results path geneb must not write into: a folder of other files (never write
    into a foreign folder). A missing path, a single-file table or a parts folder pass; this
    is the check a plan runs before any work, and the one every write repeats."""
    if not p.is_dir():
        return
    names = os.listdir(p)
    other = sorted(n for n in names if not n.startswith(".") and not _is_part(n))
    if other and not any(_is_part(n) for n in names):
        raise GenebError(
            f"{str(p)!r} is a folder that is not a geneb results table (it holds "
            f"{', '.join(other[:3])}{' ...' if len(other) > 3 else ''}); give a new path "
            f"or an existing results table"
        )


def ensure_folder(p: Path, migrate: Callable[[Path], pa.Table]) -> None:
    """Make ``p`` a folder table (caller holds the lock): finish an interrupted migration,
    migrate a single-file table, or create an empty folder."""
    m = _migrate_dir(p)
    if not p.exists() and m.is_dir():  # killed between unlinking the file and the rename
        os.replace(m, p)
    if p.is_dir():
        check_writable_table(p)
        return
    try:
        if p.exists():
            if m.exists():  # a migration killed before the file was removed: start again
                shutil.rmtree(m)
            table = migrate(p)  # read and checked before anything changes
            m.mkdir()
            write_parquet_atomic(table, m / f"part-{0:010d}-legacy.parquet", p)
            _fs.fsync_dir(m)
            p.unlink()
            os.replace(m, p)
        else:
            p.mkdir()
        _fs.fsync_dir(p.parent)
    except OSError as e:
        raise _write_error(p, e) from e


def append_part(p: Path, table: pa.Table, migrate: Callable[[Path], pa.Table]) -> Path:
    """Add ``table`` as a new part of the folder table ``p`` (created or migrated first)."""
    with table_lock(p):
        ensure_folder(p, migrate)
        dest = _next_name(p)
        write_parquet_atomic(table, dest, p)
    return dest


def replace_all(
    p: Path, fold: Callable[[list[pa.Table]], pa.Table], read: Callable[[Path], list[pa.Table]],
    migrate: Callable[[Path], pa.Table],
) -> tuple[int, pa.Table]:
    """Fold every part of ``p`` into one with ``fold`` (under the lock); return (parts folded,
    the folded table). The folded part takes the last part's name (so later writes still
    win), then the other parts are removed; a kill in between leaves duplicates whose newest
    row is the folded one, which reads the same."""
    with table_lock(p):
        ensure_folder(p, migrate)
        parts = list_parts(p)
        folded = fold(read(p))
        if not parts:
            return 0, folded
        write_parquet_atomic(folded, parts[-1], p)
        for f in parts[:-1]:
            _unlink_quiet(f)
        _fs.remove_temps(p, ".part-")  # unfinished parts of killed writers (we hold the lock)
        for name in os.listdir(p):  # and earlier versions' ``.part-*.tmp``
            if name.startswith(".part-") and name.endswith(".tmp"):
                _unlink_quiet(p / name)
        _fs.fsync_dir(p)
    return len(parts), folded


def overwrite(p: Path, table: pa.Table, migrate: Callable[[Path], pa.Table]) -> Path:
    """Make ``table`` the whole content of ``p``: a new last part, then the older parts
    removed (a kill in between leaves the older rows superseded where cells repeat)."""
    with table_lock(p):
        ensure_folder(p, migrate)
        old = list_parts(p)
        dest = _next_name(p)
        write_parquet_atomic(table, dest, p)
        for f in old:
            _unlink_quiet(f)
        _fs.fsync_dir(p)
    return dest
