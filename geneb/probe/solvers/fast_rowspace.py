"""The C path of a full-data fit with fewer train rows than features, solved in their row space.

With an L2 penalty every optimum's weights lie in the span of the train rows (the gradient
``C X^T R + W`` vanishes there), so the fit of n rows and d > n features is the fit of the
reduced design ``Z = X V`` (n x r, r <= n) for an orthonormal basis V (d x r) of that span,
``W = Theta V^T``: the same objective, a Hessian of side r + 1 instead of d + 1. The basis is
never formed: a Cholesky factorisation of the kernel ``K = X X^T`` (LAPACK ``dpotrf``; with
complete pivoting, ``dpstrf`` stopped at rank r, when a pivot falls below the tolerance)
gives ``P^T K P = L L^T``; with ``X_1`` the r pivot rows and ``L_11`` their r x r block,
``V = X_1^T L_11^-T`` is orthonormal and ``X V = P L``, so ``Z = P L``. Rows that the kept
ones span to within ``RANK_RTOL`` of the kernel's largest entry (exact ties, the zero-mean
dependency of standardised columns) are left out of V.

Nothing is taken on trust: the path's stopping test is evaluated in the original
coefficients (``V g = X_1^T (L_11^-T g)``, in float64 over the original rows), and every C's
solution is checked once more with the exact gradient of the original problem over the
original rows. A kernel whose rounding moves an optimum past the tolerance makes
``solve_path_row_space`` return None, and the caller solves the primal path instead.

Why (measured 2026-12-03, realistic embeddings at GENEB's median MCC, two cores): the primal
path of 1,000 x 4,096 binary took 2.0 s, 1.5 s of it in five factorisations of side 4,097
and their triangular solves; a 3-class fit of that shape (8,194 coefficients, beyond a
Hessian) went to L-BFGS: 375 s for five Cs, 400-7,859 iterations each. The first row-space
reduction (a centred kernel's ``eigh`` and an explicit float32 basis) cost 0.29 s of the
0.57 s path at 1,000 x 2,560; the Cholesky factorisation does it in a tenth (docs/probing.md,
the ninth round).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from geneb.probe.solvers.base import second_order
from geneb.probe.solvers.blas_calls import Pointers, add_cross_product, add_gram_upper
from geneb.probe.solvers.fast_full import _Problem, path_from_start
from geneb.probe.solvers.fast_kernels import available
from geneb.probe.solvers.fast_passes import KernelPasses, use_kernels
from geneb.probe.solvers.fast_path import PathFit
from geneb.probe.solvers.numeric import expit, softmax, upper_panels
from geneb.probe.solvers.row_blocks import RowBlocks

#: Full-data fits with at most this fraction of rows per feature (n <= fraction x d) are solved
#: in the row space (``use_row_space``). Measured 2026-12-03 (pivoted Cholesky), five-C paths of
#: realistic binary embeddings, primal -> row space (two runs each): 1,000 x 2,560 (n/d 0.39)
#: 0.87, 0.76 -> 0.31, 0.29 s; 2,000 x 4,096 (0.49) 2.19, 2.27 -> 1.03, 1.05 s; 2,200 x 4,096
#: (0.54) 2.13 -> 1.79, 1.30 s; 600 x 1,024 (0.59) 0.095, 0.085 -> 0.060, 0.063 s; 2,500 x 4,096
#: (0.61) 2.39, 2.50 -> 2.63, 2.17 s; 2,000 x 2,560 (0.78) 0.84, 0.73 -> 0.91, 0.90 s; 1,000 x
#: 1,024 (0.98) 0.18, 0.13 -> 0.21, 0.22 s (the n x n kernel costs more than the side saves).
ROW_SPACE_MAX_FRACTION = 0.55
#: The kernel's factorisation stops where every remaining pivot (a row's squared distance
#: from the span of the rows kept so far) is at most this fraction of the kernel's largest
#: diagonal entry (or n eps, when larger: LAPACK's own default): those rows lie within 1e-6
#: of the largest row norm of the span (exact ties, the zero column means of standardised
#: features).
RANK_RTOL = 1e-12
#: The reduced design is passed over with the compiled kernels from this many values on (the
#: primal one's ``KERNEL_MIN_CELLS`` is lower; at 1,000 x 2,560 binary its paths took 0.19
#: s against 0.17 s, 2026-12-07); below it the design is the kernel's own Fortran buffer.
REDUCED_KERNEL_MIN_CELLS = 2**22
#: float32 features are upcast to float64 this many bytes of rows at a time (``_Rows``)
UPCAST_BYTES = 4 * 2**20
#: float32 features' columns upcast at a time for the kernel (``_kernel32``)
KERNEL_SLAB = 256


def use_row_space(n: int, d: int, weight_rows: int = 1) -> bool:
    """Whether a full-data fit of ``n`` rows, ``d`` features and ``weight_rows`` weight vectors
    is solved in its row space: its reduced problem has a Hessian (``second_order``) and
    either n <= ``ROW_SPACE_MAX_FRACTION`` d or n < d where the primal problem has none
    (it would go to L-BFGS: 1,000 x 4,096 x 3 classes 375 s there, 1.1 s here)."""
    if not second_order(n, weight_rows):
        return False
    return n <= ROW_SPACE_MAX_FRACTION * d or (n < d and not second_order(d, weight_rows))


class _RowSpaceProblem(_Problem):
    """The reduced problem whose stopping test is sklearn's in the original coefficients."""

    kernel_min_cells = REDUCED_KERNEL_MIN_CELLS

    span: RowSpan
    features: _Rows  # the original rows

    def grad_norm(self, C: float, g: np.ndarray) -> float:
        """max |gradient| of the original weights and intercepts, over C * n: the weights'
        ``V g_w = X_1^T (L_11^-T g_w)``, summed in float64 over the original rows."""
        full = self.Q @ g
        r = self.span.rank
        H = self.span.rows_of(full[:, :r])  # (n, K): zero outside the pivot rows
        g_w = self.features.t_times(H)
        return max(float(np.abs(g_w).max()), float(np.abs(full[:, r]).max())) / float(C * self.n)


class RowSpan:
    """The row span of X (n, d) from a Cholesky factorisation of ``X X^T`` (``_factor``).

    Attributes
    ----------
    design : ndarray of shape (n, r + 1)
        The reduced design: ``X V`` (``P L``), rows in X's order, then the intercept's ones.
    L11 : ndarray of shape (r, r), Fortran order
        Lower triangular: the pivot rows' block of L (``design[kept, :r]``); in Fortran
        order, so LAPACK's triangular solves read it without a copy.
    kept : ndarray of shape (r,), int
        X's rows spanning the basis (``X_1 = X[kept]``), in pivot order.
    """

    def __init__(self, design: np.ndarray, L11: np.ndarray, kept: np.ndarray) -> None:
        self.design, self.L11, self.kept = design, L11, kept
        self.rank = len(kept)

    def rows_of(self, A: np.ndarray) -> np.ndarray:
        """``(n, K)`` row weights H with ``X^T H = V A^T`` for reduced coefficients A (K, r):
        ``L_11^-T A^T`` on the pivot rows, zero elsewhere."""
        from scipy.linalg import solve_triangular

        H = np.zeros((len(self.design), A.shape[0]))
        H[self.kept] = solve_triangular(self.L11, A.T, lower=True, trans="T",
                                         check_finite=False)
        return H


class _Rows:
    """The original rows X (n, d) in float64 products over fixed row blocks (``rows``).

    With the compiled kernels (``fast_passes.KernelPasses``: each product reads every row
    once, float32 values widened exactly, summed in float64); without numba, float64 rows as
    they are and float32 ones (exact values: the probe's unstandardised features) upcast
    ``UPCAST_BYTES`` of rows at a time, never as a whole (a float64 copy would be twice the
    features' size). Measured 2026-12-07, the stopping test's ``X^T h`` of 1,000 x 2,560
    float32 rows: 1.4 ms upcast, 0.3 ms compiled."""

    def __init__(self, X: np.ndarray, rows: RowBlocks, Y: np.ndarray, multi: bool) -> None:
        self.X, self.rows = X, rows
        self.step = len(X) if X.dtype == np.float64 else max(1, UPCAST_BYTES // (8 * X.shape[1]))
        compiled = available() and X.flags.c_contiguous
        self.passes = KernelPasses(X, Y, multi, rows) if compiled else None

    def _subs(self, a: int, b: int) -> Iterator[tuple[int, int, np.ndarray]]:
        for s in range(a, b, self.step):
            e = min(b, s + self.step)
            yield s, e, self.X[s:e].astype(np.float64, copy=False)

    def t_times(self, H: np.ndarray) -> np.ndarray:
        """``X^T H`` as (K, d) float64 (``H^T X``) for H (n, K) float64 (K weight rows: 1
        binary), block sums added in block order."""
        if self.passes is not None:
            xtr: np.ndarray = self.passes.xtr(H).T
            return xtr
        K, d = H.shape[1], self.X.shape[1]

        def block(a: int, b: int) -> np.ndarray:
            out = np.zeros((K, d))
            for s, e, rows in self._subs(a, b):
                # (K, rows) @ (rows, d): BLAS reads the rows in place (X.T @ H would copy)
                out += H[s:e].T @ rows
            return out

        return self.rows.map_sum(block)

    def times(self, Wt: np.ndarray) -> np.ndarray:
        """``X Wt`` (n, K) float64 for Wt (d, K) float64."""
        if self.passes is not None:
            return self.passes.eta(Wt.T)
        out = np.empty((len(self.X), Wt.shape[1]))

        def block(a: int, b: int) -> None:
            for s, e, rows in self._subs(a, b):
                np.matmul(rows, Wt, out=out[s:e])

        self.rows.map(block)
        return out


def row_span(X: np.ndarray, threads: int | None = None) -> RowSpan | None:
    """The row span of X (n, d) float64 (``RowSpan``), or None when every row is zero.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64 or float32
        The rows; read, not written.
    threads : int or None
        Threads over the kernel's two upper-triangle panels (fixed by the shape: the bits
        do not depend on it).

    Returns
    -------
    RowSpan or None
    """
    n = len(X)
    # one buffer for the kernel and then the reduced design (``_design``): L in place
    buf = np.empty(n * (n + 1))
    K = buf[:n * n].reshape(n, n)
    _kernel(X, threads, K)
    top = float(np.diag(K).max()) if n else 0.0
    if not top > 0.0:
        return None
    tol = max(RANK_RTOL, n * float(np.finfo(np.float64).eps)) * top
    L, order = _factor(K, tol)
    return _design(L, order, buf)


def _design(L: np.ndarray, order: np.ndarray, buf: np.ndarray) -> RowSpan:
    """The ``RowSpan`` of the factor L (n, r) in pivot ``order`` (``_factor``), L in ``buf``.

    Unpivoted and of full rank, L is the Fortran-ordered (n, n) start of ``buf`` (the
    kernel's buffer): the design is ``buf`` as a Fortran (n, n + 1) array, the intercept's
    ones its last column, and no n x n matrix is copied (one float64 n x n fewer held: 0.6
    and 0.8 of the embeddings' bytes at 1,000 x 2,560 and 2,000 x 4,096). Else (compiled
    passes, which read C-ordered rows, or L pivoted) a C-ordered copy, rows in X's order."""
    n, rank = L.shape
    unpivoted = rank == n and bool((order == np.arange(n)).all())
    if (unpivoted and not use_kernels(n, n + 1, REDUCED_KERNEL_MIN_CELLS)
            and L.flags.f_contiguous and L.ctypes.data == buf.ctypes.data):
        design = buf.reshape((n, n + 1), order="F")
        design[:, n] = 1.0
        return RowSpan(design, design[:, :n], order.copy())
    design = np.empty((n, rank + 1))
    design[order, :rank] = L
    design[:, rank] = 1.0
    L11 = L if unpivoted else np.asfortranarray(L[:rank])
    return RowSpan(design, L11, order[:rank].copy())


def _kernel(X: np.ndarray, threads: int | None, K: np.ndarray) -> None:
    """``X X^T`` (n, n) float64 into K (C-ordered), both triangles: two upper panels over
    threads, then the lower-left block mirrored (float32 X: ``_kernel32``)."""
    if X.dtype != np.float64:
        _kernel32(X, threads, K)
        return
    n = len(X)
    rows = RowBlocks(0, threads or 1)  # only its thread pool: the tasks are kernel panels

    def panel(c0: int, c1: int) -> None:
        np.matmul(X[:c1], X[c0:c1].T, out=K[:c1, c0:c1])  # no temporary

    panels = upper_panels(0, n)
    try:
        rows.run(panel, panels)
    finally:
        rows.close()
    s = panels[0][1] if panels else 0  # rows s.. of the first s columns: not computed
    K[s:, :s] = K[:s, s:].T
    _mirror_diagonal_block(K, s, n)  # the second panel's GEMM: not bitwise symmetric


def _kernel32(X: np.ndarray, threads: int | None, K: np.ndarray) -> None:
    """``X X^T`` (n, n) in float64 of float32 X, ``KERNEL_SLAB`` columns upcast at a time
    (transposed, so each slab is one SYRK and one GEMM into K's two upper panels, over
    threads), then both lower parts mirrored."""
    n, d = X.shape
    K.fill(0.0)
    Kp = Pointers(K)
    panels = upper_panels(0, n)
    rows = RowBlocks(0, threads or 1)  # only its thread pool: the tasks are kernel panels
    try:
        for c0 in range(0, d, KERNEL_SLAB):
            T = np.ascontiguousarray(X[:, c0:c0 + KERNEL_SLAB].T, dtype=np.float64)  # (w, n)
            Tp, w = Pointers(T), len(T)

            def panel(p0: int, p1: int, Tp: Pointers = Tp, w: int = w) -> None:
                if p0 == 0:  # K[:p1, :p1] upper triangle += T[:, :p1]^T T[:, :p1]
                    add_gram_upper(Kp, 0, Tp, 0, 0, w, p1)
                else:  # K[:p1, p0:p1] += T[:, :p1]^T T[:, p0:p1]
                    add_cross_product(Kp, 0, p0, Tp, 0, 0, Tp, 0, p0, w, p1, p1 - p0)

            rows.run(panel, panels)
    finally:
        rows.close()
    s = panels[0][1] if panels else 0
    _mirror_diagonal_block(K, 0, s)  # the first panel's SYRK wrote its upper triangle only
    K[s:, :s] = K[:s, s:].T
    _mirror_diagonal_block(K, s, n)


def _mirror_diagonal_block(K: np.ndarray, a: int, b: int) -> None:
    """``K[a:b, a:b]``'s strict lower triangle from its upper one, in place: a GEMM's
    ``(i, j)`` and ``(j, i)`` may differ in their last bits (OpenBLAS' edge kernels, which
    differ by CPU), and the factorisations read one triangle or the other."""
    for i in range(a + 1, b):
        K[i, a:i] = K[a:i, i]


def _factor(K: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """``(L, order)`` with ``K[order][:, order] = L L^T`` to within ``tol`` on the remaining
    pivots, L (n, r) lower trapezoidal in pivot order; K (both triangles) is overwritten.

    An unpivoted Cholesky first (LAPACK ``dpotrf``, several times faster than ``dpstrf``:
    0.18 s of pivoting at 2,000 rows), kept when every pivot exceeds ``tol`` (the test
    ``dpstrf`` stops at: full rank either way); it writes K's upper triangle only (in C
    order) and the diagonal (kept), and the untouched lower one is the kernel again for
    ``dpstrf`` when a pivot is too small (ties, standardised columns)."""
    from scipy.linalg.lapack import dpotrf, dpstrf

    n = len(K)
    # K.T is K in Fortran order (no copy): its Fortran lower triangle is K's upper one
    diagonal = np.diag(K).copy()  # shared by both triangles: dpotrf overwrites it
    c, info = dpotrf(K.T, lower=1, clean=0, overwrite_a=1)
    if info == 0 and float(np.diag(c).min()) ** 2 > tol:
        for j in range(n):  # clear c's strict upper triangle (a row of K each: contiguous)
            c[:j, j] = 0.0
        return c, np.arange(n)
    # P^T K P = U^T U from K's lower triangle (C order), which dpotrf did not write
    K[np.diag_indices(n)] = diagonal
    c, piv, rank, info = dpstrf(K.T, tol=tol, lower=0, overwrite_a=1)
    if info < 0:
        raise ValueError(f"dpstrf: argument {-info} was invalid")
    for j in range(rank):  # clear U's strict lower triangle
        c[j + 1:rank, j] = 0.0
    return c[:rank].T, piv - 1


def solve_path_row_space(X: np.ndarray, y: np.ndarray, n_classes: int, Cs: Sequence[float],
                         *, tol: float, max_iter: int, threads: int | None = None
                         ) -> list[PathFit] | None:
    """Every C of ``Cs`` (ascending) for the features ``X`` (n, d) float64, in the row space.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64 or float32
        The train features (standardised when the probe standardises), without the column of
        ones; read, not written. float32 features are exact values: every product with them
        is float64 (upcast a few rows or columns at a time, ``_Rows``, ``_kernel32``).
    y : ndarray of shape (n,), int
        Class ids.
    n_classes : int
        Number of classes (2: one weight row).
    Cs : sequence of float
        Inverse regularisation strengths, solved in ascending order with warm starts.
    tol, max_iter : float, int
        sklearn's stopping test (max |gradient| / (C n)) and the Newton iterations per C.
    threads : int or None
        Cores of the kernel and of the path's row-blocked passes (the bits do not depend on
        it).

    Returns
    -------
    list of PathFit or None
        One per C with coefficients (K', d + 1) in the original features (intercept last),
        their ``grad_norm`` the exact original gradient's; None when every row is zero or an
        exact check fails (solve the primal path instead).
    """
    span = row_span(X, threads)
    if span is None:
        return None
    r, Za = span.rank, span.design
    prob = _RowSpaceProblem(Za, np.ascontiguousarray(Za, dtype=np.float32), y, n_classes,
                            threads)
    blocks = RowBlocks(len(X), threads or 1)
    prob.span, prob.features = span, _Rows(X, blocks, prob.Y, prob.multi)
    try:
        path = path_from_start(prob, y, n_classes, Cs, tol=tol, max_iter=max_iter)
        out = []
        for pf in path:
            W = prob.features.t_times(span.rows_of(pf.theta[:, :r]))  # V a: original weights
            gnorm = _exact_grad_norm(prob.features, y, n_classes, W, pf.theta[:, r], pf.C)
            if pf.converged and not gnorm <= tol:
                return None
            out.append(PathFit(C=pf.C, theta=np.hstack([W, pf.theta[:, r:]]),
                               n_iter=pf.n_iter, converged=gnorm <= tol, grad_norm=gnorm,
                               seconds=pf.seconds))
        return out
    finally:
        blocks.close()


def _exact_grad_norm(X: _Rows, y: np.ndarray, n_classes: int, W: np.ndarray,
                     b: np.ndarray, C: float) -> float:
    """sklearn's stopping measure of the original problem at weights W (K', d) and
    intercepts b, over the original rows."""
    eta = X.times(np.ascontiguousarray(W.T)) + b
    if n_classes > 2:
        R = softmax(eta, axis=1)
        R[np.arange(len(y)), y] -= 1.0
    else:
        R = expit(eta) - y[:, None]
    g_b = C * R.sum(axis=0)
    g_w = C * X.t_times(R) + W
    return max(float(np.abs(g_w).max()), float(np.abs(g_b).max())) / float(C * len(y))
