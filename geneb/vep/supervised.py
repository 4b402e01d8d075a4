"""Supervised variant-effect prediction: a logistic-regression probe on window embeddings.

Features of a variant, from the mean-pooled embeddings of its reference window ``r`` and
alternate window ``a`` (the same windows and store entries as the zero-shot scorers):

- ``diff``: ``a - r`` (d features);
- ``concat``: ``[r, a, a - r]`` (3d features).

Protocol: the probe is geneb's L2 logistic regression (``geneb.probe.solvers``: the same
objective and backends as ``geneb probe``, solved to convergence), evaluated by
cross-validation over contiguous genomic blocks (``geneb.vep.folds``: no two folds share a
window). The regularisation C is chosen from the sweep *inside* each training set: the other
folds serve as inner folds (train on all but one, predict it), and the C with the highest
AUROC of the pooled inner predictions wins (ties: the smaller C). The probe is then fit on
every training fold at that C and predicts the held-out fold: ``score`` is that out-of-fold
probability of label 1. With one C given there is no inner loop. Fits on all training rows are
deterministic (no rows are drawn), so seeds do not apply, as for the full-data regime of
``geneb probe``. Standardisation (optional) is fit on each fit's own training rows.

Regression (``target="score"``): the same folds and features, ridge regression of the task's
continuous ``score`` column (``geneb.probe.solvers.ridge``), alpha chosen inside each training
set by the Spearman of the pooled inner predictions; ``score`` is the out-of-fold prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from geneb.errors import GenebError
from geneb.probe.solvers import ProbeFit, ProbeProblem, SolverBackend
from geneb.vep.capabilities import FEATURES
from geneb.vep.evaluate import auroc


def variant_features(ref: np.ndarray, alt: np.ndarray, kind: str) -> np.ndarray:
    """Feature rows of variants from their reference and alternate embeddings (float64)."""
    r = np.asarray(ref, dtype=np.float64)
    a = np.asarray(alt, dtype=np.float64)
    if kind == "diff":
        return a - r
    if kind == "concat":
        return np.concatenate([r, a, a - r], axis=1)
    raise GenebError(f"features: expected one of {', '.join(FEATURES)}, got {kind!r}",
                     param="features")


@dataclass(frozen=True, eq=False)
class OutOfFold:
    """Out-of-fold probabilities of label 1 and the C each fold's probe used."""

    score: np.ndarray  # float64 per row of X
    C: np.ndarray  # float64 per row: the C (or alpha) of its fold's probe
    inner: dict[int, dict[float, float]]  # fold -> grid value -> pooled inner score


@dataclass(frozen=True, eq=False)
class Learner:
    """What the cross-validation fits: ``fit_predict(X, y, train, test, grid)`` gives one
    prediction array for ``test`` per grid value; ``select(y, pred)`` scores pooled inner
    predictions (higher is better) to choose the grid value."""

    fit_predict: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Sequence[float]],
                          list[np.ndarray]]
    select: Callable[[np.ndarray, np.ndarray], float]
    param: str  # "C" or "alpha"


def logistic_learner(backend: SolverBackend, standardize: bool = False) -> Learner:
    """geneb's L2 logistic regression (P(label 1)); C chosen by inner AUROC."""

    def fit_predict(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray,
                    Cs: Sequence[float]) -> list[np.ndarray]:
        yt = y[train]
        if len(np.unique(yt)) < 2:
            raise GenebError("a training set of the cross-validation has one class only "
                             f"({int(yt[0])}); use fewer folds (folds=...) or more variants")
        prob = ProbeProblem(X_train=X[train], y_train=yt.astype(np.int64), X_test=X[test],
                            n_classes=2, standardize=standardize)
        cells = [ProbeFit(regime="full", k=None, seed=0, C=float(c),
                          train_idx=np.arange(len(train), dtype=np.int64)) for c in Cs]
        return [f.class_proba()[:, 1].astype(np.float64) for f in backend.solve(prob, cells)]

    return Learner(fit_predict, auroc, "C")


def ridge_learner(standardize: bool = False) -> Learner:
    """Ridge regression of a continuous target (``geneb.probe.solvers.ridge``); alpha chosen by
    inner Spearman."""
    from geneb.probe.regression_metrics import spearman
    from geneb.probe.solvers.ridge import RidgeFit, solve_ridge

    def fit_predict(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray,
                    alphas: Sequence[float]) -> list[np.ndarray]:
        cells = [RidgeFit(float(a), np.arange(len(train))) for a in alphas]
        fits = solve_ridge(X[train], y[train], X[test], cells, standardize=standardize)
        return [f.pred for f in fits]

    return Learner(fit_predict, lambda y, p: spearman(p, y), "alpha")


def choose_param(
    learner: Learner, X: np.ndarray, y: np.ndarray, fold: np.ndarray, rows: np.ndarray,
    grid: Sequence[float],
) -> tuple[float, dict[float, float]]:
    """The grid value with the best pooled inner-CV score on ``rows`` (ties: the smaller)."""
    inner = np.unique(fold[rows])
    if len(inner) < 2:
        raise GenebError(f"choosing {learner.param} needs at least 2 training folds (3 folds "
                         f"in all); give more folds (folds=...) or a single {learner.param} "
                         "value")
    pooled = {c: np.full(len(rows), np.nan) for c in grid}
    for f in inner:
        tr, te = rows[fold[rows] != f], rows[fold[rows] == f]
        at = np.flatnonzero(fold[rows] == f)
        for c, p in zip(grid, learner.fit_predict(X, y, tr, te, grid), strict=True):
            pooled[c][at] = p
    scores = {float(c): learner.select(y[rows], pooled[c]) for c in grid}
    best = max(sorted(scores), key=lambda c: (np.nan_to_num(scores[c], nan=-np.inf), -c))
    return best, scores


def out_of_fold(
    learner: Learner, X: np.ndarray, y: np.ndarray, fold: np.ndarray, grid: Sequence[float],
) -> OutOfFold:
    """Nested block cross-validation (module doc); rows with fold -1 get NaN.

    BLAS runs on one thread, as in ``geneb probe``'s workers: these small fits gain nothing
    from more, and a thin SVD with 2 OpenBLAS threads on a busy 2-core machine took 0.86 s
    instead of 0.02 s (750 x 64, measured)."""
    from geneb._threads import thread_limit

    with thread_limit(1):
        return _out_of_fold(learner, X, y, fold, grid)


def _out_of_fold(
    learner: Learner, X: np.ndarray, y: np.ndarray, fold: np.ndarray, grid: Sequence[float],
) -> OutOfFold:
    score = np.full(len(y), np.nan)
    chosen = np.full(len(y), np.nan)
    inner: dict[int, dict[float, float]] = {}
    grid = sorted({float(c) for c in grid})
    for f in np.unique(fold[fold >= 0]):
        train = np.flatnonzero((fold >= 0) & (fold != f))
        test = np.flatnonzero(fold == f)
        if len(grid) == 1:
            c = grid[0]
        else:
            c, inner[int(f)] = choose_param(learner, X, y, fold, train, grid)
        score[test] = learner.fit_predict(X, y, train, test, [c])[0]
        chosen[test] = c
    return OutOfFold(score, chosen, inner)
