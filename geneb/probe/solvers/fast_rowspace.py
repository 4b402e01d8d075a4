"""The C path of a full-data fit with fewer train rows than features, solved in their row space.

With an L2 penalty every optimum's weights lie in the span of the centred train rows (the
gradient ``C Xc^T R + W`` vanishes there, and the intercept absorbs the mean), so the fit of
n rows and d > n features is the fit of the reduced design ``Z = Xc V`` (n x r, r <= n - 1)
for an orthonormal basis V (d x r) of that span, ``W = Theta V^T``: the same objective, a
Hessian of side r + 1 instead of d + 1. The basis comes from the kernel ``K = Xc Xc^T``
(one n x n x d product and an n x n ``eigh``: ``Z = U S``, ``V = Xc^T U S^-1``).

Nothing is taken on trust: the path's stopping test is evaluated in the original
coefficients (``V g`` for the weights, the centring's term for the intercept), and every C's
solution is checked once more with the exact gradient of the original problem over the
original rows. A basis whose rounding moves an optimum past the tolerance (a kernel too
ill-conditioned) makes ``solve_path_row_space`` return None, and the caller solves the
primal path instead.

Why (measured 2026-12-03, realistic embeddings at GENEB's median MCC, two cores): the primal
path of 1,000 x 4,096 binary took 2.0 s, 1.5 s of it in five factorisations of side 4,097
and their triangular solves; a 3-class fit of that shape (8,194 coefficients, beyond a
Hessian) went to L-BFGS: 375 s for five Cs, 400-7,859 iterations each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from geneb.probe.solvers.fast_full import _Problem, path_from_start
from geneb.probe.solvers.fast_path import PathFit
from geneb.probe.solvers.numeric import expit, softmax

#: Full-data fits with at most this fraction of rows per feature (n <= fraction x d) are
#: solved in the row space (``use_row_space``). Measured 2026-12-03, five-C paths of realistic
#: binary embeddings, primal -> row space: 1,000 x 4,096 (0.24) 2.76 -> 0.69 s; 1,000 x 2,560
#: (0.39) 0.87 -> 0.50 s; 2,000 x 4,096 (0.49) 2.85 -> 3.50 s (the n x n kernel, its eigh
#: and the basis cost more than the side they save).
ROW_SPACE_MAX_FRACTION = 0.4
#: Kernel eigenvalues at most this fraction of the largest are dropped (their directions'
#: singular values are below 1e-6 of the largest: numerical noise of the centring or exact
#: ties between rows).
RANK_RTOL = 1e-12
#: Columns of the basis computed at a time (``_basis_float32``).
BASIS_SLAB = 512


def use_row_space(n: int, d: int) -> bool:
    """Whether a full-data fit of ``n`` rows and ``d`` features is solved in its row space."""
    return n <= ROW_SPACE_MAX_FRACTION * d


class _RowSpaceProblem(_Problem):
    """The reduced problem whose stopping test is sklearn's in the original coefficients."""

    Vt: np.ndarray  # (r, d) float32: the basis' transpose
    mean: np.ndarray  # (d,): the centring

    def grad_norm(self, C: float, g: np.ndarray) -> float:
        """max |gradient| of the original weights and intercepts, over C * n: the weights'
        ``V g_w + mean g_b`` (the centring moved the intercept by ``mean . w``)."""
        full = self.Q @ g
        r = self.Vt.shape[0]
        # float32 @ float32: a float64 operand would make numpy upcast the whole basis
        # (r x d) on every call
        g_w = (full[:, :r].astype(np.float32) @ self.Vt) + np.outer(full[:, r], self.mean)
        return max(float(np.abs(g_w).max()), float(np.abs(full[:, r]).max())) / float(C * self.n)


def solve_path_row_space(X: np.ndarray, y: np.ndarray, n_classes: int, Cs: Sequence[float],
                         *, tol: float, max_iter: int, threads: int | None = None
                         ) -> list[PathFit] | None:
    """Every C of ``Cs`` (ascending) for the features ``X`` (n, d) float64, in the row space.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
        The train features (standardised when the probe standardises), without the column of
        ones; centred in place (overwritten).
    y : ndarray of shape (n,), int
        Class ids.
    n_classes : int
        Number of classes (2: one weight row).
    Cs : sequence of float
        Inverse regularisation strengths, solved in ascending order with warm starts.
    tol, max_iter : float, int
        sklearn's stopping test (max |gradient| / (C n)) and the Newton iterations per C.
    threads : int or None
        Cores of the path's row-blocked passes (the bits do not depend on it).

    Returns
    -------
    list of PathFit or None
        One per C with coefficients (K', d + 1) in the original features (intercept last),
        their ``grad_norm`` the exact original gradient's; None when the rows have no spread
        or an exact check fails (solve the primal path instead).
    """
    mean = X.mean(axis=0)
    X -= mean  # centred in place: no second (n, d) float64 copy
    lam, U = np.linalg.eigh(X @ X.T)
    if not lam[-1] > 0.0:
        return None
    keep = lam > lam[-1] * RANK_RTOL
    S = np.sqrt(lam[keep])
    B = U[:, keep] / S  # V = Xc^T B
    r = len(S)
    Za = np.empty((len(X), r + 1))
    Za[:, :r] = U[:, keep] * S
    Za[:, r] = 1.0
    del U
    prob = _RowSpaceProblem(Za, Za.astype(np.float32), y, n_classes, threads)
    # float32 basis for the stopping test only (its rounding, ~1e-7 of each gradient entry,
    # cannot move the test); the answers are mapped and checked in float64 below
    prob.Vt, prob.mean = _basis_float32(X, B), mean
    path = path_from_start(prob, y, n_classes, Cs, tol=tol, max_iter=max_iter)
    out = []
    for pf in path:
        W = (pf.theta[:, :r] @ B.T) @ X
        gnorm = _exact_grad_norm(X, mean, y, n_classes, W, pf.theta[:, r], pf.C)
        if pf.converged and not gnorm <= tol:
            return None
        theta_x = np.hstack([W, (pf.theta[:, r] - W @ mean)[:, None]])
        out.append(PathFit(C=pf.C, theta=theta_x, n_iter=pf.n_iter, converged=gnorm <= tol,
                           grad_norm=gnorm, seconds=pf.seconds))
    return out


def _basis_float32(Xc: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``(Xc^T B)^T`` (r, d) in float32, computed in column slabs (no (d, r) float64 copy)."""
    out = np.empty((B.shape[1], Xc.shape[1]), dtype=np.float32)
    for c in range(0, Xc.shape[1], BASIS_SLAB):
        out[:, c:c + BASIS_SLAB] = B.T @ Xc[:, c:c + BASIS_SLAB]
    return out


def _exact_grad_norm(Xc: np.ndarray, mean: np.ndarray, y: np.ndarray, n_classes: int,
                     W: np.ndarray, b_centred: np.ndarray, C: float) -> float:
    """sklearn's stopping measure of the original problem at weights W (K', d) and the
    centred rows' intercepts: the original gradient over ``Xc + mean``."""
    eta = Xc @ W.T + b_centred
    if n_classes > 2:
        R = softmax(eta, axis=1)
        R[np.arange(len(y)), y] -= 1.0
    else:
        R = expit(eta) - y[:, None]
    g_b = C * R.sum(axis=0)
    g_w = C * (R.T @ Xc) + np.outer(g_b, mean) + W
    return max(float(np.abs(g_w).max()), float(np.abs(g_b).max())) / float(C * len(Xc))
