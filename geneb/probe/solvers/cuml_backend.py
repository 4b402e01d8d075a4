"""The cuML backend (GPU): one ``cuml.linear_model.LogisticRegression`` per fit.

cuML is imported lazily: nothing here touches it until the backend is asked for, so CPU-only
installs never pay for (or fail on) the import. ``cuml_available()`` is True only when cuML
imports *and* a CUDA device is visible; ``--backend auto`` uses it to choose.
cuML's QN solver with ``penalty_normalized=True`` minimises the same objective as scikit-learn
(mean loss + ||W||^2 / (2 C n)); its ``tol`` is a relative stopping criterion, so a tight value
is passed and ``n_iter``/``converged`` are recorded.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import time
from collections.abc import Sequence

import numpy as np

from geneb.errors import GenebError
from geneb.probe.preprocess import standardize_pair
from geneb.probe.solvers.base import FitResult, ProbeFit, ProbeProblem

INSTALL_HINT = (
    "install the RAPIDS cuML package matching your CUDA version (pip install 'geneb[gpu]', "
    "i.e. cuml-cu12) on a machine with an NVIDIA GPU, or choose backend='fast' or 'sklearn'"
)
#: Relative tolerance handed to cuML's quasi-Newton solver.
CUML_TOL = 1e-10


def _gpu_count() -> int:
    try:
        cupy = importlib.import_module("cupy")
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


@functools.cache
def cuml_status() -> tuple[bool, str]:
    """(usable, why not): cuML must import and a CUDA device must be visible."""
    if importlib.util.find_spec("cuml") is None:
        return False, "cuML is not installed"
    try:
        importlib.import_module("cuml")
    except Exception as e:  # broken CUDA libraries raise all sorts of errors
        return False, f"cuML is installed but cannot be imported ({type(e).__name__}: {e})"
    if _gpu_count() < 1:
        return False, "cuML imports but no CUDA GPU is visible"
    return True, ""


def cuml_available() -> bool:
    """True when the cuML backend can run here (cuML imports and a GPU is visible)."""
    return cuml_status()[0]


class CumlBackend:
    """GPU backend: fits solved one by one on the GPU in float32 (cuML's native precision)."""

    name = "cuml"

    def __init__(self, tol: float = CUML_TOL) -> None:
        ok, why = cuml_status()
        if not ok:
            raise GenebError(f"backend 'cuml' is not usable here: {why}; {INSTALL_HINT}")
        self._lr = importlib.import_module("cuml.linear_model").LogisticRegression
        self._cupy = importlib.import_module("cupy")
        self.tol = tol

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        cp = self._cupy
        out: list[FitResult] = []
        for fit in fits:
            X = problem.X_train[fit.train_idx]
            y = problem.y_train[fit.train_idx]
            X_test = problem.X_test
            if problem.standardize:
                X, X_test = standardize_pair(X, X_test, dtype=np.float32)
            clf = self._lr(C=fit.C, penalty="l2", max_iter=problem.max_iter, tol=self.tol,
                           fit_intercept=True, output_type="numpy")
            t0 = time.perf_counter()
            clf.fit(cp.asarray(X, dtype=cp.float32), cp.asarray(y, dtype=cp.float32))
            proba_k = np.asarray(clf.predict_proba(cp.asarray(X_test, dtype=cp.float32)))
            seconds = time.perf_counter() - t0
            n_iter = int(np.max(np.atleast_1d(getattr(clf, "n_iter_", problem.max_iter))))
            classes = np.asarray(clf.classes_).astype(np.int64)
            proba = np.zeros((len(X_test), problem.n_classes))
            proba[:, classes] = proba_k
            out.append(FitResult(proba=proba, n_iter=n_iter, converged=n_iter < problem.max_iter,
                                 fit_seconds=seconds))
        return out
