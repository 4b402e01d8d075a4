"""Embedding in the batches the extraction runner forms, for tests of batch independence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.extract.batching import policy_batches, prepared_api
from geneb.models.selftest import policy_of


def embed_bucketed(embedder: Any, sequences: Sequence[str], batch_tokens: int) -> np.ndarray:
    """Rows in input order, embedded in token-budget batches chosen by the runner's own
    ``prepared_api`` and ``policy_batches`` (so batch composition is what a test varies)."""
    prepare, cost, embed_prepared = prepared_api(embedder)
    items = prepare(sequences)
    out = np.empty((len(sequences), embedder.dim), dtype=np.float32)
    for idx in policy_batches(np.asarray(cost(items)), batch_tokens, policy_of(embedder)):
        out[idx] = embed_prepared([items[i] for i in idx])
    return out
