"""Issue 19 case 17: ``geneb.probe_arrays`` runs the store protocol on plain arrays.

A store is built with kmer-3 on a small real task and probed with ``run_probes``; the same
arrays read back from the store through ``probe_arrays`` must give the same cells, the same
train rows and the same numbers. One cell is also checked against scikit-learn itself.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from sklearn.preprocessing import StandardScaler

import geneb
from geneb.errors import GenebError

OPTS = dict(shots="1,10,full", seeds=(13, 17, 42), standardize=True, backend="fast")
CS = [0.1, 1.0, 10.0]
KEY = ["regime", "seed", "C"]


@pytest.fixture(scope="module")
def store_run(data_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("arrays")
    store = tmp / "s.zarr"
    geneb.extract(str(store), ["kmer-3"], [str(data_dir / "dhs_idhs_fflg")])
    geneb.run_probes(store, tmp / "r.parquet", Cs=CS, workers=1, **OPTS)
    df = geneb.read_results(tmp / "r.parquet")
    tr = geneb.read_entry(store, "kmer-3", "dhs_idhs_fflg", "train")
    te = geneb.read_entry(store, "kmer-3", "dhs_idhs_fflg", "test")
    return df, tr, te


def test_same_cells_rows_and_numbers_as_a_store_run(store_run):
    df, tr, te = store_run
    got = geneb.probe_arrays(tr.embeddings, tr.labels, te.embeddings, te.labels, Cs=CS,
                             task_fingerprint=tr.provenance.task_fingerprint, rows=tr.rows,
                             **OPTS)
    assert len(got) == len(df) == 3 * 3 * 3
    a = df.sort_values(KEY).reset_index(drop=True)
    b = got.sort_values(KEY).reset_index(drop=True)
    assert list(b.columns) == list(a.columns)  # the results table's columns
    for col in [*KEY, "k", "n_train", "n_test", "n_classes", "probe", "protocol", "backend",
                "standardize", "converged"]:
        pd.testing.assert_series_equal(a[col], b[col], obj=col)
    assert [list(r) for r in a.train_rows] == [list(r) for r in b.train_rows]
    for col in ("mcc", "accuracy", "macro_f1", "auroc"):
        np.testing.assert_array_equal(a[col].to_numpy(), b[col].to_numpy(), err_msg=col)


def test_full_regime_matches_sklearn(store_run):
    _, tr, te = store_run
    got = geneb.probe_arrays(tr.embeddings, tr.labels, te.embeddings, te.labels, shots="full",
                             seeds=[13], Cs=1.0, standardize=True)
    X, Xt = tr.embeddings.astype(np.float64), te.embeddings.astype(np.float64)
    sc = StandardScaler().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = LogisticRegression(C=1.0, tol=1e-10, max_iter=20000).fit(sc.transform(X), tr.labels)
    assert got.mcc.item() == pytest.approx(
        matthews_corrcoef(te.labels, m.predict(sc.transform(Xt))), abs=1e-12)


def test_bad_arrays_are_clear_errors():
    X = np.zeros((10, 3))
    y = np.arange(10) % 2
    cases = [
        ((X[:, 0], y, X, y), "X_train: expected a 2-D numeric array"),
        ((X, y, X[:, :2], y), "X_test: expected 3 columns"),
        ((X, y[:5], X, y), "y_train: expected 10 labels"),
        ((X, y - 1, X, y), "y_train: expected class ids >= 0"),
        ((np.where(X == 0, np.nan, X), y, X, y), "X_train: expected finite values, got nan"),
        # past float32's square root: the float32 Gram would overflow (measured: MCC 0.0)
        ((X, y, np.where(X == 0, 1e30, X), y),
         r"X_test: expected \|values\| <= 1e\+16 .*got 1e\+30 at row 0, column 0"),
        # a float64 value float32 cannot hold is named, not cast to inf
        ((np.where(X == 0, -1e300, X), y, X, y), r"X_train: expected \|values\| <= 1e\+16 .*got "
                                                 r"-1e\+300 at row 0"),
        ((X, y.astype(str), X, y), "y_train: expected integer class ids"),
    ]
    for args, msg in cases:
        with pytest.raises(GenebError, match=msg):
            geneb.probe_arrays(*args, shots="full", seeds=[13])


def test_exported_with_its_signature():
    assert "probe_arrays" in geneb.__all__
    params = inspect.signature(geneb.probe_arrays).parameters
    assert list(params)[:4] == ["X_train", "y_train", "X_test", "y_test"]
    assert {"shots", "seeds", "Cs"} <= set(params)


def test_feature_bound_against_a_plain_scan():
    """``first_unprobeable`` finds the first refused value in row-major order across its
    row chunks, like a plain whole-array scan."""
    from geneb.probe import feature_values as fv

    rng = np.random.default_rng(5)
    for _ in range(30):
        A = rng.normal(size=(int(rng.integers(1, 40)), int(rng.integers(1, 6))))
        for _ in range(int(rng.integers(0, 3))):
            A[rng.integers(len(A)), rng.integers(A.shape[1])] = rng.choice(
                [np.nan, np.inf, -np.inf, 2e16, -1e17, 1e16])
        bad = ~(np.abs(A) <= 1e16)
        want = tuple(int(v) for v in np.argwhere(bad)[0]) if bad.any() else None
        got = fv.first_unprobeable(A)
        assert (got[:2] if got else None) == want
    # float16 (its largest value is below the bound) and integers at their extremes
    for value, want in ((np.inf, "finite values"), (-np.inf, "finite values"),
                        (np.nan, "finite values"), (65504.0, None)):
        A = np.ones((4, 3), np.float16)
        A[2, 1] = value
        got = fv.first_unprobeable(A)
        assert got == ((2, 1, want) if want else None)
    for dtype in (np.int64, np.int32, np.uint64):
        A = np.zeros((3, 2), dtype)
        A[1, 0] = np.iinfo(dtype).min if np.iinfo(dtype).min else np.iinfo(dtype).max
        out_of_range = abs(int(A[1, 0])) > 1e16
        assert fv.first_unprobeable(A) == ((1, 0, fv.EXPECTED_IN_RANGE) if out_of_range else None)
    old = fv.CHECK_ROWS
    try:
        fv.CHECK_ROWS = 3
        A = np.zeros((10, 2), np.float32)
        A[7, 1] = np.inf
        assert fv.first_unprobeable(A) == (7, 1, "finite values")
    finally:
        fv.CHECK_ROWS = old
