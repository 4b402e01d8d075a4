"""`geneb vep score` / `evaluate` end to end on the real BRCA1 task (a few variants, short windows):
k-mer, the real HyenaDNA checkpoint, the tiny language models; store reuse; refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app

LIMIT = ["--limit", "9", "--window", "128"]


@pytest.fixture(scope="module")
def brca1(models_dir: Path) -> str:
    p = models_dir.parent / "variants" / "brca1_findlay2018"
    if not p.is_dir():
        pytest.skip(f"BRCA1 task not found at {p}")
    return str(p)


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["vep", *args])
    return res.exit_code, " ".join(res.output.split())  # rich wraps long lines


def test_kmer_scores_and_store_reuse(brca1, tmp_path):
    from geneb.store import FeatureStore

    out1, out2, store = tmp_path / "a.parquet", tmp_path / "b.parquet", str(tmp_path / "s.zarr")
    code, text = _run("score", "--task", brca1, "--model", "kmer-3", "--scorer", "cosine",
                      "--out", str(out1), "--store", store, *LIMIT)
    assert code == 0, text
    assert "windows embedded 12" in text  # 3 distinct reference windows + 9 alternate windows
    code, text = _run("score", "--task", brca1, "--model", "kmer-3", "--scorer", "l2",
                      "--out", str(out2), "--store", store, *LIMIT)
    assert code == 0, text
    assert "windows embedded 0" in text and "reused from the store 12" in text
    df = pd.read_parquet(out1)
    for col in ("chrom", "pos", "ref", "alt", "label", "model", "scorer", "window", "score",
                "status", "task_score", "func_class"):
        assert col in df.columns
    assert len(df) == 9 and (df["status"] == "ok").all() and (df["window"] == 128).all()
    keys = {(k.task, k.split) for k in FeatureStore(store).keys()}
    assert keys == {("brca1_findlay2018__vep_w128__first9", s) for s in ("ref", "alt")}
    alt = FeatureStore(store).get("kmer-3", "brca1_findlay2018__vep_w128__first9", "alt")
    assert list(alt.rows) == list(range(9)) and list(alt.labels) == list(df["label"])


def test_hyenadna_distances_match_one_at_a_time(brca1, models_dir, tmp_path):
    from geneb.models.registry import get_embedder
    from geneb.tasks.variants import load_variant_task
    from geneb.tasks.windows import make_windows
    from geneb.vep.scorers import distances

    path = str(models_dir / "real" / "hyenadna-tiny-1k-anticapt")
    if not Path(path).is_dir():
        pytest.skip("HyenaDNA checkpoint not available")
    code, text = _run("score", "--task", brca1, "--model", path, "--scorer", "cosine",
                      "--out", str(tmp_path / "x.parquet"), *LIMIT)
    assert code == 2 and "--trust-remote-code" in text  # custom code: refused unless asked
    out = tmp_path / "h.parquet"
    code, text = _run("score", "--task", brca1, "--model", path, "--scorer", "cosine",
                      "--scorer", "l2", "--trust-remote-code", "--out", str(out), *LIMIT)
    assert code == 0, text
    df = pd.read_parquet(out)
    assert (df["status"] == "ok").all() and len(df) == 18
    emb = get_embedder(path, trust_remote_code=True, device="cpu")
    win = make_windows(load_variant_task(brca1), 128)
    ref = np.concatenate([emb.embed([win.ref_of(i)]) for i in range(9)])  # one at a time
    alt = np.concatenate([emb.embed([win.alt_windows[i]]) for i in range(9)])
    got = df.set_index("scorer")
    np.testing.assert_allclose(got.loc["cosine", "score"], distances(ref, alt, "cosine"),
                               rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(got.loc["l2", "score"], distances(ref, alt, "l2"), rtol=1e-5)
    assert (got.loc["l2", "score"] > 0).all()


@pytest.mark.parametrize("folder", ["tiny-llama-char-clm", "tiny-bert-char-mlm",
                                    "tiny-esm-nt-6mer-mlm"])
def test_tiny_lms_llr_and_evaluate(brca1, models_dir, tmp_path, folder):
    out = tmp_path / "l.parquet"
    code, text = _run("score", "--task", brca1, "--model",
                      str(models_dir / "tiny-lm" / folder), "--scorer", "llr", "--out",
                      str(out), *LIMIT)
    assert code == 0, text
    df = pd.read_parquet(out)
    assert (df["status"] == "ok").all() and df["score"].notna().all()
    assert (df["orientation"] == "lower=label1").all()
    code, text = _run("evaluate", str(out), "--out", str(tmp_path / "rep"), "--n-boot", "100")
    assert code == 0, text
    m = pd.read_csv(tmp_path / "rep" / "tables" / "vep_metrics.csv")
    assert len(m) == 1 and m["n_scored"].iloc[0] == 9
    assert (tmp_path / "rep" / "vep_report.html").read_text().count("<img") == 1


def test_headless_llr_exits_2_writes_nothing(brca1, models_dir, tmp_path):
    out = tmp_path / "n.parquet"
    code, text = _run("score", "--task", brca1, "--model",
                      str(models_dir / "tiny" / "tiny-bert-dnabert2-bpe"), "--scorer", "llr",
                      "--out", str(out), *LIMIT)
    assert code == 2 and "error:" in text and "Traceback" not in text
    assert "supports: embeddings -> scorers cosine, l2" in text
    assert not out.exists()
    code, text = _run("score", "--task", brca1, "--model", "kmer-3", "--scorer", "bogus", *LIMIT)
    assert code == 2 and "--scorer: expected one of 'cosine', 'l2', 'llr', got 'bogus'" in text
