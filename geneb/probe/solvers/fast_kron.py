"""The data Hessian where every row has the same probabilities: a Kronecker product.

A full-data C path starts from the intercept-only optimum (``fast_full.intercept_start``: the
features' coefficients zero, the intercepts at the class log-odds), where every row's class
probabilities are the class priors p. The data Hessian in the sum-zero basis Q (K x K') is
then ``S ⊗ A`` with ``S = Q^T (diag p - p p^T) Q`` (K' x K') and ``A = X^T X`` (p x p: the
design with its column of ones), and the preconditioner ``M = c (S ⊗ A) + I ⊗ diag(pen)``
is block-diagonal in the eigenbasis U of S:
``(U ⊗ I)^T M (U ⊗ I) = diag_a(c lambda_a A + diag(pen))``. So the lagged Gram costs one
``X^T X`` (a quarter of the K'^2 panel products of the general one for 3 classes, K'^2
fewer in general) and its factorisation K' Cholesky factorisations of side p instead of one
of side K' p (K'^2 times fewer multiply-adds; one in all when S is a multiple of the
identity: balanced classes). A binary fit is the case K' = 1, ``S = p (1 - p)``. The matrix
is the same as the general Gram's at that P, up to rounding (there the cross blocks of
balanced classes cancel to ~1e-21, see ``fast_precond.FLUSH_BELOW``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from geneb.probe.solvers import scratch

#: S counts as a multiple of the identity (one factorisation shared by every block, no
#: rotation) when its entries differ from ``s I`` by at most this fraction of s.
IDENTITY_RTOL = 1e-12


@dataclass(frozen=True, eq=False)
class KroneckerGram:
    """``S ⊗ A``: S (K', K') float64 symmetric positive semi-definite, A (p, p) the upper
    triangle of ``X^T X`` (float32 or float64; its lower triangle is not read)."""

    S: np.ndarray
    A: np.ndarray

    @property
    def dtype(self) -> np.dtype:
        return self.A.dtype

    def __len__(self) -> int:
        return len(self.S) * len(self.A)

    def trace(self) -> float:
        """``tr(S ⊗ A) = tr(S) tr(A)``."""
        return float(np.trace(self.S)) * float(np.trace(self.A, dtype=np.float64))

    def diag_max(self) -> float:
        """The largest diagonal entry of ``S ⊗ A`` (both diagonals are non-negative)."""
        return float(np.diag(self.S).max()) * float(np.abs(np.diag(self.A)).max())

    @cached_property
    def eigen(self) -> tuple[np.ndarray | None, np.ndarray]:
        """(U, lambda) of S; U None with one eigenvalue when S is a multiple of the identity
        (``IDENTITY_RTOL``)."""
        s = float(np.trace(self.S)) / len(self.S)
        if s > 0 and np.abs(self.S - s * np.eye(len(self.S))).max() <= IDENTITY_RTOL * s:
            return None, np.array([s])
        lam, U = np.linalg.eigh(self.S)
        return U, lam


def common_row(P: np.ndarray) -> np.ndarray | None:
    """The row every row of P (n, K) equals, or None."""
    first = P[0]
    return first.copy() if bool((P == first).all()) else None


def class_weights(p: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``S = Q^T (diag p - p p^T) Q`` (K', K'): the multinomial Hessian weights of one row
    with class probabilities p, in the basis Q."""
    pQ = p @ Q
    S: np.ndarray = (Q.T * p) @ Q - np.outer(pQ, pQ)
    symmetric: np.ndarray = (S + S.T) / 2.0
    return symmetric


def block_solver(G: KroneckerGram, c: float, pen: np.ndarray, dtype: type, add: float,
                 rel: float, buffers: list[np.ndarray],
                 factor: Callable[[np.ndarray], Callable[[np.ndarray], np.ndarray] | None]
                 ) -> Callable[[np.ndarray], np.ndarray] | None:
    """``r -> M^{-1} r`` for ``M = c G + I ⊗ diag(pen)`` (+ ``add`` and ``rel`` times its
    largest diagonal entry, ``max(1e-10, rel)``, on the diagonal, as
    ``Preconditioner._precond_matrix``), r and the result flat (K' p,) float64; None when a
    block does not factor. ``buffers``: (p, p) matrices of ``dtype`` to factor in (reused
    across calls; extended as needed); ``factor(M)``: a Cholesky solve of M (in M's dtype)
    or None."""
    U, lam = G.eigen
    p = len(G.A)
    while len(buffers) < len(lam):
        buffers.append(scratch.empty((p, p), dtype))
    diag = np.diag_indices(p)
    blocks = []
    for a, lam_a in enumerate(lam):
        M = buffers[a]
        np.multiply(G.A, dtype(c * max(float(lam_a), 0.0)), out=M, dtype=dtype)
        M[diag] += pen.astype(dtype)
        blocks.append(M)
    damp = dtype(max(1e-10, rel) * max(float(np.abs(np.diag(M)).max()) for M in blocks) + add)
    solves = []
    for M in blocks:
        M[diag] += damp
        solve = factor(M)
        if solve is None:
            return None
        solves.append(solve)
    K1 = len(G.S)

    def solve_all(r: np.ndarray) -> np.ndarray:
        if K1 == 1:  # binary: one block, no rotation
            one: np.ndarray = solves[0](r.astype(dtype)).astype(np.float64)
            return one
        R = r.reshape(K1, p)
        if U is None:
            out = np.stack([solves[0](row.astype(dtype)) for row in R])
        else:
            Rr = U.T @ R
            out = U @ np.stack([solve(row.astype(dtype)).astype(np.float64)
                                for solve, row in zip(solves, Rr, strict=True)])
        flat: np.ndarray = out.ravel().astype(np.float64, copy=False)
        return flat

    return solve_all
