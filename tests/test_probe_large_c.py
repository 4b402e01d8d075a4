"""Issue 19 case 1: every C in [1e-4, 1e6] solves to the optimum on real data.

``geneb probe --shots full --C 1000 --standardize`` on kmer-5 x dhs_idhs_fflg (421 rows, 1,024
features) raised ``LinAlgError: Matrix is not positive definite`` from the full-data solver:
the float32 Gram's rounding, multiplied by C, outweighed the penalty in the directions the
421 rows leave unconstrained. References: scikit-learn ``LogisticRegression`` at tol 1e-10 on
the same standardised rows.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from sklearn.preprocessing import StandardScaler
from test_fast_solvers import load_kmer
from typer.testing import CliRunner

from geneb.probe.metrics import predict_from_proba
from geneb.probe.solvers.base import ProbeFit, ProbeProblem
from geneb.probe.solvers.fast import FastBackend

CS = [float(c) for c in np.logspace(-4, 6, 11)]


@pytest.fixture(scope="module")
def dhs5(data_dir):
    return load_kmer(data_dir, "dhs_idhs_fflg", k=5)


@pytest.fixture(scope="module")
def standardised(dhs5):
    Xtr, ytr, Xte, _ = dhs5
    sc = StandardScaler().fit(Xtr.astype(np.float64))
    return sc.transform(Xtr.astype(np.float64)), sc.transform(Xte.astype(np.float64))


@pytest.fixture(scope="module")
def references(dhs5, standardised):
    """scikit-learn at tol 1e-10 for every C (fitted once for the tests below)."""
    return {C: _sklearn(standardised[0], dhs5[1], C) for C in CS}


def _sklearn(X, y, C):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=C, tol=1e-10, max_iter=20000).fit(X, y)


def _objective(X, y, C, coef, intercept):
    eta = X @ coef + intercept
    return C * float(np.sum(np.logaddexp(0.0, eta) - y * eta)) + 0.5 * float(coef @ coef)


@pytest.mark.parametrize("path", [False, True], ids=["each-C-alone", "one-C-path"])
def test_every_C_reaches_the_sklearn_optimum(dhs5, standardised, references, path):
    """Every C alone (as ``--C 1000`` runs it) and all Cs along one warm-started path."""
    Xtr, ytr, Xte, yte = dhs5
    assert Xtr.shape == (421, 1024)
    problem = ProbeProblem(Xtr, ytr, Xte, 2, standardize=True, tol=1e-10)
    full = np.arange(len(ytr))
    if path:
        fits = FastBackend().solve(problem, [ProbeFit("full", None, 13, C, full) for C in CS])
    else:
        fits = [FastBackend().solve(problem, [ProbeFit("full", None, 13, C, full)])[0]
                for C in CS]
    Xt = standardised[1]
    for C, fit in zip(CS, fits, strict=True):
        assert fit.converged, C
        ref = references[C]
        assert matthews_corrcoef(yte, predict_from_proba(fit.proba)) == \
            matthews_corrcoef(yte, ref.predict(Xt)), C
        # the same optimum: the same test probabilities while scikit-learn's own lbfgs is
        # tight (for larger C the optimum is flat in some directions and lbfgs stops earlier;
        # the objectives are compared in the next test)
        p_ref = ref.predict_proba(Xt)
        if C <= 1e3:
            assert np.abs(fit.proba - p_ref).max() < 1e-4, C


def test_path_coefficients_match_sklearn(dhs5, standardised, references):
    """Coefficients (not only predictions) of the solver itself, C = 1e-4 .. 1e6."""
    from geneb.probe.solvers.fast_full import solve_path

    ytr, X = dhs5[1], standardised[0]
    Xa = np.hstack([X, np.ones((len(X), 1))])
    path = solve_path(Xa, Xa.astype(np.float32), ytr, 2, CS, tol=1e-10, max_iter=200)
    for pf in path:
        assert pf.converged and pf.grad_norm <= 1e-10, pf.C
        ref = references[pf.C]
        want = np.hstack([ref.coef_[0], ref.intercept_])
        f_ours = _objective(X, ytr, pf.C, pf.theta[0, :-1], pf.theta[0, -1])
        f_ref = _objective(X, ytr, pf.C, ref.coef_[0], ref.intercept_[0])
        assert f_ours <= f_ref * (1 + 1e-9), pf.C
        if pf.C <= 1e4:
            rel = np.abs(pf.theta[0] - want).max() / np.abs(want).max()
            assert rel < 1e-3, (pf.C, rel)


def test_the_exact_reproducer_runs(data_dir, tmp_path):
    """``geneb probe --shots full --C 1000 --standardize`` on kmer-5 x dhs_idhs_fflg."""
    import geneb
    from geneb.cli import app
    from geneb.results.table import read_results

    store = tmp_path / "s.zarr"
    geneb.extract(str(store), ["kmer-5"], [str(data_dir / "dhs_idhs_fflg")])
    out = tmp_path / "r.parquet"
    r = CliRunner().invoke(app, ["probe", "--store", str(store), "--results", str(out), "--shots",
                                 "full", "--C", "1000", "--standardize", "--workers", "1",
                                 "--backend", "fast"])
    assert r.exit_code == 0, r.output
    df = read_results(out)
    assert len(df) == 5 and df.converged.all()
    tr, te = geneb.read_entry(store, "kmer-5", "dhs_idhs_fflg", "train"), \
        geneb.read_entry(store, "kmer-5", "dhs_idhs_fflg", "test")
    sc = StandardScaler().fit(tr.embeddings.astype(np.float64))
    ref = _sklearn(sc.transform(tr.embeddings.astype(np.float64)), tr.labels, 1000.0)
    want = matthews_corrcoef(te.labels, ref.predict(sc.transform(te.embeddings.astype(float))))
    assert df.mcc.to_numpy() == pytest.approx(want, abs=0)


def test_the_cause_float32_gram_escalates_to_float64(dhs5, standardised, monkeypatch):
    """At C = 1000 the float32 Gram's rounding outweighs the penalty (M indefinite, as numpy's
    own eigenvalues say); the solver recomputes it in float64, where M is positive definite.
    The general Gram at the path's start (the Kronecker form of ``fast_kron``, which the
    solver builds there, is kept out first and checked at the end)."""
    from geneb.probe.solvers import fast_precond
    from geneb.probe.solvers.fast_full import _Problem, intercept_start

    X = standardised[0]
    Xa = np.hstack([X, np.ones((len(X), 1))])
    prob = _Problem(Xa, Xa.astype(np.float32), dhs5[1], 2)
    theta = np.zeros((1, Xa.shape[1]))
    theta[:, -1:] = intercept_start(dhs5[1], 2)
    _, P = prob.loss_terms(prob.eta(theta))
    start = P
    monkeypatch.setattr(fast_precond, "common_row", lambda P: None)

    def min_eig(G, C):
        M = np.triu(G.astype(np.float64)) * C
        M = M + np.triu(M, 1).T
        M[np.diag_indices_from(M)] += prob.pen
        return np.linalg.eigvalsh(M)[0]

    assert min_eig(prob.gram(P, np.float32), 1000.0) < 0  # the failure of issue 19 case 1
    assert min_eig(prob.gram(P, np.float64), 1000.0) > 0
    G, solve = prob.factor(1000.0, P, None)
    assert G.dtype == np.float64 and prob.gram_dtype == np.float64
    r = np.random.default_rng(0).normal(size=Xa.shape[1])
    assert np.isfinite(solve(r)).all() and r @ solve(r) > 0
    # the Kronecker form at the start: a positive definite preconditioner in whatever
    # precision factors
    monkeypatch.undo()
    fresh = _Problem(Xa, Xa.astype(np.float32), dhs5[1], 2)
    _, solve = fresh.factor(1000.0, start, None)
    x = solve(r)
    assert np.isfinite(x).all() and r @ x > 0


def test_an_indefinite_gram_gets_a_damped_preconditioner():
    """The last resort: whatever G, the factorisation ends with a positive definite M."""
    from geneb.probe.solvers.fast_full import _Problem

    rng = np.random.default_rng(1)
    Xa = np.hstack([rng.normal(size=(40, 5)), np.ones((40, 1))])
    prob = _Problem(Xa, Xa.astype(np.float32), (Xa[:, 0] > 0).astype(np.int64), 2)
    G, solve = prob.factor(1.0, None, -1e6 * np.eye(6))
    r = rng.normal(size=6)
    assert np.isfinite(solve(r)).all() and r @ solve(r) > 0
