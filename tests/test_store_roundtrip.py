"""Feature store: round trips (property-based), plain-zarr reads, fsspec URLs, write plans."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

import geneb.store.entry_io as fsmod
from geneb.errors import (
    EntryIncompleteError,
    EntryLockedError,
    StaleEntryError,
    StoreError,
    UnknownNameError,
)
from geneb.store import FeatureStore, Provenance, StoreKey

KEY = StoreKey("org/model-1", "task_a", "train")


def prov(key: StoreKey = KEY, fp: str = "sha256:aaaa", **kw) -> Provenance:
    return Provenance(key.model, "rev1", key.task, fp, **kw)


@contextlib.contextmanager
def small_layout(inner_bytes: int, shard_bytes: int):
    """Tiny chunks so small matrices span many shards and partial inner chunks."""
    old = fsmod.INNER_BYTES, fsmod.SHARD_BYTES
    fsmod.INNER_BYTES, fsmod.SHARD_BYTES = inner_bytes, shard_bytes
    try:
        yield
    finally:
        fsmod.INNER_BYTES, fsmod.SHARD_BYTES = old


def write(store, x, key=KEY, batches=None, storage_dtype="float32", p=None, overwrite=False):
    n, d = x.shape
    labels = np.arange(n) % 3
    rows = np.arange(n) * 2 + 7
    with store.writer(
        key, provenance=p or prov(key), labels=labels, rows=rows, dim=d,
        storage_dtype=storage_dtype, overwrite=overwrite,
    ) as w:
        cuts = [0, *sorted(batches or []), n]
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if b > a:
                w.append(x[a:b])
    return labels, rows


def tree_snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=hst.integers(0, 130),
    d=hst.integers(1, 9),
    dtype=hst.sampled_from(["float32", "float16"]),
    cuts=hst.lists(hst.integers(0, 130), max_size=6),
    inner=hst.sampled_from([4, 24, 64, 4096]),
    per_shard=hst.integers(1, 5),
    seed=hst.integers(0, 2**16),
)
def test_round_trip_property(tmp_path_factory, n, d, dtype, cuts, inner, per_shard, seed):
    """Any shape, dtype, batch split and chunking reads back exactly, through geneb (full and
    random rows) and through plain zarr."""
    x = np.random.default_rng(seed).normal(0, 3, (n, d)).astype(np.float32)
    path = tmp_path_factory.mktemp("prop") / "s.zarr"
    with small_layout(inner, inner * per_shard):
        store = FeatureStore(path, mode="a")
        labels, rows = write(store, x, batches=[c for c in cuts if c <= n], storage_dtype=dtype)
    expect = x.astype(dtype)
    e = FeatureStore(path).get(*KEY.__dict__.values())
    assert e.embeddings.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(e.embeddings, expect)
    np.testing.assert_array_equal(e.labels, labels)
    np.testing.assert_array_equal(e.rows, rows)
    g = zarr.open_group(str(path), mode="r")[KEY.path]
    np.testing.assert_array_equal(g["embeddings"][...], expect)
    np.testing.assert_array_equal(g["labels"][...], labels)
    if n:
        pos = np.random.default_rng(seed + 1).integers(0, n, size=min(n, 7))
        sub = store.get_rows(KEY.model, KEY.task, KEY.split, pos)
        np.testing.assert_array_equal(sub.embeddings, expect[pos])
        np.testing.assert_array_equal(sub.labels, labels[pos])
        np.testing.assert_array_equal(sub.rows, rows[pos])
    assert store.verify() == []


def test_plain_zarr_reads_the_documented_layout(tmp_path):
    """The docs/store.md snippet, run in a fresh interpreter that never imports geneb."""
    x = np.random.default_rng(0).standard_normal((300, 16)).astype(np.float32)
    store = FeatureStore(tmp_path / "s.zarr", mode="a")
    labels, rows = write(store, x, batches=[100, 250])
    np.save(tmp_path / "x.npy", x)
    code = textwrap.dedent(
        f"""
        import sys, numpy as np, zarr
        root = zarr.open_group({str(tmp_path / "s.zarr")!r}, mode="r")
        for mname, mg in root.groups():
            for tname, tg in mg.groups():
                for split, g in tg.groups():
                    a = g.attrs
                    assert a["complete"] is True, a
                    X, y, row = g["embeddings"][:], g["labels"][:], g["row"][:]
                    rev = a["provenance"]["revision"]
                    print(a["model_id"], a["task_id"], split, X.shape, X.dtype, rev)
        assert np.array_equal(X, np.load({str(tmp_path / "x.npy")!r}))
        assert "geneb" not in sys.modules
        """
    )
    res = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", code],
        capture_output=True, text=True, timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "org/model-1 task_a train (300, 16) float32 rev1"


def test_xarray_view(tmp_path):
    xr = pytest.importorskip("xarray")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    store = FeatureStore(tmp_path / "s", mode="a")
    labels, rows = write(store, x)
    ds = store.get(KEY.model, KEY.task, KEY.split).to_xarray()
    assert isinstance(ds, xr.Dataset)
    assert ds["embeddings"].dims == ("sample", "feature")
    np.testing.assert_array_equal(ds["embeddings"].values, x)
    np.testing.assert_array_equal(ds["row"].values, rows)
    assert ds.attrs["model"] == KEY.model


@pytest.mark.parametrize("scheme", ["memory", "file"])
def test_fsspec_urls(tmp_path, scheme):
    """memory:// goes through zarr's own codec pipeline, file:// through the direct path;
    both give identical arrays and the same checks."""
    url = f"memory://geneb-test-{os.getpid()}" if scheme == "memory" else f"file://{tmp_path}/s"
    x = np.random.default_rng(3).standard_normal((700, 20)).astype(np.float32)
    with small_layout(20 * 4 * 16, 20 * 4 * 64):
        store = FeatureStore(url, mode="a")
        labels, _ = write(store, x, batches=[1, 65, 300])
    assert store.status(KEY) == "complete"
    got = FeatureStore(url).get(KEY.model, KEY.task, KEY.split)
    np.testing.assert_array_equal(got.embeddings, x)
    np.testing.assert_array_equal(got.labels, labels)
    pos = [699, 0, 64, 65, 64]
    np.testing.assert_array_equal(store.get_rows(*KEY.__dict__.values(), pos).embeddings, x[pos])
    assert store.keys() == [KEY]
    assert store.verify() == []
    if scheme == "memory":
        assert store._dir is None
        with store.lock(KEY), pytest.raises(EntryLockedError):  # in-process lock still holds
            with store.lock(KEY):
                pass


def test_read_only_mode_never_writes(tmp_path):
    root = tmp_path / "s"
    store = FeatureStore(root, mode="a")
    write(store, np.ones((50, 4), np.float32))
    before = tree_snapshot(root)
    ro = FeatureStore(root)  # mode="r"
    ro.keys(), ro.info(KEY), ro.verify(), ro.get(*KEY.__dict__.values())
    ro.get_rows(*KEY.__dict__.values(), [3, 1])
    with pytest.raises(StoreError, match="read-only"):
        ro.writer(KEY, provenance=prov(), labels=[0], rows=[0], dim=4)
    with pytest.raises(StoreError, match="read-only"):
        ro.delete(KEY)
    assert tree_snapshot(root) == before
    with pytest.raises(StoreError, match="does not exist"):
        FeatureStore(tmp_path / "nope")
    assert not (tmp_path / "nope").exists()


def test_float16_storage(tmp_path):
    x = np.random.default_rng(1).standard_normal((100, 8)).astype(np.float32)
    store = FeatureStore(tmp_path / "s", mode="a")
    write(store, x, storage_dtype="float16", p=prov(storage_dtype="float16"))
    arr = zarr.open_group(str(tmp_path / "s"), mode="r")[KEY.path]["embeddings"]
    assert arr.dtype == np.float16
    e = store.get(*KEY.__dict__.values())
    np.testing.assert_array_equal(e.embeddings, x.astype(np.float16))
    assert store.info(KEY)["dtype"] == "float16"
    big = x.copy()
    big[42, 3] = 1e6  # finite in float32, inf in float16
    with pytest.raises(StoreError, match=r"row 42 .*too large for float16"):
        write(store, big, key=StoreKey("m", "t", "test"), storage_dtype="float16")


def test_nan_refused_with_row_named(tmp_path):
    store = FeatureStore(tmp_path / "s", mode="a")
    x = np.zeros((20, 3), np.float32)
    x[13, 1] = np.nan
    with pytest.raises(StoreError, match=r"row 13 \(split-file row 33\)"):
        write(store, x, batches=[10])
    assert store.status(KEY) == "incomplete"
    with pytest.raises(EntryIncompleteError, match="incomplete"):
        store.get(*KEY.__dict__.values())
    x[13, 1] = np.inf
    with pytest.raises(StoreError, match="row 13"):
        write(store, x)


def test_plans_stale_and_overwrite(tmp_path):
    store = FeatureStore(tmp_path / "s", mode="a")
    assert store.plan(KEY, prov()).action == "write"
    x = np.random.default_rng(2).standard_normal((40, 5)).astype(np.float32)
    write(store, x)
    assert store.plan(KEY, prov()).action == "skip"
    assert store.plan(KEY, prov(), overwrite=True).action == "overwrite"
    stale = prov(fp="sha256:bbbb")
    p = store.plan(KEY, stale)
    assert p.action == "refuse" and "task_fingerprint" in p.reason and "sha256:aaaa" in p.reason
    with pytest.raises(StaleEntryError, match="task_fingerprint"):
        write(store, x + 1, p=stale)
    np.testing.assert_array_equal(store.get(*KEY.__dict__.values()).embeddings, x)
    with store.writer(KEY, provenance=prov(), labels=np.arange(40) % 3,
                      rows=np.arange(40) * 2 + 7, dim=5) as w:
        assert w.done and w.start_row == 40  # complete with the same provenance: skipped
    write(store, x + 1, p=stale, overwrite=True)
    e = store.get(*KEY.__dict__.values())
    np.testing.assert_array_equal(e.embeddings, x + 1)
    assert e.provenance.task_fingerprint == "sha256:bbbb"
    assert e.fingerprint.startswith("sha256:")
    assert store.verify() == []


def test_wrong_input_is_refused(tmp_path):
    store = FeatureStore(tmp_path / "s", mode="a")
    with pytest.raises(StoreError, match=r"shape \(b, 3\)"):
        with store.writer(KEY, provenance=prov(), labels=[0, 1], rows=[0, 1], dim=3) as w:
            w.append(np.zeros((2, 4), np.float32))
    with pytest.raises(StoreError, match="more rows than the 2"):
        with store.writer(KEY, provenance=prov(), labels=[0, 1], rows=[0, 1], dim=3) as w:
            w.append(np.zeros((3, 3), np.float32))
    with pytest.raises(StoreError, match="got 1 of 2 rows"):
        with store.writer(KEY, provenance=prov(), labels=[0, 1], rows=[0, 1], dim=3) as w:
            w.append(np.zeros((1, 3), np.float32))
    with pytest.raises(StoreError, match="labels .* must be equal"):
        store.writer(KEY, provenance=prov(), labels=[0, 1], rows=[0], dim=3)
    with pytest.raises(StoreError, match="storage dtype"):
        store.writer(KEY, provenance=prov(), labels=[0], rows=[0], dim=3, storage_dtype="int8")


def test_unknown_key_did_you_mean_and_rows_outside(tmp_path):
    store = FeatureStore(tmp_path / "s", mode="a")
    write(store, np.ones((5, 2), np.float32))
    with pytest.raises(UnknownNameError, match="Did you mean 'org/model-1/task_a/train'"):
        store.get("org/model-1", "task_b", "train")
    with pytest.raises(UnknownNameError):
        store.info(StoreKey("x", "y", "train"))
    with pytest.raises(StoreError, match="row position 5 is outside"):
        store.get_rows(*KEY.__dict__.values(), [0, 5])


def test_original_ids_kept_and_no_zarr_warnings(tmp_path):
    """Parent groups carry the original ids; nothing in the store confuses zarr's listing
    (the lock lives on the group folder itself, not in a file zarr would list)."""
    store = FeatureStore(tmp_path / "s", mode="a")
    keys = [StoreKey("hf-org/Model:v2", "t/1", "test"), StoreKey("kmer-5", "t", "train")]
    for k in keys:
        write(store, np.ones((3, 2), np.float32), key=k)
        with store.lock(k):
            pass
    assert store.keys() == sorted(keys)
    root = zarr.open_group(str(tmp_path / "s"), mode="r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        members = dict(root.members(max_depth=None))
    mg = members[keys[0].path.split("/")[0]]
    assert mg.attrs["model_id"] == "hf-org/Model:v2"
    assert members[keys[0].path.rsplit("/", 1)[0]].attrs["task_id"] == "t/1"
    assert all(not p.name.startswith(".") for p in (tmp_path / "s").rglob("*"))


def test_exception_inside_writer_leaves_incomplete_and_resumes(tmp_path):
    x = np.random.default_rng(5).standard_normal((200, 6)).astype(np.float32)
    with small_layout(6 * 4 * 8, 6 * 4 * 32):  # 32-row shards
        store = FeatureStore(tmp_path / "s", mode="a")
        with pytest.raises(RuntimeError, match="boom"):
            with store.writer(KEY, provenance=prov(), labels=np.arange(200) % 3,
                              rows=np.arange(200) * 2 + 7, dim=6) as w:
                w.append(x[:70])
                raise RuntimeError("boom")
        assert store.status(KEY) == "incomplete"
        assert store.plan(KEY, prov()).action == "resume"
        assert store.plan(KEY, prov()).start_row == 64  # whole shards only
        part = store.get(*KEY.__dict__.values(), allow_incomplete=True)
        np.testing.assert_array_equal(part.embeddings, x[:64])
        with store.writer(KEY, provenance=prov(), labels=np.arange(200) % 3,
                          rows=np.arange(200) * 2 + 7, dim=6) as w:
            assert w.start_row == 64
            w.append(x[64:])
    np.testing.assert_array_equal(store.get(*KEY.__dict__.values()).embeddings, x)


def test_memory_store_resume_and_stale_refusal():
    """The zarr (fsspec) path keeps the same contract: interrupted -> incomplete, resume from
    the recorded whole shards, stale provenance refused."""
    url = f"memory://geneb-resume-{os.getpid()}"
    x = np.random.default_rng(9).standard_normal((150, 6)).astype(np.float32)
    labels, rows = np.arange(150) % 3, np.arange(150) * 2 + 7
    with small_layout(6 * 4 * 8, 6 * 4 * 32):  # 32-row shards
        store = FeatureStore(url, mode="a")
        with pytest.raises(RuntimeError):
            with store.writer(KEY, provenance=prov(), labels=labels, rows=rows, dim=6) as w:
                w.append(x[:100])
                raise RuntimeError("stop")
        assert store.status(KEY) == "incomplete" and store.plan(KEY, prov()).start_row == 96
        with pytest.raises(StaleEntryError):
            store.writer(KEY, provenance=prov(fp="other"), labels=labels, rows=rows,
                         dim=6).__enter__()
        with store.writer(KEY, provenance=prov(), labels=labels, rows=rows, dim=6) as w:
            assert w.start_row == 96
            w.append(x[96:])
    np.testing.assert_array_equal(store.get(*KEY.__dict__.values()).embeddings, x)


def test_lock_leaves_no_empty_folder(tmp_path):
    store = FeatureStore(tmp_path / "s", mode="a")
    with store.lock(KEY):
        assert (tmp_path / "s" / KEY.path).is_dir()
    assert not (tmp_path / "s" / KEY.path).exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dict(zarr.open_group(str(tmp_path / "s"), mode="r").members(max_depth=None))


def test_nan_in_a_shard_written_by_a_pool_thread(tmp_path):
    """Shards completed by one append are checked and written in parallel threads: the error
    still names the row, nothing reads as complete, and the writer refuses more rows."""
    x = np.random.default_rng(4).standard_normal((256, 8)).astype(np.float32)
    x[200, 5] = np.nan
    with small_layout(8 * 4 * 4, 8 * 4 * 32):  # 32-row shards: 8 shards in one append
        store = FeatureStore(tmp_path / "s", mode="a")
        with pytest.raises(StoreError, match=r"NaN/inf\) at row 200 "):
            with store.writer(KEY, provenance=prov(), labels=np.arange(256) % 3,
                              rows=np.arange(256) * 2 + 7, dim=8) as w:
                try:
                    w.append(x)
                finally:
                    with pytest.raises(StoreError, match="earlier append .* failed"):
                        w.append(x[:1])
    assert store.status(KEY) == "incomplete"
    with pytest.raises(EntryIncompleteError):
        store.get(*KEY.__dict__.values())


@pytest.mark.timeout(60)
def test_empty_appends_never_loop(tmp_path):
    """An append of no rows (after all rows, or as the whole of a 0-row entry) is a no-op;
    it used to loop forever, growing memory, when the next shard needed 0 rows."""
    store = FeatureStore(tmp_path / "s", mode="a")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with store.writer(KEY, provenance=prov(), labels=[0, 1], rows=[0, 1], dim=3) as w:
        w.append(np.zeros((0, 3), np.float32))
        w.append(x)
        w.append(np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(store.get(*KEY.__dict__.values()).embeddings, x)
    empty = StoreKey("m", "t", "empty")
    try:
        with store.writer(empty, provenance=prov(empty), labels=np.zeros(0, np.int64),
                          rows=np.zeros(0, np.int64), dim=3) as w:
            w.append(np.zeros((0, 3), np.float32))
    except StoreError:
        pass  # refusing an empty entry is fine; hanging is not
