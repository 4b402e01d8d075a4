"""`geneb store ls|info|export|verify` through typer's CliRunner."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.store import FeatureStore, Provenance, StoreKey

runner = CliRunner()
KEY = StoreKey("org/model", "task_a", "test")


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "store"
    st = FeatureStore(path, mode="a")
    x = np.random.default_rng(0).standard_normal((30, 4)).astype(np.float32)
    with st.writer(KEY, provenance=Provenance("org/model", "abc123", "task_a", "sha256:f"),
                   labels=np.arange(30) % 2, rows=np.arange(30) + 100, dim=4) as w:
        w.append(x)
    inc = StoreKey("org/model", "task_b", "train")
    with pytest.raises(RuntimeError):
        with st.writer(inc, provenance=Provenance("org/model", "abc123", "task_b", "fp"),
                       labels=np.zeros(10, int), rows=np.arange(10), dim=4) as w:
            raise RuntimeError("stop")
    return path, x


def run(*args: str):
    return runner.invoke(app, ["store", *map(str, args)])


def test_ls_lists_keys_shapes_and_status(store_path):
    path, _ = store_path
    r = run("ls", "--store", path)
    assert r.exit_code == 0, r.output
    assert "task_a" in r.output and "30 x 4" in r.output and "float32" in r.output
    assert "complete" in r.output and "incomplete (0/10 rows)" in r.output


def test_info_prints_provenance_json(store_path):
    path, _ = store_path
    r = run("info", "--store", path, "-m", "org/model", "-t", "task_a", "-s", "test")
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["status"] == "complete" and info["shape"] == [30, 4]
    assert info["provenance"]["revision"] == "abc123"
    assert info["model_id"] == "org/model"


def test_unknown_key_is_a_clean_error(store_path):
    path, _ = store_path
    r = run("info", "--store", path, "-m", "org/model", "-t", "task_c", "-s", "test")
    assert r.exit_code == 2
    assert "Did you mean 'org/model/task_a/test'" in r.output
    assert "Traceback" not in r.output
    r = run("ls", "--store", path.parent / "missing")
    assert r.exit_code == 2 and "does not exist" in r.output


def test_export_npz_and_parquet(store_path, tmp_path):
    path, x = store_path
    out = tmp_path / "e.npz"
    r = run("export", "--store", path, "--model", "org/model", "--task", "task_a", "--split", "test",
            "--format", "npz", "--out", out)
    assert r.exit_code == 0, r.output
    z = np.load(out)
    np.testing.assert_array_equal(z["embeddings"], x)
    np.testing.assert_array_equal(z["labels"], np.arange(30) % 2)
    np.testing.assert_array_equal(z["row"], np.arange(30) + 100)
    assert json.loads(str(z["provenance"]))["revision"] == "abc123"

    outp = tmp_path / "e.parquet"
    r = run("export", "--store", path, "-m", "org/model", "-t", "task_a", "-s", "test",
            "-f", "parquet", "-o", outp)
    assert r.exit_code == 0, r.output
    t = pq.read_table(outp)
    assert t.column_names == ["row", "label", "embedding"]
    emb = np.stack(t["embedding"].to_pylist()).astype(np.float32)
    np.testing.assert_array_equal(emb, x)
    np.testing.assert_array_equal(t["row"].to_numpy(), np.arange(30) + 100)
    assert json.loads(t.schema.metadata[b"geneb.provenance"])["model_id"] == "org/model"

    r = run("export", "--store", path, "-m", "org/model", "-t", "task_a", "-s", "test", "-f", "csv",
            "-o", outp)
    assert r.exit_code == 2 and "unknown export format 'csv'" in r.output
    r = run("export", "--store", path, "-m", "org/model", "-t", "task_b", "-s", "train", "-o", out)
    assert r.exit_code == 2 and "incomplete" in r.output


def test_verify_exit_codes(store_path):
    path, _ = store_path
    r = run("verify", "--store", path)
    assert r.exit_code == 1
    assert "org/model/task_b/train" in r.output and "incomplete" in r.output
    FeatureStore(path, mode="a").delete(StoreKey("org/model", "task_b", "train"))
    r = run("verify", "--store", path)
    assert r.exit_code == 0, r.output
    assert "1 of 1 entries OK" in r.output
    shard = path / KEY.path / "embeddings" / "c.0.0"
    b = bytearray(shard.read_bytes())
    b[5] ^= 0xFF
    shard.write_bytes(bytes(b))
    r = run("verify", "--store", path)
    assert r.exit_code == 1 and "corrupt" in r.output and "checksum" in r.output
