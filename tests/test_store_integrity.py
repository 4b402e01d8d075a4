"""Feature store: corrupted bytes on disk are reported, never returned as numbers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zarr

import geneb.store.entry_io as fsmod
from geneb.errors import CorruptEntryError
from geneb.store import FeatureStore, Provenance, StoreKey, _direct

KEY = StoreKey("m", "t", "train")
N, D = 256, 8  # 4-row inner chunks (128 B), 32-row shards: 8 shard files


@pytest.fixture
def store(tmp_path, monkeypatch) -> FeatureStore:
    monkeypatch.setattr(fsmod, "INNER_BYTES", 4 * D * 4)
    monkeypatch.setattr(fsmod, "SHARD_BYTES", 32 * D * 4)
    st = FeatureStore(tmp_path / "s", mode="a")
    x = np.random.default_rng(0).standard_normal((N, D)).astype(np.float32)
    with st.writer(KEY, provenance=Provenance("m", "r", "t", "fp"), labels=np.arange(N) % 2,
                   rows=np.arange(N), dim=D) as w:
        w.append(x)
    st.x = x  # type: ignore[attr-defined]
    return st


def shard_file(st: FeatureStore, i: int) -> Path:
    return st._dir / KEY.path / "embeddings" / f"c.{i}.0"


def flip(path: Path, offset: int) -> None:
    b = bytearray(path.read_bytes())
    b[offset] ^= 0x01
    path.write_bytes(bytes(b))


def test_layout_is_what_the_docs_say(store):
    arr = zarr.open_group(str(store._dir), mode="r")[KEY.path]["embeddings"]
    assert (arr.shards, arr.chunks) == ((32, D), (4, D))  # zarr's own reading of the metadata
    lay = store._io.spec(KEY, "embeddings").impl
    assert (lay.chunk_rows, lay.inner_rows, lay.sep, lay.dtype) == (32, 4, ".", np.float32)
    meta = json.loads((store._dir / KEY.path / "embeddings" / "zarr.json").read_text())
    shard = meta["codecs"][0]
    assert shard["name"] == "sharding_indexed"
    assert [c["name"] for c in shard["configuration"]["codecs"]] == ["bytes", "crc32c"]
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [32, D]
    assert meta["chunk_key_encoding"] == {"name": "default", "configuration": {"separator": "."}}
    assert shard["configuration"]["chunk_shape"] == [4, D]
    # independent reference: each inner chunk = raw rows + crc32c, as zarr's codec computes it
    raw = shard_file(store, 1).read_bytes()
    unit = 4 * D * 4
    first = store.x[32:36].tobytes()
    assert raw[:unit] == first
    import google_crc32c  # what zarr's Crc32cCodec uses (geneb uses the crc32c package)

    assert raw[unit : unit + 4] == np.uint32(google_crc32c.value(first)).tobytes()


@pytest.mark.parametrize("where", ["data", "crc", "index"])
def test_flipped_byte_in_a_shard_is_reported(store, where):
    f = shard_file(store, 3)
    size = f.stat().st_size
    unit = 4 * D * 4
    offset = {"data": 2 * (unit + 4) + 17, "crc": unit + 1, "index": size - 10}[where]
    flip(f, offset)
    with pytest.raises(CorruptEntryError, match=r"c\.3\.0"):
        store.get(KEY.model, KEY.task, KEY.split)
    problems = store.verify()
    assert len(problems) == 1 and problems[0][0] == KEY and "corrupt" in problems[0][1]
    # plain zarr (its own crc32c codec) refuses the same bytes: the checksums are zarr's
    with pytest.raises(Exception, match="(?i)checksum"):
        zarr.open_group(str(store._dir), mode="r")[KEY.path]["embeddings"][96:128]
    # a random-row read touching the bad chunk fails; one elsewhere still works
    bad_row = 96 + (2 * 4 if where == "data" else 0)
    with pytest.raises(CorruptEntryError):
        store.get_rows(KEY.model, KEY.task, KEY.split, [5, bad_row])
    ok = store.get_rows(KEY.model, KEY.task, KEY.split, [5, 200])
    np.testing.assert_array_equal(ok.embeddings, store.x[[5, 200]])


def test_flipped_byte_in_labels_is_reported(store):
    f = store._dir / KEY.path / "labels" / "c.0"
    flip(f, 40)
    with pytest.raises(CorruptEntryError, match="checksum mismatch"):
        store.get(KEY.model, KEY.task, KEY.split)
    assert "corrupt" in store.verify()[0][1]


def test_missing_or_truncated_shard_is_reported(store):
    f = shard_file(store, 7)
    f.write_bytes(f.read_bytes()[:100])
    with pytest.raises(CorruptEntryError, match="truncated"):
        store.get(KEY.model, KEY.task, KEY.split)
    f.unlink()
    with pytest.raises(CorruptEntryError, match="missing"):
        store.get(KEY.model, KEY.task, KEY.split)
    assert "missing" in store.verify()[0][1]


def _layout_of(array_dir):
    """The direct path's layout of an array folder, as ``DirectIO`` reads it (None: zarr's)."""
    return _direct.layout_from_meta(array_dir, json.loads((array_dir / "zarr.json").read_text()))


def test_zarr_written_shards_read_by_direct_path(tmp_path):
    """Bytes written by zarr itself (non-geneb writer) decode identically on the fast path."""
    g = zarr.open_group(str(tmp_path / "z"), mode="w")
    x = np.random.default_rng(1).standard_normal((100, 6)).astype(np.float32)
    a = g.create_array("e", shape=x.shape, dtype="float32", chunks=(7, 6), shards=(28, 6),
                       compressors=[zarr.codecs.Crc32cCodec()], fill_value=0.0)
    a[:] = x
    lay = _layout_of(tmp_path / "z" / "e")
    assert lay is not None and (lay.chunk_rows, lay.inner_rows) == (28, 7)
    np.testing.assert_array_equal(_direct.read_all(lay), x)
    np.testing.assert_array_equal(_direct.read_rows(lay, [99, 0, 50]), x[[99, 0, 50]])
    g.create_array("z", shape=x.shape, dtype="float32", chunks=(7, 6), shards=(28, 6))
    assert _layout_of(tmp_path / "z" / "z") is None  # zstd: not for the direct path


def test_zarr_empty_inner_chunks_read_as_zeros(tmp_path):
    """zarr skips inner chunks equal to the fill value (index entry 2**64-1): the direct path
    returns zeros for them, as zarr does, and still checks the other chunks."""
    g = zarr.open_group(str(tmp_path / "z"), mode="w")
    x = np.random.default_rng(2).standard_normal((60, 3)).astype(np.float32)
    x[7:14] = 0.0  # inner chunk 1 (rows 7..13) all zeros -> not stored by zarr
    a = g.create_array("e", shape=x.shape, dtype="float32", chunks=(7, 3), shards=(28, 3),
                       compressors=[zarr.codecs.Crc32cCodec()], fill_value=0.0)
    a[:] = x
    lay = _layout_of(tmp_path / "z" / "e")
    raw = (tmp_path / "z" / "e" / "c" / "0" / "0").read_bytes()
    index = np.frombuffer(raw[-(4 * 16 + 4) : -4], dtype="<u8").reshape(4, 2)
    assert index[1, 0] == 2**64 - 1  # the premise: zarr really left it out
    np.testing.assert_array_equal(_direct.read_all(lay), x)
    np.testing.assert_array_equal(_direct.read_rows(lay, [8, 0, 59]), x[[8, 0, 59]])
    with pytest.raises(CorruptEntryError, match="missing"):
        _direct.check_index(lay, 0)  # geneb's own writer never leaves one


def test_full_verification_on_close_catches_a_bad_shard(tmp_path, monkeypatch):
    """verify="full" re-reads every byte before marking complete: a shard damaged between
    write and close is caught and the entry stays incomplete."""
    monkeypatch.setattr(fsmod, "INNER_BYTES", 4 * D * 4)
    monkeypatch.setattr(fsmod, "SHARD_BYTES", 32 * D * 4)
    st = FeatureStore(tmp_path / "s", mode="a")
    x = np.random.default_rng(3).standard_normal((64, D)).astype(np.float32)
    with pytest.raises(CorruptEntryError, match="failed verification.*checksum"):
        with st.writer(KEY, provenance=Provenance("m", "r", "t", "fp"), labels=np.zeros(64, int),
                       rows=np.arange(64), dim=D, verify="full") as w:
            w.append(x[:32])
            flip(shard_file(st, 0), 7)  # damaged after it was written
            w.append(x[32:])
    assert st.status(KEY) == "incomplete"
