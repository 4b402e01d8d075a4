"""Composition twins: test rows whose k-mer composition (k = 1, 2) equals a train row's.

A dinucleotide-preserving shuffle keeps a sequence's length, base counts and dinucleotide
counts; benchmarks that build negatives by shuffling positives therefore put, for a test
sequence, a train sequence of the opposite label at composition distance 0. For each test row
the nearest train rows by the composition vector (length, 4 base counts, 16 dinucleotide
counts) are found exactly: a twin is a train row at distance 0 whose sequence differs from
the test row's (an exact copy is a duplicate, counted by ``duplicates``). Rows at distance 0
are found by grouping identical vectors (exact, linear time) rather than a tree search.

``twins`` = test rows with at least one twin in train; ``opposite`` = test rows with a twin
of a different label; ``opposite_fraction`` = opposite / test rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.audit.seqcodes import kmer_counts


def composition_vectors(seqs: Sequence[str]) -> np.ndarray:
    """(n, 21) int64: length, A/C/G/T counts, the 16 dinucleotide counts."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    return np.column_stack([lengths, kmer_counts(seqs, 1), kmer_counts(seqs, 2)]).astype(np.int64)


def composition_twins(
    train_seqs: Sequence[str],
    train_labels: np.ndarray,
    test_seqs: Sequence[str],
    test_labels: np.ndarray,
    n_classes: int,
) -> dict[str, Any]:
    """Twin counts of the test rows (see the module docstring)."""
    n_tr, n_te = len(train_seqs), len(test_seqs)
    vec = np.concatenate([composition_vectors(train_seqs), composition_vectors(test_seqs)])
    _, group = np.unique(vec, axis=0, return_inverse=True)
    group = group.ravel()
    g_tr, g_te = group[:n_tr], group[n_tr:]
    # train rows per (group, label) and train copies per (sequence, label)
    per_label = np.zeros((int(group.max()) + 1 if len(group) else 0, n_classes), dtype=np.int64)
    np.add.at(per_label, (g_tr, np.asarray(train_labels, dtype=np.int64)), 1)
    copies = Counter(zip(train_seqs, train_labels.tolist(), strict=True))
    y_te = np.asarray(test_labels, dtype=np.int64)
    twins = opposite = 0
    for i, (s, y) in enumerate(zip(test_seqs, y_te.tolist(), strict=True)):
        row = per_label[g_te[i]]
        if not row.any():
            continue
        same_copies = [copies.get((s, c), 0) for c in range(n_classes)]
        others = row - np.asarray(same_copies)  # twins: same composition, another sequence
        if others.sum() > 0:
            twins += 1
            if others.sum() - others[y] > 0:
                opposite += 1
    return {
        "twins": twins,
        "opposite": opposite,
        "opposite_fraction": opposite / n_te if n_te else 0.0,
    }
