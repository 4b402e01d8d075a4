"""The float32 design as int16 about a centre per column: what the compiled Hessian products read.

A full-data C path makes ~50-80 Hessian-vector products, each one read of the design
(``fast_passes.KernelPasses.hvp``); once the design outgrows the caches they run at memory
speed, so a copy of half the bytes makes them faster: measured 2026-12-02 (2 threads,
realistic embeddings, one product): 10,000 x 768: 1.37-1.43 ms -> 0.81-0.85 ms; 20,000 x
4,096: 12.9 -> 7.5 ms; 100,000 x 1,024: 19.1 -> 14.5 ms. The products only steer CG (the
gradient, the objective and the stopping test read the float32 design, summed in float64), so
the optimum does not change, only how fast CG finds it.

Column j is stored as ``q = round((X[:, j] - c_j) / s_j)``, c_j its midrange and ``s_j`` its
half-range over ``INT16_TOP``: an error of at most ``s_j / 2`` per entry, ~7.6e-6 of the
column's range, whatever its offset (embeddings share large mean offsets). The centre costs
the products nothing: ``X v = Q (s v) + (c . v) 1`` is a product with an implicit column of
ones (``fast_kernels``), and ``X^T r = s Q^T r + c (1^T r)``. A column whose typical entries
would keep few levels (an outlier row stretching its range: a mean absolute deviation of
fewer than ``MIN_SPREAD_STEPS`` steps) makes the copy not worth its error; ``int16_design``
then returns None and the products read the float32 design.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geneb.probe.solvers import scratch
from geneb.probe.solvers.fast_kernels import kernels
from geneb.probe.solvers.row_blocks import RowBlocks

#: Largest stored magnitude (one below int16's 32,767, so a rounding of ``|x - c| / s`` up to
#: the next integer never wraps).
INT16_TOP = 32766
#: A column's entries must lie, on average, at least this many steps from their mean: its
#: typical entries are then stored to within ~1/128 of their spread, and the rounding adds at
#: most ``1 / (12 * 64^2)`` ~ 2e-5 of its variance to the Hessian's diagonal. A normal column
#: of 10,000 rows has ~5,800; one outlier row ~800 typical deviations out leaves ~64.
MIN_SPREAD_STEPS = 64.0


@dataclass(frozen=True)
class Int16Design:
    """``X[:, j] ~ centre[j] + scale[j] * values[:, j]``."""

    #: (n, d) int16, C-contiguous
    values: np.ndarray
    #: (d,) float64, positive (1 for a constant column)
    scale: np.ndarray
    #: (d,) float64, each column's midrange
    centre: np.ndarray


def int16_design(X: np.ndarray, rows: RowBlocks) -> Int16Design | None:
    """The int16 copy of the float32 design X over ``rows``' blocks (the same bits for any
    thread count), or None when a non-constant column's entries lie on average fewer than
    ``MIN_SPREAD_STEPS`` steps from their mean.

    Parameters
    ----------
    X : ndarray of shape (n, d), float32, C-contiguous, finite
        The design (without an implicit column of ones).
    rows : RowBlocks
        The fit's row blocks and threads.

    Returns
    -------
    Int16Design or None
    """
    if X.dtype != np.float32 or X.ndim != 2 or not X.flags.c_contiguous or not len(X):
        raise ValueError(f"expected a C-contiguous non-empty 2-D float32 design, got "
                         f"{X.dtype} of shape {X.shape}")
    k = kernels()
    d = X.shape[1]

    def ranges(a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo, hi = np.full(d, np.inf, dtype=np.float32), np.full(d, -np.inf, dtype=np.float32)
        total = np.zeros(d)
        k["column_range"](X, a, b, lo, hi, total)
        return lo, hi, total

    parts = rows.map(ranges)
    lo = np.min([p[0] for p in parts], axis=0).astype(np.float64)
    hi = np.max([p[1] for p in parts], axis=0).astype(np.float64)
    total = parts[0][2]
    for part in parts[1:]:  # in block order: the same bits for any thread count
        total += part[2]
    centre, half = (hi + lo) / 2.0, (hi - lo) / 2.0
    scale = np.where(half > 0, half / INT16_TOP, 1.0)
    inverse = 1.0 / scale
    mean_q = (total / len(X) - centre) * inverse
    values = scratch.empty(X.shape, np.int16)

    def quantise(a: int, b: int) -> np.ndarray:
        spread = np.zeros(d)
        k["quantise_rows"](X, a, b, centre, inverse, mean_q, values, spread)
        return spread

    spread = rows.map_sum(quantise) / len(X)
    if np.any((half > 0) & (spread < MIN_SPREAD_STEPS)):
        return None
    return Int16Design(values, scale, centre)
