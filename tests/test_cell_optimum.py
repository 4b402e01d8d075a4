"""A cell's identity separates results that are not the same optimum (issue 31 item 2).

The stand-in early-stopping solver is ``fast`` with ``max_iter=1`` (one Newton step, then
``converged=False``, as a float32 or capped backend would stop): its rows never stand in for
exact ones, a later exact run recomputes them, and analysis reads the exact rows, never both.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from probe_stores import gaussian_embeddings, write_entry

from geneb.analysis.table import load_results
from geneb.probe.engine import run_probes
from geneb.probe.solvers.fast import FastBackend
from geneb.results.schema import analysis_rows, cell_id
from geneb.results.table import read_results
from geneb.store import FeatureStore

KW = dict(shots="10,full", seeds=(13, 17), Cs=(1.0, 100.0), workers=1, backend="fast")


def _store(tmp_path):
    fs = FeatureStore(tmp_path / "s", "a")
    y_tr, y_te = np.arange(90) % 3, np.arange(45) % 3
    X = gaussian_embeddings(np.concatenate([y_tr, y_te]), 6, sep=1.0, seed=3)
    for split, Xs, ys in (("train", X[:90], y_tr), ("test", X[90:], y_te)):
        write_entry(fs, "m", "t", split, Xs, ys, task_fingerprint=f"tf:{split}")
    return fs


@pytest.fixture
def stops_early(monkeypatch):
    """Make ``fast`` the stand-in solver that stops after one iteration."""
    real = FastBackend.solve

    def one_step(self, problem, fits):
        return real(self, dataclasses.replace(problem, max_iter=1), fits)

    def install():
        monkeypatch.setattr(FastBackend, "solve", one_step)

    def remove():
        monkeypatch.setattr(FastBackend, "solve", real)

    return install, remove


def test_early_stopped_rows_never_stand_in_for_exact_ones(tmp_path, stops_early):
    install, remove = stops_early
    fs = _store(tmp_path)
    exact_out, out = tmp_path / "exact.parquet", tmp_path / "r.parquet"
    ref = run_probes(fs.path, exact_out, **KW)
    assert ref.n_computed == 8 and read_results(exact_out).converged.all()

    install()
    stopped = run_probes(fs.path, out, **KW)
    rows = read_results(out)
    assert stopped.n_computed == 8 and not rows.converged.any()
    assert set(rows.precision) == {"float64"}
    # the early-stopped rows are not the optimum: a rerun (any backend) does not skip them
    remove()
    again = run_probes(fs.path, out, **KW)
    assert again.n_skipped == 0 and again.n_computed == 8
    stored = read_results(out)
    assert len(stored) == 16 and stored.converged.sum() == 8  # both kept in the table
    # analysis reads one row per cell, the exact one, with the exact run's numbers
    got = load_results(out).sort_values(["regime", "seed", "C"])
    want = load_results(exact_out).sort_values(["regime", "seed", "C"])
    assert len(got) == 8 and got.converged.all()
    np.testing.assert_array_equal(got.mcc.to_numpy(), want.mcc.to_numpy())
    # and the other way round: exact rows stand for the cell whatever solver is asked next
    install()
    assert run_probes(fs.path, exact_out, **KW).n_computed == 0


def test_only_early_stopped_rows_are_kept_and_flagged(tmp_path, stops_early):
    install, _ = stops_early
    fs = _store(tmp_path)
    install()
    run_probes(fs.path, tmp_path / "r.parquet", **KW)
    df = load_results(tmp_path / "r.parquet")
    assert len(df) == 8 and not df.converged.any()  # kept, and the report lists them


def test_identity_by_hand():
    row = dict(model="m", task="t", regime="full", seed=13, C=1.0, probe="linear",
               protocol="converged", standardize=False, store_fingerprint="f",
               storage_dtype="float32", alpha=None)
    planned = cell_id({**row, "backend": "fast"})  # a planned cell asks for the optimum
    for backend, precision in (("fast", "float64"), ("sklearn", "float64"),
                               ("torch", "float64"), ("cuml", "float32")):
        done = {**row, "backend": backend, "precision": precision, "converged": True}
        assert cell_id(done) == planned  # judged by geneb: the same optimum
        assert cell_id({**done, "converged": False}) != planned
    # a cuML row from before geneb judged cuML's fits (no precision) is never the optimum
    legacy = {**row, "backend": "cuml", "precision": None, "converged": True}
    assert cell_id(legacy) != planned
    # two early-stopped rows of different backends are different results
    a = cell_id({**row, "backend": "fast", "precision": "float64", "converged": False})
    b = cell_id({**row, "backend": "cuml", "precision": "float32", "converged": False})
    assert a != b
    # analysis: one row per cell; the exact row wins even when older
    cols = {k: [v] * 3 for k, v in row.items()}
    cols.update(backend=["fast", "cuml", "cuml"], precision=["float64", "float32", None],
                converged=[True, False, True])
    assert analysis_rows(cols, ["2026-01-01", "2026-02-01", "2026-03-01"]) == [0]
    # without an exact row: the newest of the others, one row, never two
    cols["converged"] = [False, False, True]
    assert analysis_rows(cols, ["2026-01-01", "2026-03-01", "2026-02-01"]) == [1]
