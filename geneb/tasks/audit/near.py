"""Near-duplicates from test into train: k-mer MinHash with LSH banding, verified exactly.

A test row is a near-duplicate when some train sequence shares a Jaccard similarity of at
least ``NEAR_JACCARD`` (0.5) between their sets of canonical ``NEAR_K``-mers (12-mers; a
k-mer and its reverse complement count as one, so a near copy on the other strand is found
too). Rows already counted as exact or reverse-complement copies are not counted again.

How, without comparing every pair (which is quadratic: 10^10 pairs for 100,000 rows):

1. each sequence gets a one-permutation MinHash sketch of ``N_BINS`` (64) bins: every
   canonical k-mer is hashed once (splitmix64), the top 6 bits pick a bin, the bin keeps the
   minimum; empty bins borrow the next non-empty bin (rotation densification), so two sketches
   agree in a bin with probability ~ their Jaccard similarity;
2. LSH banding: ``N_BANDS`` (32) bands of ``ROWS_PER_BAND`` (2) bins; a (test, train) pair is a
   candidate when one whole band agrees. A pair at Jaccard J becomes a candidate with
   probability 1 - (1 - J^2)^32: 0.9999 at J = 0.5, so the threshold is far above the banding's
   own (~0.18); a bucket contributes at most ``BUCKET_CAP`` train rows per band;
3. candidates whose sketch estimate reaches ``NEAR_JACCARD - ESTIMATE_SLACK`` are verified
   with the EXACT Jaccard of the two k-mer sets, best estimate first (up to ``MAX_VERIFY`` per
   test row), so a count never includes a pair below the threshold.

Sequences without a single A/C/G/T-only 12-mer cannot be assessed and are counted apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.tasks.audit.seqcodes import OTHER, chunks, encode

NEAR_K = 12
NEAR_JACCARD = 0.5
N_BINS = 64
N_BANDS = 32
ROWS_PER_BAND = N_BINS // N_BANDS
BUCKET_CAP = 16
ESTIMATE_SLACK = 0.2
MAX_VERIFY = 5
_VALUE_BITS = 58
_EMPTY = np.uint64(2**64 - 1)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """A fixed 64-bit mixing function (reproducible: no random seed involved)."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def canonical_kmers(seqs: Sequence[str], k: int = NEAR_K) -> tuple[np.ndarray, np.ndarray]:
    """(row index, canonical k-mer code) of every A/C/G/T-only k-mer of ``seqs``."""
    rows, kmers = [], []
    for a, b in chunks(seqs):
        enc = encode(seqs[a:b])
        codes = enc.codes
        n_pos = len(codes) - k + 1
        if n_pos <= 0:
            continue
        valid = np.ones(n_pos, dtype=bool)
        fwd = np.zeros(n_pos, dtype=np.int64)
        rev = np.zeros(n_pos, dtype=np.int64)
        for j in range(k):
            c = codes[j : j + n_pos]
            valid &= c < OTHER
            c3 = np.minimum(c, 3).astype(np.int64)
            fwd = fwd * 4 + c3
            rev += (3 - c3) << (2 * j)
        seq = enc.seq_of_position()[:n_pos]
        valid &= np.arange(n_pos) < (enc.offsets[1:] - k + 1)[seq]
        pos = np.flatnonzero(valid)
        rows.append(seq[pos] + a)
        kmers.append(np.minimum(fwd[pos], rev[pos]))
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(kmers)


def sketches(seqs: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(n, N_BINS) uint64 densified one-permutation MinHash sketches, and which rows have any
    k-mer (rows without one are all-empty and must not be compared)."""
    n = len(seqs)
    sk = np.full(n * N_BINS, _EMPTY, dtype=np.uint64)
    for a, b in chunks(seqs):
        rows, kmers = canonical_kmers(seqs[a:b])
        h = _splitmix64(kmers)
        bins = (h >> np.uint64(_VALUE_BITS)).astype(np.int64)
        vals = h & np.uint64((1 << _VALUE_BITS) - 1)
        np.minimum.at(sk, (rows + a) * N_BINS + bins, vals)
    sk = sk.reshape(n, N_BINS)
    has = (sk != _EMPTY).any(axis=1)
    for a in range(0, n, 8192):  # in blocks: the densification temporaries stay small
        sk[a : a + 8192] = _densify(sk[a : a + 8192])
    sk[~has] = _EMPTY
    return sk, has


def _densify(sk: np.ndarray) -> np.ndarray:
    """Rotation densification: an empty bin takes the next non-empty bin's value (circularly)
    plus its distance in the top bits, so equal k-mer sets still give equal sketches."""
    full = sk != _EMPTY
    idx = np.where(np.concatenate([full, full], axis=1), np.arange(2 * N_BINS), 4 * N_BINS)
    nxt = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1][:, :N_BINS]
    dist = (nxt - np.arange(N_BINS)).astype(np.uint64)
    dense = sk[np.arange(len(sk))[:, None], np.minimum(nxt, 2 * N_BINS - 1) % N_BINS]
    return np.where(full, sk, dense + (dist << np.uint64(_VALUE_BITS)))


def _band_keys(sk: np.ndarray) -> np.ndarray:
    """(n, N_BANDS) uint64 hash of each band's bins."""
    parts = sk.reshape(len(sk), N_BANDS, ROWS_PER_BAND)
    key = np.zeros(parts.shape[:2], dtype=np.uint64)
    for r in range(ROWS_PER_BAND):
        key = _splitmix64(key ^ parts[:, :, r])
    return key


def candidate_pairs(sk_test: np.ndarray, sk_train: np.ndarray, test_ok: np.ndarray,
                    train_ok: np.ndarray) -> np.ndarray:
    """Unique (test row, train row) pairs that agree on at least one whole band."""
    kt, kr = _band_keys(sk_test), _band_keys(sk_train)
    tr_rows = np.flatnonzero(train_ok)
    te_rows = np.flatnonzero(test_ok)
    found: list[np.ndarray] = []
    for band in range(N_BANDS):
        keys = kr[tr_rows, band]
        order = np.argsort(keys, kind="stable")
        sorted_keys, sorted_rows = keys[order], tr_rows[order]
        q = kt[te_rows, band]
        lo = np.searchsorted(sorted_keys, q, side="left")
        hi = np.minimum(np.searchsorted(sorted_keys, q, side="right"), lo + BUCKET_CAP)
        n_hit = hi - lo
        if not n_hit.any():
            continue
        te_rep = np.repeat(te_rows, n_hit)
        offs = np.arange(int(n_hit.sum())) - np.repeat(np.cumsum(n_hit) - n_hit, n_hit)
        tr_hit = sorted_rows[np.repeat(lo, n_hit) + offs]
        found.append(te_rep.astype(np.int64) * len(sk_train) + tr_hit)
    if not found:
        return np.zeros((0, 2), np.int64)
    flat = np.unique(np.concatenate(found))
    return np.column_stack([flat // len(sk_train), flat % len(sk_train)])


def exact_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity of two sets given as sorted unique arrays."""
    inter = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - inter
    return inter / union if union else 0.0


def near_duplicates(
    train_seqs: Sequence[str], test_seqs: Sequence[str], exclude: np.ndarray
) -> dict[str, Any]:
    """Count test rows (not in ``exclude``) with a train sequence at Jaccard >= NEAR_JACCARD."""
    sk_tr, ok_tr = sketches(train_seqs)
    sk_te, ok_te = sketches(test_seqs)
    pairs = candidate_pairs(sk_te, sk_tr, ok_te & ~exclude, ok_tr)
    est = np.zeros(len(pairs))
    for s in range(0, len(pairs), 100_000):
        p = pairs[s : s + 100_000]
        est[s : s + len(p)] = (sk_te[p[:, 0]] == sk_tr[p[:, 1]]).mean(axis=1)
    keep = est >= NEAR_JACCARD - ESTIMATE_SLACK
    pairs, est = pairs[keep], est[keep]
    order = np.lexsort((-est, pairs[:, 0]))
    pairs = pairs[order]
    sets: dict[tuple[str, int], np.ndarray] = {}

    def kset(which: str, i: int) -> np.ndarray:
        if (which, i) not in sets:
            seq = test_seqs[i] if which == "test" else train_seqs[i]
            sets[(which, i)] = np.unique(canonical_kmers([seq])[1])
        return sets[(which, i)]

    near = np.zeros(len(test_seqs), dtype=bool)
    tried: dict[int, int] = {}
    for i, j in pairs.tolist():
        if near[i] or tried.get(i, 0) >= MAX_VERIFY:
            continue
        tried[i] = tried.get(i, 0) + 1
        if exact_jaccard(kset("test", i), kset("train", j)) >= NEAR_JACCARD:
            near[i] = True
    return {
        "near": int(near.sum()),
        "not_assessable": int((~ok_te).sum()),
        "candidate_pairs": int(len(pairs)),
        "flags": near,
    }
