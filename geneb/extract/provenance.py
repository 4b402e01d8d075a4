"""Provenance of one store entry: the model's info plus the task split's identity.

Kept apart from the runner so what an entry records is read in one place.
"""

from __future__ import annotations

from typing import Any

from geneb.models.embedder import ModelInfo
from geneb.store import Provenance
from geneb.tasks.spec import SplitData, Task


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
    if task.spec.kind != "classification":  # only regression entries carry it
        extra["task_kind"] = task.spec.kind
    if model_key != info.name:
        extra["adapter_name"] = info.name
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
        extra=extra,
    )
