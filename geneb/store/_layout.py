"""The chunk layout of one row-chunked array on local disk, parsed from its Zarr v3 metadata,
and the position digest of a chunk file (shared by the direct reader and writer).

Only the two layouts geneb creates qualify for the direct path (``layout_from_meta`` returns
None for anything else, which zarr then reads): unsharded ``[bytes(little), crc32c]`` and
``sharding_indexed`` with inner and index codecs ``[bytes(little), crc32c]``, index at the end.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import crc32c as _crc
import numpy as np

EMPTY = np.uint64(2**64 - 1)
#: (digest, crc of the first inner chunk) of one chunk file: ties the file to its position.
#: digest = crc32c of the little-endian crc32c values of the file's inner chunks, in order
#: (each over the chunk's raw bytes, the last zero-padded); see docs/store.md.
Digest = tuple[int, int]
_LITTLE = sys.byteorder == "little"


#: crc32c(data, value=0) -> int: the checksum Zarr's crc32c codec stores (hardware-accelerated,
#: releases the GIL on large buffers so shard threads run in parallel)
crc32c = _crc.crc32c


def _bytes_codec_ok(c: dict[str, Any]) -> bool:
    if c.get("name") != "bytes":
        return False
    endian: str = (c.get("configuration") or {}).get("endian", "little")
    return endian == "little"


def _plain_codecs_ok(codecs: Sequence[dict[str, Any]]) -> bool:
    return (
        len(codecs) == 2 and _bytes_codec_ok(codecs[0]) and codecs[1].get("name") == "crc32c"
    )


@dataclass(frozen=True)
class Layout:
    """What the direct path needs to know about one row-chunked array on local disk."""

    dir: Path
    shape: tuple[int, ...]
    dtype: np.dtype
    chunk_rows: int  # rows per file (the shard when sharded)
    inner_rows: int | None  # rows per inner chunk; None when unsharded
    sep: str = "."  # chunk key separator: c.<i>.0 (one folder for all files) or c/<i>/0

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.shape[1:], dtype=np.int64)) * self.dtype.itemsize

    @property
    def n_rows(self) -> int:
        return self.shape[0]

    @property
    def n_files(self) -> int:
        return -(-self.n_rows // self.chunk_rows)

    @property
    def inner(self) -> int:
        """Rows per checksummed unit."""
        return self.inner_rows or self.chunk_rows

    @property
    def n_inner(self) -> int:
        return self.chunk_rows // self.inner

    def file(self, i: int) -> Path:
        return self.dir / self.sep.join(["c", str(i), *(["0"] * (len(self.shape) - 1))])

    def rows_of(self, i: int) -> tuple[int, int]:
        a = i * self.chunk_rows
        return a, min(a + self.chunk_rows, self.n_rows)


def layout_from_meta(array_dir: Path, meta: dict[str, Any]) -> Layout | None:
    """The direct-path layout described by an array's metadata; None when it does not apply
    (other codecs, chunking or a big-endian host: zarr reads those)."""
    if not _LITTLE:
        return None
    try:
        if meta.get("node_type") != "array" or meta.get("zarr_format") != 3:
            return None
        if meta.get("storage_transformers"):
            return None
        shape = tuple(int(s) for s in meta["shape"])
        grid = meta["chunk_grid"]
        cke = meta["chunk_key_encoding"]
        if grid["name"] != "regular" or cke["name"] != "default":
            return None
        sep = (cke.get("configuration") or {}).get("separator", "/")
        if sep not in ("/", "."):
            return None
        chunk = tuple(int(s) for s in grid["configuration"]["chunk_shape"])
        if not shape or chunk[1:] != shape[1:] or meta["fill_value"] not in (0, 0.0):
            return None
        dtype = np.dtype(meta["data_type"])
        codecs = meta["codecs"]
        if _plain_codecs_ok(codecs):
            return Layout(array_dir, shape, dtype, chunk[0], None, sep)
        if len(codecs) != 1 or codecs[0].get("name") != "sharding_indexed":
            return None
        cfg = codecs[0]["configuration"]
        inner = tuple(int(s) for s in cfg["chunk_shape"])
        if (
            inner[1:] != shape[1:]
            or chunk[0] % inner[0]
            or not _plain_codecs_ok(cfg["codecs"])
            or not _plain_codecs_ok(cfg.get("index_codecs", []))
            or cfg.get("index_location", "end") != "end"
        ):
            return None
        return Layout(array_dir, shape, dtype, chunk[0], inner[0], sep)
    except (KeyError, TypeError, ValueError):
        return None


def digest_of(crcs: Sequence[int]) -> Digest:
    """The position digest of a file from its inner chunks' crc32c values (in order)."""
    if not len(crcs):
        return (0, 0)
    return crc32c(np.asarray(crcs, dtype="<u4").tobytes()), int(crcs[0])


def as_bytes(a: np.ndarray) -> memoryview:
    """A flat byte view of a C-contiguous array (no copy)."""
    return a.data.cast("B")
