"""The results table: schema, atomic writes, merge by cell identity, clear errors."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from geneb.errors import GenebError
from geneb.results.schema import RESULT_COLUMNS, RESULTS_SCHEMA, cell_id
from geneb.results.table import ResultsTable, read_results


def _row(**kw):
    base = {c: None for c in RESULT_COLUMNS}
    base.update(schema_version=1, model="m", task="t", category="enhancers", regime="1", k=1,
                seed=13, C=1.0, probe="linear", backend="sklearn", standardize=False,
                take_all=False, mcc=0.5, n_classes=2, train_rows=[3, 9], store_fingerprint="s")
    base.update(kw)
    return base


def test_roundtrip_and_types(tmp_path):
    p = ResultsTable(tmp_path / "r.parquet").write(
        [_row(), _row(regime="full", k=None, seed=17, train_rows=[])])
    # a folder of parquet parts, each with the schema; pandas and pyarrow read the folder
    parts = sorted(p.glob("part-*.parquet"))
    assert len(parts) == 1 and pq.read_schema(parts[0]).equals(RESULTS_SCHEMA)
    assert len(pd.read_parquet(p)) == 2
    df = read_results(p)
    assert list(df.columns) == list(RESULT_COLUMNS)
    assert df.k.isna().tolist() == [False, True]
    assert [list(x) for x in df.train_rows] == [[3, 9], []]


def test_append_replaces_same_cell_and_keeps_others(tmp_path):
    p = tmp_path / "r.parquet"
    ResultsTable(p).append([_row(mcc=0.1), _row(seed=17, mcc=0.2)])
    ResultsTable(p).append([_row(mcc=0.3), _row(probe="mlp", C=None, mcc=0.4)])
    df = read_results(p).sort_values(["probe", "seed"])
    assert df.mcc.tolist() == [0.3, 0.2, 0.4]
    # NaN and None C are the same identity (pandas turns null C into NaN)
    assert cell_id({**_row(), "C": float("nan")}) == cell_id({**_row(), "C": None})


def test_dataframe_write_roundtrip(tmp_path):
    p = tmp_path / "r.parquet"
    ResultsTable(p).write([_row(), _row(seed=5)])
    df = read_results(p)
    ResultsTable(tmp_path / "copy.parquet").write(df)
    pd.testing.assert_frame_equal(read_results(tmp_path / "copy.parquet"), df)


def test_foreign_files_are_clear_errors(tmp_path):
    with pytest.raises(GenebError, match="no results table"):
        read_results(tmp_path / "missing.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")  # a single file: the format of geneb <= 0.1
    with pytest.raises(GenebError, match="not a readable parquet"):
        read_results(bad)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"model": ["m"], "mcc": [0.1]}), other)
    with pytest.raises(GenebError, match=r"missing column\(s\) schema_version"):
        read_results(other)
    with pytest.raises(GenebError, match="lacks column"):
        ResultsTable(tmp_path / "x.parquet").write([{"model": "m"}])
    assert not (tmp_path / "x.parquet").exists()
