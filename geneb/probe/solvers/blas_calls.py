"""BLAS/LAPACK routines called in place on C-ordered numpy arrays, releasing the GIL.

The routines are those scipy exports for Cython (``scipy.linalg.cython_blas`` /
``cython_lapack``: the reference Fortran interface, every argument by pointer), called through
``ctypes``, which releases the GIL, so two of the solver's threads run two calls at once.
scipy's own ``scipy.linalg.blas``/``lapack`` functions hold the GIL (two ``strsm`` in two
threads took 86 ms against 85 ms one after the other) and copy non-contiguous blocks.

A C-ordered array is its transpose to Fortran: element ``[r, c]`` of an array with ``ld``
columns is at ``r * ld + c``, which Fortran reads as row c, column r of a column-major array
with leading dimension ``ld``. Every caller states its products in those terms.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import numpy as np

_P = ctypes.c_void_p
#: Argument counts of the routines used (all pointers, Fortran interface).
_ARITY = {"potrf": 5, "trtri": 6, "trsm": 11, "syrk": 10, "gemm": 13}
_LAPACK = ("potrf", "trtri")


@cache
def routine(name: str) -> Any:
    """The ctypes function of ``name`` (e.g. ``spotrf``, ``dgemm``) from scipy's capsules."""
    if name.endswith(_LAPACK):
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


class Pointers:
    """Pointer arguments into one C-ordered 2-D float32/float64 array, and its routines."""

    def __init__(self, M: np.ndarray) -> None:
        if M.ndim != 2 or not M.flags.c_contiguous:
            raise ValueError(f"expected a C-contiguous 2-D array, got shape {M.shape}")
        if M.dtype not in (np.float32, np.float64):
            raise ValueError(f"expected float32 or float64, got {M.dtype}")
        self.M = M  # keeps the buffer alive while pointers into it are in use
        self.ld = M.shape[1]
        self.item = M.itemsize
        self.base = M.ctypes.data
        self.prefix = "s" if M.dtype == np.float32 else "d"
        scalar = ctypes.c_float if M.dtype == np.float32 else ctypes.c_double
        self.one, self.minus_one = scalar(1.0), scalar(-1.0)

    def at(self, row: int, col: int) -> ctypes.c_void_p:
        """Address of ``M[row, col]``."""
        return ctypes.c_void_p(self.base + (row * self.ld + col) * self.item)

    def call(self, name: str, *args: Any) -> None:
        """Routine ``name`` (without its type letter) of this array's dtype."""
        routine(self.prefix + name)(*args)


def char(c: str) -> ctypes.c_char_p:
    """A character argument (``"L"``, ``"N"``, ...) by pointer."""
    return ctypes.c_char_p(c.encode())


def integer(v: int) -> Any:
    """An integer argument (a dimension, a leading dimension) by pointer."""
    return ctypes.byref(ctypes.c_int(v))


def add_cross_product(G: Pointers, row: int, col: int, L: Pointers, l_row: int, l_col: int,
                      R: Pointers, r_row: int, r_col: int, m: int, rows: int, cols: int,
                      alpha: float = 1.0) -> None:
    """``G[row:row + rows, col:col + cols] += alpha L_blk^T R_blk`` (alpha 1 or -1) in place,
    with ``L_blk = L[l_row:l_row + m, l_col:l_col + rows]`` and ``R_blk = R[r_row:r_row + m,
    r_col:r_col + cols]`` (one GEMM with beta = 1: no temporary, no separate add). To Fortran
    the G block is its transpose, so the call computes ``G^T += alpha R_blk^T L_blk``."""
    G.call("gemm", char("N"), char("T"), integer(cols), integer(rows), integer(m),
           _unit(G, alpha), R.at(r_row, r_col), integer(R.ld), L.at(l_row, l_col),
           integer(L.ld), ctypes.byref(G.one), G.at(row, col), integer(G.ld))


def add_gram_upper(G: Pointers, row: int, A: Pointers, a_row: int, a_col: int, m: int,
                   side: int, alpha: float = 1.0) -> None:
    """Upper triangle of ``G[row:row + side, row:row + side] += alpha A_blk^T A_blk`` (alpha
    1 or -1) with
    ``A_blk = A[a_row:a_row + m, a_col:a_col + side]``, in place (one SYRK with beta = 1; the
    strictly lower triangle is not touched)."""
    G.call("syrk", char("L"), char("N"), integer(side), integer(m), _unit(G, alpha),
           A.at(a_row, a_col), integer(A.ld), ctypes.byref(G.one), G.at(row, row),
           integer(G.ld))


def _unit(G: Pointers, alpha: float) -> Any:
    """``alpha`` (1 or -1, the only factors the callers use) by pointer in G's type."""
    if alpha not in (1.0, -1.0):
        raise ValueError(f"expected alpha 1 or -1, got {alpha}")
    return ctypes.byref(G.one if alpha == 1.0 else G.minus_one)
