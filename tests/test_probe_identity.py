"""Issue-15 regressions at the engine and CLI level: storage dtype is part of a cell's
identity; a full disk mid-run is a one-line error that keeps every finished pair. Small stores
built here (no ../shared)."""

from __future__ import annotations

import errno

import numpy as np
import pyarrow.parquet as pq
import pytest
from probe_stores import gaussian_embeddings, write_entry
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError
from geneb.probe.engine import run_probes
from geneb.results.table import read_results
from geneb.store import FeatureStore


def _task(fs, model, task, dtype, seed=0, overwrite=False):
    y_tr = np.arange(60) % 2
    y_te = np.arange(30) % 2
    X = gaussian_embeddings(np.concatenate([y_tr, y_te]), 8, sep=1.5, seed=seed)
    for split, Xs, ys in (("train", X[:60], y_tr), ("test", X[60:], y_te)):
        write_entry(fs, model, task, split, Xs, ys, task_fingerprint=f"tf:{task}:{split}",
                    storage_dtype=dtype, overwrite=overwrite)


def test_float16_and_float32_results_are_different_cells(tmp_path):
    # issue 15: "results made from a float16 store vs a float32 store: same fingerprint,
    # 0 computed, 45 already done"
    s32 = FeatureStore(tmp_path / "s32", "a")
    s16 = FeatureStore(tmp_path / "s16", "a")
    _task(s32, "m", "t", "float32")
    _task(s16, "m", "t", "float16")
    out = tmp_path / "r.parquet"
    kw = dict(shots="1,full", seeds=(13, 17), Cs=(1.0,), workers=1)
    a = run_probes(s32.path, out, **kw)
    b = run_probes(s16.path, out, **kw)
    assert a.n_computed + a.n_reused == 4
    assert b.n_skipped == 0 and b.n_computed + b.n_reused == 4
    df = read_results(out)
    assert sorted(df.storage_dtype) == ["float16"] * 4 + ["float32"] * 4
    assert run_probes(s16.path, out, **kw).n_skipped == 4


def test_reextracted_as_float16_is_recomputed(tmp_path):
    fs = FeatureStore(tmp_path / "s", "a")
    _task(fs, "m", "t", "float32")
    out = tmp_path / "r.parquet"
    kw = dict(shots="full", seeds=(13,), Cs=(1.0,), workers=1)
    run_probes(fs.path, out, **kw)
    _task(fs, "m", "t", "float16", overwrite=True)
    assert run_probes(fs.path, out, **kw).n_computed == 1


def _two_pairs(tmp_path):
    fs = FeatureStore(tmp_path / "s", "a")
    _task(fs, "m", "t1", "float32")
    _task(fs, "m", "t2", "float32", seed=1)
    return fs


def _fail_second_write(monkeypatch):
    real = pq.write_table
    calls = []

    def write(table, where, **kw):
        calls.append(where)
        if len(calls) >= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(table, where, **kw)

    monkeypatch.setattr(pq, "write_table", write)


def test_disk_full_during_probe_keeps_finished_pairs(tmp_path, monkeypatch):
    # issue 15: "disk full during probe: OSError traceback"
    fs = _two_pairs(tmp_path)
    out = tmp_path / "r.parquet"
    _fail_second_write(monkeypatch)
    with pytest.raises(GenebError, match="cannot write results table.*No space left") as ei:
        run_probes(fs.path, out, shots="full", seeds=(13,), Cs=(1.0,), workers=1)
    assert "\n" not in str(ei.value)
    monkeypatch.undo()
    done = read_results(out)
    assert len(done) == 1  # the first pair, intact
    rest = run_probes(fs.path, out, shots="full", seeds=(13,), Cs=(1.0,), workers=1)
    assert rest.n_skipped == 1 and rest.n_computed == 1


def test_disk_full_through_the_cli_is_exit_2_without_traceback(tmp_path, monkeypatch):
    fs = _two_pairs(tmp_path)
    out = tmp_path / "r.parquet"
    _fail_second_write(monkeypatch)
    r = CliRunner().invoke(app, ["probe", "--store", str(fs.path), "--results", str(out), "--shots",
                                 "full", "--seeds", "13", "--workers", "1"])
    assert r.exit_code == 2, r.output
    assert "error: cannot write results table" in r.output and "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_results_compact_command(tmp_path):
    fs = _two_pairs(tmp_path)
    out = tmp_path / "r.parquet"
    run_probes(fs.path, out, shots="1,full", seeds=(13, 17), Cs=(1.0,), workers=1)
    before = read_results(out)
    r = CliRunner().invoke(app, ["results", "compact", "--results", str(out)])
    assert r.exit_code == 0 and "2 part(s) folded into 1 (8 rows)" in r.output, r.output
    assert before.equals(read_results(out))
    r = CliRunner().invoke(app, ["results", "compact", "--results", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "no results table" in r.output
