"""Both strands: the embedding of a sequence as the mean of its forward and reverse-complement
embeddings (GPN's ``get_embeddings.py`` and Caduceus's documented recipe), for any model.

DNA is double-stranded and a task's sequence is one strand by convention; a model trained on
one orientation embeds the two differently. ``--strands both`` wraps any embedder so every row
is ``(embed(s) + embed(revcomp(s))) / 2``. With an adapter that tokenises ahead
(``prepare``/``cost``/``embed_prepared``) both strands of a block go through the same
batched forwards, under the adapter's own measured batch policy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.dna import reverse_complement
from geneb.errors import ModelError
from geneb.models.embedder import Embedder, ModelInfo, PreparedPath
from geneb.vocabulary import STRANDS


def check_strands(strands: str) -> str:
    if not isinstance(strands, str) or strands not in STRANDS:
        raise ModelError(f"strands must be one of {', '.join(STRANDS)}; got {strands!r}")
    return strands


class BothStrands:
    """An embedder whose rows are the mean of the forward and reverse-complement embeddings."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self._path = inner if isinstance(inner, PreparedPath) else None
        if self._path is not None:
            self.prepare = self._prepare
            self.cost = self._cost
            self.embed_prepared = self._embed_prepared
        if hasattr(inner, "batch_policy"):
            self.batch_policy = inner.batch_policy

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def info(self) -> ModelInfo:
        from geneb.models.embedder import model_info

        base = model_info(self.inner)
        extra = {**base.extra, "strands": "mean of forward and reverse-complement embeddings"}
        return dataclasses.replace(base, strands="both", extra=extra)

    def embed(self, sequences: Sequence[str]) -> np.ndarray:
        seqs = list(sequences)
        both = np.asarray(self.inner.embed(seqs + [reverse_complement(s) for s in seqs]))
        return _mean_halves(both, len(seqs))

    # the prepared path: one item = (forward prepared, reverse-complement prepared)
    def _prepare(self, sequences: Sequence[str]) -> list[tuple[Any, Any]]:
        seqs = list(sequences)
        path = self._prepared()
        fwd = path.prepare(seqs)
        rev = path.prepare([reverse_complement(s) for s in seqs])
        return list(zip(fwd, rev, strict=True))

    def _cost(self, items: Sequence[tuple[Any, Any]]) -> np.ndarray:
        path = self._prepared()
        fwd = np.asarray(path.cost([a for a, _ in items]), dtype=np.int64)
        rev = np.asarray(path.cost([b for _, b in items]), dtype=np.int64)
        return fwd + rev

    def _embed_prepared(self, items: Sequence[tuple[Any, Any]]) -> np.ndarray:
        flat = [a for a, _ in items] + [b for _, b in items]
        return _mean_halves(np.asarray(self._prepared().embed_prepared(flat)), len(items))

    def _prepared(self) -> PreparedPath:
        if self._path is None:  # the methods using it are bound only when it exists
            raise ModelError(f"embedder {self.name!r} has no prepare/cost/embed_prepared")
        return self._path


def _mean_halves(both: np.ndarray, n: int) -> np.ndarray:
    out = (both[:n].astype(np.float64) + both[n:].astype(np.float64)) / 2.0
    return out.astype(np.float32)
