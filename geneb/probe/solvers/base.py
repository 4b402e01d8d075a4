"""The solver interface: a backend receives one pair's embeddings and a batch of fits.

Vocabulary (docs/probing.md): a *pair* is one (model, task); a *fit* is one solve (train
rows, C or alpha, seed: :class:`ProbeFit` in, :class:`FitResult` out); a *cell* is one row of
the results table (several cells may share a fit, e.g. the seeds of a deterministic
full-data fit). Receiving the whole batch lets a backend solve fits jointly (all few-shot
fits stacked into one batched Newton solve, full-data fits once per C with warm starts along
the C path).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from geneb.errors import ProbeError

#: Gradient tolerance used by every backend so that results are the optimum of the objective.
#: Reached when max |grad| of the (sklearn-scaled) objective falls below it.
DEFAULT_TOL = 1e-8

#: Largest Hessian side (coefficients solved for jointly) for which a backend uses a
#: second-order solver; above it, L-BFGS, whose memory grows with the coefficients instead of
#: their square. The one rule behind every backend's solver choice (``second_order``): at 8,192
#: a Hessian and its factor take at most 1 GiB in float64; 500 classes x 65 would take 16 GiB
#: (19 GB RSS measured at that size). A Newton step costs n side^2 in GEMM (fast) and
#: converges in ~5-15 steps; tight L-BFGS needs hundreds to thousands of passes on
#: ill-conditioned (large C) problems.
NEWTON_MAX_COEFS = 8192

#: Device kinds the torch solvers run on (``geneb.models.device.resolve_device(device,
#: PROBE_DEVICES)``): no MPS, which lacks the float64 the Newton solves use, so ``auto`` is
#: CUDA when torch sees a GPU, else the CPU.
PROBE_DEVICES: tuple[str, ...] = ("cpu", "cuda")


def second_order(n_features: int, n_weight_rows: int) -> bool:
    """Whether a problem of ``n_features`` (+ an intercept) and ``n_weight_rows`` weight
    vectors (1 binary; K multinomial, or K - 1 in a sum-zero parametrisation) is small
    enough for a Hessian (``NEWTON_MAX_COEFS``)."""
    return (n_features + 1) * n_weight_rows <= NEWTON_MAX_COEFS


@dataclass(frozen=True, eq=False)
class ProbeFit:
    """One fit to solve: which train rows (indices into X_train), which C (or alpha), and the
    (regime, k, seed) it was drawn for."""

    regime: str  # "1" | "10" | "full"
    k: int | None
    seed: int
    C: float
    train_idx: np.ndarray  # int64 positions into the task's train matrix
    alpha: float | None = None  # the ridge penalty (probe ``ridge``, regression tasks)


@dataclass(frozen=True, eq=False)
class FitResult:
    """What a backend returns per fit; metrics are computed centrally from ``proba``."""

    proba: np.ndarray | None  # (n_test, n_classes) class probabilities; None: regression
    n_iter: int
    converged: bool
    fit_seconds: float
    n_convergence_warnings: int | None = None  # ConvergenceWarnings raised; None: not counted
    #: predicted test classes when not argmax(proba) (paper); a regression's predictions
    pred: np.ndarray | None = None
    #: the backend that solved this fit when it is not the solver's own (e.g. ``torch`` hands
    #: fits too large for a Hessian to ``fast``'s CPU L-BFGS); None: the solver's
    backend: str | None = None
    #: the arithmetic this fit ran in when it is not the solver's ``precision``
    precision: str | None = None

    def class_proba(self) -> np.ndarray:
        """``proba`` of a classification fit.

        Returns
        -------
        numpy.ndarray
            (n_test, n_classes) class probabilities; ``ProbeError`` when the backend gave none.
        """
        if self.proba is None:
            raise ProbeError(f"a classification fit returned no class probabilities (backend "
                             f"{self.backend or 'of the solver'})")
        return self.proba


@dataclass(frozen=True, eq=False)
class ProbeProblem:
    """The matrices of one pair (model, task) plus everything a backend needs for its fits."""

    X_train: np.ndarray  # (n_train, d) float32 (ridge: as stored; it solves in float64)
    y_train: np.ndarray  # (n_train,) int64 in 0..K-1; float64 targets for ridge
    X_test: np.ndarray  # (n_test, d) float32
    n_classes: int  # 0 for regression targets
    standardize: bool = False
    max_iter: int = 1000
    tol: float = DEFAULT_TOL


@runtime_checkable
class SolverBackend(Protocol):
    """Solves L2 logistic regression exactly as scikit-learn defines it.

    Objective (sklearn >= 1.8 scaling): C * sum_i loss_i + 0.5 * ||W||^2, unpenalised intercept;
    binary uses one weight vector (sigmoid), K > 2 uses the multinomial (softmax) loss.
    Standardisation, when requested, is fit on each fit's own train rows only.
    """

    name: str
    #: the arithmetic a fit runs in ("float64", "float32"), recorded in every result row
    precision: str

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        """One result per fit, in the order of ``fits``."""
        ...


def check_problem(problem: ProbeProblem, fits: Sequence[ProbeFit]) -> None:
    """Shapes, labels and row indices must be consistent; say which part is wrong."""
    Xtr, Xte, y = problem.X_train, problem.X_test, problem.y_train
    if Xtr.ndim != 2 or Xte.ndim != 2 or Xtr.shape[1] != Xte.shape[1]:
        raise ProbeError(f"train/test matrices must be 2-D with the same width, got "
                         f"{Xtr.shape} and {Xte.shape}")
    if y.shape != (Xtr.shape[0],):
        raise ProbeError(f"y_train has shape {y.shape}, expected ({Xtr.shape[0]},)")
    if problem.n_classes < 2 or (y.size and (y.min() < 0 or y.max() >= problem.n_classes)):
        raise ProbeError(f"labels must be integers in 0..{problem.n_classes - 1}")
    for c in fits:
        idx = np.asarray(c.train_idx)
        if idx.ndim != 1 or idx.size == 0:
            raise ProbeError(f"fit regime={c.regime} seed={c.seed}: empty or non 1-D train_idx")
        if idx.min() < 0 or idx.max() >= Xtr.shape[0]:
            raise ProbeError(f"fit regime={c.regime} seed={c.seed}: train_idx outside "
                             f"0..{Xtr.shape[0] - 1}")
        if not (np.isfinite(c.C) and c.C > 0):
            raise ProbeError(f"fit regime={c.regime} seed={c.seed}: C must be > 0, got {c.C}")
