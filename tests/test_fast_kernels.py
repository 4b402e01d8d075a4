"""The compiled passes of the full-data fit (``fast_passes``/``fast_kernels``) against numpy.

Each pass is checked against a float64 numpy computation of the same formula (independent of
the kernels: plain matrix products on a float64 copy of the design), on binary and 3-class
labels, float32 and float64 designs, row counts that are not multiples of the row group or the
block; then the same bits for one and two threads; then whole C paths through the kernels
against scikit-learn's optimum, and a design large enough that the kernels are chosen without
being forced.
"""

from __future__ import annotations

import numpy as np
import pytest
from realistic_embeddings import generate
from scipy.special import expit, log_softmax, softmax
from sklearn.linear_model import LogisticRegression

from geneb.probe.solvers import fast_passes
from geneb.probe.solvers.fast_full import _Problem, solve_path, sum_zero_basis
from geneb.probe.solvers.fast_passes import KernelPasses
from geneb.probe.solvers.row_blocks import RowBlocks

pytestmark = pytest.mark.skipif(not fast_passes.available(), reason="numba is not installed")


def _case(n: int, p: int, K: int, dtype: type, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, p)) + 0.7).astype(dtype)
    y = rng.integers(0, K, n)
    Y = np.eye(K)[y] if K > 2 else y.astype(np.float64)[:, None]
    Kw = K if K > 2 else 1
    return X, Y, rng.standard_normal((Kw, p)) * 0.1, rng.standard_normal((n, Kw))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 1029])
@pytest.mark.parametrize("implicit", [False, True])
def test_passes_equal_numpy_float64(K, dtype, n, implicit):
    """``implicit``: the kernels get the design without its last column (ones), which they
    treat as implicit; the references use the whole design."""
    X, Y, W, base = _case(n, 37, K, dtype)
    if implicit:
        X[:, -1] = 1.0
    design = np.ascontiguousarray(X[:, :-1]) if implicit else X
    passes = KernelPasses(design, Y, K > 2, RowBlocks(n, 2, block_rows=256), implicit)
    assert passes.p == X.shape[1]
    X64 = X.astype(np.float64)
    ref_eta_d = X64 @ W.T
    eta = base + ref_eta_d
    if K > 2:
        ref_loss = float(-(log_softmax(eta, axis=1) * Y).sum())
        ref_P = softmax(eta, axis=1)
    else:
        ref_loss = float((np.logaddexp(0.0, eta[:, 0]) - Y[:, 0] * eta[:, 0]).sum())
        ref_P = expit(eta)
    eta_d, eta_k, loss, P, XtR = passes.fused(W, base)
    tight = {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(eta_d, ref_eta_d, **tight)
    np.testing.assert_allclose(eta_k, eta, **tight)
    np.testing.assert_allclose(P, ref_P, **tight)
    assert loss == pytest.approx(ref_loss, rel=1e-12)
    np.testing.assert_allclose(XtR, X64.T @ (ref_P - Y), rtol=1e-11, atol=1e-10)
    # without a base: the linear predictor is the direction's own
    eta_d0, eta0, *_ = passes.fused(W, None)
    np.testing.assert_allclose(eta0, ref_eta_d, **tight)
    np.testing.assert_allclose(passes.eta(W), ref_eta_d, **tight)
    R = ref_P - Y
    np.testing.assert_allclose(passes.xtr(R), X64.T @ R, rtol=1e-11, atol=1e-10)
    # Hessian products: float64 designs in float64; float32 ones read as their int16 copy
    # (fast_int16: each entry within 1.5e-5 of its column's peak, read twice per product) and
    # summed in float32 per block (they only steer CG), so to int16 rounding of the largest
    # entry (measured worst 4.6e-5 of it, at 7 rows, where no rounding averages out)
    loose = dtype == np.float32
    if K > 2:
        def full_product(Wk):  # the data-Hessian product of the K-class direction Wk
            pu = ref_P * (X64 @ Wk.T)
            return (X64.T @ (pu - ref_P * pu.sum(1, keepdims=True))).T

        ref_h = full_product(W)
        np.testing.assert_allclose(passes.hvp(W, ref_P, None, np.eye(K)), ref_h, rtol=0,
                                   atol=(1e-4 if loose else 1e-11) * np.abs(ref_h).max())
        # in the sum-zero basis: K - 1 coefficients per column, Q^T H Q V
        Q = sum_zero_basis(K)
        V = W[:-1]
        ref_q = Q.T @ full_product(Q @ V)
        np.testing.assert_allclose(passes.hvp(V, ref_P, None, Q), ref_q, rtol=0,
                                   atol=(1e-4 if loose else 1e-11) * np.abs(ref_q).max())
        with pytest.raises(ValueError, match="expected a basis Q of shape"):
            passes.hvp(V, ref_P, None, np.eye(K))
    else:
        D = ref_P[:, 0] * (1 - ref_P[:, 0])
        ref_h = (X64.T @ (D * (X64 @ W[0])))[None, :]
        np.testing.assert_allclose(passes.hvp(W, ref_P, D), ref_h, rtol=0,
                                   atol=(1e-4 if loose else 1e-11) * np.abs(ref_h).max())
    passes.rows.close()


@pytest.mark.parametrize("K", [2, 3])
def test_same_bits_for_one_and_two_threads(K):
    X, Y, W, base = _case(3001, 45, K, np.float32, seed=1)
    out = []
    for threads in (1, 2):
        passes = KernelPasses(X, Y, K > 2, RowBlocks(len(X), threads, block_rows=512))
        out.append(passes.fused(W, base))
        passes.rows.close()
    for a, b in zip(out[0], out[1], strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def _sklearn(X, y, C):
    m = LogisticRegression(C=C, tol=1e-10, max_iter=1000, solver="newton-cholesky").fit(X, y)
    return np.hstack([m.coef_, m.intercept_[:, None]])


@pytest.mark.parametrize("n,d,K,seed", [(900, 40, 2, 201), (700, 48, 3, 202)])
@pytest.mark.parametrize("implicit", [False, True])
def test_kernel_path_reaches_sklearn_optimum(monkeypatch, n, d, K, seed, implicit):
    """Forced onto the kernels (threshold 0): every C of GENEB's sweep converged to 1e-8 and
    at scikit-learn's optimum (tol 1e-10) on realistic embeddings, with the column of ones
    in the design or implicit (the features alone, no copy)."""
    monkeypatch.setattr(fast_passes, "KERNEL_MIN_CELLS", 0)
    X32, y = generate(n, d, K, seed=seed)
    Xa = X32 if implicit else np.hstack([X32, np.ones((n, 1), np.float32)])
    prob = _Problem(None, Xa, y, K, 2, implicit)
    assert prob.kpass is not None and prob.p == d + 1
    prob.rows.close()
    for pf in solve_path(None, Xa, y, K, (0.01, 0.1, 1.0, 10.0, 100.0), tol=1e-8,
                         max_iter=1000, threads=2, implicit_ones=implicit):
        assert pf.converged and pf.grad_norm <= 1e-8
        ref = _sklearn(X32.astype(np.float64), y, pf.C)
        np.testing.assert_allclose(pf.theta, ref, rtol=0, atol=1e-4 * np.abs(ref).max())


def test_implicit_ones_are_refused_where_they_do_not_apply():
    """Only the compiled passes know the implicit column: a design below the kernels'
    threshold, or one with a float64 copy, is refused rather than fitted without intercept."""
    X = np.zeros((50, 4), np.float32)
    y = np.arange(50) % 2
    with pytest.raises(ValueError, match="implicit_ones needs the compiled passes"):
        _Problem(None, X, y, 2, 1, implicit_ones=True)
    with pytest.raises(ValueError, match="implicit_ones needs the compiled passes"):
        _Problem(X.astype(np.float64), X, y, 2, 1, implicit_ones=True)


@pytest.mark.parametrize("K", [1, 2])
def test_gram_with_implicit_ones_equals_the_explicit_design(K):
    """``data_hessian`` with the column of ones implicit equals the one with it in the design
    (float64: the same products, so to rounding)."""
    from geneb.probe.solvers.fast_gram import data_hessian

    rng = np.random.default_rng(11)
    n, d = 1500, 30
    X = rng.normal(size=(n, d))
    Xa = np.hstack([X, np.ones((n, 1))])
    W = {(a, b): rng.random(n) * 0.25 if a == b else rng.random(n) * 0.1 - 0.05
         for a in range(K) for b in range(a, K)}
    serial = lambda fn, tasks: [fn(*t) for t in tasks]  # noqa: E731
    want = data_hessian(lambda a, b: Xa[a:b], n, d + 1, W, K, np.float64, serial)
    got = data_hessian(lambda a, b: X[a:b], n, d + 1, W, K, np.float64, serial,
                       implicit_ones=True)
    up = np.triu_indices(K * (d + 1))
    np.testing.assert_allclose(got[up], want[up], rtol=1e-12, atol=1e-12 * np.abs(want).max())
    # and the explicit one against a direct float64 product (block (0, 0))
    np.testing.assert_allclose(np.triu(want[:d + 1, :d + 1]),
                               np.triu(Xa.T @ (W[0, 0][:, None] * Xa)), rtol=1e-12,
                               atol=1e-12 * np.abs(want).max())


def test_large_design_takes_the_kernels_and_matches_sklearn():
    """A design over ``KERNEL_MIN_CELLS`` values (4,200 x 1,000 + intercept) is passed over by
    the kernels without forcing, and its fit at C = 1 is scikit-learn's."""
    n, d = 4200, 1000
    assert n * (d + 1) >= fast_passes.KERNEL_MIN_CELLS
    X32, y = generate(n, d, 2, seed=203)
    Xa = np.hstack([X32, np.ones((n, 1), np.float32)])
    prob = _Problem(None, Xa, y, 2, 2)
    assert prob.kpass is not None
    prob.rows.close()
    ref = _sklearn(X32.astype(np.float64), y, 1.0)
    for design, implicit in ((Xa, False), (X32, True)):
        (pf,) = solve_path(None, design, y, 2, [1.0], tol=1e-8, max_iter=1000, threads=2,
                           implicit_ones=implicit)
        assert pf.converged
        np.testing.assert_allclose(pf.theta, ref, rtol=0, atol=1e-4 * np.abs(ref).max())


def test_real_task_through_the_kernels_equals_sklearn(data_dir):
    """A real staged task (gue_tf_0: 20,000 train rows, kmer-5 through geneb's extractor, 1,025
    columns with the intercept: over ``KERNEL_MIN_CELLS``): the full regime's MCC at C = 0.1
    and 100 equals scikit-learn's optimum on the same rows (measured 2026-12-02: 0.593191 and
    0.621777 both)."""
    import pandas as pd
    from sklearn.metrics import matthews_corrcoef

    import geneb

    emb = geneb.get_embedder("kmer-5")
    tr, te = (pd.read_csv(data_dir / "gue_tf_0" / f"{s}.csv") for s in ("train", "test"))
    Xtr = np.asarray(emb.embed(list(tr.sequence)), dtype=np.float32)
    Xte = np.asarray(emb.embed(list(te.sequence)), dtype=np.float32)
    assert fast_passes.use_kernels(len(Xtr), Xtr.shape[1] + 1)
    ytr, yte = tr.label.to_numpy(), te.label.to_numpy()
    df = geneb.probe_arrays(Xtr, ytr, Xte, yte, shots=["full"], seeds=[13], Cs=[0.1, 100.0])
    assert df.converged.all()
    for row in df.itertuples():
        m = LogisticRegression(C=row.C, tol=1e-10, max_iter=2000,
                               solver="newton-cholesky").fit(Xtr.astype(np.float64), ytr)
        assert row.mcc == pytest.approx(matthews_corrcoef(yte, m.predict(Xte)), abs=1e-9)


@pytest.mark.parametrize("standardize", [False, True])
def test_backend_probes_kernel_sized_float32_without_a_design_copy(monkeypatch, standardize):
    """Through ``geneb.probe_arrays``: an unstandardised float32 design over the kernels'
    threshold reaches the solver as the features themselves (no copy with a column of ones),
    a standardised one as its own design (its equality with scikit-learn is the real-task
    test's above); the former gives scikit-learn's test MCC."""
    from sklearn.metrics import matthews_corrcoef

    import geneb
    from geneb.probe.solvers import fast

    n, d = 4200, 1000
    X, y = generate(n + 800, d, 2, seed=204)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    seen = []
    real = fast.solve_path

    def spy(Xa64, Xa32, *args, **kw):
        seen.append((Xa32.shape[1], kw.get("implicit_ones"), np.shares_memory(Xa32, Xtr)))
        return real(Xa64, Xa32, *args, **kw)

    monkeypatch.setattr(fast, "solve_path", spy)
    df = geneb.probe_arrays(Xtr, ytr, Xte, yte, shots=["full"], seeds=[13], Cs=[1.0],
                            standardize=standardize)
    assert seen == ([(d, True, True)] if not standardize else [(d + 1, False, False)])
    assert df.converged.all()
    if not standardize:
        m = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000, solver="newton-cholesky").fit(
            Xtr.astype(np.float64), ytr)
        assert df.mcc.item() == pytest.approx(matthews_corrcoef(yte, m.predict(Xte)), abs=1e-9)


@pytest.mark.parametrize("K", [2, 3])
def test_kernel_sized_path_has_the_same_bits_for_one_and_two_threads(K):
    """The whole C path where every new step runs (compiled passes, the implicit column of
    ones, LAPACK factorisations of side >= 1,024, the scaled lagged Gram): one thread and two
    give bitwise the same coefficients."""
    from threadpoolctl import threadpool_limits

    X, y = generate(4200, 1100, K, seed=7)
    assert fast_passes.use_kernels(len(X), X.shape[1] + 1)
    paths = []
    with threadpool_limits(1):
        for threads in (1, 2):
            paths.append(solve_path(None, X, y, K, [0.1, 10.0], tol=1e-8, max_iter=500,
                                    threads=threads, implicit_ones=True))
    for a, b in zip(*paths, strict=True):
        assert a.converged and b.converged
        np.testing.assert_array_equal(a.theta, b.theta)
