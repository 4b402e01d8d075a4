"""Regression tasks: loading (kind=regression), float labels in the store, ridge probes equal to
scikit-learn's Ridge on every cell, Spearman / Pearson / R^2 equal to scipy / scikit-learn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import TaskError


def _reg_task(folder: Path, n_train: int = 120, n_test: int = 50, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("test", n_test)):
        seqs = ["".join(rng.choice(list("ACGT"), 40)) for _ in range(n)]
        y = [s.count("G") - s.count("T") + 0.5 * rng.normal() for s in seqs]
        pd.DataFrame({"sequence": seqs, "label": y}).to_csv(folder / f"{split}.csv", index=False)
    (folder / "task.json").write_text(json.dumps({"name": "reg", "kind": "regression"}))
    return folder


def test_regression_task_loads_float_targets(tmp_path):
    from geneb.tasks import load_task_folder

    folder = _reg_task(tmp_path / "t")
    t = load_task_folder(folder)
    want = pd.read_csv(folder / "train.csv")["label"].to_numpy()
    assert t.spec.kind == "regression" and t.spec.n_classes == 0
    assert t.split("train").labels.dtype == np.float64
    np.testing.assert_array_equal(t.split("train").labels, want)


@pytest.mark.parametrize("bad,expect", [
    ("oops", "train.csv row 4 (line 5): label 'oops' is not a finite number"),
    ("inf", "is not a finite number"),
])
def test_bad_targets_are_named(tmp_path, bad, expect):
    from geneb.tasks import load_task_folder

    folder = _reg_task(tmp_path / "t")
    df = pd.read_csv(folder / "train.csv")
    df["label"] = df["label"].astype(object)
    df.loc[3, "label"] = bad
    df.to_csv(folder / "train.csv", index=False)
    with pytest.raises(TaskError, match=re.escape(expect)):
        load_task_folder(folder)


def test_kind_and_class_fields_checked(tmp_path):
    from geneb.tasks import load_task_folder

    folder = _reg_task(tmp_path / "t")
    (folder / "task.json").write_text(json.dumps({"kind": "regresion"}))
    with pytest.raises(TaskError, match="field 'kind' must be one of"):
        load_task_folder(folder)
    (folder / "task.json").write_text(json.dumps({"kind": "regression", "n_classes": 2}))
    with pytest.raises(TaskError, match="'n_classes' does not apply to a regression task"):
        load_task_folder(folder)


@pytest.mark.parametrize("standardize", [False, True])
def test_ridge_equals_sklearn_on_every_alpha(standardize):
    from geneb.probe.solvers.ridge import RidgeFit, solve_ridge

    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 12)).astype(np.float32) * rng.uniform(0.01, 10, 12)
    y = X @ rng.normal(size=12) + rng.normal(size=90)
    Xt = rng.normal(size=(30, 12)).astype(np.float32)
    idx = [np.arange(90), np.sort(rng.choice(90, 40, replace=False))]
    cells = [RidgeFit(a, i) for i in idx for a in (0.01, 1.0, 100.0)]
    got = solve_ridge(X, y, Xt, cells, standardize=standardize)
    for c, g in zip(cells, got, strict=True):
        A, B = X[c.train_idx].astype(np.float64), Xt.astype(np.float64)
        if standardize:
            sc = StandardScaler().fit(A)
            A, B = sc.transform(A), sc.transform(B)
        ref = Ridge(alpha=c.alpha).fit(A, y[c.train_idx]).predict(B)
        np.testing.assert_allclose(g.pred, ref, rtol=1e-8, atol=1e-8)


def test_regression_metrics_match_scipy_and_sklearn():
    from geneb.probe.regression_metrics import regression_metrics

    rng = np.random.default_rng(2)
    y = rng.normal(size=200)
    p = np.round(y + rng.normal(size=200), 1)  # ties in the predictions
    m = regression_metrics(y, p)
    assert m["spearman"] == pytest.approx(stats.spearmanr(p, y).statistic, abs=1e-12)
    assert m["pearson"] == pytest.approx(stats.pearsonr(p, y).statistic, abs=1e-12)
    assert m["r2"] == pytest.approx(r2_score(y, p), abs=1e-12)


def test_geneb_probe_ridge_cells_equal_sklearn(tmp_path):
    """Extract a regression task, probe it: every (seed, alpha) row is sklearn's Ridge."""
    from geneb.models.registry import get_embedder
    from geneb.results.table import read_results

    folder = _reg_task(tmp_path / "t")
    store, out = str(tmp_path / "s.zarr"), str(tmp_path / "res")
    r = CliRunner().invoke(app, ["extract", "--store", store, "--model", "kmer-2", "--task",
                                 str(folder)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["probe", "--store", store, "--results", out, "--workers", "1",
                                 "--seeds", "13,17", "--alpha", "0.001,0.1,10"])
    assert r.exit_code == 0, r.output
    df = read_results(out)
    assert len(df) == 6 and set(df["probe"]) == {"ridge"} and set(df["regime"]) == {"full"}
    assert df["mcc"].isna().all() and df["C"].isna().all()
    emb = get_embedder("kmer-2")
    tr, te = pd.read_csv(folder / "train.csv"), pd.read_csv(folder / "test.csv")
    Xtr = np.asarray(emb.embed(tr["sequence"].tolist()), np.float64)
    Xte = np.asarray(emb.embed(te["sequence"].tolist()), np.float64)
    for _, row in df.iterrows():
        pred = Ridge(alpha=row["alpha"]).fit(Xtr, tr["label"]).predict(Xte)
        assert row["spearman"] == pytest.approx(stats.spearmanr(pred, te["label"]).statistic,
                                                abs=1e-6)
        assert row["pearson"] == pytest.approx(stats.pearsonr(pred, te["label"]).statistic,
                                               abs=1e-6)
        assert row["r2"] == pytest.approx(r2_score(te["label"], pred), abs=1e-6)
        # the interval: 1,000 resamples of the test rows by default_rng(0), percentiles
        rng = np.random.default_rng(0)
        yt = te["label"].to_numpy()
        boot = [stats.spearmanr(pred[i], yt[i]).statistic
                for i in (rng.integers(0, len(yt), len(yt)) for _ in range(1000))]
        assert (row["spearman_lo"], row["spearman_hi"]) == pytest.approx(
            tuple(np.percentile(boot, [2.5, 97.5])), abs=1e-6)
    r = CliRunner().invoke(app, ["probe", "--store", store, "--results", out, "--workers", "1",
                                 "--seeds", "13,17", "--alpha", "0.001,0.1,10"])
    assert r.exit_code == 0 and "already done" in r.output and "0 computed" in r.output
    r = CliRunner().invoke(app, ["probe", "--store", store, "--results", out, "--alpha", "0"])
    assert r.exit_code == 2 and "--alpha" in r.output


def test_version_2_tables_read_with_null_regression_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from geneb.results.schema import RESULTS_SCHEMA
    from geneb.results.table import read_results

    old = [f for f in RESULTS_SCHEMA if f.name not in ("alpha", "spearman", "pearson", "r2")]
    row = {f.name: None for f in old}
    row.update(schema_version=2, model="m", task="t", regime="full", seed=13, C=1.0,
               probe="linear", protocol="converged", mcc=0.5, train_rows=[])
    table = pa.Table.from_pylist([row], schema=pa.schema(old))
    pq.write_table(table, tmp_path / "old.parquet")
    df = read_results(tmp_path / "old.parquet")
    assert df["mcc"].iloc[0] == 0.5 and df[["alpha", "spearman", "pearson", "r2"]].isna().all(
        axis=None)


def test_report_keeps_regression_apart_from_mcc(tmp_path):
    """A table with a classification and a regression task: MCC analyses never see the
    regression rows; they get their own section and table."""
    from geneb.analysis.report import build_report
    from geneb.analysis.table import load_results
    from geneb.probe.engine import run_probes

    rng = np.random.default_rng(4)
    cls = tmp_path / "cls"
    cls.mkdir()
    for split, n in (("train", 80), ("test", 40)):
        seqs = ["".join(rng.choice(list("ACGT"), 40)) for _ in range(n)]
        pd.DataFrame({"sequence": seqs, "label": [int(s.count("G") > 10) for s in seqs]}
                     ).to_csv(cls / f"{split}.csv", index=False)
    reg = _reg_task(tmp_path / "reg")
    store, out = str(tmp_path / "s.zarr"), tmp_path / "res"
    for t in (cls, reg):
        r = CliRunner().invoke(app, ["extract", "--store", store, "--model", "kmer-2", "--task",
                                     str(t)])
        assert r.exit_code == 0, r.output
    s = run_probes(store, out, shots="10,full", seeds="13,17", Cs=[1.0], workers=1)
    assert s.n_cells == 2 * 2 + 2 * 5  # cls: 2 regimes x 2 seeds; reg: full x 2 seeds x 5
    assert run_probes(store, out, shots="10", seeds="13", workers=1).n_cells == 1  # no ridge
    assert run_probes(store, out, seeds="13", probe="mlp", backend="sklearn",
                      workers=1).n_cells == 3  # the MLP plans nothing for the regression task
    assert set(load_results(out)["task"]) == {"cls"}
    index = build_report(out, tmp_path / "rep", n_boot=100)
    html = index.read_text()
    assert "Regression tasks" in html
    tables = tmp_path / "rep" / "tables"
    assert set(pd.read_csv(tables / "regression.csv")["task"]) == {"reg"}
    for f in tables.glob("*.csv"):
        if f.name != "regression.csv":
            assert "reg" not in set(pd.read_csv(f).get("task", pd.Series(dtype=str))), f.name


@pytest.mark.parametrize("kind", ["direct", "zarr", "memory"])
def test_float_labels_round_trip_every_store_backend(tmp_path, kind):
    """Regression targets are stored as float64 (attribute labels_dtype) by the direct path and
    by zarr (local and in memory), read back bit for bit, and pass verification."""
    import itertools

    from geneb.store import FeatureStore, Provenance, StoreKey

    url = {"direct": str(tmp_path / "s"), "zarr": f"local://{tmp_path / 'z'}",
           "memory": f"memory://geneb-reg-{next(itertools.count())}-{tmp_path.name}"}[kind]
    key = StoreKey("m", "reg", "train")
    y = np.random.default_rng(0).normal(size=37)
    X = np.random.default_rng(1).normal(size=(37, 5)).astype(np.float32)
    fs = FeatureStore(url, "a")
    prov = Provenance(model_id="m", revision="r1", task_id="reg", task_fingerprint="sha256:x")
    with fs.writer(key, provenance=prov, labels=y, rows=np.arange(37), dim=5) as w:
        w.append(X)
    e = FeatureStore(url, "r").get("m", "reg", "train")
    assert e.labels.dtype == np.float64
    np.testing.assert_array_equal(e.labels, y)
    np.testing.assert_array_equal(e.embeddings, X)
    assert FeatureStore(url, "r").labels_rows("m", "reg", "train")[0].dtype == np.float64
