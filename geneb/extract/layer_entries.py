"""Several hidden layers from one forward, written as one store entry per layer.

Why a separate step: the runner writes entries keyed by model; ``--layers`` turns one model
into one entry per layer (keys by ``geneb.store.keys.layer_key``: the last layer keeps the
bare model key, any other is ``<model>@L<layer>``), each with its own provenance (``layer``
is an identity field, so a stored entry of another layer is never mistaken for this one),
while the embeddings of every layer come from the same forward passes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from geneb.errors import ModelError
from geneb.models.embedder import Embedder, ModelInfo, check_embedding
from geneb.store.keys import layer_key


def entry_targets(
    embedder: Embedder, info: ModelInfo, model_key: str
) -> list[tuple[str, ModelInfo]]:
    """(store model key, info) of every entry one forward of ``embedder`` fills.

    One entry under ``model_key`` unless the embedder was built with ``layers``; then one
    per layer, each info carrying its ``layer`` and, in ``extra``, the whole list
    (``layers``) and the key of the model they came from (``layers_of``).
    """
    layers = getattr(embedder, "layers", None)
    if layers is None:
        return [(model_key, info)]
    extra = dict(info.extra, layers=list(layers), layers_of=model_key)
    return [
        (layer_key(model_key, layer), dataclasses.replace(info, layer=int(layer), extra=extra))
        for layer in layers
    ]


def block_embedder(
    embedder: Embedder, n_entries: int, embed_prepared: Callable[[Sequence[Any]], Any]
) -> Callable[[Sequence[Any]], np.ndarray]:
    """A function items -> ``(n_entries, len(items), dim)`` float32 for the runner's blocks."""
    dim, who = embedder.dim, embedder.name
    if getattr(embedder, "layers", None) is None:

        def one(items: Sequence[Any]) -> np.ndarray:
            return check_embedding(embed_prepared(items), len(items), dim, who)[None]

        return one
    many = getattr(embedder, "embed_prepared_layers", None)
    if many is None:
        raise ModelError(
            f"embedder {who!r} was given layers but has no embed_prepared_layers method "
            "(only transformers models extract several layers from one forward)"
        )

    def layered(items: Sequence[Any]) -> np.ndarray:
        arr = np.asarray(many(items))
        if arr.ndim != 3 or arr.shape[0] != n_entries:
            raise ModelError(
                f"embedder {who!r} returned shape {arr.shape}, expected "
                f"({n_entries}, {len(items)}, {dim})"
            )
        return np.stack([check_embedding(a, len(items), dim, who) for a in arr])

    return layered
