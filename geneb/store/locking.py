"""Per-entry write locks that leave nothing in the Zarr hierarchy.

Why this design: a lock file or lock folder inside the store is listed by zarr as a member of
its group ("not recognized as a component of a Zarr hierarchy" warnings for every reader). So
for local stores the lock is an advisory ``flock`` (:func:`geneb._fs.file_lock`) on the entry's
own group *directory*: no extra file, released by the kernel when the holder dies (SIGKILL
included), and honoured by every process on the machine. The writer never removes that
directory while holding it (an overwrite deletes the arrays inside, not the group), and a lock
taken on a directory that was replaced in the meantime is detected by comparing inodes. Within
one process an in-memory registry gives the same exclusion (``flock`` is per open file, so two
writers in one process would otherwise both succeed), which also covers in-process stores such
as ``memory://``. Remote fsspec stores get only the in-process lock (documented limitation).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from geneb._fs import file_lock
from geneb.errors import EntryLockedError

_registry_lock = threading.Lock()
_held: set[tuple[str, str]] = set()


@contextlib.contextmanager
def entry_lock(store_id: str, key_path: str, what: str, group_dir: Path | None) -> Iterator[None]:
    """Hold the exclusive lock of one entry; raise EntryLockedError at once if it is taken."""
    token = (store_id, key_path)
    with _registry_lock:
        if token in _held:
            raise EntryLockedError(
                f"{what} is already being written in this process; finish that writer first"
            )
        _held.add(token)
    try:
        if group_dir is None:
            yield
            return
        group_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            try:
                fd = stack.enter_context(file_lock(group_dir, wait=False, folder=True))
            except BlockingIOError:
                raise EntryLockedError(
                    f"{what} is being written by another process (it holds a lock on "
                    f"{group_dir}); wait for it to finish, or write a different key"
                ) from None
            held, now = os.fstat(fd), _stat(group_dir)
            if now is None or (now.st_ino, now.st_dev) != (held.st_ino, held.st_dev):
                raise EntryLockedError(
                    f"{what} was deleted or replaced by another process while locking; retry"
                )
            yield
    finally:
        with _registry_lock:
            _held.discard(token)


def _stat(p: Path) -> os.stat_result | None:
    try:
        return os.stat(p)
    except FileNotFoundError:
        return None
