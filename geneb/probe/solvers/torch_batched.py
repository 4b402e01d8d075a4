"""``torch``: the batched solver of ``fast`` in torch, on CPU or CUDA.

Few-shot fits use exactly the ``fast`` algorithm (per-fit standardisation, thin SVD to the
row space, ONE batched Newton solve), with the SVDs and the Newton iterations running on the
torch device: thousands of tiny problems per launch is where a GPU beats per-fit libraries.
Full-data fits that ``second_order`` admits run an exact float64 Newton along the ascending
C path with warm starts (``torch_full``): the K-1 rows ``fast`` solves, its stopping test,
memory bounded by the design, a row chunk and the Hessian. Fits with more coefficients than a
Hessian may have are ``fast``'s CPU L-BFGS, and their rows say backend "fast".
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from geneb.models.device import resolve_device
from geneb.probe.solvers.base import PROBE_DEVICES, FitResult, ProbeProblem
from geneb.probe.solvers.batched_newton import TorchOps
from geneb.probe.solvers.fast import FEW_SHOT_MAX_ROWS, FastBackend, proba_from_logits
from geneb.probe.solvers.fast_full import intercept_start
from geneb.vocabulary import DEFAULT_DEVICE


class TorchBatchedBackend(FastBackend):
    """Same answers as ``fast``; iterations run in torch on ``device``."""

    name = "torch"

    def __init__(self, device: str = DEFAULT_DEVICE, few_shot_max_rows: int = FEW_SHOT_MAX_ROWS,
                 blas_threads: int | None = None, **_: Any) -> None:
        super().__init__(blas_threads=blas_threads, few_shot_max_rows=few_shot_max_rows)
        self.device = resolve_device(device, PROBE_DEVICES)
        self.ops = TorchOps(self.device)

    def _solve_full(self, problem: ProbeProblem, idx: np.ndarray, Cs: list[float]
                    ) -> list[FitResult]:
        from geneb.probe.solvers.torch_full import solve_path_torch

        t0 = time.perf_counter()
        Xa_np, _, Xt = self._design(problem, idx)
        Xa = self.ops.asarray(Xa_np)
        del Xa_np  # the device copy is the one used (on CPU torch may share it)
        y = problem.y_train[idx]
        prep = time.perf_counter() - t0
        path = solve_path_torch(Xa, y, problem.n_classes, Cs,
                                intercept_start(y, problem.n_classes), tol=problem.tol,
                                max_iter=problem.max_iter)
        multi = problem.n_classes > 2
        out = []
        for pf in path:
            W, b = pf.theta[:, :-1], pf.theta[:, -1]
            mag = np.abs(Xt) @ np.abs(W).T + np.abs(b)
            out.append(FitResult(proba=proba_from_logits(Xt @ W.T + b, multi, mag),
                                 n_iter=pf.n_iter, converged=pf.converged,
                                 fit_seconds=pf.seconds + prep / len(path)))
        return out

    def _solve_large(self, problem: ProbeProblem, idx: np.ndarray, Cs: list[float]
                     ) -> list[FitResult]:
        """Too many coefficients for a Hessian: ``fast``'s L-BFGS on the CPU, said so."""
        return [dataclasses.replace(r, backend=FastBackend.name)
                for r in super()._solve_large(problem, idx, Cs)]
