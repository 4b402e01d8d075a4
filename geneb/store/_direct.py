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

import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import crc32c as _crc
import numpy as np

from geneb.errors import CorruptEntryError

EMPTY = np.uint64(2**64 - 1)
IOV_MAX = 1024
_LITTLE = sys.byteorder == "little"


#: crc32c(data, value=0) -> int: the checksum Zarr's crc32c codec stores (hardware-accelerated,
#: releases the GIL on large buffers so shard threads run in parallel)
crc32c = _crc.crc32c


def _bytes_codec_ok(c: dict) -> bool:
    if c.get("name") != "bytes":
        return False
    return (c.get("configuration") or {}).get("endian", "little") == "little"


def _plain_codecs_ok(codecs: Sequence[dict]) -> bool:
    return (
        len(codecs) == 2 and _bytes_codec_ok(codecs[0]) and codecs[1].get("name") == "crc32c"
    )


@dataclass(frozen=True)
class Layout:
    """What the direct path needs to know about one row-chunked array on local disk."""

    dir: Path
    shape: tuple[int, ...]
    dtype: np.dtype
    chunk_rows: int  # rows per file (the shard when sharded)
    inner_rows: int | None  # rows per inner chunk; None when unsharded

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.shape[1:], dtype=np.int64)) * self.dtype.itemsize

    @property
    def n_rows(self) -> int:
        return self.shape[0]

    @property
    def n_files(self) -> int:
        return -(-self.n_rows // self.chunk_rows)

    @property
    def inner(self) -> int:
        """Rows per checksummed unit."""
        return self.inner_rows or self.chunk_rows

    @property
    def n_inner(self) -> int:
        return self.chunk_rows // self.inner

    def file(self, i: int) -> Path:
        return self.dir.joinpath("c", str(i), *(["0"] * (len(self.shape) - 1)))

    def rows_of(self, i: int) -> tuple[int, int]:
        a = i * self.chunk_rows
        return a, min(a + self.chunk_rows, self.n_rows)


def read_layout(array_dir: Path) -> Layout | None:
    """Parse ``zarr.json`` of an array; None when the direct path does not apply."""
    if not _LITTLE:
        return None
    try:
        meta = json.loads((array_dir / "zarr.json").read_text())
    except (OSError, ValueError):
        return None
    try:
        if meta.get("node_type") != "array" or meta.get("zarr_format") != 3:
            return None
        if meta.get("storage_transformers"):
            return None
        shape = tuple(int(s) for s in meta["shape"])
        grid = meta["chunk_grid"]
        cke = meta["chunk_key_encoding"]
        if grid["name"] != "regular" or cke["name"] != "default":
            return None
        if (cke.get("configuration") or {}).get("separator", "/") != "/":
            return None
        chunk = tuple(int(s) for s in grid["configuration"]["chunk_shape"])
        if not shape or chunk[1:] != shape[1:] or meta["fill_value"] not in (0, 0.0):
            return None
        dtype = np.dtype(meta["data_type"])
        codecs = meta["codecs"]
        if _plain_codecs_ok(codecs):
            return Layout(array_dir, shape, dtype, chunk[0], None)
        if len(codecs) != 1 or codecs[0].get("name") != "sharding_indexed":
            return None
        cfg = codecs[0]["configuration"]
        inner = tuple(int(s) for s in cfg["chunk_shape"])
        if (
            inner[1:] != shape[1:]
            or chunk[0] % inner[0]
            or not _plain_codecs_ok(cfg["codecs"])
            or not _plain_codecs_ok(cfg.get("index_codecs", []))
            or cfg.get("index_location", "end") != "end"
        ):
            return None
        return Layout(array_dir, shape, dtype, chunk[0], inner[0])
    except (KeyError, TypeError, ValueError):
        return None


# ------------------------------------------------------------------------------------ writing
def _write_all(fd: int, bufs: list) -> None:
    """``writev`` everything (IOV_MAX buffers per call, resuming after short writes)."""
    pos = 0
    while pos < len(bufs):
        batch = bufs[pos : pos + IOV_MAX]
        want = sum(len(b) for b in batch)
        got = os.writev(fd, batch)
        pos += len(batch)
        if got != want:  # short write (rare on regular files): finish this batch byte-wise
            rest = b"".join(bytes(b) for b in batch)[got:]
            while rest:
                rest = rest[os.write(fd, rest) :]


def _as_bytes(a: np.ndarray) -> memoryview:
    return memoryview(a).cast("B")


def write_file(layout: Layout, i: int, pieces: Sequence[np.ndarray]) -> None:
    """Encode and write file ``i`` from C-contiguous ``pieces`` holding exactly its rows.

    No copy of the data is made: the crc is computed incrementally over the pieces and the file
    is written with ``writev`` of views. The last (partial) inner chunk is zero-padded as zarr
    does; inner chunks entirely past the end of the array are marked empty in the index.
    """
    a, b = layout.rows_of(i)
    rb = layout.row_bytes
    if sum(len(p) for p in pieces) != b - a:
        raise ValueError(f"file {i} needs rows {a}..{b}, got {sum(len(p) for p in pieces)}")
    unit = layout.inner * rb
    present = -(-(b - a) // layout.inner)  # inner chunks holding at least one row
    views = [_as_bytes(p) for p in pieces if len(p)]
    bufs: list = []
    _crc = crc32c
    vi, off = 0, 0  # position in views
    for _ in range(present):
        v = views[vi] if vi < len(views) else None
        if v is not None and off + unit <= len(v):  # common case: inside one piece
            part = v[off : off + unit]
            bufs.append(part)
            bufs.append(_crc(part).to_bytes(4, "little"))
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
        bufs.append(crc.to_bytes(4, "little"))
    if layout.inner_rows is not None:
        idx = np.full((layout.n_inner, 2), EMPTY, dtype="<u8")
        idx[:present, 0] = np.arange(present, dtype=np.uint64) * np.uint64(unit + 4)
        idx[:present, 1] = unit + 4
        ib = idx.tobytes()
        bufs.append(ib)
        bufs.append(crc32c(ib).to_bytes(4, "little"))
    path = layout.file(i)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        _write_all(fd, bufs)
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------ reading
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
        return os.open(layout.file(i), os.O_RDONLY)
    except FileNotFoundError:
        a, b = layout.rows_of(i)
        raise _corrupt(layout, i, f"chunk file for rows {a}..{b} missing") from None


def read_file_into(layout: Layout, i: int, out: np.ndarray) -> None:
    """Read file ``i`` into ``out`` (its rows, C-contiguous), checking every crc32c."""
    a, b = layout.rows_of(i)
    rb, r = layout.row_bytes, layout.inner
    unit = r * rb
    present = -(-(b - a) // r)
    dst = _as_bytes(out)
    if len(dst) != (b - a) * rb:
        raise ValueError("output does not match the file's rows")
    fd = _open(layout, i)
    try:
        if layout.inner_rows is not None:
            idx = _read_index(layout, i, fd)
            offsets = idx[:present, 0].astype(np.int64)
        else:
            idx = np.zeros((present, 2), dtype="<u8")
            offsets = np.zeros(1, dtype=np.int64)
        tail = (b - a) - (present - 1) * r  # valid rows in the last unit
        pad = bytearray((r - tail) * rb) if tail < r else None
        crcb = [bytearray(4) for _ in range(present)]
        parts: list[list] = []
        for j in range(present):
            lo = j * unit
            seg = [dst[lo : lo + (tail * rb if j == present - 1 else unit)]]
            if j == present - 1 and pad is not None:
                seg.append(pad)
            seg.append(crcb[j])
            parts.append(seg)
        expected = np.arange(present, dtype=np.int64) * (unit + 4)
        contiguous = bool((offsets == expected).all())
        if contiguous:
            bufs = [x for seg in parts for x in seg]
            want = present * (unit + 4)
            got = 0
            pos = 0
            while pos < len(bufs):
                batch = bufs[pos : pos + IOV_MAX]
                n = os.preadv(fd, batch, got)
                got += n
                pos += len(batch)
                if n != sum(len(x) for x in batch):
                    break
            if got != want:
                raise _corrupt(layout, i, f"truncated file ({got} of {want} bytes)")
        else:
            for j, seg in enumerate(parts):
                if idx[j, 0] == EMPTY:  # zarr's "all fill value": zeros, nothing to check
                    np.frombuffer(seg[0], dtype=np.uint8)[:] = 0
                    continue
                if os.preadv(fd, seg, int(offsets[j])) != unit + 4:
                    raise _corrupt(layout, i, f"truncated inner chunk {j}")
        for j, seg in enumerate(parts):
            if idx[j, 0] == EMPTY:
                continue
            crc = crc32c(seg[0])
            if len(seg) == 3:
                crc = crc32c(seg[1], crc)
            if crc != int.from_bytes(seg[-1], "little"):
                row = a + j * r
                raise _corrupt(layout, i, f"checksum mismatch for rows {row}..{min(row + r, b)}")
    finally:
        os.close(fd)


_pool: tuple[int, ThreadPoolExecutor] | None = None


def pool() -> ThreadPoolExecutor:
    """A process-wide I/O thread pool (recreated after fork; starting threads per call costs
    milliseconds on a loaded machine)."""
    global _pool
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)), "geneb-io"))
    return _pool[1]


def parallel(fn, items: Sequence) -> None:
    """Run ``fn`` over ``items`` on the I/O pool (inline when there is only one item)."""
    import threading

    nested = threading.current_thread().name.startswith("geneb-io")  # never wait on own pool
    if len(items) < 2 or (os.cpu_count() or 1) < 2 or nested:
        for it in items:
            fn(it)
        return
    for f in [pool().submit(fn, it) for it in items]:
        f.result()


def _pool_size(nbytes: int, n_files: int) -> int:
    if n_files < 2 or nbytes < (8 << 20):
        return 1
    return max(1, min(4, os.cpu_count() or 1, n_files))


def read_all(layout: Layout, out: np.ndarray | None = None) -> np.ndarray:
    """The whole array, every checksum verified (files read in parallel threads)."""
    if out is None:
        out = np.empty(layout.shape, dtype=layout.dtype)
    if not layout.n_rows:
        return out

    def one(i: int) -> None:
        a, b = layout.rows_of(i)
        read_file_into(layout, i, out[a:b])

    if _pool_size(out.nbytes, layout.n_files) == 1:
        for i in range(layout.n_files):
            one(i)
    else:
        parallel(one, range(layout.n_files))
    return out


def verify_file(layout: Layout, i: int, scratch: np.ndarray | None = None) -> None:
    """Read file ``i`` into scratch memory and check it; raises CorruptEntryError."""
    a, b = layout.rows_of(i)
    shape = (b - a, *layout.shape[1:])
    if scratch is None or scratch.nbytes < (b - a) * layout.row_bytes:
        scratch = np.empty(shape, dtype=layout.dtype)
    buf = scratch.reshape(-1)[: int(np.prod(shape))].reshape(shape)
    read_file_into(layout, i, buf)


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


def read_rows(layout: Layout, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` (any order, repeats allowed), reading only the inner chunks that hold them."""
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
            for u in us:
                j = u - i * layout.n_inner
                off = int(idx[j, 0]) if idx is not None else 0
                if idx is not None and idx[j, 0] == EMPTY:  # zarr's "all fill value"
                    buf[:] = 0
                    buf[-4:] = np.frombuffer(crc32c(buf[:-4]).to_bytes(4, "little"), np.uint8)
                elif os.preadv(fd, [buf], off) != unit + 4:
                    raise _corrupt(layout, i, f"truncated inner chunk {j}")
                if crc32c(buf[:-4]) != int(buf[-4:].view("<u4")[0]):
                    raise _corrupt(layout, i, f"checksum mismatch for rows {u * r}..{u * r + r}")
                chunk = buf[:-4].view(layout.dtype).reshape(r, -1)
                lo = np.searchsorted(sorted_units, u, side="left")
                hi = np.searchsorted(sorted_units, u, side="right")
                sel = order[lo:hi]
                flat[sel] = chunk[rows[sel] - u * r]
        finally:
            os.close(fd)
    return out


# ------------------------------------------------------------------------------- metadata
# Zarr v3 metadata documents, written directly for local stores (each zarr API call costs
# ~2 ms of event-loop round trips; creating an entry took ~30 ms that way). The documents are
# exactly what zarr-python writes for the same arrays; the tests read them back with zarr.
_CRC_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]


def group_meta(attrs: dict) -> dict:
    return {"attributes": attrs, "zarr_format": 3, "consolidated_metadata": None,
            "node_type": "group"}


def array_meta(shape: tuple[int, ...], dtype: str, chunk_rows: int, inner_rows: int | None) -> dict:
    rest = list(shape[1:])
    if inner_rows is None:
        codecs: list = _CRC_CODECS
    else:
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [inner_rows, *rest], "codecs": _CRC_CODECS,
            "index_codecs": _CRC_CODECS, "index_location": "end"}}]
    return {
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk_rows, *rest]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0 if np.dtype(dtype).kind == "f" else 0,
        "codecs": codecs,
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }


def _tmp_for(path: Path) -> Path:
    import threading

    return path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.partial")


def write_json(path: Path, obj: dict, *, exclusive: bool = False) -> bool:
    """Atomically write a JSON document (temp file + rename). ``exclusive``: only if ``path``
    does not exist yet (hard link, so racing creators never clobber each other); returns
    whether this call created it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_for(path)
    tmp.write_text(json.dumps(obj, indent=2, allow_nan=False))
    if not exclusive:
        os.replace(tmp, path)
        return True
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)


def read_json(path: Path) -> dict | None:
    """A metadata document, None when absent; CorruptEntryError when unreadable."""
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise CorruptEntryError(f"unreadable metadata {path}: {e}") from e
