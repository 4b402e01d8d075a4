"""Checks of what an entry writer is given: labels, rows, label names and embedding rows.

Kept apart from :mod:`geneb.store.writer` so the writer holds only the streaming and the
all-or-nothing protocol; every message names the entry and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from geneb.errors import StoreError
from geneb.store.keys import StoreKey
from geneb.vocabulary import STORAGE_DTYPES


def check_entry_inputs(
    key: StoreKey, labels: np.ndarray, rows: np.ndarray, dim: int, storage_dtype: str
) -> tuple[np.ndarray, np.ndarray]:
    """(labels as int64 class ids or float64 targets, rows as int64), checked against each
    other, ``dim`` and ``storage_dtype``; an error names ``key`` and what was expected."""
    if storage_dtype not in STORAGE_DTYPES:
        raise StoreError(f"storage dtype must be {' or '.join(STORAGE_DTYPES)}, got "
                         f"{storage_dtype!r}")
    labels = np.asarray(labels)
    if labels.dtype.kind == "f":  # a regression task's targets: kept as float64
        if not np.isfinite(labels).all():
            raise StoreError(f"labels of {key} must be finite numbers")
        labels = labels.astype(np.float64)
    elif labels.size and not np.issubdtype(labels.dtype, np.integer):
        raise StoreError(
            f"labels of {key} must be integers (class ids) or floats "
            f"(regression targets), got dtype {labels.dtype}"
        )
    else:
        labels = labels.astype(np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    if labels.shape != rows.shape or labels.ndim != 1:
        raise StoreError(f"labels {labels.shape} and rows {rows.shape} must be equal 1-D")
    if int(dim) < 1:
        raise StoreError(f"embedding dimension must be >= 1, got {dim}")
    return labels, rows


def check_label_names(
    key: StoreKey, names: Sequence[str] | None, labels: np.ndarray
) -> list[str] | None:
    """``names`` as a list of strings naming every class id in ``labels``, else an error."""
    if names is None:
        return None
    if labels.dtype.kind == "f":  # regression targets: no classes to name
        if len(names):
            raise StoreError(
                f"label_names of {key}: the labels are continuous targets, "
                f"which have no class names; got {len(names)} names"
            )
        return None
    if isinstance(names, str) or not all(isinstance(x, str) for x in names):
        raise StoreError(f"label_names of {key} must be a sequence of strings, got {names!r}")
    out = list(names)
    top = int(labels.max()) if labels.size else -1
    if top >= len(out):
        raise StoreError(
            f"label_names of {key} has {len(out)} names, but the labels go up "
            f"to class id {top}: expected at least {top + 1}"
        )
    return out


def first_nonfinite(a: np.ndarray) -> int | None:
    """Row of the first NaN/inf, or None. A sum (one vectorised pass; NaN and inf propagate,
    inf - inf = NaN) screens the common all-finite case; only a non-finite sum (or an
    overflow) triggers the exact scan."""
    if not a.size:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.add.reduce(a.reshape(-1), dtype=np.float32)):
            return None
    bad = ~np.isfinite(a).all(axis=1)
    return int(np.argmax(bad)) if bad.any() else None
