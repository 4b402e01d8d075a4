"""The numpy kernels behind the fast backend, against scipy/numpy references, and the
full-data solver's promise that its thread count never changes a bit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from sklearn.preprocessing import StandardScaler
from test_fast_solvers import load_kmer, src, synthetic_dir  # noqa: F401 - fixtures
from threadpoolctl import threadpool_limits

from geneb.probe.solvers import lapack_factor
from geneb.probe.solvers.base import ProbeFit, ProbeProblem
from geneb.probe.solvers.fast import FastBackend
from geneb.probe.solvers.fast_full import solve_path
from geneb.probe.solvers.numeric import (
    LAPACK_FROM,
    cholesky_solver,
    expit,
    logsumexp,
    softmax,
    upper_panels,
    upper_triangular_inverse,
)
from geneb.probe.solvers.row_blocks import RowBlocks


def test_expit_logsumexp_softmax_match_scipy_including_extremes():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(scale=30, size=2000), [0.0, -0.0, 800.0, -800.0, 1e-300]])
    np.testing.assert_allclose(expit(x), special.expit(x), rtol=1e-15, atol=1e-300)
    assert np.isfinite(expit(x)).all() and expit(800.0) == 1.0 and expit(-800.0) == 0.0
    Z = rng.normal(scale=200, size=(300, 4))
    Z[0] = [1000.0, 1000.0, -1000.0, 0.0]  # would overflow without the shift
    Z[1] = -np.inf
    Z[1, 2] = 3.0
    np.testing.assert_allclose(logsumexp(Z, axis=1), special.logsumexp(Z, axis=1), rtol=1e-14)
    np.testing.assert_allclose(softmax(Z, axis=1), special.softmax(Z, axis=1), rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(softmax(Z, axis=0), special.softmax(Z, axis=0), rtol=1e-12,
                               atol=1e-300)


def _spd(p: int, seed: int, cond_scale: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(p + 5, p))
    return cond_scale * (A.T @ A) + np.eye(p)


@pytest.mark.parametrize("p,block", [(1, 128), (7, 3), (128, 128), (300, 128), (1023, 128),
                                     (1025, 128), (2100, 256)])
def test_cholesky_solver_matches_numpy_solve_and_reads_only_the_upper_triangle(p, block):
    M = _spd(p, p, cond_scale=100.0)
    r = np.random.default_rng(1).normal(size=p)
    upper = np.triu(M)
    upper[np.tril_indices(p, -1)] = np.nan  # the lower triangle must never be read
    solve = cholesky_solver(upper, block=block)
    want = np.linalg.solve(M, r)
    np.testing.assert_allclose(solve(r), want, rtol=1e-9, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("p", [1, 2, 31, 32, 33, 100, 128, 257])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_upper_triangular_inverse_equals_numpy_inverse(p, dtype):
    """Odd sides, sides at and around the leaf; the result is upper triangular (exact zeros
    below the diagonal) and within rounding of numpy's inverse."""
    U = np.linalg.cholesky(_spd(p, p + 3), upper=True).astype(dtype)
    got = upper_triangular_inverse(U)
    assert got.dtype == dtype and got.shape == (p, p)
    assert not np.tril(got, -1).any()
    want = np.linalg.inv(U.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("p", [400, 1300])  # the blocked numpy and the LAPACK factorisation
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky_solver_threads_give_identical_bits(p, dtype):
    assert (p < LAPACK_FROM) == (p == 400)  # one side for each factorisation
    M = _spd(p, 3).astype(dtype)
    r = np.random.default_rng(4).normal(size=p).astype(dtype)
    one = RowBlocks(10, threads=1)
    two = RowBlocks(10, threads=2)
    three = RowBlocks(10, threads=3)
    try:
        with threadpool_limits(1):
            xs = [cholesky_solver(M.copy(), rb.run, block=64)(r) for rb in (one, two, three)]
    finally:
        for rb in (one, two, three):
            rb.close()
    np.testing.assert_array_equal(xs[0], xs[1])
    np.testing.assert_array_equal(xs[0], xs[2])


def test_cholesky_solver_refuses_an_indefinite_matrix():
    M = np.diag([1.0, -1.0, 2.0])
    with pytest.raises(np.linalg.LinAlgError):
        cholesky_solver(M)
    big = np.eye(LAPACK_FROM + 10)  # the LAPACK path: indefinite in its second leaf
    big[LAPACK_FROM, LAPACK_FROM] = -1.0
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cholesky_solver(big)
    big = np.eye(LAPACK_FROM + 10)
    big[3, 3] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cholesky_solver(big)


@pytest.mark.parametrize("p,leaf", [(5, 512), (600, 64), (1000, 512), (1500, 128),
                                    (2100, 512)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lapack_factor_equals_numpy_cholesky_and_never_touches_the_lower_triangle(
        p, leaf, dtype, monkeypatch):
    """The recursive in-place factorisation (small leaves force several levels) against
    ``np.linalg.cholesky`` in float64; the strictly lower triangle keeps its NaNs."""
    monkeypatch.setattr(lapack_factor, "LEAF_SIDE", leaf)
    M = _spd(p, p + 1, cond_scale=3.0)
    want = np.linalg.cholesky(M, upper=True)
    A = np.triu(M).astype(dtype)
    lower = np.tril_indices(p, -1)
    A[lower] = np.nan
    with threadpool_limits(1):
        lapack_factor.factor_upper(A, lambda fn, tasks: [fn(*t) for t in tasks])
    assert np.isnan(A[lower]).all()
    rtol = 1e-12 if dtype == np.float64 else 3e-5
    U = np.triu(np.nan_to_num(A, nan=0.0)).astype(np.float64)
    assert np.abs(U - want).max() <= rtol * np.abs(want).max()
    inv = lapack_factor.inverted_diagonal_blocks(A, [(0, min(p, 70)), (min(p, 70), p)],
                                                 lambda fn, tasks: [fn(*t) for t in tasks])
    for Ui, (a, b) in zip(inv, [(0, min(p, 70)), (min(p, 70), p)], strict=True):
        if b > a:
            ref = np.linalg.inv(np.triu(A[a:b, a:b]).astype(np.float64))
            assert np.abs(Ui - ref).max() <= 10 * rtol * np.abs(ref).max()


def test_lapack_factor_refuses_what_it_cannot_factor():
    with pytest.raises(ValueError, match="C-contiguous square"):
        lapack_factor.factor_upper(np.eye(4)[:, :3].copy(), lambda fn, t: [])
    with pytest.raises(ValueError, match="C-contiguous square"):
        lapack_factor.factor_upper(np.asfortranarray(np.eye(4) + 0.1), lambda fn, t: [])
    with pytest.raises(ValueError, match="float32 or float64"):
        lapack_factor.factor_upper(np.eye(4, dtype=np.float16), lambda fn, t: [])


@pytest.mark.parametrize("lo,hi", [(0, 1025), (0, 10), (128, 1025), (5, 6), (0, 2050)])
def test_upper_panels_split_syrk_and_gemm_work_evenly(lo, hi):
    panels = upper_panels(lo, hi)
    assert panels[0][0] == lo and panels[-1][1] == hi
    assert all(a < b for a, b in panels)
    assert all(panels[i][1] == panels[i + 1][0] for i in range(len(panels) - 1))
    if hi - lo >= 100:  # SYRK of the first panel (half its square) vs the second's GEMM
        (_, s), (_, e) = panels
        n = hi - lo
        assert abs((s - lo) ** 2 / 2 - n * (e - s)) / (n * (e - s)) < 0.01
    assert upper_panels(3, 3) == []


def test_row_blocks_keep_task_order_for_any_thread_count():
    for threads in (1, 2, 3, 8):
        rb = RowBlocks(5000, threads=threads, block_rows=700)
        try:
            assert rb.map(lambda a, b: (a, b)) == rb.blocks
            assert rb.blocks[0] == (0, 700) and rb.blocks[-1] == (4900, 5000)
            assert rb.run(lambda i: i * i, [(i,) for i in range(11)]) == [i * i for i in
                                                                          range(11)]
        finally:
            rb.close()


@pytest.mark.parametrize("failing", [0, 7])  # in the calling thread's run, in the pool's
def test_row_blocks_raise_a_task_error_after_every_task_has_ended(failing):
    """The calling thread runs the first run of tasks itself: an error there (or in the
    pool's run) reaches the caller, and no task of the call is still running by then."""
    import threading
    import time

    rb = RowBlocks(10, threads=2)
    running = set()
    lock = threading.Lock()

    def task(i):
        with lock:
            running.add(i)
        try:
            time.sleep(0.02)
            if i == failing:
                raise RuntimeError(f"task {i}")
            return i
        finally:
            with lock:
                running.discard(i)

    try:
        with pytest.raises(RuntimeError, match=f"task {failing}"):
            rb.run(task, [(i,) for i in range(10)])
        assert not running
        assert rb.run(task, [(i,) for i in range(1, 7)]) == list(range(1, 7))
    finally:
        rb.close()


@pytest.mark.parametrize("task,K", [("gue_emp_h3k4me3", 2), ("gue_splice_reconstructed", 3)])
def test_full_data_path_has_the_same_bits_for_any_thread_count(src, task, K):  # noqa: F811
    """Fixed row blocks and Gram panels with an ordered reduction: one, two and three threads
    must give identical coefficients, iteration counts and probabilities."""
    Xtr, ytr, Xte, _ = load_kmer(src, task, k=3, n_train=2400)
    X = StandardScaler().fit_transform(Xtr.astype(np.float64))
    Xa = np.hstack([X, np.ones((len(X), 1))])
    Cs = [0.01, 1.0, 100.0]
    with threadpool_limits(1):
        paths = [solve_path(Xa, Xa.astype(np.float32), ytr, K, Cs, tol=1e-8, max_iter=1000,
                            threads=t) for t in (1, 2, 3)]
    assert len(RowBlocks(len(Xa)).blocks) >= 3  # the split and the ordered sum are exercised
    for other in paths[1:]:
        for a, b in zip(paths[0], other, strict=True):
            assert a.converged and b.converged
            assert a.n_iter == b.n_iter
            np.testing.assert_array_equal(a.theta, b.theta)
    cells = [ProbeFit("full", None, 13, C, np.arange(len(ytr))) for C in Cs]
    problem = ProbeProblem(Xtr, ytr, Xte, K, standardize=True)
    fits = [FastBackend(fit_threads=t).solve(problem, cells) for t in (1, 2)]
    for a, b in zip(*fits, strict=True):
        np.testing.assert_array_equal(a.proba, b.proba)


@pytest.mark.parametrize("standardize", [True, False])
def test_design_in_column_slabs_is_bitwise_the_whole_matrix_transform(standardize):
    """The full-data design is built in per-thread column slabs; it must equal the one-piece
    ``Standardizer`` transform bit for bit, whatever the slab count."""
    from geneb.probe.preprocess import Standardizer

    rng = np.random.default_rng(5)
    X = (rng.gamma(0.3, size=(3000, 301)) * rng.random(301)).astype(np.float32)
    X[:, 7] = 0.25  # a constant feature stays unscaled
    problem = ProbeProblem(X, (X[:, 0] > X[:, 0].mean()).astype(np.int64), X[:40], 2,
                           standardize=standardize)
    idx = np.arange(0, 3000, 2)
    want = Standardizer.fit(X[idx]).transform(X[idx], np.float64) if standardize else \
        X[idx].astype(np.float64)
    for threads in (1, 2, 3):
        Xa, Xa32, Xt = FastBackend(fit_threads=threads)._design(problem, idx)
        np.testing.assert_array_equal(Xa[:, :-1], want)
        np.testing.assert_array_equal(Xa[:, -1], 1.0)
        np.testing.assert_array_equal(Xa32, Xa.astype(np.float32))
        assert Xt.shape == (40, 301) and Xt.dtype == np.float64


def test_cholesky_solver_in_float32_is_a_close_preconditioner():
    M = _spd(300, 9, cond_scale=10.0)
    r = np.random.default_rng(2).normal(size=300)
    x32 = cholesky_solver(M.astype(np.float32))(r.astype(np.float32))
    assert x32.dtype == np.float32
    want = np.linalg.solve(M, r)
    assert np.abs(x32 - want).max() <= 1e-3 * np.abs(want).max()


def test_preconditioner_falls_back_to_float64_when_float32_breaks_down(monkeypatch):
    """A Gram too ill-conditioned for a float32 Cholesky still gets a preconditioner: float32
    unshifted, float32 shifted by the Gram's rounding, then float64 (``attempts``); and a
    failed unshifted float32 factorisation is not retried at a larger C with the same Gram."""
    import geneb.probe.solvers.fast_precond as fp

    dtypes = []
    real = fp.cholesky_solver

    def spy(M, *a, **kw):
        dtypes.append(M.dtype)
        if M.dtype == np.float32:
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        return real(M, *a, **kw)

    monkeypatch.setattr(fp, "cholesky_solver", spy)
    monkeypatch.setattr(fp, "FLOAT32_FACTOR_MIN", 1)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 6))
    Xa = np.hstack([X, np.ones((400, 1))])
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(np.int64)
    path = solve_path(Xa, Xa.astype(np.float32), y, 2, [1.0, 2.0], tol=1e-10, max_iter=100)
    assert all(p.converged for p in path)
    assert dtypes[:3] == [np.float32, np.float32, np.float64]
    # at C = 2 (same Gram): the unshifted float32 attempt is skipped, the shifted one tried
    assert dtypes[3:5] == [np.float32, np.float64]


@pytest.mark.parametrize("K", [2, 3, 4])
def test_weight_drift_is_the_trace_ratio_of_the_data_hessians(K):
    """The lagged Gram's scale (``weight_drift``) against the trace of the data Hessian built
    directly in the softmax parametrisation, ``sum_i (diag p_i - p_i p_i^T) (x) x_i x_i^T``,
    projected on the solved coordinates (the sum-zero basis Q; binary: p (1 - p))."""
    from geneb.probe.solvers.fast_full import _Problem, sum_zero_basis

    rng = np.random.default_rng(K)
    n, d = 300, 6
    X = rng.normal(size=(n, d)).astype(np.float32)
    Xa = np.hstack([X, np.ones((n, 1), np.float32)])
    y = rng.integers(0, K, n)
    prob = _Problem(None, Xa, y, K)

    def probabilities(scale):
        logits = scale * rng.normal(size=(n, K))
        E = np.exp(logits - logits.max(1, keepdims=True))
        P = E / E.sum(1, keepdims=True)
        return P if K > 2 else P[:, 1:]

    def trace(P):
        x2 = (Xa.astype(np.float64) ** 2).sum(1)
        if K == 2:
            return float((P[:, 0] * (1 - P[:, 0]) * x2).sum())
        Q = sum_zero_basis(K)
        return float(sum(np.trace(Q.T @ (np.diag(p) - np.outer(p, p)) @ Q) * s
                         for p, s in zip(P, x2, strict=True)))

    P0, P1 = probabilities(0.3), probabilities(4.0)
    G = prob.gram(P0)
    assert prob.weight_drift(P1, G) == pytest.approx(trace(P1) / trace(P0), rel=1e-5)
    assert prob.weight_drift(P0, G) == pytest.approx(1.0, rel=1e-5)


def test_flush_tiny_zeroes_only_entries_far_below_the_largest():
    from geneb.probe.solvers.fast_precond import FLUSH_BELOW, flush_tiny

    rng = np.random.default_rng(8)
    G = rng.normal(size=(600, 600)).astype(np.float32)
    G[5, 7] = 3e-21
    G[300, 2] = -2e-20
    keep = G.copy()
    big = float(np.abs(G).max())
    G[599, 599] = keep[599, 599] = 4 * big  # the largest entry in the last row block
    flush_tiny(G)
    small = np.abs(keep) < FLUSH_BELOW * 4 * big
    assert small.sum() == 2 and (G[small] == 0).all()
    np.testing.assert_array_equal(G[~small], keep[~small])

