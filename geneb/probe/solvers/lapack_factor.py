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

Why not scipy's ``scipy.linalg.lapack``/``blas`` functions: their f2py wrappers hold the GIL
(two ``strsm`` in two threads took 86 ms against 85 ms one after the other) and copy
non-contiguous blocks. The routines are those scipy exports for Cython
(``scipy.linalg.cython_blas``/``cython_lapack``, the reference Fortran interface: every
argument by pointer), called through ``ctypes``, which releases the GIL. A C-ordered matrix is
its transpose to Fortran, so the upper factor of ``M`` is LAPACK's lower one of the same bytes.

Measured 2026-12-02 on this machine (float32, two threads; the blocked numpy factorisation of
:func:`geneb.probe.solvers.numeric.cholesky_solver` in brackets, OpenBLAS's own two-thread
``spotrf``, whose bits depend on the thread count, after it): side 4,097: 107 ms (283; 98);
2,561: 33 ms (79-90; 31); 2,050: 29 ms (46; 18); 1,025: 5-8 ms (12; 8). float64: 4,097:
207 ms (OpenBLAS ``dpotrf`` 196).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

#: Blocks of at most this side are factored by one ``potrf`` call (single-threaded, so the
#: recursion stops where its halves' parallel products no longer pay; 256 and 512 measured
#: the same to within 5% at sides 1,025-4,097).
LEAF_SIDE = 512
#: Recursion splits at multiples of this (aligned panels for the BLAS kernels).
SPLIT_ALIGN = 64

Runner = Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], list[Any]]

_P = ctypes.c_void_p
#: Argument counts of the routines used (all pointers, Fortran interface).
_ARITY = {"potrf": 5, "trtri": 6, "trsm": 11, "syrk": 10, "gemm": 13}


@cache
def _routine(name: str) -> Any:
    """The ctypes function of ``name`` (e.g. ``spotrf``) from scipy's Cython capsules."""
    if name.endswith(("potrf", "trtri")):
        import scipy.linalg.cython_lapack as module
    else:
        import scipy.linalg.cython_blas as module
    capsule = module.__pyx_capi__[name]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))
    return ctypes.CFUNCTYPE(None, *([_P] * _ARITY[name[1:]]))(address)


class _Calls:
    """Pointer arguments into one C-ordered square matrix, and the routines of its dtype."""

    def __init__(self, M: np.ndarray) -> None:
        self.M = M  # keeps the buffer alive while pointers into it are in use
        self.p = M.shape[0]
        self.item = M.itemsize
        self.base = M.ctypes.data
        self.prefix = "s" if M.dtype == np.float32 else "d"
        scalar = ctypes.c_float if M.dtype == np.float32 else ctypes.c_double
        self.one, self.minus_one = scalar(1.0), scalar(-1.0)

    def at(self, row: int, col: int) -> ctypes.c_void_p:
        """Address of ``M[row, col]`` (Fortran sees column ``row``, row ``col``)."""
        return ctypes.c_void_p(self.base + (row * self.p + col) * self.item)

    def call(self, name: str, *args: Any) -> None:
        _routine(self.prefix + name)(*args)


def _char(c: str) -> ctypes.c_char_p:
    return ctypes.c_char_p(c.encode())


def _int(v: int) -> Any:
    return ctypes.byref(ctypes.c_int(v))


def factor_upper(M: np.ndarray, run: Runner) -> None:
    """Overwrite the upper triangle of the C-ordered square float32/float64 ``M`` with U,
    ``M = U^T U``; raises ``np.linalg.LinAlgError`` when M is not positive definite.

    Parameters
    ----------
    M : ndarray of shape (p, p), C-contiguous, float32 or float64
        Only its upper triangle is read and written.
    run : callable
        ``run(fn, tasks)`` calls ``fn(*task)`` for each task (in any threads).
    """
    if M.ndim != 2 or M.shape[0] != M.shape[1] or not M.flags.c_contiguous:
        raise ValueError(f"expected a C-contiguous square matrix, got shape {M.shape}")
    if M.dtype not in (np.float32, np.float64):
        raise ValueError(f"expected float32 or float64, got {M.dtype}")
    if not np.isfinite(np.diag(M)).all():
        raise np.linalg.LinAlgError("Matrix is not positive definite (non-finite diagonal)")
    _factor(_Calls(M), 0, M.shape[0], run)


def _factor(c: _Calls, lo: int, hi: int, run: Runner) -> None:
    """Factor the diagonal block ``lo..hi`` whose earlier updates are all applied."""
    m = hi - lo
    if m <= LEAF_SIDE:
        info = ctypes.c_int(0)
        c.call("potrf", _char("L"), _int(m), c.at(lo, lo), _int(c.p), ctypes.byref(info))
        if info.value != 0:
            raise np.linalg.LinAlgError(
                f"Matrix is not positive definite (potrf info {info.value} at row {lo})")
        return
    s = lo + max(SPLIT_ALIGN, (m // 2) // SPLIT_ALIGN * SPLIT_ALIGN)
    _factor(c, lo, s, run)
    k = s - lo

    def block_row(c0: int, c1: int) -> None:
        # U_11^T U_12 = M_12; to Fortran: X U_11 = M_12^T for rows c0..c1 of M_12^T
        c.call("trsm", _char("R"), _char("L"), _char("T"), _char("N"), _int(c1 - c0),
               _int(k), ctypes.byref(c.one), c.at(lo, lo), _int(c.p), c.at(lo, c0),
               _int(c.p))

    mid = s + (hi - s) // 2
    run(block_row, [(s, mid), (mid, hi)])

    def trailing(kind: str, a: int, b: int, e: int) -> None:
        # M_22 -= U_12^T U_12, columns a..b (triangle) or the rectangle rows a..b x cols b..e
        if kind == "triangle":
            c.call("syrk", _char("L"), _char("N"), _int(b - a), _int(k),
                   ctypes.byref(c.minus_one), c.at(lo, a), _int(c.p), ctypes.byref(c.one),
                   c.at(a, a), _int(c.p))
        else:
            c.call("gemm", _char("N"), _char("T"), _int(e - b), _int(b - a), _int(k),
                   ctypes.byref(c.minus_one), c.at(lo, b), _int(c.p), c.at(lo, a), _int(c.p),
                   ctypes.byref(c.one), c.at(a, b), _int(c.p))

    run(trailing, trailing_tasks(s, hi))
    _factor(c, s, hi, run)


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
        c = _Calls(B)
        info = ctypes.c_int(0)
        c.call("trtri", _char("L"), _char("N"), _int(b - a), c.at(0, 0), _int(b - a),
               ctypes.byref(info))
        if info.value != 0:
            raise np.linalg.LinAlgError(f"singular factor (trtri info {info.value})")
        return B

    return run(invert, list(blocks))
