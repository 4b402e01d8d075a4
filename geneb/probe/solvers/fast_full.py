"""Full-data logistic regression along an ascending C path (numpy, CPU).

Inexact Newton: each Newton system ``H delta = -g`` is solved by conjugate gradients
(Hessian-vector products with float32 data passes), preconditioned by a Cholesky factor of
``C * G + I`` where ``G = X^T D X`` is the data part of the Hessian computed in float32 (the
only O(n d^2) step) at some earlier iterate. ``G`` is reused across Newton steps and across C
(re-factoring for a new C costs one O(d^3 / 3) Cholesky, in float32 for large d) and
recomputed only when CG stops converging quickly. Gradient, objective, line search and the
stopping test run in float64, so the float32 parts only steer the steps: they affect speed,
never what counts as converged. Warm starts: each C starts from the previous solution.

The path itself (warm starts along C, when the Gram is rebuilt, the line search) is
:mod:`geneb.probe.solvers.fast_path`.

Parallel without changing a bit: the matrix-vector passes run over fixed row blocks and the
Gram and Cholesky updates are fixed lists of panel products, all handed to the same threads
(:mod:`geneb.probe.solvers.row_blocks`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from geneb.probe.solvers.fast_gram import data_hessian, design_gram
from geneb.probe.solvers.fast_passes import KernelPasses, use_kernels
from geneb.probe.solvers.fast_path import PathFit, run_path
from geneb.probe.solvers.fast_precond import Preconditioner
from geneb.probe.solvers.numeric import expit, logsumexp
from geneb.probe.solvers.row_blocks import BLOCK_ROWS, RowBlocks

#: Most bytes of float64 rows a float64 pass upcasts at a time: a row block is split into
#: the fewest equal sub-blocks below it (whole 1,024-row blocks up to width 2,047). Measured
#: on 100,000 x 1,025, two threads, one process: the fused pass 201 ms with whole blocks,
#: 232 ms with 1 MiB (128-row) sub-blocks, whose per-sub-block Python calls (the loss and P
#: of 128 rows) cost more than L2 residency saved; the former separate eta and gradient
#: passes 282-304 ms (a float32 pass: 49-65 ms).
SUB_BYTES = 16 * 2**20


@dataclass(frozen=True, eq=False)
class Evaluation:
    """What one fused pass (``_Problem.fused``) returns: ``X d`` for a direction d, and at
    the linear predictor ``eta`` the loss, the probabilities P and ``XtR = X^T (P - Y)``."""

    eta_d: np.ndarray
    eta: np.ndarray
    loss: float
    P: np.ndarray
    XtR: np.ndarray


class _Problem(Preconditioner):
    """Loss, gradient and Hessian products of one full-data problem at one C.

    Multi-class: sklearn's symmetric parametrisation has its optimum in the sum-zero subspace
    (shifting all K weight vectors by their mean lowers the penalty and leaves the softmax
    unchanged; the intercepts are only defined up to such a shift, and sum-zero ones are
    chosen). With an orthonormal basis Q (K x K-1) of that subspace, ``W = Q V`` is an exact
    reparametrisation with ``||W|| = ||V||``: K-1 instead of K coefficient rows, so the
    Hessian is 2/3 the side (K = 3: 3 GEMM blocks instead of 6, a Cholesky 3.4x cheaper),
    and no extra term is needed to fix the intercept shift. Binary: Q = [[1]].
    """

    #: ``use_kernels``' threshold for this problem's design (None: ``KERNEL_MIN_CELLS``)
    kernel_min_cells: int | None = None

    def __init__(self, Xa64: np.ndarray | None, Xa32: np.ndarray, y: np.ndarray,
                 n_classes: int, threads: int | None = None,
                 implicit_ones: bool = False) -> None:
        #: None: the float64 design is exactly Xa32 (float32 data probed unstandardised), and
        #: its row blocks are upcast when a float64 pass needs them (``rows64``)
        self.X = Xa64
        self.X32 = Xa32
        #: Xa32 is the features alone and the intercept's column of ones is implicit (only
        #: with the compiled passes and no float64 design: ``solve_path``)
        self.implicit_ones = implicit_ones
        self.n, self.p = len(Xa32), Xa32.shape[1] + int(implicit_ones)
        self.rows = RowBlocks(self.n, threads or 1)
        per_block = -(-BLOCK_ROWS * 8 * self.p // SUB_BYTES)  # sub-blocks per block
        self.sub_rows = -(-BLOCK_ROWS // per_block)
        self._local = threading.local()  # per-thread sub-block buffers
        self._w_for: np.ndarray | None = None
        self._w = np.empty(0)
        self.multi = n_classes > 2
        if self.multi:
            self.Q = sum_zero_basis(n_classes)
            self.Y = np.eye(n_classes)[y]
        else:
            self.Q = np.ones((1, 1))
            self.Y = y.astype(np.float64)[:, None]
        self.Kp = self.Q.shape[1]  # coefficient rows actually solved for
        self.pen = np.ones(self.p)
        self.pen[-1] = 0.0
        #: precision of the lagged Gram; float64 once float32 proved too coarse (``factor``)
        self.gram_dtype: type = np.float32
        #: the compiled passes (one read of each row per pass) for large designs, else None
        self.kpass = (KernelPasses(Xa32 if Xa64 is None else Xa64, self.Y, self.multi, self.rows,
                                   implicit_ones)
                      if use_kernels(self.n, self.p, self.kernel_min_cells) else None)
        if implicit_ones and (self.kpass is None or Xa64 is not None):
            raise ValueError("implicit_ones needs the compiled passes and no float64 design "
                             f"(n {self.n} x p {self.p}: use_kernels "
                             f"{use_kernels(self.n, self.p, self.kernel_min_cells)})")

    def rows64(self, a: int, b: int, buf: np.ndarray | None = None) -> np.ndarray:
        """Rows a..b of the float64 design: the same values (so the same BLAS products, the
        same bits) whether it is held or upcast from Xa32 (into ``buf`` when given: a
        buffer reused across sub-blocks costs 1.65 float32 passes to fill, a new array each
        time 2.44), whose half-size reads make the float64 passes cheaper."""
        if self.X is not None:
            return self.X[a:b]
        if buf is None:
            return self.X32[a:b].astype(np.float64)
        out = buf[:b - a]
        np.copyto(out, self.X32[a:b])
        return out

    def _sub_buffer(self) -> np.ndarray | None:
        """This thread's float64 buffer for one sub-block, allocated once (a new 8 MiB array
        per block would be a fresh mapping whose pages fault in on every pass); None when the
        float64 design is held."""
        if self.X is not None:
            return None
        buf: np.ndarray | None = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = np.empty((self.sub_rows, self.p))
        return buf

    def full(self, theta: np.ndarray) -> np.ndarray:
        """(K', p) coefficients in sklearn's parametrisation."""
        W: np.ndarray = self.Q @ theta
        return W

    def _subs(self, a: int, b: int) -> range:
        """Starts of the fixed sub-blocks of rows a..b that a float64 pass upcasts at a time
        (``SUB_BYTES``: the float64 rows are read twice while still in cache)."""
        return range(a, b, self.sub_rows)

    def eta(self, theta: np.ndarray) -> np.ndarray:
        """Linear predictor ``X W^T`` (n, K) in float64."""
        if self.kpass is not None:
            return self.kpass.eta(self.full(theta))
        Wt = np.ascontiguousarray(self.full(theta).T)
        out = np.empty((self.n, Wt.shape[1]))

        def block(a: int, b: int) -> None:
            buf = self._sub_buffer()
            for s in self._subs(a, b):
                e = min(b, s + self.sub_rows)
                np.matmul(self.rows64(s, e, buf), Wt, out=out[s:e])

        self.rows.map(block)
        return out

    def _xt_sum(self, fn: Callable[[int, int], np.ndarray]) -> np.ndarray:
        """Sum of per-block ``X_blk^T r_blk`` partials, added in block order."""
        total: np.ndarray = self.rows.map_sum(fn)
        return total

    def xtr(self, P: np.ndarray) -> np.ndarray:
        """``X^T (P - Y)`` (p, K) in float64: the data part of the gradient."""
        R = P - self.Y
        if self.kpass is not None:
            return self.kpass.xtr(R)

        def block(a: int, b: int) -> np.ndarray:
            acc = np.zeros((self.p, R.shape[1]))
            buf = self._sub_buffer()
            for s in self._subs(a, b):
                e = min(b, s + self.sub_rows)
                acc += self.rows64(s, e, buf).T @ R[s:e]
            return acc

        return self._xt_sum(block)

    def fused(self, direction: np.ndarray, base: np.ndarray | None = None) -> Evaluation:
        """One float64 pass over X: ``eta_d = X full(direction)^T`` and, at the linear
        predictor ``base + eta_d`` (``eta_d`` when ``base`` is None), the loss, P and
        ``X^T (P - Y)``, each sub-block's float64 rows reused while still in cache.

        A Newton step needs ``X delta`` for its line search and then the gradient at the
        accepted point: for the full step (almost every step near the optimum) both come
        from one pass instead of two; each float64 pass costs 3-4.5 float32 passes (the
        upcast), so this is where most of a path's passes went (docs/probing.md, the profile);
        the compiled kernels (``kpass``) read each row once instead."""
        if self.kpass is not None:
            return Evaluation(*self.kpass.fused(self.full(direction), base))
        Wt = np.ascontiguousarray(self.full(direction).T)
        eta_d = np.empty((self.n, Wt.shape[1]))
        eta1 = np.empty_like(eta_d)
        P1 = np.empty((self.n, self.Y.shape[1]))

        def block(a: int, b: int) -> tuple[float, np.ndarray]:
            acc = np.zeros((self.p, P1.shape[1]))
            loss = 0.0
            buf = self._sub_buffer()
            for s in self._subs(a, b):
                e = min(b, s + self.sub_rows)
                Xs = self.rows64(s, e, buf)
                np.matmul(Xs, Wt, out=eta_d[s:e])
                eta1[s:e] = eta_d[s:e] if base is None else base[s:e] + eta_d[s:e]
                part, P1[s:e] = self.loss_terms(eta1[s:e], self.Y[s:e])
                loss += part
                acc += Xs.T @ (P1[s:e] - self.Y[s:e])
            return loss, acc

        parts = self.rows.map(block)
        total: np.ndarray = parts[0][1]
        for _, part in parts[1:]:
            total += part
        return Evaluation(eta_d, eta1, float(sum(p[0] for p in parts)), P1, total)

    def loss_terms(self, eta: np.ndarray, Y: np.ndarray | None = None
                   ) -> tuple[float, np.ndarray]:
        """Summed log-loss and P at the linear predictor ``eta`` of the rows whose labels
        are ``Y`` (default: all rows)."""
        Y = self.Y if Y is None else Y
        if self.multi:
            lse = logsumexp(eta, axis=1)
            return float((lse - (eta * Y).sum(1)).sum()), np.exp(eta - lse[:, None])
        e = eta[:, 0]
        return float((np.logaddexp(0.0, e) - Y[:, 0] * e).sum()), expit(eta)

    def penalty(self, theta: np.ndarray) -> float:
        return 0.5 * float((self.pen * theta * theta).sum())

    def grad(self, C: float, theta: np.ndarray, P: np.ndarray) -> np.ndarray:
        """Gradient at (theta, P) (one float64 pass)."""
        return self.gradient(C, theta, self.xtr(P))

    def gradient(self, C: float, theta: np.ndarray, XtR: np.ndarray) -> np.ndarray:
        """Gradient from the data part ``XtR = X^T (P - Y)`` (no pass: it does not depend on
        C, so a path reuses it at the next C)."""
        g: np.ndarray = C * (self.Q.T @ XtR.T) + self.pen * theta
        return g

    def grad_norm(self, C: float, g: np.ndarray) -> float:
        """sklearn's stopping measure: max |gradient| in its own coefficients, over C * n
        (the full gradient lies in the sum-zero subspace, so it is exactly ``Q g``)."""
        return float(np.abs(self.Q @ g).max()) / float(C * self.n)

    def hvp(self, C: float, P: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian-vector product with float32 data passes (it only steers CG; the gradient and
        the stopping test stay float64); the compiled kernels (``kpass``) when the design is
        large."""
        if self.kpass is not None:
            hk = (self.kpass.hvp(v, P, None, self.Q) if self.multi
                  else self.kpass.hvp(self.full(v), P, self._weights(P)))
            Hk: np.ndarray = C * hk + self.pen * v
            return Hk
        X = self.X32
        w32 = self.full(v).astype(np.float32)
        if self.multi:
            Wt = np.ascontiguousarray(w32.T)

            def block(a: int, b: int) -> np.ndarray:
                Xb, Pb = X[a:b], P[a:b]
                pu = Pb * (Xb @ Wt)  # float64 (n_b, K)
                s = pu - Pb * pu.sum(1, keepdims=True)
                part: np.ndarray = Xb.T @ s.astype(np.float32)  # (p, K), the block in cache
                return part

            hv = self.Q.T @ self._xt_sum(block).T
        else:
            w = w32[0]
            D = self._weights(P)

            def block(a: int, b: int) -> np.ndarray:
                Xb = X[a:b]
                part: np.ndarray = (D[a:b] * (Xb @ w)).astype(np.float32) @ Xb
                return part

            hv = self._xt_sum(block)[None, :]
        Hv: np.ndarray = C * hv + self.pen * v
        return Hv

    def _weights(self, P: np.ndarray) -> np.ndarray:
        """Binary Hessian weights p (1 - p), cached for the current P (one per Newton step,
        reused by every CG step)."""
        if self._w_for is not P:
            self._w_for, self._w = P, P[:, 0] * (1.0 - P[:, 0])
        return self._w

    def gram(self, P: np.ndarray, dtype: type = np.float32) -> np.ndarray:
        """Data Hessian ``X^T D X`` at P in ``dtype`` (float32 unless its rounding is too
        coarse for the C at hand, see ``factor``), (K'p, K'p), upper triangle only (the only
        consumer is the upper Cholesky factorisation in ``precond``), accumulated over row
        chunks with no copy of X (:mod:`geneb.probe.solvers.fast_gram`).

        All rows: a Gram estimated from a row subset (tried: 2,048-8,192 of 20,000 rows) made
        CG need 2-8x more steps and the path 1.6-2.9x slower.
        """
        K = self.Kp
        if self.multi:
            PQ = P @ self.Q  # (n, K-1)
            pairs = {(a, b): (P * (self.Q[:, a] * self.Q[:, b])).sum(1) - PQ[:, a] * PQ[:, b]
                     for a in range(K) for b in range(a, K)}
        else:
            pairs = {(0, 0): self._weights(P)}
        rows = self.X32 if dtype == np.float32 or self.X is None else self.X
        return data_hessian(lambda a, b: rows[a:b], self.n, self.p, pairs, K, dtype,
                            self.rows.run, implicit_ones=self.implicit_ones)

    def design_gram(self, dtype: type = np.float32) -> np.ndarray:
        """``X^T X`` (p, p) of the design with its column of ones in ``dtype``, upper
        triangle only (the Kronecker form's A, ``fast_kron``)."""
        rows = self.X32 if dtype == np.float32 or self.X is None else self.X
        sums = None
        if self.kpass is not None and self.implicit_ones:  # float64, one compiled pass
            sums = self.kpass.xtr(np.ones((self.n, 1)))[:-1, 0]  # (the last: the ones' n)
        return design_gram(rows, dtype, self.rows.run, column_sums=sums)

@lru_cache(maxsize=2)
def sum_zero_basis(n_classes: int) -> np.ndarray:
    """Q of ``_Problem`` (read-only), computed once per class count: its QR of a K x K matrix
    takes about a second at K = 1,000, and every fit of a task needs the same Q."""
    centred = np.eye(n_classes) - 1.0 / n_classes
    Q = np.linalg.qr(centred)[0][:, : n_classes - 1]
    Q.setflags(write=False)
    return Q


def intercept_start(y: np.ndarray, n_classes: int) -> np.ndarray:
    """(K', p=1) intercept-only optimum (class log-odds), the start of the C path's first fit;
    zeros when a class is absent (its optimum is not finite)."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    if (counts == 0).any():
        return np.zeros((n_classes if n_classes > 2 else 1, 1))
    if n_classes == 2:
        return np.array([[np.log(counts[1] / counts[0])]])
    logp = np.log(counts / counts.sum())
    centred: np.ndarray = (logp - logp.mean())[:, None]
    return centred


def solve_path(
    Xa64: np.ndarray | None,
    Xa32: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    Cs: Sequence[float],
    *,
    tol: float,
    max_iter: int,
    threads: int | None = None,
    implicit_ones: bool = False,
) -> list[PathFit]:
    """Fit every C in ascending order, warm-starting each from the previous solution.

    ``Xa64``/``Xa32``: (n, p) design (features then a column of ones) in both precisions;
    ``Xa64`` None when it equals ``Xa32`` exactly (float32 features, unstandardised): the
    float64 passes then upcast Xa32's row blocks, with the same bits and half the memory.
    ``implicit_ones``: Xa32 is the (n, p - 1) features alone, the column of ones implicit (no
    copy of X to append it; only where the compiled passes run, ``use_kernels``, and with
    ``Xa64`` None: ``_Problem`` refuses it otherwise).
    Convergence: max |gradient| of sklearn's scaled objective (divided by C * n) <= ``tol``.
    ``threads``: cores for the deterministic parallel steps (row-blocked matrix-vector passes,
    binary Gram); results are bit-identical for any value. None: one thread for the blocked
    passes and the caller's BLAS setting for the Gram.
    """
    return path_from_start(_Problem(Xa64, Xa32, y, n_classes, threads, implicit_ones), y,
                           n_classes, Cs, tol=tol, max_iter=max_iter)


def path_from_start(prob: _Problem, y: np.ndarray, n_classes: int, Cs: Sequence[float], *,
                    tol: float, max_iter: int) -> list[PathFit]:
    """``run_path`` of ``prob`` from the intercept-only optimum (its row blocks' threads
    closed after)."""
    try:
        theta = np.zeros((prob.Kp, prob.p))
        theta[:, -1:] = prob.Q.T @ intercept_start(y, n_classes)
        return run_path(prob, theta, Cs, tol=tol, max_iter=max_iter)
    finally:
        prob.rows.close()
