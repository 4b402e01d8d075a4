"""Deterministic, stratified subsampling of an over-large train split (the GENEB row cap)."""

from __future__ import annotations

import hashlib

import numpy as np

SUBSAMPLE_METHOD = (
    "stratified without replacement: per-class quotas by largest remainder (at least one row "
    "per class), rows drawn with numpy default_rng(seed), kept in file order"
)


def name_seed(name: str) -> int:
    """A fixed seed derived from a task name, so the same task always keeps the same rows."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little")


def class_quotas(counts: np.ndarray, cap: int) -> np.ndarray:
    """Per-class row quotas summing to ``cap``, proportional to ``counts`` (largest remainder)."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if cap >= total:
        return counts.copy()
    present = counts > 0
    if cap < int(present.sum()):
        raise ValueError(f"cap {cap} is smaller than the number of classes {int(present.sum())}")
    exact = counts * (cap / total)
    quota = np.floor(exact).astype(np.int64)
    quota[present] = np.maximum(quota[present], 1)
    left = cap - int(quota.sum())
    if left > 0:
        order = np.argsort(-(exact - np.floor(exact)), kind="stable")
        for k in order:
            if left == 0:
                break
            if quota[k] < counts[k]:
                quota[k] += 1
                left -= 1
    while left < 0:  # the at-least-one rule overshot: take from the largest quotas
        k = int(np.argmax(quota))
        quota[k] -= 1
        left += 1
    return quota


def stratified_subsample(labels: np.ndarray, cap: int, seed: int) -> np.ndarray:
    """Sorted indices of at most ``cap`` rows, keeping the class proportions of ``labels``."""
    labels = np.asarray(labels)
    if labels.size <= cap:
        return np.arange(labels.size, dtype=np.int64)
    classes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    quota = class_quotas(counts, cap)
    rng = np.random.default_rng(seed)
    keep = []
    for k in range(classes.size):
        idx = np.flatnonzero(inverse == k)
        keep.append(rng.choice(idx, size=int(quota[k]), replace=False))
    return np.sort(np.concatenate(keep)).astype(np.int64)
