"""The Zarr v3 feature store: one group per (model, task, split), written all-or-nothing.

Layout (docs/store.md; readable with plain zarr, no geneb import needed)::

    <root>/zarr.json                       attrs: {"geneb_store": 1}
    <root>/<model>/                        group attrs: model_id (original id)
    <root>/<model>/<task>/                 group attrs: task_id (original id)
    <root>/<model>/<task>/<split>/         group attrs: complete, rows_written, n_rows, dim,
                                           model_id, task_id, split, provenance, ...
        embeddings   (n, d) float32|float16: shard files c.<i>.0 of ~8 MiB along rows, each
                     holding inner chunks of ~64 KiB (whole rows) with a crc32c per inner chunk
        labels       (n,)   int64, one chunk, crc32c
        row          (n,)   int64, index of each row in the task's split file, crc32c

Local stores are read and written by ``geneb.store._direct`` (same bytes, no per-chunk zarr
overhead); fsspec URLs go through zarr itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from geneb.errors import (
    CorruptEntryError,
    EntryIncompleteError,
    StaleEntryError,
    StoreError,
    unknown_name,
)
from geneb.store import _direct
from geneb.store.keys import StoreKey
from geneb.store.locking import entry_lock
from geneb.store.provenance import Provenance

if TYPE_CHECKING:  # zarr is imported when first needed: ~0.18 s that reading a local
    import zarr  # store (``geneb probe``) never pays; writing and fsspec URLs use it

STORE_FORMAT_VERSION = 1
#: Bytes per inner chunk (the unit read for a random row and checked by crc32c).
INNER_BYTES = 64 * 1024
#: Bytes per shard file (the unit of a streaming write and of resume).
SHARD_BYTES = 8 * 1024 * 1024
#: At most this often (seconds) the ``rows_written`` attribute is rewritten while streaming;
#: resume does not depend on it (shards on disk are re-verified), it only informs ``plan``.
PROGRESS_EVERY_S = 2.0
ARRAYS = ("embeddings", "labels", "row")

Action = Literal["write", "skip", "resume", "overwrite", "refuse"]


@dataclass(frozen=True)
class WritePlan:
    """What writing ``key`` would do, decided before any work (pure: reads attributes only)."""

    key: StoreKey
    action: Action
    reason: str
    start_row: int = 0


@dataclass(frozen=True, eq=False)
class StoreEntry:
    """An entry (or some of its rows) read into memory."""

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

    def to_xarray(self):
        """An ``xarray.Dataset`` view (dims sample x feature; ``row`` as a coordinate)."""
        try:
            import xarray as xr
        except ImportError as e:
            raise StoreError("xarray is not installed: pip install 'geneb[xarray]'") from e
        return xr.Dataset(
            {
                "embeddings": (("sample", "feature"), self.embeddings),
                "labels": (("sample",), self.labels),
            },
            coords={"row": (("sample",), self.rows)},
            attrs={"model": self.key.model, "task": self.key.task, "split": self.key.split},
        )


def layout_for(n_rows: int, dim: int, itemsize: int) -> tuple[int, int]:
    """(shard rows, inner-chunk rows) for an (n, dim) matrix: ~8 MiB shards of ~64 KiB chunks."""
    rb = max(1, dim * itemsize)
    inner = max(1, INNER_BYTES // rb)
    per_shard = max(1, min(512, SHARD_BYTES // (inner * rb)))
    shard = inner * per_shard
    if n_rows > 0:
        shard = min(shard, -(-n_rows // inner) * inner)
    return shard, inner


def _zarr_read(arr: zarr.Array, what: str, sel: Any = Ellipsis) -> np.ndarray:
    try:
        return np.asarray(arr[sel])
    except Exception as e:  # zarr raises ValueError for a crc mismatch, others for I/O
        raise CorruptEntryError(f"{what} cannot be read: {type(e).__name__}: {e}") from e


class FeatureStore:
    """A feature store at a local path or fsspec URL. ``mode='r'`` never writes."""

    def __init__(self, path: str | os.PathLike[str], mode: Literal["r", "a"] = "r") -> None:
        self.path = str(path)
        self.mode = mode
        if mode not in ("r", "a"):
            raise StoreError(f"mode must be 'r' or 'a', got {mode!r}")
        # file:// URLs are opened as local paths (zarr's LocalStore, fast direct I/O, locks)
        local = "://" not in self.path or self.path.startswith("file://")
        zpath = self.path.removeprefix("file://") if local else self.path
        self._zpath = zpath
        self._root: zarr.Group | None = None
        if mode == "r":
            if local and not Path(zpath).exists():
                raise StoreError(f"no feature store at {self.path!r} (the path does not exist)")
            if local and _local_v3_group(Path(zpath)):
                # read-only local store: everything reads through ``_direct``; zarr itself is
                # opened (and imported) only if some call needs the group (``root``)
                self._dir: Path | None = Path(zpath)
                self._id = str(self._dir.resolve())
                return
            import zarr

            try:
                self._root = zarr.open_group(zpath, mode="r")
            except Exception as e:  # zarr raises several types here
                raise StoreError(f"{self.path!r} is not a geneb feature store: {e}") from e
        else:
            import zarr

            for attempt in range(3):  # processes racing to create the root: retry the loser
                try:
                    self._root = zarr.open_group(zpath, mode="a", zarr_format=3)
                    break
                except Exception as e:
                    if attempt == 2:
                        raise StoreError(
                            f"cannot open or create a store at {self.path!r}: {e}"
                        ) from e
                    time.sleep(0.05)
            if "geneb_store" not in self.root.attrs:
                self.root.attrs["geneb_store"] = STORE_FORMAT_VERSION
        from zarr.storage import LocalStore

        store = self.root.store
        self._dir = Path(store.root) if isinstance(store, LocalStore) else None
        self._id = str(self._dir.resolve()) if self._dir is not None else self.path

    @property
    def root(self) -> zarr.Group:
        """The store's root zarr group (opened on first use for a local read-only store)."""
        if self._root is None:
            import zarr

            try:
                self._root = zarr.open_group(self._zpath, mode="r")
            except Exception as e:  # zarr raises several types here
                raise StoreError(f"{self.path!r} is not a geneb feature store: {e}") from e
        return self._root

    # ---------------------------------------------------------------- listing
    def _group(self, key: StoreKey) -> zarr.Group | None:
        import zarr

        try:
            g = self.root[key.path]
        except (KeyError, FileNotFoundError):
            return None
        return g if isinstance(g, zarr.Group) else None

    def _attrs(self, key: StoreKey) -> dict[str, Any] | None:
        """Attributes of an entry group (None if there is none, or only the placeholder a writer
        creates before locking). Local: the JSON directly."""
        if self._dir is None:
            g = self._group(key)
            a = None if g is None else g.attrs.asdict()
        else:
            meta = _direct.read_json(self._dir / key.path / "zarr.json")
            ok = meta is not None and meta.get("node_type") == "group"
            a = dict(meta.get("attributes") or {}) if ok else None
        return a if a is not None and "n_rows" in a else None  # else: none or a placeholder

    def _update_attrs(
        self, key: StoreKey, updates: dict[str, Any], *, replace: bool = False
    ) -> None:
        """Change entry attributes in one atomic metadata write."""
        if self._dir is None:
            g = self._group(key)
            assert g is not None
            g.attrs.put(updates) if replace else g.attrs.update(updates)
            return
        path = self._dir / key.path / "zarr.json"
        if replace:
            meta = _direct.group_meta(dict(updates))
        else:
            meta = _direct.read_json(path) or _direct.group_meta({})
            meta["attributes"] = {**meta.get("attributes", {}), **updates}
        _direct.write_json(path, meta)

    def _layout(self, key: StoreKey, name: str) -> _direct.Layout | None:
        if self._dir is None:
            return None
        return _direct.read_layout(self._dir / key.path / name)

    def keys(self, complete_only: bool = False) -> list[StoreKey]:
        """Every entry (sorted), optionally only the complete ones."""
        out: list[StoreKey] = []
        if self._dir is not None:
            return self._local_keys(complete_only)
        with warnings.catch_warnings():  # half-created folders of killed writers
            warnings.simplefilter("ignore")
            for mname, mg in sorted(self.root.groups()):
                for tname, tg in sorted(mg.groups()):
                    for split, sg in sorted(tg.groups()):
                        a = sg.attrs
                        if complete_only and not a.get("complete", False):
                            continue
                        try:
                            out.append(
                                StoreKey(a.get("model_id", mname), a.get("task_id", tname), split)
                            )
                        except StoreError:
                            continue  # not a geneb entry
        return sorted(out)

    def _local_keys(self, complete_only: bool) -> list[StoreKey]:
        """Walk the folders (no zarr member listing: ~100x faster on big stores)."""
        assert self._dir is not None
        out: list[StoreKey] = []

        def groups(d: Path) -> list[Path]:
            try:
                kids = sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
            except FileNotFoundError:
                return []
            return [p for p in kids if (p / "zarr.json").is_file()]

        for md in groups(self._dir):
            for td in groups(md):
                for sd in groups(td):
                    try:
                        meta = _direct.read_json(sd / "zarr.json") or {}
                    except CorruptEntryError:
                        continue
                    a = meta.get("attributes") or {}
                    if meta.get("node_type") != "group" or "n_rows" not in a:
                        continue
                    if complete_only and not a.get("complete", False):
                        continue
                    try:
                        out.append(StoreKey(a.get("model_id", md.name), a.get("task_id", td.name),
                                            sd.name))
                    except StoreError:
                        continue
        return sorted(out)

    def status(self, key: StoreKey) -> Literal["missing", "incomplete", "complete"]:
        a = self._attrs(key)
        if a is None:
            return "missing"
        return "complete" if a.get("complete", False) else "incomplete"

    def provenance(self, key: StoreKey) -> Provenance | None:
        a = self._attrs(key)
        if a is None or "provenance" not in a:
            return None
        return Provenance.from_dict(dict(a["provenance"]))

    def info(self, key: StoreKey) -> dict[str, Any]:
        """Status, shape, dtype, chunking and every attribute (provenance included)."""
        g = self._require_group(key)
        out: dict[str, Any] = {"key": str(key), "path": key.path, "status": self.status(key)}
        if "embeddings" in g:
            emb = g["embeddings"]
            out |= {
                "shape": list(emb.shape),
                "dtype": str(emb.dtype),
                "shards": list(emb.shards) if emb.shards else None,
                "chunks": list(emb.chunks),
            }
        return out | g.attrs.asdict()

    def _require_group(self, key: StoreKey) -> zarr.Group:
        g = self._group(key)
        if g is None:
            raise unknown_name("store key", str(key), [str(k) for k in self.keys()])
        return g

    # ---------------------------------------------------------------- reading
    def _entry_attrs(self, key: StoreKey, allow_incomplete: bool) -> dict[str, Any]:
        attrs = self._attrs(key)
        if attrs is None:
            raise unknown_name("store key", str(key), [str(k) for k in self.keys()])
        if not attrs.get("complete", False) and not allow_incomplete:
            raise EntryIncompleteError(
                f"store entry {key} in {self.path} is incomplete "
                f"({attrs.get('rows_written', 0)} of {attrs.get('n_rows', '?')} rows written, "
                "not verified): rerun the extraction to finish it"
            )
        return attrs

    def get(
        self, model: str, task: str, split: str, *, allow_incomplete: bool = False
    ) -> StoreEntry:
        """The whole entry, every chunk checksum verified. Incomplete entries raise unless
        ``allow_incomplete`` (then only the rows recorded as written are returned)."""
        key = StoreKey(model, task, split)
        attrs = self._entry_attrs(key, allow_incomplete)
        complete = bool(attrs.get("complete", False))
        n = int(attrs.get("n_rows", 0)) if complete else int(attrs.get("rows_written", 0))
        arrays = {name: self._read_array(key, name, n, direct=complete) for name in ARRAYS}
        return StoreEntry(
            key=key,
            embeddings=arrays["embeddings"],
            labels=arrays["labels"],
            rows=arrays["row"],
            provenance=Provenance.from_dict(dict(attrs["provenance"])),
            attrs=attrs,
        )

    def _read_array(self, key: StoreKey, name: str, n: int, *, direct: bool) -> np.ndarray:
        """First ``n`` rows of one array (direct shard reads when possible), checked for size."""
        lay = self._layout(key, name) if direct else None
        if lay is not None:
            arr = _direct.read_all(lay)
        else:
            g = self._require_group(key)
            if name not in g:
                raise CorruptEntryError(f"store entry {key} in {self.path} has no {name!r}")
            arr = _zarr_read(g[name], f"{name} of {key}", slice(0, n))
        if arr.shape[0] != n:
            raise CorruptEntryError(
                f"store entry {key}: {name} has {arr.shape[0]} rows, expected {n}"
            )
        return arr

    def entry_attrs(self, key: StoreKey) -> dict[str, Any] | None:
        """Attributes of an entry (None when there is none); local stores read the JSON."""
        return self._attrs(key)

    def labels_rows(self, model: str, task: str, split: str) -> tuple[np.ndarray, np.ndarray, int]:
        """(labels, row indices, embedding width) of a complete entry, checksums verified,
        without reading its embeddings (what planning a probe run needs)."""
        key = StoreKey(model, task, split)
        attrs = self._entry_attrs(key, allow_incomplete=False)
        n = int(attrs.get("n_rows", 0))
        out = {name: self._read_array(key, name, n, direct=True) for name in ("labels", "row")}
        lay = self._layout(key, "embeddings")
        if lay is not None:
            dim = int(lay.shape[1])
        else:
            g = self._require_group(key)
            if "embeddings" not in g:
                raise CorruptEntryError(f"store entry {key} in {self.path} has no 'embeddings'")
            dim = int(g["embeddings"].shape[1])
        return out["labels"], out["row"], dim

    def get_rows(
        self, model: str, task: str, split: str, positions: Sequence[int] | np.ndarray
    ) -> StoreEntry:
        """Some rows of a complete entry, by position 0..n-1 (not split-file row ids), in the
        order given. Reads only the ~64 KiB inner chunks holding them (k-shot sampling)."""
        key = StoreKey(model, task, split)
        attrs = self._entry_attrs(key, False)
        n = int(attrs["n_rows"])
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        if len(pos) and (pos.min() < 0 or pos.max() >= n):
            bad = int(pos[(pos < 0) | (pos >= n)][0])
            raise StoreError(f"row position {bad} is outside store entry {key} (0..{n - 1})")
        arrays: dict[str, np.ndarray] = {}
        for name in ARRAYS:
            lay = self._layout(key, name)
            if lay is not None:
                arrays[name] = _direct.read_rows(lay, pos)
            else:  # zarr: orthogonal selection of sorted unique rows, then reorder
                uniq, inv = np.unique(pos, return_inverse=True)
                arr = self._require_group(key)[name]
                sel = (uniq,) + (slice(None),) * (arr.ndim - 1)
                try:
                    got = np.asarray(arr.get_orthogonal_selection(sel))
                except Exception as e:
                    raise CorruptEntryError(f"{name} of {key} cannot be read: {e}") from e
                arrays[name] = got[inv]
        return StoreEntry(
            key=key,
            embeddings=arrays["embeddings"],
            labels=arrays["labels"],
            rows=arrays["row"],
            provenance=Provenance.from_dict(dict(attrs["provenance"])),
            attrs=attrs,
        )

    # ---------------------------------------------------------------- writing
    def plan(self, key: StoreKey, provenance: Provenance, *, overwrite: bool = False) -> WritePlan:
        """Decide write/skip/resume/overwrite/refuse for ``key`` without changing anything.

        ``start_row`` of a resume is the attribute ``rows_written``; the writer re-verifies the
        shards on disk and may start later (``EntryWriter.start_row`` is authoritative)."""
        a = self._attrs(key)
        if a is None:
            return WritePlan(key, "write", "no entry yet")
        old = Provenance.from_dict(dict(a["provenance"])) if "provenance" in a else None
        diffs = old.differences(provenance) if old is not None else {"provenance": (None, "new")}
        if diffs:
            what = ", ".join(f"{k}: stored {a!r} != requested {b!r}" for k, (a, b) in diffs.items())
            if overwrite:
                return WritePlan(key, "overwrite", f"stale entry replaced ({what})")
            return WritePlan(key, "refuse", f"stale entry ({what}); pass --overwrite to replace")
        if a.get("complete", False):
            if overwrite:
                return WritePlan(key, "overwrite", "complete entry replaced (--overwrite)")
            return WritePlan(key, "skip", "complete entry with the same provenance")
        done = int(a.get("rows_written", 0))
        if overwrite:
            return WritePlan(key, "overwrite", "incomplete entry replaced (--overwrite)")
        return WritePlan(key, "resume", f"resuming after {done} verified rows", start_row=done)

    def writer(
        self,
        key: StoreKey,
        *,
        provenance: Provenance,
        labels: np.ndarray,
        rows: np.ndarray,
        dim: int,
        storage_dtype: str = "float32",
        overwrite: bool = False,
        verify: Literal["files", "full"] = "files",
    ) -> EntryWriter:
        """Open a streaming writer (use as a context manager). Raises if the plan is 'refuse'.

        ``verify`` decides what is checked before ``complete`` is set: ``"files"`` (every
        shard file present, exact size, index checksum; data checksums come from the rows in
        memory) or ``"full"`` (also re-read every byte and check every chunk checksum, about
        a full read's time more)."""
        self._require_writable()
        w = EntryWriter(self, key, provenance, labels, rows, dim, storage_dtype, overwrite)
        if verify not in ("files", "full"):
            raise StoreError(f"verify must be 'files' or 'full', got {verify!r}")
        w.verify_mode = verify
        return w

    def _require_writable(self) -> None:
        if self.mode != "a":
            raise StoreError(f"store {self.path} is open read-only; open it with mode='a' to write")

    def delete(self, key: StoreKey) -> None:
        """Remove an entry (under its lock)."""
        self._require_writable()
        if self._group(key) is None:
            return
        with self.lock(key):
            del self.root[key.path]

    @contextlib.contextmanager
    def lock(self, key: StoreKey) -> Iterator[None]:
        """Exclusive per-key lock; EntryLockedError at once if another writer holds it.

        Local stores: the parent groups and the entry group's ``zarr.json`` exist before the
        folder is locked (a folder without one breaks zarr's member listing); a placeholder
        group left without data is removed again on release."""
        self._require_writable()
        group_dir = self._dir / key.path if self._dir is not None else None
        if group_dir is not None:
            self._local_parents(key)
            group_dir.mkdir(exist_ok=True)
            _direct.write_json(group_dir / "zarr.json", _direct.group_meta({}), exclusive=True)
        what = f"store entry {key} in {self.path}"
        with entry_lock(self._id, key.path, what, group_dir):
            try:
                yield
            finally:
                if group_dir is not None:
                    _drop_placeholder(group_dir)

    def _local_parents(self, key: StoreKey) -> None:
        """Model and task groups with their original ids (racing creators write the same)."""
        assert self._dir is not None
        model_dir, task_dir, _ = key.path.split("/")
        gm = _direct.group_meta
        _direct.write_json(self._dir / model_dir / "zarr.json", gm({"model_id": key.model}),
                           exclusive=True)
        _direct.write_json(self._dir / model_dir / task_dir / "zarr.json",
                           gm({"task_id": key.task}), exclusive=True)

    def _ensure_group(self, path: str, attrs: dict[str, Any]) -> zarr.Group:
        """Create a parent group with its attributes; safe when processes race to create it
        (every racer writes identical metadata, each write is an atomic replace)."""
        import zarr
        from zarr.errors import ContainsGroupError

        try:
            return self.root.create_group(path, attributes=attrs)
        except (ContainsGroupError, FileExistsError):
            g = self.root[path]
            if not isinstance(g, zarr.Group):
                raise StoreError(f"{path!r} in {self.path} is an array, expected a group") from None
            if any(g.attrs.get(k) != v for k, v in attrs.items()):
                g.attrs.update(attrs)
            return g

    # ---------------------------------------------------------------- verification
    def verify(self, keys: Sequence[StoreKey] | None = None) -> list[tuple[StoreKey, str]]:
        """Problems found: missing or incomplete entries, checksum failures, wrong shapes,
        non-finite values. Reads every chunk. Empty list = all good."""
        problems: list[tuple[StoreKey, str]] = []
        for key in keys if keys is not None else self.keys():
            g = self._group(key)
            if g is None:
                problems.append((key, "missing"))
                continue
            if not g.attrs.get("complete", False):
                n = g.attrs.get("n_rows", "?")
                problems.append((key, f"incomplete ({g.attrs.get('rows_written', 0)}/{n} rows)"))
                continue
            try:
                self._verify_entry(key, g)
            except CorruptEntryError as e:
                problems.append((key, f"corrupt: {e}"))
        return problems

    def _verify_entry(self, key: StoreKey, g: zarr.Group) -> None:
        n = int(g.attrs["n_rows"])
        for name in ARRAYS:
            if name not in g:
                raise CorruptEntryError(f"array {name!r} missing")
            arr = g[name]
            if arr.shape[0] != n:
                raise CorruptEntryError(f"{name} has shape {arr.shape}, expected {n} rows")
            lay = self._layout(key, name)
            step = lay.chunk_rows if lay is not None else arr.chunks[0] * 16
            scratch = None
            for a in range(0, n, step):
                if lay is not None:
                    i = a // step
                    b = lay.rows_of(i)[1]
                    if scratch is None:
                        scratch = np.empty((step, *lay.shape[1:]), dtype=lay.dtype)
                    block = scratch[: b - a]
                    _direct.read_file_into(lay, i, block)
                else:
                    block = _zarr_read(arr, name, slice(a, a + step))
                if name == "embeddings" and not np.isfinite(block).all():
                    bad = a + int(np.argwhere(~np.isfinite(block))[0][0])
                    raise CorruptEntryError(f"non-finite embedding at row {bad}")


class EntryWriter:
    """Streams rows of one entry, in row order, as whole shards; all-or-nothing.

    ``start_row`` tells the caller where to resume: the shards already on disk that pass their
    checksums. ``complete`` is set only after all rows arrived and every shard file was checked
    (present, exact size, index checksum); the data checksums were computed from the rows in
    memory while writing. A writer killed at any moment leaves an incomplete entry.
    Rows passed to ``append`` are either written before it returns or copied, so callers may
    reuse their buffers.
    """

    def __init__(
        self,
        store: FeatureStore,
        key: StoreKey,
        provenance: Provenance,
        labels: np.ndarray,
        rows: np.ndarray,
        dim: int,
        storage_dtype: str,
        overwrite: bool,
    ) -> None:
        if storage_dtype not in ("float32", "float16"):
            raise StoreError(f"storage dtype must be float32 or float16, got {storage_dtype!r}")
        labels = np.asarray(labels)
        if labels.size and not np.issubdtype(labels.dtype, np.integer):
            raise StoreError(f"labels of {key} must be integers, got dtype {labels.dtype}")
        labels = labels.astype(np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        if labels.shape != rows.shape or labels.ndim != 1:
            raise StoreError(f"labels {labels.shape} and rows {rows.shape} must be equal 1-D")
        if int(dim) < 1:
            raise StoreError(f"embedding dimension must be >= 1, got {dim}")
        self.store, self.key, self.provenance = store, key, provenance
        self.labels, self.rows, self.dim = labels, rows, int(dim)
        self.n_rows = len(labels)
        self.storage_dtype = storage_dtype
        self.overwrite = overwrite
        self._lock_cm: contextlib.AbstractContextManager[None] | None = None
        # owned, already checked rows not written yet (rows, first row), from self._next on
        self._pending: list[tuple[np.ndarray, int]] = []
        self._failed = False
        self.verify_mode = "files"
        self._pending_rows = 0
        self.start_row = 0
        self._next = 0
        self._saved = 0  # rows_written as last recorded in the attributes
        self._saved_at = 0.0
        self._layout: _direct.Layout | None = None
        self._shard = 1
        self.plan: WritePlan | None = None

    # -------------------------------------------------------------- opening
    def __enter__(self) -> EntryWriter:
        self._lock_cm = self.store.lock(self.key)
        self._lock_cm.__enter__()
        try:
            self._open()
        except BaseException:
            self._lock_cm.__exit__(None, None, None)
            raise
        return self

    def _open(self) -> None:
        st = self.store
        self.plan = plan = st.plan(self.key, self.provenance, overwrite=self.overwrite)
        if plan.action == "refuse":
            raise StaleEntryError(f"store entry {self.key} in {st.path}: {plan.reason}")
        if plan.action == "skip":
            self.start_row = self._next = self.n_rows
            return
        exists = st._attrs(self.key) is not None
        if plan.action == "resume" and exists and self._compatible():
            if st._dir is None:
                self._arr = st._require_group(self.key)["embeddings"]
                self._shard = self._arr.shards[0] if self._arr.shards else self._arr.chunks[0]
            else:
                assert self._layout is not None
                self._shard = self._layout.chunk_rows
            self.start_row = self._next = self._saved = self._verified_prefix(plan.start_row)
            self._saved_at = time.monotonic()
            return
        self._create(exists)

    def _compatible(self) -> bool:
        """Can an incomplete entry be continued (same shape, dtype, labels and rows)?"""
        st, key = self.store, self.key
        try:
            if st._dir is not None:
                lays = [st._layout(key, name) for name in ARRAYS]
                if any(lay is None for lay in lays):
                    return False
                emb, lab, row = lays
                assert emb is not None and lab is not None and row is not None
                self._layout = emb
                return (
                    emb.shape == (self.n_rows, self.dim)
                    and str(emb.dtype) == self.storage_dtype
                    and np.array_equal(_direct.read_all(lab), self.labels)
                    and np.array_equal(_direct.read_all(row), self.rows)
                )
            g = st._require_group(key)
            e = g["embeddings"]
            return (
                e.shape == (self.n_rows, self.dim)
                and str(e.dtype) == self.storage_dtype
                and np.array_equal(g["labels"][...], self.labels)
                and np.array_equal(g["row"][...], self.rows)
            )
        except Exception:  # anything unreadable: start over
            return False

    def _verified_prefix(self, recorded: int) -> int:
        """Rows at the start whose shards are on disk and pass every checksum.

        Local stores: scan shards from the first (the attribute may lag behind, and a shard
        may have been cut short by a kill). Remote: trust ``rows_written`` after re-reading
        the last shard before it."""
        s, n = self._shard, self.n_rows
        lay = self._layout
        if lay is not None:
            scratch = np.empty((min(s, max(n, 1)), self.dim), dtype=lay.dtype)
            done = 0
            for i in range(lay.n_files):
                try:
                    _direct.verify_file(lay, i, scratch)
                except CorruptEntryError:
                    break
                done = lay.rows_of(i)[1]
            return done
        done = (min(recorded, n) // s) * s if recorded < n else recorded
        while done > 0:
            try:
                _zarr_read(self._arr, "embeddings", slice(done - s, done))
                return done
            except CorruptEntryError:
                done -= s
        return 0

    def _create(self, exists: bool) -> None:
        """(Re)create the entry: attributes first (complete=False), then fresh arrays. The
        group itself is kept: its folder carries the lock."""
        st, key = self.store, self.key
        model_dir, task_dir, _ = key.path.split("/")
        attrs = {
            "complete": False,
            "rows_written": 0,
            "n_rows": self.n_rows,
            "dim": self.dim,
            "model_id": key.model,
            "task_id": key.task,
            "split": key.split,
            "storage_dtype": self.storage_dtype,
            "provenance": self.provenance.to_dict(),
            "format_version": STORE_FORMAT_VERSION,
        }
        itemsize = np.dtype(self.storage_dtype).itemsize
        shard, inner = layout_for(self.n_rows, self.dim, itemsize)
        n1 = max(1, self.n_rows)
        if st._dir is not None:  # parent groups were created by lock()
            gdir = st._dir / key.path
            st._update_attrs(key, attrs, replace=True)
            if any(p.name != "zarr.json" for p in gdir.iterdir()):
                for name in ARRAYS:
                    shutil.rmtree(gdir / name, ignore_errors=True)
            shape = (self.n_rows, self.dim)
            _direct.write_json(gdir / "embeddings" / "zarr.json",
                               _direct.array_meta(shape, self.storage_dtype, shard, inner))
            for name, data in (("labels", self.labels), ("row", self.rows)):
                _direct.write_json(gdir / name / "zarr.json",
                                   _direct.array_meta(data.shape, "int64", n1, None))
                if len(data):
                    lay = _direct.Layout(gdir / name, data.shape, np.dtype("int64"), n1, None)
                    _direct.write_file(lay, 0, [data])
            self._layout = _direct.Layout(
                gdir / "embeddings", shape, np.dtype(self.storage_dtype), shard, inner
            )
        else:
            st._ensure_group(model_dir, {"model_id": key.model})
            st._ensure_group(f"{model_dir}/{task_dir}", {"task_id": key.task})
            g = st._ensure_group(key.path, {}) if not exists else st._require_group(key)
            g.attrs.put(attrs)
            from zarr.codecs import Crc32cCodec

            for name in list(g.array_keys()):
                del g[name]
            self._arr = g.create_array(
                "embeddings",
                shape=(self.n_rows, self.dim),
                dtype=self.storage_dtype,
                chunks=(inner, self.dim),
                shards=(shard, self.dim),
                compressors=[Crc32cCodec()],
                fill_value=0.0,
                chunk_key_encoding={"name": "default", "separator": "."},
            )
            for name, data in (("labels", self.labels), ("row", self.rows)):
                a = g.create_array(
                    name, shape=data.shape, dtype="int64", chunks=(n1,),
                    compressors=[Crc32cCodec()], fill_value=0,
                    chunk_key_encoding={"name": "default", "separator": "."},
                )
                a[...] = data
        self._shard = shard
        self.start_row = self._next = self._saved = 0
        self._saved_at = time.monotonic()

    # -------------------------------------------------------------- streaming
    @property
    def done(self) -> bool:
        """True when the entry was already complete (nothing to write)."""
        return self.plan is not None and self.plan.action == "skip"

    def _prepare(self, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(input as an array, rows in the storage dtype, C-contiguous; no copy if possible)."""
        emb = np.asarray(embeddings)
        if emb.ndim != 2 or emb.shape[1] != self.dim:
            raise StoreError(
                f"expected embeddings of shape (b, {self.dim}) for {self.key}, got {emb.shape}"
            )
        if not np.issubdtype(emb.dtype, np.floating):
            raise StoreError(f"embeddings must be floating point, got dtype {emb.dtype}")
        with np.errstate(over="ignore"):
            return emb, np.ascontiguousarray(emb, dtype=self.storage_dtype)

    def _nonfinite(self, row: int, original: np.ndarray | None) -> StoreError:
        where = f"row {row} (split-file row {int(self.rows[row])}) of {self.key}"
        if original is not None and np.isfinite(original).all():
            return StoreError(
                f"embedding {where} has a value too large for {self.storage_dtype} storage "
                f"(max {float(np.finfo(self.storage_dtype).max):.4g}); nothing written for it"
                + (": store float32 instead" if self.storage_dtype == "float16" else "")
            )
        return StoreError(
            f"non-finite embedding (NaN/inf) at {where}; nothing written for it "
            "(check the model's dtype or inputs)"
        )

    def append(self, embeddings: np.ndarray) -> None:
        """Add the next rows (in row order). Non-finite values are refused with the row named.

        Whole shards are written before this returns (in parallel threads, each checking its
        rows for NaN/inf, computing checksums and writing while the rows are in cache); the
        rest is copied and kept for the next call. After an error the writer refuses more rows
        (leave the ``with`` block; a rerun resumes from the verified shards)."""
        if self.done:
            raise StoreError(f"store entry {self.key} is already complete; nothing to append")
        if self._lock_cm is None:
            raise StoreError("use the writer as a context manager: with store.writer(...) as w")
        if self._failed:
            raise StoreError(f"an earlier append to {self.key} failed; rerun to resume")
        emb, arr = self._prepare(embeddings)
        first = self._next + self._pending_rows
        if first + len(arr) > self.n_rows:
            raise StoreError(
                f"more rows than the {self.n_rows} declared for {self.key} "
                f"(got {first + len(arr)})"
            )

        def check(piece: np.ndarray, row0: int) -> None:
            bad = _first_nonfinite(piece)
            if bad is not None:
                r = row0 + bad
                raise self._nonfinite(r, emb[r - first] if first <= r < first + len(emb) else None)

        # (rows, first row, already checked)
        pieces = [(p, r0, True) for p, r0 in self._pending] + [(arr, first, False)]
        jobs: list[tuple[int, list[tuple[np.ndarray, int, bool]]]] = []
        nxt = self._next
        while pieces:
            a, b = nxt, min((nxt // self._shard + 1) * self._shard, self.n_rows)
            need = b - a
            if sum(len(p[0]) for p in pieces) < need:
                break
            take: list[tuple[np.ndarray, int, bool]] = []
            while need:
                p, r0, ok = pieces[0]
                if len(p) <= need:
                    take.append(pieces.pop(0))
                    need -= len(p)
                else:
                    take.append((p[:need], r0, ok))
                    pieces[0] = (p[need:], r0 + need, ok)
                    need = 0
            jobs.append((a // self._shard, take))
            nxt = b

        def run(job: tuple[int, list[tuple[np.ndarray, int, bool]]]) -> None:
            for p, r0, ok in job[1]:
                if not ok:
                    check(p, r0)
            self._write_file(job[0], [p for p, _, _ in job[1]])

        try:
            for p, r0, ok in pieces:  # the remainder: check before keeping it
                if not ok:
                    check(p, r0)
            if self._layout is None:
                for job in jobs:
                    run(job)
            else:
                _direct.parallel(run, jobs)
        except BaseException:
            self._failed = True
            raise
        self._next = nxt
        owned = arr is not emb and not np.may_share_memory(arr, emb)
        keep = []
        for p, r0, _ in pieces:  # rows kept for later must not alias the caller's buffer
            keep.append((p if owned or not np.may_share_memory(p, arr) else p.copy(), r0))
        self._pending = keep
        self._pending_rows = sum(len(p) for p, _ in keep)
        self._record_progress(force=self._layout is None)

    def _write_file(self, i: int, pieces: list[np.ndarray]) -> None:
        if self._layout is not None:
            _direct.write_file(self._layout, i, pieces)
            return
        # zarr path: whole shards only, so no read-modify-write
        a = i * self._shard
        data = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        self._arr[a : a + len(data)] = data

    def _record_progress(self, force: bool) -> None:
        now = time.monotonic()
        if self._next != self._saved and (force or now - self._saved_at >= PROGRESS_EVERY_S):
            self.store._update_attrs(self.key, {"rows_written": self._next})
            self._saved, self._saved_at = self._next, now

    def close(self) -> None:
        """Write the last shard, check every shard file, then mark the entry complete."""
        if self.done:
            return
        if self._next + self._pending_rows != self.n_rows:
            self._record_progress(force=True)
            raise StoreError(
                f"entry {self.key} got {self._next + self._pending_rows} of {self.n_rows} rows; "
                "left incomplete (rerun to resume)"
            )
        if self._pending_rows:
            self._write_file(self._next // self._shard, [p for p, _ in self._pending])
            self._next, self._pending, self._pending_rows = self.n_rows, [], 0
        lay = self._layout
        try:
            if lay is not None:
                for i in range(lay.n_files):
                    _direct.check_index(lay, i)
                if self.verify_mode == "full":
                    scratch = np.empty((min(self._shard, self.n_rows), self.dim), lay.dtype)
                    for i in range(lay.n_files):
                        _direct.verify_file(lay, i, scratch)
            else:
                self.store._verify_entry(self.key, self.store._require_group(self.key))
        except CorruptEntryError as e:
            raise CorruptEntryError(f"store entry {self.key} failed verification: {e}") from e
        from geneb.store.fingerprint import entry_fingerprint

        self.store._update_attrs(
            self.key,
            {
                "complete": True,
                "rows_written": self.n_rows,
                "entry_fingerprint": entry_fingerprint(self.provenance),
            }
        )

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.close()
            elif not self.done and self._next:
                with contextlib.suppress(Exception):
                    self._record_progress(force=True)
        finally:
            assert self._lock_cm is not None
            self._lock_cm.__exit__(exc_type, exc, tb)
            self._lock_cm = None


def _local_v3_group(path: Path) -> bool:
    """Is ``path`` a local zarr v3 group (its root ``zarr.json`` says so)? Then a read-only
    store can skip opening zarr; anything else goes through ``zarr.open_group`` as before."""
    try:
        meta = _direct.read_json(path / "zarr.json")
    except (CorruptEntryError, OSError):
        return False
    return bool(meta) and meta.get("node_type") == "group" and meta.get("zarr_format") == 3


def _drop_placeholder(group_dir: Path) -> None:
    """Remove an entry group that holds nothing but the placeholder metadata."""
    try:
        if os.listdir(group_dir) != ["zarr.json"]:
            return
        meta = _direct.read_json(group_dir / "zarr.json") or {}
        if "n_rows" in (meta.get("attributes") or {}):
            return
        (group_dir / "zarr.json").unlink()
        group_dir.rmdir()
    except (OSError, CorruptEntryError):
        pass


def _first_nonfinite(a: np.ndarray) -> int | None:
    """Row of the first NaN/inf, or None. A sum (one vectorised pass; NaN and inf propagate,
    inf - inf = NaN) screens the common all-finite case; only a non-finite sum (or an
    overflow) triggers the exact scan."""
    if not a.size:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.add.reduce(a.reshape(-1), dtype=np.float32)):
            return None
    bad = ~np.isfinite(a).all(axis=1)
    return int(np.argmax(bad)) if bad.any() else None
