"""One suite that every store implementation runs (zarr-python style): the direct path on a
local folder, zarr through fsspec on a local folder (``local://``) and zarr in memory
(``memory://``). Same public API, same answers, same refusals. Small data made here (no
../shared); the reference for every number is the numpy matrix that was written.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import fsspec
import numpy as np
import pytest

import geneb.store.entry_io as eio
from geneb.errors import (
    CorruptEntryError,
    EntryIncompleteError,
    StaleEntryError,
    StoreError,
    UnknownNameError,
)
from geneb.store import FeatureStore, Provenance, StoreKey

KEY = StoreKey("org/model", "task_a", "train")
N, D = 150, 6  # 4-row inner chunks, 32-row shards: 5 shard files, the last one partial
_ids = itertools.count()


class Backend:
    """A store URL plus raw access to its files (to damage them as a user or attacker would)."""

    def __init__(self, kind: str, tmp: Path) -> None:
        self.kind = kind
        if kind == "memory":
            self.fs = fsspec.filesystem("memory")
            self.base = f"/geneb-suite-{next(_ids)}"
            self.url = f"memory://{self.base}"
        else:
            self.fs = fsspec.filesystem("file")
            self.base = str(tmp / "store")
            self.url = self.base if kind == "direct" else f"local://{self.base}"

    def path(self, rel: str) -> str:
        return f"{self.base}/{rel}"

    def read(self, rel: str) -> bytes:
        return self.fs.cat_file(self.path(rel))

    def write(self, rel: str, data: bytes) -> None:
        self.fs.pipe_file(self.path(rel), data)

    def swap(self, a: str, b: str) -> None:
        da, db = self.read(a), self.read(b)
        self.write(a, db)
        self.write(b, da)


@pytest.fixture(params=["direct", "zarr-local", "memory"])
def backend(request, tmp_path, monkeypatch) -> Backend:
    monkeypatch.setattr(eio, "INNER_BYTES", 4 * D * 4)
    monkeypatch.setattr(eio, "SHARD_BYTES", 32 * D * 4)
    b = Backend(request.param, tmp_path)
    yield b
    if b.kind == "memory":
        b.fs.rm(b.base, recursive=True)


def prov(storage_dtype: str = "float32", fp: str = "sha256:f") -> Provenance:
    return Provenance(KEY.model, "rev", KEY.task, fp, storage_dtype=storage_dtype)


X = np.random.default_rng(3).standard_normal((N, D)).astype(np.float32)
LABELS = np.arange(N) % 3
ROWS = np.arange(N) * 2 + 5


def write(st: FeatureStore, x=X, *, stop_after=None, storage_dtype="float32", overwrite=False,
          p=None) -> None:
    with st.writer(KEY, provenance=p or prov(storage_dtype), labels=LABELS, rows=ROWS, dim=D,
                   storage_dtype=storage_dtype, overwrite=overwrite) as w:
        if w.done:
            return
        end = N if stop_after is None else stop_after
        for a in range(w.start_row, end, 17):  # batches that do not align with shards
            w.append(x[a : min(a + 17, end)])
        if stop_after is not None:
            raise KeyboardInterrupt


def args() -> tuple[str, str, str]:
    return KEY.model, KEY.task, KEY.split


EMB = f"{KEY.path}/embeddings"


def test_round_trip_and_listing(backend):
    st = FeatureStore(backend.url, mode="a")
    assert st.keys() == [] and st.status(KEY) == "missing"
    write(st)
    ro = FeatureStore(backend.url)
    assert ro.keys() == [KEY] and ro.keys(complete_only=True) == [KEY]
    assert ro.status(KEY) == "complete"
    e = ro.get(*args())
    np.testing.assert_array_equal(e.embeddings, X)
    np.testing.assert_array_equal(e.labels, LABELS)
    np.testing.assert_array_equal(e.rows, ROWS)
    assert e.provenance.task_fingerprint == "sha256:f" and e.fingerprint.startswith("sha256:")
    pos = [149, 0, 33, 33, 96]
    few = ro.get_rows(*args(), pos)
    np.testing.assert_array_equal(few.embeddings, X[pos])
    np.testing.assert_array_equal(few.labels, LABELS[pos])
    lab, row, dim = ro.labels_rows(*args())
    np.testing.assert_array_equal(lab, LABELS)
    np.testing.assert_array_equal(row, ROWS)
    assert dim == D
    info = ro.info(KEY)
    assert info["shape"] == [N, D] and info["dtype"] == "float32" and info["n_rows"] == N
    assert ro.entry_attrs(KEY)["complete"] is True
    assert ro.provenance(KEY).revision == "rev"
    assert ro.verify() == []


def test_interrupted_entry_resumes_to_the_same_bytes(backend):
    st = FeatureStore(backend.url, mode="a")
    with pytest.raises(KeyboardInterrupt):
        write(st, stop_after=70)
    assert st.status(KEY) == "incomplete"
    with pytest.raises(EntryIncompleteError, match="incomplete"):
        st.get(*args())
    part = st.get(*args(), allow_incomplete=True)
    np.testing.assert_array_equal(part.embeddings, X[: len(part.embeddings)])
    assert st.plan(KEY, prov()).action == "resume"
    assert any("incomplete" in what for _, what in st.verify())
    write(st)
    np.testing.assert_array_equal(FeatureStore(backend.url).get(*args()).embeddings, X)
    assert st.verify() == []


def test_plans_storage_dtype_and_overwrite(backend):
    st = FeatureStore(backend.url, mode="a")
    assert st.plan(KEY, prov()).action == "write"
    write(st)
    assert st.plan(KEY, prov()).action == "skip"
    p = st.plan(KEY, prov("float16"))
    assert p.action == "refuse" and "storage_dtype" in p.reason
    assert st.plan(KEY, prov(fp="sha256:g")).action == "refuse"
    with pytest.raises(StaleEntryError, match="storage_dtype"):
        write(st, storage_dtype="float16")
    write(st, storage_dtype="float16", overwrite=True)
    e = st.get(*args())
    assert e.embeddings.dtype == np.float16
    np.testing.assert_array_equal(e.embeddings, X.astype(np.float16))


def test_edited_data_type_refused(backend):
    st = FeatureStore(backend.url, mode="a")
    write(st)
    meta = json.loads(backend.read(f"{EMB}/zarr.json"))
    meta["data_type"] = "int32"
    backend.write(f"{EMB}/zarr.json", json.dumps(meta).encode())
    with pytest.raises(CorruptEntryError, match="int32"):
        st.get(*args())
    with pytest.raises(CorruptEntryError, match="int32"):
        st.get_rows(*args(), [1])
    assert any("int32" in what for _, what in st.verify())


def test_metadata_not_json_is_a_store_error(backend):
    st = FeatureStore(backend.url, mode="a")
    write(st)
    backend.write(f"{EMB}/zarr.json", b"\x00 not json")
    with pytest.raises(CorruptEntryError, match="embeddings"):
        st.get(*args())
    assert st.verify()


def test_swapped_shards_detected(backend):
    st = FeatureStore(backend.url, mode="a")
    write(st)
    backend.swap(f"{EMB}/c.0.0", f"{EMB}/c.2.0")
    problems = st.verify()
    assert problems and "position" in problems[0][1]
    with pytest.raises(CorruptEntryError, match="position"):
        st.get(*args())
    with pytest.raises(CorruptEntryError, match="position"):
        st.get_rows(*args(), [70])  # a row of shard 2


def test_flipped_byte_detected(backend):
    st = FeatureStore(backend.url, mode="a")
    write(st)
    raw = bytearray(backend.read(f"{EMB}/c.1.0"))
    raw[10] ^= 0x04
    backend.write(f"{EMB}/c.1.0", bytes(raw))
    with pytest.raises(CorruptEntryError):
        st.get(*args())
    assert "corrupt" in st.verify()[0][1]


def test_delete_unknown_and_read_only(backend):
    st = FeatureStore(backend.url, mode="a")
    write(st)
    ro = FeatureStore(backend.url)
    with pytest.raises(StoreError, match="read-only"):
        write(ro)
    with pytest.raises(UnknownNameError, match="Did you mean"):
        ro.get(KEY.model, KEY.task, "test")
    st.delete(KEY)
    assert st.status(KEY) == "missing" and st.keys() == []


def test_non_store_zarr_group_refused(backend):
    import zarr

    if backend.kind == "direct":
        zarr.open_group(backend.base, mode="w").create_group("other")
    else:
        opts = {"auto_mkdir": True} if backend.kind == "zarr-local" else None
        zarr.open_group(backend.url, mode="w", storage_options=opts).create_group("other")
    with pytest.raises(StoreError, match="not a geneb store"):
        FeatureStore(backend.url, mode="a")
    with pytest.raises(StoreError, match="not a geneb store"):
        FeatureStore(backend.url)


def test_the_implementations_write_the_same_bytes(tmp_path, monkeypatch):
    """The direct path and zarr produce byte-identical shard files for the same rows, and
    each reads what the other wrote (digests included)."""
    monkeypatch.setattr(eio, "INNER_BYTES", 4 * D * 4)
    monkeypatch.setattr(eio, "SHARD_BYTES", 32 * D * 4)
    a, b = tmp_path / "direct", tmp_path / "zarr"
    write(FeatureStore(a, mode="a"))
    write(FeatureStore(f"local://{b}", mode="a"))
    for i in range(5):
        assert (a / EMB / f"c.{i}.0").read_bytes() == (b / EMB / f"c.{i}.0").read_bytes()
    assert (FeatureStore(a).entry_attrs(KEY)["shard_digests"]
            == FeatureStore(b).entry_attrs(KEY)["shard_digests"])
    np.testing.assert_array_equal(FeatureStore(b).get(*args()).embeddings, X)
    np.testing.assert_array_equal(FeatureStore(f"local://{a}").get(*args()).embeddings, X)


def test_broken_entry_metadata_is_a_store_error(backend):
    """An entry's group metadata that is not JSON: a one-line error and a verify problem
    (local stores: the folder; zarr stores: why the entries cannot be listed)."""
    st = FeatureStore(backend.url, mode="a")
    write(st)
    backend.write(f"{KEY.path}/zarr.json", b"{not json")
    with pytest.raises(StoreError):
        st.get(*args())
    problems = st.verify()
    assert problems and any("json" in what.lower() for _, what in problems)
    if backend.kind == "direct":
        assert any(KEY.path in str(where) for where, _ in problems)
