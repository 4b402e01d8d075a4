"""The cuML backend (GPU): one ``cuml.linear_model.LogisticRegression`` per fit, judged by geneb.

cuML is imported lazily: nothing here touches it until the backend is asked for, so CPU-only
installs never pay for (or fail on) the import. ``cuml_available()`` is True only when cuML
imports *and* a CUDA device is visible; ``--backend auto`` uses it to choose.

What cuML computes, and why geneb does not take its word for convergence (read in
rapidsai/cuml at commit 342457bcb82bbdd6aadab6dc37fb808a838b1c31):

- ``python/cuml/cuml/linear_model/logistic_regression.py``: ``fit`` calls ``fit_qn`` with
  ``l2_strength = 1 / C`` and ``penalty_normalized=True``: the objective is scikit-learn's
  divided by ``C * n`` (mean loss + ||W||^2 / (2 C n)); ``coef_`` is (1 or K, d),
  ``intercept_`` (1,) or (K,), ``n_iter_`` (1,), ``classes_`` the labels seen.
- ``python/cuml/cuml/solvers/qn.pyx`` ``fit_qn``: accepts float32 *and* float64 input and
  solves in the input's precision (``qnFit[double, int]`` for float64): float32 is not
  "native", only the default of float32 arrays.
- ``cpp/src/glm/qn/qn_util.cuh`` ``check_convergence``: stops when
  ``gnorm <= tol * max(f, tol)``, or when f changed by less than ``delta * max(f, tol)``
  over ``past`` iterations; a failed line search (``qn_solvers.cuh`` ``min_lbfgs``) also
  ends the fit, and none of these reasons reaches Python. In float32 the first test cannot
  be met at geneb's tolerance (rounding alone leaves gradients of ~3e-8 where 1e-8 is asked).

So every fit runs in float64 on the GPU (``precision`` "float64"), and after it geneb
computes, on the host in float64, the objective and the gradient of scikit-learn's scaled
objective at the returned coefficients (``batched_newton.judge``): ``converged`` means max
|gradient| / (C n) <= ``problem.tol``, the test of every other backend. Test probabilities
are computed on the host from the coefficients with exact ties snapped as in ``fast``
(``proba_from_logits``), so a tie is broken the same way by every backend.
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
from geneb.probe.solvers.batched_newton import judge
from geneb.probe.solvers.fast import proba_from_logits

INSTALL_HINT = (
    "install the RAPIDS cuML package matching your CUDA version (pip install 'geneb[gpu]', "
    "i.e. cuml-cu12) on a machine with an NVIDIA GPU, or choose backend='fast' or 'sklearn'"
)
#: Tolerance handed to cuML's quasi-Newton solver (its test: max |g| <= tol * max(f, tol) on
#: its scaled objective f <= log K): tight enough that cuML does not stop before geneb's
#: tolerance is within reach; geneb judges the result itself.
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
    """GPU backend: fits solved one by one on the GPU in float64, judged on the host."""

    name = "cuml"
    precision = "float64"

    def __init__(self, tol: float = CUML_TOL) -> None:
        ok, why = cuml_status()
        if not ok:
            raise GenebError(f"backend 'cuml' is not usable here: {why}; {INSTALL_HINT}")
        self._lr = importlib.import_module("cuml.linear_model").LogisticRegression
        self._cupy = importlib.import_module("cupy")
        self.tol = tol

    def solve(self, problem: ProbeProblem, fits: Sequence[ProbeFit]) -> list[FitResult]:
        return [self._fit(problem, fit) for fit in fits]

    def _fit(self, problem: ProbeProblem, fit: ProbeFit) -> FitResult:
        cp = self._cupy
        X = problem.X_train[fit.train_idx].astype(np.float64)
        y = problem.y_train[fit.train_idx]
        X_test = problem.X_test.astype(np.float64)
        if problem.standardize:
            X, X_test = standardize_pair(X, X_test, dtype=np.float64)
        clf = self._lr(C=fit.C, penalty="l2", max_iter=problem.max_iter, tol=self.tol,
                       fit_intercept=True, output_type="numpy")
        t0 = time.perf_counter()
        clf.fit(cp.asarray(X, dtype=cp.float64), cp.asarray(y, dtype=cp.float64))
        seconds = time.perf_counter() - t0
        classes = np.asarray(clf.classes_).astype(np.int64)
        W = np.asarray(clf.coef_, dtype=np.float64).reshape(-1, X.shape[1])
        b = np.asarray(clf.intercept_, dtype=np.float64).reshape(-1)
        y_local = np.searchsorted(classes, y)  # the labels seen, as cuML indexed them
        _, gnorm = judge(X, y_local, W, b, fit.C, len(classes))
        multi = len(classes) > 2
        mag = np.abs(X_test) @ np.abs(W).T + np.abs(b)
        proba_k = proba_from_logits(X_test @ W.T + b, multi, mag)
        proba = np.zeros((len(X_test), problem.n_classes))
        proba[:, classes] = proba_k
        n_iter = int(np.max(np.atleast_1d(getattr(clf, "n_iter_", problem.max_iter))))
        return FitResult(proba=proba, n_iter=n_iter, converged=bool(gnorm <= problem.tol),
                         fit_seconds=seconds)
