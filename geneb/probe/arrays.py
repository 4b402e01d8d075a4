"""``geneb.probe_arrays``: the GENEB probe protocol on numpy arrays, with no feature store.

For a user who has ``X, y`` arrays and no store. Nothing here is a second
implementation: the cells are planned by ``geneb.probe.plan.plan_pair`` (the same row draws,
the same de-duplication of identical fits), solved and scored by
``geneb.probe.worker.solve_fits`` (the same backends and metrics), and the rows have the
results table's columns (``RESULTS_SCHEMA``). So arrays read back from a store entry, given
that entry's task fingerprint and file rows, give the same rows and the same numbers as
``geneb probe`` on the store.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from geneb import protocol as _protocol
from geneb.constraints import validate_params, validated_list
from geneb.errors import ProbeError
from geneb.probe.engine import PROBE_PARAMS
from geneb.probe.feature_values import first_unprobeable
from geneb.probe.plan import (
    Done,
    Pair,
    _labels_fingerprint,
    plan_pair,
    versions,
)
from geneb.probe.solvers import resolve_backend
from geneb.probe.solvers.base import ProbeProblem
from geneb.protocol import (
    DEFAULT_C,
    DEFAULT_PROTOCOL,
    DEFAULT_SEEDS,
    MAX_ITER,
    REGIMES,
    UNCATEGORIZED,
)

if TYPE_CHECKING:
    import pandas as pd


def _matrix(name: str, X: Any) -> np.ndarray:
    """``X`` as a 2-D float32 matrix of accepted values (``feature_values``; float32 is the
    store's dtype: what every store run probes)."""
    a = np.asarray(X)
    if a.ndim != 2 or not (np.issubdtype(a.dtype, np.floating)
                           or np.issubdtype(a.dtype, np.integer)):
        raise ProbeError(f"{name}: expected a 2-D numeric array, got shape {a.shape} of "
                         f"{a.dtype}")
    if len(a) == 0:
        raise ProbeError(f"{name}: expected at least one row, got none")
    bad = first_unprobeable(a)
    if bad is not None:
        r, c, want = bad
        raise ProbeError(f"{name}: expected {want}, got {float(a[r, c]):g} at row {r}, column {c}")
    return np.ascontiguousarray(a, dtype=np.float32)


def _labels(name: str, y: Any, n: int, x_name: str) -> np.ndarray:
    """``y`` as int64 class ids 0..K-1, one per row of ``x_name``."""
    a = np.asarray(y)
    if a.ndim != 1 or len(a) != n:
        raise ProbeError(f"{name}: expected {n} labels (one per row of {x_name}), got shape "
                         f"{a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        if not (np.issubdtype(a.dtype, np.floating) and np.all(a == np.round(a))):
            raise ProbeError(f"{name}: expected integer class ids 0..K-1, got {a.dtype} values "
                             f"(map labels to ids first, e.g. np.unique(y, return_inverse=True))")
    a = a.astype(np.int64)
    if a.min() < 0:
        raise ProbeError(f"{name}: expected class ids >= 0, got {a.min()}")
    return a


#: ``probe_arrays``' parameters: ``run_probes``' declaration.
ARRAY_PARAMS = {
    **{k: PROBE_PARAMS[k] for k in ("shots", "seeds", "probe", "backend", "protocol",
                                    "standardize", "take_all")},
    "Cs": PROBE_PARAMS["Cs"],
}


@validate_params(ARRAY_PARAMS)
def probe_arrays(
    X_train: Any,  # noqa: N803 - the conventional names
    y_train: Any,
    X_test: Any,  # noqa: N803
    y_test: Any,
    *,
    shots: str | Iterable[str | int] = REGIMES,
    seeds: str | Iterable[int] = DEFAULT_SEEDS,
    Cs: float | str | Iterable[float] = DEFAULT_C,  # noqa: N803 - C is the conventional name
    probe: str = "linear",
    backend: str = "auto",
    protocol: str = DEFAULT_PROTOCOL,
    standardize: bool = False,
    take_all: bool = False,
    n_classes: int | None = None,
    task_fingerprint: str | None = None,
    rows: Sequence[int] | np.ndarray | None = None,
    model: str = "arrays",
    task: str = "arrays",
) -> pd.DataFrame:
    """Probe ``X_train, y_train`` -> ``X_test, y_test`` with the GENEB protocol; one row per
    cell (regime x seed x C), with the columns of the results table.

    The same protocol as ``run_probes``: k-shot rows drawn by the (task fingerprint, k, seed)
    RNG (``protocol="paper"``: GENEB's own draw, the labels being the values it sorts and
    ``rows`` the file order), the full regime on every train row (a stratified subsample
    above 100,000), the test split whole, L2 logistic regression solved to convergence (or
    the MLP probe, or the paper's protocol), MCC, accuracy, macro-F1 and AUROC. Labels are
    class ids 0..K-1 (``n_classes`` defaults to the largest id + 1); features are probed as
    float32, as stored.

    ``task_fingerprint`` and ``rows`` fix which rows the k-shot draws pick: pass a store
    entry's (``entry.provenance.task_fingerprint``, ``entry.rows``) to reproduce that store's
    run. Nothing is written anywhere.

    Parameters
    ----------
    X_train, X_test : array-like
        ``(n, dim)`` features of the train and test rows (probed as float32).
    y_train, y_test : array-like
        Their class ids 0..K-1.
    shots, seeds, Cs : str or iterable
        Regimes (k-shot counts and/or ``"full"``), seeds of the k-shot draws, inverse L2
        penalties of the logistic probe (comma strings accepted).
    probe, backend, protocol : str
        The probe (``linear``, ``mlp``), its solver backend (``auto`` chooses) and the
        protocol (``converged``, ``paper``), as for ``run_probes``.
    standardize, take_all : bool
        As for ``run_probes``: standardise features on the training rows; take every row of a
        class smaller than k (recorded) instead of refusing the sample.
    n_classes : int or None
        The number of classes (default: the largest id + 1).
    task_fingerprint : str or None
        The task's fingerprint, which seeds the k-shot draws (default: a fingerprint of the
        labels and rows, what a store without a task fingerprint uses).
    rows : sequence of int or None
        Each train row's index in its file (default ``0..n-1``).
    model, task : str
        Only name the rows (default ``"arrays"``).

    Returns
    -------
    pandas.DataFrame
        One row per cell (regime x seed x C), with the columns of the results table
        (``geneb.results.schema.RESULTS_SCHEMA``): MCC, accuracy, macro-F1, AUROC, ...
    """
    Xtr = _matrix("X_train", X_train)
    Xte = _matrix("X_test", X_test)
    if Xtr.shape[1] != Xte.shape[1]:
        raise ProbeError(f"X_test: expected {Xtr.shape[1]} columns (as X_train), got "
                         f"{Xte.shape[1]}")
    ytr = _labels("y_train", y_train, len(Xtr), "X_train")
    yte = _labels("y_test", y_test, len(Xte), "X_test")
    file_rows = np.arange(len(ytr), dtype=np.int64) if rows is None else np.asarray(rows)
    if file_rows.shape != ytr.shape or len(np.unique(file_rows)) != len(file_rows):
        raise ProbeError(f"rows: expected {len(ytr)} distinct row indices (one per row of "
                         f"X_train), got shape {file_rows.shape}")
    K = n_classes if n_classes is not None else _protocol.n_classes_of(ytr, yte)
    if K < 2 or max(ytr.max(), yte.max()) >= K:
        raise ProbeError(f"n_classes: expected an int >= 2 above every label, got {K}")
    backend_name = resolve_backend(backend, probe, protocol)  # checks probe and protocol too
    pair = Pair(model=model, task=task, labels=ytr, rows=file_rows.astype(np.int64),
                n_test=len(yte), n_classes=int(K), dim=Xtr.shape[1],
                task_fp=task_fingerprint or _labels_fingerprint(ytr, file_rows),
                store_fp="", storage_dtype="float32", n_params=None, category=UNCATEGORIZED,
                synthetic=False, label_values=list(range(int(K))), source_rows=len(ytr))
    plan_pair(pair, shots=validated_list(shots, str), seeds=validated_list(seeds, int),
              Cs=validated_list(Cs, float), probe=probe,
              backend_name=backend_name, protocol_name=protocol, standardize=standardize,
              take_all=take_all, done=Done(), versions=versions(),
              created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return _solve(pair, Xtr, Xte, yte, probe, backend_name, protocol, standardize)


def _solve(pair: Pair, Xtr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, probe: str,
           backend_name: str, protocol: str, standardize: bool) -> pd.DataFrame:
    """Solve the planned fits (``solve_fits``, as a store run) and join them to the cells."""
    from geneb.probe.schedule import default_workers
    from geneb.probe.worker import solve_fits
    from geneb.results.table import rows_to_table

    problem = ProbeProblem(X_train=Xtr, y_train=pair.labels, X_test=Xte,
                           n_classes=pair.n_classes, standardize=standardize, max_iter=MAX_ITER)
    res = solve_fits(problem, yte, pair.fits, probe=probe, backend=backend_name,
                     protocol_name=protocol, fit_threads=default_workers())
    by_id = {r["fit_id"]: r for r in res}
    out = [{**base, **{k: v for k, v in by_id[fid].items() if k != "fit_id"}}
           for base, fid in pair.cells]
    return rows_to_table(out).to_pandas()
