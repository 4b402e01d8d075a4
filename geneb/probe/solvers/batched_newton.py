"""Batched damped Newton for many L2 logistic regressions at once (numpy or torch).

One algorithm, two array libraries: the code below only uses operators and a small ``Ops``
shim, so ``fast`` (numpy, CPU) and ``torch`` (CPU or CUDA) solve the very same iterations.

Objective per problem b (scikit-learn's, up to the positive factor 1 / (C n)):

    f(theta) = C * sum_i sw_i * loss_i + 0.5 * sum_j pen_j * theta_j ** 2

with an unpenalised intercept (``pen`` = 0 on the last column of the design matrix, which is
all ones on real rows). Binary: one weight vector, ``loss = softplus(eta) - y * eta``.
K > 2: K weight vectors (sklearn's symmetric multinomial), ``loss = logsumexp(eta) - eta_y``.
The softmax is invariant to shifting all intercepts by one constant; we add
``0.5 * (sum_k b_k) ** 2`` which leaves the minimum value unchanged and picks the
sum-zero intercepts, so every Newton system is positive definite.

Padding: rows with ``sw = 0`` and all-zero penalised feature columns do not change the optimum
of a problem (padded weights stay exactly 0), so problems of different sizes share one batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from geneb.probe.solvers import numeric

Array = Any  # numpy.ndarray or torch.Tensor


class NumpyOps:
    """The handful of array functions the solver needs, for numpy."""

    name = "numpy"

    def __init__(self) -> None:
        self.xp = np

    def asarray(self, x: Any, dtype: Any = np.float64) -> np.ndarray:
        return np.asarray(x, dtype=dtype)

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def zeros(self, shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
        return np.zeros(shape, dtype=dtype)

    def einsum(self, eq: str, *ops: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.einsum(eq, *ops, optimize=True)
        return out

    def softplus(self, x: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.logaddexp(0.0, x)
        return out

    def sigmoid(self, x: np.ndarray) -> np.ndarray:
        return numeric.expit(x)

    def logsumexp(self, x: np.ndarray) -> np.ndarray:
        return numeric.logsumexp(x, axis=-1)

    def softmax(self, x: np.ndarray) -> np.ndarray:
        return numeric.softmax(x, axis=-1)

    def solve(self, H: np.ndarray, g: np.ndarray) -> np.ndarray:
        return np.linalg.solve(H, g[..., None])[..., 0]

    def eye(self, n: int, dtype: Any = np.float64) -> np.ndarray:
        return np.eye(n, dtype=dtype)

    def where(self, c: np.ndarray, a: Any, b: Any) -> np.ndarray:
        out: np.ndarray = np.where(c, a, b)
        return out

    def amax_last(self, x: np.ndarray, ndims: int) -> np.ndarray:
        """Max over the last ``ndims`` axes."""
        out: np.ndarray = x.reshape(x.shape[: x.ndim - ndims] + (-1,)).max(axis=-1)
        return out

    def mask(self, m: np.ndarray) -> np.ndarray:
        return m

    def cat(self, xs: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(xs)

    def svd(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.linalg.svd(X, full_matrices=False)


class TorchOps:
    """The same functions for torch on any device (imported lazily)."""

    name = "torch"

    def __init__(self, device: str = "cpu") -> None:
        import torch

        self.torch = torch
        self.device = torch.device(device)

    def _dt(self, dtype: Any) -> Any:
        t = self.torch
        return {np.float64: t.float64, np.float32: t.float32}.get(dtype, dtype)

    def asarray(self, x: Any, dtype: Any = np.float64) -> Any:
        t = self.torch
        if isinstance(x, np.ndarray):
            x = t.from_numpy(np.ascontiguousarray(x))
        return t.as_tensor(x, dtype=self._dt(dtype), device=self.device)

    def to_numpy(self, x: Any) -> np.ndarray:
        out: np.ndarray = x.detach().cpu().numpy()
        return out

    def zeros(self, shape: tuple[int, ...], dtype: Any = np.float64) -> Any:
        return self.torch.zeros(shape, dtype=self._dt(dtype), device=self.device)

    def einsum(self, eq: str, *ops: Any) -> Any:
        return self.torch.einsum(eq, *ops)

    def softplus(self, x: Any) -> Any:
        return self.torch.logaddexp(self.torch.zeros_like(x), x)

    def sigmoid(self, x: Any) -> Any:
        return self.torch.sigmoid(x)

    def logsumexp(self, x: Any) -> Any:
        return self.torch.logsumexp(x, dim=-1)

    def softmax(self, x: Any) -> Any:
        return self.torch.softmax(x, dim=-1)

    def solve(self, H: Any, g: Any) -> Any:
        return self.torch.linalg.solve(H, g.unsqueeze(-1)).squeeze(-1)

    def eye(self, n: int, dtype: Any = np.float64) -> Any:
        return self.torch.eye(n, dtype=self._dt(dtype), device=self.device)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        t = self.torch
        a = a if isinstance(a, t.Tensor) else t.as_tensor(a, device=self.device)
        b = b if isinstance(b, t.Tensor) else t.as_tensor(b, device=self.device)
        return t.where(c, a, b)

    def amax_last(self, x: Any, ndims: int) -> Any:
        return x.reshape(tuple(x.shape[: x.ndim - ndims]) + (-1,)).amax(dim=-1)

    def mask(self, m: np.ndarray) -> Any:
        return self.torch.as_tensor(m, dtype=self.torch.bool, device=self.device)

    def cat(self, xs: list[Any]) -> Any:
        return self.torch.cat(xs)

    def svd(self, X: Any) -> tuple[Any, Any, Any]:
        U, S, Vh = self.torch.linalg.svd(X, full_matrices=False)
        return U, S, Vh


@dataclass(frozen=True, eq=False)
class NewtonResult:
    """Solutions of a batch: ``theta`` (B, K', p), Newton iterations and convergence per problem."""

    theta: Array
    n_iter: np.ndarray  # (B,) int64
    converged: np.ndarray  # (B,) bool
    grad_norm: np.ndarray  # (B,) final scaled gradient norm (the convergence measure)


def _eval(
    ops: Any, Xa: Array, Y: Array, sw: Array, C: Array, pen: Array, theta: Array, multi: bool
) -> tuple[Array, Array, Array, Array]:
    """Objective, gradient, per-row probabilities and linear predictor at ``theta``."""
    eta = ops.einsum("bnp,bkp->bnk", Xa, theta)
    return (*_fg_from_eta(ops, Xa, Y, sw, C, pen, theta, eta, multi), eta)


def _fg_from_eta(
    ops: Any, Xa: Array, Y: Array, sw: Array, C: Array, pen: Array, theta: Array, eta: Array,
    multi: bool,
) -> tuple[Array, Array, Array]:
    f, P = _f_from_eta(ops, Y, sw, C, pen, theta, eta, multi)
    R = (P - Y) * sw[..., None]
    g = C[:, None, None] * ops.einsum("bnp,bnk->bkp", Xa, R) + pen[:, None, :] * theta
    if multi:
        g[..., -1] = g[..., -1] + theta[..., -1].sum(-1)[:, None]
    return f, g, P


def _f_from_eta(
    ops: Any, Y: Array, sw: Array, C: Array, pen: Array, theta: Array, eta: Array, multi: bool
) -> tuple[Array, Array]:
    if multi:
        loss = ops.logsumexp(eta) - (eta * Y).sum(-1)
        P = ops.softmax(eta)
    else:
        e = eta[..., 0]
        loss = ops.softplus(e) - Y[..., 0] * e
        P = ops.sigmoid(eta)
    f = C * (sw * loss).sum(-1) + 0.5 * (pen[:, None, :] * theta * theta).sum((-1, -2))
    if multi:
        f = f + 0.5 * theta[..., -1].sum(-1) ** 2
    return f, P


def _hessian(ops: Any, Xa: Array, sw: Array, C: Array, pen: Array, P: Array, multi: bool) -> Array:
    """Exact Hessian (B, K'p, K'p) of the objective."""
    B, n, p = Xa.shape
    if not multi:
        D = sw * P[..., 0] * (1.0 - P[..., 0])
        H = C[:, None, None] * ops.einsum("bni,bn,bnj->bij", Xa, D, Xa)
        idx = list(range(p))
        H[:, idx, idx] = H[:, idx, idx] + pen
        return H
    K = P.shape[-1]
    W = -P[..., :, None] * P[..., None, :]  # (B, n, K, K)
    kk = list(range(K))
    W[..., kk, kk] = W[..., kk, kk] + P
    W = W * sw[..., None, None]
    H = ops.einsum("bni,bnkl,bnj->bkilj", Xa, W, Xa) * C[:, None, None, None, None]
    H = H.reshape(B, K * p, K * p)
    diag = list(range(K * p))
    penK = pen.repeat(1, K) if ops.name == "torch" else np.tile(pen, (1, K))
    H[:, diag, diag] = H[:, diag, diag] + penK
    bias = [k * p + p - 1 for k in range(K)]
    for i in bias:
        H[:, i, bias] = H[:, i, bias] + 1.0
    return H


def scaled_grad_norm(ops: Any, g: Array, C: Array, n_eff: Array, norm: str) -> Array:
    """The convergence measure: |grad| of sklearn's scaled objective (divided by C * n)."""
    gs = g / (C * n_eff)[:, None, None]
    if norm == "l2":
        return ((gs * gs).sum((-1, -2))) ** 0.5
    return ops.amax_last(abs(gs), 2)


def batched_newton(
    ops: Any,
    Xa: Array,
    Y: Array,
    sw: Array,
    C: Array,
    pen: Array,
    *,
    multi: bool,
    tol: float,
    max_iter: int,
    theta0: Array | None = None,
    norm: str = "inf",
) -> NewtonResult:
    """Minimise all B objectives with Newton steps and a per-problem Armijo backtracking search.

    Shapes: ``Xa`` (B, n, p) design with the intercept column last; ``Y`` (B, n, K') one-hot
    targets (K' = 1 for binary); ``sw`` (B, n) row weights (1 real, 0 padding); ``C`` (B,);
    ``pen`` (B, p) 1 for penalised columns, 0 for the intercept. ``norm`` is ``"inf"`` (sklearn's
    max-abs gradient test) or ``"l2"`` (stricter; used after an orthogonal reduction, where the
    l2 norm bounds the max-abs gradient of the original problem).
    """
    B, n, p = Xa.shape
    Kp = Y.shape[-1]
    theta = ops.zeros((B, Kp, p)) if theta0 is None else ops.asarray(theta0) * 1.0
    n_eff = sw.sum(-1)
    n_iter = np.zeros(B, dtype=np.int64)
    active = np.ones(B, dtype=bool)
    f, g, P, eta = _eval(ops, Xa, Y, sw, C, pen, theta, multi)
    gn = ops.to_numpy(scaled_grad_norm(ops, g, C, n_eff, norm))
    converged = gn <= tol
    active &= ~converged
    for _ in range(max_iter):
        if not active.any():
            break
        H = _hessian(ops, Xa, sw, C, pen, P, multi)
        delta = -ops.solve(H, g.reshape(B, Kp * p)).reshape(B, Kp, p)
        act = ops.asarray(active.astype(np.float64))
        delta = delta * act[:, None, None]
        slope = (g * delta).sum((-1, -2))
        eta_d = ops.einsum("bnp,bkp->bnk", Xa, delta)
        t = ops.asarray(np.ones(B))
        slack = 1e-12 * abs(f) + 1e-300
        accepted = ~active
        for _ls in range(60):
            theta_t = theta + t[:, None, None] * delta
            f_t, _ = _f_from_eta(ops, Y, sw, C, pen, theta_t, eta + t[:, None, None] * eta_d, multi)
            ok = ops.to_numpy(f_t <= f + 1e-4 * t * slope + slack)
            accepted |= ok
            if accepted.all():
                break
            t = ops.where(ops.mask(accepted), t, t * 0.5)
        stalled = active & ~accepted
        tt = ops.where(ops.mask(stalled), 0.0 * t, t)
        theta = theta + tt[:, None, None] * delta
        n_iter += active
        f, g, P, eta = _eval(ops, Xa, Y, sw, C, pen, theta, multi)
        gn = ops.to_numpy(scaled_grad_norm(ops, g, C, n_eff, norm))
        converged = gn <= tol
        active &= ~converged
        active &= ~stalled  # no descent possible at working precision: stop, report honestly
    return NewtonResult(theta=theta, n_iter=n_iter, converged=converged, grad_norm=gn)


def judge(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, C: float, n_classes: int
          ) -> tuple[float, float]:
    """(objective, convergence measure) of coefficients found elsewhere (cuML), in float64 on
    the host: sklearn's objective ``C * sum loss + ||W||^2 / 2`` and max |gradient| / (C n),
    the very test every geneb backend stops on. ``W`` (K', d), ``b`` (K',) with K' = 1 for
    two classes; multi-class intercepts are centred first (the softmax ignores a common
    shift, and the sum-zero intercepts are the ones this objective's extra term picks)."""
    multi = n_classes > 2
    b = np.asarray(b, dtype=np.float64)
    if multi:
        b = b - b.mean()
    ops = NumpyOps()
    theta = np.concatenate([np.asarray(W, dtype=np.float64), b[:, None]], axis=1)[None]
    Xa = np.empty((1, len(X), X.shape[1] + 1))
    Xa[0, :, :-1] = X
    Xa[0, :, -1] = 1.0
    Y = np.eye(n_classes)[y][None] if multi else np.asarray(y, np.float64)[None, :, None]
    sw = np.ones((1, len(X)))
    Cv = np.array([float(C)])
    pen = np.ones((1, Xa.shape[-1]))
    pen[0, -1] = 0.0
    f, g, _, _ = _eval(ops, Xa, Y, sw, Cv, pen, theta, multi)
    return float(f[0]), float(scaled_grad_norm(ops, g, Cv, sw.sum(-1), "inf")[0])
