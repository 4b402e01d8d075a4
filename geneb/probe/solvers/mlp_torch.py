"""The fast MLP probe: many scikit-learn ``MLPClassifier`` fits trained at once in torch.

Why: the MLP check is the protocol's only stochastic, epoch-based fit, and scikit-learn runs
it one fit at a time in float32 numpy (one BLAS thread in the engine, Python overhead per
mini-batch). Here every fit of a pair (model, task) with the same batch structure is one
*stacked* model: the weights of P probes live in one flat buffer (views ``W1`` (P, d, h),
``b1``, ``W2``, ``b2``), each mini-batch step is two batched GEMMs forward and two back
(``torch.baddbmm``), and one fused Adam update covers every parameter of every probe.

What is reproduced from scikit-learn (``sklearn/neural_network/_multilayer_perceptron.py``):

* the random stream: ``np.random.RandomState(seed)`` draws W1, b1, W2, b2 from Glorot uniform
  ``U(-sqrt(6 / (fan_in + fan_out)), +...)`` in that order, then every epoch shuffles the
  previous epoch's order (``sample_idx = sample_idx[perm]``). A fit therefore starts from
  the same weights and sees the same mini-batches as ``MLPClassifier(random_state=seed)``;
  trajectories then differ only by float32 rounding (summation order), so agreement is
  statistical, but close;
* the outputs: one logistic unit when the train rows hold two classes, else a softmax over
  the classes present (classes absent from the train rows get probability 0);
* the loss per batch: mean log loss with probabilities clipped to [eps, 1 - eps] (float32
  eps) plus ``0.5 * alpha * ||W||^2 / n_batch`` (weights, not intercepts); gradients
  ``(X^T delta + alpha * W) / n_batch``; epoch loss = sum of batch loss x batch rows / n;
* ``batch_size = min(200, n)``, the last batch of an epoch is the remainder;
* Adam (lr 1e-3, betas 0.9 / 0.999, eps 1e-8) with scikit-learn's step
  ``lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)``, which is torch's Adam with
  ``eps_t = eps / sqrt(1 - b2^t)``;
* stopping: after each epoch ``count += 1`` if loss > best - tol else ``count = 0``; stop when
  ``count > n_iter_no_change``; at most ``max_iter`` epochs; ``converged`` = stopped by the
  rule before ``max_iter`` (as the sklearn backend reports it).

Convergence masks: a probe that stops is copied out and removed from the stack (the flat
buffers and Adam moments are compacted), so finished probes cost nothing afterwards.
Probes with n <= batch size (every few-shot fit) have one full batch per epoch; they are
stacked together with zero-padded rows and per-row weights (mask / n_p). Probes with more
rows are stacked with the others of the same row count (the full-data fits of all seeds).
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from geneb.probe.preprocess import Standardizer
from geneb.probe.solvers.base import FitResult, ProbeFit, ProbeProblem
from geneb.probe.solvers.mlp_stack import MLPConfig, _Probe, _train_probes

__all__ = ["MLPConfig", "fit_mlps", "torch_threads"]


@contextlib.contextmanager
def _strict_float32(device: str) -> Iterator[None]:
    """float32 GEMMs on CUDA (no TF32, whatever the process set), restored afterwards."""
    from geneb.models.device import tf32

    if not device.startswith("cuda"):
        yield
        return
    with tf32(False):
        yield


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` torch intra-op threads (None: leave as is), restored afterwards."""
    import torch

    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(max(1, int(n)))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _predict(params: dict[str, np.ndarray], X_test: Any, classes: np.ndarray, n_classes: int,
             device: str) -> np.ndarray:
    import torch

    W1, b1, W2, b2 = (torch.from_numpy(params[k]).to(device) for k in ("W1", "b1", "W2", "b2"))
    z = torch.addmm(b2, torch.addmm(b1, X_test, W1).clamp_min_(0.0), W2)
    if len(classes) == 2:
        p1 = torch.sigmoid(z[:, 0]).double().cpu().numpy()
        pr = np.stack([1.0 - p1, p1], axis=1)
    else:
        pr = torch.softmax(z, dim=-1).double().cpu().numpy()
    out = np.zeros((len(pr), n_classes))
    out[:, classes] = pr
    return out


def _shards(probes: list[_Probe], threads: int | None, cfg: MLPConfig) -> list[list[_Probe]]:
    """Split probes over ``threads`` CPU threads by estimated cost (greedy, largest first).

    Why not torch's own threads: OpenMP's barriers inside every GEMM stall whenever one of
    its threads is descheduled, which on a shared 2-core machine made 2 threads 6x slower
    than 1; independent stacks per Python thread (torch releases the GIL) never wait on each
    other. A probe's answer does not depend on its stack, so the split changes no number.
    """
    n = max(1, int(threads or 1))
    if n == 1 or len(probes) < 2:
        return [probes]

    def cost(p: _Probe) -> float:  # per epoch: rows through the GEMMs + the Adam pass
        rows = len(p.idx)
        return rows + 64.0 * math.ceil(rows / cfg.batch_size)

    load = [0.0] * min(n, len(probes))
    out: list[list[_Probe]] = [[] for _ in load]
    for p in sorted(probes, key=cost, reverse=True):
        j = load.index(min(load))
        out[j].append(p)
        load[j] += cost(p)
    return [o for o in out if o]


def fit_mlps(problem: ProbeProblem, fits: Sequence[ProbeFit], *, cfg: MLPConfig,
             device: str = "cpu", threads: int | None = None) -> list[FitResult]:
    """Train one protocol MLP per fit (its rows, its seed) and return test probabilities.

    Fits sharing a row count are trained as one stacked model; identical train rows share
    one standardised design matrix. ``threads`` sets torch's CPU threads for the call.
    """
    import torch

    if not fits:
        return []
    with torch_threads(threads), torch.no_grad(), _strict_float32(device):
        X = np.ascontiguousarray(problem.X_train, dtype=np.float32)
        y = np.asarray(problem.y_train, dtype=np.int64)
        probes = [_Probe(i, np.asarray(c.train_idx, np.int64), int(c.seed),
                         np.unique(y[c.train_idx])) for i, c in enumerate(fits)]
        # one design matrix (and test matrix) per distinct set of rows
        src_of: dict[bytes, int] = {}
        designs: list[np.ndarray] = []
        tests: list[Any] = []
        X_test_raw = np.ascontiguousarray(problem.X_test, dtype=np.float32)
        for p in probes:
            key = p.idx.tobytes()
            if key not in src_of:
                src_of[key] = len(designs)
                Xc = X[p.idx]
                Xt = X_test_raw
                if problem.standardize:
                    s = Standardizer.fit(Xc)
                    Xc, Xt = s.transform(Xc, np.float32), s.transform(Xt, np.float32)
                designs.append(np.ascontiguousarray(Xc))
                tests.append(Xt)
            p.source = src_of[key]
        shards = _shards(probes, threads, cfg) if device == "cpu" else [probes]
        if len(shards) == 1:
            _train_probes(probes, designs, y, cfg, device)
        else:  # one Python thread per core, one torch thread each: no OpenMP barriers
            with torch_threads(1), ThreadPoolExecutor(len(shards)) as ex:
                for f in [ex.submit(_train_probes, sh, designs, y, cfg, device)
                          for sh in shards]:
                    f.result()
        test_dev: dict[int, Any] = {}
        out = []
        for p in probes:
            if p.source not in test_dev:
                test_dev[p.source] = torch.from_numpy(np.ascontiguousarray(tests[p.source])
                                                      ).to(device)
            assert p.params is not None
            proba = _predict(p.params, test_dev[p.source], p.classes, problem.n_classes, device)
            out.append(FitResult(proba=proba, n_iter=p.n_iter, converged=p.stopped,
                                 fit_seconds=p.seconds))
        return out
