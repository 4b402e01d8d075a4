"""The MLP probe (``probe="mlp"``): the linear-vs-MLP stability check of GENEB.

One hidden layer with fixed, documented hyperparameters (``MLP_PARAMS``), trained on exactly
the rows the linear probe sees, with the fit's seed as ``random_state`` (the only source of
randomness). C does not apply (null in the results). Standardisation, when asked for, is fit
on the fit's own train rows as for the linear probe.

Two backends solve the same protocol (which one serves a run: ``geneb.probe.solvers``):

* ``torch`` (the default; ``auto``, ``fast`` and ``cuml`` resolve to it, as neither of the
  latter has an MLP): every fit of a pair (model, task) trained at once as one stacked model
  (``geneb.probe.solvers.mlp_torch``), float32, on CUDA when torch sees a GPU, else on the
  CPU cores the run was given;
* ``sklearn``: scikit-learn's ``MLPClassifier``, one fit at a time (the reference).

Both draw the initial weights and the mini-batch order from ``RandomState(seed)`` the same
way, so a fit's two answers differ by float32 rounding only (statistically equivalent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.probe.solvers.base import PROBE_DEVICES, FitResult, ProbeFit, ProbeProblem
from geneb.vocabulary import DEFAULT_DEVICE

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

def make_mlp(seed: int) -> Any:
    """The GENEB MLP probe for one seed (scikit-learn; imported here: ~0.8 s)."""
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(random_state=int(seed), **MLP_PARAMS)


def fit_mlp(
    X: np.ndarray, y: np.ndarray, X_test: np.ndarray, *, seed: int, n_classes: int
) -> FitResult:
    """Train one scikit-learn MLP probe and return test probabilities for classes 0..K-1."""
    from geneb.probe.solvers.sklearn_backend import fit_estimator

    clf = make_mlp(seed)
    clf.set_params(batch_size=min(200, len(y)))
    return fit_estimator(clf, np.asarray(X, dtype=np.float32), y,
                         np.asarray(X_test, dtype=np.float32), n_classes=n_classes,
                         max_iter=MLP_PARAMS["max_iter"])


class MLPProbe:
    """scikit-learn reference: fits solved one by one (interface of a solver backend;
    ``fit.C`` is ignored)."""

    name = "sklearn"
    precision = "float32"

    def __init__(self, blas_threads: int | None = 1) -> None:
        self.blas_threads = blas_threads

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        from geneb.probe.solvers.sklearn_backend import solve_one_by_one

        def fit_one(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, fit: ProbeFit
                    ) -> FitResult:
            return fit_mlp(X, y, X_test, seed=fit.seed, n_classes=problem.n_classes)

        return solve_one_by_one(problem, fits, fit_one, dtype=np.float32,
                                blas_threads=self.blas_threads)


class TorchMLPProbe:
    """All fits of a pair trained at once in torch (see ``geneb.probe.solvers.mlp_torch``).

    ``threads``: torch CPU threads for the fits (the cores the run was given; 1 in a Dask
    worker). ``device``: auto (CUDA when available), cpu, cuda or cuda:N.
    """

    name = "torch"
    precision = "float32"  # strict float32: TF32 off (geneb.models.device.tf32)

    def __init__(self, device: str = DEFAULT_DEVICE, threads: int | None = 1) -> None:
        from geneb.models.device import resolve_device

        self.device = resolve_device(device, PROBE_DEVICES)
        self.threads = threads

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        from geneb.probe.solvers.mlp_torch import MLPConfig, fit_mlps

        return fit_mlps(problem, fits, cfg=MLPConfig.from_params(MLP_PARAMS),
                        device=self.device, threads=self.threads)

