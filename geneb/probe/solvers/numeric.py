"""The few numerical kernels the CPU probe solvers need, in plain numpy.

Why not scipy: importing any of ``scipy.special`` or ``scipy.linalg`` costs ~0.13 s of start-up
(its array-API layer pulls in ``numpy.f2py`` and ``numpy.polynomial``), a tenth of a whole
``geneb probe`` run on a 6,000-row task. These are the numerically stable textbook forms; the
tests hold them to scipy's. The one exception is the factorisation of preconditioners of side
``LAPACK_FROM`` or more (:mod:`geneb.probe.solvers.lapack_factor`), where the import is paid
back within one factorisation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from geneb.probe.solvers.row_blocks import Runner

#: Block size of the blocked triangular solves: the diagonal blocks are inverted once per
#: factorisation, every solve is then a chain of small matrix-vector products.
TRI_BLOCK = 128
#: From this side on the blocks are twice as large (measured 2026-12-02, two threads, float32:
#: 4,097: 283 ms at 256 against 350 ms at 128; 2,561: 79 ms at 128, 90 ms at 256).
TRI_BLOCK_LARGE_FROM = 3072
#: From this side on ``cholesky_solver`` factors through LAPACK (``lapack_factor``: 2.6x faster
#: at side 4,097, 1.6-2.7x at 1,025-2,561, importing scipy's ``cython_blas`` once per process
#: for ~0.13 s); below it, the blocked numpy factorisation. Lowered from 1,024 (2026-12-02,
#: float32, two threads, blocked -> LAPACK: side 513: 2.5 -> 0.9 ms; 769: 4.6 -> 1.8 ms;
#: 1,025: 9.2 -> 5.4 ms; 257: 1.1 -> 0.3 ms): a C path factors 5-6 times, so the import is
#: repaid within ~10 paths of width 768 in a process, ~16 of width 512; below 512 the
#: saving (< 1 ms per factorisation) would take ~30 paths.
LAPACK_FROM = 512
#: Blocks of at most this side are inverted by ``np.linalg.inv`` in
#: ``upper_triangular_inverse`` (16 and 32 measured the same at sides 128 and 256, 64 ~30%
#: slower).
INVERSE_LEAF = 32


def expit(x: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Logistic sigmoid ``1 / (1 + exp(-x))`` without overflow for large |x|."""
    x64 = np.asarray(x, dtype=np.float64)
    e: npt.NDArray[np.float64] = np.exp(-np.abs(x64))
    out: npt.NDArray[np.float64] = np.where(x64 >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return out


def logsumexp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """``log(sum(exp(x)))`` along ``axis``, shifted by the maximum."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out: np.ndarray = np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))
    return out


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the maximum."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    out: np.ndarray = e / np.sum(e, axis=axis, keepdims=True)
    return out


def upper_panels(lo: int, hi: int) -> list[tuple[int, int]]:
    """Two column panels ``[lo, s)``, ``[s, hi)`` of the upper triangle of rows/columns
    ``lo..hi``, each computed as rows ``lo..c1`` x columns ``c0..c1``, with equal work for two
    threads; fixed by the shape alone (never by a thread count).

    The first panel is ``A^T A`` of one buffer, which numpy computes as a SYRK (half the
    flops of a GEMM); the second is a GEMM of n (n - s) outputs. Equal work: s^2 / 2 =
    n (n - s), s = (sqrt(3) - 1) n = 0.732 n. Measured on 6,478 x 1,025 (Gram, two threads):
    39 ms at 0.74, 57 ms at the equal-GEMM-area split 0.62, 42 ms at the equal-triangle 0.71.
    """
    n = hi - lo
    if n <= 0:
        return []
    s = lo + int(round((np.sqrt(3.0) - 1.0) * n))
    return [(c0, c1) for c0, c1 in ((lo, s), (s, hi)) if c1 > c0]


def _serial(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]) -> list[Any]:
    return [fn(*t) for t in tasks]


def cholesky_solver(M: np.ndarray, run: Runner = _serial,
                    block: int | None = None, resume_shift: float = 0.0
                    ) -> Callable[[np.ndarray], np.ndarray]:
    """``r -> M^{-1} r`` for a symmetric positive definite ``M`` of which only the upper
    triangle is read (callers may leave the lower one unfilled; M is overwritten).
    ``resume_shift`` > 0: where a pivot is not positive, that shift is added to the
    diagonal from the failing block on and the factorisation goes on (once; see
    :func:`geneb.probe.solvers.lapack_factor.factor_upper`): the solve is then that of
    ``M + resume_shift * diag(0, ..., 0, 1, ..., 1)``.

    ``M = U^T U`` is factored through LAPACK from side ``LAPACK_FROM`` on
    (:func:`geneb.probe.solvers.lapack_factor.factor_upper`), below it by a blocked
    right-looking Cholesky over fixed ``block``-sized blocks (``_factor_blocked``); ``run(fn,
    tasks)`` spreads the products of either over threads (e.g. a thread pool; the tasks never
    depend on the thread count, so neither do the bits). Each solve is a forward and a
    backward blocked substitution that multiplies by the inverted diagonal blocks: as many
    bytes of U as LAPACK's ``potrs`` reads, 2.5x faster here. Raises
    ``np.linalg.LinAlgError`` when M is not positive definite.
    """
    p = M.shape[0]  # float32 or float64: the factor and the solves keep M's dtype
    if block is None:
        block = 2 * TRI_BLOCK if p >= TRI_BLOCK_LARGE_FROM else TRI_BLOCK
    edges = list(range(0, p, block)) + [p]
    blocks = list(zip(edges[:-1], edges[1:], strict=True))
    if p >= LAPACK_FROM:
        from geneb.probe.solvers.lapack_factor import factor_upper, inverted_diagonal_blocks

        M = np.ascontiguousarray(M)
        factor_upper(M, run, resume_shift)
        inv = inverted_diagonal_blocks(M, blocks, run)
    else:
        inv = _factor_blocked(M, blocks, run, resume_shift)
    U = M  # views below, no copies: BLAS reads transposed/strided operands directly
    inv_t = [m.T for m in inv]
    cols = [U[:a, a:b].T for a, b in blocks]  # above each diagonal block, transposed
    right = [U[a:b, b:] for a, b in blocks]  # right of each diagonal block

    def solve(r: np.ndarray) -> np.ndarray:
        y = np.empty(p, dtype=U.dtype)  # U^T y = r
        for (a, b), Uit, Ct in zip(blocks, inv_t, cols, strict=True):
            y[a:b] = Uit @ (r[a:b] - Ct @ y[:a]) if a else Uit @ r[a:b]
        x = np.empty(p, dtype=U.dtype)  # U x = y
        for (a, b), Ui, R in zip(reversed(blocks), reversed(inv), reversed(right),
                                 strict=True):
            x[a:b] = Ui @ (y[a:b] - R @ x[b:]) if b < p else Ui @ y[a:b]
        return x

    return solve


def _factor_blocked(M: np.ndarray, blocks: list[tuple[int, int]], run: Runner,
                    resume_shift: float = 0.0) -> list[np.ndarray]:
    """Blocked right-looking Cholesky of M's upper triangle in place over ``blocks``; returns
    the inverted diagonal blocks. Each diagonal block is factored (numpy's LAPACK) and
    inverted (``upper_triangular_inverse``), the block row is formed with that inverse, and
    the trailing update is split into the column panels of ``upper_panels``; a diagonal
    block that does not factor gets ``resume_shift`` (> 0) added to the diagonal from its
    first row on, once (``cholesky_solver``). Measured on
    1,025 x 1,025, one thread: ~12 ms like scipy's ``cho_factor``, where
    ``np.linalg.cholesky`` takes 24 ms; 257 x 257 (2026-12-02): 1.06 ms, 1.98 ms with the
    blocks inverted by ``np.linalg.inv``."""
    p = M.shape[0]
    inv: list[np.ndarray] = []
    shift = resume_shift
    for a, b in blocks:
        try:
            Ukk = np.linalg.cholesky(M[a:b, a:b], upper=True)
        except np.linalg.LinAlgError:
            if not shift > 0.0:
                raise
            rest = np.arange(a, p)  # M is not written by the failed attempt
            M[rest, rest] += M.dtype.type(shift)
            shift = 0.0
            Ukk = np.linalg.cholesky(M[a:b, a:b], upper=True)
        Ui = upper_triangular_inverse(Ukk)
        inv.append(Ui)
        M[a:b, a:b] = Ukk
        if b == p:
            break
        M[a:b, b:] = Ui.T @ M[a:b, b:]  # U_kk^T U_kj = M_kj
        Uk = M[a:b]

        def update(c0: int, c1: int, b: int = b, Uk: np.ndarray = Uk) -> None:
            # upper part of the trailing column panel c0..c1: rows b..c1
            M[b:c1, c0:c1] -= Uk[:, b:c1].T @ Uk[:, c0:c1]

        run(update, upper_panels(b, p))
    return inv


def upper_triangular_inverse(U: np.ndarray) -> np.ndarray:
    """The inverse of the upper triangular U (square, invertible), by halves:
    ``[[A, B], [0, C]]^-1 = [[A^-1, -A^-1 B C^-1], [0, C^-1]]``, down to blocks of at most
    ``INVERSE_LEAF`` inverted by numpy (LAPACK's LU). Measured 2026-12-02 (one thread,
    float64): side 128: 0.23 ms against 0.63 ms for ``np.linalg.inv``; 256: 0.77 against
    3.5 ms; the same accuracy (U^-1 U within 1.3e-16 of I, both)."""
    m = len(U)
    if m <= INVERSE_LEAF:
        inv: np.ndarray = np.linalg.inv(U)
        return inv
    h = m // 2
    Ai, Ci = upper_triangular_inverse(U[:h, :h]), upper_triangular_inverse(U[h:, h:])
    out = np.zeros_like(U)
    out[:h, :h], out[h:, h:] = Ai, Ci
    out[:h, h:] = -(Ai @ U[:h, h:]) @ Ci
    return out


#: Most conjugate-gradient steps of one Newton system.
MAX_CG = 200


def pcg(hvp: Callable[[np.ndarray], np.ndarray], g: np.ndarray,
        precond: Callable[[np.ndarray], np.ndarray], rtol: float) -> tuple[np.ndarray, int]:
    """Preconditioned CG for ``H x = -g`` (``hvp(v) = H v``, v shaped like g); returns x and
    the number of CG steps."""
    shape = g.shape
    x = np.zeros(g.size)
    r = -g.ravel()
    z = precond(r)
    d = z.copy()
    rz = r @ z
    target = rtol * np.linalg.norm(r)
    it = 0
    for it in range(1, MAX_CG + 1):  # noqa: B007 (it is returned)
        Hd = hvp(d.reshape(shape)).ravel()
        dHd = d @ Hd
        if dHd <= 0:
            break
        a = rz / dHd
        x += a * d
        r -= a * Hd
        if np.linalg.norm(r) <= target:
            break
        z = precond(r)
        rz_new = r @ z
        d = z + (rz_new / rz) * d
        rz = rz_new
    return x.reshape(shape), it
