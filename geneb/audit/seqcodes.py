"""Sequences as one concatenated array of 2-bit base codes, and k-mer counts per sequence.

Why: every audit check looks at bases or k-mers of many sequences; doing that in numpy over one
concatenated buffer (not a Python loop per sequence) keeps the audit of a 100,000-row task in
seconds. A, C, G, T get codes 0-3; every other character (N and the IUPAC codes) gets
``OTHER`` and ends every k-mer that would contain it (such k-mers are not counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

OTHER = 4
_LUT = np.full(256, OTHER, dtype=np.uint8)
for _i, _b in enumerate(b"ACGT"):
    _LUT[_b] = _i
    _LUT[ord(chr(_b).lower())] = _i

@dataclass(frozen=True, eq=False)
class Encoded:
    """Base codes of ``n`` sequences back to back; sequence ``i`` is
    ``codes[offsets[i]:offsets[i + 1]]``."""

    codes: np.ndarray  # uint8, 0..3 = ACGT, OTHER = anything else
    offsets: np.ndarray  # int64, n + 1

    @property
    def n(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def seq_of_position(self) -> np.ndarray:
        """For every position of ``codes``, the index of its sequence."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)


def encode(seqs: Sequence[str]) -> Encoded:
    """Encode sequences (ASCII) into one code array with offsets."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    raw = np.frombuffer("".join(seqs).encode("ascii"), dtype=np.uint8)
    return Encoded(codes=_LUT[raw], offsets=offsets)


def kmer_windows(enc: Encoded, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(start positions, k-mer codes 0..4^k-1) of every k-mer of only A/C/G/T that lies
    inside one sequence, in position order."""
    codes = enc.codes
    n_pos = len(codes) - k + 1
    if n_pos <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    valid = np.ones(n_pos, dtype=bool)
    value = np.zeros(n_pos, dtype=np.int64)
    for j in range(k):
        c = codes[j : j + n_pos]
        valid &= c < OTHER
        value = value * 4 + np.minimum(c, 3)
    # a window must end inside the sequence it starts in
    seq = enc.seq_of_position()[:n_pos]
    valid &= np.arange(n_pos) < (enc.offsets[1:] - k + 1)[seq]
    starts = np.flatnonzero(valid)
    return starts, value[starts]


#: Bases encoded at once: bounds the audit's working memory whatever the task's size.
CHUNK_BASES = 1_000_000


def chunks(seqs: Sequence[str], max_bases: int = CHUNK_BASES) -> list[tuple[int, int]]:
    """Consecutive (start, stop) row ranges holding about ``max_bases`` bases each."""
    out: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, s in enumerate(seqs):
        total += len(s)
        if total >= max_bases:
            out.append((start, i + 1))
            start, total = i + 1, 0
    if start < len(seqs):
        out.append((start, len(seqs)))
    return out


def kmer_counts(seqs: Sequence[str], k: int) -> np.ndarray:
    """(n, 4^k) int32 counts of the A/C/G/T-only k-mers of each sequence."""
    size = 4**k
    out = np.zeros((len(seqs), size), dtype=np.int32)
    for a, b in chunks(seqs):
        enc = encode(seqs[a:b])
        starts, value = kmer_windows(enc, k)
        seq = enc.seq_of_position()[starts]
        flat = np.bincount(seq * size + value, minlength=enc.n * size)
        out[a:b] = flat.reshape(enc.n, size)
    return out
