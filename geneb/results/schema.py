"""The results table: one typed, versioned row per cell, and what identifies a cell.

Vocabulary (docs/probing.md): a *cell* is one result row (a pair (model, task) probed in one
configuration: regime, seed, C or alpha, probe, ...); a *fit* is one solve, which several
cells may share (the seeds of a deterministic full-data fit).

This module is the contract between the probe engine (writes rows) and analysis (reads them),
and the ONE place that says which columns a row has (``RESULTS_SCHEMA``) and which of them make
up a cell's identity (``CELL_IDENTITY``, ``cell_id``). The engine skips a cell whose identity is
already in the table, ``geneb run`` counts present cells with it, and analysis de-duplicates
with ``ANALYSIS_KEY`` (the identity without the store-version columns, so that after an entry
is re-extracted the newest row wins). Everything a cell's numbers depend on is in the identity:
the stored embeddings (fingerprint AND storage dtype), the train rows (regime, seed), C, the
probe, its protocol, standardisation, and, for the MLP (whose backends differ statistically
rather than solving the same optimum), the backend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from geneb.protocol import DEFAULT_PROTOCOL

#: 2: ``protocol``, ``storage_dtype`` and ``n_convergence_warnings`` added (version 1 tables
#: are read and migrated: see ``LEGACY_DEFAULTS``). 3: ``alpha``, ``spearman``, ``pearson``,
#: ``r2`` and their intervals (``*_lo``, ``*_hi``) added for ridge probes of regression tasks
#: (null on classification rows; older tables are migrated with nulls).
RESULTS_SCHEMA_VERSION = 3
READABLE_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2, 3)

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
        ("probe", pa.string()),  # "linear" | "mlp" | "ridge" (regression tasks)
        ("protocol", pa.string()),  # "converged" | "paper" (geneb.protocol.PROTOCOLS)
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
        ("n_convergence_warnings", pa.int64()),  # ConvergenceWarnings of the fit; null: n/a
        ("fit_seconds", pa.float64()),
        ("train_rows", pa.list_(pa.int64())),  # k-shot train row indices (file rows); [] for full
        ("n_params", pa.int64()),  # parameter count from the store provenance; null if unknown
        ("store_fingerprint", pa.string()),  # entry fingerprint of the train entry
        ("storage_dtype", pa.string()),  # dtype of the stored embeddings ("float32"/"float16")
        ("task_fingerprint", pa.string()),  # train-split fingerprint
        ("geneb_version", pa.string()),
        ("sklearn_version", pa.string()),
        ("created", pa.string()),
        # ridge probes of regression tasks (null on classification rows; mcc etc. null there)
        ("alpha", pa.float64()),  # ridge penalty
        ("spearman", pa.float64()),
        ("pearson", pa.float64()),
        ("r2", pa.float64()),
        # 95% percentile bootstrap intervals over test rows (geneb.probe.ridge_probe)
        ("spearman_lo", pa.float64()),
        ("spearman_hi", pa.float64()),
        ("pearson_lo", pa.float64()),
        ("pearson_hi", pa.float64()),
        ("r2_lo", pa.float64()),
        ("r2_hi", pa.float64()),
    ]
)

RESULT_COLUMNS: tuple[str, ...] = tuple(RESULTS_SCHEMA.names)

#: Values given to the columns a version-1 table lacks when it is read (migration). A legacy
#: row's storage dtype is unknown (null), so it never matches a new cell: rerunning recomputes
#: it rather than trusting numbers that may come from other embeddings.
LEGACY_DEFAULTS: dict[str, Any] = {
    "protocol": DEFAULT_PROTOCOL,
    "storage_dtype": None,
    "n_convergence_warnings": None,
    "alpha": None,
    "spearman": None,
    "pearson": None,
    "r2": None,
    "spearman_lo": None,
    "spearman_hi": None,
    "pearson_lo": None,
    "pearson_hi": None,
    "r2_lo": None,
    "r2_hi": None,
}

#: Columns that identify one cell; a rerun skips cells whose identity is already present.
#: ``backend`` counts for the MLP only (``cell_id`` blanks it for linear cells: every linear
#: backend of the converged protocol reaches the same optimum).
CELL_IDENTITY: tuple[str, ...] = (
    "model",
    "task",
    "regime",
    "seed",
    "C",
    "probe",
    "protocol",
    "backend",
    "standardize",
    "store_fingerprint",
    "storage_dtype",
    "alpha",
)

#: Identity columns that say which version of the stored embeddings a row came from.
STORE_VERSION_COLUMNS: tuple[str, ...] = ("store_fingerprint", "storage_dtype")

#: The key analysis de-duplicates on (newest row wins): the identity minus the store version.
ANALYSIS_KEY: tuple[str, ...] = tuple(c for c in CELL_IDENTITY if c not in STORE_VERSION_COLUMNS)

_SEED_POS = CELL_IDENTITY.index("seed")

CellId = tuple[Any, ...]


def _norm(v: Any) -> Any:
    """Identity values comparable across pandas/arrow/python: NaN and None are both None."""
    if v is None or type(v) is str:
        return v
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _as(kind: type) -> Any:
    def conv(v: Any) -> Any:
        v = _norm(v)
        return None if v is None else kind(v)
    return conv


#: How each identity column is normalised (every other column: ``_norm``), and the type its
#: values already have when they come from arrow (kept as they are: the fast path).
_CONVERT = {"seed": _as(int), "C": _as(float), "alpha": _as(float), "standardize": _as(bool)}
_NATIVE = {"seed": int, "C": float, "alpha": float, "standardize": bool}


def identities(columns: Mapping[str, Sequence[Any]], *, native: bool = False) -> list[CellId]:
    """The identity of every row of a column-wise table (``{column: values}``; a missing column
    is all None). The ONE computation of cell identity (``cell_id`` is its one-row case):
    values normalised (NaN/None -> None, numpy scalars -> Python, seed int, C/alpha float,
    standardize bool), a missing protocol is the default one, and ``backend`` is blanked for
    the linear probe. ``native``: the values come from an arrow table of ``RESULTS_SCHEMA``
    (already Python ints, bools and strings), so only the float columns need normalising;
    column-wise, a 300k-row table takes a fraction of a second."""
    n = len(next(iter(columns.values()))) if columns else 0
    cols: dict[str, list[Any]] = {}
    for c in CELL_IDENTITY:
        values = columns.get(c)
        t = _NATIVE.get(c, str)
        if values is None:
            cols[c] = [None] * n
        elif t is float:  # NaN is None
            conv = _CONVERT[c]
            cols[c] = [v if type(v) is float and v == v else None if v is None else conv(v)
                       for v in values]
        elif native:
            cols[c] = list(values)
        else:
            conv = _CONVERT.get(c, _norm)
            cols[c] = [v if type(v) is t or v is None else conv(v) for v in values]
    cols["protocol"] = [DEFAULT_PROTOCOL if v is None else v for v in cols["protocol"]]
    cols["backend"] = [None if p == "linear" else b
                       for p, b in zip(cols["probe"], cols["backend"], strict=True)]
    return list(zip(*(cols[c] for c in CELL_IDENTITY), strict=True))


def cell_id(row: Mapping[str, Any]) -> CellId:
    """The identity of one result row (a rerun skips cells whose identity is present)."""
    return identities({c: [row.get(c)] for c in CELL_IDENTITY})[0]


def seedless(cid: CellId) -> CellId:
    """A cell identity without its seed: full-data linear fits do not depend on the seed."""
    return cid[:_SEED_POS] + cid[_SEED_POS + 1 :]
