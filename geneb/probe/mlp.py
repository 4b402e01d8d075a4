"""The MLP probe (``probe="mlp"``): the linear-vs-MLP stability check of GENEB.

One hidden layer with fixed, documented hyperparameters (``MLP_PARAMS``), trained on exactly
the rows the linear probe sees, with the cell's seed as ``random_state`` (the only source of
randomness). C does not apply (null in the results). Standardisation, when asked for, is fit
on the cell's own train rows as for the linear probe.

Two backends solve the same protocol:

* ``torch`` (the default; ``auto``, ``fast`` and ``cuml`` resolve to it, as neither of the
  latter has an MLP): every cell of a (model, task) job trained at once as one stacked model
  (``geneb.probe.mlp_torch``), float32, on CUDA when torch sees a GPU, else on the CPU cores
  the run was given;
* ``sklearn``: scikit-learn's ``MLPClassifier``, one fit at a time (the reference).

Both draw the initial weights and the mini-batch order from ``RandomState(seed)`` the same
way, so a cell's two answers differ by float32 rounding only (statistically equivalent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.errors import unknown_name
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

#: MLP backends; the linear-only names map to the default (they have no MLP of their own).
MLP_BACKENDS: tuple[str, ...] = ("torch", "sklearn")
_ALIASES = {"auto": "torch", "fast": "torch", "cuml": "torch"}


def resolve_mlp_backend(backend: str) -> str:
    """The MLP backend a ``--backend`` value selects (``torch`` or ``sklearn``)."""
    name = _ALIASES.get(backend, backend)
    if name not in MLP_BACKENDS:
        raise unknown_name("backend", backend, [*MLP_BACKENDS, *_ALIASES])
    return name


def make_mlp(seed: int) -> Any:
    """The GENEB MLP probe for one seed (scikit-learn; imported here: ~0.8 s)."""
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(random_state=int(seed), **MLP_PARAMS)


def fit_mlp(
    X: np.ndarray, y: np.ndarray, X_test: np.ndarray, *, seed: int, n_classes: int
) -> CellFit:
    """Train one scikit-learn MLP probe and return test probabilities for classes 0..K-1."""
    from geneb.probe.solvers.sklearn_backend import fit_estimator

    clf = make_mlp(seed)
    clf.set_params(batch_size=min(200, len(y)))
    return fit_estimator(clf, np.asarray(X, dtype=np.float32), y,
                         np.asarray(X_test, dtype=np.float32), n_classes=n_classes,
                         max_iter=MLP_PARAMS["max_iter"])


class MLPProbe:
    """scikit-learn reference: cells fit one by one (interface of a solver backend;
    ``cell.C`` is ignored)."""

    name = "sklearn"

    def __init__(self, blas_threads: int | None = 1) -> None:
        self.blas_threads = blas_threads

    def solve(self, problem: ProbeProblem, cells: Sequence[ProbeCell]) -> list[CellFit]:
        from geneb.probe.solvers.sklearn_backend import solve_one_by_one

        def fit(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, cell: ProbeCell) -> CellFit:
            return fit_mlp(X, y, X_test, seed=cell.seed, n_classes=problem.n_classes)

        return solve_one_by_one(problem, cells, fit, dtype=np.float32,
                                blas_threads=self.blas_threads)


class TorchMLPProbe:
    """All cells of a job trained at once in torch (see ``geneb.probe.mlp_torch``).

    ``threads``: torch CPU threads for the fits (the cores the run was given; 1 in a Dask
    worker). ``device``: auto (CUDA when available), cpu, cuda or cuda:N.
    """

    name = "torch"

    def __init__(self, device: str = "auto", threads: int | None = 1) -> None:
        from geneb.probe.mlp_torch import resolve_device

        self.device = resolve_device(device)
        self.threads = threads

    def solve(self, problem: ProbeProblem, cells: Sequence[ProbeCell]) -> list[CellFit]:
        from geneb.probe.mlp_torch import MLPConfig, fit_mlps

        return fit_mlps(problem, cells, cfg=MLPConfig.from_params(MLP_PARAMS),
                        device=self.device, threads=self.threads)


def get_mlp_probe(backend: str, *, blas_threads: int | None = 1,
                  fit_threads: int | None = None, device: str = "auto") -> Any:
    """The MLP solver for ``backend`` (already resolved or not), threads as the engine gives
    them: ``fit_threads`` (in-process runs: every core given) else ``blas_threads``."""
    name = resolve_mlp_backend(backend)
    if name == "sklearn":
        return MLPProbe(blas_threads=blas_threads)
    return TorchMLPProbe(device=device, threads=fit_threads or blas_threads)
