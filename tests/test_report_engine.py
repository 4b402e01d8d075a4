"""The report builds from a real results table: extraction and probe engine on real tasks.

Two small real tasks of the shared data, two k-mer baselines and one tiny offline HF model
(so one model has a parameter count), probed by the engine with a C sweep and the MLP probe.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from geneb.analysis.report import build_report
from geneb.analysis.table import load_results

TASKS = ("dhs_idhs_fflg", "methyl_4mc_c_equisetifolia")
SEEDS = (13, 17, 42)
CS = (0.1, 1.0, 10.0)


@pytest.fixture(scope="module")
def real_results(tmp_path_factory, data_dir: Path, models_dir: Path) -> Path:
    extract_mod = pytest.importorskip("geneb.extract.runner", reason="extraction not built yet")
    engine = pytest.importorskip("geneb.probe.engine", reason="probe engine not built yet")
    from geneb.store import FeatureStore

    tiny = models_dir / "tiny" / "tiny-bert-dnabert2-bpe"
    if not tiny.is_dir():
        pytest.skip(f"tiny model folder not found at {tiny}")
    root = tmp_path_factory.mktemp("engine")
    store = FeatureStore(root / "store", "a")
    extract_mod.extract(
        store, ["kmer-2", "kmer-3", f"hf:{tiny}"], list(TASKS), data_dir=str(data_dir), device="cpu"
    )
    out = root / "results.parquet"
    engine.run_probes(store, out, seeds=SEEDS, Cs=CS, workers=1)
    # the MLP on the few-shot regimes only: enough for the stability check, and fast
    engine.run_probes(store, out, seeds=SEEDS, shots=("1", "10"), probe="mlp", workers=1)
    return out


def _check_png(path: Path) -> None:
    import numpy as np
    from PIL import Image

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000, path
    with Image.open(path) as im:
        arr = np.asarray(im.convert("L"))
    assert arr.shape[0] > 100 and arr.shape[1] > 100 and arr.std() > 1.0, path


@pytest.mark.slow
def test_report_from_engine_results(real_results, tmp_path):
    raw = pd.read_parquet(real_results)
    assert set(raw["task"]) == set(TASKS)
    assert set(raw["probe"]) == {"linear", "mlp"}
    index = build_report(real_results, tmp_path / "rep", n_boot=300)
    html = index.read_text(encoding="utf-8")
    for ref in re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", html):
        assert "http" not in ref.lower(), ref
    assert "<script" not in html.lower() and "<link" not in html.lower()
    figs = {p.name for p in (tmp_path / "rep" / "figures").glob("*.png")}
    # one sized model: no scaling figure; everything else is supported by this table
    assert figs == {
        "heatmap_model_category.png",
        "fewshot.png",
        "rank_changes.png",
        "linear_vs_mlp.png",
        "mcc_vs_c.png",
        "tiers.png",
    }
    for f in figs:
        _check_png(tmp_path / "rep" / "figures" / f)
    assert "left out of the scaling analysis: kmer-2, kmer-3" in html
    assert "the scaling analysis needs at least three models with a parameter count" in html
    assert "Seeds: 13, 17, 42." in html

    # the headline leaderboard equals a direct computation from the engine's rows
    lin = raw[(raw["probe"] == "linear") & (raw["C"] == 1.0) & (raw["regime"] == "full")]
    ref = lin.groupby(["model", "task"])["mcc"].mean().groupby("model").mean()
    lb = pd.read_csv(tmp_path / "rep" / "tables" / "leaderboard_full.csv").set_index("model")
    assert sorted(lb.index) == sorted(ref.index)
    for model, v in ref.items():
        assert lb.loc[model, "macro_mcc"] == pytest.approx(v, abs=1e-12)
    meta = pd.read_csv(tmp_path / "rep" / "tables" / "model_metadata.csv").set_index("model")
    assert meta["n_params"].notna().sum() == 1
    # the table read through the engine's reader is the one analysed
    assert len(load_results(real_results)) == len(raw)
