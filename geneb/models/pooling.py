"""Pooling token states into one vector per sequence, for one or several hidden layers.

One place for what ``--pooling`` and ``--layers`` mean, so the transformers adapter, its
batch-invariance self-test and the window rule all agree:

- ``mean``: mask-weighted mean over every real (non-padding) token, special tokens included.
- ``mean_nonspecial``: the same over real tokens that are not special tokens ([CLS], [SEP]..).
- ``cls``: the first real token (the [CLS] where the tokenizer adds one).
- ``last``: the last real token (the usual choice for causal models, whose last position has
  seen the whole sequence).
- ``max``: element-wise maximum over real tokens.

"Real" tokens are those the attention mask marks, so the result does not depend on the
padding side (left or right) nor on the other rows of the batch. A sequence longer than the
model's context under ``--truncation window`` is embedded as several windows, pooled each, then
combined by :data:`WINDOW_RULES` (the mean keeps its token-weighted mean over all windows).

Layers: ``hidden_states[i]`` of ONE forward (0 = embeddings output, -1 = last layer); each
layer of ``--layers`` becomes its own store entry (key rule: ``geneb.store.keys.layer_key``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.errors import ModelError, unknown_name
from geneb.models.options import check_layers
from geneb.vocabulary import POOLINGS

__all__ = [
    "POOLINGS", "WINDOW_RULES", "check_layers", "check_pooling", "combine_windows", "pool_mask",
    "pool_states", "resolve_layers",
]  # fmt: skip
MEAN_POOLINGS = ("mean", "mean_nonspecial")
#: How the windows of one long sequence combine (recorded in provenance).
WINDOW_RULES = {
    "mean": "mean of window means weighted by their pooled token counts",
    "mean_nonspecial": "mean of window means weighted by their pooled token counts",
    "cls": "first token of the first window",
    "last": "last real token of the last window",
    "max": "element-wise max over the windows' maxima",
}


def check_pooling(pooling: str) -> str:
    """``pooling`` if it is known, else an error listing the known ones."""
    if pooling not in POOLINGS:
        raise unknown_name("pooling", pooling, POOLINGS)
    return pooling


def resolve_layers(layers: Sequence[int], n_states: int, who: str) -> tuple[int, ...]:
    """Indices into ``hidden_states`` (0..n_states-1); out of range or the same state twice
    (e.g. -1 and 2 of a 2-layer model) is an error naming the model."""
    out = []
    for x in layers:
        if not -n_states <= x < n_states:
            raise ModelError(
                f"layer {x} out of range: {who} has hidden states 0..{n_states - 1} "
                "(0 = embeddings, -1 = last)"
            )
        out.append(x % n_states)
    if len(set(out)) != len(out):
        raise ModelError(
            f"layers: {list(layers)} name the same hidden state twice for {who} "
            f"(hidden states 0..{n_states - 1})", param="layers"
        )
    return tuple(out)


def pool_mask(
    ids: np.ndarray, mask: np.ndarray, pooling: str, special_ids: np.ndarray
) -> np.ndarray:
    """Which tokens the pooling reads: real tokens, minus special ones for mean_nonspecial."""
    if pooling == "mean_nonspecial":
        return mask * ~np.isin(ids, special_ids)
    return mask


def pool_states(
    states: Sequence[Any], ids: np.ndarray, mask: np.ndarray, pooling: str, special_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pool each ``(B, T, D)`` torch tensor of ``states``: ((L, B, D) float32, (B,) counts).

    ``mask`` (B, T) marks real tokens (1) and padding (0), on either side. ``counts`` are the
    tokens each row's pooling read (the window weights of the mean poolings).
    """
    import torch

    pm = pool_mask(ids, mask, pooling, special_ids)
    device = states[0].device
    m = torch.from_numpy(pm).to(device, dtype=torch.float32).unsqueeze(-1)
    cnt = m.sum(dim=1)
    rows = torch.arange(ids.shape[0], device=device)
    if pooling in ("cls", "last"):
        first = np.argmax(mask, axis=1)
        last = mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)
        pos = torch.from_numpy(first if pooling == "cls" else last).to(device)
    out = []
    for hidden in states:
        h = hidden.float()
        if pooling in MEAN_POOLINGS:
            pooled = (h * m).sum(dim=1) / cnt.clamp(min=1)
        elif pooling == "max":
            pooled = h.masked_fill(m == 0, float("-inf")).amax(dim=1)
        else:
            pooled = h[rows, pos]
        out.append(pooled.cpu().numpy().astype(np.float32, copy=False))
    return np.stack(out), cnt.squeeze(-1).cpu().numpy().astype(np.float64)


def combine_windows(
    pooled: np.ndarray, counts: np.ndarray, n_windows: np.ndarray, pooling: str
) -> np.ndarray:
    """(L, W, D) window vectors -> (L, N, D) sequence vectors by :data:`WINDOW_RULES`.

    The windows of sequence i are consecutive, ``n_windows[i]`` of them.
    """
    n_windows = np.asarray(n_windows, dtype=np.int64)
    if len(n_windows) == pooled.shape[1]:
        return pooled
    starts = np.concatenate([[0], np.cumsum(n_windows)[:-1]]).astype(np.int64)
    if pooling == "cls":
        return pooled[:, starts]
    if pooling == "last":
        return pooled[:, starts + n_windows - 1]
    if pooling == "max":
        return np.maximum.reduceat(pooled, starts, axis=1)
    owner = np.repeat(np.arange(len(n_windows)), n_windows)
    tot = np.maximum(np.bincount(owner, weights=counts, minlength=len(n_windows)), 1)
    out = np.empty((pooled.shape[0], len(n_windows), pooled.shape[2]), dtype=np.float32)
    for i, layer in enumerate(pooled):
        acc = np.zeros((len(n_windows), layer.shape[1]), dtype=np.float64)
        np.add.at(acc, owner, layer.astype(np.float64) * counts[:, None])
        out[i] = acc / tot[:, None]
    return out
