"""Direct chunk I/O for local stores: standard Zarr v3 bytes, written and read without zarr's
per-chunk machinery.

Why: zarr-python's codec pipeline costs about half the throughput of ``np.save``/``np.load`` and
~40 ms for 20 random rows (see ../shared/notes/baseline-measurements.md). For the two layouts the
store creates, the on-disk encoding is simple enough to produce and check directly:

* unsharded ``[bytes(little), crc32c]``: a chunk file is the raw little-endian chunk followed by
  the 4-byte crc32c of those bytes;
* ``sharding_indexed`` with inner ``[bytes(little), crc32c]`` and index ``[bytes(little),
  crc32c]`` at the end: a shard file is the encoded inner chunks followed by an index of
  ``(offset, nbytes)`` uint64 pairs per inner chunk (``2**64-1`` = empty) and its crc32c.

Files are written with one ``writev`` (no concatenation copy) and read with ``preadv`` straight
into the output array; every inner chunk's crc32c is checked before its rows are returned.
Anything else (remote stores, other codecs, big-endian hosts) goes through zarr itself.
Chunks are split along rows only (chunk shape covers all trailing dimensions).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from geneb._fs import IOV_MAX
from geneb.errors import CorruptEntryError
from geneb.store._direct_write import write_file as write_file  # part of this module's API
from geneb.store._files import open_read
from geneb.store._layout import (  # Layout, layout_from_meta: this module's API too
    EMPTY,
    Digest,
    as_bytes,
    crc32c,
    digest_of,
)
from geneb.store._layout import Layout as Layout
from geneb.store._layout import layout_from_meta as layout_from_meta
from geneb.store._pool import parallel


def _corrupt(layout: Layout, i: int, what: str) -> CorruptEntryError:
    return CorruptEntryError(f"{what} in {layout.file(i)}")


def _read_index(layout: Layout, i: int, fd: int, strict: bool = False) -> np.ndarray:
    """(offset, nbytes) per inner chunk, checked against its crc32c; raises CorruptEntryError.

    An empty entry (2**64-1) means "fill value" in zarr (zarr skips all-zero chunks); geneb's
    writer never leaves one, so ``strict`` (used right after writing) refuses them."""
    n = layout.n_inner
    size = os.fstat(fd).st_size
    ilen = n * 16 + 4
    if size < ilen:
        raise _corrupt(layout, i, f"truncated shard ({size} bytes, index needs {ilen})")
    raw = os.pread(fd, ilen, size - ilen)
    if len(raw) != ilen or crc32c(raw[:-4]) != int.from_bytes(raw[-4:], "little"):
        raise _corrupt(layout, i, "shard index checksum mismatch")
    idx = np.frombuffer(raw[:-4], dtype="<u8").reshape(n, 2)
    present = -(-(layout.rows_of(i)[1] - layout.rows_of(i)[0]) // layout.inner)
    unit = layout.inner * layout.row_bytes + 4
    body = idx[:present]
    empty = body[:, 0] == EMPTY
    if strict and empty.any():
        j = int(np.argmax(empty))
        row = i * layout.chunk_rows + j * layout.inner
        raise _corrupt(layout, i, f"inner chunk {j} (rows from {row}) missing")
    body = body[~empty]
    if (body[:, 1] != unit).any() or (body[:, 0] + body[:, 1] > size - ilen).any():
        raise _corrupt(layout, i, "shard index points outside the file or to wrong-sized chunks")
    return idx


def _open(layout: Layout, i: int) -> int:
    try:
        return open_read(layout.file(i))
    except FileNotFoundError:
        a, b = layout.rows_of(i)
        raise _corrupt(layout, i, f"chunk file for rows {a}..{b} missing") from None
    except CorruptEntryError:
        raise
    except OSError as e:
        raise _corrupt(layout, i, f"unreadable chunk file ({e.strerror or e})") from e


def _position_error(layout: Layout, i: int) -> CorruptEntryError:
    a, b = layout.rows_of(i)
    return _corrupt(layout, i, f"chunk file does not belong at this position (rows {a}..{b}): "
                               "its digest differs from the one recorded when the entry was "
                               "completed (files swapped or replaced)")


def read_file_into(layout: Layout, i: int, out: np.ndarray, expect: Digest | None = None
                   ) -> Digest:
    """Read file ``i`` into ``out`` (its rows, C-contiguous), checking every crc32c, and
    ``expect`` (the digest recorded for position ``i``) when given; returns the digest.

    The data lands directly in ``out`` (``preadv`` scatters each inner chunk there and its
    checksum into a side buffer); then every chunk's crc32c is recomputed and compared."""
    a, b = layout.rows_of(i)
    rb, r = layout.row_bytes, layout.inner
    unit = r * rb
    present = -(-(b - a) // r)
    dst = as_bytes(out)
    if len(dst) != (b - a) * rb:
        raise ValueError("output does not match the file's rows")
    tail = (b - a) - (present - 1) * r  # valid rows in the last unit
    pad = bytearray((r - tail) * rb) if tail < r else None
    data = [dst[j * unit : (j + 1) * unit] for j in range(present)]  # last one may be short
    crc_buf = bytearray(4 * present)
    crc_mv = memoryview(crc_buf)
    fd = _open(layout, i)
    try:
        if layout.inner_rows is not None:
            idx = _read_index(layout, i, fd)
            offsets = idx[:present, 0]
        else:
            offsets = np.zeros(1, dtype="<u8")
        empty = offsets == EMPTY
        stride = np.uint64(unit + 4)
        if not empty.any() and (offsets == np.arange(present, dtype=np.uint64) * stride).all():
            bufs: list[memoryview | bytearray] = []
            for j in range(present):
                bufs.append(data[j])
                bufs.append(crc_mv[4 * j : 4 * j + 4])
            if pad is not None:
                bufs.insert(len(bufs) - 1, pad)
            want, got = present * (unit + 4), 0
            for k in range(0, len(bufs), IOV_MAX):
                n = os.preadv(fd, bufs[k : k + IOV_MAX], got)
                got += n
                if n == 0:
                    break
            if got != want:
                raise _corrupt(layout, i, f"truncated file ({got} of {want} bytes)")
        else:  # chunks out of order, or left empty by zarr (fill value: zeros, no checksum)
            for j in range(present):
                if empty[j]:
                    np.frombuffer(data[j], dtype=np.uint8)[:] = 0
                    continue
                seg: list[memoryview | bytearray] = [
                    data[j], *([pad] if j == present - 1 and pad is not None else []),
                    crc_mv[4 * j : 4 * j + 4]]
                if os.preadv(fd, seg, int(offsets[j])) != unit + 4:
                    raise _corrupt(layout, i, f"truncated inner chunk {j}")
    finally:
        os.close(fd)
    computed = [crc32c(v) for v in data]
    if pad is not None:
        computed[-1] = crc32c(pad, computed[-1])
    stored = np.frombuffer(crc_buf, dtype="<u4")
    bad = (np.array(computed, dtype=np.uint32) != stored) & ~empty
    if bad.any():
        j = int(np.argmax(bad))
        row = a + j * r
        raise _corrupt(layout, i, f"checksum mismatch for rows {row}..{min(row + r, b)}")
    digest = digest_of(computed)
    if expect is not None and tuple(expect) != digest:
        raise _position_error(layout, i)
    return digest


def _pool_size(nbytes: int, n_files: int) -> int:
    if n_files < 2 or nbytes < (8 << 20):
        return 1
    return max(1, min(4, os.cpu_count() or 1, n_files))


def read_all(layout: Layout, out: np.ndarray | None = None,
             expect: Sequence[Digest] | None = None) -> np.ndarray:
    """The whole array, every checksum (and each file's recorded digest, when given)
    verified; files are read in parallel threads."""
    if out is None:
        out = np.empty(layout.shape, dtype=layout.dtype)
    if not layout.n_rows:
        return out

    def one(i: int) -> None:
        a, b = layout.rows_of(i)
        read_file_into(layout, i, out[a:b], None if expect is None else expect[i])

    if _pool_size(out.nbytes, layout.n_files) == 1:
        for i in range(layout.n_files):
            one(i)
    else:
        parallel(one, range(layout.n_files))
    return out


def verify_file(layout: Layout, i: int, scratch: np.ndarray | None = None,
                expect: Digest | None = None) -> Digest:
    """Read file ``i`` into scratch memory and check it; returns its digest (raises
    CorruptEntryError)."""
    a, b = layout.rows_of(i)
    shape = (b - a, *layout.shape[1:])
    if scratch is None or scratch.nbytes < (b - a) * layout.row_bytes:
        scratch = np.empty(shape, dtype=layout.dtype)
    buf = scratch.reshape(-1)[: int(np.prod(shape))].reshape(shape)
    return read_file_into(layout, i, buf, expect)


def check_index(layout: Layout, i: int) -> None:
    """Cheap structural check of file ``i``: present, right size, valid index."""
    fd = _open(layout, i)
    try:
        a, b = layout.rows_of(i)
        present = -(-(b - a) // layout.inner)
        body = present * (layout.inner * layout.row_bytes + 4)
        if layout.inner_rows is not None:
            _read_index(layout, i, fd, strict=True)
            body += layout.n_inner * 16 + 4
        size = os.fstat(fd).st_size
        if size != body:
            raise _corrupt(layout, i, f"file has {size} bytes, expected {body}")
    finally:
        os.close(fd)


def read_rows(layout: Layout, rows: np.ndarray, expect: Sequence[Digest] | None = None
              ) -> np.ndarray:
    """Rows ``rows`` (any order, repeats allowed), reading only the inner chunks that hold them.

    With ``expect`` (recorded digests), each file touched is tied to its position by the
    crc32c of its first inner chunk (4 more bytes read per file)."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty((len(rows), *layout.shape[1:]), dtype=layout.dtype)
    if not len(rows):
        return out
    rb, r = layout.row_bytes, layout.inner
    unit = r * rb
    units = rows // r
    order = np.argsort(units, kind="stable")
    sorted_units = units[order]
    flat = out.reshape(len(rows), -1)
    by_file: dict[int, list[int]] = {}
    for u in np.unique(units):
        by_file.setdefault(int(u) * r // layout.chunk_rows, []).append(int(u))
    buf = np.empty(unit + 4, dtype=np.uint8)
    for i, us in by_file.items():
        fd = _open(layout, i)
        try:
            idx = _read_index(layout, i, fd) if layout.inner_rows is not None else None
            if expect is not None:
                _check_first(layout, i, fd, idx, int(expect[i][1]))
            for u in us:
                j = u - i * layout.n_inner
                off = int(idx[j, 0]) if idx is not None else 0
                if idx is not None and idx[j, 0] == EMPTY:  # zarr's "all fill value"
                    buf[:] = 0
                    buf[-4:] = np.frombuffer(crc32c(buf[:-4].data).to_bytes(4, "little"), np.uint8)
                elif os.preadv(fd, [buf.data], off) != unit + 4:
                    raise _corrupt(layout, i, f"truncated inner chunk {j}")
                if crc32c(buf[:-4].data) != int(buf[-4:].view("<u4")[0]):
                    raise _corrupt(layout, i, f"checksum mismatch for rows {u * r}..{u * r + r}")
                chunk = buf[:-4].view(layout.dtype).reshape(r, -1)
                lo = np.searchsorted(sorted_units, u, side="left")
                hi = np.searchsorted(sorted_units, u, side="right")
                sel = order[lo:hi]
                flat[sel] = chunk[rows[sel] - u * r]
        finally:
            os.close(fd)
    return out


def _check_first(layout: Layout, i: int, fd: int, idx: np.ndarray | None, want: int) -> None:
    """Compare the stored crc32c of file ``i``'s first inner chunk with the recorded one."""
    unit = layout.inner * layout.row_bytes
    if idx is not None and idx[0, 0] == EMPTY:
        got = crc32c(bytes(unit))
    else:
        off = (int(idx[0, 0]) if idx is not None else 0) + unit
        raw = os.pread(fd, 4, off)
        if len(raw) != 4:
            raise _corrupt(layout, i, "truncated first inner chunk")
        got = int.from_bytes(raw, "little")
    if got != want:
        raise _position_error(layout, i)
