"""The Kronecker form of the multi-class data Hessian at the C path's start (``fast_kron``).

References are built independently of the module: the data Hessian summed row by row in the
softmax parametrisation, ``sum_i (diag p_i - p_i p_i^T) (x) x_i x_i^T``, projected on the
sum-zero basis Q, and dense ``np.linalg.solve`` on the preconditioner written out in full.
"""

from __future__ import annotations

import numpy as np
import pytest

from geneb.probe.solvers.fast_full import _Problem, intercept_start, sum_zero_basis
from geneb.probe.solvers.fast_kron import KroneckerGram, block_solver, class_weights, common_row


def _design(n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, d)) + 0.5).astype(np.float32)
    return np.hstack([X, np.ones((n, 1), np.float32)])


def _reference_hessian(Xa: np.ndarray, P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """(K' p, K' p) data Hessian, block (a, b) = X^T diag(w_ab) X, w from each row's p."""
    X = Xa.astype(np.float64)
    K1, p = Q.shape[1], X.shape[1]
    H = np.zeros((K1 * p, K1 * p))
    for pi, x in zip(P, X, strict=True):
        H += np.kron(Q.T @ (np.diag(pi) - np.outer(pi, pi)) @ Q, np.outer(x, x))
    return H


@pytest.mark.parametrize("counts", [(40, 40, 40), (70, 30, 20), (50, 20, 20, 10, 10)])
def test_the_start_gram_is_the_data_hessian_in_kronecker_form(counts):
    """Balanced (S a multiple of the identity: one shared factorisation) and imbalanced
    classes (S rotated to its eigenbasis): S (x) A equals the row-by-row data Hessian at the
    path's start, where every row has the class priors as probabilities."""
    K, n = len(counts), sum(counts)
    y = np.repeat(np.arange(K), counts)
    Xa = _design(n, 6, seed=K)
    prob = _Problem(None, Xa, y, K)
    Q = sum_zero_basis(K)
    logits = (Q @ (Q.T @ intercept_start(y, K)))[:, 0]  # the path's starting intercepts
    prior = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(prior, np.array(counts) / n, rtol=1e-12)
    P = np.tile(prior, (n, 1))
    G = prob.lagged_gram(P, np.float64)
    assert isinstance(G, KroneckerGram)
    ref = _reference_hessian(Xa, P, Q)
    full = np.kron(G.S, np.triu(G.A) + np.triu(G.A, 1).T)
    np.testing.assert_allclose(full, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    assert G.trace() == pytest.approx(np.trace(ref), rel=1e-12)
    assert G.diag_max() == pytest.approx(np.diag(ref).max(), rel=1e-12)
    U, lam = G.eigen
    assert (U is None) == (len(set(counts)) == 1)
    assert len(lam) == (1 if U is None else K - 1)
    # rows that differ: the general Gram
    P2 = P.copy()
    P2[0, :2] += (1e-3, -1e-3)
    assert common_row(P2) is None
    assert isinstance(prob.lagged_gram(P2, np.float64), np.ndarray)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("prior", [(1 / 3, 1 / 3, 1 / 3), (0.6, 0.3, 0.1)])
def test_block_solver_solves_the_written_out_preconditioner(dtype, prior):
    rng = np.random.default_rng(5)
    Xa = _design(200, 9, seed=5)
    A = Xa.T.astype(np.float64) @ Xa
    Q = sum_zero_basis(3)
    S = class_weights(np.array(prior), Q)
    np.testing.assert_allclose(S, Q.T @ (np.diag(prior) - np.outer(prior, prior)) @ Q,
                               atol=1e-15)
    pen = np.ones(A.shape[0])
    pen[-1] = 0.0  # the intercept is not penalised
    c, add = 0.7, 0.05
    Au = np.triu(A).astype(dtype)
    Au[np.tril_indices(len(A), -1)] = np.nan  # the lower triangle is never read
    buffers: list[np.ndarray] = []
    from geneb.probe.solvers.numeric import cholesky_solver

    solve = block_solver(KroneckerGram(S, Au), c, pen, dtype, add, 0.0, buffers,
                         lambda M: cholesky_solver(M))
    assert solve is not None
    M = c * np.kron(S, A) + np.diag(np.tile(pen, 2))
    M += np.eye(len(M)) * (1e-10 * np.diag(M).max() + add)
    r = rng.normal(size=len(M))
    x = solve(r)
    assert x.dtype == np.float64 and x.shape == r.shape
    tol = 1e-9 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(x, np.linalg.solve(M, r), rtol=tol, atol=tol * np.abs(x).max())
    # the buffers are reused by the next factorisation (no new p x p matrices)
    kept = [id(b) for b in buffers]
    assert block_solver(KroneckerGram(S, Au), 2 * c, pen, dtype, add, 0.0, buffers,
                        lambda M: cholesky_solver(M)) is not None
    assert [id(b) for b in buffers] == kept


def test_block_solver_reports_a_block_that_does_not_factor():
    S = np.array([[1.0]])
    A = -np.eye(4)
    out = block_solver(KroneckerGram(S, A), 1.0, np.zeros(4), np.float64, 0.0, 0.0, [],
                       lambda M: None)
    assert out is None


@pytest.mark.parametrize("implicit", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_design_gram_is_xtx_with_the_ones_column(implicit, dtype):
    """``design_gram`` (whole-design panels, or chunks for a float64 Gram of float32 rows)
    against float64 numpy, upper triangle (the only one defined), with the ones column
    implicit or not; the same bits for one and two threads."""
    from geneb.probe.solvers.fast_gram import design_gram
    from geneb.probe.solvers.row_blocks import RowBlocks

    Xa = _design(1500, 40, seed=2)
    ref = Xa.astype(np.float64).T @ Xa.astype(np.float64)
    X = Xa[:, :-1].copy() if implicit else Xa
    out = []
    for threads in (1, 2):
        rb = RowBlocks(len(X), threads)
        try:
            sums = X.sum(axis=0, dtype=np.float64) if implicit else None
            out.append(design_gram(X, dtype, rb.run, column_sums=sums))
        finally:
            rb.close()
    np.testing.assert_array_equal(out[0], out[1])
    G = out[0]
    assert G.dtype == dtype and G.shape == ref.shape
    upper = np.triu_indices(len(ref))
    tol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(G[upper], ref[upper], rtol=0, atol=tol * np.abs(ref).max())


def test_binary_start_gram_is_a_scaled_design_gram():
    Xa = _design(300, 5, seed=9)
    y = (np.arange(300) % 4 == 0).astype(int)
    prob = _Problem(None, Xa, y, 2)
    p1 = 0.25
    P = np.full((300, 1), p1)
    G = prob.lagged_gram(P, np.float64)
    assert isinstance(G, KroneckerGram)
    assert G.S.shape == (1, 1) and G.S[0, 0] == pytest.approx(p1 * (1 - p1), rel=1e-15)
    X64 = Xa.astype(np.float64)
    ref = X64.T @ (p1 * (1 - p1) * X64)
    upper = np.triu_indices(len(ref))
    np.testing.assert_allclose((G.S[0, 0] * G.A)[upper], ref[upper], rtol=1e-12)
    assert G.eigen[0] is None  # one block, no rotation
