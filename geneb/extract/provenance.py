"""Provenance of one store entry: the model's info plus the task split's identity.

Kept apart from the runner so what an entry records is read in one place.
"""

from __future__ import annotations

from typing import Any

from geneb.models.embedder import ModelInfo
from geneb.store import Provenance
from geneb.store.provenance import LABEL_VALUES, SOURCE_ROWS
from geneb.tasks.spec import SplitData, Task
from geneb.vocabulary import CLASSIFICATION


def task_label_values(task: Task) -> list[int | str] | None:
    """The label value of each class id as the task's files hold it (None: regression).

    String labels are the mapping's keys (ids in sorted order); integer labels are the ids
    themselves, or their mapping's keys as ints where the task maps integer values to ids."""
    if task.spec.kind != CLASSIFICATION:
        return None
    meta = task.metadata or {}
    mapping = meta.get("label_mapping")
    if not mapping:
        if meta.get("label_type") == "str":
            return None  # string labels without their mapping: unknown, never guessed
        return list(range(task.spec.n_classes))
    by_id = sorted(mapping.items(), key=lambda kv: kv[1])
    if meta.get("label_type") == "int":
        return [int(v) for v, _ in by_id]
    return [str(v) for v, _ in by_id]


def source_rows(task: Task, split: SplitData) -> int:
    """Rows of ``split`` in its source file (before any cap of the train split)."""
    record = (task.metadata or {}).get("subsampled", {}).get(split.name)
    return int(record["original_rows"]) if record else len(split)


def build_provenance(
    info: ModelInfo,
    model_key: str,
    task: Task,
    split: SplitData,
    storage_dtype: str,
    run_extra: dict[str, Any] | None = None,
) -> Provenance:
    """Provenance of one entry: the model's info plus the task split's identity."""
    extra = dict(info.extra)
    extra.update(run_extra or {})
    extra["task_category"] = task.spec.category
    extra["task_synthetic"] = bool(task.spec.synthetic)
    if task.spec.kind != CLASSIFICATION:  # only regression entries carry it
        extra["task_kind"] = task.spec.kind
    if model_key != info.name:
        extra["adapter_name"] = info.name
    values = task_label_values(task)
    if values is not None:  # what GENEB's own k-shot draw needs (``--protocol paper``)
        extra[LABEL_VALUES] = values
        extra[SOURCE_ROWS] = source_rows(task, split)
    return Provenance(
        model_id=model_key,
        revision=info.revision,
        task_id=task.spec.name,
        task_fingerprint=split.fingerprint,
        n_params=info.n_params,
        model_type=info.model_type,
        tokenizer=info.tokenizer,
        pooling=info.pooling,
        layer=info.layer,
        max_length=info.max_length,
        truncation=info.truncation,
        strands=info.strands,
        dtype=info.dtype,
        storage_dtype=storage_dtype,
        device=info.device,
        adapter=info.adapter,
        recipe=info.recipe,
        extra=extra,
    )
