"""Bad input gives a clear GenebError naming the file, row or key; cell selection rules."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from example_results import example_results

from geneb.analysis.metadata import model_metadata
from geneb.analysis.properties import read_model_properties
from geneb.analysis.table import (
    choose_main_c,
    common_tasks,
    load_results,
    regime_order,
    restrict,
)
from geneb.errors import GenebError, UnknownNameError


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    return example_results(seeds=(13,), Cs=(0.1, 1.0), mlp=True, regimes=("10", "full"))


def test_missing_path_and_columns(tmp_path, small):
    with pytest.raises(GenebError, match="no results table at"):
        load_results(tmp_path / "nope.parquet")
    with pytest.raises(GenebError, match="missing column.*mcc"):
        load_results(small.drop(columns=["mcc"]))
    with pytest.raises(GenebError, match="no rows"):
        load_results(small.iloc[:0])
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(GenebError, match="bad.parquet"):
        load_results(bad)


def test_bad_values_name_the_row(small):
    df = small.copy()
    df.loc[5, "regime"] = "few"
    with pytest.raises(GenebError, match="row 5: regime 'few'"):
        load_results(df)
    df = small.copy()
    df.loc[7, "mcc"] = np.nan
    with pytest.raises(GenebError, match="row 7: mcc"):
        load_results(df)
    df = small.copy()
    df.loc[3, "mcc"] = 1.5
    with pytest.raises(GenebError, match="row 3: mcc 1.5"):
        load_results(df)
    df = small.copy()
    df.loc[df["task"] == "prom_a", "category"] = ["enhancers"] + ["promoters"] * (
        (df["task"] == "prom_a").sum() - 1
    )
    with pytest.raises(GenebError, match="task 'prom_a' appears with several categories"):
        load_results(df)


def test_parquet_roundtrip_and_duplicates_keep_latest(tmp_path, small):
    dup = small.iloc[[0]].copy()
    dup["mcc"] = 0.123
    dup["created"] = "2030-01-01T00:00:00Z"
    df = pd.concat([dup, small], ignore_index=True)  # the newer duplicate comes first
    path = tmp_path / "r.parquet"
    df.to_parquet(path)
    got = load_results(path)
    assert len(got) == len(small)
    key = small.iloc[0]
    row = got[
        (got["model"] == key["model"])
        & (got["task"] == key["task"])
        & (got["regime"] == key["regime"])
        & (got["seed"] == key["seed"])
        & (got["probe"] == key["probe"])
        & (got["C"] == key["C"])
    ]
    assert row["mcc"].tolist() == [0.123]


def test_restrict_and_unknown_names(small):
    df = load_results(small)
    with pytest.raises(UnknownNameError, match="Did you mean 'full'"):
        restrict(df, regimes=["fulll"])
    with pytest.raises(UnknownNameError, match="unknown C '3'.*0.1, 1"):
        restrict(df, Cs=[3.0])
    r = restrict(df, regimes=["full"], Cs=[0.1])
    assert set(r["regime"]) == {"full"}
    assert set(r.loc[r["probe"] == "linear", "C"]) == {0.1}
    assert (r["probe"] == "mlp").any()  # MLP rows have no C and stay


def test_choose_main_c_and_regime_order(small):
    df = load_results(small)
    assert choose_main_c(df) == 1.0
    assert choose_main_c(df, [0.1]) == 0.1
    assert choose_main_c(df, [0.1, 1.0]) == 1.0
    no1 = df[~np.isclose(df["C"].fillna(-1), 1.0)]
    assert choose_main_c(no1) == 0.1
    assert choose_main_c(df[df["probe"] == "mlp"]) is None
    assert regime_order(["full", "10", "1", "5"]) == ["1", "5", "10", "full"]


def test_common_tasks_drops_incomplete(small):
    df = load_results(small)
    df = df[~((df["model"] == "tiny-1m") & (df["task"] == "enh_b"))]
    kept, dropped = common_tasks(df)
    assert dropped == ["enh_b"]
    assert "enh_b" not in set(kept["task"])


def test_model_file_errors(tmp_path, small):
    with pytest.raises(GenebError, match="no model-properties file"):
        read_model_properties(tmp_path / "none.csv")
    p = tmp_path / "info.csv"
    p.write_text("name,architecture\na,cnn\n")
    with pytest.raises(GenebError, match="no 'model' column"):
        read_model_properties(p)
    p.write_text("model,architecture\na,cnn\nb,cnn\na,transformer\n")
    with pytest.raises(GenebError, match="line 4: model 'a' listed twice"):
        read_model_properties(p)
    p.write_text("model,architecture\na,cnn\n ,cnn\n")
    with pytest.raises(GenebError, match="line 3: empty model"):
        read_model_properties(p)
    p.write_text("model,architecture_clas\na,CNN\n")  # a typo of a property is not a column
    with pytest.raises(GenebError, match=r"unknown key\(s\) \['architecture_clas'\] \(did "
                       r"you mean 'architecture_class'\?\)"):
        read_model_properties(p)
    p.write_text("model,architecture,pooling\na,cnn,mean\n")  # the user's own columns
    assert read_model_properties(p)[["architecture", "pooling"]].values.tolist() == [
        ["cnn", "mean"]]
    df = load_results(small)
    df.loc[df["model"] == "tiny-1m", "n_params"] = [1.0, 2.0] * int(
        (df["model"] == "tiny-1m").sum() / 2
    )
    with pytest.raises(GenebError, match="'tiny-1m' has several parameter counts"):
        model_metadata(df)
