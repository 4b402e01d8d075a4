"""``kmer-K``: the normalised k-mer spectrum, the model-free baseline every model must beat.

Exactly: overlapping k-mers of the sequence as given (forward strand); k-mers containing any
character other than A, C, G, T (case-sensitive) are skipped; columns in the order of
``itertools.product("ACGT", repeat=K)``; counts divided by the number of counted k-mers (all
zeros if none); float32. Vectorised over the whole batch: one ``bincount``, no per-k-mer loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from geneb.errors import ModelError
from geneb.models.embedder import ModelInfo

KMER_MIN, KMER_MAX = 1, 8
VERSION = "v1"

#: byte -> 0..3 for A, C, G, T; 4 for anything else
_LUT = np.full(256, 4, dtype=np.uint8)
for _i, _c in enumerate(b"ACGT"):
    _LUT[_c] = _i


def kmer_spectrum(sequences: Sequence[str], k: int) -> np.ndarray:
    """Normalised k-mer spectra of ``sequences``: shape ``(n, 4**k)``, float32."""
    if not KMER_MIN <= k <= KMER_MAX:
        raise ModelError(f"k-mer size must be in {KMER_MIN}..{KMER_MAX}, got {k}")
    n = len(sequences)
    width = 4**k
    out = np.zeros((n, width), dtype=np.float32)
    if n == 0:
        return out
    # One flat array; a separator byte (invalid) between sequences kills cross-boundary k-mers.
    joined = "\x00".join(sequences).encode("latin-1", errors="replace")
    codes = _LUT[np.frombuffer(joined, dtype=np.uint8)]
    lens = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=n)
    if codes.size < k:
        return out
    n_win = codes.size - k + 1
    bad = (codes == 4).astype(np.int32)
    cbad = np.concatenate([[0], np.cumsum(bad)])
    valid = (cbad[k:] - cbad[:n_win]) == 0
    c = codes.astype(np.int64)
    index = np.zeros(n_win, dtype=np.int64)
    for j in range(k):  # k <= 8 vectorised passes over the batch, not a loop per k-mer
        index = index * 4 + c[j : j + n_win]
    # window start position -> sequence id (starts are offset by one separator per sequence)
    starts = np.concatenate([[0], np.cumsum(lens + 1)[:-1]])
    seq_id = np.searchsorted(starts, np.arange(n_win), side="right") - 1
    flat = seq_id[valid] * width + index[valid]
    counts = np.bincount(flat, minlength=n * width).reshape(n, width)
    totals = counts.sum(axis=1, keepdims=True)
    np.divide(counts, np.maximum(totals, 1), out=out, casting="unsafe")
    return out


class KmerEmbedder:
    """Built-in adapter for ``kmer-K``. No parameters, no device: deterministic numpy."""

    adapter = "kmer"

    def __init__(self, k: int) -> None:  # no **kwargs: options are checked by the registry
        if not KMER_MIN <= int(k) <= KMER_MAX:
            raise ModelError(f"kmer-K needs K in {KMER_MIN}..{KMER_MAX}, got kmer-{k}")
        self.k = int(k)

    @property
    def name(self) -> str:
        return f"kmer-{self.k}"

    @property
    def dim(self) -> int:
        return int(4**self.k)

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(
            name=self.name,
            revision=f"builtin:kmer-{self.k}:{VERSION}",
            adapter=self.adapter,
            n_params=None,
            model_type="kmer",
            tokenizer="",
            pooling="kmer_spectrum",
            layer=-1,
            max_length=None,
            truncation="none",
            dtype="float32",
            device="cpu",
            extra={"k": self.k, "alphabet": "ACGT", "strand": "forward"},
        )

    def prepare(self, sequences: Sequence[str]) -> list[str]:
        return list(sequences)

    def cost(self, items: Sequence[str]) -> np.ndarray:
        return np.fromiter((max(1, len(s)) for s in items), dtype=np.int64, count=len(items))

    def embed_prepared(self, items: Sequence[str]) -> np.ndarray:
        return kmer_spectrum(items, self.k)

    def embed(self, sequences: Sequence[str]) -> np.ndarray:
        return kmer_spectrum(sequences, self.k)
