"""Issue 28, "Also": `geneb vep evaluate` says why a metric is NaN (column ``skipped`` and one
line each) and no scipy ConstantInputWarning reaches the user.

Held out from the issue's replay: a constant score (every variant 0.5), a constant
task_score, one class only; the expected reasons are written here by hand, and the
non-NaN metrics are checked against scipy / scikit-learn directly.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from geneb.cli import app
from geneb.vep.evaluate import evaluate


def _table(n: int = 30, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "task": "t", "variant": np.arange(n), "label": np.arange(n) % 2, "model": "m",
        "scorer": "cosine", "window": 64, "score": rng.random(n), "status": "ok",
        "orientation": "higher=label1", "task_score": rng.normal(size=n),
    })


@pytest.mark.parametrize(("edit", "why"), [
    ({"score": 0.5}, "spearman: the score is the same for every variant"),
    ({"task_score": 1.25}, "spearman: task_score is the same for every variant"),
    ({"label": 1}, "auroc: the scored variants all have label 1; auprc: the scored variants "
                   "all have label 1"),
])
def test_nan_metrics_say_why_without_scipy_warnings(tmp_path: Path, edit, why):
    df = _table().assign(**edit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ConstantInputWarning would fail here
        m = evaluate(df, n_boot=100)
    assert m["skipped"].iloc[0] == why
    if "label" not in edit:  # the AUROC is still there, as scikit-learn computes it
        assert m["auroc"].iloc[0] == pytest.approx(roc_auc_score(df["label"], df["score"]))
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    res = CliRunner().invoke(app, ["vep", "evaluate", str(path), "--n-boot", "100"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert f"t m cosine w64: NaN {why}" in text and "Warning" not in text, text


def test_finite_metrics_have_nothing_skipped():
    df = _table()
    m = evaluate(df, n_boot=100)
    assert m["skipped"].iloc[0] == ""
    rho = stats.spearmanr(df["score"], df["task_score"]).statistic
    assert m["spearman"].iloc[0] == pytest.approx(rho)
