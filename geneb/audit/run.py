"""Audit one loaded task: duplicates, near-duplicates, composition twins, shortcuts, verdict.

The record (a JSON-able dict) has at least the keys of ``geneb tasks audit --json`` (see
docs/tasks.md); the counts are over the loaded task (sequences upper-cased, a train split over
100,000 rows subsampled as for probing), comparing the test split with the train split.
"""

from __future__ import annotations

import time
from typing import Any

from geneb.audit.composition import composition_twins
from geneb.audit.duplicates import across_splits, within_split
from geneb.audit.near import NEAR_JACCARD, NEAR_K, near_duplicates
from geneb.audit.shortcuts import SHORTCUT_C, SHORTCUTS, shortcut_mccs
from geneb.audit.verdict import verdict
from geneb.tasks.spec import Task

#: Bumped whenever a definition changes, so cached audits of the old definition are not used.
AUDIT_VERSION = 1


def _valid_copies(task: Task) -> dict[str, dict[str, int]] | None:
    """With a valid split: its rows copied (either strand) from train, and test rows copied
    from it (the split probes never train on, but model selection may)."""
    if "valid" not in task.splits:
        return None
    tr, va, te = task.split("train"), task.split("valid"), task.split("test")
    out = {}
    for name, (a, b) in {"valid_in_train": (tr, va), "test_in_valid": (va, te)}.items():
        d = across_splits(a.sequences, a.labels, b.sequences, b.labels)
        out[name] = {"exact": d["exact"], "label_conflicts": d["label_conflicts"],
                     "revcomp": d["revcomp"]}
    return out


def audit_task(task: Task) -> dict[str, Any]:
    """Run every check on ``task`` and return its audit record (no caching here)."""
    t0 = time.perf_counter()
    train, test = task.split("train"), task.split("test")
    k = task.spec.n_classes
    dup = across_splits(train.sequences, train.labels, test.sequences, test.labels)
    near = near_duplicates(train.sequences, test.sequences, exclude=dup["copied"])
    twins = composition_twins(train.sequences, train.labels, test.sequences, test.labels, k)
    by_regime = shortcut_mccs(train, test, k, task.name)
    full = by_regime["full"]
    best = max(SHORTCUTS, key=lambda s: full[s])
    record: dict[str, Any] = {
        "task": task.name,
        "category": task.spec.category,
        "n_train": len(train),
        "n_test": len(test),
        "exact_duplicates_across_splits": dup["exact"],
        "label_conflicts_across_splits": dup["label_conflicts"],
        "revcomp_duplicates_across_splits": dup["revcomp"],
        "revcomp_label_conflicts_across_splits": dup["revcomp_label_conflicts"],
        "near_duplicates_across_splits": near["near"],
        "near_duplicates_not_assessable": near["not_assessable"],
        "composition_twins_across_splits": twins["twins"],
        "composition_twin_opposite_label": twins["opposite"],
        "composition_twin_opposite_label_fraction": round(twins["opposite_fraction"], 6),
        "shortcut_mcc": {s: full[s] for s in SHORTCUTS},
        "shortcut_mcc_by_regime": by_regime,
        "best_shortcut": best,
        "best_shortcut_mcc": full[best],
        "within_split": {
            name: within_split(s.sequences, s.labels) for name, s in task.splits.items()
        },
        "valid_split": _valid_copies(task),
        "fingerprints": task.fingerprints(),
        "settings": {
            "near_k": NEAR_K,
            "near_jaccard": NEAR_JACCARD,
            "shortcut_probe": f"linear, C={SHORTCUT_C}, standardised, fast backend",
            "audit_version": AUDIT_VERSION,
        },
    }
    record["verdict"], record["reasons"] = verdict(record)
    record["seconds"] = round(time.perf_counter() - t0, 3)
    return record
