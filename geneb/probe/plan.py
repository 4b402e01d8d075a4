"""Planning a probe run (driver side, cheap): which (model, task) pairs, which cells, which fits.

For every pair only the store attributes, labels and row indices are read; the train rows of
each (regime, seed) cell are drawn; cells already in the results table are dropped; full-data
linear cells are fanned out from an existing row of another seed when one exists; identical
fits (same train rows, C, probe, standardise flag) are solved once. Every check that can fail
(unknown names, missing or incomplete entries, NaN/inf, classes with < k rows, an option that
does not apply) runs here, before any work, so nothing is written when one fails.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from geneb import protocol
from geneb.errors import EntryIncompleteError, ProbeError, StoreError, unknown_name
from geneb.probe.feature_values import EXPECTED_FINITE, first_unprobeable
from geneb.protocol import UNCATEGORIZED
from geneb.results.schema import RESULTS_SCHEMA_VERSION, CellId, cell_id, seedless
from geneb.results.table import cell_ids, indices
from geneb.store import FeatureStore, StoreEntry, StoreKey
from geneb.store.provenance import LABEL_VALUES, SOURCE_ROWS
from geneb.vocabulary import CLASSIFICATION, REGRESSION


@dataclass(frozen=True, eq=False)
class PlannedFit:
    """One distinct fit of a pair: the rows (positions), C (or alpha) and seed to use; the
    pair's cells (result rows) that share it point at its ``fit_id``."""

    fit_id: int
    regime: str
    k: int | None
    seed: int
    C: float | None
    positions: np.ndarray
    alpha: float | None = None  # ridge fits of regression tasks (``geneb.probe.ridge_probe``)


@dataclass(eq=False)
class Pair:
    """What planning knows about one (model, task): attributes, labels, rows, no embeddings."""

    model: str
    task: str
    labels: np.ndarray
    rows: np.ndarray
    n_test: int
    n_classes: int
    dim: int
    task_fp: str
    store_fp: str
    storage_dtype: str
    n_params: int | None
    category: str
    synthetic: bool
    kind: str = CLASSIFICATION  # REGRESSION: float labels, ridge probes
    #: the task file's label value of each class id, and the train split's rows in its
    #: source (None: not recorded, an entry made before they were): GENEB's own k-shot draw
    label_values: list[Any] | None = None
    source_rows: int | None = None
    fits: list[PlannedFit] = field(default_factory=list)
    cells: list[tuple[dict[str, Any], int]] = field(default_factory=list)  # (row base, fit_id)


@dataclass
class Done:
    """The cells the results table already holds, and its full-data linear rows by seedless
    identity (a new seed of the same deterministic fit copies them instead of refitting)."""

    ids: set[CellId] = field(default_factory=set)
    reusable: dict[CellId, dict[str, Any]] = field(default_factory=dict)
    #: the train rows of paper-protocol k-shot cells: a cell drawn before the paper protocol
    #: drew GENEB's rows (other rows, same identity) is computed again, never kept silently
    paper_rows: dict[CellId, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, table: pa.Table | None) -> Done:
        out = cls()
        if table is None or table.num_rows == 0:
            return out
        ids = cell_ids(table)
        out.ids = set(ids)
        regime = table.column("regime").to_pylist()
        probe = table.column("probe").to_pylist()
        full = [i for i, (r, p) in enumerate(zip(regime, probe, strict=True))
                if r == "full" and p == "linear"]
        if full:  # only these rows are needed whole
            rows = table.take(indices(full)).to_pylist()
            for i, r in zip(full, rows, strict=True):
                out.reusable.setdefault(seedless(ids[i]), r)
        protocol_col = table.column("protocol").to_pylist()
        paper = [i for i, (r, p) in enumerate(zip(regime, protocol_col, strict=True))
                 if p == "paper" and r != "full"]
        if paper:
            drawn = table.column("train_rows").take(indices(paper)).to_pylist()
            for i, tr in zip(paper, drawn, strict=True):
                out.paper_rows[ids[i]] = tuple(tr or ())
        return out


# --------------------------------------------------------------------------- checks
def _entry_attrs(store: FeatureStore, model: str, task: str, split: str) -> dict[str, Any]:
    """The entry's attributes; a clear error when it is missing or incomplete."""
    key = StoreKey(model, task, split)
    status = store.status(key)
    if status == "missing":
        have = sorted(k.split for k in store.keys() if k.model == model and k.task == task)
        raise ProbeError(
            f"store {store.path} has no {split!r} split for model {model!r} on task {task!r} "
            f"(it has: {', '.join(have) or 'nothing'}); probing needs both train and test: "
            f"extract the {split} split first"
        )
    attrs = store.entry_attrs(key) or {}
    if status == "incomplete":
        raise EntryIncompleteError(
            f"store entry {key} in {store.path} is incomplete ({attrs.get('rows_written', 0)} "
            f"of {attrs.get('n_rows', '?')} rows written); finish the extraction first"
        )
    return attrs


def check_values(store: FeatureStore, model: str, task: str, split: str) -> StoreEntry:
    """Name the first value the probe refuses (non-finite or past ``FEATURE_ABS_MAX``,
    :mod:`geneb.probe.feature_values`) before any work (one fast whole-entry read); return
    the entry (an in-process solve reuses it instead of reading it again)."""
    e = store.get(model, task, split)
    bad = first_unprobeable(e.embeddings)
    if bad is not None:
        r, c, want = bad
        what = "a non-finite embedding" if want == EXPECTED_FINITE else \
            f"an embedding out of range (expected {want})"
        raise ProbeError(
            f"store entry {e.key} in {store.path} has {what} "
            f"({float(e.embeddings[r, c]):g}) at entry row {r} (task file row {int(e.rows[r])}), "
            f"feature {c}; re-extract it (check the model's dtype); nothing was probed"
        )
    return e


def _labels_fingerprint(labels: np.ndarray, rows: np.ndarray) -> str:
    h = hashlib.sha256(np.ascontiguousarray(labels, np.int64).tobytes())
    h.update(np.ascontiguousarray(rows, np.int64).tobytes())
    return "labels-sha256:" + h.hexdigest()


def is_regression_labels(labels: np.ndarray) -> bool:
    """Stored labels of a regression task are floating point (class ids are integers)."""
    return np.asarray(labels).dtype.kind == "f"


def inspect_pair(store: FeatureStore, model: str, task: str) -> Pair:
    a_tr = _entry_attrs(store, model, task, "train")
    _entry_attrs(store, model, task, "test")
    key = StoreKey(model, task, "train")
    # labels and rows only (the embeddings are read once, for the finite check); local
    # stores read them without zarr
    labels, rows, dim_tr = store.labels_rows(model, task, "train")
    y_test, _, dim_te = store.labels_rows(model, task, "test")
    regression = is_regression_labels(labels)
    labels = np.asarray(labels, dtype=np.float64 if regression else np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    y_test = np.asarray(y_test, dtype=np.float64 if regression else np.int64)
    if dim_tr != dim_te:
        raise ProbeError(
            f"model {model!r} task {task!r}: train embeddings have {dim_tr} features but test "
            f"embeddings {dim_te}; re-extract one of them with the same settings"
        )
    for split, lab in (("train", labels), ("test", y_test)):
        if len(lab) and lab.min() < 0 and not regression:
            raise ProbeError(f"store entry {model}/{task}/{split}: negative label {lab.min()}")
        if len(lab) == 0:
            raise ProbeError(f"store entry {model}/{task}/{split} has no rows")
    prov = store.provenance(key)
    extra = dict(prov.extra) if prov is not None and prov.extra else {}
    values = extra.get(LABEL_VALUES)
    n_classes = 0 if regression else int(extra.get("n_classes")
                                         or protocol.n_classes_of(labels, y_test))
    task_fp = (prov.task_fingerprint if prov is not None else "") or _labels_fingerprint(
        labels, rows
    )
    return Pair(
        model=model,
        task=task,
        labels=labels,
        rows=rows,
        n_test=len(y_test),
        n_classes=n_classes,
        dim=dim_tr,
        task_fp=task_fp,
        store_fp=str(a_tr.get("entry_fingerprint", "")),
        storage_dtype=str(a_tr.get("storage_dtype") or "float32"),
        n_params=prov.n_params if prov is not None else None,
        category=str(extra.get("task_category") or UNCATEGORIZED),
        synthetic=bool(extra.get("task_synthetic", False)),
        kind=REGRESSION if regression else CLASSIFICATION,
        label_values=list(values) if values is not None else None,
        source_rows=extra.get(SOURCE_ROWS),
    )


def paper_label_values(pair: Pair, store_path: str = "") -> list[Any]:
    """The label values GENEB's draw sorts (``--protocol paper``), checked: recorded at
    extraction, one per class, and the entry holds every train row of the task file (GENEB
    draws positions among all of them). Else one line saying what to re-extract."""
    where = f"store entry {pair.model}/{pair.task}/train" + (f" in {store_path}" if store_path
                                                             else "")
    if pair.label_values is None:
        raise ProbeError(
            f"{where} does not record the task's label values (made before geneb recorded "
            f"them); the paper protocol draws GENEB's k-shot rows from them: re-extract it "
            f"(overwrite=True), or probe with protocol='converged'"
        )
    top = int(pair.labels.max()) if len(pair.labels) else -1
    if len(pair.label_values) <= top:
        raise ProbeError(f"{where}: expected a label value for each class id 0..{top}, got "
                         f"{len(pair.label_values)}; re-extract it")
    if pair.source_rows is not None and pair.source_rows != len(pair.rows):
        raise ProbeError(
            f"{where} holds {len(pair.rows)} of the task file's {pair.source_rows} train rows "
            f"(task loading capped the split); GENEB draws from every row: load the task with "
            f"train_row_cap=None and re-extract, or probe with protocol='converged'"
        )
    return pair.label_values


def select_pairs(
    store: FeatureStore, models: Sequence[str] | None, tasks: Sequence[str] | None
) -> list[tuple[str, str]]:
    keys = store.keys()
    all_models = sorted({k.model for k in keys})
    all_tasks = sorted({k.task for k in keys})
    if not keys:
        raise StoreError(f"store {store.path} has no entries; run `geneb extract` first")
    for m in models or ():
        if m not in all_models:
            raise unknown_name("model in the store", m, all_models)
    for t in tasks or ():
        if t not in all_tasks:
            raise unknown_name("task in the store", t, all_tasks)
    present = {(k.model, k.task) for k in keys}
    ms = list(dict.fromkeys(models)) if models else all_models
    ts = list(dict.fromkeys(tasks)) if tasks else all_tasks
    pairs = [(m, t) for m in ms for t in ts if (m, t) in present]
    if models and tasks:  # every explicitly named pair must exist
        for m in ms:
            for t in ts:
                if (m, t) not in present:
                    have = sorted(t2 for (m2, t2) in present if m2 == m)
                    raise ProbeError(
                        f"store {store.path} has no embeddings of model {m!r} on task {t!r} "
                        f"(that model has: {', '.join(have)}); extract them first"
                    )
    if not pairs:
        raise ProbeError(f"nothing to probe: no (model, task) entries match in {store.path}")
    return pairs


def versions() -> tuple[str, str]:
    import importlib.metadata as md

    from geneb._version import __version__

    return __version__, md.version("scikit-learn")


# --------------------------------------------------------------------------- cells
def plan_pair(
    pair: Pair,
    *,
    shots: Sequence[str],
    seeds: Sequence[int],
    Cs: Sequence[float],
    probe: str,
    backend_name: str,
    protocol_name: str,
    standardize: bool,
    take_all: bool,
    done: Done,
    versions: tuple[str, str],
    created: str,
) -> tuple[list[dict[str, Any]], int, int]:
    """Fill ``pair.fits``/``pair.cells``; return (reused rows, n_cells, n_skipped)."""
    fit_index: dict[tuple[Any, ...], int] = {}
    reused: list[dict[str, Any]] = []
    n_cells = n_skipped = 0
    Cs_or_none: Sequence[float | None] = Cs if probe == "linear" else (None,)
    grid = {"probe": probe, "protocol": protocol_name, "backend": backend_name,
            "standardize": bool(standardize), "geneb_version": versions[0],
            "sklearn_version": versions[1], "created": created}
    # the paper protocol draws GENEB's rows, the converged protocol geneb's (docs/probing.md)
    values = paper_label_values(pair) if protocol_name == "paper" else None
    for regime in shots:
        k = protocol.regime_k(regime)
        for seed in seeds:
            sample = protocol.draw(
                regime, pair.labels, pair.rows, seed=seed, task_fingerprint=pair.task_fp,
                n_classes=pair.n_classes, take_all=take_all, task=pair.task,
                label_values=values,
            )
            present = np.unique(pair.labels[sample.positions])
            if len(present) < 2:
                raise ProbeError(
                    f"task {pair.task!r}: the {regime} regime (seed {seed}) has train rows of "
                    f"only {len(present)} class(es); a probe needs at least two"
                )
            rows_key = hashlib.sha256(sample.positions.tobytes()).hexdigest()
            for C in Cs_or_none:
                n_cells += 1
                base = _cell_row(pair, regime, k, int(seed), C, sample, grid)
                cid = cell_id(base)
                drawn_before = done.paper_rows.get(cid) if values is not None else None
                if drawn_before is not None and drawn_before != tuple(base["train_rows"]):
                    done.ids.discard(cid)  # drawn by geneb's draw before: GENEB's rows now
                if cid in done.ids:
                    n_skipped += 1
                    continue
                if k is None and probe == "linear":
                    old = done.reusable.get(seedless(cid))
                    if old is not None:  # the same deterministic full-data fit, another seed
                        reused.append({**old, "seed": int(seed), "created": created})
                        done.ids.add(cid)
                        continue
                fkey = (rows_key, C, seed if probe == "mlp" else None)
                if fkey not in fit_index:
                    fit_index[fkey] = len(pair.fits)
                    pair.fits.append(PlannedFit(len(pair.fits), regime, k, int(seed), C,
                                                sample.positions))
                pair.cells.append((base, fit_index[fkey]))
                done.ids.add(cid)
    return reused, n_cells, n_skipped


def _cell_row(pair: Pair, regime: str, k: int | None, seed: int, C: float | None,  # noqa: N803
              sample: Any, grid: dict[str, Any]) -> dict[str, Any]:
    """The results row of one cell (everything but the fit's outcome), in schema order."""
    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "model": pair.model,
        "task": pair.task,
        "category": pair.category,
        "task_synthetic": pair.synthetic,
        "regime": regime,
        "k": k,
        "seed": seed,
        "C": None if C is None else float(C),
        "probe": grid["probe"],
        "protocol": grid["protocol"],
        "backend": grid["backend"],
        "standardize": grid["standardize"],
        "take_all": bool(sample.took_all),
        "n_classes": pair.n_classes,
        "n_train": len(sample.positions),
        "n_test": pair.n_test,
        "train_rows": [] if k is None else sample.file_rows.tolist(),
        "n_params": pair.n_params,
        "store_fingerprint": pair.store_fp,
        "storage_dtype": pair.storage_dtype,
        "task_fingerprint": pair.task_fp,
        "geneb_version": grid["geneb_version"],
        "sklearn_version": grid["sklearn_version"],
        "created": grid["created"],
    }
