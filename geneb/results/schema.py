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
probe, its protocol, standardisation, and which optimum the row holds (``OPTIMUM_COLUMNS``):

- a linear row of the converged protocol that reached geneb's tolerance (``converged``, judged
  by geneb on the float64 gradient whatever the backend) is *the* optimum: its backend and
  precision are blanked, so ``fast``, ``sklearn``, ``torch`` and a judged ``cuml`` row stand in
  for each other;
- any other linear row of that protocol (stopped early, or a ``cuml`` row written before geneb
  judged cuML's fits: no recorded ``precision``) keeps backend, precision and
  ``converged=False`` in its identity: it never stands in for an exact row, a planned cell
  (which asks for the optimum) never matches it, and analysis prefers an exact row of the same
  cell to it (``exact``, ``place``);
- MLP rows (whose backends differ statistically) keep their backend (both run strict float32:
  TF32 is never turned on for a probe, ``geneb.models.device.tf32``);
- paper-protocol and ridge rows: one backend each, and the paper's fit is the paper's fit
  whether its lbfgs converged or not.
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
#: (null on classification rows; older tables are migrated with nulls). 4: ``precision`` (the
#: arithmetic the fit ran in) added; part of the identity of rows that are not the optimum.
RESULTS_SCHEMA_VERSION = 4
READABLE_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2, 3, 4)

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
        ("backend", pa.string()),  # the backend that ran: "fast" | "sklearn" | "cuml" | "torch"
        ("precision", pa.string()),  # the fit's arithmetic: "float64" | "float32"; null: older
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
    "precision": None,
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
#: The last three (``OPTIMUM_COLUMNS``) say which optimum a row holds (module docstring).
CELL_IDENTITY: tuple[str, ...] = (
    "model",
    "task",
    "regime",
    "seed",
    "C",
    "probe",
    "protocol",
    "standardize",
    "store_fingerprint",
    "storage_dtype",
    "alpha",
    "backend",
    "precision",
    "converged",
)

#: The identity columns that say which optimum a row holds (blanked for an exact linear row).
OPTIMUM_COLUMNS: tuple[str, ...] = ("backend", "precision", "converged")

#: Backends whose rows, before geneb recorded ``precision`` (schema version 4), carried the
#: backend's own convergence flag (cuML's stopping test cannot meet geneb's tolerance in
#: float32): such a row is never taken for the optimum.
SELF_JUDGED_BACKENDS: frozenset[str] = frozenset({"cuml"})

#: Identity columns that say which version of the stored embeddings a row came from.
STORE_VERSION_COLUMNS: tuple[str, ...] = ("store_fingerprint", "storage_dtype")

#: The key analysis de-duplicates on (newest row wins): the identity minus the store version.
ANALYSIS_KEY: tuple[str, ...] = tuple(c for c in CELL_IDENTITY if c not in STORE_VERSION_COLUMNS)

_SEED_POS = CELL_IDENTITY.index("seed")
_ANALYSIS_POS = tuple(CELL_IDENTITY.index(c) for c in ANALYSIS_KEY)
_OPTIMUM_POS = tuple(CELL_IDENTITY.index(c) for c in OPTIMUM_COLUMNS)
_CONVERGED_POS = CELL_IDENTITY.index("converged")

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
_CONVERT = {"seed": _as(int), "C": _as(float), "alpha": _as(float), "standardize": _as(bool),
            "converged": _as(bool)}
_NATIVE = {"seed": int, "C": float, "alpha": float, "standardize": bool, "converged": bool}


def identities(columns: Mapping[str, Sequence[Any]], *, native: bool = False) -> list[CellId]:
    """The identity of every row of a column-wise table (``{column: values}``; a missing column
    is all None). The ONE computation of cell identity (``cell_id`` is its one-row case):
    values normalised (NaN/None -> None, numpy scalars -> Python, seed int, C/alpha float,
    standardize bool), a missing protocol is the default one, and the optimum columns set as
    the module docstring says (``_optimum``). A row without ``converged`` (a planned cell) asks
    for the optimum. ``native``: the values come from an arrow table of ``RESULTS_SCHEMA``
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
    opt = [_optimum(*v) for v in zip(cols["probe"], cols["protocol"], cols["backend"],
                                     cols["precision"], cols["converged"], strict=True)]
    for j, c in enumerate(OPTIMUM_COLUMNS):
        cols[c] = [o[j] for o in opt]
    return list(zip(*(cols[c] for c in CELL_IDENTITY), strict=True))


def _optimum(probe: Any, protocol: Any, backend: Any, precision: Any, converged: Any
             ) -> tuple[Any, Any, Any]:
    """(backend, precision, converged) as they enter the identity (module docstring)."""
    if probe == "linear" and protocol == DEFAULT_PROTOCOL:
        self_judged = backend in SELF_JUDGED_BACKENDS and precision is None
        if converged is None or (converged and not self_judged):
            return None, None, True  # the optimum, to geneb's tolerance
        return backend, precision, False
    if probe == "linear" or probe == "ridge":
        return None, None, None
    return backend, None, None  # the MLP: each backend its own cell


def exact(cid: CellId) -> bool:
    """Whether a cell identity is a linear optimum reached to geneb's tolerance."""
    return cid[_CONVERGED_POS] is True


def _place(cid: CellId) -> CellId:
    """The analysis key without which optimum a linear row of the converged protocol holds
    (other rows: their analysis key): the rows an analysis chooses one of."""
    if cid[_CONVERGED_POS] is not None:
        cid = tuple(None if i in _OPTIMUM_POS else v for i, v in enumerate(cid))
    return analysis_key(cid)


def analysis_key(cid: CellId) -> CellId:
    """The identity without the store version (``ANALYSIS_KEY``)."""
    return tuple(cid[i] for i in _ANALYSIS_POS)


def analysis_rows(columns: Mapping[str, Sequence[Any]], order: Sequence[Any] | None = None
                  ) -> list[int]:
    """Positions (ascending) of the rows an analysis reads: one per cell, store version aside.

    Among the rows of one cell, an exact one (``exact``) is taken before any other, then the
    newest (``order``, e.g. ``created``, then the row position): re-extracted embeddings
    replace their older rows, an early-stopped or self-judged float32 row never replaces an
    exact one, and is kept (and listed as not converged by the report) only where no exact row
    exists."""
    ids = identities(columns)
    rank = (lambda i: (exact(ids[i]), order[i])) if order is not None else (
        lambda i: (exact(ids[i]),))
    chosen: dict[CellId, int] = {}
    for i in sorted(range(len(ids)), key=rank):
        chosen[_place(ids[i])] = i
    return sorted(chosen.values())


def cell_id(row: Mapping[str, Any]) -> CellId:
    """The identity of one result row (a rerun skips cells whose identity is present)."""
    return identities({c: [row.get(c)] for c in CELL_IDENTITY})[0]


def seedless(cid: CellId) -> CellId:
    """A cell identity without its seed: full-data linear fits do not depend on the seed."""
    return cid[:_SEED_POS] + cid[_SEED_POS + 1 :]
