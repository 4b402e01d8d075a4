"""The fast and torch backends reach scikit-learn's optimum (checked against independent fits).

References are plain scikit-learn ``LogisticRegression`` fits in float64 at tol 1e-10 on the
same rows (standardised, when asked, by sklearn's own ``StandardScaler``), on k-mer spectra of
task folders of two sources: ``synthetic`` ones the tests make (``synthetic_tasks.py``: they
run in a fresh clone) and the real ones of ../shared/data (skipped when it is absent).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from sklearn.preprocessing import StandardScaler
from synthetic_tasks import make_tasks

from geneb.errors import ProbeError
from geneb.models.registry import get_embedder
from geneb.probe.metrics import predict_from_proba  # the engine's rule: ties to the lower class
from geneb.probe.solvers import get_backend
from geneb.probe.solvers.base import ProbeFit, ProbeProblem
from geneb.probe.solvers.batched_newton import NumpyOps, batched_newton
from geneb.probe.solvers.fast import FastBackend, snap_ties
from geneb.probe.solvers.fast_full import solve_path


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory):
    return make_tasks(tmp_path_factory.mktemp("synthetic_tasks"))


@pytest.fixture(params=["synthetic", "real"])
def src(request):
    """A data dir holding the tasks the tests name: made here, or ../shared/data."""
    name = "synthetic_dir" if request.param == "synthetic" else "data_dir"
    return request.getfixturevalue(name)


def load_kmer(data_dir, task: str, k: int, n_train: int | None = None):
    tr = pd.read_csv(data_dir / task / "train.csv")
    te = pd.read_csv(data_dir / task / "test.csv")
    if n_train is not None:  # deterministic stratified subsample, keeps tests fast
        per = n_train // tr.label.nunique()
        keep = np.concatenate([np.flatnonzero(tr.label.to_numpy() == c)[:per]
                               for c in np.unique(tr.label)])
        tr = tr.iloc[np.sort(keep)]
    te = te.iloc[:600]
    emb = get_embedder(f"kmer-{k}")
    return (emb.embed(tr.sequence.tolist()).astype(np.float32), tr.label.to_numpy(np.int64),
            emb.embed(te.sequence.tolist()).astype(np.float32), te.label.to_numpy(np.int64))


def grid(y: np.ndarray, K: int, Cs, seeds=(13, 42)) -> list[ProbeFit]:
    cells = []
    for k in (1, 10):
        for seed in seeds:
            rng = np.random.default_rng(seed)
            idx = np.sort(np.concatenate(
                [rng.choice(np.flatnonzero(y == c), k, replace=False) for c in range(K)]))
            cells += [ProbeFit(str(k), k, seed, C, idx) for C in Cs]
    for seed in seeds:  # the full regime once per seed, as a naive caller would send it
        cells += [ProbeFit("full", None, seed, C, np.arange(len(y))) for C in Cs]
    return cells


def sklearn_reference(Xtr, ytr, Xte, cell: ProbeFit, standardize: bool):
    X, Xt = Xtr[cell.train_idx].astype(np.float64), Xte.astype(np.float64)
    if standardize:
        sc = StandardScaler().fit(X)
        X, Xt = sc.transform(X), sc.transform(Xt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = LogisticRegression(C=cell.C, tol=1e-10, max_iter=20000).fit(X, ytr[cell.train_idx])
    dec = m.decision_function(Xt)
    dec = dec[:, None] if dec.ndim == 1 else dec
    W = m.coef_
    mag = np.abs(Xt) @ np.abs(W).T + np.abs(m.intercept_)
    pred_logits = snap_ties(dec, mag)
    pred = (pred_logits[:, 0] > 0).astype(int) if dec.shape[1] == 1 else pred_logits.argmax(1)
    return m.predict_proba(Xt), pred, int(np.max(m.n_iter_)) < 20000


def check_against_sklearn(Xtr, ytr, Xte, yte, K, standardize, Cs):
    cells = grid(ytr, K, Cs)
    fits = FastBackend().solve(ProbeProblem(Xtr, ytr, Xte, K, standardize=standardize), cells)
    bad = [(c.regime, c.C) for c, f in zip(cells, fits, strict=True) if not f.converged]
    assert not bad, bad
    worst = 0.0
    for cell, fit in zip(cells, fits, strict=True):
        proba, pred, ref_conv = sklearn_reference(Xtr, ytr, Xte, cell, standardize)
        assert fit.proba.shape == (len(yte), K)
        np.testing.assert_allclose(fit.proba.sum(1), 1.0, atol=1e-12)
        d_mcc = abs(matthews_corrcoef(yte, pred)
                    - matthews_corrcoef(yte, predict_from_proba(fit.proba)))
        worst = max(worst, d_mcc)
        if ref_conv:
            assert np.abs(fit.proba - proba).max() < 2e-4, (cell.regime, cell.seed, cell.C)
    assert worst <= 0.005


@pytest.mark.parametrize("standardize", [True, False])
def test_binary_every_regime_matches_sklearn(src, standardize):
    Xtr, ytr, Xte, yte = load_kmer(src, "dhs_idhs_fflg", k=4)
    check_against_sklearn(Xtr, ytr, Xte, yte, 2, standardize, Cs=(0.01, 1.0, 100.0))


@pytest.mark.parametrize("standardize", [True, False])
def test_multiclass_every_regime_matches_sklearn(src, standardize):
    Xtr, ytr, Xte, yte = load_kmer(src, "gue_splice_reconstructed", k=3, n_train=900)
    check_against_sklearn(Xtr, ytr, Xte, yte, 3, standardize, Cs=(0.1, 10.0))


def test_few_shot_high_dim_matches_sklearn(src):
    """d = 1024 >> n: the row-space reduction is exact (3 classes, standardised)."""
    Xtr, ytr, Xte, yte = load_kmer(src, "gue_splice_reconstructed", k=5, n_train=300)
    cells = [c for c in grid(ytr, 3, (0.01, 1.0, 100.0), seeds=(17,)) if c.regime != "full"]
    fits = FastBackend().solve(ProbeProblem(Xtr, ytr, Xte, 3, standardize=True), cells)
    for cell, fit in zip(cells, fits, strict=True):
        proba, pred, _ = sklearn_reference(Xtr, ytr, Xte, cell, True)
        assert fit.converged
        assert np.abs(fit.proba - proba).max() < 2e-4
        assert matthews_corrcoef(yte, pred) == pytest.approx(
            matthews_corrcoef(yte, predict_from_proba(fit.proba)), abs=0.005)


def _sk_coef(X, y, C):
    m = LogisticRegression(C=C, tol=1e-12, max_iter=50000).fit(X, y)
    return np.hstack([m.coef_, m.intercept_[:, None]])


@pytest.mark.parametrize("K", [2, 3])
def test_batched_newton_with_padding_matches_sklearn_coefficients(K):
    """Problems of different sizes padded into one batch each reach their own optimum."""
    rng = np.random.default_rng(0)
    sizes, p_max, n_max = [(5, 3), (12, 7), (9, 9)], 10, 12
    B = len(sizes)
    Xa = np.zeros((B, n_max, p_max + 1))
    Y = np.zeros((B, n_max, K if K > 2 else 1))
    sw = np.zeros((B, n_max))
    Cs = np.array([0.3, 5.0, 50.0])
    refs = []
    for b, (n, r) in enumerate(sizes):
        X = rng.normal(size=(n, r))
        y = np.arange(n) % K
        Xa[b, :n, :r], Xa[b, :n, -1], sw[b, :n] = X, 1.0, 1.0
        if K > 2:
            Y[b, np.arange(n), y] = 1.0
        else:
            Y[b, :n, 0] = y
        refs.append(_sk_coef(X, y, Cs[b]))
    pen = np.ones((B, p_max + 1))
    pen[:, -1] = 0
    res = batched_newton(NumpyOps(), Xa, Y, sw, Cs, pen, multi=K > 2, tol=1e-10, max_iter=100)
    assert res.converged.all() and (res.n_iter < 100).all()
    for b, (_n, r) in enumerate(sizes):
        got = np.hstack([res.theta[b, :, :r], res.theta[b, :, -1:]])
        np.testing.assert_allclose(got, refs[b], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(res.theta[b, :, r:-1], 0.0)  # padding stays exactly 0


@pytest.mark.parametrize("task,K", [("dhs_idhs_fflg", 2), ("gue_splice_reconstructed", 3)])
def test_warm_started_path_matches_sklearn_coefficients(src, task, K):
    Xtr, ytr, _, _ = load_kmer(src, task, k=3, n_train=600)
    X = StandardScaler().fit_transform(Xtr.astype(np.float64))
    Xa = np.hstack([X, np.ones((len(X), 1))])
    Cs = [0.01, 1.0, 100.0]
    path = solve_path(Xa, Xa.astype(np.float32), ytr, K, Cs[::-1], tol=1e-9, max_iter=1000)
    assert [pf.C for pf in path] == Cs  # solved in ascending order for warm starts
    for pf in path:
        assert pf.converged and pf.grad_norm <= 1e-9
        ref = _sk_coef(X, ytr, pf.C)
        np.testing.assert_allclose(pf.theta, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_identical_full_fits_are_solved_once(monkeypatch):
    import geneb.probe.solvers.fast as fast

    calls = []
    real = fast.solve_path

    def counting(*a, **kw):
        calls.append(a[4])
        return real(*a, **kw)

    monkeypatch.setattr(fast, "solve_path", counting)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5)).astype(np.float32)
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(np.int64)
    cells = [ProbeFit("full", None, s, C, np.arange(300)) for s in (13, 17, 42) for C in (1, .1)]
    fits = FastBackend().solve(ProbeProblem(X, y, X[:50], 2), cells)
    assert calls == [[0.1, 1.0]]  # one warm-started path for six cells
    for f, g in zip(fits[:2], fits[2:4], strict=True):
        np.testing.assert_array_equal(f.proba, g.proba)


def test_non_convergence_is_reported():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 6)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    prob = ProbeProblem(X, y, X, 2, max_iter=1)
    cells = [ProbeFit("full", None, 13, 100.0, np.arange(400)),
             ProbeFit("1", 1, 13, 100.0, np.array([0, int(np.argmax(y != y[0]))]))]
    fits = FastBackend().solve(prob, cells)
    assert [f.converged for f in fits] == [False, False]
    assert all(f.n_iter == 1 for f in fits)


def test_exact_ties_are_broken_identically():
    """Two mirror-image train rows: a test row equidistant from both is an exact tie."""
    X = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    y = np.array([0, 1])
    Xte = np.array([[0.3, 0.3], [0.7, 0.7], [1.0, 0.0]], dtype=np.float32)
    fit = FastBackend().solve(ProbeProblem(X, y, Xte, 2, standardize=True),
                              [ProbeFit("1", 1, 13, 1.0, np.array([0, 1]))])[0]
    np.testing.assert_array_equal(fit.proba[:2], 0.5)
    assert fit.proba[2, 0] > 0.5


def test_bad_cells_raise_clear_errors():
    X = np.zeros((4, 3), dtype=np.float32)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ProbeError, match="outside 0..3"):
        FastBackend().solve(ProbeProblem(X, y, X, 2), [ProbeFit("1", 1, 1, 1.0, np.array([9]))])
    with pytest.raises(ProbeError, match="labels must be"):
        FastBackend().solve(ProbeProblem(X, y + 1, X, 2), [ProbeFit("1", 1, 1, 1.0, y)])


def test_bad_blas_thread_setting(monkeypatch):
    from geneb.probe.solvers.fast import full_fit_blas_threads

    monkeypatch.setenv("GENEB_BLAS_THREADS", "many")
    with pytest.raises(ProbeError, match="GENEB_BLAS_THREADS"):
        full_fit_blas_threads()
    monkeypatch.setenv("GENEB_BLAS_THREADS", "2")
    assert full_fit_blas_threads() == 2
    assert full_fit_blas_threads(1) == 1
    monkeypatch.delenv("GENEB_BLAS_THREADS")
    assert full_fit_blas_threads() is None  # keep the caller's (engine's) pinning
    with pytest.raises(ProbeError, match="blas_threads"):
        FastBackend(blas_threads=0).solve(
            ProbeProblem(np.eye(3, dtype=np.float32), np.array([0, 1, 0]), np.eye(3), 2),
            [ProbeFit("full", None, 1, 1.0, np.arange(3))])


@pytest.mark.parametrize("K", [2, 3])
def test_torch_backend_on_cpu_equals_fast(src, K):
    pytest.importorskip("torch")
    task = "dhs_idhs_fflg" if K == 2 else "gue_splice_reconstructed"
    Xtr, ytr, Xte, _ = load_kmer(src, task, k=3, n_train=600)
    cells = grid(ytr, K, (0.1, 10.0), seeds=(13,))
    prob = ProbeProblem(Xtr, ytr, Xte, K, standardize=True)
    tb = get_backend("torch", device="cpu")
    assert tb.name == "torch"
    got = tb.solve(prob, cells)
    ref = get_backend("fast").solve(prob, cells)
    for g, r in zip(got, ref, strict=True):
        assert g.converged and r.converged
        np.testing.assert_allclose(g.proba, r.proba, atol=1e-6)


@pytest.mark.parametrize("task,K", [("dhs_idhs_fflg", 2), ("gue_splice_reconstructed", 3)])
def test_fast_agrees_with_the_sklearn_backend(src, task, K):
    """The engine's two CPU backends give the same cells (both converged) on real spectra."""
    Xtr, ytr, Xte, yte = load_kmer(src, task, k=3, n_train=600)
    cells = grid(ytr, K, (0.01, 1.0, 100.0), seeds=(997,))
    prob = ProbeProblem(Xtr, ytr, Xte, K, standardize=True)
    fast = get_backend("fast").solve(prob, cells)
    ref = get_backend("sklearn").solve(prob, cells)
    for cell, f, r in zip(cells, fast, ref, strict=True):
        assert f.converged and r.converged, (cell.regime, cell.C)
        np.testing.assert_allclose(f.proba, r.proba, atol=2e-4)
        assert matthews_corrcoef(yte, f.proba.argmax(1)) == pytest.approx(
            matthews_corrcoef(yte, r.proba.argmax(1)), abs=0.005)


def test_few_shot_chunks_give_the_same_answer(src, monkeypatch):
    """Splitting the stacked few-shot problems into memory-bounded chunks changes nothing."""
    import geneb.probe.solvers.fast as fast

    Xtr, ytr, Xte, _ = load_kmer(src, "gue_splice_reconstructed", k=4, n_train=300)
    cells = [c for c in grid(ytr, 3, (0.1, 10.0)) if c.regime != "full"]
    prob = ProbeProblem(Xtr, ytr, Xte, 3, standardize=True)
    whole = FastBackend().solve(prob, cells)
    monkeypatch.setattr(fast, "FEW_SHOT_CHUNK_ELEMS", 1.0)  # one problem per chunk
    chunked = FastBackend().solve(prob, cells)
    for a, b in zip(whole, chunked, strict=True):
        assert a.converged and b.converged and a.n_iter == b.n_iter
        np.testing.assert_allclose(a.proba, b.proba, atol=1e-10)


def test_torch_full_data_multiclass_reaches_sklearns_optimum():
    """The torch full-data path (K-1 rows, Hessian built block by block over row chunks)
    against scikit-learn's own fit at a tight tolerance; a tiny row chunk exercises the
    chunked accumulation."""
    pytest.importorskip("torch")
    from sklearn.linear_model import LogisticRegression

    from geneb.probe.solvers import torch_full

    rng = np.random.default_rng(5)
    n, d, K = 700, 12, 4
    y = np.arange(n) % K
    X = (rng.normal(size=(n, d)) + 0.5 * y[:, None]).astype(np.float32)
    Xt = rng.normal(size=(50, d)).astype(np.float32)
    prob = ProbeProblem(X, y, Xt, K)
    fits = [ProbeFit("full", None, 13, C, np.arange(n)) for C in (0.05, 5.0)]
    old = torch_full.HESSIAN_ROW_CHUNK
    torch_full.HESSIAN_ROW_CHUNK = 64
    try:
        got = get_backend("torch", device="cpu").solve(prob, fits)
    finally:
        torch_full.HESSIAN_ROW_CHUNK = old
    for f, g in zip(fits, got, strict=True):
        sk = LogisticRegression(C=f.C, tol=1e-12, max_iter=100_000).fit(
            X.astype(np.float64), y)
        assert g.converged and g.backend is None
        np.testing.assert_allclose(g.proba, sk.predict_proba(Xt.astype(np.float64)),
                                   atol=1e-6)


def test_torch_rows_too_large_for_a_hessian_say_fast(monkeypatch):
    """Fits the Hessian rule sends to L-BFGS run fast's CPU code: the row says so."""
    pytest.importorskip("torch")
    from geneb.probe.plan import PlannedFit
    from geneb.probe.solvers import base
    from geneb.probe.worker import solve_fits

    monkeypatch.setattr(base, "NEWTON_MAX_COEFS", 8)  # 6 features + 1 > 8 / 2 rows
    rng = np.random.default_rng(1)
    y = np.arange(300) % 3
    X = (rng.normal(size=(300, 6)) + y[:, None]).astype(np.float32)
    prob = ProbeProblem(X, y, X[:40], 3)
    fits = [PlannedFit(0, "full", None, 13, 1.0, np.arange(300))]
    row = solve_fits(prob, y[:40], fits, probe="linear", backend="torch")[0]
    assert row["backend"] == "fast" and row["converged"]
    small = ProbeProblem(X[:, :2], y, X[:40, :2], 3)  # 3 x 2 = 6 coefficients: a Hessian
    row = solve_fits(small, y[:40], fits, probe="linear", backend="torch")[0]
    assert "backend" not in row  # the planned backend (torch) is the one that ran
