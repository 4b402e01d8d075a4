"""The results folder: append-only parts, legacy migration, compaction, checksums, umask, a
full disk, concurrent appends. Small tables made here; no ../shared needed."""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import stat

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from geneb.errors import GenebError
from geneb.results import parts
from geneb.results.schema import RESULT_COLUMNS, RESULTS_SCHEMA_VERSION, cell_id
from geneb.results.table import ResultsTable, cell_ids, read_results, rows_to_table


def _row(**kw):
    base = {c: None for c in RESULT_COLUMNS}
    base.update(schema_version=RESULTS_SCHEMA_VERSION, model="m", task="t", category="enhancers",
                regime="1", k=1, seed=13, C=1.0, probe="linear", protocol="converged",
                backend="fast", standardize=False, take_all=False, mcc=0.5, n_classes=2,
                train_rows=[3, 9], store_fingerprint="s", storage_dtype="float32")
    base.update(kw)
    return base


def test_each_append_is_one_part_and_newest_row_wins(tmp_path):
    p = tmp_path / "results.parquet"
    ResultsTable(p).append([_row(mcc=0.1), _row(seed=17, mcc=0.2)])
    ResultsTable(p).append([_row(mcc=0.3)])
    assert len(parts.list_parts(p)) == 2
    assert len(pd.read_parquet(p)) == 3  # every stored row
    assert ds.dataset(p).to_table().num_rows == 3
    df = read_results(p).sort_values("seed")
    assert df.mcc.tolist() == [0.3, 0.2]


def test_cell_ids_columnwise_equal_rowwise():
    rows = [_row(), _row(probe="mlp", C=None, backend="torch"), _row(protocol=None),
            _row(backend="sklearn"), _row(C=float("nan"))]
    t = rows_to_table(rows)
    assert cell_ids(t) == [cell_id(r) for r in t.to_pylist()]
    # linear backends share an identity, MLP backends do not; null protocol = converged
    assert cell_id(_row(backend="sklearn")) == cell_id(_row(backend="fast"))
    mlp = dict(probe="mlp", C=None)
    assert cell_id(_row(**mlp, backend="sklearn")) != cell_id(_row(**mlp, backend="torch"))
    assert cell_id(_row(protocol=None)) == cell_id(_row())
    assert cell_id(_row(protocol="paper")) != cell_id(_row())


def test_storage_dtype_is_part_of_identity():
    # issue 15: results from a float16 and a float32 store had the same identity
    assert cell_id(_row(storage_dtype="float16")) != cell_id(_row(storage_dtype="float32"))


def test_legacy_single_file_is_read_then_migrated(tmp_path):
    p = tmp_path / "results.parquet"
    v1 = [{k: v for k, v in _row(schema_version=1, mcc=0.1).items()
           if k not in ("protocol", "storage_dtype", "n_convergence_warnings")}]
    pq.write_table(pa.Table.from_pylist(v1), p)  # the version-1 single-file format
    df = read_results(p)
    assert df.protocol.tolist() == ["converged"] and df.storage_dtype.isna().all()
    ResultsTable(p).append([_row(seed=17, mcc=0.2)])
    assert p.is_dir() and len(parts.list_parts(p)) == 2
    assert sorted(read_results(p).mcc) == [0.1, 0.2]
    assert not (tmp_path / ".results.parquet.migrate").exists()


def test_interrupted_migration_is_finished(tmp_path):
    p = tmp_path / "results.parquet"
    ResultsTable(p).append([_row(mcc=0.1)])
    os.replace(p, tmp_path / ".results.parquet.migrate")  # killed between unlink and rename
    assert read_results(p).mcc.tolist() == [0.1]  # readable meanwhile
    ResultsTable(p).append([_row(seed=17, mcc=0.2)])
    assert sorted(read_results(p).mcc) == [0.1, 0.2]


def test_compact_folds_parts_and_reads_the_same(tmp_path):
    p = tmp_path / "results.parquet"
    for i in range(5):
        ResultsTable(p).append([_row(seed=s, mcc=i / 10) for s in (1, 2, 3)])
    before = read_results(p)
    (p / ".part-0000000009-dead.parquet.abcd.tmp").write_bytes(b"half")  # a killed writer's
    n, kept = ResultsTable(p).compact()
    assert (n, kept) == (5, 3)
    assert len(parts.list_parts(p)) == 1 and len(pd.read_parquet(p)) == 3
    assert not list(p.glob(".*.tmp"))
    pd.testing.assert_frame_equal(read_results(p), before)
    ResultsTable(p).append([_row(seed=1, mcc=0.9)])  # later writes still win after a compaction
    assert read_results(p).set_index("seed").mcc[1] == 0.9


def _flip_data_page_byte(f):
    meta = pq.ParquetFile(f).metadata
    col = meta.schema.names.index("mcc")
    cc = meta.row_group(0).column(col)
    start = cc.dictionary_page_offset or cc.data_page_offset
    pos = start + cc.total_compressed_size - 1  # the last byte of the chunk: page data
    raw = bytearray(f.read_bytes())
    raw[pos] ^= 0x10
    f.write_bytes(bytes(raw))


def test_flipped_bit_is_an_error_naming_the_file(tmp_path):
    # issue 15: one bit flipped in results.parquet was read without complaint
    p = tmp_path / "results.parquet"
    ResultsTable(p).append([_row(seed=s, mcc=s / 100) for s in range(50)])
    f = parts.list_parts(p)[0]
    _flip_data_page_byte(f)
    # without verification the flip goes unnoticed (what happened before)
    pq.read_table(f)
    with pytest.raises(GenebError, match=rf"{f.name}.*corrupt"):
        read_results(p)


def test_files_honour_the_umask(tmp_path):
    # issue 15: results.parquet was created mode 0600 whatever the umask
    old = os.umask(0o022)
    try:
        p = tmp_path / "results.parquet"
        ResultsTable(p).append([_row()])
        ResultsTable(p).compact()
        ResultsTable(p).append([_row(seed=5)])
    finally:
        os.umask(old)
    for f in parts.list_parts(p):
        assert stat.S_IMODE(f.stat().st_mode) == 0o644, f


def test_disk_full_is_one_line_error_and_keeps_stored_rows(tmp_path, monkeypatch):
    # issue 15: disk full during probe was an OSError traceback
    p = tmp_path / "results.parquet"
    ResultsTable(p).append([_row(mcc=0.1)])
    real = pq.write_table

    def full(table, where, **kw):
        real(table, where, **kw)  # some bytes made it to disk, then the device filled up
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    with pytest.raises(GenebError, match=r"cannot write results table .*results.parquet.*"
                                         r"No space left on device.*disk full") as ei:
        ResultsTable(p).append([_row(seed=17, mcc=0.2)])
    assert "\n" not in str(ei.value)
    monkeypatch.setattr(pq, "write_table", real)
    assert read_results(p).mcc.tolist() == [0.1]
    assert os.listdir(p) == [parts.list_parts(p)[0].name]  # no unfinished part left


def _writer(path: str, worker: int, n: int) -> None:
    for i in range(n):
        ResultsTable(path).append([_row(model=f"m{worker}", seed=i, mcc=i / 100)])


def test_concurrent_appends_lose_nothing(tmp_path):
    p = tmp_path / "results.parquet"
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(p), w, 15)) for w in range(3)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join()
        assert pr.exitcode == 0
    t = ResultsTable(p).read()
    assert t.num_rows == 45 and len(parts.list_parts(p)) == 45


def test_a_foreign_folder_is_never_written_into(tmp_path):
    task = tmp_path / "my_task"
    task.mkdir()
    (task / "train.csv").write_text("sequence,label\nACGT,0\n")
    with pytest.raises(GenebError, match="not a geneb results table.*train.csv"):
        ResultsTable(task).append([_row()])
    assert os.listdir(task) == ["train.csv"]
