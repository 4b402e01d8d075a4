"""The solver interface: a backend receives one task's embeddings and a batch of cells.

Receiving the whole batch lets a backend solve cells jointly (all few-shot cells stacked into
one batched Newton solve, full-data fits once per C with warm starts along the C path).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

#: Gradient tolerance used by every backend so that results are the optimum of the objective.
#: Reached when max |grad| of the (sklearn-scaled) objective falls below it.
DEFAULT_TOL = 1e-8


@dataclass(frozen=True, eq=False)
class ProbeCell:
    """One fit: which train rows (indices into X_train), which C, and where it came from."""

    regime: str  # "1" | "10" | "full"
    k: int | None
    seed: int
    C: float
    train_idx: np.ndarray  # int64 positions into the task's train matrix


@dataclass(frozen=True, eq=False)
class CellFit:
    """What a backend returns per cell; metrics are computed centrally from ``proba``."""

    proba: np.ndarray  # (n_test, n_classes) class probabilities on the test matrix
    n_iter: int
    converged: bool
    fit_seconds: float
    n_convergence_warnings: int | None = None  # ConvergenceWarnings raised; None: not counted
    pred: np.ndarray | None = None  # predicted test classes when not argmax(proba) (paper)


@dataclass(frozen=True, eq=False)
class ProbeProblem:
    """One (model, task) matrix pair plus everything a backend needs to fit the cells."""

    X_train: np.ndarray  # (n_train, d) float32
    y_train: np.ndarray  # (n_train,) int64 in 0..K-1
    X_test: np.ndarray  # (n_test, d) float32
    n_classes: int
    standardize: bool = False
    max_iter: int = 1000
    tol: float = DEFAULT_TOL


@runtime_checkable
class SolverBackend(Protocol):
    """Solves L2 logistic regression exactly as scikit-learn defines it.

    Objective (sklearn >= 1.8 scaling): C * sum_i loss_i + 0.5 * ||W||^2, unpenalised intercept;
    binary uses one weight vector (sigmoid), K > 2 uses the multinomial (softmax) loss.
    Standardisation, when requested, is fit on each cell's own train rows only.
    """

    name: str

    def solve(self, problem: ProbeProblem, cells: Sequence[ProbeCell]) -> list[CellFit]: ...
