"""The one interface through which the store reads and writes entries, and what both
implementations share: the chunk layout, the metadata checks and the position digests.

Implementations: ``DirectIO`` (local folders: shard files read and written directly, same
bytes as zarr) and ``ZarrIO`` (fsspec URLs such as ``memory://`` or ``s3://``: zarr itself).
``FeatureStore`` (the facade), ``EntryWriter`` and ``verify`` only talk to this interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from geneb.errors import CorruptEntryError
from geneb.store._layout import Digest, Layout, crc32c, digest_of
from geneb.store.keys import StoreKey
from geneb.vocabulary import DEFAULT_STORAGE_DTYPE

if TYPE_CHECKING:
    import zarr

STORE_FORMAT_VERSION = 1
#: Bytes per inner chunk (the unit read for a random row and checked by crc32c).
INNER_BYTES = 64 * 1024
#: Bytes per shard file (the unit of a streaming write and of resume).
SHARD_BYTES = 8 * 1024 * 1024
ARRAYS = ("embeddings", "labels", "row")
#: Each array's dimension names (zarr v3 ``dimension_names``), so xarray opens an entry as
#: it is: ``xr.open_zarr(store, group="model/task/split")``. ``row`` is the samples'
#: coordinate (``ARRAY_ATTRS``: CF's ``coordinates``). Entries written before these were
#: recorded read the same through geneb.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "embeddings": ("sample", "feature"), "labels": ("sample",), "row": ("sample",)}
ARRAY_ATTRS: dict[str, dict[str, str]] = {
    "embeddings": {"coordinates": "row"}, "labels": {"coordinates": "row"}, "row": {}}
#: Entry attribute: the task's original label of each class id (``[name of 0, name of 1,
#: ...]``); absent in entries written before it was recorded.
LABEL_NAMES_ATTR = "label_names"
#: Entry attribute holding, per array, one ``[digest, first chunk crc]`` per chunk file.
DIGESTS_ATTR = "shard_digests"


def layout_for(n_rows: int, dim: int, itemsize: int) -> tuple[int, int]:
    """(shard rows, inner-chunk rows) for an (n, dim) matrix: ~8 MiB shards of ~64 KiB chunks."""
    rb = max(1, dim * itemsize)
    inner = max(1, INNER_BYTES // rb)
    per_shard = max(1, min(512, SHARD_BYTES // (inner * rb)))
    shard = inner * per_shard
    if n_rows > 0:
        shard = min(shard, -(-n_rows // inner) * inner)
    return shard, inner


@dataclass(frozen=True)
class ArraySpec:
    """What an array's metadata says: shape, dtype and chunking along rows."""

    shape: tuple[int, ...]
    dtype: np.dtype
    chunk_rows: int  # rows per chunk file (the shard when sharded)
    inner_rows: int | None  # rows per inner chunk; None when unsharded
    #: what the implementation needs besides (the direct path's ``Layout``, a zarr array)
    impl: Layout | zarr.Array[Any] | None = field(default=None, compare=False, repr=False)

    @property
    def n_files(self) -> int:
        return -(-self.shape[0] // max(1, self.chunk_rows)) if self.shape else 0

    def rows_of(self, i: int) -> tuple[int, int]:
        a = i * self.chunk_rows
        return a, min(a + self.chunk_rows, self.shape[0])


#: Attribute naming the labels' dtype when it is not int64 (``float64``: regression targets).
LABELS_DTYPE = "labels_dtype"


def expected(attrs: dict[str, Any], name: str) -> tuple[tuple[int, ...], str]:
    """(shape, dtype) that array ``name`` must have according to the entry's attributes."""
    n = int(attrs.get("n_rows", 0))
    if name == "embeddings":
        return (n, int(attrs.get("dim", 0))), str(attrs.get("storage_dtype", DEFAULT_STORAGE_DTYPE))
    if name == "labels" and attrs.get(LABELS_DTYPE) == "float64":
        return (n,), "float64"
    return (n,), "int64"


def check_spec(key: StoreKey, name: str, spec: ArraySpec | None, attrs: dict[str, Any],
               where: str) -> ArraySpec:
    """Refuse an array whose metadata disagrees with the entry's recorded attributes (an
    edited ``data_type`` would otherwise reinterpret the bytes as other numbers)."""
    if spec is None:
        raise CorruptEntryError(f"store entry {key}: array {name!r} is missing ({where})")
    shape, dtype = expected(attrs, name)
    if str(spec.dtype) != dtype:
        raise CorruptEntryError(
            f"store entry {key}: {name} metadata says data_type {spec.dtype}, but the entry "
            f"was written as {dtype} ({where}/{name}/zarr.json was edited or replaced)"
        )
    if tuple(spec.shape) != shape:
        raise CorruptEntryError(
            f"store entry {key}: {name} metadata says shape {list(spec.shape)}, expected "
            f"{list(shape)} from the entry's n_rows/dim ({where}/{name}/zarr.json)"
        )
    return spec


def recorded_digests(attrs: dict[str, Any], name: str, spec: ArraySpec) -> list[Digest] | None:
    """The digests recorded at completion for ``name`` (None for entries written before
    digests existed); a list of the wrong length is itself corruption."""
    d = (attrs.get(DIGESTS_ATTR) or {}).get(name)
    if d is None:
        return None
    try:
        out = [(int(a), int(b)) for a, b in d]
    except (TypeError, ValueError):
        raise CorruptEntryError(f"attribute {DIGESTS_ATTR}[{name!r}] is malformed") from None
    if len(out) != spec.n_files:
        raise CorruptEntryError(
            f"{len(out)} digests recorded for {name}, but its metadata implies "
            f"{spec.n_files} chunk files"
        )
    return out


def digest_of_rows(data: np.ndarray, inner_rows: int) -> Digest:
    """The position digest computed from a file's decoded rows (zarr path): crc32c of every
    inner chunk's raw little-endian bytes (the last zero-padded), then of those values."""
    n = len(data)
    if not n:
        return digest_of([])
    raw = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<")).reshape(n, -1)
    crcs = []
    for a in range(0, n, inner_rows):
        block = raw[a : a + inner_rows]
        c = crc32c(block.data.cast("B"))
        short = inner_rows - len(block)
        if short:
            c = crc32c(bytes(short * raw.shape[1] * raw.itemsize), c)
        crcs.append(c)
    return digest_of(crcs)


class EntryIO(Protocol):
    """Entry storage: metadata documents, arrays and chunk files of one store."""

    #: where the store is, for messages (path or URL)
    location: str
    #: True when a chunk never written reads as the fill value instead of failing (zarr):
    #: resume then trusts the recorded progress instead of scanning every file
    missing_reads_as_fill: bool

    def keys(self, complete_only: bool) -> list[StoreKey]:
        """Every readable entry, sorted (entries with broken metadata are left to verify)."""

    def attrs(self, key: StoreKey) -> dict[str, Any] | None:
        """Entry attributes; None when absent or a writer's placeholder."""

    def update_attrs(self, key: StoreKey, updates: dict[str, Any], *, replace: bool = False
                     ) -> None:
        """One atomic metadata write."""

    def spec(self, key: StoreKey, name: str) -> ArraySpec | None:
        """An array's metadata; None when absent; CorruptEntryError when unreadable."""

    def read(self, key: StoreKey, name: str, spec: ArraySpec,
             expect: Sequence[Digest] | None) -> np.ndarray:
        """The whole array, checksums and (when given) position digests checked."""

    def read_rows(self, key: StoreKey, name: str, spec: ArraySpec, pos: np.ndarray,
                  expect: Sequence[Digest] | None) -> np.ndarray:
        """Rows at ``pos`` (any order, repeats allowed), reading only the chunks holding them."""

    def verify_file(self, key: StoreKey, name: str, spec: ArraySpec, i: int,
                    scratch: np.ndarray | None, expect: Digest | None
                    ) -> tuple[np.ndarray, Digest]:
        """Read and check chunk file ``i``: (its rows, a view of ``scratch`` when given;
        its digest)."""

    def create(self, key: StoreKey, attrs: dict[str, Any], emb: ArraySpec,
               labels: np.ndarray, rows: np.ndarray) -> dict[str, list[Digest]]:
        """(Re)create the entry's arrays (attributes first); returns the labels/row digests."""

    def write_file(self, key: StoreKey, spec: ArraySpec, i: int,
                   pieces: Sequence[np.ndarray]) -> Digest:
        """Write embeddings chunk file ``i`` (exactly its rows); returns its digest."""

    def check_written(self, key: StoreKey, spec: ArraySpec) -> None:
        """Cheap structural check of every embeddings file after writing."""

    def prepare_resume(self, key: StoreKey) -> None:
        """Clean up what a killed writer left (temp files) before resuming."""

    def delete(self, key: StoreKey) -> None:
        """Remove an entry (the caller holds its lock)."""

    def lock(self, key: StoreKey) -> AbstractContextManager[None]:
        """The entry's exclusive write lock."""

    def scan(self) -> list[tuple[str, str]]:
        """Store-level problems (path, what): folders with missing or broken metadata,
        symlinks. Empty for implementations that cannot see them."""
