"""The paper protocol (``--protocol paper``): GENEB's literal probe, for checking its numbers.

Each fit is ``sklearn.linear_model.LogisticRegression(C=C, max_iter=1000)`` with every other
argument at scikit-learn's default (lbfgs, tol 1e-4), fitted on the stored float32 embeddings
of the fit's train rows in file order (the order ``geneb.protocol`` draws them in), with
features as stored, or, with ``standardize``, scikit-learn's ``StandardScaler`` fitted on those
rows (what a script following the paper does). Unlike geneb's default protocol the fit may stop
before the optimum; that is the point. ConvergenceWarnings are counted per fit (recorded in
``n_convergence_warnings``), never printed.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

import numpy as np

from geneb._threads import thread_limit
from geneb.probe.solvers.base import FitResult, ProbeFit, ProbeProblem

#: The paper's only non-default argument besides C.
PAPER_MAX_ITER = 1000


def paper_fit(
    X: np.ndarray, y: np.ndarray, X_test: np.ndarray, *, C: float, n_classes: int,
    standardize: bool,
) -> FitResult:
    """One literal paper fit; test probabilities for classes 0..K-1."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        if standardize:
            scaler = StandardScaler().fit(X)
            X, X_test = scaler.transform(X), scaler.transform(X_test)
        clf = LogisticRegression(C=C, max_iter=PAPER_MAX_ITER).fit(X, y)
    n_warned = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    proba = np.zeros((len(X_test), n_classes))
    proba[:, clf.classes_.astype(np.int64)] = clf.predict_proba(X_test)
    n_iter = int(np.max(clf.n_iter_))
    pred = np.asarray(clf.predict(X_test), dtype=np.int64)  # the paper scores predict()
    return FitResult(proba=proba, n_iter=n_iter, converged=not n_warned,
                     fit_seconds=time.perf_counter() - t0, n_convergence_warnings=int(n_warned),
                     pred=pred)


class PaperSolver:
    """Solves the fits one by one exactly as the paper's code does (float32 input)."""

    name = "sklearn"
    precision = "float32"  # the stored embeddings as the paper passes them

    def __init__(self, blas_threads: int | None = 1) -> None:
        self.blas_threads = blas_threads

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        out = []
        X_all = np.asarray(problem.X_train, dtype=np.float32)
        X_test = np.asarray(problem.X_test, dtype=np.float32)
        with thread_limit(self.blas_threads):
            for fit in fits:
                idx = np.asarray(fit.train_idx, dtype=np.int64)
                out.append(paper_fit(X_all[idx], problem.y_train[idx], X_test, C=fit.C,
                                     n_classes=problem.n_classes,
                                     standardize=problem.standardize))
        return out
