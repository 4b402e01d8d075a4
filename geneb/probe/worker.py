"""The worker side of a probe run: solve every fit of one pair (model, task).

Runs in a Dask worker or in the driver. The worker reads the pair's embeddings from the store
itself (the store is on a shared file system), so each matrix reaches a worker exactly once and
nothing large travels through the scheduler; it solves every fit of the pair in one backend
call (so a backend can batch them) with BLAS pinned to one thread, and returns small dicts
(one per fit; the driver joins them to the pair's cells, the result rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from geneb.errors import GenebError, ProbeError, StoreError
from geneb.probe.metrics import compute_metrics
from geneb.probe.plan import PlannedFit, is_regression_labels
from geneb.probe.solvers import serving
from geneb.probe.solvers.base import FitResult, ProbeFit, ProbeProblem
from geneb.protocol import DEFAULT_PROTOCOL, MAX_ITER
from geneb.store import FeatureStore, StoreEntry
from geneb.vocabulary import CLASSIFICATION, REGRESSION


def solve_pair(
    store_path: str,
    model: str,
    task: str,
    store_fp: str,
    n_classes: int,
    fits: Sequence[PlannedFit],
    probe: str,
    backend: str,
    standardize: bool,
    storage_dtype: str | None = None,
    protocol_name: str = DEFAULT_PROTOCOL,
    blas_threads: int | None = 1,
    fit_threads: int | None = None,
    entries: tuple[StoreEntry, StoreEntry] | None = None,
) -> list[dict[str, Any]]:
    """Solve every fit of one pair (model, task); runs in a Dask worker or in-process.

    Reads the pair's embeddings from the store here (never shipped through the scheduler; a
    fresh, aligned array) and returns only small per-fit dicts: metrics, n_iter, converged
    (``solve_fits``).
    In-process runs pass the (train, test) ``entries`` the finite check already read instead
    of reading them twice, and may give the ``fast`` backend's full-data fits ``fit_threads``
    cores (the cores the run was given) for their bit-reproducible parallel steps; everything
    else keeps ``blas_threads``.
    """
    from geneb._threads import thread_limit

    with thread_limit(blas_threads):
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
        regression = is_regression_labels(tr.labels)
        # which solver serves this task's kind: the registry's one rule (ridge for regression)
        key = serving(REGRESSION if regression else CLASSIFICATION, probe, protocol_name,
                      backend)
        if key is None:  # the probe does not exist for this kind: nothing was planned
            return []
        problem = _problem(tr, te, n_classes, standardize, regression)
        y_test = np.asarray(te.labels, dtype=np.float64 if regression else np.int64)
        return solve_fits(problem, y_test, fits, probe=key[0], backend=key[2],
                          protocol_name=key[1], blas_threads=blas_threads,
                          fit_threads=fit_threads)


def _problem(tr: StoreEntry, te: StoreEntry, n_classes: int, standardize: bool,
             regression: bool) -> ProbeProblem:
    """The pair's matrices as its solver takes them: float32 features and class ids, or for a
    regression the features as stored (ridge solves in float64) and float64 targets."""
    if regression:
        return ProbeProblem(X_train=tr.embeddings, y_train=np.asarray(tr.labels, np.float64),
                            X_test=te.embeddings, n_classes=0, standardize=standardize)
    return ProbeProblem(
        X_train=np.ascontiguousarray(tr.embeddings, dtype=np.float32),
        y_train=np.asarray(tr.labels, dtype=np.int64),
        X_test=np.ascontiguousarray(te.embeddings, dtype=np.float32),
        n_classes=n_classes,
        standardize=standardize,
        max_iter=MAX_ITER,
    )


def solve_fits(
    problem: ProbeProblem,
    y_test: np.ndarray,
    fits: Sequence[PlannedFit],
    *,
    probe: str,
    backend: str,
    protocol_name: str = DEFAULT_PROTOCOL,
    blas_threads: int | None = 1,
    fit_threads: int | None = None,
) -> list[dict[str, Any]]:
    """Solve the planned ``fits`` of one problem and score them on ``y_test``: the one place
    a store run (``solve_pair``) and an array run (``geneb.probe_arrays``) both go through.

    ``protocol_name="paper"`` solves each fit with scikit-learn's literal
    ``LogisticRegression(C=C, max_iter=1000)`` instead of ``backend``; ``probe="ridge"``
    (a regression problem, ``n_classes`` 0) scores predictions by ``ridge_metrics``."""
    from geneb._threads import thread_limit
    from geneb.probe.solvers import make_solver

    with thread_limit(blas_threads):
        solver = make_solver(probe, protocol_name, backend, blas_threads=blas_threads,
                             fit_threads=fit_threads)
        specs = [
            ProbeFit(regime=f.regime, k=f.k, seed=f.seed,
                     C=float("nan") if f.C is None else f.C, train_idx=f.positions,
                     alpha=f.alpha)
            for f in fits
        ]
        results = solver.solve(problem, specs)
        if len(results) != len(specs):
            raise GenebError(f"backend {solver.name!r} returned {len(results)} results for "
                             f"{len(specs)} fits")
        out = []
        for f, r in zip(fits, results, strict=True):
            out.append({
                "fit_id": f.fit_id,
                **_metrics(y_test, r, problem.n_classes),
                "n_iter": int(r.n_iter),
                "converged": bool(r.converged),
                "n_convergence_warnings": r.n_convergence_warnings,
                "fit_seconds": float(r.fit_seconds),
                "precision": r.precision or solver.precision,
                **({"backend": r.backend} if r.backend else {}),  # the one that actually ran
            })
        return out


def _metrics(y_test: np.ndarray, fit: FitResult, n_classes: int) -> Mapping[str, object]:
    """The metric columns of one fit: a regression's (``n_classes`` 0) from its predictions,
    else the classification metrics from its class probabilities."""
    if n_classes == 0:
        from geneb.probe.ridge_probe import ridge_metrics

        if fit.pred is None:
            raise ProbeError("a ridge fit returned no predictions (FitResult.pred is None)")
        return ridge_metrics(y_test, fit.pred)
    return compute_metrics(y_test, fit.class_proba(), n_classes, y_pred=fit.pred)

