"""The test features in float64, block by block (``TestRows``), and their products with fits.

The ``fast`` backend's test logits (full-data paths and few-shot fits alike) are computed over
these blocks, never from one float64 copy of the test set (that copy and its ``abs`` would be
0.8 of the embeddings' bytes at the full regime's peak; in the 1-shot regime at 100,000 x
1,024 they took 1.0 of its 1.3 s, first touches of fresh memory).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from geneb.probe.preprocess import Standardizer

#: Bytes of one float64 block of test rows (at width 1,024: 2,048 rows).
TEST_BLOCK_BYTES = 16 * 2**20


class TestRows:
    """The test features in float64 (standardised by ``st`` when given), block by block.
    Each block has the values the whole array would have (standardisation is elementwise)."""

    __test__ = False  # not a pytest class

    def __init__(self, X: np.ndarray, st: Standardizer | None) -> None:
        self.X, self.st = X, st

    def blocks(self) -> Iterator[np.ndarray]:
        """The float64 blocks, in row order (one empty block for an empty test set)."""
        n, d = self.X.shape
        rows = max(64, min(TEST_BLOCK_BYTES // (8 * max(1, d)), n // 8))
        for a in range(0, max(1, n), rows):
            blk = self.X[a:a + rows]
            yield (self.st.transform(blk, np.float64) if self.st is not None
                   else blk.astype(np.float64, copy=False))

    def products(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(X W, |X| |W|)``, each (n, m) float64, for weights W (d, m) float64: the
        logits without intercepts and the bound on their summed |terms| (``snap_ties``)."""
        n = len(self.X)
        out, mag = np.empty((n, W.shape[1])), np.empty((n, W.shape[1]))
        W_abs, a = np.abs(W), 0
        for block in self.blocks():
            np.matmul(block, W, out=out[a:a + len(block)])
            np.matmul(np.abs(block), W_abs, out=mag[a:a + len(block)])
            a += len(block)
        return out, mag
