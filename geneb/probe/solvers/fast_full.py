"""Full-data logistic regression along an ascending C path (numpy, CPU).

Inexact Newton: each Newton system ``H delta = -g`` is solved by conjugate gradients with exact
float64 Hessian-vector products, preconditioned by a Cholesky factor of ``C * G + I`` where
``G = X^T D X`` is the data part of the Hessian computed in float32 (one GEMM, the only
O(n d^2) step) at some earlier iterate. ``G`` is reused across Newton steps and across C
(re-factoring for a new C costs one O(d^3 / 3) Cholesky) and recomputed only when CG stops
converging quickly. Gradient, objective and line search run in float64, so the float32 Gram
only affects speed, never the answer. Warm starts: each C starts from the previous solution.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg, special
from scipy.linalg import blas

#: CG steps after which the lagged Gram is considered stale and recomputed.
STALE_CG = 5
MAX_CG = 200


@dataclass(frozen=True, eq=False)
class PathFit:
    """One C of the path: coefficients (K', p) with the intercept last, and how it went."""

    C: float
    theta: np.ndarray
    n_iter: int
    converged: bool
    grad_norm: float
    seconds: float


class _Problem:
    """Loss, gradient and Hessian products of one full-data problem at one C.

    Multi-class: sklearn's symmetric parametrisation has its optimum in the sum-zero subspace
    (shifting all K weight vectors by their mean lowers the penalty and leaves the softmax
    unchanged; the intercepts are only defined up to such a shift, and sum-zero ones are
    chosen). With an orthonormal basis Q (K x K-1) of that subspace, ``W = Q V`` is an exact
    reparametrisation with ``||W|| = ||V||``: K-1 instead of K coefficient rows, so the
    Hessian is 2/3 the side (K = 3: 3 GEMM blocks instead of 6, a Cholesky 3.4x cheaper),
    and no extra term is needed to fix the intercept shift. Binary: Q = [[1]].
    """

    def __init__(self, Xa64: np.ndarray, Xa32: np.ndarray, y: np.ndarray, n_classes: int,
                 gram_threads: int | None = None) -> None:
        self.X = Xa64
        self.X32 = Xa32
        self.gram_threads = gram_threads
        self._controller: Any = None
        self.n, self.p = Xa64.shape
        self.multi = n_classes > 2
        if self.multi:
            centred = np.eye(n_classes) - 1.0 / n_classes
            self.Q = np.linalg.qr(centred)[0][:, : n_classes - 1]
            self.Y = np.eye(n_classes)[y]
        else:
            self.Q = np.ones((1, 1))
            self.Y = y.astype(np.float64)[:, None]
        self.Kp = self.Q.shape[1]  # coefficient rows actually solved for
        self.pen = np.ones(self.p)
        self.pen[-1] = 0.0

    def full(self, theta: np.ndarray) -> np.ndarray:
        """(K', p) coefficients in sklearn's parametrisation."""
        return self.Q @ theta

    def eta(self, theta: np.ndarray) -> np.ndarray:
        return self.X @ self.full(theta).T

    def loss_terms(self, eta: np.ndarray) -> tuple[float, np.ndarray]:
        if self.multi:
            lse = special.logsumexp(eta, axis=1)
            return float((lse - (eta * self.Y).sum(1)).sum()), np.exp(eta - lse[:, None])
        e = eta[:, 0]
        return float((np.logaddexp(0.0, e) - self.Y[:, 0] * e).sum()), special.expit(eta)

    def penalty(self, theta: np.ndarray) -> float:
        return 0.5 * float((self.pen * theta * theta).sum())

    def grad(self, C: float, theta: np.ndarray, P: np.ndarray) -> np.ndarray:
        return C * (self.Q.T @ (self.X.T @ (P - self.Y)).T) + self.pen * theta

    def grad_norm(self, C: float, g: np.ndarray) -> float:
        """sklearn's stopping measure: max |gradient| in its own coefficients, over C * n
        (the full gradient lies in the sum-zero subspace, so it is exactly ``Q g``)."""
        return float(np.abs(self.Q @ g).max()) / (C * self.n)

    def hvp(self, C: float, P: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessian-vector product with float32 data passes (it only steers CG; the gradient and
        the stopping test stay float64)."""
        X = self.X32
        w32 = self.full(v).astype(np.float32)
        if self.multi:
            u = (X @ w32.T).astype(np.float64)  # (n, K)
            pu = P * u
            s = pu - P * pu.sum(1, keepdims=True)
            hv = self.Q.T @ (X.T @ s.astype(np.float32)).T.astype(np.float64)
        else:
            u = (X @ w32[0]).astype(np.float64)
            s = (P[:, 0] * (1.0 - P[:, 0])) * u
            hv = (X.T @ s.astype(np.float32)).astype(np.float64)[None, :]
        return C * hv + self.pen * v

    def gram(self, P: np.ndarray) -> np.ndarray:
        """Data Hessian ``X^T D X`` in float32 arithmetic, returned as float64 (K'p, K'p).

        Only the upper triangle is guaranteed (binary: ``ssyrk`` fills only that one): the
        only consumer is the upper Cholesky factorisation in ``precond``, which reads no other
        entry (mirroring the lower half cost ~8 ms a call for nothing).
        All rows: a Gram estimated from a row subset (tried: 2,048-8,192 of 20,000 rows) made
        CG need 2-8x more steps and the path 1.6-2.9x slower.
        """
        with self._gram_blas():
            return self._gram(P)

    def _gram_blas(self) -> Any:
        """BLAS thread limit for the binary Gram, the one large BLAS-3 step (``gram_threads``;
        None: the caller's setting). ``ssyrk`` gives the same bits with any thread count
        (OpenBLAS splits the output blocks, each summed in one thread; checked on these
        shapes), so threads change only the time. Not for K > 2: there the ``sgemm`` blocks
        did change in the last bits with two threads. The memory-bound matrix-vector products
        stay on the caller's setting (threads change their bits too)."""
        if self.gram_threads is None or self.multi:
            return contextlib.nullcontext()
        from threadpoolctl import ThreadpoolController

        if self._controller is None:
            self._controller = ThreadpoolController()
        return self._controller.limit(limits=self.gram_threads, user_api="blas")

    def _gram(self, P: np.ndarray) -> np.ndarray:
        X = self.X32
        if not self.multi:
            Xs = X * np.sqrt(P[:, 0] * (1.0 - P[:, 0])).astype(np.float32)[:, None]
            return blas.ssyrk(1.0, Xs.T).astype(np.float64)  # upper triangle; ~20% under GEMM
        # all coupled blocks: a block-diagonal preconditioner (one Cholesky per class) was
        # tried and needed 30x more CG steps on gue_splice_reconstructed (3 classes)
        K, p = self.Kp, self.p
        PQ = P @ self.Q  # (n, K-1)
        G = np.empty((K * p, K * p))
        for a in range(K):
            for b in range(a, K):
                w = (P * (self.Q[:, a] * self.Q[:, b])).sum(1) - PQ[:, a] * PQ[:, b]
                blk = (X.T @ (X * w.astype(np.float32)[:, None])).astype(np.float64)
                G[a * p:(a + 1) * p, b * p:(b + 1) * p] = blk
                if b != a:
                    G[b * p:(b + 1) * p, a * p:(a + 1) * p] = blk.T
        return G

    def precond(self, C: float, G: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """``r -> M^{-1} r`` for ``M = C * G + penalty`` (one Cholesky factorisation)."""
        M = C * G
        M[np.diag_indices_from(M)] += np.tile(self.pen, self.Kp)
        M[np.diag_indices_from(M)] += 1e-10 * np.abs(np.diag(M)).max()
        fac = linalg.cho_factor(M, lower=False, check_finite=False)
        return lambda r: linalg.cho_solve(fac, r, check_finite=False)


def _pcg(prob: _Problem, C: float, P: np.ndarray, g: np.ndarray,
         precond: Callable[[np.ndarray], np.ndarray], rtol: float) -> tuple[np.ndarray, int]:
    """Preconditioned CG for ``H x = -g``; returns x and the number of CG steps."""
    shape = g.shape
    x = np.zeros(g.size)
    r = -g.ravel()
    z = precond(r)
    d = z.copy()
    rz = r @ z
    target = rtol * np.linalg.norm(r)
    it = 0
    for it in range(1, MAX_CG + 1):  # noqa: B007 (it is returned)
        Hd = prob.hvp(C, P, d.reshape(shape)).ravel()
        dHd = d @ Hd
        if dHd <= 0:
            break
        a = rz / dHd
        x += a * d
        r -= a * Hd
        if np.linalg.norm(r) <= target:
            break
        z = precond(r)
        rz_new = r @ z
        d = z + (rz_new / rz) * d
        rz = rz_new
    return x.reshape(shape), it


def intercept_start(y: np.ndarray, n_classes: int) -> np.ndarray:
    """(K', p=1) intercept-only optimum (class log-odds), the start of the C path's first fit;
    zeros when a class is absent (its optimum is not finite)."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    if (counts == 0).any():
        return np.zeros((n_classes if n_classes > 2 else 1, 1))
    if n_classes == 2:
        return np.array([[np.log(counts[1] / counts[0])]])
    logp = np.log(counts / counts.sum())
    return (logp - logp.mean())[:, None]


def solve_path(
    Xa64: np.ndarray,
    Xa32: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    Cs: Sequence[float],
    *,
    tol: float,
    max_iter: int,
    gram_threads: int | None = None,
) -> list[PathFit]:
    """Fit every C in ascending order, warm-starting each from the previous solution.

    ``Xa64``/``Xa32``: (n, p) design (features then a column of ones) in both precisions.
    Convergence: max |gradient| of sklearn's scaled objective (divided by C * n) <= ``tol``.
    ``gram_threads``: BLAS threads for the Gram products only (None: the caller's setting).
    """
    prob = _Problem(Xa64, Xa32, y, n_classes, gram_threads)
    theta = np.zeros((prob.Kp, prob.p))
    theta[:, -1:] = prob.Q.T @ intercept_start(y, n_classes)
    G: np.ndarray | None = None
    out: list[PathFit] = []
    for C in sorted(float(c) for c in Cs):
        t0 = time.perf_counter()
        cho = None
        eta = prob.eta(theta)
        loss, P = prob.loss_terms(eta)
        f = C * loss + prob.penalty(theta)
        it = 0
        converged = False
        gnorm = np.inf
        while True:
            g = prob.grad(C, theta, P)
            gnorm = prob.grad_norm(C, g)
            if gnorm <= tol:
                converged = True
                break
            if it >= max_iter:
                break
            if G is None:
                G = prob.gram(P)
                cho = None
            if cho is None:
                cho = prob.precond(C, G)
            rtol = min(0.1, max(1e-6, np.sqrt(gnorm)))
            delta, ncg = _pcg(prob, C, P, g, cho, rtol)
            if ncg > STALE_CG:
                G, cho = None, None  # the lagged Gram no longer describes the Hessian
            eta_d = prob.eta(delta)
            slope = float((g * delta).sum())
            if slope >= 0:  # not a descent direction (CG breakdown): refresh and retry
                G, cho = None, None
                delta, slope = -g / (C * prob.n), -float((g * g).sum()) / (C * prob.n)
                eta_d = prob.eta(delta)
            step, accepted = 1.0, False
            for _ in range(60):
                th = theta + step * delta
                loss_t, P_t = prob.loss_terms(eta + step * eta_d)
                f_t = C * loss_t + prob.penalty(th)
                if f_t <= f + 1e-4 * step * slope + 1e-12 * abs(f):
                    accepted = True
                    break
                step *= 0.5
            it += 1
            if not accepted:  # no decrease at working precision
                g = prob.grad(C, theta, P)
                gnorm = prob.grad_norm(C, g)
                converged = gnorm <= tol
                break
            theta, eta, P, f = th, eta + step * eta_d, P_t, f_t
            if it % 10 == 0:  # refresh the linear predictor against drift
                eta = prob.eta(theta)
                loss, P = prob.loss_terms(eta)
                f = C * loss + prob.penalty(theta)
        out.append(PathFit(C=C, theta=prob.full(theta), n_iter=it, converged=converged,
                           grad_norm=gnorm, seconds=time.perf_counter() - t0))
    return out
