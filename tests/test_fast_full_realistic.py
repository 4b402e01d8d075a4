"""The full-data C path on realistic embeddings reaches scikit-learn's optimum on every cell.

Held-out shapes (not those ``benchmarks/real_size.py`` times; seeds it never uses) drawn with
the statistics fitted to real embeddings (``realistic_embeddings``: power-law spectrum, shared
mean offset, unstandardised, as GENEB probes them): n > d, n close to d, n < d (more features
than rows, above the few-shot size), binary and 3 classes. References: scikit-learn
``LogisticRegression`` in float64 at tol 1e-10 on the same rows, fitted independently per C.
"""

from __future__ import annotations

import numpy as np
import pytest
from realistic_embeddings import SEPARABLE, generate
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef

import geneb
from geneb.probe.solvers.fast_full import solve_path

C_SWEEP = (0.01, 0.1, 1.0, 10.0, 100.0)
#: (train rows, width, classes, seed): held out from the benchmark's shapes and seeds
SHAPES = [(1200, 48, 2, 101), (900, 64, 3, 102), (400, 360, 2, 103), (240, 336, 3, 104)]


def _objective(theta: np.ndarray, X: np.ndarray, y: np.ndarray, C: float) -> float:
    """sklearn's L2 objective ``0.5 ||W||^2 + C * sum log-loss`` (intercept unpenalised)."""
    W, b = theta[:, :-1], theta[:, -1]
    eta = X @ W.T + b
    if W.shape[0] == 1:
        e = eta[:, 0]
        loss = np.logaddexp(0.0, e) - y * e
    else:
        m = eta.max(1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(eta - m).sum(1))
        loss = lse - eta[np.arange(len(y)), y]
    return 0.5 * float((W * W).sum()) + C * float(loss.sum())


def _reference(X: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, LogisticRegression]:
    """scikit-learn's own second-order solver (exact Hessians: its tol 1e-10 is met where
    lbfgs stops short on these ill-conditioned spectra)."""
    m = LogisticRegression(C=C, tol=1e-10, max_iter=1000, solver="newton-cholesky").fit(X, y)
    assert m.n_iter_.max() < 1000, f"reference not converged at C={C}"
    return np.hstack([m.coef_, m.intercept_[:, None]]), m


@pytest.mark.parametrize("level", ["median", "separable"])
@pytest.mark.parametrize("n,d,K,seed", SHAPES)
def test_path_reaches_sklearn_optimum(n, d, K, seed, level):
    """At GENEB's median difficulty and on the former near-separable draw (the stress case:
    p(1 - p) collapses along the path)."""
    X32, y = generate(n, d, K, seed=seed, stats=SEPARABLE if level == "separable" else None)
    X = X32.astype(np.float64)
    Xa = np.hstack([X, np.ones((n, 1))])
    path = solve_path(Xa, Xa.astype(np.float32), y, K, C_SWEEP, tol=1e-8, max_iter=1000,
                      threads=2)
    for pf in path:
        assert pf.converged and pf.grad_norm <= 1e-8, (pf.C, pf.grad_norm)
        ref, _ = _reference(X, y, pf.C)
        f_ours, f_ref = _objective(pf.theta, X, y, pf.C), _objective(ref, X, y, pf.C)
        # the same optimum: objectives equal to rounding, geneb's never above
        assert f_ours <= f_ref * (1 + 1e-10), (pf.C, f_ours, f_ref)
        assert f_ours >= f_ref * (1 - 1e-8), (pf.C, f_ours, f_ref)
        np.testing.assert_allclose(pf.theta, ref, rtol=0, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("n,d,K,seed", SHAPES[:2])
def test_probe_arrays_full_regime_equals_sklearn(n, d, K, seed):
    """Through the public API (``geneb probe``'s engine): every full-regime cell's MCC equals
    that of scikit-learn's optimum on the same rows."""
    X, y = generate(n + n // 4, d, K, seed=seed + 50)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    df = geneb.probe_arrays(Xtr, ytr, Xte, yte, shots=["full"], seeds=[13, 42], Cs=C_SWEEP)
    assert len(df) == 2 * len(C_SWEEP) and df.converged.all()
    for row in df.itertuples():
        _, m = _reference(Xtr.astype(np.float64), ytr, row.C)
        assert row.mcc == pytest.approx(matthews_corrcoef(yte, m.predict(Xte)), abs=1e-9)


@pytest.mark.parametrize("K", [2, 3])
def test_upcast_float32_design_gives_the_same_bits(K):
    """Unstandardised float32 features: the path without a float64 copy (row blocks upcast
    from the float32 design) returns bitwise the coefficients of the path with one."""
    X32, y = generate(2100, 40, K, seed=105)
    Xa32 = np.hstack([X32, np.ones((len(X32), 1), dtype=np.float32)])
    held = solve_path(Xa32.astype(np.float64), Xa32, y, K, C_SWEEP, tol=1e-8, max_iter=1000,
                      threads=2)
    upcast = solve_path(None, Xa32, y, K, C_SWEEP, tol=1e-8, max_iter=1000, threads=2)
    for a, b in zip(held, upcast, strict=True):
        np.testing.assert_array_equal(a.theta, b.theta)
        assert a.n_iter == b.n_iter and a.converged and b.converged
