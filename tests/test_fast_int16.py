"""The int16 copy of a float32 design that the compiled Hessian products read (``fast_int16``).

Checked against numpy: the centres are each column's midrange and the scales its half-range
over ``INT16_TOP``, every value is within half a step of the design's, the copy is the same
for one thread and two, a column with an outlier row keeps the float32 design, and the
Hessian products from the copy are within the float32 products' order of a float64 product on
realistic embeddings.
"""

from __future__ import annotations

import numpy as np
import pytest
from realistic_embeddings import generate

from geneb.probe.solvers import fast_passes
from geneb.probe.solvers.fast_full import sum_zero_basis
from geneb.probe.solvers.fast_int16 import INT16_TOP, MIN_SPREAD_STEPS, int16_design
from geneb.probe.solvers.fast_passes import KernelPasses
from geneb.probe.solvers.row_blocks import RowBlocks

pytestmark = pytest.mark.skipif(not fast_passes.available(), reason="numba is not installed")


def _design(n: int = 1500, d: int = 23, seed: int = 0) -> np.ndarray:
    """Columns of very different spreads and offsets (one offset 10^5 times its spread), one
    of them constant."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.logspace(-4, 3, d) + rng.normal(0, 5, d)
    X[:, 3] = 2.5
    return np.ascontiguousarray(X, dtype=np.float32)


def test_values_are_within_half_a_step_of_the_design():
    X = _design()
    rows = RowBlocks(len(X), 2, block_rows=256)
    copy = int16_design(X, rows)
    rows.close()
    assert copy is not None and copy.values.dtype == np.int16
    X64 = X.astype(np.float64)
    lo, hi = X64.min(axis=0), X64.max(axis=0)
    np.testing.assert_allclose(copy.centre, (lo + hi) / 2, rtol=1e-15)
    np.testing.assert_allclose(copy.scale, np.where(hi > lo, (hi - lo) / 2 / INT16_TOP, 1.0),
                               rtol=1e-12)
    assert np.abs(copy.values.astype(np.int32)).max() <= INT16_TOP
    assert not copy.values[:, 3].any()  # the constant column: its centre alone
    err = np.abs(copy.centre + copy.values * copy.scale - X64)
    assert (err <= copy.scale * (0.5 + 1e-9)).all()
    # each non-constant column's extremes are stored at the ends of the range
    top = copy.values.astype(np.int32)
    assert (top.max(axis=0)[hi > lo] == INT16_TOP).all()
    assert (top.min(axis=0)[hi > lo] == -INT16_TOP).all()


def test_same_copy_for_one_and_two_threads():
    X = _design(3001, 17, seed=1)
    out = []
    for threads in (1, 2):
        rows = RowBlocks(len(X), threads, block_rows=512)
        out.append(int16_design(X, rows))
        rows.close()
    assert out[0] is not None and out[1] is not None
    assert np.array_equal(out[0].values, out[1].values)
    assert np.array_equal(out[0].scale, out[1].scale)


def test_outlier_column_keeps_the_float32_design():
    X = _design(20000, 9, seed=2)
    col = X[:, 5].astype(np.float64)
    spread = float(np.abs(col - col.mean()).mean())
    # one row far out: the column's typical entries keep fewer than MIN_SPREAD_STEPS steps
    X[7, 5] = np.float32(col.mean() + 16 * INT16_TOP / MIN_SPREAD_STEPS * spread)
    rows = RowBlocks(len(X), 2, block_rows=256)
    assert int16_design(X, rows) is None
    X[7, 5] = np.float32(col.mean() + INT16_TOP / MIN_SPREAD_STEPS / 4 * spread)  # nearer in
    assert int16_design(X, rows) is not None
    X[7, 5] = np.float32(col.mean() + 16 * INT16_TOP / MIN_SPREAD_STEPS * spread)
    Y = (np.arange(len(X)) % 2).astype(np.float64)[:, None]
    passes = KernelPasses(X, Y, False, rows)
    assert passes.hessian_design() is None
    D = np.full(len(X), 0.25)
    w = np.linspace(-1, 1, 9)
    ref = X.astype(np.float64).T @ (D * (X.astype(np.float64) @ w))
    got = passes.hvp(w[None, :], np.zeros((len(X), 1)), D)[0]
    assert np.linalg.norm(got - ref) <= 1e-6 * np.linalg.norm(ref)  # the float32 design's
    rows.close()


def test_refuses_what_it_does_not_copy():
    rows = RowBlocks(10, 1)
    for bad in (np.ones((10, 3)), np.ones((3, 10), np.float32).T, np.ones((0, 3), np.float32)):
        with pytest.raises(ValueError, match="expected a C-contiguous non-empty 2-D float32"):
            int16_design(bad, rows)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("implicit", [False, True])
def test_hessian_products_from_the_copy_match_float64(K, implicit):
    """On realistic embeddings (unstandardised, correlated), binary and in the sum-zero basis
    of 3 classes, with the column of ones in the design or implicit: within 2e-6 (relative,
    Euclidean) of the float64 product; the design's float32 products are ~1.5e-7 there."""
    X32, y = generate(4000, 300, K, seed=7)
    rng = np.random.default_rng(3)
    n = len(X32)
    Xa = np.hstack([X32, np.ones((n, 1), np.float32)])
    design = X32 if implicit else Xa
    Y = np.eye(K)[y] if K > 2 else y.astype(np.float64)[:, None]
    rows = RowBlocks(n, 2)
    passes = KernelPasses(design, Y, K > 2, rows, implicit)
    assert passes.hessian_design() is not None  # the copy is what the products read
    X64 = Xa.astype(np.float64)
    eta = X64 @ rng.standard_normal((Xa.shape[1], K)) * 0.05
    if K > 2:
        P = np.exp(eta - eta.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        Q = sum_zero_basis(K)
        V = rng.standard_normal((K - 1, Xa.shape[1]))
        pu = P * (X64 @ (Q @ V).T)
        ref = Q.T @ (X64.T @ (pu - P * pu.sum(1, keepdims=True))).T
        got = passes.hvp(V, P, None, Q)
    else:
        P = 1.0 / (1.0 + np.exp(-eta[:, :1]))
        D = P[:, 0] * (1.0 - P[:, 0])
        w = rng.standard_normal(Xa.shape[1])
        ref = (X64.T @ (D * (X64 @ w)))[None, :]
        got = passes.hvp(w[None, :], P, D)
    rows.close()
    assert np.linalg.norm(got - ref) <= 2e-6 * np.linalg.norm(ref)
