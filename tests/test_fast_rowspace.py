"""Full-data fits with fewer rows than features, solved in their row space (fast_rowspace),
against scikit-learn's optimum of the original problem."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import geneb.probe.solvers.fast_rowspace as rowspace
from geneb.probe.solvers.base import ProbeFit, ProbeProblem
from geneb.probe.solvers.fast import FastBackend
from geneb.probe.solvers.fast_rowspace import solve_path_row_space, use_row_space

CS = [0.01, 1.0, 100.0]


def _data(n: int, d: int, K: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    # correlated, unstandardised, a shared offset: like real embeddings
    X = rng.standard_normal((n, d)) @ (rng.standard_normal((d, d)) / np.sqrt(d)) + 2.0
    y = rng.integers(0, K, n)
    X[:, :4] += y[:, None] * 0.8
    return X.astype(np.float32), y


def _objective(X: np.ndarray, y: np.ndarray, K: int, C: float, W: np.ndarray,
               b: np.ndarray) -> float:
    eta = X.astype(np.float64) @ W.T + b
    if K == 2:
        e = eta[:, -1]
        loss = np.logaddexp(0.0, e) - y * e
    else:
        m = eta.max(1)
        loss = m + np.log(np.exp(eta - m[:, None]).sum(1)) - eta[np.arange(len(y)), y]
    return float(C * loss.sum() + 0.5 * (W * W).sum())


def _sklearn(X: np.ndarray, y: np.ndarray, K: int, C: float) -> LogisticRegression:
    # newton-cholesky: sklearn's second-order solver (multinomial since 1.6); its lbfgs
    # stopped 4e-7 above the optimum at C = 100 here
    return LogisticRegression(C=C, tol=1e-10, max_iter=1000, solver="newton-cholesky").fit(X, y)


@pytest.mark.parametrize("K", [2, 3])
def test_row_space_optimum_is_sklearns(K):
    n, d = 120, 400
    assert use_row_space(n, d)
    X, y = _data(n + 40, d, K)
    X64 = X.astype(np.float64)
    path = solve_path_row_space(X64[:n].copy(), y[:n], K, CS, tol=1e-8, max_iter=100)
    assert path is not None
    for pf in path:
        assert pf.converged and pf.grad_norm <= 1e-8
        sk = _sklearn(X64[:n], y[:n], K, pf.C)
        W, b = pf.theta[:, :-1], pf.theta[:, -1]
        ours = _objective(X64[:n], y[:n], K, pf.C, W, b)
        theirs = _objective(X64[:n], y[:n], K, pf.C, sk.coef_, sk.intercept_)
        assert ours <= theirs * (1 + 1e-9), (pf.C, ours, theirs)
        assert abs(ours - theirs) <= 1e-7 * theirs, (pf.C, ours, theirs)
        logits = X64[n:] @ W.T + b
        pred = (logits[:, 0] > 0).astype(int) if K == 2 else logits.argmax(1)
        assert (pred == sk.predict(X64[n:])).all()


@pytest.mark.parametrize("standardize", [False, True])
def test_backend_solves_few_row_full_fits_in_the_row_space(standardize, monkeypatch):
    import geneb.probe.solvers.fast as fast

    n, d = 120, 400
    X, y = _data(n + 40, d, 2, seed=2)
    prob = ProbeProblem(X_train=X[:n], y_train=y[:n], X_test=X[n:], n_classes=2,
                        standardize=standardize)
    fits = [ProbeFit(regime="full", k=None, seed=13, C=C, train_idx=np.arange(n)) for C in CS]
    calls = []

    def counted(*a, **k):
        calls.append(1)
        return solve_path_row_space(*a, **k)

    monkeypatch.setattr(fast, "solve_path_row_space", counted)
    # few_shot_max_rows 8: these 120-row fits are full-data fits, not the few-shot batch
    results = FastBackend(few_shot_max_rows=8).solve(prob, fits)
    assert calls == [1]  # one path for the three Cs
    Xs = X.astype(np.float64)
    if standardize:
        mu, sd = Xs[:n].mean(0), Xs[:n].std(0)
        Xs = (Xs - mu) / np.where(sd > 0, sd, 1.0)
    for C, res in zip(CS, results, strict=True):
        assert res.converged
        assert (res.proba.argmax(1) == _sklearn(Xs[:n], y[:n], 2, C).predict(Xs[n:])).all()


def test_row_space_rule():
    """n <= 0.55 d, or n < d where the primal problem has no Hessian (3 classes x 4,097
    coefficients: L-BFGS otherwise); never where the reduced one has none either."""
    assert rowspace.ROW_SPACE_MAX_FRACTION == 0.55
    assert use_row_space(1000, 4096) and use_row_space(2200, 4096)
    assert not use_row_space(2500, 4096) and not use_row_space(1000, 1024)
    assert use_row_space(3000, 4096, 2)  # 8,194 primal coefficients, 6,002 reduced
    assert not use_row_space(4096, 4096, 2) and not use_row_space(3000, 2560, 2)
    assert not use_row_space(5000, 20000, 2)  # 10,002 reduced coefficients: no Hessian


def test_fits_beyond_a_primal_hessian_go_to_the_row_space(monkeypatch):
    """With a smaller Hessian limit, a 3-class fit of 240 rows x 300 features (n/d 0.8) has
    no primal Hessian (602 coefficients) but a reduced one (482): solved in the row space,
    scikit-learn's predictions."""
    import geneb.probe.solvers.base as base
    import geneb.probe.solvers.fast as fast

    monkeypatch.setattr(base, "NEWTON_MAX_COEFS", 500)
    n, d = 240, 300
    assert use_row_space(n, d, 2) and not use_row_space(n, d, 1)
    X, y = _data(n + 60, d, 3, seed=4)
    prob = ProbeProblem(X_train=X[:n], y_train=y[:n], X_test=X[n:], n_classes=3)
    fits = [ProbeFit(regime="full", k=None, seed=13, C=C, train_idx=np.arange(n)) for C in CS]
    calls = []

    def counted(*a, **k):
        calls.append(1)
        return solve_path_row_space(*a, **k)

    monkeypatch.setattr(fast, "solve_path_row_space", counted)
    results = FastBackend(few_shot_max_rows=8).solve(prob, fits)
    assert calls == [1]
    X64 = X.astype(np.float64)
    for C, res in zip(CS, results, strict=True):
        assert res.converged
        assert (res.proba.argmax(1) == _sklearn(X64[:n], y[:n], 3, C).predict(X64[n:])).all()


def test_exact_check_failure_falls_back_to_the_primal_path(monkeypatch):
    n, d = 100, 300
    X, y = _data(n + 30, d, 2, seed=1)
    prob = ProbeProblem(X_train=X[:n], y_train=y[:n], X_test=X[n:], n_classes=2)
    fits = [ProbeFit(regime="full", k=None, seed=13, C=C, train_idx=np.arange(n)) for C in CS]
    expected = FastBackend(few_shot_max_rows=8).solve(prob, fits)
    # a basis whose rounding moved the optimum: the exact gradient test fails
    monkeypatch.setattr(rowspace, "_exact_grad_norm", lambda *a, **k: 1.0)
    assert solve_path_row_space(X[:n].astype(np.float64), y[:n], 2, CS, tol=1e-8,
                                max_iter=100) is None
    fallback = FastBackend(few_shot_max_rows=8).solve(prob, fits)
    for a, b in zip(expected, fallback, strict=True):
        assert b.converged and np.abs(a.proba - b.proba).max() < 1e-4
        assert (a.proba.argmax(1) == b.proba.argmax(1)).all()


def test_zero_rows_are_declined_and_identical_rows_give_the_intercept_only_fit():
    y = np.array([0, 1, 1, 1] * 5)
    assert solve_path_row_space(np.zeros((20, 50)), y, 2, CS, tol=1e-8, max_iter=100) is None
    path = solve_path_row_space(np.ones((20, 50)), y, 2, CS, tol=1e-8, max_iter=100)
    assert path is not None
    for pf in path:  # no feature separates the rows: w = 0, b = log(15 / 5)
        assert pf.converged
        assert np.abs(pf.theta[:, :-1]).max() < 1e-8
        assert abs(pf.theta[0, -1] - np.log(3.0)) < 1e-8


def test_row_span_is_an_orthonormal_basis_of_the_rows():
    """The Cholesky factor's implicit basis V = X_1^T L_11^-T: orthonormal, X V = Z, and
    every row of X in its span. Full rank: the unpivoted factor; standardised columns (rows
    summing to zero: one rank less) and repeated rows: the pivoted one, after the unpivoted
    one met a pivot below the tolerance."""
    X, _ = _data(150, 500, 2, seed=3)
    X = X.astype(np.float64)
    repeated = np.vstack([X[:100], X[:50]])
    for A, rank in ((X, 150), ((X - X.mean(0)) / X.std(0), 149), (repeated, 100)):
        span = rowspace.row_span(A, threads=2)
        assert span is not None and span.rank == rank
        # unpivoted: the rows in their order; pivoted: each repeated row kept once
        assert np.array_equal(span.kept, np.arange(150)) == (A is X)
        assert len(np.unique(span.kept % 100 if A is repeated else span.kept)) == rank
        V = A[span.kept].T @ np.linalg.inv(span.L11).T
        assert np.abs(V.T @ V - np.eye(rank)).max() < 1e-10
        assert np.abs(A @ V - span.design[:, :-1]).max() < 1e-9 * np.abs(A).max()
        assert np.abs(A - (A @ V) @ V.T).max() < 1e-9 * np.abs(A).max()


def test_real_task_kmer6_matches_sklearn(data_dir):
    """A real task (dhs_idhs_fflg: 421 train rows) as 4,096 k-mer-6 features, raw and
    standardised: through the row space, the same test predictions as scikit-learn's
    newton-cholesky at tol 1e-10 on the original features, an objective no higher."""
    import pandas as pd

    from geneb.models.adapters.kmer import kmer_spectrum

    tr = pd.read_csv(data_dir / "dhs_idhs_fflg" / "train.csv")
    te = pd.read_csv(data_dir / "dhs_idhs_fflg" / "test.csv")
    Xtr = kmer_spectrum(list(tr.sequence), 6).astype(np.float64)
    Xte = kmer_spectrum(list(te.sequence), 6).astype(np.float64)
    y = tr.label.to_numpy()
    n, d = Xtr.shape
    assert use_row_space(n, d)
    for standardize in (False, True):
        A, T = Xtr, Xte
        if standardize:
            mu, sd = Xtr.mean(0), Xtr.std(0)
            sd = np.where(sd > 0, sd, 1.0)
            A, T = (Xtr - mu) / sd, (Xte - mu) / sd
        C = 1.0 if standardize else 100.0  # raw spectra have tiny variances: a larger C
        path = solve_path_row_space(A.copy(), y, 2, [C], tol=1e-8, max_iter=100)
        assert path is not None and path[0].converged
        W, b = path[0].theta[:, :-1], path[0].theta[:, -1]
        sk = _sklearn(A, y, 2, C)
        ours = _objective(A, y, 2, C, W, b)
        theirs = _objective(A, y, 2, C, sk.coef_, sk.intercept_)
        assert ours <= theirs * (1 + 1e-9) and abs(ours - theirs) <= 1e-7 * theirs
        assert ((T @ W.T + b)[:, 0] > 0).astype(int).tolist() == sk.predict(T).tolist()


def test_float32_rows_give_the_float64_path_without_a_float64_copy():
    """float32 features (the probe's unstandardised embeddings) are exact values: the kernel
    from upcast column slabs equals numpy's float64 product, and the path equals the one on
    a float64 copy (same convergence, coefficients within 1e-6)."""
    X, y = _data(300, 700, 2, seed=5)
    assert X.dtype == np.float32
    X64 = X.astype(np.float64)
    K = np.full((300, 300), np.nan)
    rowspace._kernel(X, 2, K)
    assert np.abs(K - X64 @ X64.T).max() <= 1e-14 * np.abs(K).max()
    assert (K == K.T).all()
    for n in (300, 301, 517):  # both kernels exactly symmetric, whatever BLAS' edge kernels
        K64 = np.full((n, n), np.nan)
        rowspace._kernel(X64[:n] if n <= 300 else np.vstack([X64, X64[: n - 300] * 0.5]), 2,
                         K64)
        assert (K64 == K64.T).all()
    a = solve_path_row_space(X64, y, 2, CS, tol=1e-8, max_iter=100, threads=2)
    b = solve_path_row_space(X, y, 2, CS, tol=1e-8, max_iter=100, threads=2)
    assert a is not None and b is not None
    for pa, pb in zip(a, b, strict=True):
        assert pa.converged and pb.converged and pb.grad_norm <= 1e-8
        assert np.abs(pa.theta - pb.theta).max() <= 1e-6 * np.abs(pa.theta).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("K", [1, 3])
def test_compiled_row_products_equal_numpys(dtype, K):
    """The original rows' products of the stopping test and the exact check (``_Rows``):
    the compiled kernels (numba) against numpy's float64 BLAS on the same rows, and both
    against X^T H in extended precision (float128 where numpy has it, else float64)."""
    if not rowspace.available():
        pytest.skip("numba is not installed: only the numpy products run")
    from geneb.probe.solvers.row_blocks import RowBlocks

    X, _ = _data(2500, 300, 2, seed=7)  # three 1,024-row blocks, the last one short
    X = X.astype(dtype)
    rng = np.random.default_rng(3)
    H = rng.standard_normal((len(X), K))
    Wt = rng.standard_normal((X.shape[1], K))
    blocks = RowBlocks(len(X), 2)
    try:
        labels = np.zeros((len(X), K))  # one-hot or 0/1 labels: the products ignore them
        compiled = rowspace._Rows(X, blocks, labels, K > 1)
        plain = rowspace._Rows(X, blocks, labels, K > 1)
        plain.passes = None  # numpy's products (the path without numba)
        assert compiled.passes is not None
        exact = (X.astype(np.longdouble).T @ H.astype(np.longdouble)).T
        for rows in (compiled, plain):
            got = rows.t_times(H)
            assert got.shape == (K, X.shape[1]) and got.dtype == np.float64
            assert np.abs(got - exact).max() <= 1e-12 * np.abs(exact).max()
            eta = rows.times(Wt)
            ref = X.astype(np.longdouble) @ Wt.astype(np.longdouble)
            assert np.abs(eta - ref).max() <= 1e-12 * np.abs(ref).max()
    finally:
        blocks.close()


def test_design_shares_the_kernels_buffer_and_solves_the_same_path(monkeypatch):
    """Unpivoted and of full rank, the reduced design is the kernel's own buffer in Fortran
    order (L in place, no n x n copy); its path equals the one on the C-ordered copy that
    the compiled passes' sizes get (``use_kernels`` forced), and L L^T is the kernel."""
    X, y = _data(200, 600, 2, seed=11)
    span = rowspace.row_span(X, 2)
    assert span is not None and span.rank == 200
    assert span.design.flags.f_contiguous and np.shares_memory(span.design, span.L11)
    L = span.design[:, :200]
    X64 = X.astype(np.float64)
    assert np.abs(L @ L.T - X64 @ X64.T).max() <= 1e-12 * np.abs(X64 @ X64.T).max()
    assert (span.design[:, 200] == 1.0).all() and (np.triu(L, 1) == 0).all()
    a = solve_path_row_space(X, y, 2, CS, tol=1e-8, max_iter=100, threads=2)
    monkeypatch.setattr(rowspace, "use_kernels", lambda n, p, min_cells=None: True)
    copied = rowspace.row_span(X, 2)
    assert copied is not None and copied.design.flags.c_contiguous
    assert (copied.design == span.design).all()
    b = solve_path_row_space(X, y, 2, CS, tol=1e-8, max_iter=100, threads=2)
    assert a is not None and b is not None
    for pa, pb in zip(a, b, strict=True):  # BLAS sums the two layouts in other orders
        assert pa.converged and pb.converged and max(pa.grad_norm, pb.grad_norm) <= 1e-8
        assert np.abs(pa.theta - pb.theta).max() <= 1e-6 * np.abs(pa.theta).max()
        fa, fb = (_objective(X64, y, 2, pa.C, p.theta[:, :-1], p.theta[:, -1]) for p in (pa, pb))
        assert abs(fa - fb) <= 1e-12 * fa
