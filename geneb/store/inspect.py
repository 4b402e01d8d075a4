"""What ``geneb store ls|info|export`` read from a store, by entry names."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from geneb.constraints import validate_params
from geneb.store.feature_store import FeatureStore
from geneb.store.keys import StoreKey, unknown_store_key

StoreLike = str | os.PathLike[str] | FeatureStore


def _open(store: StoreLike) -> FeatureStore:
    return store if isinstance(store, FeatureStore) else FeatureStore(store, "r")


def existing_key(store: FeatureStore, model: str, task: str, split: str) -> StoreKey:
    """The key of an entry the store has; else an error naming the nearest keys."""
    key = StoreKey(model, task, split)
    if store.status(key) == "missing":
        raise unknown_store_key(str(key), (str(k) for k in store.keys()), store.path)
    return key


@validate_params({})
def list_entries(store: StoreLike) -> tuple[list[tuple[StoreKey, dict[str, Any]]],
                                            list[tuple[str, str]]]:
    """Every entry with its information, and the problems outside the listed entries.

    Parameters
    ----------
    store : str, os.PathLike or FeatureStore
        The feature store (a folder or fsspec URL).

    Returns
    -------
    entries : list of (StoreKey, dict)
        Each key with ``FeatureStore.info``: status, shape, dtype, rows written, problem.
    problems : list of (str, str)
        (where, what) for damage no listed entry shows (``FeatureStore.scan``).
    """
    fs = _open(store)
    return [(key, fs.info(key)) for key in fs.keys()], fs.scan()


@validate_params({})
def entry_info(store: StoreLike, model: str, task: str, split: str) -> dict[str, Any]:
    """One entry's status, shape, chunking and provenance.

    Parameters
    ----------
    store : str, os.PathLike or FeatureStore
        The feature store.
    model, task, split : str
        The entry's names (an unknown entry is an error naming the nearest keys).

    Returns
    -------
    dict
        ``FeatureStore.info`` of the entry (``status`` is ``"corrupt"`` for a damaged one).
    """
    fs = _open(store)
    return fs.info(existing_key(fs, model, task, split))


@validate_params({})
def export_named_entry(store: StoreLike, model: str, task: str, split: str, fmt: str,
                       out: str | os.PathLike[str]) -> tuple[Path, StoreKey]:
    """Export one complete entry (checksums verified) to an ``.npz`` or ``.parquet`` file.

    Parameters
    ----------
    store : str, os.PathLike or FeatureStore
        The feature store.
    model, task, split : str
        The entry's names.
    fmt : str
        ``"npz"`` or ``"parquet"`` (:data:`geneb.store.export.FORMATS`).
    out : str or os.PathLike
        The file to write (all or nothing).

    Returns
    -------
    (Path, StoreKey)
        The file written and the entry's key.
    """
    from geneb.errors import unknown_name
    from geneb.store.export import FORMATS, export_entry

    if fmt not in FORMATS:
        raise unknown_name("export format", fmt, FORMATS)
    fs = _open(store)
    key = existing_key(fs, model, task, split)
    return export_entry(fs, key, fmt, out), key  # type: ignore[arg-type]


@validate_params({})
def verify_entries(store: StoreLike) -> tuple[int, list[tuple[Any, str]]]:
    """Check every chunk's checksum of every entry, and the folders no entry lists.

    Parameters
    ----------
    store : str, os.PathLike or FeatureStore
        The feature store.

    Returns
    -------
    n_entries : int
        The entries the store lists (0 when they cannot be listed: the problems say why).
    problems : list of (where, what)
        ``where`` a StoreKey for a damaged entry, a string for anything else.
    """
    from geneb.errors import CorruptEntryError

    fs = _open(store)
    try:
        n_entries = len(fs.keys())
    except CorruptEntryError:
        n_entries = 0  # verify reports why the entries cannot be listed
    return n_entries, fs.verify()  # every entry, plus broken metadata and symlinks
