"""The MLP probe (``probe="mlp"``): the linear-vs-MLP stability check of GENEB.

One hidden layer with fixed, documented hyperparameters (``MLP_PARAMS``), trained on exactly
the rows the linear probe sees, with the cell's seed as ``random_state`` (the only source of
randomness). C does not apply (null in the results). Standardisation, when asked for, is fit
on the cell's own train rows as for the linear probe.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from geneb.probe.preprocess import standardize_pair
from geneb.probe.solvers.base import CellFit, ProbeCell, ProbeProblem

#: Fixed hyperparameters (scikit-learn ``MLPClassifier``); never tuned per task or model.
MLP_PARAMS: dict[str, Any] = {
    "hidden_layer_sizes": (256,),
    "activation": "relu",
    "solver": "adam",
    "alpha": 1e-4,
    "learning_rate_init": 1e-3,
    "batch_size": 200,  # min(200, n) as sklearn's "auto"
    "max_iter": 200,
    "tol": 1e-4,
    "n_iter_no_change": 10,
    "early_stopping": False,
}


def make_mlp(seed: int) -> MLPClassifier:
    """The GENEB MLP probe for one seed."""
    return MLPClassifier(random_state=int(seed), **MLP_PARAMS)


def fit_mlp(
    X: np.ndarray, y: np.ndarray, X_test: np.ndarray, *, seed: int, n_classes: int
) -> CellFit:
    """Train one MLP probe and return test probabilities for classes 0..K-1."""
    clf = make_mlp(seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.set_params(batch_size=min(200, len(y)))
        clf.fit(np.asarray(X, dtype=np.float32), y)
    seconds = time.perf_counter() - t0
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    proba = np.zeros((len(X_test), n_classes))
    proba[:, clf.classes_.astype(np.int64)] = clf.predict_proba(np.asarray(X_test, np.float32))
    n_iter = int(clf.n_iter_)
    return CellFit(proba=proba, n_iter=n_iter,
                   converged=(n_iter < MLP_PARAMS["max_iter"]) and not warned,
                   fit_seconds=seconds)


class MLPProbe:
    """Solves MLP cells (same interface as a solver backend; ``cell.C`` is ignored)."""

    name = "sklearn"

    def __init__(self, blas_threads: int | None = 1) -> None:
        self.blas_threads = blas_threads

    def solve(self, problem: ProbeProblem, cells: Sequence[ProbeCell]) -> list[CellFit]:
        out: list[CellFit] = []
        with threadpool_limits(limits=self.blas_threads):
            for cell in cells:
                X = problem.X_train[cell.train_idx]
                X_test = problem.X_test
                if problem.standardize:
                    X, X_test = standardize_pair(X, X_test, dtype=np.float32)
                out.append(fit_mlp(X, problem.y_train[cell.train_idx], X_test, seed=cell.seed,
                                   n_classes=problem.n_classes))
        return out
