"""Issue 19 case 2: memory bounded by design on tasks with many classes.

The full-data solver kept a (K-1)(d+1) square Hessian per fit: 500 classes x 65 features is
32,435 x 32,435 (19 GB RSS). Beyond ``NEWTON_MAX_COEFS`` coefficients the ``fast`` backend
now solves by L-BFGS; its answers are held to scikit-learn's (tol 1e-10) and its memory to a
bound far below one Hessian.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from geneb.probe.solvers.base import (
    DEFAULT_TOL,
    NEWTON_MAX_COEFS,
    ProbeFit,
    ProbeProblem,
    second_order,
)
from geneb.probe.solvers.fast import FastBackend
from geneb.probe.solvers.fast_full import solve_path
from geneb.probe.solvers.fast_lbfgs import solve_path_lbfgs


def _many_classes(K: int, per_class: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(K, d))
    y = np.repeat(np.arange(K), per_class)
    X = (centres[y] + 1.5 * rng.normal(size=(len(y), d))).astype(np.float32)
    yt = np.repeat(np.arange(K), 2)
    Xt = (centres[yt] + 1.5 * rng.normal(size=(len(yt), d))).astype(np.float32)
    return X, y, Xt, yt


def test_solver_choice_is_one_rule():
    assert second_order(64, 1) and second_order(4095, 2)
    assert not second_order(64, 499)  # 500 classes x 65: 32,435 coefficients
    assert second_order(NEWTON_MAX_COEFS - 1, 1) and not second_order(NEWTON_MAX_COEFS, 1)


def test_many_classes_fit_without_a_hessian():
    """150 classes x 65 (9,685 coefficients): a Hessian would be 375 MB in float32 (and
    its factor as much again); the fit now stays far below."""
    K, d = 150, 64
    X, y, Xt, _ = _many_classes(K, 4, d)
    assert not second_order(d, K - 1)
    problem = ProbeProblem(X, y, Xt, K, standardize=True)
    rng = np.random.default_rng(1)
    one_shot = np.sort([rng.choice(np.flatnonzero(y == c)) for c in range(K)])
    cells = [ProbeFit("1", 1, 13, 1.0, one_shot), ProbeFit("full", None, 13, 1.0,
                                                               np.arange(len(y)))]
    tracemalloc.start()
    try:
        fits = FastBackend().solve(problem, cells)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert all(f.converged for f in fits)
    assert peak < 60e6, f"peak {peak / 1e6:.0f} MB"


@pytest.mark.parametrize("K", [2, 5])
def test_lbfgs_path_reaches_the_sklearn_optimum(K):
    """The L-BFGS path (forced, on a problem small enough to check) at the protocol's
    tolerance against scikit-learn at tol 1e-10, and against the Newton path, for C from 1e-3
    to 1e3."""
    X, y, _, _ = _many_classes(K, 60, 12, seed=K)
    Xs = StandardScaler().fit_transform(X.astype(np.float64))
    Xa = np.hstack([Xs, np.ones((len(Xs), 1))])
    Cs = [1e-3, 1e-1, 10.0, 1e3]
    path = solve_path_lbfgs(Xa, y, K, Cs, tol=DEFAULT_TOL, max_iter=1000)
    newton = solve_path(Xa, Xa.astype(np.float32), y, K, Cs, tol=1e-10, max_iter=1000)
    for pf, nf in zip(path, newton, strict=True):
        assert pf.converged and pf.grad_norm <= DEFAULT_TOL, pf.C
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = LogisticRegression(C=pf.C, tol=1e-10, max_iter=50000).fit(Xs, y)
        ref = np.hstack([m.coef_, m.intercept_[:, None]])
        scale = np.abs(ref).max()
        np.testing.assert_allclose(pf.theta, ref, atol=1e-4 * scale)
        np.testing.assert_allclose(pf.theta, nf.theta, atol=1e-5 * scale)


def test_many_class_probabilities_match_sklearn():
    """Above the threshold through the backend: the same test probabilities as sklearn."""
    K, d = 130, 64
    X, y, Xt, _ = _many_classes(K, 4, d, seed=3)
    assert not second_order(d, K - 1)
    fit = FastBackend().solve(ProbeProblem(X, y, Xt, K, standardize=True),
                              [ProbeFit("full", None, 13, 1.0, np.arange(len(y)))])[0]
    X, Xt = X.astype(np.float64), Xt.astype(np.float64)
    sc = StandardScaler().fit(X)
    m = LogisticRegression(C=1.0, tol=1e-10, max_iter=5000).fit(sc.transform(X), y)
    assert fit.converged
    assert np.abs(fit.proba - m.predict_proba(sc.transform(Xt))).max() < 1e-5
