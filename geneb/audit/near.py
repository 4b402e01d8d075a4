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

from geneb.audit.seqcodes import OTHER, chunks, encode

NEAR_K = 12
NEAR_JACCARD = 0.5
N_BINS = 64
N_BANDS = 32
ROWS_PER_BAND = N_BINS // N_BANDS
BUCKET_CAP = 16
ESTIMATE_SLACK = 0.2
MAX_VERIFY = 5
#: test rows whose candidates are gathered at once (bounds the candidate arrays)
BLOCK = 4096
_VALUE_BITS = 58
_EMPTY = np.uint64(2**64 - 1)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """A fixed 64-bit mixing function (reproducible: no random seed involved)."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _window_codes(c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Forward and reverse-complement codes of every k-window of the 0..3 codes ``c``
    (length n - k + 1), built by doubling (1, 2, 4, 8, ... bases) rather than k passes:
    fwd(AB) = fwd(A) * 4^|B| + fwd(B) and rc(AB) = rc(B) * 4^|A| + rc(A)."""
    fwd = {1: c}
    rev = {1: 3 - c}
    w = 1
    while 2 * w <= k:
        n = len(c) - 2 * w + 1
        fwd[2 * w] = (fwd[w][:n] << (2 * w)) + fwd[w][w : w + n]
        rev[2 * w] = (rev[w][w : w + n] << (2 * w)) + rev[w][:n]
        w *= 2
    f, r, width = fwd[w], rev[w], w
    for part in sorted((p for p in fwd if p & (k - w)), reverse=True):
        n = len(c) - width - part + 1
        f = (f[:n] << (2 * part)) + fwd[part][width : width + n]
        r = (rev[part][width : width + n] << (2 * width)) + r[:n]
        width += part
    return f, r


def canonical_kmers(seqs: Sequence[str], k: int = NEAR_K) -> tuple[np.ndarray, np.ndarray]:
    """(row index, canonical k-mer code) of every A/C/G/T-only k-mer of ``seqs``."""
    rows, kmers = [], []
    for a, b in chunks(seqs):
        enc = encode(seqs[a:b])
        n_pos = len(enc.codes) - k + 1
        if n_pos <= 0:
            continue
        bad = np.concatenate([[0], np.cumsum(enc.codes >= OTHER)])
        valid = bad[k : k + n_pos] == bad[:n_pos]  # no N or IUPAC code in the window
        fwd, rev = _window_codes(np.minimum(enc.codes, 3).astype(np.int64), k)
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
    sk: np.ndarray = np.full(n * N_BINS, _EMPTY, dtype=np.uint64)
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


class BandIndex:
    """Per band, the train rows' band keys sorted (and the rows in that order)."""

    def __init__(self, sk_train: np.ndarray, train_ok: np.ndarray) -> None:
        rows = np.flatnonzero(train_ok)
        keys = _band_keys(sk_train[rows]).T  # (N_BANDS, m)
        order = np.argsort(keys, axis=1, kind="stable")
        self.keys = np.take_along_axis(keys, order, axis=1)
        self.rows = rows[order]


def candidate_pairs(sk_test: np.ndarray, test_rows: np.ndarray, index: BandIndex) -> np.ndarray:
    """Unique (test row, train row) pairs of ``test_rows`` that agree on a whole band."""
    kt = _band_keys(sk_test[test_rows])
    found: list[np.ndarray] = []
    for band in range(N_BANDS):
        sorted_keys, sorted_rows = index.keys[band], index.rows[band]
        q = kt[:, band]
        lo = np.searchsorted(sorted_keys, q, side="left")
        hi = np.minimum(np.searchsorted(sorted_keys, q, side="right"), lo + BUCKET_CAP)
        n_hit = hi - lo
        if not n_hit.any():
            continue
        te_rep = np.repeat(test_rows, n_hit)
        offs = np.arange(int(n_hit.sum())) - np.repeat(np.cumsum(n_hit) - n_hit, n_hit)
        tr_hit = sorted_rows[np.repeat(lo, n_hit) + offs]
        found.append(np.column_stack([te_rep, tr_hit]))
    if not found:
        return np.zeros((0, 2), np.int64)
    return np.unique(np.concatenate(found), axis=0).astype(np.int64)


def exact_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity of two sets given as sorted unique arrays."""
    inter = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - inter
    return inter / union if union else 0.0


def _kept_candidates(sk_te: np.ndarray, sk_tr: np.ndarray, eligible: np.ndarray,
                     index: BandIndex) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs whose sketch estimate reaches the slack threshold, with the estimate;
    test rows go in blocks so at most BLOCK x N_BANDS x BUCKET_CAP pairs exist at once."""
    pairs_out, est_out = [], []
    for s in range(0, len(eligible), BLOCK):
        pairs = candidate_pairs(sk_te, eligible[s : s + BLOCK], index)
        est = (sk_te[pairs[:, 0]] == sk_tr[pairs[:, 1]]).mean(axis=1)
        keep = est >= NEAR_JACCARD - ESTIMATE_SLACK
        pairs_out.append(pairs[keep])
        est_out.append(est[keep])
    if not pairs_out:
        return np.zeros((0, 2), np.int64), np.zeros(0)
    return np.concatenate(pairs_out), np.concatenate(est_out)


def near_duplicates(
    train_seqs: Sequence[str], test_seqs: Sequence[str], exclude: np.ndarray
) -> dict[str, Any]:
    """Count test rows (not in ``exclude``) with a train sequence at Jaccard >= NEAR_JACCARD."""
    sk_tr, ok_tr = sketches(train_seqs)
    sk_te, ok_te = sketches(test_seqs)
    pairs, est = _kept_candidates(sk_te, sk_tr, np.flatnonzero(ok_te & ~exclude),
                                  BandIndex(sk_tr, ok_tr))
    pairs = pairs[np.lexsort((-est, pairs[:, 0]))]  # per test row, best estimate first
    near = np.zeros(len(test_seqs), dtype=bool)
    tried: dict[int, int] = {}
    current: tuple[int, np.ndarray] = (-1, np.zeros(0, np.int64))
    for i, j in pairs.tolist():
        if near[i] or tried.get(i, 0) >= MAX_VERIFY:
            continue
        tried[i] = tried.get(i, 0) + 1
        if current[0] != i:
            current = (i, np.unique(canonical_kmers([test_seqs[i]])[1]))
        if exact_jaccard(current[1], np.unique(canonical_kmers([train_seqs[j]])[1])) \
                >= NEAR_JACCARD:
            near[i] = True
    return {
        "near": int(near.sum()),
        "not_assessable": int((~ok_te).sum()),
        "candidate_pairs": int(len(pairs)),
        "flags": near,
    }
