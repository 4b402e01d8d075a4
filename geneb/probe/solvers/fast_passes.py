"""The full-data fit's passes over X with the compiled row kernels (:mod:`fast_kernels`).

The same four passes as the numpy ones of :class:`geneb.probe.solvers.fast_full._Problem`
(linear predictor, ``X^T R``, the fused step evaluation, Hessian-vector products), each one
kernel call per fixed row block, the blocks' partial sums added in block order (the same bits
for any thread count). The linear predictor and the gradient are summed in float64 over the
design's own values (float32 rows widened exactly): as accurate as the numpy float64 passes,
in another order. Hessian products of a float32 design read its int16 copy (``fast_int16``,
half the bytes) and are summed in float32 within a block, as the numpy passes' sgemv (they
only steer CG).

Used for designs of at least ``KERNEL_MIN_CELLS`` values when numba is installed (smaller
fits keep the numpy passes: no compile, and the time is in Python overhead there anyway).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geneb.probe.solvers.fast_int16 import Int16Design, int16_design
from geneb.probe.solvers.fast_kernels import available, kernels
from geneb.probe.solvers.row_blocks import RowBlocks

#: Designs with fewer values (rows x columns) than this keep the numpy passes: below it a
#: process that probes only small pairs does not pay for the kernels (a first compile costs
#: ~1-2 s per process, loading the cached kernels ~0.5 s). 2^22 until 2026-12-07; then
#: measured (realistic embeddings at GENEB's median MCC, five-C binary paths, the kernels
#: loaded, 2^22 -> 2^18 -> 0, medians of three alternating runs): 10,000 x 257 85 -> 46 ->
#: 50 ms; 4,000 x 769 116 -> 78 -> 80 ms; 2,000 x 513 51 -> 35 -> 38 ms; 1,000 x 1,025 92
#: -> 72 -> 74 ms; 1,000 x 257 (below 2^18) 16 -> 16 -> 14 ms. The numpy passes upcast each
#: sub-block to float64 for the fused pass (2.2 ms at 10,000 x 257 against 0.23 ms for one
#: float32 pass), the kernels read each row once; the load is repaid by ~15 such paths.
KERNEL_MIN_CELLS = 2**18


def use_kernels(n: int, p: int, min_cells: int | None = None) -> bool:
    """Whether a design of n rows and p columns is passed over with the compiled kernels
    (at least ``min_cells`` values, default ``KERNEL_MIN_CELLS``, and numba installed)."""
    return n * p >= (KERNEL_MIN_CELLS if min_cells is None else min_cells) and available()


class KernelPasses:
    """Passes over the design ``X`` (float32 or float64, C-contiguous; its last column of
    ones left out when ``implicit_ones``) with labels ``Y`` (n, K) one-hot (multi-class) or
    (n, 1) 0/1 (binary), over the fixed ``rows`` blocks."""

    def __init__(self, X: np.ndarray, Y: np.ndarray, multi: bool, rows: RowBlocks,
                 implicit_ones: bool = False) -> None:
        self.X = np.ascontiguousarray(X)
        self.Y = np.ascontiguousarray(Y, dtype=np.float64)
        self.multi = multi
        self.rows = rows
        self.k = kernels()
        #: coefficients per class: X's columns, and the implicit column of ones when X
        #: leaves it out (``fast_kernels``)
        self.p = X.shape[1] + int(implicit_ones)
        self._casts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._hessian: tuple[Int16Design | None] | None = None

    def _sum(self, fn: Any, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
        """Block partials of ``fn(a, b, acc)`` (each into its own zeroed ``acc`` of
        ``dtype``) added in float64 in block order; fn's return values are dropped."""
        def block(a: int, b: int) -> np.ndarray:
            acc: np.ndarray = np.zeros(shape, dtype=dtype)
            fn(a, b, acc)
            return acc

        return self.rows.map_sum(block)

    def _sum_and_loss(self, fn: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, float]:
        """``_sum`` of a kernel that also returns its block's loss: (sum, total loss), both
        added in block order."""
        def block(a: int, b: int) -> tuple[float, np.ndarray]:
            acc = np.zeros(shape)
            return float(fn(a, b, acc)), acc

        parts = self.rows.map(block)
        total: np.ndarray = parts[0][1]
        for _, part in parts[1:]:
            total += part
        return total, float(sum(loss for loss, _ in parts))

    def _cast(self, name: str, arr: np.ndarray, dtype: type) -> np.ndarray:
        """``arr`` as a C-contiguous ``dtype`` array, converted once per source array (the
        Hessian products of one Newton system all use the same P and weights)."""
        seen = self._casts.get(name)
        if seen is None or seen[0] is not arr:
            seen = self._casts[name] = (arr, np.ascontiguousarray(arr, dtype=dtype))
        return seen[1]

    def eta(self, W: np.ndarray) -> np.ndarray:
        """``X W^T`` (n, K) for W (K, p)."""
        W = np.ascontiguousarray(W, dtype=np.float64)
        out = np.empty((len(self.X), len(W)))
        self.rows.map(lambda a, b: self.k["eta_rows"](self.X, a, b, W, out))
        return out

    def row_squares(self) -> np.ndarray:
        """``||x_i||^2`` (n,) of the design's rows as given (without an implicit column of
        ones), in float64."""
        out = np.empty(len(self.X))
        self.rows.map(lambda a, b: self.k["row_squares"](self.X, a, b, out))
        return out

    def xtr(self, R: np.ndarray) -> np.ndarray:
        """``X^T R`` (p, K) for R (n, K)."""
        if self.multi:
            Rc = np.ascontiguousarray(R, dtype=np.float64)
            return self._sum(lambda a, b, acc: self.k["xtr_multi"](self.X, a, b, Rc, acc),
                             (R.shape[1], self.p)).T
        r = np.ascontiguousarray(R[:, 0], dtype=np.float64)
        return self._sum(lambda a, b, acc: self.k["xtr_binary"](self.X, a, b, r, acc),
                         (self.p,))[:, None]

    def fused(self, W: np.ndarray, base: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray]:
        """(eta_d, eta, loss, P, X^T (P - Y)) for the direction W (K, p) at ``base + X W^T``
        (``_Problem.fused``)."""
        W = np.ascontiguousarray(W, dtype=np.float64)
        n, K = len(self.X), len(W)
        eta_d, eta, P = np.empty((n, K)), np.empty((n, K)), np.empty((n, K))
        has = base is not None
        if self.multi:
            b0 = np.ascontiguousarray(base) if has else eta_d
            XtR, loss = self._sum_and_loss(
                lambda a, b, acc: self.k["fused_multi"](self.X, a, b, W, b0, has, self.Y, eta_d,
                                                        eta, P, acc), (K, self.p))
            XtR = XtR.T
        else:
            w, y = W[0], self.Y[:, 0]
            b1 = np.ascontiguousarray(base[:, 0]) if base is not None else eta_d[:, 0]
            e_d, e1, P1 = eta_d[:, 0], eta[:, 0], P[:, 0]
            XtR, loss = self._sum_and_loss(
                lambda a, b, acc: self.k["fused_binary"](self.X, a, b, w, b1, has, y, e_d, e1,
                                                         P1, acc), (self.p,))
            XtR = XtR[:, None]
        return eta_d, eta, loss, P, XtR

    def hvp(self, W: np.ndarray, P: np.ndarray, D: np.ndarray | None,
            Q: np.ndarray | None = None) -> np.ndarray:
        """``X^T (D X w)`` (binary: W (1, p), D the weights) or the multi-class data-Hessian
        product at P in the basis Q (K, K'): ``Q^T H (Q W)`` for W (K', p), returned (K', p)
        (Q the identity: the product in full).

        A float32 design is read as its int16 copy (``hessian_design``; half the bytes) and
        multiplied in float32 within each block (the numpy passes' sgemv precision: the
        products only steer CG), blocks added in float64: measured 100,000 x 1,025, one
        thread, 33.9 ms against 42.5 ms widened to float64 (one float32 read of X: 28.8 ms),
        before the int16 copy. A float64 design is read and summed in float64."""
        dt = np.float32 if self.X.dtype == np.float32 else np.float64
        zero = dt(0.0)
        copy = self.hessian_design()
        X = self.X if copy is None else copy.values
        W = np.ascontiguousarray(W if copy is None else self._onto_copy(W, copy), dtype=dt)
        if self.multi:
            if Q is None or Q.shape != (P.shape[1], len(W)):
                raise ValueError(f"expected a basis Q of shape {(P.shape[1], len(W))}, got "
                                 f"{None if Q is None else Q.shape}")
            Pc, Qc = self._cast("P", P, dt), self._cast("Q", Q, dt)
            fn = self.k["hvp_multi"]
            out = self._sum(lambda a, b, acc: fn(X, a, b, W, Qc, Pc, acc, zero), W.shape, dt)
        else:
            assert D is not None
            w, Dc = W[0], self._cast("D", D, dt)
            fn = self.k["hvp_binary"]
            out = self._sum(lambda a, b, acc: fn(X, a, b, w, Dc, acc, zero), w.shape,
                            dt)[None, :]
        return out if copy is None else self._from_copy(out, copy)

    def hessian_design(self) -> Int16Design | None:
        """The int16 copy the Hessian products read (``fast_int16``), made on the first
        product; None (they read the design) when the design is float64 or
        ``int16_design`` declines it."""
        if self._hessian is None:
            copy = int16_design(self.X, self.rows) if self.X.dtype == np.float32 else None
            self._hessian = (copy,)
        return self._hessian[0]

    def _onto_copy(self, W: np.ndarray, copy: Int16Design) -> np.ndarray:
        """Coefficients W (K', p) as those of the copy's values with an implicit column of
        ones (K', d + 1): ``x . w = q . (s w) + (c . w + intercept)``."""
        d = copy.values.shape[1]
        offset = W[:, :d] @ copy.centre + (W[:, d] if self.p > d else 0.0)
        return np.hstack([W[:, :d] * copy.scale, offset[:, None]])

    def _from_copy(self, acc: np.ndarray, copy: Int16Design) -> np.ndarray:
        """``X^T r`` (K', p) from the copy's sums (K', d + 1) ``[Q^T r, 1^T r]``:
        ``s Q^T r + c 1^T r``, and ``1^T r`` for the implicit intercept."""
        d = copy.values.shape[1]
        out = np.empty((len(acc), self.p))
        out[:, :d] = acc[:, :d] * copy.scale + acc[:, d:] * copy.centre
        if self.p > d:
            out[:, d] = acc[:, d]
        return out
