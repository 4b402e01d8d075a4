"""``--protocol paper``: every cell equals a direct scikit-learn ``LogisticRegression(C=C,
max_iter=1000)`` fit on the same rows, to 1e-12 MCC; recorded and kept beside converged cells.

The synthetic tests build their own small stores (no ../shared); the real-task test uses
../shared/data with k-mer features."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from probe_stores import gaussian_task, kmer_spectrum, write_task_features
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from sklearn.preprocessing import StandardScaler
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import ProbeError, UnknownNameError
from geneb.probe.engine import run_probes
from geneb.results.table import read_results
from geneb.store import FeatureStore

SEEDS = (13, 17)


def _direct(fs, model, task, row, standardize):
    """The paper's fit, written as a user following the paper would write it."""
    tr = fs.get(model, task, "train")
    te = fs.get(model, task, "test")
    file_rows = np.asarray(tr.rows)
    rows = np.arange(len(file_rows)) if row.regime == "full" else np.searchsorted(
        file_rows, np.asarray(row.train_rows))
    X, y, Xte = tr.embeddings[rows], tr.labels[rows], te.embeddings
    assert X.dtype == np.float32
    if standardize:
        sc = StandardScaler().fit(X)
        X, Xte = sc.transform(X), sc.transform(Xte)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        clf = LogisticRegression(C=row.C, max_iter=1000).fit(X, y)
    n_warn = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return matthews_corrcoef(te.labels, clf.predict(Xte)), n_warn


def _check_equal(fs, df, standardize):
    assert len(df)
    for row in df.itertuples():
        mcc, n_warn = _direct(fs, row.model, row.task, row, standardize)
        assert abs(row.mcc - mcc) <= 1e-12, (row.task, row.regime, row.seed, row.C)
        assert row.n_convergence_warnings == n_warn
        assert row.converged == (n_warn == 0)


@pytest.fixture()
def synth(tmp_path):
    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m", "bin", n_train=120, n_test=60, dim=12, sep=1.0)
    gaussian_task(fs, "m", "tri", n_train=150, n_test=60, n_classes=3, dim=10, sep=1.5, seed=4)
    return fs


@pytest.mark.parametrize("standardize", [False, True])
def test_paper_equals_direct_sklearn_on_synthetic(synth, tmp_path, standardize):
    out = tmp_path / "r.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # counted, never printed
        s = run_probes(synth.path, out, shots="1,10,full", seeds=SEEDS, Cs=(0.01, 1.0, 100.0),
                       protocol="paper", workers=1, standardize=standardize)
    df = read_results(out)
    assert s.n_computed == len(df) == 2 * 3 * 2 * 3
    assert (df.protocol == "paper").all() and (df.backend == "sklearn").all()
    _check_equal(synth, df, standardize)


def test_paper_and_converged_cells_sit_side_by_side(synth, tmp_path):
    out = tmp_path / "r.parquet"
    kw = dict(shots="10,full", seeds=SEEDS, Cs=(1.0,), workers=1, tasks=["bin"])
    a = run_probes(synth.path, out, **kw)
    b = run_probes(synth.path, out, protocol="paper", **kw)
    assert a.n_computed + a.n_reused == b.n_computed + b.n_reused == 4 and b.n_skipped == 0
    df = read_results(out)
    assert sorted(df.protocol.value_counts().items()) == [("converged", 4), ("paper", 4)]
    again = run_probes(synth.path, out, protocol="paper", **kw)
    assert again.n_computed == 0 and again.n_skipped == 4


def test_paper_protocol_refuses_what_does_not_apply(synth, tmp_path):
    out = tmp_path / "r.parquet"
    with pytest.raises(ProbeError, match="probe='linear', got probe='mlp'"):
        run_probes(synth.path, out, probe="mlp", protocol="paper")
    with pytest.raises(ProbeError, match="backend='fast'"):
        run_probes(synth.path, out, backend="fast", protocol="paper")
    with pytest.raises(UnknownNameError,
                       match=r"protocol: expected one of .*got 'papr' \(did you mean 'paper'\?\)"):
        run_probes(synth.path, out, protocol="papr")
    assert not out.exists()
    r = CliRunner().invoke(app, ["probe", "--store", str(synth.path), "--results", str(out),
                                 "--protocol", "paper", "--probe", "mlp"])
    assert r.exit_code == 2 and "--probe 'linear'" in r.output, r.output
    r = CliRunner().invoke(app, ["probe", "--store", str(synth.path), "--results", str(out),
                                 "--protocol", "paper", "--task", "bin", "--shots", "full",
                                 "--seeds", "13", "--workers", "1"])
    assert r.exit_code == 0 and "protocol paper" in r.output, r.output


def test_paper_equals_direct_sklearn_on_real_tasks(data_dir, tmp_path):
    from geneb.tasks.folders import resolve_task

    fs = FeatureStore(tmp_path / "store", "a")
    for name in ("dhs_idhs_fflg", "gue_splice_reconstructed"):
        write_task_features(fs, "kmer-3", resolve_task(name, str(data_dir)), kmer_spectrum)
    out = tmp_path / "r.parquet"
    run_probes(fs.path, out, shots="1,10,full", seeds=SEEDS, Cs=(0.1, 10.0), protocol="paper",
               workers=1)
    df = read_results(out)
    assert len(df) == 2 * 3 * 2 * 2
    _check_equal(fs, df, False)
