"""Subsampling stability (issue 23, part 5): MCC against training-subsample size."""

from __future__ import annotations

import json

import numpy as np
import pytest
from probe_stores import gaussian_task
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import ProbeError
from geneb.probe.subsample import default_sizes, stability_summary, subsample_curve
from geneb.protocol import full_rows
from geneb.store import FeatureStore

N_TRAIN, N_TEST = 600, 300


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("sub") / "store"
    fs = FeatureStore(path, "a")
    gaussian_task(fs, "m", "t", n_train=N_TRAIN, n_test=N_TEST, n_classes=3, dim=8, sep=1.2)
    return str(path)


@pytest.mark.parametrize("Cs", [(1.0,), (0.05, 1.0)])
def test_curve_matches_an_independent_fit(store, Cs) -> None:  # noqa: N803
    curve = subsample_curve(store, "m", "t", [60, 300], [13, 17], Cs=Cs, backend="sklearn")
    assert list(curve["size"]) == [60] * 2 * len(Cs) + [300] * 2 * len(Cs)
    assert set(curve["n_train"]) == {N_TRAIN} and set(curve["C"]) == set(Cs)
    fs = FeatureStore(store, "r")
    tr, te = fs.get("m", "t", "train"), fs.get("m", "t", "test")
    labels, rows = np.asarray(tr.labels), np.arange(N_TRAIN)
    for r in curve.itertuples():
        pos = full_rows(labels, rows, task_fingerprint=f"test:t:{N_TRAIN}:3", n_classes=3,
                        cap=r.size, rng_name=f"subsample-{r.size}", seed=r.seed).positions
        # stratified: 200 rows per class in the split -> size / 3 per class
        assert np.bincount(labels[pos], minlength=3).tolist() == [r.size // 3] * 3
        X = np.asarray(tr.embeddings, dtype=np.float64)[pos]
        ref = LogisticRegression(C=r.C, max_iter=1000, tol=1e-10).fit(X, labels[pos])
        pred = ref.predict(np.asarray(te.embeddings, dtype=np.float64))
        assert r.mcc == pytest.approx(matthews_corrcoef(te.labels, pred), abs=1e-9)
    # the two seeds draw different rows at a size; the same call draws the same rows again
    a, b = (full_rows(labels, rows, task_fingerprint="x", n_classes=3, cap=60,
                      rng_name="subsample-60", seed=s).positions for s in (13, 17))  # fmt: skip
    assert not np.array_equal(a, b)
    again = subsample_curve(store, "m", "t", [60, 300], [13, 17], Cs=Cs, backend="sklearn")
    assert again["mcc"].tolist() == curve["mcc"].tolist()


def test_summary_and_stabilised_flag_by_hand() -> None:
    import pandas as pd

    curve = pd.DataFrame({"model": "m", "task": "t", "n_train": 10, "C": 1.0,
                          "size": [2, 2, 4, 4, 8, 8], "seed": [1, 2] * 3,
                          "mcc": [0.40, 0.50, 0.60, 0.70, 0.655, 0.655]})  # fmt: skip
    s = stability_summary(curve, tol=0.01).set_index("size")
    # means 0.45, 0.65, 0.655: changes +0.20, +0.005; the largest size's 0.005 <= 0.01
    assert s["mean_mcc"].tolist() == pytest.approx([0.45, 0.65, 0.655])
    assert s.loc[4, "change"] == pytest.approx(0.20) and s.loc[8, "change"] == pytest.approx(0.005)
    assert bool(s.loc[8, "stabilised"]) is True
    assert s.loc[2, "stabilised"] is None and s.loc[4, "stabilised"] is None
    s2 = stability_summary(curve, tol=0.004).set_index("size")
    assert not s2.loc[8, "stabilised"]


def test_default_sizes_and_bad_sizes(store) -> None:
    assert default_sizes(100_000) == [] and default_sizes(250_000) == [12500, 25000, 50000, 100000]
    assert default_sizes(500, cap=400) == [50, 100, 200, 400]
    with pytest.raises(ProbeError, match=r"between 3 \(one row per class\) and 600.*\[700\]"):
        subsample_curve(store, "m", "t", [60, 700], [13], backend="sklearn")


def test_cli_json_and_csv(store, tmp_path) -> None:
    out = tmp_path / "curve.csv"
    args = ["probe-subsample", "--store", store, "--model", "m", "--task", "t", "--sizes",
            "60,300", "--seeds", "13", "--backend", "sklearn", "--out", str(out), "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    obj = json.loads(res.output)
    assert [r["size"] for r in obj["curve"]] == [60, 300] and len(obj["summary"]) == 2
    assert out.read_text().splitlines()[0].startswith("model,task,n_train,size,seed,C,mcc")
    for bad, msg in [
        (["--sizes", "60,0"], "error: --sizes: expected a positive int, got 0"),
        (["--seeds", "13,-1"], "error: --seeds: expected a non-negative int, got -1"),
        (["--C", "0"], "error: --C: expected a positive number, got 0.0"),
        (["--tol", "0"], "error: --tol: expected a positive number, got 0.0"),
        (["--backend", "fst"], "error: --backend: expected one of"),
    ]:
        res = CliRunner().invoke(app, [*args[:7], *bad])
        assert res.exit_code == 2 and msg in " ".join(res.output.split()), (bad, res.output)
    # the same declaration speaks to Python callers in parameter names
    from geneb.errors import GenebError
    from geneb.probe.subsample import subsample_curve

    with pytest.raises(GenebError, match=r"^sizes\[1\]: expected a positive int, got 0"):
        subsample_curve(store, "m", "t", [60, 0], [13])


def test_report_section_from_the_curve(store, tmp_path) -> None:
    from test_analysis_controlled import results_table

    curve = tmp_path / "curve.csv"
    subsample_curve(store, "m", "t", [60, 150, 300], [13, 17], backend="sklearn").to_csv(
        curve, index=False
    )
    res_path = tmp_path / "results.parquet"
    results_table().to_parquet(res_path)
    args = ["report", "-r", str(res_path), "-o", str(tmp_path / "rep"), "--n-boot", "100",
            "--subsampling", str(curve), "--json"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    summ = json.loads(res.output)["subsampling"]["summary"]
    assert [r["size"] for r in summ] == [60, 150, 300] and all(r["n_seeds"] == 2 for r in summ)
    assert (tmp_path / "rep" / "figures" / "subsampling.png").is_file()
    bad = tmp_path / "bad.csv"
    bad.write_text("model,size\nm,3\n")
    res = CliRunner().invoke(app, [*args[:7], "--subsampling", str(bad)])
    assert res.exit_code == 2 and "missing column(s) task, n_train, seed, C, mcc" in res.output
