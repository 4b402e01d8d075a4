"""Writing chunk files directly: standard Zarr v3 bytes without zarr's per-chunk machinery.

A file is encoded from views of the caller's rows (crc32c computed incrementally, no
concatenation copy), preallocated, written with one ``writev`` to a temp file beside its
place and renamed there (``_files.write_buffers``: never through a symlink, umask honoured,
one-line error on a full disk).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import numpy as np

from geneb.store._files import write_buffers
from geneb.store._layout import EMPTY, Digest, Layout, as_bytes, crc32c, digest_of


def _fallocate_fn() -> Callable[[int, int, int, int], int] | None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.fallocate
        fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
        fn.restype = ctypes.c_int
        return fn
    except (OSError, AttributeError):
        return None


_FALLOCATE = _fallocate_fn() if sys.platform.startswith("linux") else None
_FALLOC_FL_KEEP_SIZE = 1


def _preallocate(fd: int, size: int) -> None:
    """Reserve the file's blocks before writing, as ``np.save`` does: the write then costs
    ~30% less kernel time (measured on ext4: 55 vs 77 ms CPU for 400 MB). Best effort."""
    if _FALLOCATE is not None and size > (1 << 20):
        _FALLOCATE(fd, _FALLOC_FL_KEEP_SIZE, 0, size)


def write_file(layout: Layout, i: int, pieces: Sequence[np.ndarray]) -> Digest:
    """Encode and write file ``i`` from C-contiguous ``pieces`` holding exactly its rows.

    No copy of the data is made: the crc is computed incrementally over the pieces and the file
    is written with ``writev`` of views. The last (partial) inner chunk is zero-padded as zarr
    does; inner chunks entirely past the end of the array are marked empty in the index.
    The file is written beside its place and renamed there (never through a symlink).
    Returns the file's position digest.
    """
    a, b = layout.rows_of(i)
    rb = layout.row_bytes
    if sum(len(p) for p in pieces) != b - a:
        raise ValueError(f"file {i} needs rows {a}..{b}, got {sum(len(p) for p in pieces)}")
    unit = layout.inner * rb
    present = -(-(b - a) // layout.inner)  # inner chunks holding at least one row
    views = [as_bytes(p) for p in pieces if len(p)]
    bufs: list[bytes | memoryview] = []
    _crc = crc32c
    crcs: list[int] = []
    vi, off = 0, 0  # position in views
    for _ in range(present):
        v = views[vi] if vi < len(views) else None
        if v is not None and off + unit <= len(v):  # common case: inside one piece
            part = v[off : off + unit]
            bufs.append(part)
            c = _crc(part)
            crcs.append(c)
            bufs.append(c.to_bytes(4, "little"))
            off += unit
            if off == len(v):
                vi, off = vi + 1, 0
            continue
        need, crc = unit, 0
        while need and vi < len(views):
            v = views[vi]
            take = min(need, len(v) - off)
            part = v[off : off + take]
            crc = _crc(part, crc)
            bufs.append(part)
            need -= take
            off += take
            if off == len(v):
                vi, off = vi + 1, 0
        if need:  # the array ends inside this inner chunk: pad with the fill value (0)
            pad = bytes(need)
            crc = _crc(pad, crc)
            bufs.append(pad)
        crcs.append(crc)
        bufs.append(crc.to_bytes(4, "little"))
    if layout.inner_rows is not None:
        idx = np.full((layout.n_inner, 2), EMPTY, dtype="<u8")
        idx[:present, 0] = np.arange(present, dtype=np.uint64) * np.uint64(unit + 4)
        idx[:present, 1] = unit + 4
        ib = idx.tobytes()
        bufs.append(ib)
        bufs.append(crc32c(ib).to_bytes(4, "little"))
    total = present * (unit + 4) + (layout.n_inner * 16 + 4 if layout.inner_rows else 0)
    write_buffers(layout.file(i), bufs, total, _preallocate)
    return digest_of(crcs)
