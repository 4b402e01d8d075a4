"""Store verification: every entry's metadata, chunks and positions; every folder's metadata;
every symlink.

Why a folder scan besides the entries: an entry whose ``zarr.json`` was deleted or broken (or
whose model folder lost its ``zarr.json``) silently disappears from every listing, so checking
only the listed entries says "all OK" about a store that lost data.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from geneb.errors import CorruptEntryError
from geneb.store import _files
from geneb.store.entry_io import ARRAYS, check_spec, recorded_digests
from geneb.store.keys import StoreKey

if TYPE_CHECKING:
    from geneb.store.entry_io import EntryIO

Problem = tuple["StoreKey | str", str]


def verify_entry(io: EntryIO, key: StoreKey, attrs: dict[str, Any]) -> None:
    """Read every chunk of a complete entry: metadata against attributes, checksums, position
    digests, finite embeddings. Raises ``CorruptEntryError``."""
    where = f"{io.location}/{key.path}"
    for name in ARRAYS:
        spec = check_spec(key, name, io.spec(key, name), attrs, where)
        expect = recorded_digests(attrs, name, spec)
        scratch = np.empty((min(spec.chunk_rows, max(spec.shape[0], 1)), *spec.shape[1:]),
                           dtype=spec.dtype)
        for i in range(spec.n_files):
            block, _ = io.verify_file(key, name, spec, i, scratch,
                                      None if expect is None else expect[i])
            if name == "embeddings" and not np.isfinite(block).all():
                bad = spec.rows_of(i)[0] + int(np.argwhere(~np.isfinite(block))[0][0])
                raise CorruptEntryError(f"non-finite embedding at row {bad}")


def verify_store(io: EntryIO, keys: Sequence[StoreKey] | None) -> list[Problem]:
    """Problems found (empty = all good). ``keys=None``: every entry plus the folder scan."""
    problems: list[Problem] = []
    if keys is None:
        problems.extend(io.scan())
        try:
            keys = io.keys(complete_only=False)
        except CorruptEntryError as e:  # zarr stores: a member's metadata is unreadable
            return [*problems, (io.location, str(e))]
    for key in keys:
        try:
            attrs = io.attrs(key)
        except CorruptEntryError as e:
            problems.append((key, f"corrupt: {e}"))
            continue
        if attrs is None:
            problems.append((key, "missing"))
            continue
        if attrs.get("complete") is not True:
            n = attrs.get("n_rows", "?")
            problems.append((key, f"incomplete ({attrs.get('rows_written', 0)}/{n} rows)"))
            continue
        try:
            verify_entry(io, key, attrs)
        except CorruptEntryError as e:
            problems.append((key, f"corrupt: {e}"))
    return problems


def _holds_files(d: Path) -> bool:
    for _, _, files in os.walk(d):
        if any(not f.endswith(".partial") for f in files):
            return True
    return False


def scan_folder(root: Path) -> list[tuple[str, str]]:
    """Symlinks anywhere, and store folders (model, task, entry levels) whose ``zarr.json``
    is missing, unreadable or not what that level needs."""
    problems: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel = here.relative_to(root).as_posix()
        depth = 0 if rel == "." else rel.count("/") + 1
        for name in sorted(dirnames + filenames):
            p = here / name
            if p.is_symlink():
                problems.append((p.relative_to(root).as_posix(),
                                 f"is a symlink (to {os.readlink(p)}); the store never follows "
                                 "links: replace it with the real file or folder"))
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not (here / d).is_symlink())
        if not 1 <= depth <= 3:
            continue
        level = ("model", "task", "entry")[depth - 1]
        try:
            meta = _files.read_json(here / "zarr.json")
        except CorruptEntryError as e:
            problems.append((rel, f"broken {level} metadata: {e}"))
            continue
        if meta is None:
            if _holds_files(here):
                problems.append((rel, f"{level} folder without metadata (zarr.json missing): "
                                      "zarr and `geneb store ls` do not see what it holds"))
            continue
        if meta.get("node_type") != "group" or not isinstance(meta.get("attributes"), dict):
            problems.append((rel, f"broken {level} metadata: {here / 'zarr.json'} is not Zarr "
                                  "group metadata"))
            continue
        if depth == 3 and "n_rows" not in meta["attributes"] and set(os.listdir(here)) - {
                "zarr.json"}:
            problems.append((rel, "entry metadata without entry attributes (n_rows, "
                                  "provenance): the entry is not listed"))
    return problems
