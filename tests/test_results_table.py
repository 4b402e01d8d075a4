"""``geneb.results.ResultsTable`` (issue 20): the one object that appends, reads, compacts and
migrates the results table; the one computation of a cell's identity."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import geneb
from geneb.errors import GenebError
from geneb.results import ResultsTable, parts
from geneb.results.schema import CELL_IDENTITY, RESULT_COLUMNS, RESULTS_SCHEMA_VERSION, cell_id
from geneb.results.table import cell_ids, rows_to_table


def _row(**kw):
    base = {c: None for c in RESULT_COLUMNS}
    base.update(schema_version=RESULTS_SCHEMA_VERSION, model="m", task="t", category="enhancers",
                regime="1", k=1, seed=13, C=1.0, probe="linear", protocol="converged",
                backend="fast", standardize=False, take_all=False, mcc=0.5, n_classes=2,
                train_rows=[3, 9], store_fingerprint="s", storage_dtype="float32")
    base.update(kw)
    return base


def test_append_read_compact(tmp_path):
    t = ResultsTable(tmp_path / "r.parquet")
    assert not t.exists()
    with pytest.raises(GenebError, match="no results table"):
        t.read()
    t.append([_row(mcc=0.1), _row(seed=17, mcc=0.2)])
    t.append(rows_to_table([_row(mcc=0.3)]))  # an arrow table is appended as it is
    assert t.exists() and len(parts.list_parts(t.path)) == 2
    # every stored row for pandas, the newest per cell for ResultsTable
    assert len(pd.read_parquet(t.path)) == 3
    got = t.read_frame().sort_values("seed")
    assert got.mcc.tolist() == [0.3, 0.2] and got.seed.tolist() == [13, 17]
    assert t.read().num_rows == 2
    assert t.compact() == (2, 2)
    assert len(parts.list_parts(t.path)) == 1
    assert sorted(geneb.read_results(t.path).mcc) == [0.2, 0.3]


def test_migrate_a_single_file_table(tmp_path):
    p = tmp_path / "old.parquet"
    v1 = [{k: v for k, v in _row(schema_version=1, mcc=0.4).items()
           if k not in ("protocol", "storage_dtype", "n_convergence_warnings")}]
    pq.write_table(pa.Table.from_pylist(v1), p)  # geneb <= 0.1: one file, schema version 1
    t = ResultsTable(p)
    assert t.read_frame().mcc.tolist() == [0.4]
    assert t.migrate() is True
    assert p.is_dir() and len(parts.list_parts(p)) == 1
    df = t.read_frame()
    assert df.mcc.tolist() == [0.4] and df.protocol.tolist() == ["converged"]
    assert int(df.schema_version.iloc[0]) == RESULTS_SCHEMA_VERSION
    assert t.migrate() is False  # a folder: nothing to do
    assert ResultsTable(tmp_path / "none").migrate() is False


def test_write_replaces_the_table(tmp_path):
    t = ResultsTable(tmp_path / "r.parquet")
    t.append([_row(mcc=0.1), _row(seed=17, mcc=0.2)])
    t.write(pd.DataFrame([_row(seed=42, mcc=0.9)]))
    assert t.read_frame()[["seed", "mcc"]].values.tolist() == [[42, 0.9]]


def test_cell_identity_by_hand():
    """The identity a pandas row (numpy scalars, NaN) and an arrow row both get, written out."""
    row = _row(seed=np.int64(17), C=np.float64(0.1), standardize=np.bool_(True), alpha=math.nan,
               probe="linear", backend="sklearn", protocol=None)
    # a converged linear row is the optimum: backend and precision blanked, converged True
    expect = ("m", "t", "1", 17, 0.1, "linear", "converged", True, "s", "float32", None,
              None, None, True)
    assert CELL_IDENTITY[3:5] == ("seed", "C")  # the order written out above
    got = cell_id(row)
    assert got == expect
    assert [type(v) for v in got[3:5]] == [int, float] and type(got[7]) is bool
    mlp = _row(probe="mlp", C=None, backend="torch")
    assert cell_id(mlp)[CELL_IDENTITY.index("backend")] == "torch"
    # the column-wise path over an arrow table gives the same identities
    t = rows_to_table([{**row, "seed": 17, "C": 0.1, "standardize": True, "alpha": None}, mlp])
    assert cell_ids(t) == [expect, cell_id(mlp)]
