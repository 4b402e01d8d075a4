"""The cuML backend's geneb-side logic, with a fake cuML injected (no GPU, no RAPIDS here).

The fake mirrors the API read in rapidsai/cuml @ 342457bc (``LogisticRegression(C, penalty,
max_iter, tol, fit_intercept, output_type)``, ``coef_`` (1 or K, d), ``intercept_``,
``n_iter_`` (1,), ``classes_``) and solves with scikit-learn in the dtype it is given, or
stops early like cuML's own tests allow. What is checked: geneb, not cuML's flag, decides
``converged`` (the float64 gradient on the host); the fit runs in float64; exact ties are
snapped as in ``fast``; rows say their precision.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLR

from geneb.probe.solvers import get_backend
from geneb.probe.solvers.base import ProbeFit, ProbeProblem
from geneb.probe.worker import solve_fits

SEEN: dict[str, object] = {}


class FakeCumlLR:
    #: iterations the fake allows itself; None: solve to scikit-learn's tightest tolerance
    stop_after: int | None = None

    def __init__(self, *, C, penalty, max_iter, tol, fit_intercept, output_type):
        assert penalty == "l2" and fit_intercept and output_type == "numpy"
        self.C, self.max_iter = C, max_iter

    def fit(self, X, y):
        SEEN["dtype"] = X.dtype
        it = self.stop_after or 10_000
        sk = SkLR(C=self.C, tol=1e-14, max_iter=it, solver="lbfgs")
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk.fit(np.asarray(X), np.asarray(y).astype(np.int64))
        self.classes_ = sk.classes_
        self.coef_, self.intercept_ = sk.coef_, sk.intercept_
        # cuML's flag: stopped by its own rules, always before max_iter here
        self.n_iter_ = np.array([min(int(sk.n_iter_[0]), self.max_iter - 1)])
        return self


@pytest.fixture
def fake_cuml(monkeypatch):
    from geneb.probe.solvers import cuml_backend

    cuml = types.ModuleType("cuml")
    cuml.__spec__ = importlib.machinery.ModuleSpec("cuml", loader=None)
    lm = types.ModuleType("cuml.linear_model")
    lm.LogisticRegression = FakeCumlLR
    cupy = types.ModuleType("cupy")
    cupy.asarray = lambda x, dtype=None: np.asarray(x, dtype=dtype)
    cupy.float32, cupy.float64 = np.float32, np.float64
    for name, mod in (("cuml", cuml), ("cuml.linear_model", lm), ("cupy", cupy)):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(cuml_backend, "_gpu_count", lambda: 1)
    monkeypatch.setattr(FakeCumlLR, "stop_after", None)
    cuml_backend.cuml_status.cache_clear()
    yield FakeCumlLR
    cuml_backend.cuml_status.cache_clear()


def _problem(n_classes: int, n: int = 120, d: int = 6, seed: int = 0) -> ProbeProblem:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = (rng.normal(size=(n, d)) + y[:, None] * 0.7).astype(np.float32)
    Xt = (rng.normal(size=(40, d)) + (np.arange(40) % n_classes)[:, None] * 0.7)
    return ProbeProblem(X_train=X, y_train=y, X_test=Xt.astype(np.float32),
                        n_classes=n_classes, standardize=True)


def _fits(n: int) -> list[ProbeFit]:
    return [ProbeFit("full", None, 13, C, np.arange(n)) for C in (0.1, 10.0)]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_converged_fits_match_fast_and_run_in_float64(fake_cuml, n_classes):
    prob = _problem(n_classes)
    got = get_backend("cuml").solve(prob, _fits(120))
    ref = get_backend("fast").solve(prob, _fits(120))
    assert SEEN["dtype"] == np.float64
    for g, r in zip(got, ref, strict=True):
        assert g.converged and r.converged
        np.testing.assert_allclose(g.proba, r.proba, atol=1e-6)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_an_early_stop_is_not_converged_whatever_cuml_says(fake_cuml, n_classes):
    fake_cuml.stop_after = 3  # cuML's own rules ended the fit (n_iter_ < max_iter)
    res = get_backend("cuml").solve(_problem(n_classes), _fits(120))
    assert all(r.n_iter < 1000 for r in res)
    assert not any(r.converged for r in res)


def test_exact_ties_are_snapped_as_in_fast(fake_cuml, monkeypatch):
    # 1-shot, train rows (1, -1) and (-1, 1): the optimum has w1 = -w2 and a zero intercept,
    # so test rows (t, t) have a logit that is exactly 0 (a tie) up to rounding; cuML's
    # rounding (here 1e-15 added to the intercept) would otherwise decide them
    real_fit = FakeCumlLR.fit

    def noisy(self, X, y):
        real_fit(self, X, y)
        self.intercept_ = self.intercept_ + 1e-15
        return self

    monkeypatch.setattr(FakeCumlLR, "fit", noisy)
    X = np.array([[1.0, -1.0], [-1.0, 1.0]], np.float32)
    Xt = np.array([[1.0, 1.0], [2.0, 2.0], [2.0, 1.0]], np.float32)
    prob = ProbeProblem(X_train=X, y_train=np.array([1, 0]), X_test=Xt, n_classes=2)
    fit = [ProbeFit("1", 1, 13, 1.0, np.arange(2))]
    got = get_backend("cuml").solve(prob, fit)[0].proba
    ref = get_backend("fast").solve(prob, fit)[0].proba
    assert (got[:2] == 0.5).all() and (ref[:2] == 0.5).all()  # exact ties, both backends
    assert got[2, 1] > 0.5
    np.testing.assert_array_equal(got.argmax(1), ref.argmax(1))


def test_rows_record_the_precision(fake_cuml):
    from geneb.probe.plan import PlannedFit

    prob = _problem(2)
    fits = [PlannedFit(0, "full", None, 13, 1.0, np.arange(120))]
    row = solve_fits(prob, np.arange(40) % 2, fits, probe="linear", backend="cuml")[0]
    assert row["precision"] == "float64" and row["converged"] is True
