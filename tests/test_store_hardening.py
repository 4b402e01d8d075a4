"""Feature store under attack and careless use (issue 15): one regression test per case.

Every test builds its own small store (no ../shared). Each reproduces the reported behaviour
first (the assertion that failed before the fix) and then checks the fixed behaviour against
an independent reference (the numpy matrix that was written, bytes on disk, ``os.stat``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import geneb.store.entry_io as eio
from geneb.cli import app
from geneb.errors import CorruptEntryError, StaleEntryError, StoreError
from geneb.store import FeatureStore, Provenance, StoreKey

KEY = StoreKey("org/m", "t", "train")
OTHER = StoreKey("org/m", "t", "test")
N, D = 256, 8  # 4-row inner chunks, 32-row shards: 8 shard files
runner = CliRunner()


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(eio, "INNER_BYTES", 4 * D * 4)
    monkeypatch.setattr(eio, "SHARD_BYTES", 32 * D * 4)


def prov(storage_dtype: str = "float32", key: StoreKey = KEY) -> Provenance:
    return Provenance(key.model, "rev", key.task, "sha256:fp", storage_dtype=storage_dtype)


def matrix(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, D)).astype(np.float32)


def write(path, x, key=KEY, *, stop_after: int | None = None, storage_dtype="float32",
          overwrite=False) -> FeatureStore:
    """Write ``x`` (resuming where the store says); ``stop_after`` rows: interrupt there."""
    st = FeatureStore(path, mode="a")
    try:
        with st.writer(key, provenance=prov(storage_dtype, key), labels=np.arange(N) % 2,
                       rows=np.arange(N), dim=D, storage_dtype=storage_dtype,
                       overwrite=overwrite) as w:
            if w.done:
                return st
            end = N if stop_after is None else stop_after
            for a in range(w.start_row, end, 32):
                w.append(x[a : min(a + 32, end)])
            if stop_after is not None:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    return st


def edir(path: Path, key: StoreKey = KEY) -> Path:
    return path / key.path / "embeddings"


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def cli(*args) -> object:
    return runner.invoke(app, [*map(str, args)])


# ----------------------------------------------------------------------------------- symlinks
def test_symlinked_shard_is_never_written_through(tmp_path):
    path, x = tmp_path / "s", matrix()
    write(path, x, stop_after=128)  # shards 0..3 on disk, entry incomplete
    outside = tmp_path / "precious.bin"
    outside.write_bytes(b"user data " * 100)
    before = outside.read_bytes()
    shard = edir(path) / "c.1.0"
    shard.unlink()
    shard.symlink_to(outside)
    st = write(path, x)  # the rerun: resumes, rewrites shard 1
    assert outside.read_bytes() == before  # was: overwritten with shard bytes
    assert not shard.is_symlink()
    np.testing.assert_array_equal(st.get(*KEY.__dict__.values()).embeddings, x)
    assert st.verify() == []


def test_verify_reports_a_symlinked_shard_even_with_valid_bytes(tmp_path):
    path, x = tmp_path / "s", matrix()
    st = write(path, x)
    shard = edir(path) / "c.2.0"
    copy = tmp_path / "copy.bin"
    shutil.copyfile(shard, copy)
    shard.unlink()
    shard.symlink_to(copy)  # checksums all pass through the link
    problems = st.verify()
    assert problems and "symlink" in problems[0][1]  # was: []
    with pytest.raises(CorruptEntryError, match="symlink"):
        st.get(*KEY.__dict__.values())
    r = cli("store", "verify", "--store", path)
    assert r.exit_code == 1 and "symlink" in r.output


def test_symlinked_embeddings_folder_refused(tmp_path):
    path, x = tmp_path / "s", matrix()
    write(path, x)
    outside = tmp_path / "elsewhere"
    shutil.move(edir(path), outside)
    edir(path).symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    st = FeatureStore(path)
    assert any("symlink" in what for _, what in st.verify())
    with pytest.raises(StoreError, match="symlink"):
        write(path, matrix(1), overwrite=True)
    meta_path = path / KEY.path / "zarr.json"  # the entry marked incomplete, extract rerun
    meta = json.loads(meta_path.read_text())
    meta["attributes"]["complete"] = False
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(StoreError, match="symlink"):
        write(path, matrix(1))
    assert snapshot(outside) == before  # nothing written or deleted out there
    # the link itself is still there: the user decides what to do with it
    assert edir(path).is_symlink()


# ------------------------------------------------------------------------- broken metadata
@pytest.mark.parametrize("how", ["delete", "garbage", "not-a-group"])
def test_entry_with_missing_or_broken_metadata_is_reported(tmp_path, how):
    path = tmp_path / "s"
    write(path, matrix())
    write(path, matrix(1), OTHER)
    meta = path / KEY.path / "zarr.json"
    if how == "delete":
        meta.unlink()
    elif how == "garbage":
        meta.write_text("{not json")
    else:
        meta.write_text(json.dumps({"zarr_format": 3, "node_type": "array"}))
    st = FeatureStore(path)
    problems = st.verify()
    assert problems, "was: [] (the entry silently vanished)"
    assert any(KEY.path in str(where) for where, _ in problems)
    r = cli("store", "verify", "--store", path)
    assert r.exit_code == 1, r.output
    assert KEY.path in r.output and "metadata" in r.output
    r = cli("store", "ls", "--store", path)
    assert r.exit_code == 0 and "store verify" in r.output  # ls points at the problem
    if how != "delete":  # a rerun refuses the broken entry unless told to replace it
        with pytest.raises(StaleEntryError, match="broken"):
            write(path, matrix())
    st = write(path, matrix(), overwrite=True)
    np.testing.assert_array_equal(st.get(*KEY.__dict__.values()).embeddings, matrix())
    assert st.verify() == []


def test_model_level_metadata_deleted_is_reported(tmp_path):
    path = tmp_path / "s"
    write(path, matrix())
    (path / "org--m" / "zarr.json").unlink()
    r = cli("store", "verify", "--store", path)
    assert r.exit_code == 1, r.output  # was: 0 with "0 of 0 entries OK"
    assert "org--m" in r.output and "metadata" in r.output


# --------------------------------------------------------------- metadata vs attributes
@pytest.mark.parametrize(("array", "new"), [("embeddings", "int32"), ("labels", "float64"),
                                            ("row", "int32")])
def test_edited_data_type_is_refused(tmp_path, array, new):
    path = tmp_path / "s"
    st = write(path, matrix())
    meta_path = path / KEY.path / array / "zarr.json"
    meta = json.loads(meta_path.read_text())
    meta["data_type"] = new
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CorruptEntryError, match=f"{array}.*{new}"):
        st.get(*KEY.__dict__.values())  # was: int32 garbage returned
    if array != "embeddings":
        with pytest.raises(CorruptEntryError, match=new):
            st.labels_rows(*KEY.__dict__.values())
    with pytest.raises(CorruptEntryError, match=new):
        st.get_rows(*KEY.__dict__.values(), [0, 5])
    assert any(new in what for _, what in st.verify())
    r = cli("store", "export", "--store", path, "-m", KEY.model, "-t", KEY.task, "-s", KEY.split,
            "-o", tmp_path / "x.npz")
    assert r.exit_code == 2 and "error:" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "x.npz").exists()
    r = cli("store", "ls", "--store", path)
    assert r.exit_code == 0 and "corrupt" in r.output


def test_edited_shape_is_refused(tmp_path):
    path = tmp_path / "s"
    st = write(path, matrix())
    meta_path = edir(path) / "zarr.json"
    meta = json.loads(meta_path.read_text())
    meta["shape"] = [N - 32, D]
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CorruptEntryError, match="shape"):
        st.get(*KEY.__dict__.values())
    assert st.verify()


# ------------------------------------------------------------------------------ swapped shards
def test_swapped_shards_are_detected(tmp_path):
    path = tmp_path / "s"
    st = write(path, matrix())
    a, b = edir(path) / "c.1.0", edir(path) / "c.2.0"
    tmp = edir(path) / "swap"
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)
    problems = st.verify()
    assert problems and "c.1.0" in problems[0][1]  # was: []
    with pytest.raises(CorruptEntryError, match="position"):
        st.get(*KEY.__dict__.values())
    with pytest.raises(CorruptEntryError, match="position"):
        st.get_rows(*KEY.__dict__.values(), [40])  # a row of shard 1


def test_swapped_labels_and_row_files_are_detected(tmp_path):
    path = tmp_path / "s"
    st = write(path, matrix())
    lab, row = path / KEY.path / "labels" / "c.0", path / KEY.path / "row" / "c.0"
    lb, rb = lab.read_bytes(), row.read_bytes()
    lab.write_bytes(rb)
    row.write_bytes(lb)
    with pytest.raises(CorruptEntryError, match="position"):
        st.labels_rows(*KEY.__dict__.values())
    assert st.verify()


# -------------------------------------------------------------------------- metadata not JSON
def test_embeddings_metadata_not_json_is_a_one_line_error(tmp_path):
    path = tmp_path / "s"
    st = write(path, matrix())
    meta = edir(path) / "zarr.json"
    meta.write_text("\x00garbage")
    with pytest.raises(CorruptEntryError, match=r"embeddings/zarr\.json"):
        st.get(*KEY.__dict__.values())  # was: json.JSONDecodeError
    assert any("zarr.json" in what for _, what in st.verify())
    for args in (("store", "verify", "--store", path),
                 ("store", "export", "--store", path, "-m", KEY.model, "-t", KEY.task, "-s", KEY.split,
                  "-o", tmp_path / "x.npz"),
                 ("store", "info", "--store", path, "-m", KEY.model, "-t", KEY.task, "-s", KEY.split)):
        r = cli(*args)
        assert r.exit_code in (1, 2), r.output
        assert "Traceback" not in r.output and "JSONDecodeError" not in r.output
        assert "zarr.json" in r.output


# ------------------------------------------------------------------- not a store folder
def test_existing_non_store_folder_is_refused(tmp_path):
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "train.csv").write_text("sequence,label\nACGT,0\n")
    before = snapshot(folder)
    with pytest.raises(StoreError, match="not a geneb store"):
        FeatureStore(folder, mode="a")  # was: a store created inside it
    with pytest.raises(StoreError, match="not a geneb store"):
        FeatureStore(folder, mode="r")
    assert snapshot(folder) == before and sorted(os.listdir(folder)) == ["train.csv"]
    plain = tmp_path / "plain_zarr"
    import zarr

    zarr.open_group(str(plain), mode="w").create_group("x")
    with pytest.raises(StoreError, match="not a geneb store"):
        FeatureStore(plain, mode="a")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(StoreError, match="not a folder"):
        FeatureStore(a_file, mode="a")
    empty = tmp_path / "empty"
    empty.mkdir()
    FeatureStore(empty, mode="a")  # an empty folder becomes a store
    assert FeatureStore(empty).keys() == []
    FeatureStore(empty, mode="a")  # an existing store opens again


# -------------------------------------------------------------------------- storage dtype
def test_storage_dtype_change_is_stale(tmp_path):
    path, x = tmp_path / "s", matrix()
    st = write(path, x)
    p = st.plan(KEY, prov("float16"))
    assert p.action == "refuse" and "storage_dtype" in p.reason  # was: skip
    assert "float32" in p.reason and "float16" in p.reason
    with pytest.raises(StaleEntryError, match="storage_dtype"):
        write(path, x, storage_dtype="float16")
    write(path, x, storage_dtype="float16", overwrite=True)
    e = FeatureStore(path).get(*KEY.__dict__.values())
    assert e.embeddings.dtype == np.float16
    np.testing.assert_array_equal(e.embeddings, x.astype(np.float16))
    assert e.provenance.storage_dtype == "float16"


def test_writer_records_the_dtype_it_stores(tmp_path):
    """A provenance saying float32 with storage_dtype='float16' must not record float32."""
    st = FeatureStore(tmp_path / "s", mode="a")
    with st.writer(KEY, provenance=prov("float32"), labels=np.zeros(4, int), rows=np.arange(4),
                   dim=D, storage_dtype="float16") as w:
        w.append(np.ones((4, D), np.float32))
    assert st.provenance(KEY).storage_dtype == "float16"
    assert st.plan(KEY, prov("float32")).action == "refuse"


# ------------------------------------------------------------------------------- disk full
def test_disk_full_is_a_one_line_error_and_resumable(tmp_path, monkeypatch):
    path, x = tmp_path / "s", matrix()
    write(path, matrix(5), OTHER)
    complete_before = snapshot(path / OTHER.path)
    calls = {"n": 0}
    real = os.writev

    def full(fd, bufs):
        calls["n"] += 1
        if calls["n"] >= 4:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, bufs)

    monkeypatch.setattr(os, "writev", full)
    st = FeatureStore(path, mode="a")
    with pytest.raises(StoreError, match="no space left on device while writing") as ei:
        with st.writer(KEY, provenance=prov(), labels=np.arange(N) % 2, rows=np.arange(N),
                       dim=D) as w:
            for a in range(0, N, 32):
                w.append(x[a : a + 32])
    assert "\n" not in str(ei.value) and str(path) in str(ei.value)
    monkeypatch.setattr(os, "writev", real)
    assert st.status(KEY) == "incomplete"
    assert snapshot(path / OTHER.path) == complete_before
    assert not [p for p in edir(path).iterdir() if p.name.startswith(".")]  # no temp left
    st = write(path, x)
    np.testing.assert_array_equal(st.get(*KEY.__dict__.values()).embeddings, x)


def test_disk_full_while_writing_metadata(tmp_path, monkeypatch):
    path = tmp_path / "s"
    FeatureStore(path, mode="a")
    real = os.write

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(StoreError, match="no space left on device while writing"):
        write(path, matrix())
    monkeypatch.setattr(os, "write", real)
    assert FeatureStore(path).status(KEY) in ("missing", "incomplete")


# ------------------------------------------------------------------------------------ umask
@pytest.mark.parametrize("umask", [0o002, 0o022])
def test_store_files_honour_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        path = tmp_path / "s"
        write(path, matrix())
    finally:
        os.umask(old)
    files = [p for p in path.rglob("*") if p.is_file()]
    dirs = [path, *(p for p in path.rglob("*") if p.is_dir())]
    assert files and all(p.stat().st_mode & 0o777 == 0o666 & ~umask for p in files), [
        (str(p), oct(p.stat().st_mode & 0o777)) for p in files][:3]
    assert all(p.stat().st_mode & 0o777 == 0o777 & ~umask for p in dirs)
