"""Load and validate a task folder into a ``Task``.

A task folder holds one source per split: ``train`` and ``test`` are required, ``valid`` is
optional. Each split may come in exactly one of these forms (two forms of one split is an error,
so nothing is picked silently):

``<split>.csv``
    Columns ``sequence`` and ``label`` (other columns are ignored and listed in the metadata).
``<split>.parquet``
    Same columns as the csv.
``<split>.fa`` / ``<split>.fasta`` / ``<split>.fna`` (one FASTA per split, label in the header)
    The label is the value of a ``label=VALUE`` token in the header (``>seq17 label=1``), or, if
    there is none, the last ``|``-separated field of the record id (``>seq17|1``).
``<split>/`` (a directory with one FASTA file per class)
    ``train/promoter.fa``, ``train/background.fa``: the label is the file name without its
    extension. Records are numbered across the files in sorted file-name order.

An optional ``task.json`` gives metadata: ``name``, ``category`` (one of ``CATEGORIES``),
``n_classes``, ``source``, ``license``, ``description``, ``label_names`` (for integer labels),
``n_train`` / ``n_valid`` / ``n_test`` (checked against the files). Missing metadata is inferred:
the name from the folder, the classes from the labels, the category becomes ``uncategorized``.

Labels are either all integers, which must be the class ids 0..K-1 (unless task.json says
``"integer_labels": "any"``: any integers, ids in ascending order, as fetched tasks keep their
source's labels; :mod:`geneb.tasks.labels`), or all strings, which are mapped to ids in sorted
order (the mapping is in ``Task.metadata["label_mapping"]`` and
``TaskSpec.label_names``). The union of the splits defines the classes; every split needs two
classes. Sequences are upper-cased (the number of affected rows is recorded) and must use ACGTN
plus the IUPAC codes. ``SplitData.rows`` index the records of the split's source (0-based), also
after a train split over the row cap was subsampled.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from geneb.errors import TaskError, unknown_name
from geneb.protocol import TRAIN_ROW_CAP, UNCATEGORIZED, stratified_positions
from geneb.tasks.labels import split_labels
from geneb.tasks.readers import RawSplit, read_raw_split
from geneb.tasks.regression import cap_targets, target_summary, task_kind
from geneb.tasks.sampling import SUBSAMPLE_METHOD, name_seed
from geneb.tasks.spec import (
    CATEGORIES,
    SplitData,
    Task,
    TaskSpec,
    split_fingerprint,
    typed_task,
)
from geneb.tasks.validate import check_class_files, check_sequences
from geneb.vocabulary import REGRESSION

SPLIT_ORDER = ("train", "valid", "test")
REQUIRED_SPLITS = ("train", "test")
TASK_JSON = "task.json"
#: task.json ``integer_labels``: ``class_ids`` (the default: integers must be 0..K-1) or
#: ``any`` (any integers, ids in ascending order; fetched tasks, whose labels are the source's)
INTEGER_LABELS = ("class_ids", "any")


# --------------------------------------------------------------------------- metadata


def read_task_json(folder: Path) -> dict[str, Any]:
    """The folder's task.json as a dict ({} if absent), with field types checked."""
    path = folder / TASK_JSON
    if not path.is_file():
        return {}
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TaskError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(meta, dict):
        raise TaskError(f"{path}: expected a JSON object, got {type(meta).__name__}")
    for key in ("name", "category", "source", "license", "description"):
        if key in meta and not isinstance(meta[key], str):
            raise TaskError(f"{path}: field {key!r} must be a string, got {meta[key]!r}")
    for key in ("n_classes", "n_train", "n_valid", "n_test"):
        v = meta.get(key)
        if key in meta and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise TaskError(f"{path}: field {key!r} must be a non-negative integer, got {v!r}")
    if "label_names" in meta and not (
        isinstance(meta["label_names"], list)
        and all(isinstance(x, str) for x in meta["label_names"])
    ):
        raise TaskError(f"{path}: field 'label_names' must be a list of strings")
    if "synthetic" in meta and not isinstance(meta["synthetic"], bool):
        raise TaskError(
            f"{path}: field 'synthetic' must be true or false, got {meta['synthetic']!r}"
        )
    if meta.get("integer_labels", INTEGER_LABELS[0]) not in INTEGER_LABELS:
        raise TaskError(f"{path}: field 'integer_labels' must be one of {list(INTEGER_LABELS)}, "
                        f"got {meta['integer_labels']!r}")  # fmt: skip
    cat = meta.get("category")
    if cat is not None and cat not in CATEGORIES:
        raise TaskError(f"{path}: field 'category': {unknown_name('category', cat, CATEGORIES)}")
    return meta


def check_task_name(name: str, where: str) -> str:
    """The one rule for a task name, wherever it comes from (a folder, task.json, the catalogue).

    A name becomes part of store keys, file and folder names: keep it plain. A leading ``.``
    is refused because hidden folders are skipped when tasks are listed or resolved (and the
    cache's temporary folders are hidden), a leading ``~`` because a name so written is read
    as a path: either task would be fetched, then never found.
    """
    plain = (
        name
        and not name.startswith((".", "~"))
        and "/" not in name
        and "\\" not in name
        and name == name.strip()
        and name.isprintable()
    )
    if not plain:
        raise TaskError(
            f"{where}: invalid task name {name!r} (expected a plain name: no leading '.' or "
            f"'~', no slashes, no surrounding spaces or control characters)"
        )
    return name


# --------------------------------------------------------------------------- assembling


def _readonly(a: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=dtype)
    a.flags.writeable = False
    return a


def make_split(
    name: str, sequences: tuple[str, ...], labels: np.ndarray, rows: np.ndarray, source_file: str
) -> SplitData:
    """A SplitData with read-only arrays and its fingerprint (shared with synthetic tasks):
    int64 class ids, or float64 targets when ``labels`` are floating (regression tasks)."""
    labels = _readonly(labels, np.float64 if np.asarray(labels).dtype.kind == "f" else np.int64)
    return SplitData(
        name=name,
        sequences=tuple(sequences),
        labels=labels,
        rows=_readonly(rows),
        fingerprint=split_fingerprint(sequences, labels),
        source_file=source_file,
    )


def cap_train_split(
    task_name: str,
    sequences: tuple[str, ...],
    labels: np.ndarray,
    rows: np.ndarray,
    cap: int | None,
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, dict[str, Any] | None]:
    """Subsample a train split over ``cap`` rows (stratified, seeded by the task name)."""
    if cap is None or len(sequences) <= cap:
        return sequences, labels, rows, None
    n_classes = int(np.unique(labels).size)
    if cap < n_classes:
        raise TaskError(
            f"train_row_cap={cap} is below the number of classes ({n_classes}) of task "
            f"{task_name!r}; a stratified subsample keeps at least one row per class"
        )
    seed = name_seed(task_name)
    keep = stratified_positions(labels, np.arange(len(labels), dtype=np.int64), cap=cap,
                                n_classes=int(np.max(labels)) + 1,
                                rng=np.random.default_rng(seed))
    record = {
        "split": "train",
        "original_rows": len(sequences),
        "kept_rows": int(keep.size),
        "cap": cap,
        "seed": seed,
        "method": SUBSAMPLE_METHOD,
    }
    return tuple(sequences[i] for i in keep.tolist()), labels[keep], rows[keep], record


def load_task_folder(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    train_row_cap: int | None = TRAIN_ROW_CAP,
) -> Task:
    """Load, validate and normalise a task folder (formats: see the module docstring).

    ``train_row_cap`` (default: the GENEB cap of 100,000) limits the train split by stratified,
    deterministic subsampling; ``None`` keeps every row.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise TaskError(f"{folder}: task folder not found (expected a directory)")
    folder = folder.resolve()
    meta = read_task_json(folder)
    json_file = str(folder / TASK_JSON)
    inferred: list[str] = []
    if name is None:
        name = meta.get("name")
        if name is None:
            name = folder.name
            inferred.append("name")
    check_task_name(name, str(folder))

    return assemble_task(folder, name, _read_splits(folder), meta, json_file, inferred,
                         train_row_cap, any_int_labels=meta.get("integer_labels") == "any")


def assemble_task(
    path: Path,
    name: str,
    raws: list[RawSplit],
    meta: dict[str, Any],
    json_file: str,
    inferred: list[str],
    train_row_cap: int | None,
    *,
    any_int_labels: bool = False,
    extra_metadata: dict[str, Any] | None = None,
) -> Task:
    """A validated ``Task`` from the raw splits read at ``path`` (a task folder, or a GENEB
    task file: :mod:`geneb.tasks.geneb_csv`); ``meta`` as a task.json gives it.

    Every check a task folder gets happens here: sequences, labels (``any_int_labels``: any
    integers, ids in ascending order, see :mod:`geneb.tasks.labels`), stated sizes, the
    train-row cap. Rows keep their order in the source. ``extra_metadata`` is added to
    ``Task.metadata`` (what the source's format records).
    """
    checked = [check_sequences(r.sequences, r.where) for r in raws]
    task_kind_ = task_kind(meta, json_file)
    ids, label_names, kind, mapping = split_labels(raws, meta, json_file, task_kind_, inferred,
                                                   any_int_labels)  # fmt: skip
    for r in raws:
        expected = meta.get(f"n_{r.name}")
        if expected is not None and expected != len(r.sequences):
            raise TaskError(
                f"{json_file}: n_{r.name}={expected} but {r.file} has {len(r.sequences)} rows"
            )
    category = meta.get("category")
    if category is None:
        category = UNCATEGORIZED
        inferred.append("category")
    splits, subsampled = _capped_splits(name, raws, checked, ids, task_kind_, train_row_cap)
    k = len(label_names)
    metadata = _metadata(
        path, raws, checked, splits, k, task_kind_, meta, inferred,
        label_type=kind, label_mapping=mapping, subsampled=subsampled,
    )  # fmt: skip
    metadata.update(extra_metadata or {})
    spec = TaskSpec(
        name=name,
        category=category,
        n_classes=k,
        label_names=label_names,
        source=meta.get("source", ""),
        license=meta.get("license", ""),
        splits=tuple(splits),
        synthetic=bool(meta.get("synthetic", False)),
        path=str(path),
        description=meta.get("description", ""),
        kind=task_kind_,
    )
    return typed_task(Task(spec=spec, splits=splits, metadata=metadata))


def _read_splits(folder: Path) -> list[RawSplit]:
    """The folder's splits in ``SPLIT_ORDER``, raw; train and test are required."""
    raws: list[RawSplit] = []
    for split in SPLIT_ORDER:
        raw = read_raw_split(folder, split)
        if raw is None:
            if split in REQUIRED_SPLITS:
                raise TaskError(
                    f"{folder}: no {split} split; expected one of {split}.csv, {split}.parquet, "
                    f"{split}.fa/.fasta/.fna or a {split}/ directory of per-class FASTA files"
                )
            continue
        raws.append(raw)
    check_class_files([(r.name, r.class_files) for r in raws if r.fmt == "fasta-per-class"])
    return raws


def _capped_splits(
    name: str,
    raws: list[RawSplit],
    checked: list[Any],
    ids: list[np.ndarray],
    task_kind_: str,
    train_row_cap: int | None,
) -> tuple[dict[str, SplitData], dict[str, Any]]:
    """The checked splits, train capped at ``train_row_cap`` (with the subsample's record)."""
    splits: dict[str, SplitData] = {}
    subsampled: dict[str, Any] = {}
    for r, chk, lab in zip(raws, checked, ids, strict=True):
        seqs, labels = chk.sequences, lab
        rows = np.arange(len(seqs), dtype=np.int64)
        if r.name == "train" and task_kind_ == REGRESSION:
            seqs, labels, rows, record = cap_targets(name_seed(name), seqs, labels, rows,
                                                     train_row_cap)
            if record is not None:
                subsampled["train"] = record
        elif r.name == "train":
            seqs, labels, rows, record = cap_train_split(name, seqs, labels, rows, train_row_cap)
            if record is not None:
                subsampled["train"] = record
        splits[r.name] = make_split(r.name, seqs, labels, rows, r.file)
    return splits, subsampled


def _metadata(
    folder: Path,
    raws: list[RawSplit],
    checked: list[Any],
    splits: dict[str, SplitData],
    k: int,
    task_kind_: str,
    meta: dict[str, Any],
    inferred: list[str],
    *,
    label_type: str,
    label_mapping: dict[str, int] | None,
    subsampled: dict[str, Any],
) -> dict[str, Any]:
    """``Task.metadata``: files, formats, row and class counts, what was inferred."""
    return {
        "folder": str(folder),
        "files": {r.name: r.file for r in raws},
        "formats": {r.name: r.fmt for r in raws},
        "label_type": label_type,
        "label_mapping": label_mapping,
        "uppercased": {r.name: c.uppercased_rows for r, c in zip(raws, checked, strict=True)},
        "subsampled": subsampled,
        "n_rows": {s: len(d) for s, d in splits.items()},
        "class_counts": {s: np.bincount(d.labels, minlength=k).tolist() for s, d in splits.items()}
        if task_kind_ != REGRESSION else {},
        "target_summary": {s: target_summary(d.labels) for s, d in splits.items()}
        if task_kind_ == REGRESSION else {},
        "length_range": {
            r.name: [int(c.lengths.min()), int(c.lengths.max())]
            for r, c in zip(raws, checked, strict=True)
        },
        "ignored_columns": {r.name: list(r.ignored_columns) for r in raws if r.ignored_columns},
        "inferred": inferred,
        "task_json": meta or None,
    }
