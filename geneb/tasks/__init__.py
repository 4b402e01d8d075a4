"""Task catalogue and loaders: task folders (csv, parquet, FASTA), the built-in synthetic suite."""

from geneb.tasks.spec import CATEGORIES, TRAIN_ROW_CAP, SplitData, Task, TaskSpec, split_fingerprint

__all__ = [
    "CATEGORIES",
    "TRAIN_ROW_CAP",
    "SplitData",
    "Task",
    "TaskSpec",
    "split_fingerprint",
]
