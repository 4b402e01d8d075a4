"""Solver backends: the sklearn backend reaches the optimum; cuML fails clearly when absent."""

from __future__ import annotations

import importlib.machinery
import sys
import types

import numpy as np
import pytest
from probe_stores import gaussian_embeddings
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from geneb.errors import GenebError
from geneb.probe.solvers import get_backend
from geneb.probe.solvers.base import ProbeFit, ProbeProblem
from geneb.probe.solvers.mlp import MLP_PARAMS, MLPProbe
from geneb.probe.solvers.sklearn_backend import SklearnBackend


def _problem(n_classes, d=40, n=240, n_test=120, standardize=False, max_iter=1000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n + n_test)
    X = gaussian_embeddings(y, d, sep=1.5, seed=seed) * 3 + 1
    return ProbeProblem(X_train=X[:n], y_train=y[:n], X_test=X[n:], n_classes=n_classes,
                        standardize=standardize, max_iter=max_iter)


def _cells(problem, Cs=(0.01, 1.0, 100.0)):
    y = problem.y_train
    few = np.concatenate([np.flatnonzero(y == c)[:3] for c in range(problem.n_classes)])
    full = np.arange(len(y))
    return [ProbeFit("3", 3, 0, C, few) for C in Cs] + [ProbeFit("full", None, 0, C, full)
                                                          for C in Cs]


def _reference(problem, cell):
    X, Xt = problem.X_train[cell.train_idx].astype(np.float64), problem.X_test.astype(np.float64)
    if problem.standardize:
        sc = StandardScaler().fit(X)
        X, Xt = sc.transform(X), sc.transform(Xt)
    ref = LogisticRegression(C=cell.C, solver="newton-cg", tol=1e-10, max_iter=100_000)
    with threadpool_limits(1):
        return ref.fit(X, problem.y_train[cell.train_idx]).predict_proba(Xt)


@pytest.mark.parametrize("n_classes,standardize", [(2, False), (3, False), (3, True)])
def test_sklearn_backend_reaches_the_optimum(n_classes, standardize):
    problem = _problem(n_classes, standardize=standardize)
    cells = _cells(problem)
    fits = SklearnBackend().solve(problem, cells)
    for cell, fit in zip(cells, fits, strict=True):
        assert fit.converged and 0 < fit.n_iter < problem.max_iter
        ref = _reference(problem, cell)
        np.testing.assert_allclose(fit.proba, ref, atol=2e-5)
        assert np.array_equal(fit.proba.argmax(1), ref.argmax(1))


def test_default_sklearn_tolerance_is_not_enough():
    """Why the tight tolerance: sklearn's default stops measurably away from the optimum."""
    problem = _problem(2, d=200, n=40, seed=3)
    cell = ProbeFit("full", None, 0, 100.0, np.arange(40))
    fit = SklearnBackend().solve(problem, [cell])[0]
    ref = _reference(problem, cell)
    loose = LogisticRegression(C=100.0).fit(problem.X_train.astype(np.float64), problem.y_train)
    err_loose = np.abs(loose.predict_proba(problem.X_test.astype(np.float64)) - ref).max()
    err_fit = np.abs(fit.proba - ref).max()
    assert err_fit < 1e-5 < err_loose


def test_non_convergence_is_reported():
    problem = _problem(3, max_iter=2)
    fit = SklearnBackend().solve(problem, _cells(problem, Cs=(100.0,))[1:])[0]
    assert fit.n_iter == 2 and not fit.converged


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_mlp_probe_equals_a_direct_mlpclassifier():
    problem = _problem(3, d=12, n=90, n_test=30)
    idx = np.arange(90)
    fit = MLPProbe().solve(problem, [ProbeFit("full", None, 17, float("nan"), idx)])[0]
    params = {**MLP_PARAMS, "batch_size": min(200, len(idx))}
    ref = MLPClassifier(random_state=17, **params).fit(problem.X_train, problem.y_train)
    np.testing.assert_allclose(fit.proba, ref.predict_proba(problem.X_test), atol=1e-6)
    assert fit.n_iter == ref.n_iter_
    assert MLP_PARAMS["hidden_layer_sizes"] == (256,)


def test_cuml_absent_gives_a_clear_message():
    from geneb.probe.solvers import cuml_backend

    cuml_backend.cuml_status.cache_clear()
    installed = importlib.util.find_spec("cuml") is not None
    assert cuml_backend.cuml_available() == (installed and cuml_backend._gpu_count() > 0)
    if cuml_backend.cuml_available():
        pytest.skip("cuML is usable here")
    with pytest.raises(GenebError, match=r"backend 'cuml' is not usable here: .*cuml-cu12"):
        get_backend("cuml")


def test_cuml_without_gpu_is_detected(monkeypatch):
    from geneb.probe.solvers import cuml_backend

    fake = types.ModuleType("cuml")
    fake.__spec__ = importlib.machinery.ModuleSpec("cuml", loader=None)
    monkeypatch.setitem(sys.modules, "cuml", fake)
    monkeypatch.setattr(cuml_backend, "_gpu_count", lambda: 0)
    cuml_backend.cuml_status.cache_clear()
    try:
        assert cuml_backend.cuml_status() == (False, "cuML imports but no CUDA GPU is visible")
        assert not cuml_backend.cuml_available()
        with pytest.raises(GenebError, match="no CUDA GPU is visible"):
            cuml_backend.CumlBackend()
    finally:
        cuml_backend.cuml_status.cache_clear()


def test_unknown_backend_suggests():
    with pytest.raises(GenebError, match="Did you mean 'sklearn'"):
        get_backend("sklarn")


def test_auto_backend_is_cuml_only_when_usable():
    from geneb.probe.solvers import resolve_backend as _resolve_backend
    from geneb.probe.solvers.cuml_backend import cuml_available

    expect = "cuml" if cuml_available() else "fast"
    assert _resolve_backend("auto", "linear") == expect
    # the MLP: torch by default (linear-only names map to it), scikit-learn when asked
    assert _resolve_backend("auto", "mlp") == _resolve_backend("cuml", "mlp") == "torch"
    assert _resolve_backend("sklearn", "mlp") == "sklearn"


def test_registry_entries_name_their_backend():
    """Every (probe, protocol, backend) of the registry loads a solver whose ``name`` is the
    backend recorded in the results; refusals come from the registry, before any work."""
    import importlib

    from geneb.errors import ProbeError
    from geneb.probe.solvers import SOLVERS, resolve_backend

    for (probe, protocol, backend), solver in SOLVERS.items():
        module, cls = solver.target.split(":")
        assert getattr(importlib.import_module(module), cls).name == backend, (probe, protocol)
    assert resolve_backend("auto", "linear", "paper") == "sklearn"
    with pytest.raises(ProbeError, match="backend must be 'auto' or 'sklearn', got backend='fast'"):
        resolve_backend("fast", "linear", "paper")
    with pytest.raises(ProbeError, match="applies to probe='linear', got probe='mlp'"):
        resolve_backend("sklearn", "mlp", "paper")
    with pytest.raises(GenebError, match="unknown probe 'rbf'"):
        resolve_backend("auto", "rbf")


def test_regression_tasks_get_ridge_from_the_registry():
    """The probe a regression task gets is the registry's rule (TASK_PROBES): ridge, exact SVD
    backend, one protocol, whatever the run asked for; no MLP; ridge is not a user's probe."""
    from geneb.probe.solvers import BACKEND_NAMES, PROBES, resolve_backend, serving
    from geneb.vocabulary import CLASSIFICATION, REGRESSION

    for protocol, backend in (("converged", "fast"), ("converged", "sklearn"),
                              ("paper", "sklearn")):
        assert serving(REGRESSION, "linear", protocol, backend) == ("ridge", "converged", "svd")
    assert serving(REGRESSION, "mlp", "converged", "torch") is None
    assert serving(CLASSIFICATION, "linear", "converged", "fast") == ("linear", "converged",
                                                                      "fast")
    assert "ridge" not in PROBES and "svd" not in BACKEND_NAMES
    with pytest.raises(GenebError, match="unknown probe 'ridge'"):
        resolve_backend("auto", "ridge")
