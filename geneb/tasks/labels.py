"""Labels of a task's splits -> class ids: the one rule, for task folders and GENEB task files.

Labels are either all integers or all strings. Strings get ids in sorted order. Integers in a
task folder must be the class ids 0..K-1 (a label 1..K or a stray value is refused, naming
the row); integers in a GENEB task file (``any_ints``) may be any values, and get ids in
ascending numeric order: the order of ``np.unique`` over them, which is the class order of
GENEB's own probe code. Either way ``label_names[k]`` is the label text of class id ``k`` and
the mapping is recorded (``Task.metadata["label_mapping"]``). The union of the splits defines
the classes; every split needs two classes, and no evaluation split a class train lacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from geneb.errors import TaskError
from geneb.tasks.readers import RawSplit
from geneb.tasks.regression import targets_of
from geneb.tasks.validate import (
    RawLabels,
    check_eval_classes,
    check_label_kinds,
    check_two_classes,
    classify_labels,
)
from geneb.vocabulary import REGRESSION


def _ascending_ints(
    classified: list[RawLabels], meta: Mapping[str, Any], json_file: str
) -> tuple[list[np.ndarray], tuple[str, ...], str, dict[str, int] | None]:
    """Any integer labels -> ids in ascending order (GENEB's ``np.unique`` order)."""
    union = np.unique(np.concatenate([c.ints for c in classified]))
    k = meta.get("n_classes")
    if k is not None and k != union.size:
        raise TaskError(f"{json_file}: n_classes={k} but the labels take {union.size} values")
    ids = [np.searchsorted(union, c.ints).astype(np.int64) for c in classified]
    names = tuple(str(int(v)) for v in union)
    return ids, names, "int", {n: i for i, n in enumerate(names)}


def label_ids(
    raws: list[RawSplit], classified: list[RawLabels], meta: Mapping[str, Any], json_file: str,
    any_ints: bool = False,
) -> tuple[list[np.ndarray], tuple[str, ...], str, dict[str, int] | None]:
    """Class ids of every split, the class names, the label kind and (string labels, or any
    integers with ``any_ints``) the label -> id mapping; see the module docstring."""
    kind = check_label_kinds([(r.file, c, r.where) for r, c in zip(raws, classified, strict=True)])
    n_classes_json = meta.get("n_classes")
    if kind == "int" and any_ints:
        return _ascending_ints(classified, meta, json_file)
    if kind == "int":
        union = np.unique(np.concatenate([c.ints for c in classified]))
        k = int(n_classes_json) if n_classes_json is not None else int(union.size)
        for r, c in zip(raws, classified, strict=True):
            bad = np.flatnonzero((c.ints < 0) | (c.ints >= k))
            if bad.size:
                i = int(bad[0])
                src = (
                    f"n_classes={k} in {json_file}"
                    if n_classes_json is not None
                    else (f"{k} distinct labels over all splits")
                )
                raise TaskError(
                    f"{r.where(i)}: label {c.strs[i]!r} is not a class id 0..{k - 1} ({src}); "
                    f"integer labels must be 0..K-1"
                    + (f" ({bad.size} rows have this problem)" if bad.size > 1 else "")
                )
        if union.size != k:
            absent = sorted(set(range(k)) - set(union.tolist()))
            raise TaskError(
                f"{json_file}: n_classes={k} but class id(s) {absent} occur in no split"
            )
        names = meta.get("label_names")
        if names is not None and len(names) != k:
            raise TaskError(f"{json_file}: 'label_names' has {len(names)} names for {k} classes")
        label_names = tuple(names) if names is not None else tuple(str(i) for i in range(k))
        return [c.ints.copy() for c in classified], label_names, kind, None
    union_s = sorted(set().union(*(set(c.strs.tolist()) for c in classified)))
    if n_classes_json is not None and n_classes_json != len(union_s):
        raise TaskError(
            f"{json_file}: n_classes={n_classes_json} but the splits hold {len(union_s)} distinct "
            f"labels: {', '.join(repr(s) for s in union_s[:20])}"
        )
    names = meta.get("label_names")
    if names is not None and list(names) != union_s:
        raise TaskError(
            f"{json_file}: 'label_names' {names} must list the string labels in sorted order, "
            f"{union_s} (string labels get ids in sorted order)"
        )
    lookup = np.array(union_s, dtype=object)
    ids = [np.searchsorted(lookup, c.strs).astype(np.int64) for c in classified]
    mapping = {s: i for i, s in enumerate(union_s)}
    return ids, tuple(union_s), kind, mapping


def split_labels(
    raws: list[RawSplit], meta: Mapping[str, Any], json_file: str, task_kind_: str,
    inferred: list[str], any_ints: bool = False,
) -> tuple[list[np.ndarray], tuple[str, ...], str, dict[str, int] | None]:
    """Every split's labels, checked: float targets (regression) or class ids."""
    if task_kind_ == REGRESSION:
        return [targets_of(r) for r in raws], (), "float", None
    classified = [classify_labels(r.labels, r.where) for r in raws]
    ids, label_names, kind, mapping = label_ids(raws, classified, meta, json_file, any_ints)
    if "n_classes" not in meta:
        inferred.append("n_classes")
    if kind == "int" and "label_names" not in meta:
        inferred.append("label_names")
    for r, lab in zip(raws, ids, strict=True):
        check_two_classes(r.name, lab, r.file, label_names)
        if r.name != "train":
            check_eval_classes(raws[0].file, ids[0], r.name, lab, r.where, label_names)
    return ids, label_names, kind, mapping
