"""Cholesky factorisation of large preconditioners in place, with BLAS/LAPACK calls that
release the GIL: two threads, the same bits for one and for two.

``M = U^T U`` (upper triangle of a C-ordered float32/float64 array, read and written in place;
the lower triangle is never touched) by a recursive 2 x 2 block algorithm: factor the leading
block, solve the block row (``trsm``), update the trailing block (``syrk``/``gemm``), factor
the trailing block; blocks of at most ``LEAF_SIDE`` are one LAPACK ``potrf``. The block row's
solve is split into two fixed column halves and the trailing update into three fixed products
(two triangles and the rectangle between them, ``trailing_tasks``), handed to ``run(fn,
tasks)`` (the solver's thread pool); each call is single-threaded BLAS whose every output
entry is computed by one call, so the bits never depend on the thread count.

A leaf whose pivot fails can go on with a shift added to the rest of the diagonal
(``resume_shift``: the exact factor of the matrix so shifted, no second factorisation).

The calls are :mod:`geneb.probe.solvers.blas_calls`' (in place, GIL-free). A C-ordered
matrix is its transpose to Fortran, so the upper factor of ``M`` is LAPACK's lower one of the
same bytes.

Measured 2026-12-02 on this machine (float32, two threads; the blocked numpy factorisation of
:func:`geneb.probe.solvers.numeric.cholesky_solver` in brackets, OpenBLAS's own two-thread
``spotrf``, whose bits depend on the thread count, after it): side 4,097: 107 ms (283; 98);
2,561: 33 ms (79-90; 31); 2,050: 29 ms (46; 18); 1,025: 5-8 ms (12; 8). float64: 4,097:
207 ms (OpenBLAS ``dpotrf`` 196).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np

from geneb.probe.solvers.blas_calls import Pointers, add_cross_product, add_gram_upper
from geneb.probe.solvers.blas_calls import char as _char
from geneb.probe.solvers.blas_calls import integer as _int
from geneb.probe.solvers.row_blocks import Runner

#: Blocks of at most this side are factored by one ``potrf`` call (single-threaded, so the
#: recursion stops where its halves' parallel products no longer pay; 256 and 512 measured
#: the same to within 5% at sides 1,025-4,097).
LEAF_SIDE = 512
#: Recursion splits at multiples of this (aligned panels for the BLAS kernels).
SPLIT_ALIGN = 64


class _Resume:
    """The shift a failed leaf adds to the rest of the diagonal (``factor_upper``), and the
    row it was added from (None: not yet)."""

    def __init__(self, shift: float) -> None:
        self.shift = shift
        self.from_row: int | None = None


def factor_upper(M: np.ndarray, run: Runner, resume_shift: float = 0.0) -> int | None:
    """Overwrite the upper triangle of the C-ordered square float32/float64 ``M`` with U,
    ``M = U^T U``; raises ``np.linalg.LinAlgError`` when M is not positive definite.

    With ``resume_shift`` > 0 a leaf whose ``potrf`` finds a pivot that is not positive is
    restored (from a copy taken before its ``potrf``), ``resume_shift`` is added to the
    diagonal from that leaf's first row to the last, and the factorisation goes on: U is
    then the exact factor of ``M + resume_shift * diag(0, ..., 0, 1, ..., 1)`` (a shift on
    a trailing diagonal block adds the same shift to its Schur complement, and the updates
    of the rows not yet factored never read their diagonal), so a preconditioner that only
    needed the shift costs no second factorisation. Only one such shift is made: a leaf
    failing after it raises.

    Parameters
    ----------
    M : ndarray of shape (p, p), C-contiguous, float32 or float64
        Only its upper triangle is read and written.
    run : callable
        ``run(fn, tasks)`` calls ``fn(*task)`` for each task (in any threads).
    resume_shift : float
        The shift of a failed leaf and the rows after it (0: a failed leaf raises).

    Returns
    -------
    int or None
        The row from which ``resume_shift`` was added to the diagonal, None when it was not.
    """
    if M.ndim != 2 or M.shape[0] != M.shape[1] or not M.flags.c_contiguous:
        raise ValueError(f"expected a C-contiguous square matrix, got shape {M.shape}")
    if M.dtype not in (np.float32, np.float64):
        raise ValueError(f"expected float32 or float64, got {M.dtype}")
    if not np.isfinite(np.diag(M)).all():
        raise np.linalg.LinAlgError("Matrix is not positive definite (non-finite diagonal)")
    if not (np.isfinite(resume_shift) and resume_shift >= 0.0):
        raise ValueError(f"expected a finite resume_shift >= 0, got {resume_shift}")
    state = _Resume(resume_shift)
    _factor(Pointers(M), 0, M.shape[0], run, state)
    return state.from_row


def _leaf(c: Pointers, lo: int, hi: int, state: _Resume) -> None:
    """One ``potrf`` of the diagonal block ``lo..hi``; on a failed pivot, once, the block
    restored and ``state.shift`` added to the diagonal from row ``lo`` on (``factor_upper``),
    then ``potrf`` again."""
    m = hi - lo
    kept = c.M[lo:hi, lo:hi].copy() if state.shift > 0.0 and state.from_row is None else None
    for _ in range(2):
        info = ctypes.c_int(0)
        c.call("potrf", _char("L"), _int(m), c.at(lo, lo), _int(c.ld), ctypes.byref(info))
        if info.value == 0:
            return
        if kept is None:
            break
        c.M[lo:hi, lo:hi] = kept
        rest = np.arange(lo, len(c.M))
        c.M[rest, rest] += c.M.dtype.type(state.shift)
        state.from_row, kept = lo, None
    raise np.linalg.LinAlgError(
        f"Matrix is not positive definite (potrf info {info.value} at row {lo})")


def _factor(c: Pointers, lo: int, hi: int, run: Runner, state: _Resume) -> None:
    """Factor the diagonal block ``lo..hi`` whose earlier updates are all applied."""
    m = hi - lo
    if m <= LEAF_SIDE:
        _leaf(c, lo, hi, state)
        return
    s = lo + max(SPLIT_ALIGN, (m // 2) // SPLIT_ALIGN * SPLIT_ALIGN)
    _factor(c, lo, s, run, state)
    k = s - lo

    def block_row(c0: int, c1: int) -> None:
        # U_11^T U_12 = M_12; to Fortran: X U_11 = M_12^T for rows c0..c1 of M_12^T
        c.call("trsm", _char("R"), _char("L"), _char("T"), _char("N"), _int(c1 - c0),
               _int(k), ctypes.byref(c.one), c.at(lo, lo), _int(c.ld), c.at(lo, c0),
               _int(c.ld))

    mid = s + (hi - s) // 2
    run(block_row, [(s, mid), (mid, hi)])

    def trailing(kind: str, a: int, b: int, e: int) -> None:
        # M_22 -= U_12^T U_12, columns a..b (triangle) or the rectangle rows a..b x cols b..e
        if kind == "triangle":
            add_gram_upper(c, a, c, lo, a, k, b - a, alpha=-1.0)
        else:
            add_cross_product(c, a, b, c, lo, a, c, lo, b, k, b - a, e - b, alpha=-1.0)

    run(trailing, trailing_tasks(s, hi))
    _factor(c, s, hi, run, state)


def trailing_tasks(lo: int, hi: int) -> list[tuple[str, int, int, int]]:
    """The trailing update of columns ``lo..hi`` as three products fixed by the shape: the
    triangle of ``lo..t``, the rectangle rows ``lo..t`` x columns ``t..hi``, the triangle of
    ``t..hi``; ``t = lo + (hi - lo) / sqrt(2)`` gives the first task (one thread's run of
    two) the same multiply-adds as the other two: (t - lo)^2 = (hi - lo)^2 / 2."""
    t = lo + int(round((hi - lo) / np.sqrt(2.0)))
    return [("triangle", lo, t, t), ("rectangle", lo, t, hi), ("triangle", t, hi, hi)]


def inverted_diagonal_blocks(U: np.ndarray, blocks: Sequence[tuple[int, int]], run: Runner
                             ) -> list[np.ndarray]:
    """The inverses of the upper triangular diagonal blocks ``U[a:b, a:b]`` (upper
    triangular, C-ordered), one LAPACK ``trtri`` each, spread over ``run``'s threads: a
    sixth of the multiply-adds of ``np.linalg.inv`` (16 blocks of 256 at side 4,097: 45 ms
    with ``np.linalg.inv``, one thread)."""

    def invert(a: int, b: int) -> np.ndarray:
        B = np.triu(U[a:b, a:b])  # a C-ordered copy; to Fortran its lower triangle
        if b <= a:
            return B
        c = Pointers(B)
        info = ctypes.c_int(0)
        c.call("trtri", _char("L"), _char("N"), _int(b - a), c.at(0, 0), _int(b - a),
               ctypes.byref(info))
        if info.value != 0:
            raise np.linalg.LinAlgError(f"singular factor (trtri info {info.value})")
        return B

    return run(invert, list(blocks))
