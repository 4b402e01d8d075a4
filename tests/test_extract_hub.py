"""Hub ids resolve in the local Hugging Face cache only: no network, no retries, no empty store.

The cache is built inside the test, laid out like huggingface_hub's own
(``models--org--name/{blobs,refs/main,snapshots/<commit>/...}``), from a shared tiny model.
Sockets are blocked while loading, so any attempt to reach a network fails the test.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import ModelError
from geneb.extract.runner import extract
from geneb.models.registry import get_embedder
from geneb.store import FeatureStore

pytest.importorskip("huggingface_hub")

TINY = "tiny-bert-dnabert2-bpe"
HUB_ID = "geneb-test/tiny-dnabert2"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TASK = "methyl_4mc_c_equisetifolia"


def build_cache(root: Path, src: Path, hub_id: str = HUB_ID, commit: str = COMMIT) -> Path:
    """A hub-style cache for ``hub_id`` holding the files of ``src`` (blobs + symlinks)."""
    repo = root / ("models--" + hub_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    (repo / "blobs").mkdir()
    for f in sorted(src.iterdir()):
        data = f.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        os.symlink(os.path.relpath(blob, snap), snap / f.name)
    return root


@pytest.fixture
def hub_cache(tmp_path: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from huggingface_hub import constants

    root = build_cache(tmp_path / "hf" / "hub", models_dir / "tiny" / TINY)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))
    return root


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a, **k):
        raise AssertionError(f"network access attempted: {a}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(params=[True, False], ids=["HF_HUB_OFFLINE=1", "HF_HUB_OFFLINE=0"])
def hub_offline(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both settings of HF_HUB_OFFLINE: a cached id must load, an uncached one fail, either way."""
    from huggingface_hub import constants

    offline = bool(request.param)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1" if offline else "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
    return offline


def test_cached_hub_id_loads_without_network(
    hub_cache: Path,
    no_network: None,
    models_dir: Path,
    data_dir: Path,
    tmp_path: Path,
    hub_offline: bool,
) -> None:
    emb = get_embedder(HUB_ID, device="cpu")
    assert emb.name == HUB_ID and emb.info.revision == COMMIT
    assert emb.info.extra["hub_id"] == HUB_ID and emb.info.extra["hub_commit"] == COMMIT
    # the same model as the folder it was cached from
    folder = get_embedder(str(models_dir / "tiny" / TINY), device="cpu")
    seqs = ["ACGTACGGATTACA", "TTGACA" * 7]
    np.testing.assert_array_equal(emb.embed(seqs), folder.embed(seqs))
    res = extract(tmp_path / "store", HUB_ID, str(data_dir / TASK), ("test",))
    assert res[0].provenance.revision == COMMIT
    e = FeatureStore(tmp_path / "store").get(HUB_ID, TASK, "test")
    assert e.provenance.revision == COMMIT and e.embeddings.shape[0] == res[0].n_rows


def test_uncached_hub_id_fails_fast_and_writes_nothing(
    hub_cache: Path,
    no_network: None,
    data_dir: Path,
    tmp_path: Path,
    hub_offline: bool,
) -> None:
    missing = "geneb-test/not-cached"
    t0 = time.perf_counter()
    with pytest.raises(ModelError) as ei:
        get_embedder(missing, device="cpu")
    assert time.perf_counter() - t0 < 2.0
    msg = str(ei.value)
    assert missing in msg and "not in the local Hugging Face cache" in msg
    assert f"hf download {missing}" in msg and "HF_HUB_OFFLINE" not in msg
    store = tmp_path / "store.zarr"
    t0 = time.perf_counter()
    res = CliRunner().invoke(
        app, ["extract", "--store", str(store), "--model", missing, "--task", str(data_dir / TASK)]
    )
    assert time.perf_counter() - t0 < 2.0
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"hf download {missing}" in " ".join(res.output.split())
    assert not store.exists()  # no empty store left behind


def test_cli_in_a_fresh_process_with_hub_offline_unset(
    tmp_path: Path, models_dir: Path, data_dir: Path
) -> None:
    """The real environment variables (no patching): HF_HUB_OFFLINE=0, cache in HF_HUB_CACHE."""
    import subprocess
    import sys

    root = build_cache(tmp_path / "hub", models_dir / "tiny" / TINY)
    env = dict(os.environ, HF_HUB_OFFLINE="0", TRANSFORMERS_OFFLINE="0", HF_HUB_CACHE=str(root))
    env["HF_HOME"] = str(tmp_path / "hf-home")  # nothing else to find there
    store = tmp_path / "store.zarr"
    cmd = [sys.executable, "-m", "geneb", "extract", "--store", str(store), "--model", HUB_ID]
    cmd += ["--task", str(data_dir / TASK), "--split", "test", "--device", "cpu"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    e = FeatureStore(store).get(HUB_ID, TASK, "test")
    assert e.provenance.revision == COMMIT


def test_cached_hub_repo_with_custom_code_is_refused(
    tmp_path: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trust rule holds for hub snapshots too: its code is not imported unless asked."""
    import json
    import shutil

    from huggingface_hub import constants

    src = tmp_path / "src"
    shutil.copytree(models_dir / "tiny" / TINY, src)
    marker = tmp_path / "marker"
    (src / "evil.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).touch()\n")
    cfg = json.loads((src / "config.json").read_text())
    cfg["auto_map"] = {"AutoModel": "evil.EvilModel"}
    (src / "config.json").write_text(json.dumps(cfg))
    root = build_cache(tmp_path / "hub", src, hub_id="geneb-test/evil")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))
    with pytest.raises(ModelError, match="geneb-test/evil.*trust_remote_code=True"):
        get_embedder("geneb-test/evil", device="cpu")
    with pytest.raises(ModelError, match="geneb-test/evil"):
        extract(tmp_path / "store", "random:geneb-test/evil", "syn_cpg_island")
    assert not marker.exists() and not (tmp_path / "store").exists()
