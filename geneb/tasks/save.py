"""Write a task as a task folder, in any of the formats ``geneb.tasks.loader`` reads."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from geneb.errors import TaskError, unknown_name
from geneb.tasks.loader import TASK_JSON
from geneb.tasks.spec import CATEGORIES, Task
from geneb.vocabulary import REGRESSION

SAVE_FORMATS = ("csv", "parquet", "fasta", "fasta-per-class")


def save_task_folder(
    task: Task, path: str | os.PathLike[str], *, fmt: str = "csv", overwrite: bool = False
) -> Path:
    """Write a task as a task folder (labels as integer ids, names in task.json).

    Why: synthetic tasks can be handed to other tools, and a task round-trips through every
    input format (with ``fasta-per-class`` the records are regrouped by class, so that split's
    row order, and hence its fingerprint, differs from the original).
    """
    if fmt not in SAVE_FORMATS:
        raise unknown_name("task folder format", fmt, SAVE_FORMATS)
    folder = Path(path).expanduser()
    if folder.exists() and any(folder.iterdir()) and not overwrite:
        raise TaskError(f"{folder}: exists and is not empty (pass overwrite=True to replace)")
    folder.mkdir(parents=True, exist_ok=True)
    spec = task.spec
    meta: dict[str, Any] = {"name": spec.name}
    if spec.kind == REGRESSION:
        meta["kind"] = REGRESSION
    if spec.category in CATEGORIES:
        meta["category"] = spec.category
    if spec.kind != REGRESSION:
        meta.update(n_classes=spec.n_classes, label_names=list(spec.label_names))
    meta.update(
        source=spec.source,
        license=spec.license,
        description=spec.description,
        synthetic=spec.synthetic,
    )
    for split, data in task.splits.items():
        meta[f"n_{split}"] = len(data)
        df = pd.DataFrame({"sequence": list(data.sequences), "label": data.labels})
        if fmt == "csv":
            df.to_csv(folder / f"{split}.csv", index=False)
        elif fmt == "parquet":
            df.to_parquet(folder / f"{split}.parquet", index=False)
        elif fmt == "fasta":
            lines = [
                f">{split}_{i} label={lab}\n{seq}\n"
                for i, (seq, lab) in enumerate(
                    zip(data.sequences, data.labels.tolist(), strict=True)
                )
            ]
            (folder / f"{split}.fa").write_text("".join(lines), encoding="ascii")
        else:
            sub = folder / split
            sub.mkdir(exist_ok=True)
            for k in range(spec.n_classes):
                idx = np.flatnonzero(data.labels == k).tolist()
                text = "".join(f">{split}_{i}\n{data.sequences[i]}\n" for i in idx)
                (sub / f"{k}.fa").write_text(text, encoding="ascii")
    (folder / TASK_JSON).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return folder
