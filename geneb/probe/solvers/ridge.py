"""Ridge regression probes (continuous labels): scikit-learn's ``Ridge`` for a whole alpha sweep.

Objective (``sklearn.linear_model.Ridge(alpha, fit_intercept=True)``):
``||y - X w - b||^2 + alpha ||w||^2`` with an unpenalised intercept ``b``. Solved exactly in
float64 from one thin SVD of the centred train matrix per distinct set of train rows:
``w = V diag(s / (s^2 + alpha)) U^T (y - mean(y))``, ``b = mean(y) - mean(X) w``; every alpha
of the sweep reuses the SVD, so a 5-alpha sweep costs about one fit. Standardisation, when
asked, is fit on each fit's own train rows (``geneb.probe.preprocess``), as for the logistic
probes. Tested equal to ``Ridge`` on every fit.

:class:`RidgeSolver` is the registry's solver of the probe ``ridge`` (``geneb.probe.solvers``:
regression tasks get it where the linear probe was asked for); :func:`solve_ridge` is the
function underneath, for callers with their own matrices (the task API, supervised VEP).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from geneb.errors import ProbeError
from geneb.probe.preprocess import standardize_pair
from geneb.probe.solvers.base import FitResult, ProbeFit, ProbeProblem
from geneb.protocol import DEFAULT_ALPHA_SWEEP

__all__ = ["DEFAULT_ALPHA_SWEEP", "RidgeFit", "RidgeResult", "RidgeSolver", "ridge_predict",
           "solve_ridge"]


@dataclass(frozen=True, eq=False)
class RidgeFit:
    """One ridge fit: which train rows (positions into X_train) and which alpha."""

    alpha: float
    train_idx: np.ndarray


@dataclass(frozen=True, eq=False)
class RidgeResult:
    """Test predictions of one fit, and the seconds its SVD and solve took (shared SVDs are
    split evenly among the fits that use them)."""

    pred: np.ndarray  # (n_test,) float64
    fit_seconds: float


def ridge_predict(
    X: np.ndarray, y: np.ndarray, X_test: np.ndarray, alphas: Sequence[float]
) -> list[np.ndarray]:
    """Test predictions of ``Ridge(alpha)`` fit on (X, y), one array per alpha (float64)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    Xt = np.asarray(X_test, dtype=np.float64)
    x_mean, y_mean = X.mean(axis=0), y.mean()
    U, s, Vt = np.linalg.svd(X - x_mean, full_matrices=False)
    uty = U.T @ (y - y_mean)
    out = []
    for a in alphas:
        w = Vt.T @ (s / (s * s + float(a)) * uty)
        out.append((Xt - x_mean) @ w + (y_mean))
    return out


def solve_ridge(
    X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, fits: Sequence[RidgeFit],
    *, standardize: bool = False,
) -> list[RidgeResult]:
    """Solve every fit; fits with the same train rows share one SVD."""
    by_rows: dict[bytes, list[int]] = {}
    for i, c in enumerate(fits):
        by_rows.setdefault(np.asarray(c.train_idx, np.int64).tobytes(), []).append(i)
    out: list[RidgeResult | None] = [None] * len(fits)
    for members in by_rows.values():
        t0 = time.perf_counter()
        idx = np.asarray(fits[members[0]].train_idx, dtype=np.int64)
        X, Xt = X_train[idx], X_test
        if standardize:
            X, Xt = standardize_pair(X, Xt, dtype=np.float64)
        preds = ridge_predict(X, y_train[idx], Xt, [fits[i].alpha for i in members])
        secs = (time.perf_counter() - t0) / len(members)
        for i, p in zip(members, preds, strict=True):
            out[i] = RidgeResult(pred=p, fit_seconds=secs)
    return [f for f in out if f is not None]


class RidgeSolver:
    """The registry's ridge solver (backend ``svd``): every fit's ``alpha`` on its train rows.

    ``problem.y_train`` holds float targets (``n_classes`` 0); each result's ``pred`` is the
    test predictions (``proba`` is None: a regression has no class probabilities). The solve
    is exact, so every fit converges in one step.
    """

    name = "svd"
    precision = "float64"

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        ridge = []
        for c in fits:
            if c.alpha is None:
                raise ProbeError(f"a ridge fit needs alpha (the ridge penalty); got {c!r:.80}")
            ridge.append(RidgeFit(alpha=float(c.alpha), train_idx=c.train_idx))
        results = solve_ridge(problem.X_train, np.asarray(problem.y_train, np.float64),
                              problem.X_test, ridge, standardize=problem.standardize)
        return [FitResult(proba=None, n_iter=1, converged=True, fit_seconds=r.fit_seconds,
                          pred=r.pred) for r in results]
