"""The data Hessian ``X^T D X`` of a full-data fit, accumulated over row chunks.

The full-data path's one O(n d^2) step (``fast_full``), computed without any matrix the size
of X: each fixed task (a column panel of one K' x K' block, see ``upper_panels``) walks the
rows in fixed chunks of ``GRAM_CHUNK_BYTES``, scales the chunk's rows into a buffer of its own
(``sqrt(D_aa) X`` for a diagonal block, ``D_ab X`` for an off-diagonal one), in the Gram's
precision, and adds the chunk's panel product to G. Whole scaled copies of X would cost
K'(K'+1)/2 of them for K' weight rows (3 for 3 classes: a 3-class fit peaked at 4.3-8.1 times
the embeddings' bytes that way), and each would be a fresh
X-sized allocation whose first touch cost as much as a third of the GEMM (measured on
100,000 x 1,025: 1.16 s to scale into a new array, 0.17 s into a used one).

The tasks and chunks depend on the shape alone, never on the thread count, and each task is
run start to finish by one thread: the same bits for any number of threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from geneb.probe.solvers import scratch
from geneb.probe.solvers.numeric import upper_panels

#: Bytes of one chunk of rows a Gram task scales at a time: large enough that the chunk's
#: panel product (chunk rows x panel) dominates the add into G, small enough that two tasks'
#: buffers stay a small part of the embeddings (at width 1,024: 2,048 rows, 8 MiB each).
GRAM_CHUNK_BYTES = 8 * 2**20
#: Fewest rows of a chunk (narrow designs).
GRAM_CHUNK_MIN_ROWS = 256


#: At most this fraction of the design's rows per chunk (small designs: the buffers stay
#: small next to them; 10,000 x 769 x 3 classes peaked at 3.6x its embeddings with 8 MiB
#: chunks).
GRAM_CHUNK_MAX_FRACTION = 1 / 8


#: At least this fraction of the width in rows per chunk (wide designs): a chunk's panel
#: product has the chunk's rows as its inner dimension, and each chunk adds a p x p panel
#: into G. Measured 2026-12-02, 20,000 x 4,097, two threads: 2.37 s with 8 MiB (512-row)
#: chunks, 1.58 s with 2,048 rows, against 1.32 s for the limit's unchunked X^T X; 30,000 x
#: 2,561: 1.11 s (819 rows) against 0.90 s.
GRAM_CHUNK_MIN_WIDTH_FRACTION = 0.5


def chunk_rows(n: int, p: int, itemsize: int) -> int:
    """Rows per Gram chunk for an n-row design of ``p`` columns of ``itemsize`` bytes."""
    wanted = max(GRAM_CHUNK_BYTES // max(1, p * itemsize), int(p * GRAM_CHUNK_MIN_WIDTH_FRACTION))
    return max(GRAM_CHUNK_MIN_ROWS, min(wanted, int(n * GRAM_CHUNK_MAX_FRACTION)))


def data_hessian(rows: Callable[[int, int], np.ndarray], n: int, p: int,
                 weights: dict[tuple[int, int], np.ndarray], n_blocks: int, dtype: type,
                 run: Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], list[Any]],
                 implicit_ones: bool = False) -> np.ndarray:
    """Upper triangle of the (K' p, K' p) data Hessian ``X^T D X`` in ``dtype``.

    ``rows(a, b)``: rows a..b of the design (any float dtype; cast to ``dtype`` chunk by
    chunk), without its last column of ones when ``implicit_ones`` (the chunk buffers get
    it). ``weights[a, b]`` (a <= b < ``n_blocks`` = K'): the n row weights of block (a, b);
    diagonal ones are variances (>= 0), so block (a, a) is ``Xs^T Xs`` with
    ``Xs = sqrt(D_aa) X``: a SYRK panel and a GEMM panel (``upper_panels``); an off-diagonal
    block is ``X^T (D_ab X)`` in two column halves. ``run(fn, tasks)`` runs ``fn(*task)``
    for every task (a thread pool). Only the upper triangle of G is filled.
    """
    G: np.ndarray = scratch.zeros((n_blocks * p, n_blocks * p), dtype)
    first, second = [], []
    for (a, b) in weights:
        if a == b:
            (c0, s), (_, c1) = upper_panels(0, p)
            first.append((a, a, c0, s, True))
            second.append((a, a, s, c1, True))
        else:
            first.append((a, b, 0, p // 2, False))
            second.append((a, b, p // 2, p, False))
    step = chunk_rows(n, p, np.dtype(dtype).itemsize)
    roots = {a: np.sqrt(np.maximum(w, 0.0)).astype(dtype)
             for (a, b), w in weights.items() if a == b}
    offdiag: dict[tuple[int, int], np.ndarray] = {
        k: w.astype(dtype) for k, w in weights.items() if k[0] != k[1]}

    def task(a: int, b: int, c0: int, c1: int, diag: bool) -> None:
        top = c1 if diag else p  # a diagonal panel needs only the rows above its end
        buf: np.ndarray = np.empty((min(step, n), p), dtype=dtype)
        other: np.ndarray = np.empty_like(buf) if not diag else buf[:0]
        out: np.ndarray = np.empty((top, c1 - c0), dtype=dtype)
        panel = G[a * p:a * p + top, b * p + c0:b * p + c1]
        for s in range(0, n, step):
            e = min(n, s + step)
            m = e - s
            Xc = rows(s, e)
            q = Xc.shape[1]  # p, or p - 1 with the ones implicit (column q of the buffers)
            if diag:  # sqrt(D) X: one buffer, so numpy's A^T A is a SYRK
                np.multiply(Xc, roots[a][s:e, None], out=buf[:m, :q])
                if implicit_ones:
                    buf[:m, q] = roots[a][s:e]
                L = R = buf[:m]
            else:
                L = buf[:m]
                L[:, :q] = Xc
                R = other[:m]
                np.multiply(Xc, offdiag[a, b][s:e, None], out=R[:, :q])
                if implicit_ones:
                    L[:, q] = 1.0
                    R[:, q] = offdiag[a, b][s:e]
            np.matmul(L[:, :top].T, R[:, c0:c1], out=out)
            panel += out

    # the first task of every block, then the second: each thread gets half of each
    run(task, first + second)
    return G


def design_gram(X: np.ndarray, dtype: type,
                run: Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], list[Any]],
                column_sums: np.ndarray | None = None) -> np.ndarray:
    """Upper triangle of ``X^T X`` (the unweighted Gram) in ``dtype``, with a column of ones
    appended when ``column_sums`` (X's float64 column sums) is given: X then leaves that
    column out, and its row of G is ``column_sums`` and n.

    A design already in ``dtype`` is multiplied whole, two fixed column panels
    (``upper_panels``; the first a SYRK) with no scaled copy and no chunks: the same
    products as the limit's Gram of ``benchmarks/real_size.py``. Otherwise (a float64 Gram
    of float32 rows) through ``data_hessian`` with unit weights, chunk by chunk.

    The column sums come in float64: summed in float32 (a GEMV per panel) they made the
    float32 preconditioner of 20,000 x 4,097 (embeddings with a shared mean offset, nearly
    collinear with the ones) indefinite at a large C, which cost a float64 Gram (8.8 s
    against 3.6 s for the path, 2026-12-02).
    """
    n, q = X.shape
    implicit = column_sums is not None
    p = q + int(implicit)
    if X.dtype != dtype:
        return data_hessian(lambda a, b: X[a:b], n, p, {(0, 0): np.ones(n)}, 1, dtype, run,
                            implicit_ones=implicit)
    G: np.ndarray = scratch.zeros((p, p), dtype)

    def panel(c0: int, c1: int) -> None:
        np.matmul(X[:, :c1].T, X[:, c0:c1], out=G[:c1, c0:c1])

    run(panel, upper_panels(0, q))
    if column_sums is not None:
        G[:q, q] = column_sums
        G[q, q] = n
    return G
