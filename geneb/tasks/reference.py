"""A reference genome the user supplies (``geneb tasks fetch NAME --reference FILE``).

Why: several published variant sets (TraitGym, the long-range benchmark) pin their variant
table but name a whole reference genome whose publishers give no sha256 (Ensembl's CHECKSUMS
and UCSC's md5sum.txt are not sha256), so geneb cannot download it verifiably. The user gives
a local copy instead; geneb reads it once, streaming (plain or ``.gz``), computes its sha256
for the fetched folder's provenance, and keeps only the windows the variants need, written as
``CHROM:START-END`` records (the layout ``geneb.tasks.variants`` reads). Every ``ref`` allele
is then checked against those windows when the folder is loaded, as for any variant folder.

Chromosome names are matched across the two conventions: a variant on ``1`` finds a record
``chr1`` and the other way round (``MT``/``chrM`` too); the windows keep the variant table's
names. Soft-masked (lower-case) bases are upper-cased.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from geneb.errors import TaskError

#: bases kept on each side of a variant by default (windows up to 8,192 bases fit)
DEFAULT_FLANK = 4096
#: bytes read (and decompressed) at a time
BLOCK_BYTES = 1 << 22


@dataclass(frozen=True)
class UserReference:
    """The ``--reference`` of a fetch: the file and how many flanking bases to keep."""

    path: Path
    flank: int = DEFAULT_FLANK


def chrom_aliases(name: str) -> tuple[str, ...]:
    """Names one chromosome may have in the other convention (``1`` <-> ``chr1``)."""
    bare = name[3:] if name.lower().startswith("chr") else name
    out = [name, bare, f"chr{bare}"]
    if bare.upper() in ("M", "MT"):
        out += ["M", "MT", "chrM", "chrMT"]
    return tuple(dict.fromkeys(out))


def merge_windows(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, merged 1-based inclusive intervals (overlapping or touching ones joined)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


class _Hashing:
    """A binary reader that hashes every byte read from it (the file's sha256 in one pass)."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.h = hashlib.sha256()
        self.n = 0

    def read(self, size: int = -1) -> bytes:
        block = self.f.read(size)
        self.h.update(block)
        self.n += len(block)
        return block

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def seek(self, offset: int, /) -> int:  # part of gzip's reader protocol; never needed
        raise io.UnsupportedOperation("a hashing reader is read once, front to back")

    def drain(self) -> None:
        while self.read(1 << 20):
            pass


def _blocks(path: Path, raw: _Hashing) -> Iterator[bytes]:
    """The (decompressed) bytes of the file in blocks of ``BLOCK_BYTES``."""
    gz = path.name.endswith(".gz")
    stream: Any = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
    try:
        while block := stream.read(BLOCK_BYTES):
            yield block
    except (gzip.BadGzipFile, EOFError, zlib.error, OSError) as e:
        raise TaskError(
            f"reference {path}: not a complete gzip file ({type(e).__name__}: {e}); give a "
            "plain or gzipped FASTA"
        ) from None


def _split(text: bytes) -> Iterator[tuple[str | None, bytes]]:
    """``text`` (whole lines) as ``(record name, b"")`` per header and ``(None, bases)`` per
    stretch of sequence lines, newlines and blanks removed. Why not line by line: a genome has
    50 million lines; cutting at headers keeps the work in bytes methods."""
    i = 0
    while i < len(text):
        if text[i : i + 1] == b">":
            nl = text.index(b"\n", i)
            head = text[i + 1 : nl].split(maxsplit=1)
            yield (head[0].decode("utf-8", "replace") if head else ""), b""
            i = nl + 1
        else:
            j = text.find(b"\n>", i)
            end = len(text) if j == -1 else j + 1
            yield None, text[i:end].translate(None, b"\n\r \t")
            i = end


def _pieces(path: Path, raw: _Hashing) -> Iterator[tuple[str | None, bytes]]:
    """:func:`_split` over the whole file, cut at line ends (a header never spans blocks)."""
    buf = b""
    first = True
    for block in _blocks(path, raw):
        if first and not block.lstrip().startswith(b">"):
            raise TaskError(f"reference {path}: not a FASTA file (no leading '>')")
        first = False
        buf += block
        cut = buf.rfind(b"\n")
        if cut >= 0:
            yield from _split(buf[: cut + 1])
            buf = buf[cut + 1 :]
    if first:
        raise TaskError(f"reference {path}: empty file (expected a FASTA)")
    if buf:
        yield from _split(buf + b"\n")


class _Record:
    """Collects the wanted slices of one FASTA record as its lines stream by."""

    def __init__(self, chrom: str, windows: list[tuple[int, int]]) -> None:
        self.chrom = chrom
        self.windows = windows  # 1-based inclusive, merged
        self.parts: list[list[bytes]] = [[] for _ in windows]
        self.offset = 0  # bases seen so far (0-based start of the next line)
        self.i = 0  # first window not yet complete

    def add(self, line: bytes) -> None:
        """Take the next stretch of bases (any length) of the record."""
        lo, hi = self.offset, self.offset + len(line)  # 0-based [lo, hi)
        self.offset = hi
        j = self.i
        while j < len(self.windows) and self.windows[j][0] - 1 < hi:
            start, end = self.windows[j][0] - 1, self.windows[j][1]
            if end > lo:
                self.parts[j].append(line[max(start, lo) - lo : min(end, hi) - lo])
            if end <= hi:
                self.i = j + 1
            j += 1

    def write(self, out: IO[bytes]) -> int:
        n = 0
        for (start, _), parts in zip(self.windows, self.parts, strict=True):
            seq = b"".join(parts).upper()
            if not seq:  # the window starts past the record's end
                continue
            out.write(f">{self.chrom}:{start}-{start + len(seq) - 1}\n".encode())
            for k in range(0, len(seq), 80):
                out.write(seq[k : k + 80] + b"\n")
            n += 1
        return n


def _check_once(path: Path, name: str, seen: list[str], wanted: Mapping[str, str],
                found: Mapping[str, str]) -> None:
    """Refuse a second record of one name, or of one variant chromosome under its other
    name (``1`` and ``chr1``): which one the variants refer to would be a guess."""
    chrom = wanted.get(name)
    earlier = name if name in seen else found.get(chrom) if chrom is not None else None
    if earlier is None:
        return
    where = f"(records {seen.index(earlier) + 1} and {len(seen) + 1})"
    what = (f"two records named {name!r} {where}" if earlier == name else
            f"records {earlier!r} and {name!r} {where} are both chromosome {chrom!r}")
    raise TaskError(f"reference {path}: {what}; expected one record per chromosome (which "
                    "one the variants refer to would be a guess)")


def extract_windows(
    ref: UserReference, needs: Mapping[str, list[tuple[int, int]]], out: Path
) -> dict[str, Any]:
    """Write the windows ``needs`` names (variant chromosome -> 1-based spans) from the user's
    reference FASTA into ``out``; return its provenance (path, sha256, bytes, flank, records).

    A chromosome of ``needs`` with no record in the file is an error naming it and the records
    the file has; windows are cut at a record's end (a variant beyond it is then reported by
    the variant folder's load, naming its line).
    """
    path = ref.path.expanduser()
    if not path.is_file():
        raise TaskError(f"reference {path} is not a file (expected a FASTA, plain or .gz)")
    wanted = {alias: chrom for chrom in needs for alias in chrom_aliases(chrom)}
    found: dict[str, str] = {}
    seen: list[str] = []
    current: _Record | None = None
    n_records = 0
    with path.open("rb") as f, out.open("wb") as dst:
        raw = _Hashing(f)
        for name, bases in _pieces(path, raw):
            if name is None:
                if current is not None:
                    current.add(bases)
                continue
            if current is not None:
                n_records += current.write(dst)
            _check_once(path, name, seen, wanted, found)
            seen.append(name)
            chrom = wanted.get(name)
            current = None
            if chrom is not None:
                found[chrom] = name
                current = _Record(chrom, merge_windows(list(needs[chrom])))
        if current is not None:
            n_records += current.write(dst)
        raw.drain()  # the sha256 covers the whole file, bytes after the last record too
    missing = [c for c in needs if c not in found]
    if missing:
        shown = ", ".join(seen[:8]) + (f" and {len(seen) - 8} more" if len(seen) > 8 else "")
        raise TaskError(
            f"reference {path}: no record for chromosome {missing[0]!r} (looked for "
            f"{', '.join(chrom_aliases(missing[0]))}; the file has {shown or 'no records'}); "
            "expected the genome the variant set names"
        )
    return {
        "path": str(path.resolve()),
        "sha256": raw.h.hexdigest(),
        "bytes": raw.n,
        "flank": ref.flank,
        "records": n_records,
        "chromosomes": {c: found[c] for c in needs},
    }
