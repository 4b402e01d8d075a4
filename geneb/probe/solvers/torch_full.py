"""Full-data logistic regression along an ascending C path in torch (CPU or CUDA), float64.

The parametrisation and the stopping test are ``fast_full``'s: multi-class weights ``W = Q V``
with ``Q`` (K x K-1) an orthonormal basis of the sum-zero subspace, so K-1 coefficient rows
are solved for (the rows ``second_order`` admits), and convergence is max |gradient| of
scikit-learn's scaled objective (over C n) <= ``tol`` in float64. Each Newton step builds the
exact Hessian block by block, ``H_ab = X^T (m_ab * X)`` for the K-1 (K-1 + 1) / 2 blocks
a <= b, over fixed row chunks: memory is the design, one chunk of scaled rows and the
Hessian ((K-1) p)^2, never an (n, p, K, K) intermediate (30 GB at n = 100,000, d = 4,095,
K = 3). The Newton system is solved by a Cholesky factorisation (the Hessian is positive
definite: the penalty covers every weight, the intercept is fixed by the sum-zero basis).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from torch import Tensor

#: Rows of the design scaled at once while a Hessian block is accumulated.
HESSIAN_ROW_CHUNK = 8192


@dataclass(frozen=True, eq=False)
class TorchPathFit:
    """One C of the path: coefficients (K', p) in scikit-learn's parametrisation (K' = 1 for
    two classes), Newton iterations, whether ``tol`` was reached, seconds."""

    theta: np.ndarray
    n_iter: int
    converged: bool
    seconds: float


class _Problem:
    def __init__(self, torch: ModuleType, Xa: Tensor, y: np.ndarray, n_classes: int) -> None:
        self.t, self.X = torch, Xa
        self.n, self.p = Xa.shape
        dev = Xa.device
        self.multi = n_classes > 2
        if self.multi:
            centred = np.eye(n_classes) - 1.0 / n_classes
            Q = np.linalg.qr(centred)[0][:, : n_classes - 1]
            Y = np.eye(n_classes)[y]
        else:
            Q, Y = np.ones((1, 1)), y.astype(np.float64)[:, None]
        self.Q: Tensor = torch.as_tensor(Q, dtype=torch.float64, device=dev)
        self.Y: Tensor = torch.as_tensor(Y, dtype=torch.float64, device=dev)
        self.Kp = Q.shape[1]
        self.pen: Tensor = torch.ones(self.p, dtype=torch.float64, device=dev)
        self.pen[-1] = 0.0

    def eta(self, V: Tensor) -> Tensor:
        return self.X @ (self.Q @ V).T  # (n, K)

    def loss_P(self, eta: Tensor) -> tuple[Tensor, Tensor]:
        t = self.t
        if self.multi:
            lse = t.logsumexp(eta, dim=1)
            return (lse - (eta * self.Y).sum(1)).sum(), t.exp(eta - lse[:, None])
        e = eta[:, 0]
        return (t.logaddexp(t.zeros_like(e), e) - self.Y[:, 0] * e).sum(), t.sigmoid(eta)

    def f(self, C: float, V: Tensor, loss: Tensor) -> Tensor:
        return C * loss + 0.5 * (self.pen * V * V).sum()

    def grad(self, C: float, V: Tensor, P: Tensor) -> Tensor:
        return C * (self.Q.T @ (self.X.T @ (P - self.Y)).T) + self.pen * V

    def grad_norm(self, C: float, g: Tensor) -> float:
        return float((self.Q @ g).abs().max()) / float(C * self.n)

    def hessian(self, C: float, P: Tensor) -> Tensor:
        """Exact Hessian ((K-1) p, (K-1) p) in V, block by block over row chunks."""
        t, Kp, p = self.t, self.Kp, self.p
        if self.multi:  # m[n] = Q^T (diag(P_n) - P_n P_n^T) Q, (n, K', K')
            PQ = P @ self.Q
            m = t.einsum("ka,kb,nk->nab", self.Q, self.Q, P) - PQ[:, :, None] * PQ[:, None, :]
        else:
            m = (P[:, 0] * (1.0 - P[:, 0]))[:, None, None]
        H: Tensor = t.zeros((Kp * p, Kp * p), dtype=t.float64, device=self.X.device)
        for a in range(Kp):
            for b in range(a, Kp):
                blk = H[a * p:(a + 1) * p, b * p:(b + 1) * p]
                for r0 in range(0, self.n, HESSIAN_ROW_CHUNK):
                    Xc = self.X[r0:r0 + HESSIAN_ROW_CHUNK]
                    blk += Xc.T @ (m[r0:r0 + HESSIAN_ROW_CHUNK, a, b, None] * Xc)
                blk *= C
                if b > a:
                    H[b * p:(b + 1) * p, a * p:(a + 1) * p] = blk.T
        H.diagonal().add_(self.pen.repeat(Kp))
        return H

    def newton_step(self, H: Tensor, g: Tensor) -> Tensor:
        t = self.t
        L, info = t.linalg.cholesky_ex(H)
        rhs = g.reshape(-1, 1)
        d: Tensor = t.cholesky_solve(rhs, L) if int(info) == 0 else t.linalg.solve(H, rhs)
        return -d.reshape(self.Kp, self.p)


def solve_path_torch(Xa: Tensor, y: np.ndarray, n_classes: int, Cs: list[float],
                     theta0: np.ndarray, *, tol: float, max_iter: int) -> list[TorchPathFit]:
    """Newton with Armijo backtracking for each C in ascending order, warm-started; ``Xa``:
    the (n, p) float64 torch design (features, then ones) on its device; ``theta0`` the
    (K', 1) intercept start in scikit-learn's parametrisation."""
    import torch

    prob = _Problem(torch, Xa, y, n_classes)
    V = torch.zeros((prob.Kp, prob.p), dtype=torch.float64, device=Xa.device)
    V[:, -1] = prob.Q.T @ torch.as_tensor(theta0[:, 0], dtype=torch.float64, device=Xa.device)
    out = []
    for C in sorted(float(c) for c in Cs):
        t0 = time.perf_counter()
        V, it, ok = _newton(prob, C, V, tol, max_iter)
        theta = (prob.Q @ V).cpu().numpy()
        out.append(TorchPathFit(theta=theta, n_iter=it, converged=ok,
                                seconds=time.perf_counter() - t0))
    return out


def _newton(prob: _Problem, C: float, V: Tensor, tol: float, max_iter: int
            ) -> tuple[Tensor, int, bool]:
    eta = prob.eta(V)
    loss, P = prob.loss_P(eta)
    f = prob.f(C, V, loss)
    for it in range(max_iter + 1):
        g = prob.grad(C, V, P)
        if prob.grad_norm(C, g) <= tol:
            return V, it, True
        if it == max_iter:
            break
        delta = prob.newton_step(prob.hessian(C, P), g)
        eta_d = prob.eta(delta)
        slope = float((g * delta).sum())
        step, accepted = 1.0, False
        for _ in range(60):
            V_t = V + step * delta
            loss_t, P_t = prob.loss_P(eta + step * eta_d)
            f_t = prob.f(C, V_t, loss_t)
            if float(f_t) <= float(f) + 1e-4 * step * slope + 1e-12 * abs(float(f)):
                accepted = True
                break
            step *= 0.5
        if not accepted:  # no decrease at working precision: stop, report honestly
            return V, it + 1, False
        V, eta, P, f = V_t, eta + step * eta_d, P_t, f_t
    return V, max_iter, False
