"""The results table: one typed, versioned row per probe fit.

This module is the contract between the probe engine (writes rows) and analysis (reads them).
Analysis reads only this table, so everything it needs (category, parameter count) is in it.
"""

from __future__ import annotations

import pyarrow as pa

RESULTS_SCHEMA_VERSION = 1

#: Regime names as stored in the ``regime`` column. ``k`` holds the shots per class (null: full).
REGIMES: tuple[str, ...] = ("1", "10", "full")
DEFAULT_SEEDS: tuple[int, ...] = (13, 17, 42, 123, 997)
DEFAULT_C_SWEEP: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
MAX_ITER = 1000

RESULTS_SCHEMA = pa.schema(
    [
        ("schema_version", pa.int32()),
        ("model", pa.string()),  # model id as in the store key
        ("task", pa.string()),
        ("category", pa.string()),  # GENEB category slug
        ("task_synthetic", pa.bool_()),  # the task is generated (synthetic suite), not real data
        ("regime", pa.string()),  # "1" | "10" | "full" (k-shot regimes are str(k))
        ("k", pa.int32()),  # shots per class; null for full
        ("seed", pa.int64()),
        ("C", pa.float64()),
        ("probe", pa.string()),  # "linear" | "mlp"
        ("backend", pa.string()),  # "fast" | "sklearn" | "cuml" | "torch"
        ("standardize", pa.bool_()),
        ("take_all", pa.bool_()),  # a class had < k rows and the user asked to take them all
        ("mcc", pa.float64()),
        ("accuracy", pa.float64()),
        ("macro_f1", pa.float64()),
        ("auroc", pa.float64()),  # one-vs-rest macro for multi-class; null when undefined
        ("n_classes", pa.int32()),
        ("n_train", pa.int64()),
        ("n_test", pa.int64()),
        ("n_iter", pa.int64()),
        ("converged", pa.bool_()),
        ("fit_seconds", pa.float64()),
        ("train_rows", pa.list_(pa.int64())),  # k-shot train row indices (file rows); [] for full
        ("n_params", pa.int64()),  # parameter count from the store provenance; null if unknown
        ("store_fingerprint", pa.string()),  # entry fingerprint of the train entry
        ("task_fingerprint", pa.string()),  # train-split fingerprint
        ("geneb_version", pa.string()),
        ("sklearn_version", pa.string()),
        ("created", pa.string()),
    ]
)

RESULT_COLUMNS: tuple[str, ...] = tuple(RESULTS_SCHEMA.names)

#: Columns that identify one cell; a rerun skips cells whose identity is already present.
CELL_IDENTITY: tuple[str, ...] = (
    "model",
    "task",
    "regime",
    "seed",
    "C",
    "probe",
    "standardize",
    "store_fingerprint",
)
