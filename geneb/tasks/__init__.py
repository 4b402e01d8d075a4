"""Task catalogue and loaders: task folders (csv, parquet, FASTA), the built-in synthetic suite."""

from geneb.protocol import TRAIN_ROW_CAP, UNCATEGORIZED
from geneb.tasks.folders import list_tasks, resolve_task, task_summaries
from geneb.tasks.loader import load_task_folder
from geneb.tasks.save import save_task_folder
from geneb.tasks.spec import (
    CATEGORIES,
    ClassificationTask,
    RegressionTask,
    SplitData,
    Task,
    TaskSpec,
    split_fingerprint,
)
from geneb.tasks.synthetic import SYNTHETIC_TASK_NAMES, build_synthetic_task
from geneb.tasks.variant_tasks import SupervisedVariantTask, ZeroShotVariantTask

__all__ = [
    "CATEGORIES",
    "SYNTHETIC_TASK_NAMES",
    "TRAIN_ROW_CAP",
    "UNCATEGORIZED",
    "ClassificationTask",
    "RegressionTask",
    "SplitData",
    "SupervisedVariantTask",
    "Task",
    "TaskSpec",
    "build_synthetic_task",
    "list_tasks",
    "load_task_folder",
    "resolve_task",
    "save_task_folder",
    "split_fingerprint",
    "task_summaries",
    "ZeroShotVariantTask",
]
