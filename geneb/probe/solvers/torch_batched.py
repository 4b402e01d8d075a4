"""``torch``: the batched solver of ``fast`` in torch, on CPU or CUDA.

Few-shot fits use exactly the ``fast`` algorithm (per-fit standardisation, thin SVD to the
row space, ONE batched Newton solve), with the SVDs and the Newton iterations running on the
torch device: thousands of tiny problems per launch is where a GPU beats per-fit libraries.
Full-data fits run the same ``batched_newton`` (batch of one, exact float64 Hessian) along
the ascending C path with warm starts, which suits a GPU's dense throughput.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from geneb.models.device import resolve_device
from geneb.probe.solvers.base import PROBE_DEVICES, FitResult, ProbeProblem
from geneb.probe.solvers.batched_newton import TorchOps, batched_newton
from geneb.probe.solvers.fast import FEW_SHOT_MAX_ROWS, FastBackend, proba_from_logits
from geneb.probe.solvers.fast_full import intercept_start


class TorchBatchedBackend(FastBackend):
    """Same answers as ``fast``; iterations run in torch on ``device``."""

    name = "torch"

    def __init__(self, device: str = "auto", few_shot_max_rows: int = FEW_SHOT_MAX_ROWS,
                 blas_threads: int | None = None, **_: Any) -> None:
        super().__init__(blas_threads=blas_threads, few_shot_max_rows=few_shot_max_rows)
        self.device = resolve_device(device, PROBE_DEVICES)
        self.ops = TorchOps(self.device)

    def _solve_full(self, problem: ProbeProblem, idx: np.ndarray, Cs: list[float]
                    ) -> list[FitResult]:
        ops = self.ops
        t0 = time.perf_counter()
        Xa_np, _, Xt = self._design(problem, idx)
        n, p = Xa_np.shape
        K = problem.n_classes
        multi = K > 2
        y = problem.y_train[idx]
        Y_np = np.eye(K)[y] if multi else y.astype(np.float64)[:, None]
        Xa = ops.asarray(Xa_np[None])
        Y = ops.asarray(Y_np[None])
        sw = ops.asarray(np.ones((1, n)))
        pen_np = np.ones((1, p))
        pen_np[:, -1] = 0.0
        pen = ops.asarray(pen_np)
        prep = time.perf_counter() - t0
        theta0 = np.zeros((1, Y_np.shape[1], p))
        theta0[0, :, -1:] = intercept_start(y, K)
        theta = ops.asarray(theta0)
        out = []
        for C in Cs:
            t1 = time.perf_counter()
            res = batched_newton(ops, Xa, Y, sw, ops.asarray(np.array([C], dtype=np.float64)),
                                 pen, multi=multi, tol=problem.tol, max_iter=problem.max_iter,
                                 theta0=theta, norm="inf")
            theta = res.theta
            th = ops.to_numpy(theta[0])
            W, b = th[:, :-1], th[:, -1]
            mag = np.abs(Xt) @ np.abs(W).T + np.abs(b)
            out.append(FitResult(proba=proba_from_logits(Xt @ W.T + b, multi, mag),
                                 n_iter=int(res.n_iter[0]), converged=bool(res.converged[0]),
                                 fit_seconds=time.perf_counter() - t1 + prep / len(Cs)))
        return out
