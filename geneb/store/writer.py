"""The streaming entry writer: rows in, whole shards out, ``complete`` only at the very end.

``start_row`` tells the caller where to resume: the shards already stored that pass their
checksums. ``complete`` is set only after all rows arrived and every shard file was checked
(present, exact size, index checksum; the data checksums were computed from the rows in memory
while writing), together with the per-file position digests. A writer killed at any moment,
or stopped by a full disk, leaves an incomplete entry that the next run resumes.
Rows passed to ``append`` are either written before it returns or copied, so callers may
reuse their buffers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from geneb.errors import CorruptEntryError, StaleEntryError, StoreError
from geneb.store import entry_io
from geneb.store._layout import Digest
from geneb.store._pool import parallel
from geneb.store._rows import check_entry_inputs, check_label_names, first_nonfinite
from geneb.store.entry_io import DIGESTS_ATTR, LABEL_NAMES_ATTR, STORE_FORMAT_VERSION, ArraySpec
from geneb.store.keys import StoreKey
from geneb.store.provenance import Provenance

if TYPE_CHECKING:
    from geneb.store.entry_io import EntryIO

Action = Literal["write", "skip", "resume", "overwrite", "refuse"]


@dataclasses.dataclass(frozen=True)
class WritePlan:
    """What writing ``key`` would do, decided before any work (pure: reads attributes only)."""

    key: StoreKey
    action: Action
    reason: str
    start_row: int = 0


class PlanningStore(Protocol):
    """What a writer needs of its store (a ``FeatureStore``; typed here, not imported, so
    ``feature_store`` -> ``writer`` stays the only direction)."""

    path: str
    _io: EntryIO

    def plan(self, key: StoreKey, provenance: Provenance, *,
             overwrite: bool = False) -> WritePlan: ...


#: At most this often (seconds) the ``rows_written`` attribute is rewritten while streaming;
#: resume does not depend on it (shards on disk are re-verified), it only informs ``plan``.
PROGRESS_EVERY_S = 2.0

Piece = tuple[np.ndarray, int, bool]  # (rows, first row, already checked)


class EntryWriter:
    """Streams rows of one entry, in row order, as whole shards; all-or-nothing."""

    def __init__(self, store: PlanningStore, key: StoreKey, provenance: Provenance,
                 labels: np.ndarray, rows: np.ndarray, dim: int, storage_dtype: str,
                 overwrite: bool, label_names: Sequence[str] | None = None) -> None:
        labels, rows = check_entry_inputs(key, labels, rows, dim, storage_dtype)
        self.label_names = check_label_names(key, label_names, labels)
        if provenance.storage_dtype != storage_dtype:  # record what is really stored
            provenance = dataclasses.replace(provenance, storage_dtype=storage_dtype)
        self.store, self.key, self.provenance = store, key, provenance
        self.io = store._io
        self.labels, self.rows, self.dim = labels, rows, int(dim)
        self.n_rows = len(labels)
        self.storage_dtype = storage_dtype
        self.overwrite = overwrite
        self.verify_mode = "files"
        self._lock_cm: contextlib.AbstractContextManager[None] | None = None
        # owned, already checked rows not written yet (rows, first row), from self._next on
        self._pending: list[tuple[np.ndarray, int]] = []
        self._pending_rows = 0
        self._failed = False
        self.start_row = self._next = 0
        self._saved = 0  # rows_written as last recorded in the attributes
        self._saved_at = 0.0
        self._spec: ArraySpec | None = None
        self._shard = 1
        self._digests: dict[int, Digest] = {}
        self._side_digests: dict[str, list[Digest]] = {}
        self.plan: WritePlan | None = None

    # -------------------------------------------------------------- opening
    def __enter__(self) -> EntryWriter:
        self._lock_cm = self.io.lock(self.key)
        self._lock_cm.__enter__()
        try:
            self._open()
        except BaseException:
            self._lock_cm.__exit__(None, None, None)
            self._lock_cm = None
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
        if plan.action == "resume" and self._compatible():
            self.io.prepare_resume(self.key)
            self.start_row = self._next = self._saved = self._verified_prefix(plan.start_row)
            self._saved_at = time.monotonic()
            return
        self._create()

    def _compatible(self) -> bool:
        """Can an incomplete entry be continued (same shape, dtype, labels and rows)?"""
        io, key = self.io, self.key
        try:
            specs = {name: io.spec(key, name) for name in entry_io.ARRAYS}
            if any(s is None for s in specs.values()):
                return False
            emb = specs["embeddings"]
            assert emb is not None
            if emb.shape != (self.n_rows, self.dim) or str(emb.dtype) != self.storage_dtype:
                return False
            for name, want in (("labels", self.labels), ("row", self.rows)):
                s = specs[name]
                assert s is not None
                if str(s.dtype) != str(want.dtype) or s.shape != want.shape:
                    return False
                data = io.read(key, name, s, None)
                if not np.array_equal(data, want):
                    return False
                self._side_digests[name] = [io.verify_file(key, name, s, i, None, None)[1]
                                            for i in range(s.n_files)]
        except CorruptEntryError:  # anything unreadable: start over
            return False
        self._spec, self._shard = emb, emb.chunk_rows
        return True

    def _verified_prefix(self, recorded: int) -> int:
        """Rows at the start whose shards are stored and pass every checksum (their digests
        are kept for completion). Local stores scan every file (the attribute may lag, a
        shard may have been cut short by a kill); zarr stores, where a missing chunk reads as
        zeros, only the files within the recorded progress."""
        spec = self._spec
        assert spec is not None
        n_files = spec.n_files
        if self.io.missing_reads_as_fill:
            n_files = min(n_files, recorded // self._shard if recorded < self.n_rows else n_files)
        scratch = np.empty((min(self._shard, max(self.n_rows, 1)), self.dim), spec.dtype)
        done = 0
        for i in range(n_files):
            try:
                _, self._digests[i] = self.io.verify_file(self.key, "embeddings", spec, i,
                                                          scratch, None)
            except CorruptEntryError:
                break
            done = spec.rows_of(i)[1]
        return done

    def _create(self) -> None:
        """(Re)create the entry: attributes first (complete=False), then fresh arrays."""
        key = self.key
        attrs = {
            "complete": False, "rows_written": 0, "n_rows": self.n_rows, "dim": self.dim,
            "model_id": key.model, "task_id": key.task, "split": key.split,
            "storage_dtype": self.storage_dtype, "provenance": self.provenance.to_dict(),
            "format_version": STORE_FORMAT_VERSION,
        }
        if self.label_names is not None:
            attrs[LABEL_NAMES_ATTR] = self.label_names
        if self.labels.dtype != np.int64:  # only regression entries carry it
            attrs[entry_io.LABELS_DTYPE] = str(self.labels.dtype)
        dtype = np.dtype(self.storage_dtype)
        shard, inner = entry_io.layout_for(self.n_rows, self.dim, dtype.itemsize)
        want = ArraySpec((self.n_rows, self.dim), dtype, shard, inner)
        self._side_digests = self.io.create(key, attrs, want, self.labels, self.rows)
        spec = self.io.spec(key, "embeddings")
        assert spec is not None
        self._spec, self._shard = spec, shard
        self._digests = {}
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

    def _jobs(self, pieces: list[Piece]) -> tuple[list[tuple[int, list[Piece]]], int]:
        """Cut ``pieces`` (consumed) into whole-shard jobs; returns (jobs, next row)."""
        jobs: list[tuple[int, list[Piece]]] = []
        nxt = self._next
        pieces[:] = [p for p in pieces if len(p[0])]  # empty appends carry nothing
        while pieces:
            a, b = nxt, min((nxt // self._shard + 1) * self._shard, self.n_rows)
            need = b - a
            if need <= 0 or sum(len(p[0]) for p in pieces) < need:
                break  # (need <= 0: every declared row is placed; never loop on nothing)
            take: list[Piece] = []
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
        return jobs, nxt

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
            bad = first_nonfinite(piece)
            if bad is not None:
                r = row0 + bad
                raise self._nonfinite(r, emb[r - first] if first <= r < first + len(emb) else None)

        pieces = [(p, r0, True) for p, r0 in self._pending] + [(arr, first, False)]
        jobs, nxt = self._jobs(pieces)

        def run(job: tuple[int, list[Piece]]) -> None:
            for p, r0, ok in job[1]:
                if not ok:
                    check(p, r0)
            self._write_file(job[0], [p for p, _, _ in job[1]])

        try:
            for p, r0, ok in pieces:  # the remainder: check before keeping it
                if not ok:
                    check(p, r0)
            if self.io.missing_reads_as_fill:
                for job in jobs:
                    run(job)
            else:
                parallel(run, jobs)
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
        self._record_progress(force=self.io.missing_reads_as_fill)

    def _write_file(self, i: int, pieces: list[np.ndarray]) -> None:
        assert self._spec is not None
        self._digests[i] = self.io.write_file(self.key, self._spec, i, pieces)

    def _record_progress(self, force: bool) -> None:
        now = time.monotonic()
        if self._next != self._saved and (force or now - self._saved_at >= PROGRESS_EVERY_S):
            self.io.update_attrs(self.key, {"rows_written": self._next})
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
        spec = self._spec
        assert spec is not None
        try:
            self.io.check_written(self.key, spec)
            if self.verify_mode == "full":
                scratch = np.empty((min(self._shard, self.n_rows), self.dim), spec.dtype)
                for i in range(spec.n_files):
                    self.io.verify_file(self.key, "embeddings", spec, i, scratch,
                                        self._digests.get(i))
            missing = [i for i in range(spec.n_files) if i not in self._digests]
            if missing:
                raise CorruptEntryError(f"shard files {missing} were never written")
        except CorruptEntryError as e:
            raise CorruptEntryError(f"store entry {self.key} failed verification: {e}") from e
        from geneb.store.fingerprint import entry_fingerprint

        digests: dict[str, Any] = {
            "embeddings": [list(self._digests[i]) for i in range(spec.n_files)],
            **{k: [list(d) for d in v] for k, v in self._side_digests.items()},
        }
        self.io.update_attrs(self.key, {
            "complete": True,
            "rows_written": self.n_rows,
            "entry_fingerprint": entry_fingerprint(self.provenance),
            DIGESTS_ATTR: digests,
        })

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
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
