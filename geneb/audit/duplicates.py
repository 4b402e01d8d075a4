"""Exact and reverse-complement duplicates, within each split and from test into train.

Definitions (docs/tasks.md, "Auditing a task"), on the loaded task (sequences upper-cased):

- within a split: ``duplicate_rows`` = rows whose sequence occurred on an earlier row of the
  same split; ``label_conflicts`` = distinct sequences that carry more than one label there;
- across splits: ``exact`` = test rows whose sequence occurs in train; ``label_conflicts`` =
  of those, the rows whose label differs from the label of at least one train occurrence;
- ``revcomp`` = test rows that are not exact duplicates but whose reverse complement occurs in
  train (so exact + revcomp is the number of test rows with a copy on either strand);
  ``revcomp_label_conflicts`` = of those, the rows whose label differs from the label of at
  least one train occurrence of the reverse complement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.dna import reverse_complement


def labels_by_sequence(seqs: Sequence[str], labels: np.ndarray) -> dict[str, set[int]]:
    """Every distinct sequence and the set of labels it carries."""
    out: dict[str, set[int]] = {}
    for s, y in zip(seqs, labels.tolist(), strict=True):
        out.setdefault(s, set()).add(y)
    return out


def within_split(seqs: Sequence[str], labels: np.ndarray) -> dict[str, int]:
    """Duplicate rows and conflicting sequences inside one split."""
    by_seq = labels_by_sequence(seqs, labels)
    return {
        "rows": len(seqs),
        "duplicate_rows": len(seqs) - len(by_seq),
        "label_conflicts": sum(len(v) > 1 for v in by_seq.values()),
    }


def across_splits(
    train_seqs: Sequence[str],
    train_labels: np.ndarray,
    test_seqs: Sequence[str],
    test_labels: np.ndarray,
) -> dict[str, Any]:
    """Test rows with an exact / reverse-complement copy in train (see the module docstring).

    Also returns ``copied`` (bool per test row: a copy on either strand), which the
    near-duplicate check uses to keep the three counts disjoint.
    """
    train = labels_by_sequence(train_seqs, train_labels)
    copied = np.zeros(len(test_seqs), dtype=bool)
    exact = conflicts = revcomp = rc_conflicts = 0
    for i, (s, y) in enumerate(zip(test_seqs, test_labels.tolist(), strict=True)):
        labs = train.get(s)
        if labs is not None:
            exact += 1
            conflicts += bool(labs - {y})
            copied[i] = True
            continue
        labs = train.get(reverse_complement(s))
        if labs is not None:
            revcomp += 1
            rc_conflicts += bool(labs - {y})
            copied[i] = True
    return {"exact": exact, "label_conflicts": conflicts, "revcomp": revcomp,
            "revcomp_label_conflicts": rc_conflicts, "copied": copied}
