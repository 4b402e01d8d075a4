"""The worker side of a probe run: solve every fit of one (model, task).

Runs in a Dask worker or in the driver. The job reads the pair's embeddings from the store
itself (the store is on a shared file system), so each matrix reaches a worker exactly once and
nothing large travels through the scheduler; it solves every cell of the pair in one backend
call (so a backend can batch them) with BLAS pinned to one thread, and returns small dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.errors import GenebError, StoreError
from geneb.probe.metrics import compute_metrics
from geneb.probe.plan import FitJob
from geneb.probe.solvers.base import ProbeCell, ProbeProblem
from geneb.protocol import DEFAULT_PROTOCOL, MAX_ITER
from geneb.store import FeatureStore, StoreEntry


def solve_group(
    store_path: str,
    model: str,
    task: str,
    store_fp: str,
    n_classes: int,
    fits: Sequence[FitJob],
    probe: str,
    backend: str,
    standardize: bool,
    storage_dtype: str | None = None,
    protocol_name: str = DEFAULT_PROTOCOL,
    blas_threads: int | None = 1,
    fit_threads: int | None = None,
    entries: tuple[StoreEntry, StoreEntry] | None = None,
) -> list[dict[str, Any]]:
    """Solve every fit of one (model, task); runs in a Dask worker or in-process.

    Reads the pair's embeddings from the store here (never shipped through the scheduler; a
    fresh, aligned array) and returns only small per-fit dicts: metrics, n_iter, converged
    (``solve_fits``).
    In-process runs pass the (train, test) ``entries`` the finite check already read instead
    of reading them twice, and may give the ``fast`` backend's full-data fits ``fit_threads``
    cores (the cores the run was given) for their bit-reproducible parallel steps; everything
    else keeps ``blas_threads``.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=blas_threads):
        if entries is None:
            fs = FeatureStore(store_path, "r")
            tr = fs.get(model, task, "train")
            te = fs.get(model, task, "test")
        else:
            tr, te = entries
        if tr.fingerprint != store_fp:
            raise StoreError(
                f"store entry {tr.key} changed while probing (fingerprint {tr.fingerprint} "
                f"!= planned {store_fp}); rerun geneb probe"
            )
        if storage_dtype is not None and str(tr.embeddings.dtype) != storage_dtype:
            raise StoreError(
                f"store entry {tr.key} holds {tr.embeddings.dtype} embeddings but its attributes "
                f"say {storage_dtype}; re-extract it"
            )
        if fits and fits[0].alpha is not None:  # a regression task: ridge probes
            from geneb.probe.ridge_probe import solve_ridge_fits

            return solve_ridge_fits(tr.embeddings, tr.labels, te.embeddings, te.labels, fits,
                                    standardize)
        problem = ProbeProblem(
            X_train=np.ascontiguousarray(tr.embeddings, dtype=np.float32),
            y_train=np.asarray(tr.labels, dtype=np.int64),
            X_test=np.ascontiguousarray(te.embeddings, dtype=np.float32),
            n_classes=n_classes,
            standardize=standardize,
            max_iter=MAX_ITER,
        )
        return solve_fits(problem, np.asarray(te.labels, dtype=np.int64), fits, probe=probe,
                          backend=backend, protocol_name=protocol_name,
                          blas_threads=blas_threads, fit_threads=fit_threads)


def solve_fits(
    problem: ProbeProblem,
    y_test: np.ndarray,
    fits: Sequence[FitJob],
    *,
    probe: str,
    backend: str,
    protocol_name: str = DEFAULT_PROTOCOL,
    blas_threads: int | None = 1,
    fit_threads: int | None = None,
) -> list[dict[str, Any]]:
    """Solve the planned ``fits`` of one problem and score them on ``y_test``: the one place
    a store run (``solve_group``) and an array run (``geneb.probe_arrays``) both go through.

    ``protocol_name="paper"`` fits each cell with scikit-learn's literal
    ``LogisticRegression(C=C, max_iter=1000)`` instead of ``backend``."""
    from threadpoolctl import threadpool_limits

    from geneb.probe.solvers import make_solver

    with threadpool_limits(limits=blas_threads):
        solver = make_solver(probe, protocol_name, backend, blas_threads=blas_threads,
                             fit_threads=fit_threads)
        cells = [
            ProbeCell(regime=f.regime, k=f.k, seed=f.seed,
                      C=float("nan") if f.C is None else f.C, train_idx=f.positions)
            for f in fits
        ]
        results = solver.solve(problem, cells)
        if len(results) != len(cells):
            raise GenebError(f"backend {solver.name!r} returned {len(results)} fits for "
                             f"{len(cells)} cells")
        out = []
        for f, r in zip(fits, results, strict=True):
            out.append({
                "fit_id": f.fit_id,
                **compute_metrics(y_test, r.proba, problem.n_classes, y_pred=r.pred),
                "n_iter": int(r.n_iter),
                "converged": bool(r.converged),
                "n_convergence_warnings": r.n_convergence_warnings,
                "fit_seconds": float(r.fit_seconds),
            })
        return out
