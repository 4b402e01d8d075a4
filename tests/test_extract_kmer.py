"""kmer-K against a slow, obviously-correct reference: exact equality."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from geneb.errors import GenebError
from geneb.models.adapters.kmer import kmer_spectrum
from geneb.models.registry import get_embedder


def slow_kmer(seq: str, k: int) -> np.ndarray:
    """Literal reading of the spec: count each overlapping ACGT-only k-mer, divide by total."""
    cols = ["".join(p) for p in itertools.product("ACGT", repeat=k)]
    counts = dict.fromkeys(cols, 0)
    total = 0
    for i in range(len(seq) - k + 1):
        w = seq[i : i + k]
        if all(c in "ACGT" for c in w):
            counts[w] += 1
            total += 1
    v = np.array([counts[c] for c in cols], dtype=np.float64)
    return (v / total if total else v).astype(np.float32)


CASES = [
    "ACGTACGTTTGACCA",
    "A",
    "",
    "NNNN",
    "ACGNTTACG",  # N breaks k-mers
    "acgtACGT",  # lower case is "other than A, C, G, T"
    "ACGTRYKMACGT",  # IUPAC codes skipped
    "GGGGGGGGGGGG",
    "ACGTÄCGT",  # non-ASCII character
]


@pytest.mark.parametrize("k", range(1, 9))
def test_kmer_equals_slow_reference(k: int) -> None:
    rng = np.random.default_rng(k)
    rand = ["".join(rng.choice(list("ACGTN"), size=int(n))) for n in rng.integers(0, 60, 20)]
    seqs = CASES + rand
    got = kmer_spectrum(seqs, k)
    want = np.stack([slow_kmer(s, k) for s in seqs])
    assert got.dtype == np.float32
    assert got.shape == (len(seqs), 4**k)
    np.testing.assert_array_equal(got, want)


def test_kmer_batch_independent_and_adapter() -> None:
    emb = get_embedder("kmer-3")
    seqs = ["ACGTAC", "TTTT", "ACGNAC"]
    together = emb.embed(seqs)
    alone = np.vstack([emb.embed([s]) for s in seqs])
    np.testing.assert_array_equal(together, alone)
    assert emb.dim == 64 and emb.name == "kmer-3"
    assert emb.info.n_params is None
    # rows sum to 1 where any k-mer was counted, else all zeros
    np.testing.assert_allclose(together.sum(1), [1, 1, 1], rtol=1e-6)
    assert kmer_spectrum(["NN"], 3).sum() == 0


@pytest.mark.parametrize("bad", ["kmer-0", "kmer-9", "kmer-x", "kmr-5"])
def test_bad_kmer_names(bad: str) -> None:
    with pytest.raises(GenebError):
        get_embedder(bad)
