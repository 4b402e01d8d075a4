"""Fixed row blocks of a matrix, mapped over a small thread pool: parallel without changing a bit.

The matrix-vector passes of the CPU solvers (linear predictor, gradient, Hessian-vector
products) run over fixed row blocks, one single-threaded BLAS call per block, spread over
``threads`` Python threads (BLAS releases the GIL), with the per-block partial sums added in
block order. The blocks do not depend on the thread count, so one thread and two give the same
bits (OpenBLAS's own threading splits the sums differently for each thread count). The Gram and
the Cholesky updates are fixed lists of panel products handed to the same threads. BLAS itself
stays single-threaded throughout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import numpy as np

#: ``run(fn, tasks)``: calls ``fn(*task)`` for each task (in any threads), results in order
#: (``RowBlocks.run``; the factorisations take one).
Runner = Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], list[Any]]

#: Rows per block of the blocked matrix-vector passes: fixed (never derived from the thread
#: count, so results do not depend on it). 1,024 rows of 1,025 float32 features are 4 MiB:
#: large enough that per-block Python overhead is small, small enough to split 6,478 rows
#: over two threads evenly (measured: 256-row blocks were slower with two threads).
BLOCK_ROWS = 1024


class RowBlocks:
    """Fixed row blocks ``[a, b)`` of an n-row matrix, mapped over a small thread pool.

    ``map(fn)`` calls ``fn(a, b)`` for every block and returns the results in block order;
    thread t handles the t-th contiguous run of blocks. Callers reduce the results in that
    order, so the sums are the same for any ``threads``. BLAS must be single-threaded inside
    ``fn`` (the caller's threadpool limit; the solver runs under one thread).
    """

    def __init__(self, n: int, threads: int = 1, block_rows: int = BLOCK_ROWS) -> None:
        edges = list(range(0, n, block_rows)) + [n]
        self.blocks = list(zip(edges[:-1], edges[1:], strict=True))
        self.threads = max(1, int(threads))
        self._pool: ThreadPoolExecutor | None = None

    def map(self, fn: Callable[[int, int], Any]) -> list[Any]:
        """``fn(a, b)`` for every row block, results in block order."""
        return self.run(fn, self.blocks)

    def map_sum(self, fn: Callable[[int, int], np.ndarray]) -> np.ndarray:
        """Sum of ``fn(a, b)`` over the blocks, added in float64 in block order (the same bits
        for any thread count)."""
        parts = self.map(fn)
        total: np.ndarray = parts[0].astype(np.float64)
        for part in parts[1:]:
            total += part
        return total

    def run(self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]) -> list[Any]:
        """``fn(*task)`` for every task of a fixed list, results in task order; thread t
        takes the t-th contiguous run of tasks (the calling thread the first, the pool's
        ``threads - 1`` the others)."""
        t = min(self.threads, len(tasks))
        if t <= 1:
            return [fn(*task) for task in tasks]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="geneb-rows")
        nb = len(tasks)
        runs = [tasks[i * nb // t : (i + 1) * nb // t] for i in range(t)]

        def do(run: Sequence[tuple[Any, ...]]) -> list[Any]:
            return [fn(*task) for task in run]

        # the calling thread takes the first run itself: one hand-over fewer per call (a
        # trivial two-thread map: 68 us with both runs in the pool)
        rest = [self._pool.submit(do, run) for run in runs[1:]]
        try:
            out = do(runs[0])
        finally:
            wait(rest)  # no task outlives the call, even when the first run raised
        return out + [r for f in rest for r in f.result()]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
