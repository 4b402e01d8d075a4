"""Small stores for tests and benchmarks, written through the real store writer.

Gaussian class-conditional embeddings (classes separable to a chosen degree) or any matrix the
caller computed (e.g. k-mer spectra of a real task), so probe code is exercised without a model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from geneb.extract.provenance import source_rows as split_source_rows
from geneb.extract.provenance import task_label_values
from geneb.store import FeatureStore, Provenance, StoreKey
from geneb.store.provenance import LABEL_VALUES, SOURCE_ROWS


def write_entry(
    store: FeatureStore,
    model: str,
    task: str,
    split: str,
    X: np.ndarray,
    labels: np.ndarray,
    *,
    rows: np.ndarray | None = None,
    task_fingerprint: str | None = None,
    n_params: int | None = None,
    category: str | None = None,
    batch: int = 512,
    storage_dtype: str = "float32",
    overwrite: bool = False,
    label_values: Sequence[Any] | None | str = "ids",
    source_rows: int | None = None,
) -> StoreKey:
    """Write one complete entry (rows in order); ``category`` goes to ``extra['task_category']``.

    ``label_values``: the task file's label value of each class id, recorded as extraction
    records it (``"ids"``: the ids themselves; None: not recorded, as in a store made before
    geneb recorded them); ``source_rows`` the split's rows in its file (default: all held)."""
    key = StoreKey(model, task, split)
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.arange(len(labels), dtype=np.int64) if rows is None else np.asarray(rows)
    extra: dict[str, Any] = {}
    if category is not None:
        extra["task_category"] = category
    if isinstance(label_values, str):
        label_values = list(range(int(labels.max()) + 1)) if len(labels) else []
    if label_values is not None:
        extra[LABEL_VALUES] = list(label_values)
        extra[SOURCE_ROWS] = len(labels) if source_rows is None else source_rows
    prov = Provenance(
        model_id=model,
        revision="test:0",
        task_id=task,
        task_fingerprint=task_fingerprint or f"test:{task}:{split}:{len(labels)}",
        n_params=n_params,
        adapter="test",
        extra=extra,
    )
    with store.writer(key, provenance=prov, labels=labels, rows=rows, dim=X.shape[1],
                      storage_dtype=storage_dtype, overwrite=overwrite) as w:
        for a in range(w.start_row, len(labels), batch):
            w.append(np.asarray(X[a : a + batch], dtype=np.float32))
    return key


def gaussian_embeddings(
    labels: np.ndarray, dim: int, *, sep: float = 1.0, seed: int = 0
) -> np.ndarray:
    """Class-conditional Gaussians: class c has mean ``sep * mu_c`` (unit-norm ``mu_c``)."""
    rng = np.random.default_rng(seed)
    k = int(labels.max()) + 1
    means = rng.standard_normal((k, dim))
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    return (rng.standard_normal((len(labels), dim)) + sep * means[labels]).astype(np.float32)


def gaussian_task(
    store: FeatureStore,
    model: str,
    task: str,
    *,
    n_train: int = 200,
    n_test: int = 100,
    n_classes: int = 2,
    dim: int = 16,
    sep: float = 2.0,
    seed: int = 0,
    n_params: int | None = None,
    category: str | None = None,
) -> None:
    """Write train and test entries of a synthetic task for one model (labels fixed by task)."""
    lab_rng = np.random.default_rng(int.from_bytes(hashlib.sha256(task.encode()).digest()[:8]))
    y_tr = np.arange(n_train) % n_classes
    y_te = np.arange(n_test) % n_classes
    lab_rng.shuffle(y_tr)
    lab_rng.shuffle(y_te)
    X = gaussian_embeddings(np.concatenate([y_tr, y_te]), dim, sep=sep, seed=seed)
    fp = f"test:{task}:{n_train}:{n_classes}"
    write_entry(store, model, task, "train", X[:n_train], y_tr, task_fingerprint=fp,
                n_params=n_params, category=category)
    write_entry(store, model, task, "test", X[n_train:], y_te, task_fingerprint=fp + ":test",
                n_params=n_params, category=category)


def kmer_spectrum(sequences: Sequence[str], k: int = 3) -> np.ndarray:
    """Normalised k-mer counts (4**k features; windows with non-ACGT letters are skipped)."""
    lut = np.full(256, -1, dtype=np.int64)
    for i, b in enumerate(b"ACGT"):
        lut[b] = i
    out = np.zeros((len(sequences), 4**k), dtype=np.float32)
    for r, seq in enumerate(sequences):
        codes = lut[np.frombuffer(seq.upper().encode("ascii"), dtype=np.uint8)]
        if len(codes) < k:
            continue
        win = np.lib.stride_tricks.sliding_window_view(codes, k)
        ok = (win >= 0).all(axis=1)
        idx = (win[ok] * (4 ** np.arange(k - 1, -1, -1))).sum(axis=1)
        counts = np.bincount(idx, minlength=4**k).astype(np.float32)
        out[r] = counts / max(1.0, counts.sum())
    return out


def write_task_features(
    store: FeatureStore,
    model: str,
    task: Any,
    featurize: Callable[[Sequence[str]], np.ndarray],
    *,
    n_params: int | None = None,
) -> None:
    """Write train and test entries of a loaded ``Task`` with features from ``featurize``."""
    for split in ("train", "test"):
        s = task.splits[split]
        write_entry(store, model, task.spec.name, split, featurize(s.sequences), s.labels,
                    rows=s.rows, task_fingerprint=s.fingerprint, n_params=n_params,
                    category=task.spec.category, label_values=task_label_values(task),
                    source_rows=split_source_rows(task, s))
