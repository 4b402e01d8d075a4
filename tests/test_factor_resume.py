"""A preconditioner factorisation whose pivot fails goes on with a shift added to the rest
of the diagonal (``resume_shift`` of ``lapack_factor.factor_upper`` and
``numeric.cholesky_solver``), against numpy's Cholesky of the matrix so shifted; and the
full-data fit's preconditioner hands it the float32 Gram's rounding shift."""

from __future__ import annotations

import numpy as np
import pytest
from test_probe_numeric import _spd
from threadpoolctl import threadpool_limits

from geneb.probe.solvers import lapack_factor
from geneb.probe.solvers.fast_full import solve_path
from geneb.probe.solvers.numeric import cholesky_solver


def _indefinite_at(p: int, k: int, seed: int) -> tuple[np.ndarray, float]:
    """(M, s): M = S - t e_k e_k^T for an SPD S, t its squared Cholesky pivot at row k plus
    0.5, so the factorisation of M fails at row k and nowhere before; s = t + 1, so that
    M + s diag(0, .., 0, 1, .., 1) is positive definite wherever its ones start at or
    before k (it is S + (s - t) e_k e_k^T plus a positive diagonal)."""
    M = _spd(p, seed, cond_scale=3.0)
    t = float(np.linalg.cholesky(M, upper=True)[k, k]) ** 2 + 0.5
    M[k, k] -= t
    return M, t + 1.0


@pytest.mark.parametrize("p,k,leaf", [(1100, 900, 512), (1100, 300, 512), (700, 650, 64)])
def test_lapack_factor_resumes_a_failed_leaf_with_the_shift_from_its_first_row(p, k, leaf,
                                                                              monkeypatch):
    """``resume_shift``: U is the exact factor of ``M + s diag(0, .., 0, 1, .., 1)`` with
    the ones from the failed leaf's first row (numpy's Cholesky of that matrix, float64);
    without it the same matrix raises."""
    monkeypatch.setattr(lapack_factor, "LEAF_SIDE", leaf)
    M, shift = _indefinite_at(p, k, seed=p + k)
    serial = lambda fn, tasks: [fn(*t) for t in tasks]  # noqa: E731
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        lapack_factor.factor_upper(np.triu(M), serial)
    A = np.triu(M)
    with threadpool_limits(1):
        start = lapack_factor.factor_upper(A, serial, resume_shift=shift)
    assert start is not None and start <= k and k - start < leaf
    mask = (np.arange(p) >= start).astype(float)
    want = np.linalg.cholesky(M + shift * np.diag(mask), upper=True)
    assert np.abs(np.triu(A) - want).max() <= 1e-12 * np.abs(want).max()
    # a positive definite matrix is not shifted at all
    B = np.triu(_spd(p, 1, cond_scale=3.0))
    assert lapack_factor.factor_upper(B, serial, resume_shift=shift) is None
    # one shift only: a second failing pivot after it raises
    M2 = M + shift * np.diag(mask)
    M2[p - 1, p - 1] -= np.linalg.cholesky(M2, upper=True)[p - 1, p - 1] ** 2 + 0.5
    M2 -= shift * np.diag(mask)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        lapack_factor.factor_upper(np.triu(M2), serial, resume_shift=shift)


def test_blocked_cholesky_resumes_a_failed_block_with_the_shift():
    """Below ``LAPACK_FROM`` (numpy's blocked factorisation): the solve is that of ``M + s
    diag(0, .., 0, 1, .., 1)`` from the failed block's first row (blocks of 64: row 250
    fails in block 192..256)."""
    p, k = 300, 250
    M, shift = _indefinite_at(p, k, seed=5)
    r = np.random.default_rng(6).normal(size=p)
    with pytest.raises(np.linalg.LinAlgError):
        cholesky_solver(np.triu(M), block=64)
    solve = cholesky_solver(np.triu(M), block=64, resume_shift=shift)
    mask = (np.arange(p) >= 192).astype(float)
    want = np.linalg.solve(M + shift * np.diag(mask), r)
    assert np.abs(solve(r) - want).max() <= 1e-9 * np.abs(want).max()


def test_unshifted_factorisation_resumes_with_the_rounding_shift(monkeypatch):
    """``precond`` hands the unshifted attempt the float32 Gram's rounding shift as its
    ``resume_shift``: a pivot lost to float32 rounding (a steep spectrum at C = 100: on
    this machine the factorisation resumed at row 256) costs no second factorisation, one
    ``cholesky_solver`` call per C, and the path still reaches scikit-learn's optimum."""
    from sklearn.linear_model import LogisticRegression

    import geneb.probe.solvers.fast_precond as fp

    calls = []
    real = fp.cholesky_solver

    def spy(M, *a, **kw):
        calls.append((M.dtype, kw.get("resume_shift", 0.0)))
        return real(M, *a, **kw)

    monkeypatch.setattr(fp, "cholesky_solver", spy)
    rng = np.random.default_rng(0)
    n, d = 700, 600
    Z = rng.standard_normal((n, d))
    R = np.linalg.qr(rng.standard_normal((d, d)))[0]
    X = ((Z * np.arange(1, d + 1) ** -1.5) @ R + 3.0).astype(np.float32)
    y = (Z[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(np.int64)
    Xa = np.hstack([X, np.ones((n, 1), np.float32)])
    path = solve_path(None, Xa, y, 2, [1.0, 100.0], tol=1e-8, max_iter=100)
    assert [p.converged for p in path] == [True, True]
    assert len(calls) == 2 and all(dt == np.float32 and 0.0 < s < 10.0 for dt, s in calls)
    sk = LogisticRegression(C=100.0, tol=1e-10, max_iter=1000, solver="newton-cholesky")
    sk.fit(X.astype(np.float64), y)
    X64 = X.astype(np.float64)

    def objective(w: np.ndarray, b: float) -> float:
        e = X64 @ w + b
        return float(100.0 * (np.logaddexp(0.0, e) - y * e).sum() + 0.5 * w @ w)

    ours = objective(path[1].theta[0, :-1], float(path[1].theta[0, -1]))
    theirs = objective(sk.coef_[0], float(sk.intercept_[0]))
    assert ours <= theirs * (1 + 1e-9)
