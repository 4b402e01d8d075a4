"""Full-data logistic regression by L-BFGS, for problems too large for a second-order solver.

``fast_full`` preconditions Newton-CG with the data Hessian, a (K' p) x (K' p) matrix: for
500 classes of 64 features that is 32,435 x 32,435, 4 GiB in float32 per factor (19 GB
RSS measured). Beyond ``base.NEWTON_MAX_COEFS`` coefficients the ``fast`` backend
solves here instead: L-BFGS keeps a few (K', p) vectors, so memory is O(n K + K p). The loss,
gradient and row-blocked passes are ``fast_full._Problem``'s (float64, the same sum-zero
parametrisation, the same stopping measure), so "converged" means exactly what it means for
the Newton path: max |gradient| of scikit-learn's scaled objective <= ``tol``. Warm starts
along the ascending C path as there.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from geneb.probe.solvers.fast_full import _Problem, intercept_start
from geneb.probe.solvers.fast_path import PathFit

#: L-BFGS iterations per Newton iteration of the ``max_iter`` budget: an L-BFGS step costs one
#: or two gradient passes, a Newton step tens of Hessian products, and L-BFGS needs many more
#: of them on ill-conditioned (large C) problems.
LBFGS_ITER_PER_NEWTON = 20
#: Correction pairs kept (scipy's default is 10; more pairs cut iterations on these problems).
LBFGS_MEMORY = 20


def solve_path_lbfgs(Xa64: np.ndarray, y: np.ndarray, n_classes: int, Cs: Sequence[float], *,
                     tol: float, max_iter: int, threads: int | None = None) -> list[PathFit]:
    """Fit every C in ascending order by L-BFGS, warm-starting each from the previous one.

    ``Xa64``: (n, p) float64 design (features then ones). ``max_iter`` is the Newton budget;
    L-BFGS gets ``LBFGS_ITER_PER_NEWTON`` times as many iterations.
    """
    prob = _Problem(Xa64, Xa64, y, n_classes, threads)  # no float32 copy: no Hessian here
    try:
        theta = np.zeros((prob.Kp, prob.p))
        theta[:, -1:] = prob.Q.T @ intercept_start(y, n_classes)
        out = []
        for C in sorted(float(c) for c in Cs):
            t0 = time.perf_counter()
            theta, n_iter, gnorm = _minimise(prob, C, theta, tol,
                                             max_iter * LBFGS_ITER_PER_NEWTON)
            out.append(PathFit(C=C, theta=prob.full(theta), n_iter=n_iter,
                               converged=gnorm <= tol, grad_norm=gnorm,
                               seconds=time.perf_counter() - t0))
        return out
    finally:
        prob.rows.close()


def _minimise(prob: _Problem, C: float, theta: np.ndarray, tol: float, budget: int
              ) -> tuple[np.ndarray, int, float]:
    """scipy's L-BFGS-B on the objective scaled by 1 / (C n) (scikit-learn's scaling).

    scipy stops on its own measure (max |gradient| in the solved coordinates) or when a line
    search makes no progress; ours (``grad_norm``) is checked after each run, and a run that
    stopped short is restarted from where it stopped with a tenfold tighter ``gtol`` until the
    budget is spent or a restart no longer lowers the gradient.
    """
    from scipy.optimize import minimize  # only for problems this large: keeps scipy off the

    # common probe path (its import costs ~0.13 s)
    shape, scale = theta.shape, 1.0 / (C * prob.n)

    def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
        th = x.reshape(shape)
        loss, P = prob.loss_terms(prob.eta(th))
        g = prob.grad(C, th, P)
        return (C * loss + prob.penalty(th)) * scale, (g * scale).ravel()

    def gnorm_at(th: np.ndarray) -> float:
        _, P = prob.loss_terms(prob.eta(th))
        return prob.grad_norm(C, prob.grad(C, th, P))

    gnorm, used, gtol = gnorm_at(theta), 0, tol
    while gnorm > tol and used < budget:
        res = minimize(fg, theta.ravel(), jac=True, method="L-BFGS-B",
                       options={"maxiter": budget - used, "gtol": gtol, "ftol": 0.0,
                                "maxcor": LBFGS_MEMORY, "maxls": 50})
        used += max(1, int(res.nit))
        new = res.x.reshape(shape)
        g_new = gnorm_at(new)
        if g_new >= gnorm and res.nit == 0:
            break  # no progress at working precision
        theta, gnorm, gtol = new, g_new, gtol / 10.0
    return theta, used, gnorm
