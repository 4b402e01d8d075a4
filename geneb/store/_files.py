"""Safe file operations for local stores: never through a symlink, atomic, umask honoured.

Why: a store is often shared or copied around, and one of its files or folders replaced by a
symlink must never make geneb overwrite (or delete) what the link points to. So every write
goes through :mod:`geneb._fs` (a fresh temp file in the destination folder, ``O_NOFOLLOW``,
mode 0o666 minus the umask, renamed over the target: a rename replaces a symlink itself,
never its target). Folders are created one component at a time and a component that
is a symlink is refused. Reads open with ``O_NOFOLLOW``. Any ``OSError`` while writing becomes
a one-line ``StoreError`` naming the file ("no space left on device while writing ...").
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from geneb import _fs
from geneb.errors import CorruptEntryError, StoreError


def write_error(path: Path | str, e: OSError) -> StoreError:
    """The one-line error for a failed write (disk full, read-only, permissions)."""
    if e.errno == errno.ENOSPC:
        return StoreError(f"no space left on device while writing {path}; free some space "
                          "and rerun (the entry is left incomplete and resumes)")
    if e.errno == errno.EDQUOT:
        return StoreError(f"disk quota exceeded while writing {path}; rerun after freeing space")
    return StoreError(f"cannot write {path}: {e.strerror or e}")


def symlink_error(path: Path | str) -> StoreError:
    return StoreError(
        f"{path} is a symlink; the store never writes through symlinks (replace it with the "
        "real file or folder, or remove it, then rerun)"
    )


def ensure_dir(root: Path, rel: str) -> Path:
    """Create ``root/rel`` one component at a time (mode 0o777 minus the umask); refuse a
    component that is a symlink or not a folder."""
    d = root
    for part in [p for p in rel.split("/") if p]:
        d = d / part
        try:
            os.mkdir(d)
            continue
        except FileExistsError:
            pass
        except OSError as e:
            raise write_error(d, e) from e
        if os.path.islink(d):
            raise symlink_error(d)
        if not os.path.isdir(d):
            raise StoreError(f"{d} is a file; expected a folder of the store")
    return d


def check_no_symlink(root: Path, rel: str) -> None:
    """Refuse when any existing component of ``root/rel`` is a symlink (before writing)."""
    d = root
    for part in [p for p in rel.split("/") if p]:
        d = d / part
        if os.path.islink(d):
            raise symlink_error(d)


def atomic_write(path: Path, data: bytes, *, exclusive: bool = False) -> bool:
    """Write ``data`` atomically, never through a symlink (:func:`geneb._fs.write_bytes`;
    ``exclusive``: only if ``path`` is absent, returns whether this call created it); an
    ``OSError`` becomes the store's one-line ``StoreError``."""
    try:
        return _fs.write_bytes(path, data, exclusive=exclusive)
    except OSError as e:
        raise write_error(path, e) from e


def write_buffers(path: Path, bufs: Sequence[bytes | memoryview], total: int,
                  preallocate: Callable[[int, int], None] | None = None) -> None:
    """A data file from many buffers (one ``writev``), atomically (temp + rename)."""
    try:
        _fs.write_buffers(path, bufs, total, preallocate=preallocate)
    except OSError as e:
        raise write_error(path, e) from e


def open_read(path: Path) -> int:
    """A read-only fd that refuses a symlink (``CorruptEntryError``); FileNotFoundError as is."""
    try:
        return os.open(path, os.O_RDONLY | _fs.NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise CorruptEntryError(
                f"{path} is a symlink; the store never follows links (replace it with the "
                "real file, or remove it and rerun the extraction)"
            ) from None
        raise


# ------------------------------------------------------------------------------- metadata
# Zarr v3 metadata documents, written directly for local stores (each zarr API call costs
# ~2 ms of event-loop round trips). They are exactly what zarr-python writes for the same
# arrays; the tests read them back with zarr.
_CRC_CODECS: list[dict[str, Any]] = [
    {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]


def group_meta(attrs: dict[str, Any]) -> dict[str, Any]:
    return {"attributes": attrs, "zarr_format": 3, "consolidated_metadata": None,
            "node_type": "group"}


def array_meta(shape: tuple[int, ...], dtype: str, chunk_rows: int, inner_rows: int | None,
               dims: Sequence[str], attrs: dict[str, Any] | None = None) -> dict[str, Any]:
    rest = list(shape[1:])
    if inner_rows is None:
        codecs: list[dict[str, Any]] = _CRC_CODECS
    else:
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [inner_rows, *rest], "codecs": _CRC_CODECS,
            "index_codecs": _CRC_CODECS, "index_location": "end"}}]
    return {
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk_rows, *rest]}},
        # "." keeps all chunk files of an array in one folder (no folder per shard)
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
        "fill_value": 0.0 if np.dtype(dtype).kind == "f" else 0,
        "codecs": codecs,
        "attributes": dict(attrs or {}),
        "dimension_names": list(dims),
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }


def write_json(path: Path, obj: dict[str, Any], *, exclusive: bool = False) -> bool:
    """Atomically write a JSON document (temp file + rename; never through a symlink).
    ``exclusive``: only if ``path`` does not exist yet (hard link, so racing creators never
    clobber each other); returns whether this call created it."""
    if exclusive and os.path.lexists(path):
        return False
    text = json.dumps(obj, indent=2, allow_nan=False, default=_json_default).encode()
    return atomic_write(path, text, exclusive=exclusive)


def _json_default(o: object) -> object:
    if isinstance(o, np.generic):  # numpy scalars in provenance: plain numbers
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise StoreError(f"cannot store {type(o).__name__} {o!r} in zarr metadata (JSON)")


def read_json(path: Path) -> dict[str, Any] | None:
    """A metadata document (a JSON object), None when absent; ``CorruptEntryError`` naming
    the file when it is unreadable, not JSON, not an object, or a symlink."""
    try:
        fd = open_read(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CorruptEntryError(f"unreadable metadata {path}: {e.strerror or e}") from e
    try:
        with os.fdopen(fd, "rb") as f:
            raw = f.read()
        obj = json.loads(raw)
    except (OSError, ValueError) as e:
        raise CorruptEntryError(f"unreadable metadata {path}: not valid JSON ({e})") from e
    if not isinstance(obj, dict):
        raise CorruptEntryError(f"unreadable metadata {path}: expected a JSON object, got "
                                f"{type(obj).__name__}")
    return obj
