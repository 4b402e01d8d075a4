"""The scikit-learn backend: one ``LogisticRegression`` per fit, solved to convergence.

It is the reference the faster backends are checked against, so it favours exactness over
speed: float64, ``newton-cholesky`` (second order, converges to the optimum in a few steps)
while the Hessian is small enough, else L-BFGS at a tight gradient tolerance. ``n_iter`` and
``converged`` (below ``max_iter`` and no ``ConvergenceWarning``) are recorded per fit.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from geneb._threads import thread_limit
from geneb.probe.preprocess import standardize_pair
from geneb.probe.solvers.base import (
    DEFAULT_TOL,
    FitResult,
    ProbeFit,
    ProbeProblem,
    second_order,
)

#: L-BFGS stops on max |projected gradient| of sklearn's mean-scaled objective.
LBFGS_TOL = 1e-10


def choose_solver(n_features: int, n_classes: int, tol: float = DEFAULT_TOL) -> tuple[str, float]:
    """(solver, tol) that reaches the optimum: Newton for small Hessians (``second_order``),
    else tight L-BFGS."""
    if second_order(n_features, 1 if n_classes == 2 else n_classes):
        return "newton-cholesky", tol
    return "lbfgs", min(tol, LBFGS_TOL)


def fit_logreg(
    X: np.ndarray,
    y: np.ndarray,
    X_test: np.ndarray,
    *,
    C: float,
    n_classes: int,
    max_iter: int = 1000,
    solver: str | None = None,
    tol: float = DEFAULT_TOL,
) -> FitResult:
    """Fit one L2 logistic regression (float64) and return test probabilities for 0..K-1."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    X_test = np.ascontiguousarray(X_test, dtype=np.float64)
    auto_solver, auto_tol = choose_solver(X.shape[1], n_classes, tol)
    clf = LogisticRegression(C=C, max_iter=max_iter, solver=solver or auto_solver,
                             tol=auto_tol if solver is None else tol)
    return fit_estimator(clf, X, y, X_test, n_classes=n_classes, max_iter=max_iter)


def fit_estimator(
    clf: Any, X: np.ndarray, y: np.ndarray, X_test: np.ndarray, *, n_classes: int, max_iter: int
) -> FitResult:
    """Fit a scikit-learn classifier; converged = under max_iter and no ConvergenceWarning.

    Shared by the logistic-regression reference and the MLP probe so both report n_iter,
    convergence and test probabilities for classes 0..K-1 the same way.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    seconds = time.perf_counter() - t0
    n_iter = int(np.max(clf.n_iter_))
    n_warned = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    proba = np.zeros((len(X_test), n_classes))
    proba[:, clf.classes_.astype(np.int64)] = clf.predict_proba(X_test)
    return FitResult(proba=proba, n_iter=n_iter, converged=(n_iter < max_iter) and not n_warned,
                     fit_seconds=seconds, n_convergence_warnings=int(n_warned))


class SklearnBackend:
    """Reference CPU backend: fits solved one by one, each with one BLAS thread."""

    name = "sklearn"
    precision = "float64"

    def __init__(self, blas_threads: int | None = 1) -> None:
        self.blas_threads = blas_threads

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        def fit_one(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, fit: ProbeFit
                    ) -> FitResult:
            return fit_logreg(X, y, X_test, C=fit.C, n_classes=problem.n_classes,
                              max_iter=problem.max_iter, tol=problem.tol)

        return solve_one_by_one(problem, fits, fit_one, dtype=np.float64,
                                blas_threads=self.blas_threads)


def solve_one_by_one(
    problem: ProbeProblem,
    fits: Sequence[ProbeFit],
    fit_one: Callable[[np.ndarray, np.ndarray, np.ndarray, ProbeFit], FitResult],
    *,
    dtype: type,
    blas_threads: int | None,
) -> list[FitResult]:
    """Solve fits one at a time: each on its own rows, standardised on them when asked."""
    out: list[FitResult] = []
    with thread_limit(blas_threads):
        for fit in fits:
            X = problem.X_train[fit.train_idx]
            X_test = problem.X_test
            if problem.standardize:
                X, X_test = standardize_pair(X, X_test, dtype=dtype)
            out.append(fit_one(X, problem.y_train[fit.train_idx], X_test, fit))
    return out
