"""Length-bucketed batching under a token budget, and embedding a list in original order.

Sorting by cost and filling each batch until ``rows * longest`` would exceed the budget keeps
padding small (the main cost of a naive fixed-size loop on variable-length tasks) and bounds
memory per forward pass. Results are scattered back, so callers see the original order.
Which rows MAY share a batch is the model's measured ``BatchPolicy``: any (padding is exact),
only equal token counts, or none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.errors import ModelError
from geneb.models.embedder import Embedder
from geneb.models.selftest import BatchPolicy

#: Token budget per batch when none is given: CPUs run fastest on batches whose activations
#: stay cache-sized (a few thousand tokens); GPUs need large batches to fill the device.
CPU_BATCH_TOKENS = 4096
GPU_BATCH_TOKENS = 65536


def default_batch_tokens(device: str) -> int:
    """The token budget used when ``--batch-tokens`` is not given, by device kind."""
    return GPU_BATCH_TOKENS if str(device).startswith("cuda") else CPU_BATCH_TOKENS


def token_budget_batches(
    costs: np.ndarray, batch_tokens: int, same_cost: bool = False
) -> list[np.ndarray]:
    """Split indices into batches: sorted by cost, each with ``len * max cost <= budget``.

    A single item above the budget still gets a batch of its own (it cannot be split here).
    ``same_cost``: a batch never mixes costs (for models that padding would change).
    """
    if batch_tokens < 1:
        raise ModelError(f"batch_tokens: expected a positive int, got {batch_tokens}",
                         param="batch_tokens")
    costs = np.asarray(costs, dtype=np.int64)
    order = np.argsort(costs, kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    n = len(order)
    while start < n:
        end = start + 1
        # ascending costs: the padded cost of [start, end] is (end - start + 1) * costs[end]
        while end < n and (end - start + 1) * int(costs[order[end]]) <= batch_tokens:
            if same_cost and costs[order[end]] != costs[order[start]]:
                break
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def policy_batches(costs: np.ndarray, batch_tokens: int, policy: BatchPolicy) -> list[np.ndarray]:
    """Batches of item indices that ``policy`` allows: mixed, equal cost only, or one each."""
    if policy.one_per_batch:
        return [np.array([i]) for i in np.argsort(np.asarray(costs), kind="stable")]
    return token_budget_batches(costs, batch_tokens, same_cost=policy.same_length_only)


def embed_batches(
    embedder: Embedder, costs: np.ndarray, batch_tokens: int, policy: BatchPolicy
) -> list[np.ndarray]:
    """The batches of one block: the policy's, or, for an embedder run by GENEB's recipe
    (``fixed_batch_rows``), consecutive rows in file order, that many per batch."""
    size = getattr(embedder, "fixed_batch_rows", None)
    if size is None:
        return policy_batches(costs, batch_tokens, policy)
    return [np.arange(a, min(a + size, len(costs))) for a in range(0, len(costs), size)]


#: Rows per block of the extraction runner: one block of float32 embeddings stays under
#: ``BLOCK_BYTES``, and at most ``MAX_BLOCK_ROWS`` rows.
BLOCK_BYTES = 16 << 20
MAX_BLOCK_ROWS = 2048


def default_block_rows(dim: int) -> int:
    """Rows per block so one block of float32 embeddings stays under ``BLOCK_BYTES``."""
    return int(max(1, min(MAX_BLOCK_ROWS, BLOCK_BYTES // max(1, dim * 4))))


def block_rows_of(embedder: Embedder, block_rows: int | None) -> int:
    """The runner's rows per block (``block_rows``, else the default for the model's dim), a
    multiple of a fixed batch size where GENEB's recipe sets one, so every block starts a
    batch and a resumed run forms GENEB's batches again."""
    rows = block_rows or default_block_rows(embedder.dim)
    size = getattr(embedder, "fixed_batch_rows", None)
    return rows if size is None else max(size, rows - rows % size)


def prepared_api(embedder: Embedder) -> tuple[Any, Any, Any]:
    """(prepare, cost, embed_prepared) of an embedder, with fallbacks for minimal adapters."""
    prepare = getattr(embedder, "prepare", None)
    cost = getattr(embedder, "cost", None)
    embed_prepared = getattr(embedder, "embed_prepared", None)
    if prepare is None or cost is None or embed_prepared is None:

        def prepare(seqs: Sequence[str]) -> list[str]:
            return list(seqs)

        def cost(items: Sequence[str]) -> np.ndarray:
            return np.fromiter((max(1, len(s)) for s in items), dtype=np.int64, count=len(items))

        embed_prepared = embedder.embed
    return prepare, cost, embed_prepared
