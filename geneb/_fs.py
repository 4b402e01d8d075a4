"""Atomic file writes and the advisory file lock: the one implementation every package uses.

Why one place: the store, the results table, task and model fetches, VEP tables and the report
all need "a reader sees the old file or the new one, never half of one", and a lock that the
kernel releases when its holder dies. Each write goes to a fresh temp file *in the destination
folder* (same file system, so the final step is a rename), created with
``O_CREAT|O_EXCL|O_NOFOLLOW`` and mode 0o666 minus the umask, and is then renamed over the
target: a rename replaces a symlink itself, never its target, so no write goes through a link.
``durable`` writes also ``fsync`` the file before the rename and the folder after it (the
results table and tables a user keeps); the store skips that per chunk file because its entries
are checksummed, resumable and marked complete only at the end.

Functions here raise plain ``OSError``; callers turn it into their own one-line error (the
store's ``StoreError``, the results table's ``GenebError``) naming what they were writing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

#: buffers per ``writev``/``preadv`` call (the POSIX minimum of IOV_MAX)
IOV_MAX = 1024
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: suffix of every temp file this module makes (``.<name>.<pid>-<tid>.partial``)
TEMP_SUFFIX = ".partial"


def temp_path(path: Path) -> Path:
    """The temp file of ``path`` for this process and thread (a dot-file beside it)."""
    return path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}{TEMP_SUFFIX}")


def is_temp(name: str) -> bool:
    """True for a temp file name made by :func:`temp_path` (a killed writer's leftover)."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def _create(tmp: Path) -> int:
    """A new regular file at ``tmp`` (never a symlink); a leftover of ours is replaced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | _CLOEXEC
    try:
        return os.open(tmp, flags, 0o666)
    except FileExistsError:  # a killed writer's leftover with our pid and thread id
        os.unlink(tmp)
        return os.open(tmp, flags, 0o666)


def _unlink_quiet(p: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(p)


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: some file systems refuse)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_all(fd: int, bufs: Sequence[bytes | memoryview], total: int) -> None:
    """``writev`` everything (IOV_MAX buffers per call; a short write, rare on regular files,
    is finished with plain writes). A single buffer goes through plain writes only."""
    done = 0
    if len(bufs) != 1:
        for k in range(0, len(bufs), IOV_MAX):
            done += os.writev(fd, bufs[k : k + IOV_MAX])
            if done == total:
                return
            if done != sum(len(b) for b in bufs[: k + IOV_MAX]):  # short write
                break
    rest = memoryview(b"".join(bytes(b) for b in bufs)[done:] if len(bufs) != 1 else bufs[0])
    while len(rest):
        rest = rest[os.write(fd, rest) :]


def _publish(tmp: Path, path: Path, exclusive: bool) -> bool:
    """Rename ``tmp`` over ``path`` (``exclusive``: hard-link it, only if ``path`` is absent)."""
    if not exclusive:
        os.replace(tmp, path)
        return True
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(path):  # no hard links here: racy but still atomic per write
            return False
        os.replace(tmp, path)
        return True


def write_buffers(path: Path, bufs: Sequence[bytes | memoryview], total: int, *,
                  exclusive: bool = False, durable: bool = False,
                  preallocate: Callable[[int, int], None] | None = None) -> bool:
    """Write ``bufs`` (``total`` bytes, one ``writev``) to ``path`` atomically.

    ``exclusive``: create ``path`` only if it does not exist (hard link, so racing creators
    never clobber each other); returns whether this call wrote it. Nothing is left behind on
    failure."""
    tmp = temp_path(path)
    try:
        fd = _create(tmp)
        try:
            if preallocate is not None:
                preallocate(fd, total)
            _write_all(fd, bufs, total)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        done = _publish(tmp, path, exclusive)
        if durable:
            fsync_dir(path.parent)
        return done
    finally:
        _unlink_quiet(tmp)  # gone after a rename; removes a link's source or a failed write


def write_bytes(path: Path, data: bytes, *, exclusive: bool = False,
                durable: bool = False) -> bool:
    """Write ``data`` to ``path`` atomically (see :func:`write_buffers`)."""
    return write_buffers(path, [data], len(data), exclusive=exclusive, durable=durable)


def write_with(path: Path, write: Callable[[Path], None], *, durable: bool = True,
               tmp: Path | None = None) -> None:
    """Let ``write(tmp)`` fill a fresh temp file beside ``path`` (pyarrow, pandas, a download),
    then fsync and rename it over ``path``; on any failure (``write`` raising included) the
    temp file is removed and ``path`` is as it was. The temp file is created here first, so the
    writer never follows a planted link. ``tmp``: a caller's own temp name in ``path``'s folder
    (the task cache names its partials after the owning process)."""
    tmp = temp_path(path) if tmp is None else tmp
    try:
        os.close(_create(tmp))
        write(tmp)
        if durable:
            fd = os.open(tmp, os.O_RDONLY | NOFOLLOW)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
        if durable:
            fsync_dir(path.parent)
    finally:
        _unlink_quiet(tmp)


def remove_temps(folder: Path, prefix: str = ".") -> None:
    """Delete temp files killed writers left in ``folder`` (names starting with ``prefix``).
    Only call this while holding the lock that keeps live writers of ``folder`` away."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if is_temp(name) and name.startswith(prefix):
            _unlink_quiet(folder / name)


@contextlib.contextmanager
def file_lock(path: Path, *, wait: bool = True, folder: bool = False) -> Iterator[int]:
    """Hold an exclusive advisory ``flock`` on ``path``; yields the locked descriptor.

    ``folder``: lock the folder itself (no lock file appears anywhere); otherwise ``path`` is a
    lock file, created if missing (mode 0o666 minus the umask). ``wait=False`` raises
    ``BlockingIOError`` at once when another open file holds it. The kernel releases the lock
    when the holder exits, SIGKILL included. ``flock`` is per open file: two holders in one
    process exclude each other only through separate opens, which this does on every call."""
    import fcntl  # POSIX only; imported here so the module itself loads everywhere

    if folder:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    else:
        fd = os.open(path, os.O_CREAT | os.O_RDWR | _CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        yield fd
    finally:
        os.close(fd)  # releases the flock
