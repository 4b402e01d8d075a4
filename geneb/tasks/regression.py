"""Regression tasks: ``task.json`` says ``"kind": "regression"`` and labels are real numbers.

Why a separate kind: a continuous target (expression level, a variant's function score) is not
a class id, and rounding it into classes would silently throw the measurement away. The
labels of every split must be finite numbers (a missing, non-numeric or infinite value is an
error naming the file and row). ``n_classes`` and ``label_names`` do not apply and are refused.
A train split over the row cap is subsampled uniformly (no classes to stratify), seeded by the
task name like classification tasks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from geneb.errors import TaskError
from geneb.tasks.readers import RawSplit
from geneb.vocabulary import CLASSIFICATION, REGRESSION, SEQUENCE_TASK_KINDS


def task_kind(meta: Mapping[str, Any], json_file: str) -> str:
    """The task's kind from its task.json (default classification), checked."""
    kind = meta.get("kind", CLASSIFICATION)
    if not isinstance(kind, str) or kind not in SEQUENCE_TASK_KINDS:
        kinds = ", ".join(map(repr, SEQUENCE_TASK_KINDS))
        raise TaskError(f"{json_file}: field 'kind' must be one of {kinds}, got {kind!r}")
    if kind == REGRESSION:
        for key in ("n_classes", "label_names"):
            if key in meta:
                raise TaskError(f"{json_file}: field {key!r} does not apply to a regression "
                                "task (its labels are real numbers)")
    return kind


def targets_of(raw: RawSplit) -> np.ndarray:
    """The float64 targets of one split, or an error naming the first bad row."""
    s = pd.Series(np.asarray(raw.labels, dtype=object), dtype=object)
    num: npt.NDArray[np.float64] = pd.to_numeric(
        s.astype(str).str.strip(), errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~np.isfinite(num))
    if bad.size:
        i = int(bad[0])
        more = f" ({bad.size} rows have this problem)" if bad.size > 1 else ""
        raise TaskError(f"{raw.where(i)}: label {s.iloc[i]!r} is not a finite number "
                        f"(regression task: expected a real-valued target){more}")
    if raw.name == "train" and len(num) > 1 and np.all(num == num[0]):
        raise TaskError(f"{raw.file}: every train target is {num[0]!r}; a regression probe "
                        "needs targets that vary")
    return num


def cap_targets(
    seed: int, sequences: Sequence[str], targets: np.ndarray, rows: np.ndarray, cap: int | None
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, dict[str, Any] | None]:
    """A uniform, seeded subsample of ``cap`` train rows (file order kept), or all rows."""
    if cap is None or len(sequences) <= cap:
        return tuple(sequences), targets, rows, None
    keep = np.sort(np.random.default_rng(seed).choice(len(sequences), size=cap, replace=False))
    record = {"split": "train", "original_rows": len(sequences), "kept_rows": int(cap),
              "cap": cap, "seed": seed, "method": "uniform (regression task)"}
    return tuple(sequences[i] for i in keep.tolist()), targets[keep], rows[keep], record


def target_summary(targets: np.ndarray) -> dict[str, float]:
    """Range and moments of one split's targets (task metadata, ``geneb tasks`` listings)."""
    t = np.asarray(targets, dtype=np.float64)
    return {"min": float(t.min()), "max": float(t.max()), "mean": float(t.mean()),
            "std": float(t.std())}
