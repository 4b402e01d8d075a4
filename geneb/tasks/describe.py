"""What ``geneb tasks show`` reports about one task, as plain JSON-able data."""

from __future__ import annotations

from typing import Any

from geneb.constraints import validate_params
from geneb.tasks.spec import Task
from geneb.vocabulary import CLASSIFICATION


def _split_report(task: Task) -> dict[str, dict[str, Any]]:
    """Per split: rows, fingerprint, source file, sequence lengths and class balance."""
    spec = task.spec
    splits = {}
    for name, data in task.splits.items():
        counts = [int((data.labels == k).sum()) for k in range(spec.n_classes)]
        n = len(data)
        lengths = [len(s) for s in data.sequences]
        splits[name] = {
            "rows": n,
            "fingerprint": data.fingerprint,
            "source_file": data.source_file,
            "length_min": min(lengths),
            "length_max": max(lengths),
            "class_balance": {
                lab: {"count": c, "fraction": round(c / n, 4)}
                for lab, c in zip(spec.label_names, counts, strict=True)
            },
        }
    return splits


@validate_params({})
def describe_task(name: str, data_dir: str | None = None) -> dict[str, Any]:
    """Load one task and describe it: spec, splits, loading metadata and, for a real
    classification task, which catalogue entry it is (``geneb.tasks.matching``).

    Parameters
    ----------
    name : str
        A task folder, built-in synthetic name or name under ``data_dir``.
    data_dir : str, optional
        Where task names are looked up (default ``$GENEB_DATA_DIR``).

    Returns
    -------
    dict
        ``spec``, ``splits`` (rows, fingerprint, source file, lengths, class balance),
        ``metadata`` and, where it applies, ``catalogue_match``.
    """
    from geneb.tasks.folders import resolve_task
    from geneb.tasks.matching import catalogue_match

    task = resolve_task(name, data_dir)
    spec = task.spec
    report: dict[str, Any] = {
        "spec": {
            "name": spec.name,
            "category": spec.category,
            "n_classes": spec.n_classes,
            "label_names": list(spec.label_names),
            "source": spec.source,
            "license": spec.license,
            "splits": list(spec.splits),
            "synthetic": spec.synthetic,
            "path": spec.path,
            "description": spec.description,
        },
        "splits": _split_report(task),
        "metadata": dict(task.metadata),
    }
    if not spec.synthetic and spec.kind == CLASSIFICATION:
        report["catalogue_match"] = catalogue_match(task)
    return report
