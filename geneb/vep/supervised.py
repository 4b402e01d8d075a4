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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from geneb.errors import GenebError
from geneb.probe.solvers import ProbeCell, ProbeProblem, SolverBackend
from geneb.vep.evaluate import auroc

#: Feature sets: name -> description (docs/vep.md).
FEATURES = {"diff": "alt - ref", "concat": "[ref, alt, alt - ref]"}
#: The scorer name a feature set's probe has in score tables.
PROBE_SCORERS = {f: f"probe-{f}" for f in FEATURES}


def variant_features(ref: np.ndarray, alt: np.ndarray, kind: str) -> np.ndarray:
    """Feature rows of variants from their reference and alternate embeddings (float64)."""
    r = np.asarray(ref, dtype=np.float64)
    a = np.asarray(alt, dtype=np.float64)
    if kind == "diff":
        return a - r
    if kind == "concat":
        return np.concatenate([r, a, a - r], axis=1)
    raise GenebError(f"--features {kind!r}: expected one of {', '.join(FEATURES)}")


@dataclass(frozen=True, eq=False)
class OutOfFold:
    """Out-of-fold probabilities of label 1 and the C each fold's probe used."""

    score: np.ndarray  # float64 per row of X
    C: np.ndarray  # float64 per row: the C of its fold's probe
    inner_auroc: dict[int, dict[float, float]]  # fold -> C -> pooled inner AUROC


def _fit_predict(
    backend: SolverBackend, X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray,
    Cs: Sequence[float], standardize: bool,
) -> list[np.ndarray]:
    """P(label 1) on ``test`` rows of a probe fit on ``train`` rows, one array per C."""
    yt = y[train]
    if len(np.unique(yt)) < 2:
        raise GenebError("a training set of the cross-validation has one class only "
                         f"({int(yt[0])}); use fewer --folds or more variants")
    prob = ProbeProblem(X_train=X[train], y_train=yt.astype(np.int64), X_test=X[test],
                        n_classes=2, standardize=standardize)
    cells = [ProbeCell(regime="full", k=None, seed=0, C=float(c),
                       train_idx=np.arange(len(train), dtype=np.int64)) for c in Cs]
    return [f.proba[:, 1].astype(np.float64) for f in backend.solve(prob, cells)]


def choose_C(  # noqa: N802 - C is the conventional name
    backend: SolverBackend, X: np.ndarray, y: np.ndarray, fold: np.ndarray, rows: np.ndarray,
    Cs: Sequence[float], standardize: bool,
) -> tuple[float, dict[float, float]]:
    """The C of the sweep with the best pooled inner-CV AUROC on ``rows`` (ties: smaller C)."""
    inner = np.unique(fold[rows])
    if len(inner) < 2:
        raise GenebError("choosing C needs at least 2 training folds (3 folds in all); give "
                         "more --folds or a single --C")
    pooled = {c: np.full(len(rows), np.nan) for c in Cs}
    for f in inner:
        tr, te = rows[fold[rows] != f], rows[fold[rows] == f]
        at = np.flatnonzero(fold[rows] == f)
        for c, p in zip(Cs, _fit_predict(backend, X, y, tr, te, Cs, standardize), strict=True):
            pooled[c][at] = p
    scores = {float(c): auroc(y[rows], pooled[c]) for c in Cs}
    best = max(sorted(scores), key=lambda c: (np.nan_to_num(scores[c], nan=-1.0), -c))
    return best, scores


def out_of_fold(
    backend: SolverBackend, X: np.ndarray, y: np.ndarray, fold: np.ndarray,
    Cs: Sequence[float], *, standardize: bool = False,
) -> OutOfFold:
    """Nested block cross-validation (module doc); rows with fold -1 get NaN."""
    score = np.full(len(y), np.nan)
    chosen = np.full(len(y), np.nan)
    inner: dict[int, dict[float, float]] = {}
    Cs = sorted({float(c) for c in Cs})
    for f in np.unique(fold[fold >= 0]):
        train = np.flatnonzero((fold >= 0) & (fold != f))
        test = np.flatnonzero(fold == f)
        if len(Cs) == 1:
            c = Cs[0]
        else:
            c, inner[int(f)] = choose_C(backend, X, y, fold, train, Cs, standardize)
        score[test] = _fit_predict(backend, X, y, train, test, [c], standardize)[0]
        chosen[test] = c
    return OutOfFold(score, chosen, inner)
