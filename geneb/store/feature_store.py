"""The Zarr v3 feature store: one group per (model, task, split), written all-or-nothing.

Layout (docs/store.md; readable with plain zarr, no geneb import needed)::

    <root>/zarr.json                       attrs: {"geneb_store": 1}
    <root>/<model>/                        group attrs: model_id (original id)
    <root>/<model>/<task>/                 group attrs: task_id (original id)
    <root>/<model>/<task>/<split>/         group attrs: complete, rows_written, n_rows, dim,
                                           model_id, task_id, split, storage_dtype,
                                           provenance, shard_digests, ...
        embeddings   (n, d) float32|float16: shard files c.<i>.0 of ~8 MiB along rows, each
                     holding inner chunks of ~64 KiB (whole rows) with a crc32c per inner chunk
        labels       (n,)   int64 class ids (float64 targets of a regression task:
                            attribute labels_dtype), one chunk, crc32c
        row          (n,)   int64, index of each row in the task's split file, crc32c

This module is the facade: which entries exist, what writing one would do (``plan``), reads
with every check, the writer and verification. Storage goes through one ``EntryIO``:
``DirectIO`` for local folders, ``ZarrIO`` for fsspec URLs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from geneb.errors import CorruptEntryError, EntryIncompleteError, StoreError
from geneb.store.entry_io import (  # noqa: F401 - re-exported for callers
    ARRAYS,
    DIMENSIONS,
    INNER_BYTES,
    LABEL_NAMES_ATTR,
    SHARD_BYTES,
    STORE_FORMAT_VERSION,
    ArraySpec,
    EntryIO,
    check_spec,
    layout_for,
    recorded_digests,
)
from geneb.store.keys import StoreKey, unknown_store_key
from geneb.store.provenance import Provenance
from geneb.store.writer import PROGRESS_EVERY_S, EntryWriter, WritePlan  # noqa: F401 - re-exported
from geneb.vocabulary import DEFAULT_STORAGE_DTYPE

if TYPE_CHECKING:
    import xarray  # optional (the ``xarray`` extra)
    import zarr  # imported when first needed: ~0.18 s that reading a local store never pays



@dataclass(frozen=True, eq=False)
class StoreEntry:
    """A store entry (or some of its rows) read into memory (``FeatureStore.get``,
    ``get_rows``, ``geneb.read_entry``).

    Attributes
    ----------
    key : StoreKey
        The entry's (model, task, split).
    embeddings : numpy.ndarray
        ``(n_rows, dim)``, in the storage dtype (float32 or float16).
    labels : numpy.ndarray
        ``(n_rows,)``: class ids 0..K-1, or the targets of a regression task.
    rows : numpy.ndarray
        ``(n_rows,)``: each row's index in the task's split file.
    provenance : Provenance
        How the entry was made (model, revision, pooling, task fingerprint, ...).
    attrs : dict
        Every attribute of the entry as stored.
    """

    key: StoreKey
    embeddings: np.ndarray
    labels: np.ndarray
    rows: np.ndarray
    provenance: Provenance
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """Identifies exactly which embeddings these are (for results rows)."""
        return str(self.attrs.get("entry_fingerprint", ""))

    @property
    def label_names(self) -> tuple[str, ...] | None:
        """The task's original label of each class id (``labels`` hold ids 0..K-1): class
        ``i`` is ``label_names[i]``. None for entries written before the map was recorded."""
        names = self.attrs.get(LABEL_NAMES_ATTR)
        return tuple(str(x) for x in names) if isinstance(names, list) else None

    def to_xarray(self) -> xarray.Dataset:
        """An ``xarray.Dataset`` view of the entry.

        Returns
        -------
        xarray.Dataset
            ``embeddings`` (sample x feature) and ``labels`` (sample), ``row`` as a coordinate,
            the key (and label names) as attributes.
        """
        try:
            import xarray as xr
        except ImportError as e:
            raise StoreError("xarray is not installed: pip install 'geneb[xarray]'") from e
        return xr.Dataset(
            {
                "embeddings": (DIMENSIONS["embeddings"], self.embeddings),
                "labels": (DIMENSIONS["labels"], self.labels),
            },
            coords={"row": (DIMENSIONS["row"], self.rows)},
            attrs={"model": self.key.model, "task": self.key.task, "split": self.key.split}
            | ({"label_names": list(self.label_names)} if self.label_names is not None else {}),
        )


class FeatureStore:
    """A feature store at a local path or fsspec URL. ``mode='r'`` never writes.

    A local path must be a new or empty folder, or an existing store: geneb never creates a
    store inside a folder that holds other things.

    Parameters
    ----------
    path : str or os.PathLike
        The store's folder, or an fsspec URL (``memory://...``, ``s3://...``; ``file://`` is
        opened as a local path).
    mode : {"r", "a"}
        ``"r"`` (default) reads only; ``"a"`` may create the store and write entries.
    """

    def __init__(self, path: str | os.PathLike[str], mode: Literal["r", "a"] = "r") -> None:
        self.path = str(path)
        self.mode = mode
        if mode not in ("r", "a"):
            raise StoreError(f"mode must be 'r' or 'a', got {mode!r}")
        # file:// URLs are opened as local paths (fast direct I/O, locks)
        local = "://" not in self.path or self.path.startswith("file://")
        self._zpath = self.path.removeprefix("file://") if local else self.path
        self._root: zarr.Group | None = None
        self._io: EntryIO
        if local:
            from geneb.store.direct_io import DirectIO, open_local

            self._dir: Path | None = Path(self._zpath)
            open_local(self._dir, mode)
            self._io = DirectIO(self._dir)
        else:
            from geneb.store.zarr_io import ZarrIO

            self._dir = None
            zio = ZarrIO(self._zpath, mode)
            self._io, self._root = zio, zio.root

    @property
    def root(self) -> zarr.Group:
        """The store's root zarr group (opened on first use for a local store)."""
        if self._root is None:
            import zarr

            try:
                self._root = zarr.open_group(self._zpath, mode="r" if self.mode == "r" else "a")
            except Exception as e:  # zarr raises several types here
                raise StoreError(f"{self.path!r} is not a geneb feature store: {e}") from e
        return self._root

    # ---------------------------------------------------------------- listing
    def keys(self, complete_only: bool = False) -> list[StoreKey]:
        """Every entry of the store, sorted.

        Parameters
        ----------
        complete_only : bool
            Only the complete (verified) entries (default False: incomplete ones too).

        Returns
        -------
        list of StoreKey
            The entries; those whose metadata is broken are not listed (``verify`` reports
            them).
        """
        return self._io.keys(complete_only)

    def status(self, key: StoreKey) -> Literal["missing", "incomplete", "complete"]:
        """Whether an entry exists and is complete.

        Parameters
        ----------
        key : StoreKey
            The entry.

        Returns
        -------
        {"missing", "incomplete", "complete"}
            ``incomplete``: written in part (an interrupted extraction; resumable).
        """
        a = self._io.attrs(key)
        if a is None:
            return "missing"
        return "complete" if a.get("complete") is True else "incomplete"

    def entry_attrs(self, key: StoreKey) -> dict[str, Any] | None:
        """The attributes of an entry.

        Parameters
        ----------
        key : StoreKey
            The entry.

        Returns
        -------
        dict or None
            Every attribute as stored; None when there is no such entry.
        """
        return self._io.attrs(key)

    def provenance(self, key: StoreKey) -> Provenance | None:
        """How an entry was made, without reading its arrays.

        Parameters
        ----------
        key : StoreKey
            The entry.

        Returns
        -------
        Provenance or None
            None when there is no such entry (or it records no provenance).
        """
        a = self._io.attrs(key)
        if a is None or "provenance" not in a:
            return None
        return Provenance.from_dict(dict(a["provenance"]))

    def info(self, key: StoreKey) -> dict[str, Any]:
        """What ``geneb store info`` shows of an entry; no chunk is read.

        Parameters
        ----------
        key : StoreKey
            The entry (an unknown key raises, naming the nearest ones).

        Returns
        -------
        dict
            Status, shape, dtype, chunking and every attribute (provenance included). Array
            metadata that is unreadable or disagrees with the attributes gives status
            ``"corrupt"`` and a ``problem`` (``verify`` checks the data).
        """
        attrs = self._io.attrs(key)
        if attrs is None:
            raise unknown_store_key(str(key), (str(k) for k in self.keys()), self.path)
        out: dict[str, Any] = {"key": str(key), "path": key.path, "status": self.status(key)}
        spec = None
        try:
            spec = self._io.spec(key, "embeddings")
            for name in ARRAYS:
                self._spec(key, name, attrs)
        except CorruptEntryError as e:
            out |= {"status": "corrupt", "problem": str(e)}
        if spec is not None:
            out |= {
                "shape": list(spec.shape),
                "dtype": str(spec.dtype),
                "shards": [spec.chunk_rows, *spec.shape[1:]] if spec.inner_rows else None,
                "chunks": [spec.inner_rows or spec.chunk_rows, *spec.shape[1:]],
            }
        return attrs | out

    # ---------------------------------------------------------------- reading
    def _entry_attrs(self, key: StoreKey, allow_incomplete: bool) -> dict[str, Any]:
        attrs = self._io.attrs(key)
        if attrs is None:
            raise unknown_store_key(str(key), (str(k) for k in self.keys()), self.path)
        if attrs.get("complete") is not True and not allow_incomplete:
            raise EntryIncompleteError(
                f"store entry {key} in {self.path} is incomplete "
                f"({attrs.get('rows_written', 0)} of {attrs.get('n_rows', '?')} rows written, "
                "not verified): rerun the extraction to finish it"
            )
        return attrs

    def _spec(self, key: StoreKey, name: str, attrs: dict[str, Any]) -> ArraySpec:
        return check_spec(key, name, self._io.spec(key, name), attrs, f"{self.path}/{key.path}")

    def get(
        self, model: str, task: str, split: str, *, allow_incomplete: bool = False
    ) -> StoreEntry:
        """The whole entry, every chunk checksum and position digest verified.

        Each array's metadata is checked against the entry's attributes first.

        Parameters
        ----------
        model, task, split : str
            The entry: the model's store key, the task name and the split.
        allow_incomplete : bool
            Read an incomplete entry too: only the rows recorded as written are returned
            (default False: an incomplete entry raises ``EntryIncompleteError``).

        Returns
        -------
        StoreEntry
            Embeddings, labels, rows, provenance and attributes.
        """
        key = StoreKey(model, task, split)
        attrs = self._entry_attrs(key, allow_incomplete)
        complete = attrs.get("complete") is True
        arrays = {name: self._read_array(key, name, attrs, complete) for name in ARRAYS}
        return StoreEntry(key=key, embeddings=arrays["embeddings"], labels=arrays["labels"],
                          rows=arrays["row"],
                          provenance=Provenance.from_dict(dict(attrs["provenance"])), attrs=attrs)

    def _read_array(self, key: StoreKey, name: str, attrs: dict[str, Any], complete: bool
                    ) -> np.ndarray:
        spec = self._spec(key, name, attrs)
        if complete:
            return self._io.read(key, name, spec, recorded_digests(attrs, name, spec))
        # an incomplete entry (allow_incomplete): the rows recorded as written, files checked
        n = min(int(attrs.get("rows_written", 0)), spec.shape[0])
        out = np.empty((n, *spec.shape[1:]), dtype=spec.dtype)
        for i in range(spec.n_files):
            a, b = spec.rows_of(i)
            if a >= n:
                break
            block, _ = self._io.verify_file(key, name, spec, i, None, None)
            out[a:min(b, n)] = block[: min(b, n) - a]
        return out

    def labels_rows(self, model: str, task: str, split: str) -> tuple[np.ndarray, np.ndarray, int]:
        """The labels and rows of a complete entry, without reading its embeddings.

        What planning a probe run needs; checksums verified.

        Parameters
        ----------
        model, task, split : str
            The entry: the model's store key, the task name and the split.

        Returns
        -------
        tuple of (numpy.ndarray, numpy.ndarray, int)
            The labels, the split-file row indices and the embedding width.
        """
        key = StoreKey(model, task, split)
        attrs = self._entry_attrs(key, allow_incomplete=False)
        out = {name: self._read_array(key, name, attrs, True) for name in ("labels", "row")}
        dim = int(self._spec(key, "embeddings", attrs).shape[1])
        return out["labels"], out["row"], dim

    def get_rows(
        self, model: str, task: str, split: str, positions: Sequence[int] | np.ndarray
    ) -> StoreEntry:
        """Some rows of a complete entry, in the order given, reading only their chunks.

        Reads only the ~64 KiB inner chunks holding the rows (a k-shot sample of a large
        entry: 20 random rows in a few ms), and ties each file touched to its position by its
        first chunk's recorded checksum.

        Parameters
        ----------
        model, task, split : str
            The entry: the model's store key, the task name and the split.
        positions : sequence of int or numpy.ndarray
            Row positions 0..n-1 in the entry (not split-file row ids); repeats allowed.

        Returns
        -------
        StoreEntry
            Those rows' embeddings, labels and file rows, with the entry's provenance.
        """
        key = StoreKey(model, task, split)
        attrs = self._entry_attrs(key, False)
        n = int(attrs["n_rows"])
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        if len(pos) and (pos.min() < 0 or pos.max() >= n):
            bad = int(pos[(pos < 0) | (pos >= n)][0])
            raise StoreError(f"row position {bad} is outside store entry {key} (0..{n - 1})")
        arrays: dict[str, np.ndarray] = {}
        for name in ARRAYS:
            spec = self._spec(key, name, attrs)
            arrays[name] = self._io.read_rows(key, name, spec, pos,
                                              recorded_digests(attrs, name, spec))
        return StoreEntry(key=key, embeddings=arrays["embeddings"], labels=arrays["labels"],
                          rows=arrays["row"],
                          provenance=Provenance.from_dict(dict(attrs["provenance"])), attrs=attrs)

    # ---------------------------------------------------------------- writing
    def plan(self, key: StoreKey, provenance: Provenance, *, overwrite: bool = False) -> WritePlan:
        """Decide write/skip/resume/overwrite/refuse for ``key`` without changing anything.

        Parameters
        ----------
        key : StoreKey
            The entry to write.
        provenance : Provenance
            What the new entry would be made from.
        overwrite : bool
            Replace a stale, complete or incomplete entry (default False).

        Returns
        -------
        WritePlan
            ``action`` (write, skip, resume, overwrite or refuse), ``reason`` and, for a
            resume, ``start_row``.

        Notes
        -----
        Everything that changes the stored numbers is compared (the provenance identity,
        storage dtype included): a difference is a stale entry, refused unless ``overwrite``.
        ``start_row`` of a resume is the attribute ``rows_written``; the writer re-verifies the
        shards on disk and may start later (``EntryWriter.start_row`` is authoritative).
        """
        try:
            a = self._io.attrs(key)
        except CorruptEntryError as e:
            if overwrite:
                return WritePlan(key, "overwrite", f"entry with broken metadata replaced ({e})")
            return WritePlan(key, "refuse", f"entry metadata is broken ({e}); pass "
                                            "overwrite=True to replace the entry")
        if a is None:
            return WritePlan(key, "write", "no entry yet")
        old = Provenance.from_dict(dict(a["provenance"])) if "provenance" in a else None
        diffs = old.differences(provenance) if old is not None else {"provenance": (None, "new")}
        if diffs:
            what = ", ".join(f"{k}: stored {a!r} != requested {b!r}" for k, (a, b) in diffs.items())
            if overwrite:
                return WritePlan(key, "overwrite", f"stale entry replaced ({what})")
            return WritePlan(key, "refuse", f"stale entry ({what}); pass overwrite=True to replace")
        if a.get("complete") is True:
            if overwrite:
                return WritePlan(key, "overwrite", "complete entry replaced (overwrite=True)")
            return WritePlan(key, "skip", "complete entry with the same provenance")
        done = int(a.get("rows_written", 0))
        if overwrite:
            return WritePlan(key, "overwrite", "incomplete entry replaced (overwrite=True)")
        return WritePlan(key, "resume", f"resuming after {done} verified rows", start_row=done)

    def writer(
        self,
        key: StoreKey,
        *,
        provenance: Provenance,
        labels: np.ndarray,
        rows: np.ndarray,
        dim: int,
        storage_dtype: str = DEFAULT_STORAGE_DTYPE,
        overwrite: bool = False,
        verify: Literal["files", "full"] = "files",
        label_names: Sequence[str] | None = None,
    ) -> EntryWriter:
        """Open a streaming writer (use as a context manager). Raises if the plan is 'refuse'.

        Parameters
        ----------
        key : StoreKey
            The entry to write.
        provenance : Provenance
            How the embeddings are made (the stored copy records ``storage_dtype``).
        labels : numpy.ndarray
            One label per row (class ids 0..K-1, or regression targets).
        rows : numpy.ndarray
            Each row's index in the task's split file.
        dim : int
            The embedding width.
        storage_dtype : str
            ``float32`` (default) or ``float16`` in the store.
        overwrite : bool
            Replace a stale, complete or incomplete entry (default False).
        verify : {"files", "full"}
            What is checked before ``complete`` is set: ``"files"`` (default: every shard
            file present, exact size, index checksum; data checksums come from the rows in
            memory) or ``"full"`` (also re-read every byte and check every chunk checksum,
            about a full read's time more).
        label_names : sequence of str or None
            ``label_names[i]`` is the task's original label of class id ``i`` (attribute
            ``label_names``; :attr:`StoreEntry.label_names` and ``store export`` use it).

        Returns
        -------
        EntryWriter
            ``append(block)`` the embeddings in row order; the entry is complete on a clean
            exit from the ``with`` block.
        """
        self._require_writable()
        if verify not in ("files", "full"):
            raise StoreError(f"verify must be 'files' or 'full', got {verify!r}")
        w = EntryWriter(self, key, provenance, labels, rows, dim, storage_dtype, overwrite,
                        label_names)
        w.verify_mode = verify
        return w

    def _require_writable(self) -> None:
        if self.mode != "a":
            raise StoreError(f"store {self.path} is open read-only; open it with mode='a' to write")

    def delete(self, key: StoreKey) -> None:
        """Remove an entry (under its lock); nothing happens when there is none.

        Parameters
        ----------
        key : StoreKey
            The entry.
        """
        self._require_writable()
        try:
            if self._io.attrs(key) is None:
                return
        except CorruptEntryError:
            pass  # broken metadata: deleting the entry is the way out
        with self.lock(key):
            self._io.delete(key)

    @contextmanager
    def lock(self, key: StoreKey) -> Iterator[None]:
        """Exclusive per-key lock; EntryLockedError at once if another writer holds it.

        Parameters
        ----------
        key : StoreKey
            The entry.

        Yields
        ------
        None
            While the lock is held.
        """
        self._require_writable()
        with self._io.lock(key):
            yield

    # ---------------------------------------------------------------- verification
    def scan(self) -> list[tuple[str, str]]:
        """Cheap store-level check: no chunk is read.

        Returns
        -------
        list of (str, str)
            Folders whose metadata is missing or broken (their entries are not listed) and
            symlinks, as (path in the store, what); empty for fsspec stores.
        """
        return self._io.scan()

    def verify(self, keys: Sequence[StoreKey] | None = None) -> list[tuple[StoreKey | str, str]]:
        """Check entries by reading every chunk.

        Parameters
        ----------
        keys : sequence of StoreKey or None
            The entries to check (default None: every entry, and also every folder with
            missing or broken metadata and every symlink).

        Returns
        -------
        list of (StoreKey or str, str)
            Problems found (empty: all good): missing or incomplete entries, metadata that
            disagrees with an entry's attributes, checksum failures, files not at their
            recorded position, non-finite values; a folder or symlink by its path in the store.
        """
        from geneb.store.verify import verify_store

        return verify_store(self._io, keys)
