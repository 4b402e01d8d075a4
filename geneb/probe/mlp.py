"""The MLP probe (``probe="mlp"``): the linear-vs-MLP stability check of GENEB.

One hidden layer with fixed, documented hyperparameters (``MLP_PARAMS``), trained on exactly
the rows the linear probe sees, with the cell's seed as ``random_state`` (the only source of
randomness). C does not apply (null in the results). Standardisation, when asked for, is fit
on the cell's own train rows as for the linear probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.neural_network import MLPClassifier

from geneb.probe.solvers.base import CellFit, ProbeCell, ProbeProblem
from geneb.probe.solvers.sklearn_backend import fit_estimator, solve_one_by_one

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
    clf.set_params(batch_size=min(200, len(y)))
    return fit_estimator(clf, np.asarray(X, dtype=np.float32), y,
                         np.asarray(X_test, dtype=np.float32), n_classes=n_classes,
                         max_iter=MLP_PARAMS["max_iter"])


class MLPProbe:
    """Solves MLP cells (same interface as a solver backend; ``cell.C`` is ignored)."""

    name = "sklearn"

    def __init__(self, blas_threads: int | None = 1) -> None:
        self.blas_threads = blas_threads

    def solve(self, problem: ProbeProblem, cells: Sequence[ProbeCell]) -> list[CellFit]:
        def fit(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, cell: ProbeCell) -> CellFit:
            return fit_mlp(X, y, X_test, seed=cell.seed, n_classes=problem.n_classes)

        return solve_one_by_one(problem, cells, fit, dtype=np.float32,
                                blas_threads=self.blas_threads)
