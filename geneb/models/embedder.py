"""The adapter protocol: what every embedder (built-in or third-party) provides to the runner.

An embedder turns a batch of DNA sequences into one float32 vector each and says what it is
(``info``), so the runner can write provenance without knowing the model family. Adapters that
tokenise may also expose ``prepare``/``cost``/``embed_prepared`` (looked up by name, see
``geneb.extract.batching.prepared_api``): the runner then tokenises a block once, sorts it by
token count and fills batches up to a token budget. Which rows may share a batch is never
assumed: an adapter may expose ``batch_policy`` (a measured
``geneb.models.selftest.BatchPolicy``, as the hf adapter does at load time); for any other the
runner measures one through ``embed`` (``selftest.policy_of``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from geneb.vocabulary import (
    CPU_COMPUTE_DTYPE,
    DEFAULT_LAYER,
    DEFAULT_POOLING,
    DEFAULT_STRANDS,
    DEFAULT_TRUNCATION,
)


@dataclass(frozen=True)
class ModelInfo:
    """What an adapter contributes to an entry's provenance (everything but the task)."""

    name: str  # default store key for the model (kmer-5, folder name, hub id, random:<..>)
    revision: str  # hub commit hash, "sha256:<local weight files>", or "builtin:<...>"
    adapter: str  # which adapter made it (kmer, hf, minilm, random, or an entry point)
    n_params: int | None = None
    model_type: str = ""
    tokenizer: str = ""
    pooling: str = DEFAULT_POOLING
    layer: int = DEFAULT_LAYER
    max_length: int | None = None
    truncation: str = DEFAULT_TRUNCATION
    dtype: str = CPU_COMPUTE_DTYPE
    device: str = "cpu"
    strands: str = DEFAULT_STRANDS  # "both": mean of forward and reverse-complement embeddings
    recipe: str = ""  # "geneb": embedded by GENEB's recipe (geneb.extract.geneb_recipe)
    extra: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Embedder(Protocol):
    """Minimal contract: a name, a dimension, provenance info and ``embed``."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def info(self) -> ModelInfo: ...

    def embed(self, sequences: Sequence[str]) -> np.ndarray:
        """Return a ``(len(sequences), dim)`` float32 array, row i for sequence i."""
        ...


@runtime_checkable
class PreparedPath(Protocol):
    """The optional prepared path of an adapter that tokenises ahead (looked up by name:
    ``isinstance(embedder, PreparedPath)`` is whether it has all three)."""

    def prepare(self, sequences: Sequence[str]) -> Sequence[Any]:
        """One prepared item (e.g. token ids) per sequence."""
        ...

    def cost(self, items: Sequence[Any]) -> Any:
        """Per-item cost (token count) as an integer array-like."""
        ...

    def embed_prepared(self, items: Sequence[Any]) -> np.ndarray:
        """Embeddings of prepared items, as ``embed`` of their sequences."""
        ...


def check_embedding(emb: np.ndarray, n: int, dim: int, who: str) -> np.ndarray:
    """Make sure an adapter returned what it promised, naming the adapter if not."""
    from geneb.errors import ModelError

    arr = np.asarray(emb)
    if arr.shape != (n, dim):
        raise ModelError(f"embedder {who!r} returned shape {arr.shape}, expected ({n}, {dim})")
    return arr.astype(np.float32, copy=False)


def model_info(embedder: Any) -> ModelInfo:
    """The adapter's ModelInfo, or a minimal one for plugins that do not provide it."""
    info = getattr(embedder, "info", None)
    if isinstance(info, ModelInfo):
        return info
    return ModelInfo(
        name=embedder.name,
        revision=str(getattr(embedder, "revision", "unknown")),
        adapter=f"plugin:{type(embedder).__module__}.{type(embedder).__qualname__}",
        n_params=getattr(embedder, "n_params", None),
    )
