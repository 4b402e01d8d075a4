"""The Zarr v3 feature store: one group per (model, task, split), written all-or-nothing.

Layout (documented in the README so it can be read with plain zarr)::

    <root>/zarr.json                       attrs: {"geneb_store": 1}
    <root>/<model>/<task>/<split>/         group attrs: complete, provenance, n_rows, dim, ...
        embeddings   (n, d) float32|float16, chunked along rows, crc32c per chunk
        labels       (n,)   int64
        row          (n,)   int64, index of each row in the task's split file
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import zarr
from zarr.codecs import BytesCodec, Crc32cCodec

from geneb.errors import (
    CorruptEntryError,
    EntryIncompleteError,
    EntryLockedError,
    StaleEntryError,
    StoreError,
    unknown_name,
)
from geneb.store.keys import StoreKey
from geneb.store.provenance import Provenance

STORE_FORMAT_VERSION = 1
LOCK_DIR = ".geneb-locks"
#: Target bytes per chunk of embeddings; rows per chunk = this / (d * itemsize).
CHUNK_BYTES = 4 * 1024 * 1024

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
    """A complete entry read into memory."""

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

    def to_xarray(self):  # pragma: no cover - thin optional wrapper
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


def chunk_rows_for(dim: int, itemsize: int) -> int:
    return int(max(64, min(65536, CHUNK_BYTES // max(1, dim * itemsize))))


class FeatureStore:
    """A feature store at a local path or fsspec URL. ``mode='r'`` never writes."""

    def __init__(self, path: str | os.PathLike[str], mode: Literal["r", "a"] = "r") -> None:
        self.path = str(path)
        self.mode = mode
        self._local = "://" not in self.path or self.path.startswith("file://")
        if mode == "r":
            if self._local and not Path(self.path).exists():
                raise StoreError(f"no feature store at {self.path!r} (the path does not exist)")
            try:
                self.root = zarr.open_group(self.path, mode="r")
            except Exception as e:  # zarr raises several types here
                raise StoreError(f"{self.path!r} is not a geneb feature store: {e}") from e
        elif mode == "a":
            self.root = zarr.open_group(self.path, mode="a", zarr_format=3)
            if "geneb_store" not in self.root.attrs:
                self.root.attrs["geneb_store"] = STORE_FORMAT_VERSION
        else:
            raise StoreError(f"mode must be 'r' or 'a', got {mode!r}")

    # ---------------------------------------------------------------- listing
    def _group(self, key: StoreKey) -> zarr.Group | None:
        try:
            g = self.root[key.path]
        except KeyError:
            return None
        return g if isinstance(g, zarr.Group) else None

    def keys(self, complete_only: bool = False) -> list[StoreKey]:
        out: list[StoreKey] = []
        for _, mg in sorted(self.root.groups()):
            for _, tg in sorted(mg.groups()):
                for split, sg in sorted(tg.groups()):
                    a = sg.attrs
                    if complete_only and not a.get("complete", False):
                        continue
                    out.append(StoreKey(a.get("model_id"), a.get("task_id"), split))
        return out

    def status(self, key: StoreKey) -> Literal["missing", "incomplete", "complete"]:
        g = self._group(key)
        if g is None:
            return "missing"
        return "complete" if g.attrs.get("complete", False) else "incomplete"

    def provenance(self, key: StoreKey) -> Provenance | None:
        g = self._group(key)
        if g is None or "provenance" not in g.attrs:
            return None
        return Provenance.from_dict(dict(g.attrs["provenance"]))

    def info(self, key: StoreKey) -> dict[str, Any]:
        g = self._require_group(key)
        emb = g["embeddings"]
        return {
            "key": str(key),
            "path": key.path,
            "status": self.status(key),
            "shape": list(emb.shape),
            "dtype": str(emb.dtype),
            "chunks": list(emb.chunks),
            **{k: v for k, v in g.attrs.asdict().items()},
        }

    def _require_group(self, key: StoreKey) -> zarr.Group:
        g = self._group(key)
        if g is None:
            raise unknown_name("store key", str(key), [str(k) for k in self.keys()])
        return g

    # ---------------------------------------------------------------- reading
    def get(
        self, model: str, task: str, split: str, *, allow_incomplete: bool = False
    ) -> StoreEntry:
        key = StoreKey(model, task, split)
        g = self._require_group(key)
        attrs = g.attrs.asdict()
        if not attrs.get("complete", False) and not allow_incomplete:
            raise EntryIncompleteError(
                f"store entry {key} in {self.path} is incomplete "
                f"({attrs.get('rows_written', 0)} of {attrs.get('n_rows', '?')} rows written, "
                "not verified): rerun the extraction to finish it"
            )
        try:
            emb = g["embeddings"][...]
            labels = g["labels"][...]
            rows = g["row"][...]
        except Exception as e:
            raise CorruptEntryError(f"store entry {key} in {self.path} cannot be read: {e}") from e
        return StoreEntry(
            key=key,
            embeddings=emb,
            labels=labels,
            rows=rows,
            provenance=Provenance.from_dict(dict(attrs["provenance"])),
            attrs=attrs,
        )

    # ---------------------------------------------------------------- writing
    def plan(self, key: StoreKey, provenance: Provenance, *, overwrite: bool = False) -> WritePlan:
        """Decide write/skip/resume/overwrite/refuse for ``key`` without changing anything."""
        g = self._group(key)
        if g is None:
            return WritePlan(key, "write", "no entry yet")
        old = self.provenance(key)
        diffs = old.differences(provenance) if old is not None else {"provenance": (None, "new")}
        if diffs:
            what = ", ".join(f"{k}: stored {a!r} != requested {b!r}" for k, (a, b) in diffs.items())
            if overwrite:
                return WritePlan(key, "overwrite", f"stale entry replaced ({what})")
            return WritePlan(key, "refuse", f"stale entry ({what}); pass --overwrite to replace")
        if g.attrs.get("complete", False):
            if overwrite:
                return WritePlan(key, "overwrite", "complete entry replaced (--overwrite)")
            return WritePlan(key, "skip", "complete entry with the same provenance")
        done = int(g.attrs.get("rows_written", 0))
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
    ) -> EntryWriter:
        """Open a streaming writer (use as a context manager). Raises if the plan is 'refuse'."""
        if self.mode != "a":
            raise StoreError(f"store {self.path} is open read-only; open it with mode='a' to write")
        return EntryWriter(self, key, provenance, labels, rows, dim, storage_dtype, overwrite)

    def delete(self, key: StoreKey) -> None:
        if self.mode != "a":
            raise StoreError(f"store {self.path} is open read-only")
        if self._group(key) is not None:
            del self.root[key.path]

    @contextlib.contextmanager
    def lock(self, key: StoreKey) -> Iterator[None]:
        """Exclusive per-key lock (advisory ``flock``; released by the OS if the process dies)."""
        if not self._local:
            yield  # remote stores: no cross-process lock available; documented limitation
            return
        import fcntl

        root = Path(self.path.removeprefix("file://"))
        lock_dir = root / LOCK_DIR
        lock_dir.mkdir(parents=True, exist_ok=True)
        lock_path = lock_dir / (key.path.replace("/", "__") + ".lock")
        fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as e:
                raise EntryLockedError(
                    f"store entry {key} in {self.path} is being written by another process "
                    f"(lock {lock_path}); wait for it to finish or write another key"
                ) from e
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            yield
        finally:
            os.close(fd)

    # ---------------------------------------------------------------- verification
    def verify(self, keys: Sequence[StoreKey] | None = None) -> list[tuple[StoreKey, str]]:
        """Problems found: incomplete entries, unreadable (checksum) chunks, wrong shapes."""
        problems: list[tuple[StoreKey, str]] = []
        for key in keys if keys is not None else self.keys():
            g = self._group(key)
            if g is None:
                problems.append((key, "missing"))
                continue
            if not g.attrs.get("complete", False):
                problems.append((key, "incomplete"))
                continue
            try:
                _verify_group(g)
            except CorruptEntryError as e:
                problems.append((key, f"corrupt: {e}"))
        return problems


def _verify_group(g: zarr.Group) -> None:
    """Read every chunk (crc32c is checked on decode) and check shapes agree."""
    n = int(g.attrs["n_rows"])
    try:
        emb = g["embeddings"]
        if emb.shape[0] != n or g["labels"].shape[0] != n or g["row"].shape[0] != n:
            raise CorruptEntryError(f"shape mismatch: expected {n} rows, embeddings {emb.shape}")
        step = emb.chunks[0]
        for a in range(0, n, step):
            block = emb[a : a + step]
            if not np.isfinite(block).all():
                bad = a + int(np.argwhere(~np.isfinite(block))[0][0])
                raise CorruptEntryError(f"non-finite embedding at row {bad}")
        g["labels"][...]
        g["row"][...]
    except CorruptEntryError:
        raise
    except Exception as e:
        raise CorruptEntryError(f"{type(e).__name__}: {e}") from e


class EntryWriter:
    """Streams rows of one entry, in row order, buffering whole chunks; all-or-nothing.

    ``start_row`` tells the caller where to resume. ``complete`` is set only after every chunk
    was read back and checked, so a writer killed at any moment leaves an incomplete entry.
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
        labels = np.asarray(labels, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        if labels.shape != rows.shape or labels.ndim != 1:
            raise StoreError(f"labels {labels.shape} and rows {rows.shape} must be equal 1-D")
        self.store, self.key, self.provenance = store, key, provenance
        self.labels, self.rows, self.dim = labels, rows, int(dim)
        self.n_rows = len(labels)
        self.storage_dtype = storage_dtype
        self.overwrite = overwrite
        self._lock_cm: contextlib.AbstractContextManager[None] | None = None
        self._buf: list[np.ndarray] = []
        self._buf_rows = 0
        self.start_row = 0
        self._next = 0
        self.plan: WritePlan | None = None

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
        if plan.action == "resume":
            g = st._group(self.key)
            assert g is not None
            ok = (
                g["embeddings"].shape == (self.n_rows, self.dim)
                and np.array_equal(g["labels"][...], self.labels)
                and np.array_equal(g["row"][...], self.rows)
                and str(g["embeddings"].dtype) == self.storage_dtype
            )
            if ok:
                self.start_row = self._next = plan.start_row
                self._chunk = g["embeddings"].chunks[0]
                self._group = g
                return
        if plan.action in ("overwrite", "resume"):
            st.delete(self.key)
        self._create()

    def _create(self) -> None:
        st, key = self.store, self.key
        # make sure the intermediate groups carry the original ids
        mg = st.root.require_group(key.path.split("/")[0])
        mg.attrs["model_id"] = key.model
        tg = mg.require_group(key.path.split("/")[1])
        tg.attrs["task_id"] = key.task
        g = tg.create_group(key.split, overwrite=True)
        itemsize = np.dtype(self.storage_dtype).itemsize
        self._chunk = chunk_rows_for(self.dim, itemsize)
        n = max(1, self.n_rows)
        g.create_array(
            "embeddings",
            shape=(self.n_rows, self.dim),
            dtype=self.storage_dtype,
            chunks=(min(self._chunk, n), self.dim),
            compressors=[Crc32cCodec()],
            fill_value=0.0,
        )
        g.create_array("labels", data=self.labels, chunks=(max(1, min(n, 1 << 20)),))
        g.create_array("row", data=self.rows, chunks=(max(1, min(n, 1 << 20)),))
        g.attrs.update(
            {
                "complete": False,
                "rows_written": 0,
                "n_rows": self.n_rows,
                "dim": self.dim,
                "model_id": key.model,
                "task_id": key.task,
                "split": key.split,
                "provenance": self.provenance.to_dict(),
                "format_version": STORE_FORMAT_VERSION,
            }
        )
        self._group = g
        self._chunk = g["embeddings"].chunks[0]
        self.start_row = self._next = 0

    @property
    def done(self) -> bool:
        return self.plan is not None and self.plan.action == "skip"

    def append(self, embeddings: np.ndarray) -> None:
        """Add the next rows (in row order). Non-finite values are refused with the row named."""
        if self.done:
            raise StoreError(f"store entry {self.key} is already complete; nothing to append")
        emb = np.asarray(embeddings)
        if emb.ndim != 2 or emb.shape[1] != self.dim:
            raise StoreError(f"expected embeddings of shape (b, {self.dim}), got {emb.shape}")
        if not np.isfinite(emb).all():
            bad = self._next + self._buf_rows + int(np.argwhere(~np.isfinite(emb))[0][0])
            raise StoreError(
                f"non-finite embedding (NaN/inf) for row {bad} of {self.key}; nothing written "
                "for it (check the model's dtype or inputs)"
            )
        if self._next + self._buf_rows + len(emb) > self.n_rows:
            raise StoreError(f"more rows than the {self.n_rows} declared for {self.key}")
        self._buf.append(emb.astype(self.storage_dtype, copy=False))
        self._buf_rows += len(emb)
        self._flush(final=False)

    def _flush(self, final: bool) -> None:
        if not self._buf_rows:
            return
        step = self._chunk
        total = self._next + self._buf_rows
        end = total if final else (total // step) * step
        if end <= self._next:
            return
        buf = np.concatenate(self._buf) if len(self._buf) > 1 else self._buf[0]
        take = end - self._next
        self._group["embeddings"][self._next : end] = buf[:take]
        rest = buf[take:]
        self._buf = [rest] if len(rest) else []
        self._buf_rows = len(rest)
        self._next = end
        self._group.attrs["rows_written"] = end

    def close(self) -> None:
        """Flush, verify every chunk, then mark complete."""
        if self.done:
            return
        self._flush(final=True)
        if self._next != self.n_rows:
            raise StoreError(
                f"entry {self.key} got {self._next} of {self.n_rows} rows; left incomplete"
            )
        _verify_group(self._group)
        from geneb.store.fingerprint import entry_fingerprint

        self._group.attrs.update(
            {"complete": True, "entry_fingerprint": entry_fingerprint(self.provenance)}
        )

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.close()
        finally:
            assert self._lock_cm is not None
            self._lock_cm.__exit__(exc_type, exc, tb)
