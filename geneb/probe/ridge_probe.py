"""Ridge probes of regression tasks inside ``geneb probe``: planning one pair, scoring its fits.

A (model, task) pair is a regression pair when its stored labels are floating point (a task
with ``"kind": "regression"``; ``geneb.tasks.regression``). ``geneb probe`` then fits ridge
regressions over the ``alphas`` sweep instead of logistic probes: which probe, protocol and
backend serve a regression task is the solver registry's ``TASK_PROBES`` rule
(``geneb.probe.solvers.serving``: probe ``ridge``, backend ``svd``,
``geneb.probe.solvers.ridge.RidgeSolver``), read here (planning: the names recorded) and by
``geneb.probe.worker`` (solving), which uses this module's :func:`ridge_metrics`.

Regime rule: k shots *per class* is undefined without classes, so regression pairs get the
``full`` regime only (k-shot regimes asked for are not planned for them, and nothing is when
``full`` is not asked for); ridge stands in for the linear probe, so ``probe="mlp"`` plans
nothing for them. A full-data ridge fit
draws no rows and is deterministic, so every seed's row carries the same single fit (one row
per seed, as for the full regime of the logistic probe). Metrics: Spearman, Pearson and R^2 on
the whole test split (``geneb.probe.regression_metrics``), each with a 95% percentile
bootstrap interval over test rows (``N_BOOT_METRIC`` resamples, ``BOOT_SEED``); the classification
columns (MCC, accuracy, ...) are null on these rows, so a regression score is never averaged
with an MCC.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.probe.plan import PlannedFit
from geneb.probe.regression_metrics import bootstrap_intervals, regression_metrics
from geneb.probe.solvers import serving
from geneb.protocol import BOOT_SEED, N_BOOT_METRIC  # the metric intervals' bootstrap
from geneb.results.schema import RESULTS_SCHEMA_VERSION, cell_id
from geneb.vocabulary import REGRESSION


def plan_ridge_pair(
    pair: Any,
    *,
    shots: Sequence[str],
    seeds: Sequence[int],
    alphas: Sequence[float],
    probe: str,
    standardize: bool,
    done: Any,
    versions: tuple[str, str],
    created: str,
) -> tuple[list[dict[str, Any]], int, int]:
    """Fill ``pair.fits`` / ``pair.cells`` with ridge cells; (reused rows, n_cells, n_skipped).

    Nothing is planned when ``full`` is not among ``shots`` (the only regime that applies) or
    for ``probe="mlp"`` (ridge stands in for the linear probe; the MLP is not defined here:
    the registry's ``TASK_PROBES``)."""
    key = serving(REGRESSION, probe)
    if key is None or "full" not in shots:
        return [], 0, 0
    positions = np.argsort(pair.rows, kind="stable").astype(np.int64)
    rows_key = hashlib.sha256(positions.tobytes()).hexdigest()
    fit_index: dict[tuple[str, float], int] = {}
    n_cells = n_skipped = 0
    for seed in seeds:
        for a in alphas:
            n_cells += 1
            base = _base_row(pair, seed, float(a), key, standardize, versions, created)
            cid = cell_id(base)
            if cid in done.ids:
                n_skipped += 1
                continue
            fkey = (rows_key, float(a))
            if fkey not in fit_index:
                fit_index[fkey] = len(pair.fits)
                pair.fits.append(PlannedFit(len(pair.fits), "full", None, int(seed), None,
                                            positions, alpha=float(a)))
            pair.cells.append((base, fit_index[fkey]))
            done.ids.add(cid)
    return [], n_cells, n_skipped


def _base_row(
    pair: Any, seed: int, alpha: float, key: tuple[str, str, str], standardize: bool,
    versions: tuple[str, str], created: str,
) -> dict[str, Any]:
    """The row of one ridge cell without its metrics; ``key``: the registry's (probe,
    protocol, backend) that serves it, recorded as they are named there."""
    probe, protocol, backend = key
    return {
        "schema_version": RESULTS_SCHEMA_VERSION, "model": pair.model, "task": pair.task,
        "category": pair.category, "task_synthetic": pair.synthetic, "regime": "full",
        "k": None, "seed": int(seed), "C": None, "alpha": alpha, "probe": probe,
        "protocol": protocol, "backend": backend, "standardize": bool(standardize),
        "take_all": False, "n_classes": None, "n_train": len(pair.rows),
        "n_test": pair.n_test, "train_rows": [], "n_params": pair.n_params,
        "store_fingerprint": pair.store_fp, "storage_dtype": pair.storage_dtype,
        "task_fingerprint": pair.task_fp, "geneb_version": versions[0],
        "sklearn_version": versions[1], "created": created,
    }


def ridge_metrics(y_test: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
    """The metric columns of one ridge fit: Spearman, Pearson, R^2 with their bootstrap
    intervals (NaN recorded as null); the classification columns null."""
    m = regression_metrics(y_test, pred)
    intervals = bootstrap_intervals(y_test, pred, n_boot=N_BOOT_METRIC, seed=BOOT_SEED)
    for k, (lo, hi) in intervals.items():
        m[f"{k}_lo"], m[f"{k}_hi"] = lo, hi
    return {**{k: (None if v != v else v) for k, v in m.items()},
            "mcc": None, "accuracy": None, "macro_f1": None, "auroc": None}
