"""Issue 19 case 3: part names can never make a part invisible; foreign names are reported.

A part named ``part-9999999999-ffffffff.parquet`` made the next parts 11-digit names that the
reader (exactly 10 digits) ignored: their rows were invisible, recomputed and lost again.
Counts are checked against pyarrow reading every file of the folder itself.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest
from test_results_storage import _row

from geneb.errors import GenebError
from geneb.results import parts
from geneb.results.table import ResultsTable, read_results


def _stored_rows(p):
    return sum(pq.read_metadata(f).num_rows for f in p.iterdir() if f.name.endswith(".parquet"))


def test_a_huge_sequence_number_loses_no_later_part(tmp_path):
    p = tmp_path / "results.parquet"
    ResultsTable(p).append([_row(seed=13, mcc=0.1)])
    first = parts.list_parts(p)[0]
    shutil.move(first, p / "part-9999999999-ffffffff.parquet")  # dropped in by hand
    ResultsTable(p).append([_row(seed=17, mcc=0.2)])
    ResultsTable(p).append([_row(seed=13, mcc=0.3)])  # the same cell again: the newer row wins
    names = [f.name for f in parts.list_parts(p)]
    assert names[0] == "part-9999999999-ffffffff.parquet"
    assert [n.split("-")[1] for n in names[1:]] == ["10000000000", "10000000001"]
    assert _stored_rows(p) == 3 == len(pd.read_parquet(p))
    df = read_results(p).sort_values("seed")
    assert df.seed.tolist() == [13, 17] and df.mcc.tolist() == [0.3, 0.2]
    assert ResultsTable(p).compact()[0] == 3
    assert read_results(p).sort_values("seed").mcc.tolist() == [0.3, 0.2]


@pytest.mark.parametrize("name", ["part-12-abc.parquet", "part-0000000003-XYZ.parquet",
                                  "other.parquet", "part-0000000004-abc.parq"])
def test_a_foreign_or_malformed_part_name_is_reported(tmp_path, name):
    p = tmp_path / "results.parquet"
    ResultsTable(p).append([_row(seed=13)])
    shutil.copy(parts.list_parts(p)[0], p / name)
    with pytest.raises(GenebError, match=f"results table .*'{name}' is not a results part name"):
        read_results(p)
    with pytest.raises(GenebError, match=f"'{name}' is not a results part name"):
        ResultsTable(p).append([_row(seed=17)])  # nothing is written past a part it cannot see
    assert len(list(p.iterdir())) == 2


def test_cli_reports_a_foreign_part_in_one_line(tmp_path):
    from probe_stores import gaussian_task
    from typer.testing import CliRunner

    from geneb.cli import app
    from geneb.store import FeatureStore

    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m", "t", n_train=40, n_test=20, dim=4)
    out = tmp_path / "r.parquet"
    ResultsTable(out).append([_row(seed=13)])
    shutil.copy(parts.list_parts(out)[0], out / "part-1.parquet")
    r = CliRunner().invoke(app, ["probe", "--store", str(fs.path), "--results", str(out),
                                 "--shots", "1", "--seeds", "13", "--workers", "1"])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "'part-1.parquet' is not a results part name" in lines[0]
    assert "Traceback" not in r.output
