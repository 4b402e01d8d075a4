"""Store keys: (model, task, split) and the safe path segments they map to."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from geneb.errors import StoreError, UnknownNameError, did_you_mean

_SAFE = re.compile(r"[^A-Za-z0-9._+=-]+")
SPLITS_ALLOWED = re.compile(r"^[A-Za-z0-9_]+$")


def safe_name(name: str) -> str:
    """Map a model or task id to one path segment that file systems and Zarr accept.

    ``org/name`` becomes ``org--name``; other unsafe characters become ``_``. When the mapping
    was lossy or could be read two ways (the id contains ``--``, or a ``/`` next to a ``-``),
    ``~`` and a short hash of the original are appended, so two ids never share a folder.
    Path traversal (``..``, absolute paths, empty segments) is rejected, not rewritten.

    Parameters
    ----------
    name : str
        A model or task id (``org/name``, ``gue_mouse_0``).

    Returns
    -------
    str
        The path segment.
    """
    if not isinstance(name, str) or not name.strip():
        raise StoreError(f"a store key part must be a non-empty string, got {name!r}")
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts) or name.startswith(("/", "\\")) or "\\" in name:
        raise StoreError(
            f"invalid name {name!r}: path traversal or empty path segments are not allowed "
            "(expected something like 'org/model' or 'task_name')"
        )
    joined = "--".join(parts)
    safe = _SAFE.sub("_", joined)
    if safe.startswith("."):
        safe = "_" + safe[1:]
    # the plain form must decode unambiguously: "a-/b" and "a/-b" would both give "a---b"
    ambiguous = "--" in name or any(p.startswith("-") or p.endswith("-") for p in parts)
    if safe != joined or ambiguous:
        safe = f"{safe}~{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return safe


#: Between a model key and the hidden layer of an entry made with ``--layers``: ``model@L-4``.
LAYER_MARK = "@L"


def layer_key(model: str, layer: int) -> str:
    """Store key of hidden ``layer`` of ``model`` extracted with ``--layers``.

    The last layer (-1) keeps the bare model key, so a default extraction and the last layer
    of a ``--layers`` run are the same entry (and stores made before ``--layers`` stay valid);
    any other layer is ``<model>@L<layer>``, the index as given (``@L-4``, ``@L6``).

    Parameters
    ----------
    model : str
        The model's store key.
    layer : int
        The hidden layer.

    Returns
    -------
    str
        The entry's model key.
    """
    return model if int(layer) == -1 else f"{model}{LAYER_MARK}{int(layer)}"


@dataclass(frozen=True, order=True)
class StoreKey:
    """Identifies one store entry: the embeddings of one model on one split of one task."""

    model: str
    task: str
    split: str

    def __post_init__(self) -> None:
        safe_name(self.model)
        safe_name(self.task)
        if not SPLITS_ALLOWED.match(self.split):
            raise StoreError(f"invalid split name {self.split!r}: expected letters, digits or _")

    @property
    def path(self) -> str:
        """Group path inside the store: ``<safe model>/<safe task>/<split>``."""
        return f"{safe_name(self.model)}/{safe_name(self.task)}/{self.split}"

    def __str__(self) -> str:
        return f"{self.model}/{self.task}/{self.split}"


#: How many store keys a "no such key" message lists (the nearest ones; then a count).
NEAREST_KEYS = 5


def unknown_store_key(key: str, keys: Iterable[str], store: str | os.PathLike[str]
                      ) -> UnknownNameError:
    """The error for a key the store does not have.

    Parameters
    ----------
    key : str
        The key asked for (``model/task/split``).
    keys : iterable of str
        The store's keys.
    store : str or os.PathLike
        The store, as the message names it.

    Returns
    -------
    UnknownNameError
        To raise: it lists the nearest ``NEAREST_KEYS`` of the store's keys and how many more
        there are (a store can hold thousands: never all of them).
    """
    import difflib

    valid = sorted(set(keys))
    near = difflib.get_close_matches(key, valid, n=NEAREST_KEYS, cutoff=0.0)
    more = len(valid) - len(near)
    listed = ", ".join(repr(k) for k in near) if near else "(none: the store is empty)"
    tail = f" and {more:,} more (all of them: geneb store ls of {store})" if more else ""
    close = did_you_mean(key, valid)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return UnknownNameError(f"unknown store key {key!r}.{hint} Nearest of the store's "
                            f"{len(valid):,} key(s): {listed}{tail}")

