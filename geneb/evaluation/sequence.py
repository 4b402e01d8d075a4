"""``task.evaluate(model)`` for sequence tasks (classification, regression): any model object.

Registered for the kinds ``classification`` and ``regression`` by ``geneb.evaluation``.

A model is any object with some of these methods (GFMBench's inference interface); nothing has
to be registered or subclassed, and a task computes every metric the present methods allow:

- ``embed(seqs) -> (n, d)`` array: a probe on the train split, scored on the test split.
  Classification: geneb's L2 logistic regression at ``C`` (scikit-learn's objective, solved to
  convergence; ``mcc``, ``accuracy``, ``macro_f1``, ``auroc``). Regression: ridge at ``alpha``
  (``spearman``, ``pearson``, ``r2``).
- ``predict(seqs)``: the model's own predictions on the test split, no training. Classification:
  class ids ``(n,)`` or class probabilities ``(n, K)``; regression: values ``(n,)``. The same
  metrics, prefixed ``predict_``.
- ``log_likelihood(seqs)`` / ``masked_log_probs(seqs, positions)``: likelihoods score variants
  (``ZeroShotVariantTask``), not a sequence task's labels: reported as skipped.

The result maps metric name -> value, plus ``skipped``: method -> why no metric came from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.errors import GenebError

#: The inference methods a model may implement (any subset).
METHODS: tuple[str, ...] = ("embed", "log_likelihood", "masked_log_probs", "predict")


def methods_of(model: Any) -> list[str]:
    """Which of ``METHODS`` the object has (callable attributes)."""
    return [m for m in METHODS if callable(getattr(model, m, None))]


def call_embed(model: Any, seqs: Sequence[str]) -> np.ndarray:
    """``model.embed`` as a checked (n, d) float64 array (a clear error otherwise)."""
    X = np.asarray(model.embed(list(seqs)), dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != len(seqs):
        raise GenebError(f"model.embed returned shape {X.shape}; expected ({len(seqs)}, d)")
    if not np.isfinite(X).all():
        raise GenebError("model.embed returned non-finite values (NaN or inf)")
    return X


def _metrics(kind: str, y: np.ndarray, out: np.ndarray, n_classes: int) -> dict[str, float]:
    """Metrics of predictions ``out`` (probabilities, class ids or values) against ``y``."""
    if kind == "regression":
        from geneb.probe.regression_metrics import regression_metrics

        if out.shape != y.shape:
            raise GenebError(f"predictions have shape {out.shape}; expected {y.shape}")
        return regression_metrics(y, out)
    from geneb.probe.metrics import compute_metrics

    if out.ndim == 2:
        if out.shape != (len(y), n_classes):
            raise GenebError(f"class probabilities have shape {out.shape}; expected "
                             f"({len(y)}, {n_classes})")
        return compute_metrics(y, out, n_classes)
    ids = out.astype(np.int64)
    if ids.shape != y.shape or ids.min() < 0 or ids.max() >= n_classes:
        raise GenebError(f"predicted classes must be {len(y)} ids in 0..{n_classes - 1}")
    m = compute_metrics(y, np.eye(n_classes)[ids], n_classes, y_pred=ids)
    m.pop("auroc")  # hard class ids rank nothing: AUROC needs scores
    return m


def evaluate_sequence_task(
    task: Any, model: Any, *, C: float = 1.0, alpha: float = 1.0,  # noqa: N803
    standardize: bool = False,
) -> dict[str, Any]:
    """Every metric ``model``'s methods allow on a classification or regression task."""
    kind = task.spec.kind
    tr, te = task.split("train"), task.split("test")
    have = methods_of(model)
    out: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    if "embed" in have:
        Xtr, Xte = call_embed(model, tr.sequences), call_embed(model, te.sequences)
        out.update(_probe_metrics(task, Xtr, Xte, C=C, alpha=alpha, standardize=standardize))
    else:
        skipped["embed"] = "the model has no embed(seqs): no probe metrics"
    if "predict" in have:
        pred = np.asarray(model.predict(list(te.sequences)), dtype=np.float64)
        m = _metrics(kind, te.labels, pred, task.spec.n_classes)
        out.update({f"predict_{k}": v for k, v in m.items()})
    else:
        skipped["predict"] = "the model has no predict(seqs): no metrics of its own predictions"
    for m in ("log_likelihood", "masked_log_probs"):
        skipped[m] = (f"a {kind} task has no likelihood metric (likelihoods score variants: "
                      "ZeroShotVariantTask)" if m in have else f"the model has no {m}")
    out["skipped"] = skipped
    return out


def _probe_metrics(
    task: Any, Xtr: np.ndarray, Xte: np.ndarray, *, C: float, alpha: float,  # noqa: N803
    standardize: bool,
) -> dict[str, float]:
    """The probe on the train embeddings, scored on the test split (one BLAS thread)."""
    from threadpoolctl import threadpool_limits

    kind = task.spec.kind
    tr, te = task.split("train"), task.split("test")
    out: dict[str, float] = {}
    with threadpool_limits(limits=1):
        if kind == "regression":
            from geneb.probe.solvers.ridge import RidgeFit, solve_ridge

            fit = solve_ridge(Xtr, tr.labels, Xte, [RidgeFit(alpha, np.arange(len(Xtr)))],
                              standardize=standardize)[0]
            out.update(_metrics(kind, te.labels, fit.pred, 0))
        else:
            from geneb.probe.preprocess import standardize_pair
            from geneb.probe.solvers.sklearn_backend import fit_logreg

            if standardize:
                Xtr, Xte = standardize_pair(Xtr, Xte, dtype=np.float64)
            k = task.spec.n_classes
            fit = fit_logreg(Xtr, tr.labels, Xte, C=C, n_classes=k)
            out.update(_metrics(kind, te.labels, fit.proba, k))
    return out
