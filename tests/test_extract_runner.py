"""The runner and `geneb extract` end to end on a real task: entries, skip/resume/refuse."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError, StaleEntryError
from geneb.extract.runner import extract
from geneb.models.adapters.kmer import kmer_spectrum
from geneb.models.registry import get_embedder
from geneb.store import FeatureStore, StoreKey

REPO = Path(__file__).resolve().parents[1]
TASK = "dhs_idhs_fflg"  # 421 train / 105 test rows, 50-300 bp
TINY = "tiny-bert-dnabert2-bpe"
runner = CliRunner()


def _cli(*args: str):
    return runner.invoke(app, list(args))


def test_cli_end_to_end(data_dir: Path, models_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    model = str(models_dir / "tiny" / TINY)
    args = [
        "extract",
        "--store",
        str(store),
        "--model",
        "kmer-3",
        "--model",
        model,
        "--task",
        str(data_dir / TASK),
        "--batch-tokens",
        "2048",
        "--device",
        "cpu",
    ]
    res = _cli(*args)
    assert res.exit_code == 0, res.output
    fs = FeatureStore(store)
    emb = get_embedder(model, device="cpu")
    assert sorted(map(str, fs.keys(complete_only=True))) == sorted(
        f"{m}/{TASK}/{s}" for m in ("kmer-3", TINY) for s in ("train", "test")
    )
    assert fs.verify() == []
    for split in ("train", "test"):
        df = pd.read_csv(data_dir / TASK / f"{split}.csv")
        km = fs.get("kmer-3", TASK, split)
        assert km.embeddings.shape == (len(df), 64)
        np.testing.assert_array_equal(km.labels, df["label"].to_numpy())
        np.testing.assert_array_equal(km.rows, np.arange(len(df)))
        np.testing.assert_array_equal(km.embeddings, kmer_spectrum(df["sequence"].tolist(), 3))
        hf = fs.get(TINY, TASK, split)
        assert hf.embeddings.shape == (len(df), 64) and hf.embeddings.dtype == np.float32
        # rows come back in file order: compare a few against embedding them one at a time
        pick = [0, len(df) // 2, len(df) - 1]
        alone = np.vstack([emb.embed([df["sequence"][i]]) for i in pick])
        np.testing.assert_allclose(hf.embeddings[pick], alone, atol=1e-5, rtol=0)
        p = hf.provenance
        assert p.model_id == TINY and p.task_id == TASK and p.revision.startswith("sha256:")
        assert p.n_params == emb.info.n_params and p.model_type == "bert"
        assert p.pooling == "mean" and p.layer == -1 and p.max_length == 512
        assert p.truncation == "truncate" and p.dtype == "float32" and p.device == "cpu"
        assert p.tokenizer and p.extra["task_category"] == "chromatin_accessibility"
        assert p.extra["task_synthetic"] is False
        from geneb.tasks.folders import resolve_task

        assert p.task_fingerprint == resolve_task(str(data_dir / TASK)).split(split).fingerprint
        assert km.provenance.n_params is None and km.provenance.model_id == "kmer-3"
    # rerun: identical request is skipped
    res = _cli(*args)
    assert res.exit_code == 0 and "skip" in res.output and "write" not in res.output
    # an option that does not apply to one of the models (kmer-3) is refused, naming both
    res = _cli(*args, "--split", "test", "--max-length", "64")
    assert res.exit_code == 2 and "'max_length' does not apply to model 'kmer-3'" in res.output
    i = args.index("kmer-3")
    args = args[: i - 1] + args[i + 1 :]  # the neural model alone
    # a changed identity (max length) is stale: refused without --overwrite, replaced with it
    res = _cli(*args, "--split", "test", "--max-length", "64")
    assert res.exit_code == 2 and "stale" in res.output and "--overwrite" in res.output
    res = _cli(*args, "--split", "test", "--max-length", "64", "--overwrite")
    assert res.exit_code == 0, res.output
    fs = FeatureStore(store)
    assert fs.provenance(StoreKey(TINY, TASK, "test")).max_length == 64
    assert fs.provenance(StoreKey(TINY, TASK, "train")).max_length == 512


def test_cli_errors_and_models_list(data_dir: Path, tmp_path: Path) -> None:
    res = _cli(
        "extract",
        "--store",
        str(tmp_path / "s"),
        "--model",
        "kmer-33",
        "--task",
        str(data_dir / TASK),
    )
    assert res.exit_code == 2 and "unknown model" in res.output
    res = _cli(
        "extract",
        "--store",
        str(tmp_path / "s"),
        "--model",
        "kmer-3",
        "--task",
        "no_such_task_xyz",
        "--data-dir",
        str(data_dir),
    )
    assert res.exit_code == 2 and "no_such_task_xyz" in res.output
    res = _cli(
        "extract",
        "--store",
        str(tmp_path / "s"),
        "--model",
        "kmer-3",
        "--task",
        str(data_dir / TASK),
        "--split",
        "valid",
    )
    assert res.exit_code == 2 and "valid" in res.output
    res = _cli("models", "list")
    assert res.exit_code == 0 and "kmer-8" in res.output and "random:<model>" in res.output


def test_trust_remote_code_refusal_cli(data_dir: Path, models_dir: Path, tmp_path: Path) -> None:
    import json
    import shutil

    d = tmp_path / "remote"
    shutil.copytree(models_dir / "tiny" / TINY, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["auto_map"] = {"AutoModel": "modeling_x.XModel"}
    (d / "config.json").write_text(json.dumps(cfg))
    res = _cli(
        "extract",
        "--store",
        str(tmp_path / "s"),
        "--model",
        str(d),
        "--task",
        str(data_dir / TASK),
        "--device",
        "cpu",
    )
    assert res.exit_code == 2 and "--trust-remote-code" in res.output
    assert not (tmp_path / "s" / "remote").exists()


def test_runner_api_name_and_synthetic(tmp_path: Path) -> None:
    from geneb.tasks.synthetic import SYNTHETIC_TASK_NAMES, build_synthetic_task

    task = build_synthetic_task(SYNTHETIC_TASK_NAMES[0], n_train=40, n_test=20)
    fs = FeatureStore(tmp_path / "s", "a")
    res = extract(fs, "kmer-2", task, name="my-kmer", batch_tokens=300, block_rows=7)
    assert [r.action for r in res] == ["write", "write"]
    e = fs.get("my-kmer", task.name, "train")
    np.testing.assert_array_equal(e.embeddings, kmer_spectrum(task.split("train").sequences, 2))
    assert e.provenance.extra["task_synthetic"] is True
    assert e.provenance.extra["task_category"] == task.spec.category
    with pytest.raises(GenebError, match="one model"):
        extract(fs, ["kmer-2", "kmer-3"], task, name="x")
    # a stale entry (different task content under the same name) is refused, nothing written
    other = build_synthetic_task(SYNTHETIC_TASK_NAMES[0], n_train=41, n_test=20)
    with pytest.raises(StaleEntryError, match="fingerprint"):
        extract(fs, "kmer-2", other, name="my-kmer")


CHILD = textwrap.dedent(
    """
    import sys, time
    from geneb.extract.runner import extract
    seen = []
    def on_block(key, done, n):
        seen.append(done)
        print("block", done, n, flush=True)
        if len(seen) == 3:
            time.sleep(120)  # the parent SIGKILLs us here
    extract(sys.argv[1], "kmer-7", sys.argv[2], ("train",), block_rows=64, on_block=on_block)
    """
)


def test_killed_run_resumes_to_identical_entry(data_dir: Path, tmp_path: Path) -> None:
    task = str(data_dir / TASK)
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    env = {**os.environ, "GENEB_NO_PROGRESS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(killed), task],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        assert all(ln.startswith("block") for ln in lines), lines
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    key = StoreKey("kmer-7", TASK, "train")
    fs = FeatureStore(killed)
    assert fs.status(key) == "incomplete"
    # rerun through the API (to see how many rows it had left to do)
    res = extract(killed, "kmer-7", task, ("train",), block_rows=64)
    assert res[0].action == "resume", res[0]
    assert 0 < res[0].rows_embedded < 421  # shards written before the kill were kept
    assert res[0].reason.startswith("resumed at row")
    res = _cli(
        "extract",
        "--store",
        str(clean),
        "--model",
        "kmer-7",
        "--task",
        task,
        "--split",
        "train",
        "--block-rows",
        "64",
    )
    assert res.exit_code == 0, res.output
    a, b = (
        FeatureStore(killed).get(*key.__dict__.values()),
        FeatureStore(clean).get(*key.__dict__.values()),
    )
    np.testing.assert_array_equal(a.embeddings, b.embeddings)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.rows, b.rows)
    assert a.provenance.identity() == b.provenance.identity()
    assert FeatureStore(killed).verify() == []


class _PluginEmbedder:
    """A minimal third-party adapter: name, dim, embed (no info, no prepare)."""

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.revision = "plugin-v1"

    name = "gc-plugin"
    dim = 2

    def embed(self, sequences):
        gc = [(s.count("G") + s.count("C")) / max(1, len(s)) for s in sequences]
        return np.array([[g * self.scale, len(s)] for g, s in zip(gc, sequences, strict=True)])


def make_plugin(scale: float = 1.0) -> _PluginEmbedder:
    return _PluginEmbedder(scale)


def test_entry_point_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.metadata as md

    from geneb.models import plugins, registry
    from geneb.tasks.synthetic import SYNTHETIC_TASK_NAMES, build_synthetic_task

    ep = md.EntryPoint("gc-plugin", f"{__name__}:make_plugin", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda: {"gc-plugin": ep})
    assert "gc-plugin" in registry.list_embedders()
    task = build_synthetic_task(SYNTHETIC_TASK_NAMES[0], n_train=30, n_test=10)
    # runner options the plugin does not take (device, pooling, ...) are not passed to it
    res = extract(tmp_path / "s", "gc-plugin", task, batch_tokens=100, progress=True)
    assert [r.action for r in res] == ["write", "write"]
    e = FeatureStore(tmp_path / "s").get("gc-plugin", task.name, "test")
    seqs = task.split("test").sequences
    want = [[(s.count("G") + s.count("C")) / len(s), len(s)] for s in seqs]
    np.testing.assert_allclose(e.embeddings, want, rtol=1e-6)
    assert e.provenance.revision == "plugin-v1" and e.provenance.adapter.startswith("plugin:")


def test_offline_hub_id_is_a_clean_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(GenebError, match="no-such-org/no-such-model"):
        get_embedder("no-such-org/no-such-model", device="cpu")
