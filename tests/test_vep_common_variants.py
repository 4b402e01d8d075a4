"""`geneb vep evaluate` on score tables that cover different variants (issue 19 #21): one
model scored with ``--limit 20``, another on all 60. Every model of the task is compared on
the variants common to all tables, with a warning; the reference is scikit-learn on exactly
those variants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score
from typer.testing import CliRunner

from geneb.cli import app
from geneb.vep.evaluate import evaluate

N = 60
RNG = np.random.default_rng(11)
LABELS = RNG.integers(0, 2, N)


def _table(model: str, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "task": "brca_like", "variant": [f"v{i:03d}" for i in range(n)], "label": LABELS[:n],
        "model": model, "scorer": "cosine", "window": 128,
        "score": LABELS[:n] * 0.3 + rng.random(n), "status": "ok", "orientation": "higher=1",
    })


@pytest.fixture
def tables(tmp_path: Path) -> tuple[list[Path], dict[str, pd.DataFrame]]:
    frames = {"full": _table("full", N, 1), "limited": _table("limited", 20, 2)}
    paths = []
    for name, df in frames.items():
        paths.append(tmp_path / f"{name}.parquet")
        df.to_parquet(paths[-1])
    return paths, frames


def test_models_are_compared_on_the_common_variants(tables, tmp_path: Path) -> None:
    paths, frames = tables
    r = CliRunner().invoke(app, ["vep", "evaluate", *map(str, paths), "--out",
                                 str(tmp_path / "rep"), "--n-boot", "100"])
    assert r.exit_code == 0, r.output
    assert "warning: task brca_like: the score tables cover different variants" in r.output
    assert "full cosine w128: 60" in r.output and "limited cosine w128: 20" in r.output
    assert "compared on the 20 variants common to all (40 rows left out)" in r.output
    m = pd.read_csv(tmp_path / "rep" / "tables" / "vep_metrics.csv").set_index("model")
    assert m.loc["full", "n_scored"] == m.loc["limited", "n_scored"] == 20
    assert m.loc["full", "n_left_out"] == 40 and m.loc["limited", "n_left_out"] == 0
    for name, df in frames.items():
        common = df.iloc[:20]  # the limited table holds the first 20 variants
        assert m.loc[name, "auroc"] == pytest.approx(roc_auc_score(common["label"],
                                                                   common["score"]))
        assert m.loc[name, "auprc"] == pytest.approx(
            average_precision_score(common["label"], common["score"]))
    page = (tmp_path / "rep" / "vep_report.html").read_text()
    assert "compared on the 20 variants common to all" in page


def test_the_library_function_compares_the_same_way(tables) -> None:
    _, frames = tables
    m = evaluate(pd.concat(frames.values(), ignore_index=True), n_boot=100).set_index("model")
    full = frames["full"].iloc[:20]
    assert m.loc["full", "auroc"] == pytest.approx(roc_auc_score(full["label"], full["score"]))
    assert m.loc["full", "n"] == 20


def test_equal_variant_sets_give_no_warning(tmp_path: Path) -> None:
    a, b = _table("a", N, 1), _table("b", N, 2)
    paths = [tmp_path / "a.csv", tmp_path / "b.csv"]
    a.to_csv(paths[0], index=False)
    b.to_csv(paths[1], index=False)
    r = CliRunner().invoke(app, ["vep", "evaluate", *map(str, paths), "--n-boot", "100"])
    assert r.exit_code == 0, r.output
    assert "warning" not in r.output
    m = evaluate(pd.concat([a, b], ignore_index=True), n_boot=100).set_index("model")
    assert list(m["n_left_out"]) == [0, 0]
    assert m.loc["b", "auroc"] == pytest.approx(roc_auc_score(b["label"], b["score"]))
